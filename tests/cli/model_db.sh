#!/usr/bin/env bash
# Model databases and runs of many scenes (grip-host models, run --models, repeated --scene, --scene-list):
#  1. a run against a database finds what a run on the model files finds (instances, rejections, counts), on
#     generated models (each model file also serves as a scene) and on PCL's tutorial pair when the data is there;
#  2. one JSON line per scene, each naming its scene; a list file's missing scene is reported in its line and on
#     stderr, the other scenes still run, and the exit status is 1;
#  3. the demo's view models (synth --views) go into a database, merged into one model a kind with --merge-views,
#     and a run against it finds the object at its true pose, once;
#  4. a database is refused, naming the file and what is wrong, when the run's descriptor settings differ, when it
#     comes from another ABI or format version, and when it is truncated or corrupted (no crash: exit 1 or 2).
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
data=${GRIP_DATA:-}
if ! command -v python3 >/dev/null; then echo "skipped: python3 is not installed"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # check STATUS MESSAGE
  if [ "$1" -eq 0 ]; then pass=$((pass + 1)); else echo "FAIL: $2"; fail=$((fail + 1)); fi
}
g() { "$host" --plugin "$plugin" "$@"; }

# the generated models and the settings the demo uses for them
"$host" synth --out "$tmp" --seed 1 --objects 2 > /dev/null 2>&1
check $? "synth failed"
cat > "$tmp/syn.conf" <<'EOF'
[descriptor]
impl = shot
normals_k = 0
normals_radius = 0.01
model_leaf = 0.007
scene_leaf = 0.015
radius = 0.035
[index]
impl = bruteforce
[match]
impl = knn
k = 1
max_sqdist = 0.25
[group]
impl = hough3d
frames = descriptor
bin_size = 0.01
threshold = 5
[verify]
impl = icp
max_rmse = 0.004
EOF
m1=$tmp/model_blob.pcd m2=$tmp/model_bracket.pcd conf=$tmp/syn.conf

# same_result DIRECT.json DB.jsonl INDEX -- line INDEX of DB.jsonl has DIRECT's instances, rejections and counts
same_result() {
  python3 - "$@" <<'PY'
import json, sys
direct = json.load(open(sys.argv[1]))
line = json.loads(open(sys.argv[2]).read().splitlines()[int(sys.argv[3])])
for key in ("instances", "rejected", "counts"):
    assert direct[key] == line[key], (key, direct[key], line[key])
assert len(direct["instances"]) >= 1, "the direct run found nothing: the comparison would prove little"
PY
}

# 1. database round trip on generated data
g models --config "$conf" --out "$tmp/syn.grip" "$m1" "$m2" > "$tmp/models.out" 2> "$tmp/models.err"
check $? "models failed: $(cat "$tmp/models.err")"
grep -q "2 models" "$tmp/models.out"
check $? "models does not say what it wrote: $(cat "$tmp/models.out")"
g run --json --config "$conf" --models "$tmp/syn.grip" --scene "$m1" --scene "$m2" > "$tmp/db.jsonl" 2> "$tmp/db.err"
check $? "run --models failed: $(cat "$tmp/db.err")"
for i in 0 1; do
  scene=$m1; [ $i -eq 1 ] && scene=$m2
  g run --json --config "$conf" --model "$m1" --model "$m2" --scene "$scene" > "$tmp/direct$i.json" 2> /dev/null
  check $? "the direct run on $scene failed"
  same_result "$tmp/direct$i.json" "$tmp/db.jsonl" $i
  check $? "scene $i: the run against the database differs from the run on the model files"
done
# the same two scenes with --model: described once, the same results
g run --json --config "$conf" --model "$m1" --model "$m2" --scene "$m1" --scene "$m2" > "$tmp/many.jsonl" 2> /dev/null
check $? "run with two scenes failed"
for i in 0 1; do
  same_result "$tmp/direct$i.json" "$tmp/many.jsonl" $i
  check $? "scene $i: a run of two scenes differs from a run of one"
done

# 2. a list file with a comment, a blank line, a relative path and a missing scene
printf '# scenes\n%s\n\nmissing.pcd\n  model_bracket.pcd  \n' "$m1" > "$tmp/scenes.txt"
g run --json --config "$conf" --models "$tmp/syn.grip" --scene-list "$tmp/scenes.txt" > "$tmp/list.jsonl" 2> "$tmp/list.err"
rc=$?
[ $rc -eq 1 ]
check $? "a list with a missing scene exits $rc, not 1"
grep -q "missing.pcd" "$tmp/list.err"
check $? "stderr does not name the missing scene: $(cat "$tmp/list.err")"
python3 - "$tmp/list.jsonl" "$tmp" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 3, lines
assert [l["scene"] for l in lines] == [sys.argv[2] + "/model_blob.pcd", sys.argv[2] + "/missing.pcd",
                                      sys.argv[2] + "/model_bracket.pcd"], [l["scene"] for l in lines]
assert "missing.pcd" in lines[1]["error"] and "instances" not in lines[1], lines[1]
assert len(lines[0]["instances"]) >= 1 and len(lines[2]["instances"]) >= 1, lines
PY
check $? "the list's JSON lines are not one a scene, in order, with the missing one's error"
same_result "$tmp/direct1.json" "$tmp/list.jsonl" 2
check $? "the scene after the missing one differs from its direct run"

# 3. refusals
expect_refusal() { # NAME WANT -- command...
  local name=$1 want=$2
  shift 3
  local out rc
  out=$("$@" 2>&1 >/dev/null)
  rc=$?
  if [ $rc -ne 1 ] && [ $rc -ne 2 ]; then
    echo "FAIL $name: exit $rc (want 1 or 2): $out"; fail=$((fail + 1))
  elif ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL $name: message lacks '$want': $out"; fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}
run_db() { g run --config "$conf" "${@:2}" --models "$1" --scene "$m1"; }
expect_refusal "other radius" "syn.grip: its models were described with descriptor.radius = 0.035, but this run's config gives descriptor.radius = 0.03" -- \
  run_db "$tmp/syn.grip" --set descriptor.radius=0.03
expect_refusal "other descriptor" "syn.grip: its models were described with descriptor.impl = shot" -- \
  run_db "$tmp/syn.grip" --set descriptor.impl=fpfh
# a setting that does not change a model's description is no reason to refuse
g run --config "$conf" --set descriptor.scene_leaf=0.02 --set descriptor.device=cpu --models "$tmp/syn.grip" --scene "$m1" > /dev/null 2>&1
check $? "a database refused for a scene-only or device setting"

# patch FILE OFFSET BYTES_HEX [fix] -- writes FILE.patched with the bytes replaced; "fix" recomputes the checksum
patch() {
  python3 - "$@" <<'PY'
import sys
path, offset, hexbytes = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3])
d = bytearray(open(path, "rb").read())
d[offset:offset + len(hexbytes)] = hexbytes
if len(sys.argv) > 4:  # FNV-1a 64 over the file with the checksum's 8 bytes as zeros (docs/model-database.md)
    h = 0xcbf29ce484222325
    for i, b in enumerate(d):
        h = ((h ^ (0 if 56 <= i < 64 else b)) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    d[56:64] = h.to_bytes(8, "little")
open(path + ".patched", "wb").write(d)
PY
}
patch "$tmp/syn.grip" 8 02000000 fix && mv "$tmp/syn.grip.patched" "$tmp/v2.grip"
expect_refusal "format version" "v2.grip: model database format version 2, but this grip-host reads version 1" -- run_db "$tmp/v2.grip"
patch "$tmp/syn.grip" 16 07000000 fix && mv "$tmp/syn.grip.patched" "$tmp/abi7.grip"
expect_refusal "ABI" "abi7.grip: described by a plugin of ABI 7." -- run_db "$tmp/abi7.grip"
patch "$tmp/syn.grip" 200 ff && mv "$tmp/syn.grip.patched" "$tmp/flipped.grip"
expect_refusal "corrupted" "flipped.grip: corrupt: its checksum does not match" -- run_db "$tmp/flipped.grip"
size=$(stat -c %s "$tmp/syn.grip")
for keep in 0 10 63 64 1000 $((size / 2)) $((size - 1)); do
  head -c $keep "$tmp/syn.grip" > "$tmp/cut.grip"
  want="cut.grip: truncated"; [ $keep -eq 0 ] && want="cut.grip: file is empty"
  expect_refusal "truncated to $keep bytes" "$want" -- run_db "$tmp/cut.grip"
done
expect_refusal "not a database" "syn.conf: not a grip model database" -- run_db "$conf"
expect_refusal "missing database" "nope.grip: cannot open" -- run_db "$tmp/nope.grip"
expect_refusal "lengths in mr" "a model database needs them in the clouds' unit" -- \
  g models --config "$conf" --set descriptor.radius="20 mr" --out "$tmp/mr.grip" "$m1"
expect_refusal "--model and --models" "either --model FILE (one or more) or --models DATABASE" -- \
  g run --config "$conf" --model "$m1" --models "$tmp/syn.grip" --scene "$m1"

# 4. PCL's tutorial pair (shared data): the database gives the tutorial's instance, as the model file does
pair=$data/pcl/data_repo/correspondence_grouping
if [ -n "$data" ] && [ -f "$pair/milk.pcd" ]; then
  tconf=${GRIP_SOURCE_DIR:?}/configs/pcl_tutorial.conf
  g models --config "$tconf" --out "$tmp/milk.grip" "$pair/milk.pcd" > /dev/null 2>&1
  check $? "models on milk.pcd failed"
  g run --json --config "$tconf" --model "$pair/milk.pcd" --scene "$pair/milk_cartoon_all_small_clorox.pcd" \
    > "$tmp/tdirect.json" 2> /dev/null
  check $? "the tutorial run failed"
  g run --json --config "$tconf" --models "$tmp/milk.grip" --scene "$pair/milk_cartoon_all_small_clorox.pcd" \
    > "$tmp/tdb.jsonl" 2> /dev/null
  check $? "the tutorial run against the database failed"
  same_result "$tmp/tdirect.json" "$tmp/tdb.jsonl" 0
  check $? "the tutorial run against the database differs from the run on milk.pcd"
else
  echo "note: PCL's tutorial pair not found under GRIP_DATA: its round trip not checked"
fi

# 3. the demo's models: each kind as partial views (model_<kind>@<yaw>.pcd, VIEWPOINT the camera), one database
mkdir -p "$tmp/views"
"$host" synth --out "$tmp/views" --seed 1 --objects 1 --views 4 > /dev/null 2>&1
check $? "synth --views failed"
views=("$tmp"/views/model_*@*.pcd)
[ ${#views[@]} -eq 4 ] && grep -q "^0 model_[a-z]*@\*\.pcd " "$tmp/views/truth.txt" &&
  ! grep -q "^VIEWPOINT 0 0 0 " "${views[0]}"
check $? "synth --views 4 did not write 4 views with their camera and a truth line naming them: ${views[*]}"
g models --config "$conf" --merge-views --out "$tmp/views.grip" "${views[@]}" > "$tmp/views.out" 2> "$tmp/views.err"
check $? "models --merge-views on the views failed: $(cat "$tmp/views.err")"
grep -q "1 models (from 4 files)" "$tmp/views.out"
check $? "models --merge-views did not merge the 4 views into 1 model: $(cat "$tmp/views.out")"
g run --json --config "$conf" --models "$tmp/views.grip" --scene "$tmp/views/scene.pcd" > "$tmp/views.jsonl" \
  2> "$tmp/views.err"
check $? "run against the views' database failed: $(cat "$tmp/views.err")"
python3 - "$tmp/views.jsonl" "$tmp/views/truth.txt" <<'PY'
import json, sys
run = json.loads(open(sys.argv[1]).read().splitlines()[0])
truth = [l.split() for l in open(sys.argv[2]) if not l.startswith("#")][0]
kind, pose = truth[1].split("@")[0], [float(v) for v in truth[2:]]
assert all(i["model_name"].split("/")[-1] == kind for i in run["instances"]), run["instances"]
hits = [i for i in run["instances"] if max(abs(i["pose"][r * 4 + 3] - pose[r * 4 + 3]) for r in range(3)) < 0.01]
assert len(hits) == 1 == len(run["instances"]), ("not one instance of %s within 1 cm of its pose" % kind,
                                                 run["instances"])
PY
check $? "the run against the merged views did not find the object once at its true pose"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

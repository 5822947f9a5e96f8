#!/usr/bin/env bash
# The normals a cloud's file carries, through grip-host run: a generated 30 x 30 grid whose normals are 2 pi long is
# described with them rescaled to unit length (auto), and the run says so for each cloud, in text and in --json;
# descriptor.normals = compute computes them, and says why; descriptor.normals = file on a cloud without normals
# fails with exit 1 and the plugin's message naming the key and the cloud. descriptor.model_normals = outward is
# said of the models' computed normals (text and --json), not of the scene's or of a file's.
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
src=${GRIP_SOURCE_DIR:?GRIP_SOURCE_DIR is not set}
if ! command -v python3 >/dev/null; then echo "skipped: python3 is not installed"; exit 77; fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
grid() { # $1: file, $2: "normals" to write them
  local fields='x y z' size='4 4 4' type='F F F' count='1 1 1' tail=''
  if [ "$2" = normals ]; then
    fields='x y z normal_x normal_y normal_z' size='4 4 4 4 4 4' type='F F F F F F' count='1 1 1 1 1 1'
    tail=' 0 0 6.2831853'
  fi
  {
    printf 'VERSION 0.7\nFIELDS %s\nSIZE %s\nTYPE %s\nCOUNT %s\nWIDTH 900\nHEIGHT 1\nPOINTS 900\nDATA ascii\n' \
      "$fields" "$size" "$type" "$count"
    for i in $(seq 0 29); do for j in $(seq 0 29); do
      printf '%s %s 1%s\n' "$(( i * 2 ))e-3" "$(( j * 2 ))e-3" "$tail"
    done; done
  } > "$1"
}
grid "$dir/with.pcd" normals
grid "$dir/without.pcd" none
run() { "$host" --plugin "$plugin" run --config "$src/configs/pcl_tutorial_mr.conf" --set pipeline.device=cpu "$@"; }
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $2"; fi; }

run --model "$dir/with.pcd" --scene "$dir/without.pcd" > "$dir/auto.txt" 2>&1
rc=$?
grep -Fxq 'model cloud 0 normals: the cloud'"'"'s own, rescaled to unit length' "$dir/auto.txt" &&
  grep -Fxq 'scene normals: computed (the cloud carries none)' "$dir/auto.txt"
check $(( $? || rc )) "auto: the file's normals rescaled, the scene's computed (rc $rc): $(cat "$dir/auto.txt")"

run --model "$dir/with.pcd" --scene "$dir/with.pcd" --json > "$dir/auto.json" 2> "$dir/err.txt"
rc=$?
python3 - "$dir/auto.json" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))["normals"]
assert n == {"models": ["cloud_rescaled"], "scene": "cloud_rescaled", "model_orientation": "viewpoint"}, n
PY
check $(( $? || rc )) "--json carries each cloud's normals source (rc $rc; $(cat "$dir/err.txt"))"

run --model "$dir/with.pcd" --scene "$dir/with.pcd" --set descriptor.normals=compute > "$dir/compute.txt" 2>&1
grep -Fxq 'scene normals: computed (descriptor.normals = compute)' "$dir/compute.txt"
check $? "compute: computed, and why: $(cat "$dir/compute.txt")"

run --model "$dir/with.pcd" --scene "$dir/without.pcd" --set descriptor.normals=file > "$dir/file.txt" 2>&1
rc=$?
grep -q "descriptor.normals = file: cloud $dir/without.pcd carries no normals" "$dir/file.txt"
check $(( $? || rc != 1 )) "file on a cloud without normals: exit 1 naming the key and the cloud (rc $rc): $(cat "$dir/file.txt")"

run --model "$dir/with.pcd" --scene "$dir/without.pcd" --set descriptor.normals=compute \
  --set descriptor.model_normals=outward > "$dir/outward.txt" 2>&1
rc=$?
grep -Fxq 'model cloud 0 normals: computed (descriptor.normals = compute), pointing away from its centroid (descriptor.model_normals = outward)' "$dir/outward.txt" &&
  grep -Fxq 'scene normals: computed (the cloud carries none)' "$dir/outward.txt"
check $(( $? || rc )) "outward: the model's computed normals say so, the scene's do not (rc $rc): $(cat "$dir/outward.txt")"
run --model "$dir/with.pcd" --scene "$dir/without.pcd" --set descriptor.model_normals=outward --json > "$dir/outward.json" 2> "$dir/err.txt"
rc=$?
python3 - "$dir/outward.json" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))["normals"]
assert n == {"models": ["cloud_rescaled"], "scene": "computed", "model_orientation": "outward"}, n
PY
check $(( $? || rc )) "--json carries the models' orientation (rc $rc; $(cat "$dir/err.txt"))"

run --model "$dir/with.pcd" --scene "$dir/without.pcd" --set descriptor.normals=compute \
  --set descriptor.model_normals=propagate > "$dir/propagate.txt" 2>&1
rc=$?
grep -Fxq 'model cloud 0 normals: computed (descriptor.normals = compute), pointing away from its centroid, made consistent along its surface (descriptor.model_normals = propagate)' "$dir/propagate.txt"
check $(( $? || rc )) "propagate: the model's computed normals say so (rc $rc): $(cat "$dir/propagate.txt")"
run --model "$dir/with.pcd" --scene "$dir/without.pcd" --set descriptor.normals=compute \
  --set descriptor.model_normals=propagate --json > "$dir/propagate.json" 2> "$dir/err.txt"
rc=$?
python3 - "$dir/propagate.json" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))["normals"]
assert n == {"models": ["computed"], "scene": "computed", "model_orientation": "propagate"}, n
PY
check $(( $? || rc )) "--json carries propagate (rc $rc; $(cat "$dir/err.txt"))"
run --model "$dir/with.pcd" --scene "$dir/without.pcd" --set descriptor.model_normals=sideways > "$dir/bad.txt" 2>&1
rc=$?
grep -q "descriptor.model_normals" "$dir/bad.txt"
check $(( $? || rc == 0 )) "a bad model_normals is refused naming the key (rc $rc): $(cat "$dir/bad.txt")"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

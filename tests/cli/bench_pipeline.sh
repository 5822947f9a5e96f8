#!/usr/bin/env bash
# grip-host bench pipeline, small and on the CPU (--scale 0.02: generated scenes of ~2,000 and ~20,000 points):
#  - --json lines: one per workload, the six stage medians, the end-to-end time at least their sum (one timed run,
#    so the median is that run), the sizes the workload names promise (scene points ~ P x scale, 1 model of 8 merged
#    views and 10 one-view models), no byte over PCIe on the CPU, counts that agree; --out FILE holds the same lines;
#  - --svg: a well-formed SVG (python3's XML parser, else a grep-level check) with a bar label per workload and the
#    six stages in the legend;
#  - the tutorial workload: skipped with a message when the data folder lacks the pair; found once when it has it;
#  - bad input: an unknown workload, --repeat 0, a bad per-workload repeat, --scale above 1, a missing --config:
#    a message naming the problem and exit status 2.
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
data=${GRIP_DATA:-}
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bench() { "$host" --plugin "$plugin" bench pipeline --set pipeline.device=cpu "$@"; }

# ---- two generated workloads, JSON -----------------------------------------------------------------------------
bench --workloads synth-1e5x1,synth-1e6x10 --scale 0.02 --repeat 1 --warmup 0 --json --out "$dir/out.jsonl" \
  --svg "$dir/chart.svg" > "$dir/stdout.jsonl" 2> "$dir/stderr.txt"
rc=$?
cat "$dir/stdout.jsonl" "$dir/stderr.txt"
[ $rc -eq 0 ] && ok || bad "bench pipeline exited $rc"
[ "$(wc -l < "$dir/stdout.jsonl")" -eq 2 ] && ok || bad "not one JSON line per workload"
cmp -s "$dir/stdout.jsonl" "$dir/out.jsonl" && ok || bad "--out differs from the JSON on stdout"
if command -v python3 >/dev/null; then
  python3 - "$dir/stdout.jsonl" <<'PY' && ok || bad "JSON fields"
import json, sys
stages = ["describe_models", "index", "describe_scene", "match", "group", "verify"]
lines = [json.loads(l) for l in open(sys.argv[1])]
want = {"synth-1e5x1": (1e5, 1, 8, 1), "synth-1e6x10": (1e6, 10, 10, 2)}
assert [l["workload"] for l in lines] == list(want), lines
for l in lines:
    points, models, clouds, objects = want[l["workload"]]
    assert l["benchmark"] == "pipeline" and l["device"] == "cpu", l
    assert l["config"] == "configs/synth_hough3d_icp.conf" and l["repeat"] == 1 and l["warmup"] == 0, l
    assert l["scale"] == 0.02 and 0.7 * points * 0.02 <= l["scene"]["points"] <= 1.3 * points * 0.02, l
    assert l["scene"]["points"] <= l["scene"]["width"] * l["scene"]["height"], l
    assert l["scene"]["bytes"] == 12 * l["scene"]["width"] * l["scene"]["height"], l  # xyz, 3 floats a point
    assert (l["models"], l["model_clouds"], l["objects"]) == (models, clouds, objects), l
    assert l["model_points"] > 0, l
    ms = l["median_ms"]
    assert sorted(ms) == sorted(stages) and all(ms[s] >= 0 for s in stages), ms
    assert ms["describe_models"] > 0 and ms["describe_scene"] > 0, ms
    e2e = l["end_to_end_ms"]
    assert e2e["median"] == e2e["min"] and e2e["median"] >= sum(ms.values()) - 1e-3, (e2e, ms)
    t = l["transfers"]
    assert t is None or (t["h2d_bytes"] == 0 and t["d2h_bytes"] == 0), t  # the CPU backend copies nothing
    c = l["counts"]
    assert c["model_keypoints"] > 0 and c["scene_keypoints"] > 0 and c["correspondences"] >= 0, c
    assert 0 <= l["instances"] <= c["hypotheses"], l
PY
fi

# ---- the chart ---------------------------------------------------------------------------------------------------
svg=$dir/chart.svg
if command -v python3 >/dev/null; then
  python3 - "$svg" <<'PY' && ok || bad "the SVG is not well-formed or lacks a label"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
for label in ["synth-1e5x1", "synth-1e6x10", "describe_models", "index", "describe_scene", "match", "group",
              "verify"]:
    assert label in texts, (label, texts)
PY
else
  head -1 "$svg" | grep -q '^<svg xmlns="http://www.w3.org/2000/svg"' && tail -1 "$svg" | grep -qx '</svg>' &&
    [ "$(grep -c '<text' "$svg")" = "$(grep -c '</text>' "$svg")" ] && grep -q '>synth-1e6x10</text>' "$svg" &&
    ok || bad "the SVG's head, tail or labels"
fi

# ---- the tutorial pair -----------------------------------------------------------------------------------------
out=$(bench --workloads tutorial --data "$dir/no-data" --repeat 1 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] && grep -q "^workload=tutorial skipped: the tutorial pair .* is not in the data folder $dir/no-data" \
  <<<"$out" && ok || bad "tutorial without data (rc $rc)"
if [ -n "$data" ] && [ -f "$data/pcl/data_repo/correspondence_grouping/milk.pcd" ] &&
   [ -f "$data/pcl/milk_cartoon_all_small_clorox.pcd" ]; then
  out=$(bench --workloads tutorial:1 --warmup 0 --data "$data" 2>&1)
  rc=$?
  echo "$out"
  [ $rc -eq 0 ] && grep -q "^workload=tutorial device=cpu scene_points=[0-9]* image=640x480 models=1 .* repeat=1 " \
    <<<"$out" && grep -q " instances=1$" <<<"$out" && ok || bad "the tutorial pair: one instance (rc $rc)"
else
  echo "(no tutorial pair in GRIP_DATA: its run is not checked)"
fi

# ---- bad input ---------------------------------------------------------------------------------------------------
refused() { # refused NEEDLE ARGS...: exit status 2 and NEEDLE on stderr
  local needle=$1; shift
  local err; err=$("$host" --plugin "$plugin" bench pipeline "$@" 2>&1 >/dev/null)
  local rc=$?
  [ $rc -eq 2 ] && grep -q -- "$needle" <<<"$err" && ok || bad "bench pipeline $* (rc $rc): $err"
}
refused "unknown workload 'synth-2e6x10' (known: tutorial and synth-PxM" --workloads synth-1e5x1,synth-2e6x10
refused "unknown workload ''" --workloads synth-1e5x1,
refused "\-\-repeat: '0' is not an integer in \[1, 1000\]" --repeat 0
refused "the repeat after ':' is not an integer" --workloads synth-1e5x1:0
refused "\-\-scale 2 is not in (0, 1\]" --scale 2
refused "\-\-scale: '-1' is not a positive number" --scale -1
refused "cannot open" --workloads synth-1e5x1 --scale 0.02 --config "$dir/missing.conf"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

#!/usr/bin/env bash
# Lengths in mr on the command line: `run --json` carries the clouds' measured resolutions and each length as it was
# resolved ("units"), on a generated 30 x 30 grid of 2 mm spacing (resolution 0.002); a wrong unit and mr on a key
# that is not a length fail with exit 2 and a message naming the key.
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
src=${GRIP_SOURCE_DIR:?GRIP_SOURCE_DIR is not set}
if ! command -v python3 >/dev/null; then echo "skipped: python3 is not installed"; exit 77; fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
{
  printf 'VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH 900\nHEIGHT 1\nPOINTS 900\nDATA ascii\n'
  for i in $(seq 0 29); do for j in $(seq 0 29); do printf '%s %s 1\n' "$(( i * 2 ))e-3" "$(( j * 2 ))e-3"; done; done
} > "$dir/grid.pcd"
run() { "$host" --plugin "$plugin" run --config "$src/configs/pcl_tutorial_mr.conf" --model "$dir/grid.pcd" \
          --scene "$dir/grid.pcd" --set pipeline.device=cpu "$@"; }
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $2"; fi; }

run --set group.bin_size="5 mr" --json > "$dir/out.json" 2> "$dir/err.txt"
rc=$?
python3 - "$dir/out.json" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))["units"]
assert abs(u["scene_resolution"] - 0.002) < 1e-6, u
assert len(u["model_resolutions"]) == 1 and abs(u["model_resolutions"][0] - 0.002) < 1e-6, u
lengths = dict(l.split(" = ", 1) for l in u["lengths"])
assert lengths["group.bin_size"].startswith("5 mr = "), lengths
assert abs(float(lengths["group.bin_size"].split(" = ")[1]) - 0.01) < 1e-6, lengths
assert abs(float(lengths["descriptor.radius"].split(" = ")[1]) - 0.022) < 1e-6, lengths
assert len(lengths) == 12, lengths
PY
check $(( rc || $? )) "run --json reports the resolution and the resolved lengths (rc $rc; $(cat "$dir/err.txt"))"

run --set descriptor.radius="20 mx" --set group.threshold="5 mr" > /dev/null 2> "$dir/err.txt"
rc=$?
grep -q "^--set: descriptor.radius: '20 mx': unknown unit 'mx'" "$dir/err.txt" &&
  grep -q "^--set: group.threshold: '5 mr': mr (multiples of the cloud's resolution) is for lengths only" "$dir/err.txt"
check $(( $? || rc != 2 )) "bad units are config errors naming the key (rc $rc): $(cat "$dir/err.txt")"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

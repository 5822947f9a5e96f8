#!/usr/bin/env bash
# The same config recognises PCL's tutorial pair in metres and scaled x1000 to millimetres (written here to
# temporary PCD files, viewpoint scaled too): configs/pcl_tutorial_mr.conf, every length in mr. grip-host run finds
# the same instance (model, correspondences within 2), the rotation within 1e-4 and the translation x1000 within
# 0.01 mm; the measured resolutions x1000; the text output prints the resolution, the RMSE and the translation in the
# unit pipeline.unit names ("m", "mm"). Skips without the shared data, python3 or numpy.
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
src=${GRIP_SOURCE_DIR:?GRIP_SOURCE_DIR is not set}
model=${GRIP_DATA:-}/pcl/data_repo/correspondence_grouping/milk.pcd
scene=${GRIP_DATA:-}/pcl/milk_cartoon_all_small_clorox.pcd
if [ ! -f "$model" ] || [ ! -f "$scene" ]; then echo "skipped: the tutorial pair is not in GRIP_DATA"; exit 77; fi
py=${GRIP_PYTHON:-python3}
if ! "$py" -c "import numpy" 2>/dev/null; then echo "skipped: $py has no numpy"; exit 77; fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# x1000, written as binary PCDs with grip's own reader (python/grip/pcd.py) for the input
PYTHONPATH="$src/python" "$py" - "$model" "$scene" "$dir" <<'PY'
import sys
import numpy as np
from grip.pcd import read_pcd
for path, out in zip(sys.argv[1:3], ("model_mm.pcd", "scene_mm.pcd")):
    c = read_pcd(path)
    xyz = (np.asarray(c.xyz, np.float32).reshape(-1, 3) * np.float32(1000)).astype("<f4")
    h, w = (c.xyz.shape[0], c.xyz.shape[1]) if c.xyz.ndim == 3 else (1, len(xyz))
    vp = " ".join(repr(1000.0 * v) for v in c.viewpoint)
    with open(f"{sys.argv[3]}/{out}", "wb") as f:
        f.write((f"VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH {w}\nHEIGHT {h}\n"
                 f"VIEWPOINT {vp} 1 0 0 0\nPOINTS {len(xyz)}\nDATA binary\n").encode())
        f.write(xyz.tobytes())
PY
[ $? = 0 ] || { echo "FAILED: writing the scaled PCDs"; exit 1; }
run() { "$host" --plugin "$plugin" run --config "$src/configs/pcl_tutorial_mr.conf" --set pipeline.device=cpu "$@"; }
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $2"; fi; }

run --model "$model" --scene "$scene" --set pipeline.unit=m > "$dir/m.txt" 2>&1
rc_m=$?
run --model "$dir/model_mm.pcd" --scene "$dir/scene_mm.pcd" --set pipeline.unit=mm > "$dir/mm.txt" 2>&1
rc_mm=$?
run --model "$model" --scene "$scene" --json > "$dir/m.json" 2>/dev/null
run --model "$dir/model_mm.pcd" --scene "$dir/scene_mm.pcd" --json > "$dir/mm.json" 2>/dev/null
check $(( rc_m || rc_mm )) "both runs succeed: $(cat "$dir/m.txt" "$dir/mm.txt")"
cat "$dir/m.txt" "$dir/mm.txt"

"$py" - "$dir/m.json" "$dir/mm.json" <<'PY'
import json, sys
m, mm = (json.load(open(p)) for p in sys.argv[1:3])
assert len(m["instances"]) == 1 and len(mm["instances"]) == 1, (m["instances"], mm["instances"])
a, b = m["instances"][0], mm["instances"][0]
assert a["model"] == b["model"] and abs(a["correspondences"] - b["correspondences"]) <= 2, (a, b)
for r in range(3):
    for c in range(3):
        assert abs(a["pose"][4 * r + c] - b["pose"][4 * r + c]) <= 1e-4, (a["pose"], b["pose"])
    assert abs(b["pose"][4 * r + 3] - 1000 * a["pose"][4 * r + 3]) <= 1e-2, (a["pose"], b["pose"])
ra, rb = m["units"]["scene_resolution"], mm["units"]["scene_resolution"]
assert abs(rb / ra - 1000) <= 1e-3 * 1000, (ra, rb)
PY
check $? "the same instance, its pose scaled, the resolution x1000"

grep -Eq '^scene resolution: 0\.0017[0-9]* m \(mean nearest-neighbour distance\)$' "$dir/m.txt" &&
  grep -Eq '^scene resolution: 1\.7[0-9]* mm \(mean nearest-neighbour distance\)$' "$dir/mm.txt" &&
  grep -Eq '^model cloud 0 resolution: 1\.5[0-9]* mm$' "$dir/mm.txt"
check $? "the measured resolutions are printed with their unit"
grep -Eq 'ACCEPTED hypothesis 0: .* RMSE [0-9.e+-]+ mm,' "$dir/mm.txt" &&
  grep -Fq 'rotation | translation (mm)' "$dir/mm.txt" &&
  grep -Eq 'ACCEPTED hypothesis 0: .* RMSE [0-9.e+-]+ m,' "$dir/m.txt" &&
  grep -Fq '  descriptor.radius = 11 mr = 19.66' "$dir/mm.txt"
check $? "RMSE, translations and resolved lengths carry the unit"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

#!/usr/bin/env bash
# `--json` writes one JSON document to stdout with the documented keys: instances (model index and name, pose of
# 16 numbers, correspondences, fitness, rmse), counts (model_keypoints, scene_keypoints, correspondences) and timings_ms per stage.
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
if ! command -v python3 >/dev/null; then echo "skipped: python3 is not installed"; exit 77; fi
"$host" --plugin "$plugin" demo --objects 2 --json > /tmp/grip_json_$$.json 2>/dev/null || { echo "0 passed, 1 failed"; exit 1; }
python3 - /tmp/grip_json_$$.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) >= {"instances", "counts", "timings_ms"}, d.keys()
assert len(d["instances"]) >= 1, "no instance found in the demo scene"
for i in d["instances"]:
    assert isinstance(i["model"], int) and len(i["pose"]) == 16 and i["correspondences"] > 0
    assert i["model_name"] in ("bracket", "mug", "blob", "steps"), i["model_name"]  # the demo's kinds
    assert 0 <= i["fitness"] <= 1 and i["rmse"] >= 0
    assert i["pose"][12:] == [0, 0, 0, 1]
c = d["counts"]
assert isinstance(c["model_keypoints"], list) and c["scene_keypoints"] > 0 and c["correspondences"] > 0
for s in ("descriptor", "index", "match", "group", "verify"):
    assert d["timings_ms"][s] >= 0
print("1 passed, 0 failed")
PY
rc=$?
rm -f /tmp/grip_json_$$.json
[ $rc -eq 0 ] || echo "0 passed, 1 failed"
exit $rc

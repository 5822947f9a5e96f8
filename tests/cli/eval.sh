#!/usr/bin/env bash
# grip-host eval recognition on two generated scenes (3 and 4 objects): the JSON, Markdown and SVG files are
# written into a folder --out makes and agree with one another -- every object counted in exactly one occlusion
# bin, the bins summing to the totals, rates that are found / objects, pose errors within the judging tolerance,
# false positives per scene the count over the scenes -- and most objects are found. --views 0 (the complete models)
# is said in the report; --views 361 and an unknown evaluation are usage errors (exit 2).
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
if ! command -v python3 >/dev/null; then echo "skipped: python3 is not installed"; exit 77; fi
tmp=$(mktemp -d /tmp/grip_eval_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0 pass=0
"$host" --plugin "$plugin" eval recognition --scenes 2 --out "$tmp/out" > "$tmp/stdout.md" 2> "$tmp/stderr.txt"
rc=$?
cat "$tmp/stderr.txt" "$tmp/stdout.md"
if [ $rc -eq 0 ] && python3 - "$tmp" <<'PY'
import json, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
j = json.load(open(f"{d}/out/recognition.json"))
assert j["scenes"] == 2 and j["failed_scenes"] == 0
a = j["all"]
assert a["objects"] == 3 + 4, a
assert sum(b["objects"] for b in j["bins"]) == a["objects"]
assert sum(b["found"] for b in j["bins"]) == a["found"]
for b in j["bins"] + [a]:
    assert 0 <= b["found"] <= b["objects"]
    if b["objects"]:
        assert abs(b["rate"] - b["found"] / b["objects"]) < 1e-6
    if b["found"]:
        assert 0 <= b["mean_distance"] <= b["max_distance"] <= j["setup"]["max_distance"]
        assert 0 <= b["mean_angle_deg"] <= b["max_angle_deg"] <= j["setup"]["max_angle_deg"]
assert abs(j["false_per_scene"] - j["false_instances"] / 2) < 1e-9
assert sum(j["missed_rejected_by"].values()) == a["missed_rejected_by_verify"], j["missed_rejected_by"]
assert a["found"] >= 5, f"only {a['found']} of 7 objects found"
md = open(f"{d}/out/recognition.md").read()
assert md == open(f"{d}/stdout.md").read()
assert f"| **all** | 7 | {a['found']} |" in md, md
svg = ET.parse(f"{d}/out/recognition.svg").getroot()
assert svg.tag.endswith("svg")
labels = [t.text for t in svg.iter() if t.tag.endswith("text")]
assert any(l and l.endswith(f"/{j['bins'][0]['objects']}") for l in labels), labels
print("files agree")
PY
then pass=$((pass + 1)); else echo "FAILED: eval recognition (exit $rc)"; fail=$((fail + 1)); fi

"$host" --plugin "$plugin" eval recognition --scenes 1 --objects 1 --views 0 > "$tmp/complete.md" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "complete models (--views 0)" "$tmp/complete.md" && grep -q "^| \*\*all\*\* | 1 |" "$tmp/complete.md"
then pass=$((pass + 1)); else echo "FAILED: eval recognition --views 0 (exit $rc)"; fail=$((fail + 1)); fi
"$host" --plugin "$plugin" eval recognition --views 361 > /dev/null 2> "$tmp/views.txt"
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--views must be 0..360" "$tmp/views.txt"; then pass=$((pass + 1));
else echo "FAILED: --views 361 exits $rc"; fail=$((fail + 1)); fi

"$host" --plugin "$plugin" eval nonsense > /dev/null 2> "$tmp/usage.txt"
rc=$?
if [ $rc -eq 2 ] && grep -q "eval recognition" "$tmp/usage.txt"; then pass=$((pass + 1));
else echo "FAILED: an unknown evaluation exits $rc"; fail=$((fail + 1)); fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

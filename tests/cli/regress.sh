#!/usr/bin/env bash
# grip-host regress: the suite in tests/regress passes (JSON checked: every case passes or, for the shared-data
# cases when the data is absent, is skipped; each instance names its model), exits 1 when recognition is broken
# (a synth case with the verification bound set below the scene's noise, so that every hypothesis is rejected, and
# each missed object names that bound as what rejected it),
# and exits 2 naming file:line: key for a bad case file.
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
src=${GRIP_SOURCE_DIR:?GRIP_SOURCE_DIR is not set}
if ! command -v python3 >/dev/null; then echo "skipped: python3 is not installed"; exit 77; fi
tmp=$(mktemp -d /tmp/grip_regress_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0 pass=0
check() { if [ "$1" -eq 0 ]; then pass=$((pass + 1)); else echo "FAILED: $2"; fail=$((fail + 1)); fi; }

# 1. the suite passes
start=$(date +%s)
GRIP_DATA=${GRIP_DATA:-} "$host" --plugin "$plugin" regress --json "$src"/tests/regress/*.case > "$tmp/suite.json" 2> "$tmp/suite.err"
rc=$?
echo "suite: exit $rc in $(( $(date +%s) - start )) s"
python3 - "$tmp/suite.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["cases"]:
    print(f'  {c["name"]:40s} {c["result"]:5s} found {c["found"]}/{c["expected"]} false {c["false"]} {c["seconds"]:.1f} s {c["note"]}')
    assert c["result"] in ("pass", "skip"), c
    if c["result"] == "pass":
        assert c["found"] == c["expected"] == len(c["truth"]) and c["false"] <= c["max_false"]
        for i in c["instances"]:
            assert isinstance(i["model"], int) and i["model_name"], i
            assert i["verdict"] == "correct" and i["distance"] <= 0.01, i
assert d["failed"] == 0 and d["errors"] == 0 and d["passed"] >= 3, d
PY
py=$?
[ $py -eq 0 ] || cat "$tmp/suite.err"
check $(( rc != 0 || py != 0 )) "the suite in tests/regress does not pass (exit $rc)"

# 2. broken recognition fails: an ICP bound of 0.1 mm, ten times below the scene's noise, rejects every hypothesis
"$host" --plugin "$plugin" regress --set verify.max_rmse=0.0001 "$src/tests/regress/synth_4_objects.case" > "$tmp/broken.txt" 2>&1
rc=$?
cat "$tmp/broken.txt"
check $(( rc != 1 )) "a broken pipeline exits $rc, not 1"
grep -q "FAIL .* 0/4" "$tmp/broken.txt"; check $? "the table does not show 0/4 found"
grep -q "missed object 0 (" "$tmp/broken.txt"; check $? "the missed objects are not listed"
grep -q "was rejected by verify: max_rmse (RMSE [0-9.]* > max_rmse 0.0001" "$tmp/broken.txt"
check $? "a missed object does not name max_rmse as what rejected its hypothesis"

# 3. a bad case file: exit 2, file:line: section.key
printf '[scene]\nseed = 1\nobjects = 40\n[expect]\nmax_angel_deg = 3\n' > "$tmp/bad.case"
"$host" --plugin "$plugin" regress "$tmp/bad.case" > "$tmp/bad.txt" 2>&1
rc=$?
cat "$tmp/bad.txt"
check $(( rc != 2 )) "a bad case file exits $rc, not 2"
grep -q "bad.case:3: scene.objects: '40' is not an integer in 1..16" "$tmp/bad.txt"; check $? "no file:line: key message for objects"
grep -q "bad.case:5: expect.max_angel_deg: unknown key" "$tmp/bad.txt"; check $? "no file:line: key message for the misspelt key"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

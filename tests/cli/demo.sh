#!/usr/bin/env bash
# grip-host demo, end to end on a generated scene: it must exit cleanly (a crash at exit once came from unloading
# the plugin's OpenMP runtime) and recognise at least 2 of its 3 objects within 1 cm of their true poses.
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
out=$("$host" --plugin "$plugin" demo --objects 3 2>&1)
rc=$?
echo "$out" | tail -8
if [ $rc -ne 0 ]; then echo "0 passed, 1 failed"; exit 1; fi
found=$(sed -n 's/^found \([0-9]*\) of \([0-9]*\) objects.*/\1/p' <<<"$out")
wrong=$(grep -c " WRONG$" <<<"$out")
if [ -n "$found" ] && [ "$found" -ge 2 ] && [ "$wrong" -eq 0 ]; then
  echo "1 passed, 0 failed"
else
  echo "found '${found}' objects, ${wrong} wrong: 0 passed, 1 failed"; exit 1
fi

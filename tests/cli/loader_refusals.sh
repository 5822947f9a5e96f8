#!/usr/bin/env bash
# grip-host refuses every malformed plugin (the stubs in tests/stubs) with a clean exit and a message naming the
# plugin and the fault, loads the older-minor plugin whose structs are shorter, and lists the real plugin.
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
stubs=${GRIP_STUBS:?GRIP_STUBS is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
passed=0 failed=0
check() { # NAME EXPECTED_RC_KIND(ok|fail) TEXT -- cmd...
  local name=$1 kind=$2 want=$3
  shift 4
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if { [ "$kind" = ok ] && [ $rc -ne 0 ]; } || { [ "$kind" = fail ] && { [ $rc -eq 0 ] || [ $rc -ge 128 ]; }; }; then
    echo "FAIL $name: exit $rc: $(head -3 <<<"$out")"; failed=$((failed + 1))
  elif ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL $name: output lacks '$want': $(head -3 <<<"$out")"; failed=$((failed + 1))
  else
    echo "ok   $name"; passed=$((passed + 1))
  fi
}
check "wrong major" fail "major" -- "$host" --plugin "$stubs/stub_wrong_major.so" list
check "no entry symbol" fail "grip_plugin_get" -- "$host" --plugin "$stubs/stub_no_entry.so" list
check "NULL table" fail "stub_no_table.so" -- "$host" --plugin "$stubs/stub_no_table.so" list
check "short struct" fail "struct_size" -- "$host" --plugin "$stubs/stub_short_struct.so" list
check "duplicate stage" fail "stub_duplicate_stage.so" -- "$host" --plugin "$stubs/stub_duplicate_stage.so" list
check "older minor loads" ok "impl" -- "$host" --plugin "$stubs/stub_older_minor.so" list
check "real plugin lists its stages" ok "[descriptor] impl = shot" -- "$host" --plugin "$plugin" list
check "missing plugin" fail "nope.so" -- "$host" --plugin /nonexistent/nope.so list
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# The ABI of libgrip.so (everything reachable from plugin.h's grip_plugin_get) against the baseline kept in
# abi/libgrip.abi. An incompatible change fails; a change that only appends fields still shows here and needs the
# baseline regenerated on purpose:
#   abidw --no-show-locs --no-corpus-path --no-comp-dir-path --short-locs --headers-dir . --drop-private-types \
#     build/libgrip.so > abi/libgrip.abi
set -u
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
src=${GRIP_SOURCE_DIR:?GRIP_SOURCE_DIR is not set}
if ! command -v abidiff >/dev/null; then
  echo "skipped: abidiff (abigail-tools) is not installed"
  exit 77
fi
# default suppressions would hide layout changes of structs reached through pointers: off; the opaque types are
# suppressed instead (abi/opaque.suppr)
if abidiff --no-default-suppression --suppressions "$src/abi/opaque.suppr" "$src/abi/libgrip.abi" "$plugin"; then
  echo "1 passed, 0 failed"
else
  echo "ABI differs from abi/libgrip.abi (see above): 0 passed, 1 failed"
  exit 1
fi

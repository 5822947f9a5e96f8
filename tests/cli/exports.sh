#!/usr/bin/env bash
# libgrip.so exports exactly one dynamic symbol, the entry point; everything else is hidden.
set -euo pipefail
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
syms=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort)
echo "exported: $syms"
if [ "$syms" != "grip_plugin_get" ]; then
  echo "FAIL: $plugin must export only grip_plugin_get" >&2
  exit 1
fi
# the plugin must not need the CUDA driver to load: cudart is linked statically, libcuda is dlopen'ed lazily
if ldd "$plugin" | grep -E 'libcuda\.so|libcudart\.so'; then
  echo "FAIL: $plugin links the CUDA runtime or driver dynamically" >&2
  exit 1
fi
echo "1 passed, 0 failed"

#!/usr/bin/env bash
# `cmake --install` lays out a package that hosts outside the tree can use: it installs into a temporary prefix,
# checks the tree, then builds tests/install/host.c against it twice, with find_package(grip) and with pkg-config,
# and runs each build, which dlopens the installed plugin from the path the package gives and describes a cloud.
# The installed grip-host must find the installed plugin by itself.
set -uo pipefail
build=${GRIP_BUILD_DIR:?GRIP_BUILD_DIR is not set}
src=${GRIP_SOURCE_DIR:?GRIP_SOURCE_DIR is not set}
cmake=${CMAKE_COMMAND:-cmake}
tmp=$(mktemp -d /tmp/grip_install_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
passed=0 failed=0
check() { # check WHAT COMMAND...: runs the command quietly, shows its output only when it fails
  local what=$1 out
  shift
  if out=$("$@" 2>&1); then
    echo "ok: $what"
    passed=$((passed + 1))
  else
    echo "FAIL: $what"
    echo "$out" | tail -30 | sed 's/^/    /'
    failed=$((failed + 1))
  fi
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

if ! "$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"
  echo "FAIL: cmake --install"
  failed=1
  finish
fi
find "$prefix" -type f | sed "s|^$prefix/||" | sort

# the layout: lib may be lib64 or lib/<multiarch> (GNUInstallDirs), so the package files are found, not assumed
pc=$(find "$prefix" -name grip.pc)
config=$(find "$prefix" -name gripConfig.cmake)
check "one grip.pc and one gripConfig.cmake" test -f "$pc" -a -f "$config"
check "gripConfigVersion.cmake beside gripConfig.cmake" test -f "$(dirname "$config")/gripConfigVersion.cmake"
check "include/grip/plugin.h" cmp "$prefix/include/grip/plugin.h" "$src/plugin.h"
check "bin/grip-host" test -x "$prefix/bin/grip-host"
libdir=$(dirname "$(dirname "$pc")")
check "the plugin in its own folder, <libdir>/grip/libgrip.so" test -f "$libdir/grip/libgrip.so"
check "no plugin left directly in <libdir>" test ! -e "$libdir/libgrip.so"

# the installed grip-host finds the installed plugin with neither --plugin nor GRIP_PLUGIN
found=$(env -u GRIP_PLUGIN "$prefix/bin/grip-host" list 2>&1 | sed -n '1s/^plugin .* at //p')
check "installed grip-host finds the installed plugin (found: ${found:-none})" \
  test -n "$found" -a "$(realpath -m "$found")" = "$(realpath "$libdir/grip/libgrip.so")"

# a host built with CMake: find_package(grip CONFIG REQUIRED) through CMAKE_PREFIX_PATH
check "outside host configures with find_package(grip)" \
  "$cmake" -S "$src/tests/install" -B "$tmp/host-cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
check "outside host builds with CMake" "$cmake" --build "$tmp/host-cmake"
check "CMake-built host runs on the installed plugin" \
  bash -c "'$tmp/host-cmake/outside_host' | tee /dev/stderr | grep -q '^loaded .* from $libdir/grip/libgrip.so'"

# a host built with pkg-config: cflags for the header, the plugin's path from the `plugin` variable, libs -ldl
export PKG_CONFIG_PATH=$(dirname "$pc")
plugin=$(pkg-config --variable=plugin grip)
check "pkg-config's plugindir holds the plugin" test -f "$(pkg-config --variable=plugindir grip)/libgrip.so"
check "outside host builds with pkg-config" bash -c \
  "${CC:-cc} -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags grip) -DGRIP_TEST_PLUGIN_PATH='\"$plugin\"' \
   '$src/tests/install/host.c' -o '$tmp/host-pc' $(pkg-config --libs grip) -lm"
check "pkg-config-built host runs on the installed plugin" bash -c "'$tmp/host-pc' | tee /dev/stderr | grep -q '^ok$'"
finish

#!/usr/bin/env bash
# grip-host on bad input: each case must fail with a non-zero exit and a message that names the file and line or
# the key at fault, and must not crash (no signal exit). With valgrind installed, a few cases also run under it to
# show that nothing leaks on the error paths.
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
src=${GRIP_SOURCE_DIR:?GRIP_SOURCE_DIR is not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

# expect_fail NAME EXPECTED_TEXT -- command...
expect_fail() {
  local name=$1 want=$2
  shift 3
  local out rc
  out=$("$@" 2>&1 >/dev/null)
  rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
    echo "FAIL $name: exit $rc (want a clean non-zero exit): $out"
    failed=$((failed + 1))
  elif ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL $name: message lacks '$want': $out"
    failed=$((failed + 1))
  else
    echo "ok   $name: $out" | head -3
    passed=$((passed + 1))
  fi
}

# a small valid model and scene (ascii PCD)
pcd_header() { # n width height
  printf 'VERSION .7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH %s\nHEIGHT %s\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS %s\nDATA ascii\n' "$2" "$3" "$1"
}
{ pcd_header 4 4 1; printf '0 0 0\n0.01 0 0\n0 0.01 0\n0 0 0.01\n'; } > "$tmp/ok.pcd"
{ pcd_header 4 4 1; printf '0 0 0\n0.01 0 0\n0 0.01 0\n'; } > "$tmp/short.pcd"
{ printf 'VERSION .7\nFIELDS x y z\nSIZE 4 4\nTYPE F F F\nWIDTH 1\nHEIGHT 1\nPOINTS 1\nDATA ascii\n0 0 0\n'; } > "$tmp/badheader.pcd"
{ pcd_header 1 1 1 | sed 's/DATA ascii/DATA binary/'; printf 'ab'; } > "$tmp/truncated.pcd"
{ pcd_header 2 2 1 | sed 's/DATA ascii/DATA binary_compressed/'; printf '\x10\x00\x00\x00\x18\x00\x00\x00abc'; } > "$tmp/lzf.pcd"
{ pcd_header 2 2 1; printf 'nan nan nan\nnan nan nan\n'; } > "$tmp/allnan.pcd"
pcd_header 0 0 1 > "$tmp/empty.pcd"
{ pcd_header 4 4 1; printf '0 0 0\n0.01 0 0\n0 0.01 0\n1e12 0 0.01\n'; } > "$tmp/far.pcd"
printf 'ply\nformat ascii 1.0\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n' > "$tmp/novertex.ply"
printf '[descriptor]\nimpl = shot\nradious = 0.02\n[match]\nmax_sqdist = -1\n' > "$tmp/typo.conf"

run() { "$host" --plugin "$plugin" run --config "$1" --model "$2" --scene "$3"; }
conf=$src/configs/pcl_tutorial.conf
expect_fail "missing file" "nope.pcd" -- run "$conf" "$tmp/nope.pcd" "$tmp/ok.pcd"
expect_fail "bad PCD header" "badheader.pcd:3" -- run "$conf" "$tmp/badheader.pcd" "$tmp/ok.pcd"
expect_fail "truncated ascii" "short.pcd" -- run "$conf" "$tmp/short.pcd" "$tmp/ok.pcd"
expect_fail "truncated binary" "truncated.pcd" -- run "$conf" "$tmp/ok.pcd" "$tmp/truncated.pcd"
expect_fail "wrong LZF size" "lzf.pcd" -- run "$conf" "$tmp/ok.pcd" "$tmp/lzf.pcd"
expect_fail "all-NaN cloud" "allnan.pcd" -- run "$conf" "$tmp/allnan.pcd" "$tmp/ok.pcd"
expect_fail "empty cloud" "empty.pcd" -- run "$conf" "$tmp/empty.pcd" "$tmp/ok.pcd"
# the models are described in one describe_many call: the one it refuses is named by its file
expect_fail "second model refused by the descriptor" "failed on $tmp/far.pcd: invalid argument: descriptor: clouds[1]:" \
  -- "$host" --plugin "$plugin" run --config "$conf" --set descriptor.support_leaf=0.001 --model "$tmp/ok.pcd" \
  --model "$tmp/far.pcd" --scene "$tmp/ok.pcd"
expect_fail "PLY without vertices" "novertex.ply" -- run "$conf" "$tmp/novertex.ply" "$tmp/ok.pcd"
expect_fail "config typo" "typo.conf:3: descriptor.radious" -- run "$tmp/typo.conf" "$tmp/ok.pcd" "$tmp/ok.pcd"
expect_fail "value out of range" "typo.conf:5: match.max_sqdist" -- run "$tmp/typo.conf" "$tmp/ok.pcd" "$tmp/ok.pcd"
expect_fail "--set typo" "--set: group.treshold" -- "$host" --plugin "$plugin" run --config "$conf" --set group.treshold=5 --model "$tmp/ok.pcd" --scene "$tmp/ok.pcd"
expect_fail "index option out of range" "--set: index.rescreen_capacity: 0 is out of range" -- "$host" --plugin "$plugin" run --config "$conf" --set index.rescreen_capacity=0 --model "$tmp/ok.pcd" --scene "$tmp/ok.pcd"
expect_fail "index option not a choice" "--set: index.screen_precision: 'int4'" -- "$host" --plugin "$plugin" run --config "$conf" --set index.screen_precision=int4 --model "$tmp/ok.pcd" --scene "$tmp/ok.pcd"
expect_fail "missing config" "nope.conf" -- run "$tmp/nope.conf" "$tmp/ok.pcd" "$tmp/ok.pcd"
expect_fail "cuda without a GPU" "device" -- "$host" --plugin "$plugin" run --config "$conf" --set pipeline.device=cuda --model "$tmp/ok.pcd" --scene "$tmp/ok.pcd"
expect_fail "unknown command" "unknown command" -- "$host" --plugin "$plugin" frobnicate
expect_fail "plugin that is not one" "not a loadable shared object" -- "$host" --plugin "$tmp/ok.pcd" list

# valgrind runs only a plain binary: not a sanitized build's (ASan must come first) nor a wrapper that already runs
# grip-host under valgrind (scripts/ci-sanitize.sh)
if command -v valgrind >/dev/null && ldd "$host" >/dev/null 2>&1 && ! ldd "$host" | grep -qE 'lib(a|t|ub|l)san'; then
  for c in "$tmp/badheader.pcd" "$tmp/lzf.pcd" "$tmp/allnan.pcd"; do
    if valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
        "$host" --plugin "$plugin" run --config "$tmp/typo.conf" --model "$c" --scene "$tmp/ok.pcd" >/dev/null 2>"$tmp/vg.log"; then
      echo "FAIL valgrind $(basename "$c"): expected a failure exit"; failed=$((failed + 1))
    elif [ $? -eq 99 ]; then
      echo "FAIL valgrind $(basename "$c"): $(cat "$tmp/vg.log")"; failed=$((failed + 1))
    else
      echo "ok   valgrind $(basename "$c"): no leak, no invalid access"; passed=$((passed + 1))
    fi
  done
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]

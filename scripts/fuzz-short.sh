#!/usr/bin/env bash
# fuzz-short.sh SECONDS -- builds grip-host's libFuzzer harnesses (tests/fuzz/) with clang in a build folder of their
# own and runs each for SECONDS over its committed seed corpus and regression inputs. Fails on any crash, sanitizer
# report, hang (10 s on one input), allocation over 128 MB or RSS over 2 GB; the input that did it is left in
# <build>/fuzz-artifacts/<harness>/ and named in the output.
#
#   GRIP_FUZZ_BUILD   build folder (default: <repo>/build-fuzz)
#   JOBS              parallel compile jobs (default 2)
#   CC                the clang to use (default clang)
# Needs clang with its sanitizer and libFuzzer runtimes (Debian/Ubuntu: clang libclang-rt-dev; llvm for
# llvm-symbolizer, so that reports show file:line).
set -euo pipefail

usage() { echo "usage: $0 SECONDS (seconds of fuzzing per harness)" >&2; exit 2; }
[ $# -eq 1 ] || usage
case "$1" in ''|*[!0-9]*) usage ;; esac
secs=$1
root=$(cd "$(dirname "$0")/.." && pwd)
build=${GRIP_FUZZ_BUILD:-$root/build-fuzz}
cc=${CC:-clang}
case "$(basename "$cc")" in clang*) ;; *) cc=clang ;; esac

mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRIP_WITH_CUDA=OFF \
      -DGRIP_BUILD_TESTS=OFF -DGRIP_BUILD_FUZZERS=ON >"$build/fuzz-cmake.log" 2>&1 ||
  { cat "$build/fuzz-cmake.log" >&2; echo "fuzz-short: configuring $build failed" >&2; exit 1; }
cmake --build "$build" -j "${JOBS:-2}" --target fuzz_pcd fuzz_ply fuzz_config fuzz_model_db

symbolizer=$(command -v llvm-symbolizer || true)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}${symbolizer:+:external_symbolizer_path=$symbolizer}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=""
summary=""
for name in pcd ply config model_db; do
  fuzzer=$build/tests/fuzz/fuzz_$name
  artifacts=$build/fuzz-artifacts/$name
  scratch=$(mktemp -d) # what the run discovers goes here: the committed corpus is only read
  mkdir -p "$artifacts"
  dirs=("$scratch" "$root/tests/fuzz/corpus/$name")
  [ -d "$root/tests/fuzz/regressions/$name" ] && dirs+=("$root/tests/fuzz/regressions/$name")
  echo "== fuzz_$name: $secs s over ${dirs[*]:1}"
  log=$build/fuzz-$name.log
  start=$(date +%s)
  set +e
  "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=128 \
            -dict="$root/tests/fuzz/$name.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
            "${dirs[@]}" >"$log" 2>&1
  rc=$?
  set -e
  rm -rf "$scratch"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  summary+="fuzz_$name: ${execs:-?} executions in $(( $(date +%s) - start )) s, exit $rc"$'\n'
  if [ $rc -ne 0 ]; then
    tail -n 60 "$log" >&2
    echo "fuzz-short: fuzz_$name failed (exit $rc); full log $log; inputs in $artifacts:" >&2
    ls -l "$artifacts" >&2 || true
    failed+=" fuzz_$name"
  fi
done
printf '%s' "$summary"
if [ -n "$failed" ]; then
  echo "fuzz-short: FAILED:$failed" >&2
  exit 1
fi
echo "fuzz-short: no crash in $secs s per harness"

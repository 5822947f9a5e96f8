#!/usr/bin/env bash
# CI's sanitizer pass, run by .ci/run after README.md's test command. On the CI machine (no GPU), each step builds
# its own CPU-only tree (nvcc's objects take no sanitizer flags) and checks:
#   1. asan: AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer over every non-GPU test, in a build with
#      fault injection (test_faults: the CPU twins pass no device hook), but
#      cli_install and python_pytest: they load the plugin into hosts not built with ASan (an outside CMake host,
#      Python), which ASan refuses ("runtime does not come first"); the same ABI calls run in test_hostile_host,
#      test_threads and the CLI tests; and the slow CLI tests whose pipeline cli_demo covers (below, asan());
#   2. tsan: ThreadSanitizer over the threading tests (the test_threads and test_loader that exist);
#   3. valgrind: memcheck on grip-host: list, synth, run (with --json, --overlay) on what synth wrote, and
#      tests/cli/bad_input.sh's cases;
#   4. fuzz: scripts/fuzz-short.sh, each reader's libFuzzer harness for GRIP_FUZZ_SECONDS (default 30).
# Prints "N passed, M failed" last and exits non-zero when a step failed. GRIP_SANITIZE_DIR keeps the build trees
# there (default: a temporary folder, removed at the end); GRIP_JOBS sets the build's parallelism (default 2).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=${GRIP_JOBS:-2}
if [ -n "${GRIP_SANITIZE_DIR:-}" ]; then
  work=$GRIP_SANITIZE_DIR
  mkdir -p "$work"
else
  work=$(mktemp -d /tmp/grip-sanitize.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
passed=0 failed=0

# step NAME FUNCTION: runs it, counts it, goes on whatever happened
step() {
  local name=$1 t0=$SECONDS
  echo "=== $name"
  if "$2"; then
    passed=$((passed + 1))
    echo "=== $name: passed ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1))
    echo "=== $name: FAILED ($((SECONDS - t0)) s)"
  fi
}

# build DIR TARGETS CMAKE_ARGS...: configures a CPU-only tree and builds TARGETS ("" for all); the log goes to
# DIR.log, its end to the output on failure. Without MPI: Open MPI's runtime is not built for the sanitizers (LSan
# reports its allocations at exit); the MPI runs are tested by README's test command (tests/cli/mpi.sh)
build() {
  local dir=$1 targets=$2
  shift 2
  if ! cmake -S "$root" -B "$dir" -DGRIP_WITH_CUDA=OFF -DGRIP_WITH_MPI=OFF "$@" >"$dir.log" 2>&1 ||
    ! cmake --build "$dir" -j"$jobs" ${targets:+--target $targets} >>"$dir.log" 2>&1; then
    tail -50 "$dir.log"
    return 1
  fi
}

# Check runs every test in the test program's own process, so that a sanitizer's report (LeakSanitizer's at exit
# above all) reaches the output whole and fails the program
export CK_FORK=no
# two tests at once, each with OpenMP's threads, on two cores: idle OpenMP threads sleep instead of spinning, which
# under a sanitizer's slowdown would take most of the machine from the threads that work
export OMP_WAIT_POLICY=passive

# Left out under ASan: the install and Python tests (a build of their own); the two recognition-rate runs
# (cli_regress, cli_eval); and the tests of what grip-host writes about a demo run (cli_explain, cli_json,
# cli_overlay, cli_warnings): each drives the same pipeline as cli_demo, which runs here, on whole 640 x 480
# scenes, and under ASan they took 1,400 of the step's 2,200 test-seconds (cli_explain alone 580). They run in the
# normal pass, and the host code they test (the JSON report with its rejections, the overlay, the warnings) runs
# under valgrind below, in run-scene.
asan() {
  build "$work/asan" "" -DGRIP_FAULT_INJECTION=ON "-DGRIP_SANITIZE=address;undefined" || return 1
  ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$work/asan" -LE gpu --output-on-failure -j"$jobs" \
      -E '^(cli_install|python_pytest|cli_regress|cli_eval|cli_explain|cli_json|cli_overlay|cli_warnings)$'
}

tsan() {
  local names
  names=$(cd "$root/tests/unit" && ls test_*.c | sed 's/\.c$//' | grep -E '^test_(threads|loader)$' | tr '\n' ' ')
  if [ -z "$names" ]; then
    echo "no test_threads or test_loader in tests/unit"
    return 1
  fi
  build "$work/tsan" "$names" -DGRIP_SANITIZE=thread || return 1
  # GCC 12's TSan cannot map its shadow memory under every address-space randomisation a kernel may use: run
  # without it where setarch can turn it off
  local norandom=()
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    norandom=(setarch "$(uname -m)" -R)
  fi
  TSAN_OPTIONS="suppressions=$root/scripts/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
    "${norandom[@]}" ctest --test-dir "$work/tsan" -R "^($(echo $names | tr ' ' '|'))\$" --output-on-failure
}

# valgrind_ok LOG -- command...: runs it under memcheck; fails on a non-zero exit or on anything memcheck reported
valgrind_ok() {
  local log=$1
  shift 2
  valgrind -q --error-exitcode=99 --leak-check=full --suppressions="$root/scripts/valgrind.supp" \
    --log-file="$log" "$@" >/dev/null
  local rc=$?
  if [ $rc -ne 0 ] || [ -s "$log" ]; then
    echo "valgrind: exit $rc: $*"
    cat "$log"
    return 1
  fi
  echo "ok   valgrind: $*"
}

memcheck() {
  if ! command -v valgrind >/dev/null; then
    echo "valgrind is not installed (sh scripts/install-deps.sh)"
    return 1
  fi
  build "$work/plain" "" -DGRIP_BUILD_TESTS=OFF || return 1
  local host=$work/plain/grip-host plugin=$work/plain/libgrip.so out=$work/synth bad=0
  mkdir -p "$out" "$work/vg"
  valgrind_ok "$work/vg/list.log" -- "$host" list || bad=1
  valgrind_ok "$work/vg/synth.log" -- "$host" synth --out "$out" --objects 1 --seed 1 || bad=1
  local model
  model=$(ls "$out"/model_*.pcd 2>/dev/null | head -1)
  if [ -z "$model" ]; then
    echo "synth wrote no model"
    return 1
  fi
  # the whole 640 x 480 scene, with few keypoints (one hypothesis, checked against free space), reported as JSON
  # (rejections included) with an overlay; then the model found in itself (hypotheses refined and accepted): two
  # threads, as a host runs it
  valgrind_ok "$work/vg/run-scene.log" -- "$host" run --config "$root/configs/pcl_tutorial.conf" --model "$model" \
    --scene "$out/scene.pcd" --json --overlay "$work/vg/overlay.ply" --set pipeline.threads=2 \
    --set descriptor.normals_k=5 --set descriptor.scene_leaf=0.03 --set descriptor.radius=0.04 \
    --set group.frames=descriptor --set group.threshold=3 --set group.bin_size=0.02 --set match.max_sqdist=1 || bad=1
  valgrind_ok "$work/vg/run-model.log" -- "$host" run --config "$root/configs/pcl_tutorial.conf" --model "$model" \
    --scene "$model" --set pipeline.threads=2 || bad=1
  # bad_input.sh's cases with grip-host under memcheck (a wrapper), each log checked afterwards: the cases
  # themselves expect failure exits, which would hide memcheck's
  local wrapper=$work/vg/grip-host
  printf '#!/bin/sh\nexec valgrind -q --leak-check=full --suppressions="%s" --log-file="%s/bad.%%p.log" "%s" "$@"\n' \
    "$root/scripts/valgrind.supp" "$work/vg" "$host" >"$wrapper"
  chmod +x "$wrapper"
  GRIP_HOST=$wrapper GRIP_PLUGIN=$plugin GRIP_SOURCE_DIR=$root bash "$root/tests/cli/bad_input.sh" || bad=1
  local logs
  logs=$(find "$work/vg" -name 'bad.*.log' -size +0)
  if [ -n "$logs" ]; then
    echo "valgrind reported on bad_input.sh's cases:"
    cat $logs
    bad=1
  else
    echo "ok   valgrind: $(ls "$work/vg" | grep -c '^bad\.') bad-input runs, nothing reported"
  fi
  return $bad
}

step "asan+ubsan, fault injection: ctest -LE gpu" asan
step "tsan: test_threads, test_loader" tsan
step "valgrind: grip-host" memcheck
# 4. fuzz: each libFuzzer harness of grip-host's readers for a short, bounded run over the committed corpus
fuzz() { GRIP_FUZZ_BUILD="$work/fuzz" JOBS=$jobs bash "$root/scripts/fuzz-short.sh" "${GRIP_FUZZ_SECONDS:-30}"; }
step "fuzz: PCD, PLY, config and model database readers" fuzz
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# gpu-sanitize.sh BUILD_DIR OUT_DIR -- compute-sanitizer's memcheck, racecheck, initcheck and synccheck over the whole
# GPU suite (every tests/gpu/test_*.c but the fault tests, which only a GRIP_FAULT_INJECTION tree has), run from the
# repository root on a machine with an NVIDIA GPU, the runs in parallel; prints a table, a test a row, a tool a
# column: "rc/errors/seconds" (rc 0: the test passed and the tool found nothing; 3: the tool found errors; 124: the
# run was stopped at its time limit; errors: ERROR SUMMARY's count, racecheck's hazards). Each run's log and the
# table are in OUT_DIR/sanitizer/; the script's exit status is 0 when every run gave 0, else 1.
#
# Sizes: GRIP_TEST_SANITIZER_SIZE=small is exported (SANITIZE_SIZE=full runs the tests' full sizes): the GPU tests
# whose inputs keep racecheck or synccheck running for hours shrink them, to sizes that launch the same kernels
# (tests/support/test_support.h, grip_test_size).
# Splitting: under the tools in SANITIZE_SPLIT_TOOLS (default all four), the tests in
# SANITIZE_SPLIT run a Check case at a time (CK_RUN_CASE; the cases are read from the test's grip_test_add_case
# and tcase_create calls), in parallel; the table's cell for such a test sums the cases' errors and gives the
# largest rc and the longest case's time (the row's name ends in "*"). The split runs start first, then the whole
# tests, the split tests' first: the long runs begin while the short ones fill in.
#
# Settings (environment):
#   SANITIZE             test names, or test:case for one Check case (default every tests/gpu/test_*.c but
#                        test_faults*)
#   SANITIZE_TOOLS       default "memcheck racecheck initcheck synccheck"
#   SANITIZE_SPLIT       default "test_fpfh_cuda test_ghv_cuda test_icp_cuda test_kdtree3d_cuda test_kdtree_hd_cuda
#                        test_knn_cuda test_neighborhood_cuda test_normals_cuda"
#   SANITIZE_SPLIT_TOOLS default "memcheck racecheck initcheck synccheck"
#   SANITIZE_GPUS        GPUs the runs are spread over, round robin (default: every GPU nvidia-smi lists)
#   SANITIZE_JOBS        runs at a time (default: the number of cores)
#   SANITIZE_LIMIT       seconds a run may take (default 240)
#   SANITIZE_DEADLINE    seconds after which no run starts and running ones are stopped (default: none); a run that
#                        never started shows "-" in the table
#   SANITIZE_SIZE        small (default) or full
#   SANITIZE_RACECHECK_EXCLUDE
#                        kernel-name substrings racecheck skips (each one --kernel-name-exclude kns=NAME; default
#                        none). Racecheck checks shared-memory accesses only, so kernels that declare no shared
#                        memory can be skipped at no loss, and their launches then run at full speed; docs/trust.md
#                        gives the list its runs used
set -uo pipefail
B=${1:?usage: gpu-sanitize.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: gpu-sanitize.sh BUILD_DIR OUT_DIR}
S=$OUT/sanitizer
mkdir -p "$S"
command -v compute-sanitizer > /dev/null || { echo "compute-sanitizer: not in PATH"; exit 1; }
[ "${SANITIZE_SIZE:-small}" = small ] && export GRIP_TEST_SANITIZER_SIZE=small
TOOLS=${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}
SPLIT=${SANITIZE_SPLIT:-test_fpfh_cuda test_ghv_cuda test_icp_cuda test_kdtree3d_cuda test_kdtree_hd_cuda test_knn_cuda test_neighborhood_cuda test_normals_cuda}
SPLIT_TOOLS=${SANITIZE_SPLIT_TOOLS:-memcheck racecheck initcheck synccheck}
GPUS=${SANITIZE_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[ "${GPUS:-0}" -ge 1 ] || GPUS=1
TESTS=${SANITIZE:-$(for f in tests/gpu/test_*.c; do f=${f##*/}; echo "${f%.c}"; done | grep -v '^test_faults')}
in_list() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }
cases_of() {
  grep -oE '(grip_test_add_case\([^,]*, *|tcase_create\()"[^"]*"' "tests/gpu/$1.c" | sed 's/.*"\([^"]*\)"$/\1/'
}
# what ctest gives the tests (tests/CMakeLists.txt): the plugin, grip-host and the source tree
export GRIP_PLUGIN=${GRIP_PLUGIN:-$B/libgrip.so} GRIP_HOST=${GRIP_HOST:-$B/grip-host} GRIP_SOURCE_DIR=${GRIP_SOURCE_DIR:-$PWD}

# the runs, "tool test[:case]", split ones first (the longest), so that the slow runs start while the quick fill in
runs() {
  local tool t c
  for tool in $TOOLS; do
    in_list "$tool" "$SPLIT_TOOLS" || continue
    for t in $TESTS; do
      in_list "$t" "$SPLIT" || continue
      for c in $(cases_of "$t"); do echo "$tool $t:$c"; done
    done
  done
  for t in $(for t in $TESTS; do in_list "$t" "$SPLIT" && echo "$t"; done) \
           $(for t in $TESTS; do in_list "$t" "$SPLIT" || echo "$t"; done); do
    for tool in $TOOLS; do
      in_list "$tool" "$SPLIT_TOOLS" && in_list "$t" "$SPLIT" && continue
      echo "$tool $t"
    done
  done
}

T0=$(date +%s)
END=$((T0 + ${SANITIZE_DEADLINE:-1000000}))
# one run: its log, then "tool entry rc errors seconds" on stdout
runs | awk '{ print NR - 1, $0 }' | END=$END B=$B S=$S GPUS=$GPUS LIMIT=${SANITIZE_LIMIT:-240} \
  RACECHECK_EXCLUDE=${SANITIZE_RACECHECK_EXCLUDE:-} xargs -P "${SANITIZE_JOBS:-$(nproc)}" -L 1 bash -c '
  gpu=$(($0 % GPUS)) tool=$1 entry=$2 test=${2%%:*} case_= skip=()
  if [ "$tool" = racecheck ]; then for k in $RACECHECK_EXCLUDE; do skip+=(--kernel-name-exclude "kns=$k"); done; fi
  [ "$test" = "$entry" ] || case_=${entry#*:}
  left=$((END - $(date +%s))); [ $left -lt $LIMIT ] || left=$LIMIT
  [ $left -gt 1 ] || { echo "$tool $entry - - -"; exit 0; }
  log=$S/$tool-${entry/:/-}.log t1=$(date +%s)
  env ${case_:+CK_RUN_CASE=$case_} CUDA_VISIBLE_DEVICES=$gpu timeout $left compute-sanitizer --tool $tool --report-api-errors no \
    --error-exitcode 3 "${skip[@]}" "$B/tests/$test" > "$log" 2>&1
  rc=$?
  errors=$(sed -n "s/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p; s/.*RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p" "$log" |
           tail -1)
  echo "$tool $entry $rc ${errors:--} $(( $(date +%s) - t1 ))"' > "$S/runs.txt"
WALL=$(( $(date +%s) - T0 ))

# the table: a test a row; a split test's cell is its cases' largest rc, summed errors, longest time ("?": a run
# stopped before its summary; "+": some of its cases never started)
{
  printf "%-30s" "test (rc/errors/seconds)"; for tool in $TOOLS; do printf " %-16s" "$tool"; done; printf "\n"
  awk -v tools="$TOOLS" '
    BEGIN { nt = split(tools, tool, " ") }
    {
      t = $2; sub(/:.*/, "", t); key = t SUBSEP $1
      seen[t] = 1
      if ($2 != t) starred[t] = 1
      if ($3 == "-") { notrun[key] = 1; next }
      ran[key] = 1
      if (!(key in rc) || $3 + 0 > rc[key] + 0) rc[key] = $3
      if ($4 != "-") err[key] += $4; else noerr[key] = 1
      if (!(key in secs) || $5 + 0 > secs[key] + 0) secs[key] = $5
    }
    END {
      for (t in seen) {
        printf "%-30s", t (t in starred ? " *" : "")
        for (i = 1; i <= nt; i++) {
          key = t SUBSEP tool[i]
          cell = "-"
          if (key in ran)
            cell = rc[key] "/" ((key in noerr) ? "?" : err[key]) "/" secs[key] ((key in notrun) ? "+" : "")
          printf " %-16s", cell
        }
        printf "\n"
      }
    }' "$S/runs.txt" | sort
} | tee "$S/table.txt"
bad=$(awk '$3 != "0"' "$S/runs.txt" | wc -l)
total=$(wc -l < "$S/runs.txt")
echo "sanitizer: $total runs ($((total - bad)) clean, $bad not), $WALL s wall, ${GRIP_TEST_SANITIZER_SIZE:-full} sizes," \
  "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" | tee -a "$S/table.txt"
awk '$3 != "0"' "$S/runs.txt" | sort | head -40
[ "$bad" = 0 ]

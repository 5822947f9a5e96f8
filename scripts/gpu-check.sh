#!/usr/bin/env bash
# gpu-check.sh [OUT_DIR] -- grip's checks on a machine with an NVIDIA GPU, run from the repository root: build with
# the CUDA kernels for the local GPU, the GPU tests, compute-sanitizer over them, the benchmarks. Every step writes
# its logs to OUT_DIR (default $OUT, else a new temporary folder) and prints its exit status ("gpu tests: rc=0")
# with the lines of its log that matter; a step that needs something absent (data, the PCL reference) is skipped.
# The script's own exit status is 1 when the build fails, else 0: the step lines say how each step went.
#
# Steps after the build, in this order (GPU_CHECK_STEPS="tests benches" runs only those two; default: all but cpu):
#   tests        ctest -L gpu
#   faults       test_faults_cuda and test_faults in a tree of their own built with GRIP_FAULT_INJECTION (one more
#                build of the kernels: not in the default steps)
#   sanitize     compute-sanitizer's memcheck, racecheck, initcheck and synccheck on every GPU test, in parallel,
#                with the tests' sanitizer sizes (scripts/gpu-sanitize.sh, which says how): a table of rc/errors/time,
#                a test a row, a tool a column; before the timings so that they do not share the GPU with them
#   pcl          PCL 1.13's tutorial pipeline on the tutorial pair, for comparison (needs .pcl/pcl_ref.tar.xz, from
#                ../shared/tools/pcl_ref/make-carry.sh, and the pair in the data folder)
#   benches      the kernel benchmarks (bench/bench_*.c), CUDA events after warm-up, medians
#   runs         the tutorial through grip-host, descriptors on CUDA and on the CPU (needs the data folder)
#   descriptors  bench/bench-descriptors.sh: descriptor throughput, floors and Bologna recall
#   cpu          ctest -LE gpu and grip-host demo (GRIP_CHECK_CPU=1 adds it too)
#
# Settings (environment):
#   CUDA_ARCHITECTURES  CMAKE_CUDA_ARCHITECTURES of the build (default 90, Hopper; `native` takes the local GPU's)
#   BUILD_DIR           the build folder (default build-gpu)
#   GRIP_DATA           the real-data folder the tests and benchmarks read (default .data when present, else
#                       ../shared/data)
#   SANITIZE, SANITIZE_TOOLS, SANITIZE_SPLIT, SANITIZE_SPLIT_TOOLS, SANITIZE_JOBS, SANITIZE_LIMIT,
#   SANITIZE_DEADLINE, SANITIZE_SIZE   the sanitize step's tests, tools, runs a case at a time, parallel runs, time
#                       limits and test sizes (scripts/gpu-sanitize.sh)
#   BENCHES             benchmark names (default every bench/bench_*.c); also the kernels bench-descriptors.sh runs
#   BENCH_DESCRIPTORS_LIMIT  seconds for the descriptors step (default 240)
#   GRIP_CHECK_PACK     1 (default): at the end, pack every log but gpu-check.txt and bench-descriptors.md into
#                       OUT_DIR/logs.tgz, so that the folder holds the summaries and one archive; 0 leaves them loose
#
# If .deps/ exists, the .deb packages in it (Check, subunit, liblzf: what the build and tests need) are unpacked
# into / first, for a machine where they cannot be installed with apt (scripts/install-deps.sh otherwise); this
# needs root.
set -uo pipefail
OUT=${1:-${OUT:-$(mktemp -d /tmp/grip-gpu-check.XXXXXX)}}
mkdir -p "$OUT"
echo "logs: $OUT"

if [ -d .deps ]; then
  for f in .deps/*.deb; do
    [ -f "$f" ] || continue
    case $f in *zlib1g-dev*) [ -f /usr/include/zlib.h ] && continue ;; esac
    dpkg -x "$f" /
  done
  ldconfig
  [ -e /usr/lib/x86_64-linux-gnu/libz.so ] || ln -s libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so
fi

B=${BUILD_DIR:-build-gpu}
if [ -n "${GRIP_DATA:-}" ]; then DATA=$GRIP_DATA
elif [ -d .data ]; then DATA=.data
else DATA=../shared/data
fi
DATA=$(cd "$DATA" 2>/dev/null && pwd || echo "$DATA")
export GRIP_DATA=$DATA GRIP_DATA_DIR=$DATA # the tests read the first, the benchmark programs the second

STEPS=${GPU_CHECK_STEPS:-tests sanitize pcl benches runs descriptors}
[ "${GRIP_CHECK_CPU:-0}" = 1 ] && STEPS="$STEPS cpu"
want() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
# the program names of source files: tests/gpu/test_knn_cuda.c -> test_knn_cuda
names() { local f; for f in "$@"; do f=${f##*/}; echo "${f%.c}"; done; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  cmake -S . -B "$B" -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES:-90}" -DGRIP_DATA_DIR="$DATA" &&
  cmake --build "$B" -j"$(nproc)"
} > "$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -40; exit 1; }
tail -2 "$OUT/build.log"

if want tests; then
  ctest --test-dir "$B" -L gpu --timeout 120 --output-on-failure > "$OUT/ctest-gpu.log" 2>&1
  echo "gpu tests: rc=$?"; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest-gpu.log" | head -20
fi

if want faults; then
  F=$B-faults
  { cmake -S . -B "$F" -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES:-90}" -DGRIP_FAULT_INJECTION=ON \
      -DGRIP_DATA_DIR="$DATA" && cmake --build "$F" -j"$(nproc)" --target test_faults_cuda test_faults
  } > "$OUT/build-faults.log" 2>&1 || grep -E "error" "$OUT/build-faults.log" | head -20
  ctest --test-dir "$F" -R '^test_faults' --timeout 600 --output-on-failure > "$OUT/ctest-faults.log" 2>&1
  echo "fault tests: rc=$?"; grep -E "fault points|tests passed|\*\*\*|Failed|:F:" "$OUT/ctest-faults.log" | head -20
fi

# the out-of-memory tests provoke allocation failures on purpose: API errors are not findings (gpu-sanitize.sh
# passes --report-api-errors no); the fault tests exist only in a GRIP_FAULT_INJECTION tree (the faults step)
if want sanitize; then
  bash scripts/gpu-sanitize.sh "$B" "$OUT" > "$OUT/sanitize.log" 2>&1
  echo "sanitize: rc=$?"; cat "$OUT/sanitize.log"
  tar czf "$OUT/sanitizer.tgz" -C "$OUT" sanitizer && rm -rf "$OUT/sanitizer"
fi

D=$DATA/pcl
M=$D/data_repo/correspondence_grouping/milk.pcd S=$D/milk_cartoon_all_small_clorox.pcd
if want pcl && [ -f "$M" ] && [ -f .pcl/pcl_ref.tar.xz ]; then
  # PCL 1.13 (OpenMP, every core) on the tutorial pair; the benches step then times grip's kernels on the same pair
  P=$(mktemp -d) && tar xJf .pcl/pcl_ref.tar.xz -C "$P"
  LD_LIBRARY_PATH=$P/pcl_ref/lib timeout 120 "$P/pcl_ref/pcl_cg_ref" "$M" "$S" --reps 5 > "$OUT/pcl-tutorial.txt" 2>&1
  echo "pcl_cg_ref: rc=$?"
  grep -E "instances|Correspondences found|normals scene|SHOT model|SHOT scene|match \(1-NN|BOARD|recognize|SHOTEstimationOMP threads=0" \
    "$OUT/pcl-tutorial.txt" | head -24
  rm -rf "$P"
fi

if want benches; then
  for b in ${BENCHES:-$(names bench/bench_*.c)}; do
    timeout 90 "$B/bench/$b" > "$OUT/$b.txt" 2>&1; echo "$b: rc=$?"; tail -4 "$OUT/$b.txt"
  done
fi

if want runs && [ -f "$M" ]; then
  for c in pcl_tutorial pcl_tutorial_gc; do
    timeout 60 "$B/grip-host" run --config configs/$c.conf --set descriptor.device=cuda --model "$M" \
      --scene "$S" --repeat 10 > "$OUT/run-$c-cuda.txt" 2>&1
    echo "run $c (descriptor on cuda): rc=$?"
    grep -E "keypoints|correspondences|ACCEPTED|timings" "$OUT/run-$c-cuda.txt"
  done
  timeout 60 "$B/grip-host" run --config configs/pcl_tutorial.conf --set descriptor.device=cpu --model "$M" \
    --scene "$S" > "$OUT/run-pcl_tutorial-cpu.txt" 2>&1
  echo "run pcl_tutorial (CPU twins): rc=$?"
  grep -E "keypoints|correspondences|ACCEPTED" "$OUT/run-pcl_tutorial-cpu.txt"
fi

if want descriptors; then
  timeout "${BENCH_DESCRIPTORS_LIMIT:-240}" bash bench/bench-descriptors.sh "$B" "$DATA" "$OUT" \
    > "$OUT/bench-descriptors.log" 2>&1
  echo "bench-descriptors: rc=$?"; tail -3 "$OUT/bench-descriptors.log"
  tar czf "$OUT/bench-descriptors.tgz" -C "$OUT" bench-descriptors 2>/dev/null && rm -rf "$OUT/bench-descriptors"
fi

if want cpu; then
  ctest --test-dir "$B" -LE gpu -j"$(nproc)" --output-on-failure > "$OUT/ctest-cpu.log" 2>&1; echo "cpu tests: rc=$?"
  tail -3 "$OUT/ctest-cpu.log"
  "$B/grip-host" demo > "$OUT/demo.txt" 2>&1; echo "demo: rc=$?"; tail -6 "$OUT/demo.txt"
fi

# the archive is written outside $OUT, then moved in, so that tar never reads the folder it is writing into
if [ "${GRIP_CHECK_PACK:-1}" = 1 ]; then
  A=$(mktemp /tmp/grip-logs.XXXXXX)
  ( cd "$OUT" && tar czf "$A" --exclude=bench-descriptors.md --exclude=gpu-check.txt . &&
    find . -maxdepth 1 -type f ! -name bench-descriptors.md ! -name gpu-check.txt -delete &&
    mv "$A" logs.tgz )
fi
exit 0

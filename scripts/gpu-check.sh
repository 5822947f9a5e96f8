#!/usr/bin/env bash
# The GPU machine's run (device tool): build for sm_90 with the CUDA kernels, run the GPU tests, the whole CPU
# suite with the real data, compute-sanitizer on the GPU tests, and the tutorial and demo runs. Logs go to $OUT.
#   carry: .deps (Check, subunit, liblzf debs: see README) and .data (a copy of the real data the tests read)
set -uo pipefail
OUT=${OUT:-/tmp/grip-out}
mkdir -p "$OUT"
for f in .deps/*.deb; do
  case $f in *zlib1g-dev*) [ -f /usr/include/zlib.h ] && continue ;; esac
  dpkg -x "$f" /
done
ldconfig
[ -e /usr/lib/x86_64-linux-gnu/libz.so ] || ln -s libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so
B=/tmp/grip-build
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DGRIP_DATA_DIR="$PWD/.data" &&
  cmake --build $B -j16
} > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
tail -3 "$OUT/build.log"
ctest --test-dir $B -L gpu --output-on-failure > "$OUT/ctest-gpu.log" 2>&1; echo "gpu tests: rc=$?"; tail -4 "$OUT/ctest-gpu.log"
ctest --test-dir $B -LE gpu -j8 --output-on-failure > "$OUT/ctest-cpu.log" 2>&1; echo "cpu tests: rc=$?"; tail -4 "$OUT/ctest-cpu.log"
# the out-of-memory tests provoke cudaMalloc failures on purpose: API errors are not reported as findings
for src in tests/gpu/test_*.c; do
  t=$B/tests/$(basename "$src" .c)
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 3 "$t" \
      > "$OUT/sanitizer-$tool-$(basename $t).log" 2>&1
    echo "compute-sanitizer $tool $(basename $t): rc=$?"
  done
done
D=.data/pcl
M=$D/data_repo/correspondence_grouping/milk.pcd S=$D/milk_cartoon_all_small_clorox.pcd
if [ -f $M ]; then
  # grip's CPU twins and PCL 1.13 on the same 16 cores, one after the other in this run
  for c in pcl_tutorial pcl_tutorial_gc; do
    $B/grip-host run --config configs/$c.conf --model $M --scene $S --repeat 10 > "$OUT/run-$c.txt" 2>&1
    echo "run $c: rc=$?"; grep -E "keypoints|ACCEPTED|timings" "$OUT/run-$c.txt"
  done
  if [ -f .pcl/pcl_ref.tar.xz ]; then
    mkdir -p /tmp/p && tar xJf .pcl/pcl_ref.tar.xz -C /tmp/p
    LD_LIBRARY_PATH=/tmp/p/pcl_ref/lib /tmp/p/pcl_ref/pcl_cg_ref $M $S --reps 5 > "$OUT/pcl-tutorial.txt" 2>&1
    echo "pcl_cg_ref: rc=$?"; grep -iE "ms|instances|correspondences" "$OUT/pcl-tutorial.txt" | head -30
  fi
fi
$B/grip-host demo > "$OUT/demo.txt" 2>&1; echo "demo: rc=$?"; tail -8 "$OUT/demo.txt"
# kernel benchmarks (CUDA events after warm-up, medians), then the descriptor benchmark command
for src in tests/gpu/bench_*.c; do
  b=$(basename "$src" .c)
  GRIP_DATA_DIR=.data timeout 300 $B/tests/$b > "$OUT/$b.txt" 2>&1; echo "$b: rc=$?"; tail -6 "$OUT/$b.txt"
done
[ -x scripts/bench-descriptors.sh ] && { bash scripts/bench-descriptors.sh $B .data "$OUT" > "$OUT/bench-descriptors.log" 2>&1; echo "bench-descriptors: rc=$?"; }

#!/usr/bin/env bash
# The GPU machine's run (device tool), in order of what matters most, each step with a time limit so that the
# whole run fits one device call (600 s): build for sm_90 with the CUDA kernels, the GPU tests, the tutorial side
# by side with PCL 1.13 on the same 16 cores, the kernel benchmarks and the descriptor benchmark command, then
# compute-sanitizer memcheck and racecheck on every GPU test, then the CPU suite with the real data (skipped unless
# GRIP_CHECK_CPU=1: CI runs it), the demo. Logs go to $OUT.
#   carry: .deps (Check, subunit, liblzf debs: see README), .data (a copy of the real data the tests read) and
#   .pcl (PCL's tutorial pipeline, from ../shared/tools/pcl_ref/make-carry.sh)
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
# $GPU_CHECK_STEPS: which steps run after the build (default all of them, in this order)
want() { case " ${GPU_CHECK_STEPS:-tests sanitize pcl benches runs descriptors} " in *" $1 "*) return 0 ;; esac; return 1; }
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  cmake -S . -B $B -DCMAKE_CUDA_ARCHITECTURES=90 -DGRIP_DATA_DIR="$PWD/.data" &&
  cmake --build $B -j16
} > "$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -40; exit 1; }
tail -2 "$OUT/build.log"

if want tests; then
  ctest --test-dir $B -L gpu --timeout 120 --output-on-failure > "$OUT/ctest-gpu.log" 2>&1
  echo "gpu tests: rc=$?"; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest-gpu.log" | head -20
fi

# compute-sanitizer memcheck and racecheck on the GPU tests ($SANITIZE: a list of test names, or test:case to run
# one Check test case alone through CK_RUN_CASE; default every test), four at a time ($SANITIZE_JOBS), before the
# timings so that they do not share the GPU with them (the out-of-memory tests provoke allocation failures on
# purpose: API errors are not findings)
want sanitize && mkdir -p "$OUT/sanitizer" &&
for t in ${SANITIZE:-$(ls tests/gpu/test_*.c | xargs -n1 basename | sed 's/\.c$//')}; do
  printf '%s memcheck\n%s racecheck\n' "$t" "$t"
done | xargs -P "${SANITIZE_JOBS:-4}" -L 1 bash -c 'test=${0%%:*}; case_=; [ "$test" = "$0" ] || case_=${0#*:}
  env ${case_:+CK_RUN_CASE=$case_} timeout '"${SANITIZE_LIMIT:-150}"' compute-sanitizer --tool $1 --report-api-errors no \
    --error-exitcode 3 '"$B"'/tests/$test > '"$OUT"'/sanitizer/$1-${0/:/-}.log 2>&1
  echo "compute-sanitizer $1 $0: rc=$?"' | sort
[ -d "$OUT/sanitizer" ] && tar czf "$OUT/sanitizer.tgz" -C "$OUT" sanitizer && rm -rf "$OUT/sanitizer"

D=.data/pcl
M=$D/data_repo/correspondence_grouping/milk.pcd S=$D/milk_cartoon_all_small_clorox.pcd
if want pcl && [ -f $M ] && [ -f .pcl/pcl_ref.tar.xz ]; then
  # PCL 1.13 (OpenMP, 16 cores) on the tutorial pair, then grip's kernels on the same pair, one after the other
  mkdir -p /tmp/p && tar xJf .pcl/pcl_ref.tar.xz -C /tmp/p
  LD_LIBRARY_PATH=/tmp/p/pcl_ref/lib timeout 120 /tmp/p/pcl_ref/pcl_cg_ref $M $S --reps 5 > "$OUT/pcl-tutorial.txt" 2>&1
  echo "pcl_cg_ref: rc=$?"
  grep -E "instances|Correspondences found|normals scene|SHOT model|SHOT scene|match \(1-NN|BOARD|recognize|SHOTEstimationOMP threads=0" \
    "$OUT/pcl-tutorial.txt" | head -24
fi
# kernel benchmarks (CUDA events after warm-up, medians; $BENCHES: a list of names, default every one)
want benches &&
for b in ${BENCHES:-$(ls bench/bench_*.c | xargs -n1 basename | sed 's/\.c$//')}; do
  GRIP_DATA_DIR=.data timeout 90 $B/bench/$b > "$OUT/$b.txt" 2>&1; echo "$b: rc=$?"; tail -4 "$OUT/$b.txt"
done
# the tutorial through grip-host with the descriptors on the GPU
if want runs && [ -f $M ]; then
  for c in pcl_tutorial pcl_tutorial_gc; do
    timeout 60 $B/grip-host run --config configs/$c.conf --set descriptor.device=cuda --model $M --scene $S \
      --repeat 10 > "$OUT/run-$c-cuda.txt" 2>&1
    echo "run $c (descriptor on cuda): rc=$?"; grep -E "keypoints|correspondences|ACCEPTED|timings" "$OUT/run-$c-cuda.txt"
  done
  timeout 60 $B/grip-host run --config configs/pcl_tutorial.conf --set descriptor.device=cpu --model $M --scene $S \
    > "$OUT/run-pcl_tutorial-cpu.txt" 2>&1
  echo "run pcl_tutorial (CPU twins): rc=$?"; grep -E "keypoints|correspondences|ACCEPTED" "$OUT/run-pcl_tutorial-cpu.txt"
fi
# the descriptor benchmark command (throughput, floors, Bologna recall)
if want descriptors; then
  timeout ${BENCH_DESCRIPTORS_LIMIT:-240} bash bench/bench-descriptors.sh $B .data "$OUT" > "$OUT/bench-descriptors.log" 2>&1
  echo "bench-descriptors: rc=$?"; tail -3 "$OUT/bench-descriptors.log"
  tar czf "$OUT/bench-descriptors.tgz" -C "$OUT" bench-descriptors 2>/dev/null && rm -rf "$OUT/bench-descriptors"
fi

if [ "${GRIP_CHECK_CPU:-0}" = 1 ]; then
  ctest --test-dir $B -LE gpu -j8 --output-on-failure > "$OUT/ctest-cpu.log" 2>&1; echo "cpu tests: rc=$?"
  tail -3 "$OUT/ctest-cpu.log"
  $B/grip-host demo > "$OUT/demo.txt" 2>&1; echo "demo: rc=$?"; tail -6 "$OUT/demo.txt"
fi

# the device tool brings back only a few files: keep the markdown summary, archive every other log
# (the archive is written outside $OUT, then moved in, so that tar never reads the folder it is writing into)
( cd "$OUT" && tar czf /tmp/grip-logs.tgz --exclude=bench-descriptors.md --exclude=gpu-check.txt . &&
  find . -maxdepth 1 -type f ! -name bench-descriptors.md ! -name gpu-check.txt -delete &&
  mv /tmp/grip-logs.tgz logs.tgz )

#!/usr/bin/env bash
# bench-index.sh BUILD_DIR OUT_DIR -- the index benchmarks side by side, run from the repository root on a machine
# with an NVIDIA GPU: grip's k-NN kernels (BUILD_DIR/bench/bench_knn_cuda, bench_kdtree3d_cuda, bench_kdtree_hd_cuda)
# and, when .tools/knn_bench_torch.py is there (copy ../shared/tools/knn_bench_torch.py into .tools/), the PyTorch
# baseline in the same run. Each program's output goes to OUT_DIR/<name>.txt; the exit status is that of the first
# failing step.
set -uo pipefail
B=${1:?usage: bench-index.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: bench-index.sh BUILD_DIR OUT_DIR}
mkdir -p "$OUT"
status=0
for b in bench_knn_cuda bench_kdtree3d_cuda bench_kdtree_hd_cuda; do
  [ -x "$B/bench/$b" ] || continue
  GRIP_DATA_DIR=${GRIP_DATA_DIR:-.data} timeout "${BENCH_LIMIT:-300}" "$B/bench/$b" > "$OUT/$b.txt" 2>&1
  rc=$?; echo "$b: rc=$rc"; [ $rc -eq 0 ] || [ $status -ne 0 ] || status=$rc
done
if [ -f .tools/knn_bench_torch.py ]; then
  KNN_BENCH_OUT="$OUT" timeout "${BENCH_LIMIT:-300}" python3 .tools/knn_bench_torch.py > "$OUT/knn_bench_torch.txt" 2>&1
  rc=$?; echo "knn_bench_torch: rc=$rc"; [ $rc -eq 0 ] || [ $status -ne 0 ] || status=$rc
fi
exit $status

#!/usr/bin/env bash
# bench-index-mpi.sh -- grip-host bench index sharded over 1, 2 and 4 GPUs of one host with Open MPI (issue 27,
# docs/distributed.md), as one command of at most ~10 min: builds this checkout (the plugin with CUDA, grip-host
# with MPI), then exact brute force on 1e7 x 352 SHOT-like rows (1e5 queries, k = 4) on 1, 2, 4 GPUs compared byte
# for byte, the forest without and with the bound sync (recall@1), more ranks than GPUs (a clear error), MPI's
# bandwidth, and 1e8 rows while time is left. Every step has its own timeout; a compact summary goes to stdout and
# $OUT/summary.txt, every log to $OUT.
#
# Run from the directory that holds .deps/ (HELPERS' Debian packages for a bare GPU machine, optional) with
#   OUT=/some/dir MPI_DEBS=/dir/of/openmpi/debs bash bench/bench-index-mpi.sh
# MPI_DEBS: Debian 12's openmpi-bin, libopenmpi3, libopenmpi-dev and their runtime libraries (apt-get download), for
# a machine without MPI: unpacked with dpkg -x and copied without replacing any file the machine has. Without it,
# the machine's own Open MPI is used. MPI27_LOCAL=path/to/grip-host rehearses the script on the CPU, tiny.
set -u
OUT=${OUT:-/tmp/mpi27-out}
mkdir -p "$OUT"
ROOT=$PWD
SRC=$(cd "$(dirname "$0")/.." && pwd)
DEBS=${MPI_DEBS:-}
B=/tmp/b-mpi27
LIMIT=${MPI27_LIMIT:-570}  # seconds this script may use in all
T0=$SECONDS
left() { echo $((LIMIT - (SECONDS - T0))); }
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

# step NAME TIMEOUT CMD...: runs CMD with a timeout (or skips it when less time is left), output to $OUT/NAME.log;
# a failure is reported unless EXPECT_FAILURE is set
step() {
  local name=$1 t=$2
  shift 2
  local l
  l=$(left)
  if [ "$l" -lt 20 ]; then
    say "SKIP $name: ${l}s left"
    return 99
  fi
  [ "$t" -gt "$((l - 10))" ] && t=$((l - 10))
  local s0=$SECONDS
  # a function runs in a bash of its own (exported with export -f), so that timeout can end it
  timeout -k 5 "$t" bash -c '"$@"' _ "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "step $name rc=$rc $((SECONDS - s0))s" >>"$OUT/steps.txt"
  [ $rc -ne 0 ] && [ -z "${EXPECT_FAILURE:-}" ] && say "FAIL $name rc=$rc ($((SECONDS - s0))s; tail of $name.log):" && tail -5 "$OUT/$name.log" | tee -a "$SUMMARY"
  return $rc
}

# ---- 1. dependencies: the lead's .deps as HELPERS.md says, then Open MPI without overwriting any device file ----
install_deps() {
  export PATH=/usr/local/cuda/bin:$PATH
  for f in "$ROOT"/.deps/*.deb; do
    [ -f "$f" ] || continue
    case $f in *zlib1g-dev*) [ -f /usr/include/zlib.h ] && continue ;; esac
    dpkg -x "$f" /
  done
  [ -e /usr/lib/x86_64-linux-gnu/libz.so ] || ln -s libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so
  local stage=/tmp/ompi-stage
  rm -rf "$stage" && mkdir -p "$stage"
  [ -n "$DEBS" ] || return 0
  for f in "$DEBS"/*.deb; do dpkg -x "$f" "$stage"; done
  # Ubuntu 24.04 has merged /usr: a deb's /lib goes to /usr/lib; cp -n never replaces a library the device has
  for d in lib lib64 bin sbin; do
    if [ -d "$stage/$d" ] && [ ! -L "$stage/$d" ]; then
      mkdir -p "$stage/usr/$d" && cp -a "$stage/$d/." "$stage/usr/$d/" && rm -rf "${stage:?}/$d"
    fi
  done
  # the link dpkg's alternatives would make (libfabric needs it)
  local psm=$stage/usr/lib/x86_64-linux-gnu/libpsm_infinipath.so.1
  [ -f "$stage/usr/lib/libpsm1/libpsm_infinipath.so.1.16" ] && [ ! -e "$psm" ] &&
    ln -s /usr/lib/libpsm1/libpsm_infinipath.so.1.16 "$psm"
  cp -an "$stage/." /
  ldconfig
  /usr/bin/orterun --version | head -1
  ompi_info 2>/dev/null | grep -E "Open MPI:|btl: |pml: " | head -12
}
LOCAL=${MPI27_LOCAL:-}  # set to a built grip-host to rehearse this script on a machine without GPUs (CPU, tiny)
if [ -z "$LOCAL" ]; then
export -f install_deps
export ROOT DEBS SRC B OUT
step deps 90 install_deps
say "open mpi: $(/usr/bin/orterun --version 2>/dev/null | head -1) (Debian 12 debs, dpkg -x, no-clobber)"

# ---- 2. build: the plugin (CUDA) and grip-host (MPI) only -----------------------------------------------------
build() {
  export PATH=/usr/local/cuda/bin:$PATH
  cmake -S "$SRC" -B "$B" -DCMAKE_CUDA_ARCHITECTURES=90 -DGRIP_BUILD_TESTS=OFF \
    -DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DGRIP_DATA_DIR="$ROOT/.data" &&
    cmake --build "$B" -j"$(nproc)" --target grip grip-host &&
    grep -q "MPI sharding ON" "$OUT/build.log" && ldd "$B/grip-host" | grep libmpi
}
export -f build
step build 330 build || { say "build failed: see build.log"; exit 1; }
say "build: $(grep 'step build' "$OUT/steps.txt")"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
say "gpus: $NGPU x $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1); cores $(nproc); mem $(free -g | awk '/Mem:/{print $2}') GiB"
H=$B/grip-host
MPI="/usr/bin/orterun --allow-run-as-root --oversubscribe --bind-to none"
DEV=cuda ROWS=10000000 ROWS8=100000000 Q=100000
else
H=$LOCAL NGPU=4 MPI="mpirun --allow-run-as-root --oversubscribe --bind-to none"
DEV=cpu ROWS=20000 ROWS8=40000 Q=200
fi
# one host (plm isolated: no ssh needed): shared memory between ranks (vader), no UCX/InfiniBand probing; ranks
# unbound (each uses many cores)
export OMPI_MCA_plm=isolated OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none \
  OMPI_MCA_osc=^ucx
# a container's /dev/shm may be tiny (64 MB): the ranks' shared-memory segments then go to /tmp
shm_mb=$(df -Pm /dev/shm 2>/dev/null | awk 'NR == 2 { print $2 }')
[ "${shm_mb:-0}" -lt 1024 ] && export OMPI_MCA_btl_vader_backing_directory=/tmp
say "mpi env: /dev/shm ${shm_mb:-?} MB; $(env | grep '^OMPI_MCA' | tr '\n' ' ')"
run_np() { # run_np NP ARGS...: grip-host bench index --mpi on NP ranks
  local np=$1
  shift
  $MPI -np "$np" "$H" bench index --mpi --mpi-timeout 240 "$@"
}
export -f run_np
export H MPI
val() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p" "$2" | head -1; }

np_max=$((NGPU < 4 ? NGPU : 4))
[ "$np_max" -ge 1 ] || { say "no GPU"; exit 1; }

# ---- 4. exact brute force, 1e7 x 352, 1e5 queries, k = 4: 1, 2, 4 GPUs, results byte for byte -------------------
K=4
exact_runs() { # exact_runs TAG ROWS NPS...
  local tag=$1 rows=$2
  shift 2
  for np in "$@"; do
    [ "$np" -le "$np_max" ] || continue
    step ${tag}_np$np 150 run_np "$np" --rows "$rows" --queries $Q --k $K --repeat 3 --out "/tmp/$tag.$np.bin" \
      --set index.impl=bruteforce --set index.device=$DEV
  done
}
table() { # table TAG NPS...: time, efficiency, communication share, identical to 1 GPU (or the fewest that ran)
  local tag=$1 base="" t1="" n1=""
  shift
  say "  $tag: ranks build_ms search_ms round_ms bcast_ms reduce_ms wait_ms comm_share efficiency_vs_first_row same_bytes_as_first_row"
  for np in "$@"; do
    local f=$OUT/${tag}_np$np.log
    [ -f "$f" ] && grep -q "^round:" "$f" || continue
    local tot same eff
    tot=$(val total_ms "$f")
    if [ -z "$base" ]; then base=/tmp/$tag.$np.bin t1=$tot n1=$np; fi
    same=$(cmp -s "$base" "/tmp/$tag.$np.bin" && echo yes || echo NO)
    eff=$(awk -v a="$t1" -v n1="$n1" -v b="$tot" -v n="$np" 'BEGIN { printf "%.3f", (a * n1) / (b * n) }')
    say "  $tag: $np $(val build_ms "$f") $(val search_ms "$f") $tot $(val bcast_ms "$f") $(val reduce_ms "$f") $(val wait_ms "$f") $(val comm_share "$f") $eff $same"
  done
}
exact_runs bf1e7 $ROWS 1 2 4
table bf1e7 1 2 4

# ---- 5. the forest, 1e7, 4 GPUs (and 1): without and with the bound sync; recall@1 against brute force ---------
forest() { # forest NAME NP SYNC
  step "$1" 200 run_np "$2" --rows $ROWS --queries $Q --k $K --repeat 3 --recall --sync-checks "$3" \
    --set index.impl=kdforest --set index.device=$DEV --set index.checks=64 --set index.trees=4
}
forest forest_np$np_max $np_max 0
forest forest_sync_np$np_max $np_max 8
# ---- 6. more ranks than GPUs: a clear error on rank 0, no hang ---------------------------------------------------
EXPECT_FAILURE=1 step too_many_ranks 60 run_np $((NGPU + 1)) --rows 100000 --queries 100 --set index.device=$DEV
case $? in
  0) say "too_many_ranks: UNEXPECTED success" ;;
  99) ;;
  *) say "too_many_ranks: $(grep -m1 'local rank' "$OUT/too_many_ranks.log" | cut -c1-200)" ;;
esac

# ---- 6b. MPI's bandwidth between the ranks of this host ------------------------------------------------------
for np in 2 4; do
  [ $np -le "$np_max" ] && step bw_$np 90 run_np $np --bandwidth && grep "^bandwidth" "$OUT/bw_$np.log" |
    awk '{print "  " $0}' | tee -a "$SUMMARY"
done

# ---- 7. 1e8 x 352 (141 GB): 4 GPUs (35 GB a GPU), then 2 and 1 (streamed from host memory) while time is left ---
exact8() {
  local np=$1
  [ "$np" -le "$np_max" ] || return
  step bf1e8_np$np 240 run_np "$np" --rows $ROWS8 --queries $Q --k $K --repeat 1 --out "/tmp/bf1e8.$np.bin" \
    --set index.impl=bruteforce --set index.device=$DEV
}
exact8 4
forest forest_np1 1 0
exact8 2
exact8 1
table bf1e8 4 2 1
say "  forest (1e7, checks 64, 4 trees a rank, k=$K): name ranks build_ms probe_ms sync_ms search_ms round_ms comm_share recall@1"
for n in forest_np1 forest_np$np_max forest_sync_np$np_max; do
  f=$OUT/$n.log
  [ -f "$f" ] && grep -q "^round:" "$f" || continue
  say "  $n $(val ranks "$f") $(val build_ms "$f") $(val probe_ms "$f") $(val sync_ms "$f") $(val search_ms "$f") $(val total_ms "$f") $(val comm_share "$f") $(sed -n 's/^recall@1=//p' "$f")"
done

say "total $((SECONDS - T0))s; logs in \$OUT"

#!/usr/bin/env bash
# bench-descriptors.sh BUILD_DIR DATA_DIR OUT_DIR -- the descriptor benchmarks, summarised in
# OUT_DIR/bench-descriptors.md (scripts/gpu-check.sh runs it; it runs anywhere grip-host is built, skipping what
# the machine cannot do):
#   1. grip-host bench descriptors: CUDA (1e6 points, 1e5 keypoints) and the CPU twins (1e5 points, 1e4 keypoints:
#      the same support size and keypoint share, a tenth of the work);
#   2. grip-host bench recall --sweep on each Bologna scene there is (DATA_DIR/bologna_retrieval: scenes/SceneI_*.ply,
#      gt/SceneI-rs0.xf and the model of as many vertices in models/), its descriptors on CUDA and on the CPU (the
#      index stage where `auto` puts it);
#   3. the kernel benchmarks BUILD_DIR/bench/bench_*_cuda (reusing OUT_DIR/bench_*.txt when gpu-check made them);
#   4. bench/device_rates.py (copy bandwidth, FP32/FP64 rates), from which bench/summarize.py computes the floors.
# Intermediate results go to OUT_DIR/bench-descriptors/; the exit status is that of the first failing step.
set -uo pipefail
B=${1:?usage: bench-descriptors.sh BUILD_DIR DATA_DIR OUT_DIR}
DATA=${2:?usage: bench-descriptors.sh BUILD_DIR DATA_DIR OUT_DIR}
OUT=${3:?usage: bench-descriptors.sh BUILD_DIR DATA_DIR OUT_DIR}
HERE=$(cd "$(dirname "$0")/.." && pwd)
HOST=$B/grip-host
W=$OUT/bench-descriptors
mkdir -p "$W"
LOG=$W/commands.txt
: > "$LOG"
status=0

# step NAME TIMEOUT COMMAND...: stdout to $W/NAME.json (or .txt), stderr to $W/NAME.err, the exit status logged
step() {
  local name=$1 limit=$2
  shift 2
  echo "+ $*" >> "$LOG"
  timeout "$limit" "$@" > "$W/$name" 2> "$W/$name.err"
  local rc=$?
  echo "  -> rc=$rc $(tail -c 300 "$W/$name.err" | tr '\n' ' ')" >> "$LOG"
  echo "$name: rc=$rc"
  [ $rc -eq 0 ] || [ $status -ne 0 ] || status=$rc
  return $rc
}

step desc-cuda.json 300 "$HOST" bench descriptors --set descriptor.device=cuda --repeat 5 --json
step desc-cpu.json 300 "$HOST" bench descriptors --set descriptor.device=cpu --points 100000 --keypoints 10000 \
  --repeat 3 --json

# a PLY file's vertex count, from its (text) header
vertices() { head -c 4096 "$1" | grep -a -m1 '^element vertex ' | tr -d '\r' | cut -d' ' -f3; }

recalls=()
R=$DATA/bologna_retrieval
for gt in "$R"/gt/Scene*-rs0.xf; do
  [ -f "$gt" ] || continue
  i=$(basename "$gt" -rs0.xf); i=${i#Scene}
  scene=$(ls "$R"/scenes/Scene${i}_*.ply 2>/dev/null | head -1)
  [ -n "$scene" ] || { echo "scene $i: no scenes/Scene${i}_*.ply" >> "$LOG"; continue; }
  # a scene is a posed copy of its model, vertex for vertex: the model is the one with as many vertices
  model=
  for m in "$R"/models/*.ply; do
    [ -f "$m" ] && [ "$(vertices "$m")" = "$(vertices "$scene")" ] && { model=$m; break; }
  done
  [ -n "$model" ] || { echo "scene $i: no model with $(vertices "$scene") vertices" >> "$LOG"; continue; }
  for dev in cuda cpu; do
    repeat=3; [ $dev = cpu ] && repeat=1 # PFH's s^2 pairs at ~500 support points take seconds a cloud on the CPU
    step recall-scene$i-$dev.json 300 "$HOST" bench recall --model "$model" --scene "$scene" --gt "$gt" --sweep \
      --set descriptor.device=$dev --repeat $repeat --json
    recalls+=(--recall "$W/recall-scene$i-$dev.json")
  done
done

kernels=()
for b in "$B"/bench/bench_*; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  case " ${BENCHES:-$name} " in *" $name "*) ;; *) continue ;; esac # gpu-check's selection, when it made one
  if [ -s "$OUT/$name.txt" ]; then
    kernels+=(--kernels "$OUT/$name.txt")
  else
    GRIP_DATA_DIR=$DATA step "$name.txt" 300 "$b"
    kernels+=(--kernels "$W/$name.txt")
  fi
done

step device_rates.json 300 python3 "$HERE/bench/device_rates.py"

python3 "$HERE/bench/summarize.py" --rates "$W/device_rates.json" --descriptors "$W/desc-cuda.json" \
  --descriptors "$W/desc-cpu.json" "${recalls[@]}" "${kernels[@]}" --command-log "$LOG" > "$OUT/bench-descriptors.md"
rc=$?
echo "summary: $OUT/bench-descriptors.md (rc=$rc)"
[ $rc -eq 0 ] || [ $status -ne 0 ] || status=$rc
exit $status

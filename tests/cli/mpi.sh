#!/usr/bin/env bash
# grip-host bench index sharded across MPI ranks on the CPU (host-example/shard/), against one process:
#  - exact indexes (bruteforce, exact kdtree) on 2 and 3 ranks give byte for byte one process's k nearest, on
#    generated SHOT-like rows and on the PCL tutorial's SHOT descriptors (model rows, scene queries) when the data
#    is there; `run --mpi` (the whole pipeline, index sharded) prints what one process prints;
#  - the bound sync never changes an exact search's result; the forest with it finds at least the recall@1 of the
#    forest without it;
#  - bad input ends every rank with a clear error on rank 0, never a hang (each run under `timeout`): ranks given
#    different commands, a stage that fails on every rank (device=cuda without a GPU), a rank that never starts,
#    a rank killed mid-run, a rank stopped mid-run (alive to MPI but silent: the --mpi-timeout path).
# Skips (77) when grip-host was built without MPI or mpirun is missing.
set -u
host=${GRIP_HOST:?GRIP_HOST is not set}
plugin=${GRIP_PLUGIN:?GRIP_PLUGIN is not set}
data=${GRIP_DATA:-}
command -v mpirun >/dev/null || { echo "skip: no mpirun"; exit 77; }
if "$host" --plugin "$plugin" bench index --mpi --rows 10 2>&1 | grep -q "built without MPI"; then
  echo "skip: grip-host was built without MPI (GRIP_WITH_MPI)"
  exit 77
fi
# root in a container (CI) and more ranks than cores; no ptrace-based single copy in a container; this host only
# (plm isolated: no ssh needed, which a container may lack)
mpi=(mpirun --allow-run-as-root --oversubscribe)
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm=isolated
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
bench() { timeout 300 "$@"; }

# same NAME ARGS...: one process, then 2 and 3 ranks, each writing its merged result; all three files equal
same() {
  local name=$1
  shift
  bench "$host" --plugin "$plugin" bench index --repeat 1 --set index.device=cpu --out "$tmp/$name.1" "$@" \
    >"$tmp/$name.log1" 2>&1 || { bad "$name: one process failed"; cat "$tmp/$name.log1"; return; }
  for np in 2 3; do
    if ! bench "${mpi[@]}" -np $np "$host" --plugin "$plugin" bench index --mpi --repeat 1 --set index.device=cpu \
      --out "$tmp/$name.$np" "$@" >"$tmp/$name.log$np" 2>&1; then
      bad "$name: $np ranks failed"
      cat "$tmp/$name.log$np"
      continue
    fi
    grep -q "^bench index: ranks=$np " "$tmp/$name.log$np" && ok || bad "$name: no ranks=$np header"
    cmp -s "$tmp/$name.1" "$tmp/$name.$np" && ok || bad "$name: $np ranks differ from one process"
  done
  echo "ok   $name: 1, 2 and 3 ranks give the same k nearest ($(stat -c %s "$tmp/$name.1") bytes)"
}

same random_bruteforce --rows 5000 --queries 200 --k 4 --seed 3
same random_kdtree --rows 20000 --queries 200 --k 3 --dim 24 --seed 4 --set index.impl=kdtree
# the bound sync never changes an exact search: exact kdtree, bounds from a 2-leaf probe, 3 ranks, same bytes
if bench "${mpi[@]}" -np 3 "$host" --plugin "$plugin" bench index --mpi --repeat 1 --set index.device=cpu \
  --out "$tmp/synced.3" --rows 20000 --queries 200 --k 3 --dim 24 --seed 4 --set index.impl=kdtree \
  --sync-checks 2 --sync-groups 5 >"$tmp/synced.log" 2>&1 && grep -q " sync_checks=2 sync_groups=5 " "$tmp/synced.log"; then
  cmp -s "$tmp/random_kdtree.1" "$tmp/synced.3" && ok || bad "exact kdtree with the bound sync differs"
  echo "ok   exact kdtree with the bound sync: the same k nearest as without"
else
  bad "exact kdtree with the bound sync failed"
  cat "$tmp/synced.log"
fi
tut=$data/pcl_reference/tutorial
if [ -n "$data" ] && [ -f "$tut/model_shot.f32.gz" ] && [ -f "$tut/scene_shot.f32.gz" ]; then
  gzip -dc "$tut/model_shot.f32.gz" >"$tmp/model.f32"
  gzip -dc "$tut/scene_shot.f32.gz" >"$tmp/scene.f32"
  same tutorial_bruteforce --reference "$tmp/model.f32" --query-file "$tmp/scene.f32" --k 2
  same tutorial_kdtree --reference "$tmp/model.f32" --query-file "$tmp/scene.f32" --k 1 --set index.impl=kdtree
  # the merged first neighbour of each scene keypoint PCL's tutorial matched is PCL's model keypoint (3 ranks)
  od -An -v -tu4 -w8 -N $(($(stat -c %s "$tmp/tutorial_bruteforce.3") / 2)) "$tmp/tutorial_bruteforce.3" |
    awk '{ print NR - 1, $1 }' >"$tmp/first.txt"
  differ=$(awk 'NR == FNR { first[$1] = $2; next } FNR > 1 { n++; if (first[$1] != $2) d++ }
                END { print n + 0, d + 0 }' "$tmp/first.txt" "$tut/correspondences.tsv")
  echo "PCL's tutorial correspondences (matched, differing): $differ"
  [ "${differ% *}" -gt 1000 ] && [ "${differ#* }" -eq 0 ] && ok || bad "PCL's correspondences: $differ"
else
  echo "skip: tutorial descriptors ($tut) absent"
fi

# run --mpi: the whole pipeline with the index sharded, on 2 and 3 ranks, prints what one process prints (the
# generated bracket found in itself among two models, the mutual filter on: it reads the sharded index's rows)
mkdir -p "$tmp/synth"
if "$host" --plugin "$plugin" synth --out "$tmp/synth" --objects 2 --seed 1 >/dev/null 2>&1; then
  models=$(ls "$tmp"/synth/model_*.pcd)
  margs=()
  for m in $models; do margs+=(--model "$m"); done
  scene=$(ls "$tmp"/synth/model_*.pcd | tail -1)
  runargs=(run --config "${GRIP_SOURCE_DIR:?}/configs/pcl_tutorial.conf" "${margs[@]}" --scene "$scene"
           --set pipeline.threads=1 --set match.mutual=true)
  bench "$host" --plugin "$plugin" "${runargs[@]}" 2>/dev/null | grep -v '^timings' >"$tmp/run.1"
  grep -q "ACCEPTED" "$tmp/run.1" && ok || bad "run on one process accepted nothing: $(cat "$tmp/run.1")"
  for np in 2 3; do
    bench "${mpi[@]}" -np $np "$host" --plugin "$plugin" --mpi "${runargs[@]}" 2>/dev/null |
      grep -v '^timings' >"$tmp/run.$np"
    cmp -s "$tmp/run.1" "$tmp/run.$np" && ok || { bad "run --mpi on $np ranks differs"; diff "$tmp/run.1" "$tmp/run.$np"; }
  done
  echo "ok   run --mpi on 2 and 3 ranks prints what one process prints ($(grep -c ACCEPTED "$tmp/run.1") accepted)"
else
  bad "synth failed"
fi

# the forest, 3 ranks, without and with the bound sync: recall@1 against brute force, never lower with the sync
recall() {
  bench "${mpi[@]}" -np 3 "$host" --plugin "$plugin" bench index --mpi --repeat 1 --rows 6000 --queries 200 \
    --k 2 --set index.device=cpu --set index.impl=kdforest --set index.checks=8 --recall "$@" 2>&1 |
    sed -n 's/^recall@1=//p'
}
r0=$(recall --sync-checks 0)
r1=$(recall --sync-checks 2)
echo "forest recall@1 without sync $r0, with $r1"
[ -n "$r0" ] && [ -n "$r1" ] && ok || bad "no recall@1 ('$r0', '$r1')"
awk -v a="$r1" -v b="$r0" 'BEGIN { exit !(a + 0 >= b + 0 && b + 0 > 0.5) }' && ok ||
  bad "recall@1 with the sync ($r1) below without ($r0), or the forest finds too little"

# expect NAME PATTERN RUN...: the run fails (not by timeout) and its output matches PATTERN
expect() {
  local name=$1 pattern=$2
  shift 2
  local out rc
  out=$(timeout 120 "$@" 2>&1)
  rc=$?
  if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
    bad "$name: exit $rc (expected a failure, not a hang)"
    echo "$out" | tail -5
  elif ! grep -q -- "$pattern" <<<"$out"; then
    bad "$name: no '$pattern' in the output"
    echo "$out" | tail -5
  else
    ok
    echo "ok   $name: exit $rc, '$pattern'"
  fi
}
b=(bench index --mpi --repeat 1 --queries 10 --set index.device=cpu)
expect different_commands "rank 1 (host .*): the ranks were given different commands" \
  "${mpi[@]}" -np 1 "$host" --plugin "$plugin" "${b[@]}" --rows 1000 : -np 1 "$host" --plugin "$plugin" "${b[@]}" --rows 1001
expect failing_stage "grip-host: rank 1 (host .*): index stage: " \
  "${mpi[@]}" -np 2 "$host" --plugin "$plugin" bench index --mpi --repeat 1 --rows 1000 --queries 10 --set index.device=cuda
expect rank_never_starts "" \
  "${mpi[@]}" -np 1 "$host" --plugin "$plugin" "${b[@]}" --rows 1000 : -np 1 false
# a rank killed mid-run (its launcher, bash, reports the kill): Open MPI ends the job
slow=(bench index --mpi --mpi-timeout 5 --repeat 3 --queries 2000 --rows 100000 --set index.device=cpu)
expect rank_dies "exited with non-zero status" \
  "${mpi[@]}" -np 1 "$host" --plugin "$plugin" "${slow[@]}" : -np 1 bash -c \
  '"$@" & pid=$!; sleep 2; kill -9 $pid; wait $pid' _ "$host" --plugin "$plugin" "${slow[@]}"
# a rank stopped mid-run (alive to MPI, answering nothing): rank 0 gives up after --mpi-timeout and ends the job
expect rank_hangs "rank 0 (host .*): no answer from the other ranks in step .* within 5 s" \
  "${mpi[@]}" -np 1 "$host" --plugin "$plugin" "${slow[@]}" : -np 1 bash -c \
  '"$@" & pid=$!; sleep 2; kill -STOP $pid; wait $pid' _ "$host" --plugin "$plugin" "${slow[@]}"
expect too_few_rows "2 reference rows for 3 ranks: at least one a rank" \
  "${mpi[@]}" -np 3 "$host" --plugin "$plugin" "${b[@]}" --rows 2
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

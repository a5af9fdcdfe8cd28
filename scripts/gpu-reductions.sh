#!/usr/bin/env bash
# Reductions computed on the GPUs (issue 20, item 1), in one device call of under 10 minutes:
# build (sm_90), the GPU tests into ctest-gpu.txt, then, unless PHASE=tests, with two ranks and
# Strider preloaded, MPI_Allreduce of int and double (MPI_SUM) on device and on managed memory by
# bench/coll_kinds, computed on the GPUs (STRIDER_GPU_REDUCE=1) and by the MPI's op on host
# copies (=0, the path every reduction took before), same run, one GPU per rank and both ranks
# on one GPU: reduce_gpu[_one].csv / reduce_host[_one].csv; on a one-GPU machine the pair on
# one GPU again under MPS (_one_mps). host,host is the MPI alone.
# Results under $OUT (default ./gpu-out), at most 8 files.
# Usage: [PHASE=tests] scripts/gpu-reductions.sh
set -uo pipefail
PHASE=${PHASE:-all}
source "$(dirname "$0")/gpu-build-env.sh"
log=$OUT/reductions-$PHASE.txt
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u; } | tee "$log"
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
lib=$PWD/$build/src/libstrider.so

gpu_build reductions || exit 1
echo "== built in $((SECONDS - start)) s" | tee -a "$log"
gpu_tests "$log" 300
[[ $PHASE == tests ]] && { tar czf "$OUT/extras.tar.gz" -C "$OUT" extras; exit 0; }

run_tail=30
ck=$build/bench/strider_bench_coll_kinds
for gpu_reduce in 1 0; do
  name=gpu
  [[ $gpu_reduce == 0 ]] && name=host
  for placement in spread one; do
    flags=()
    suffix=
    if [[ $placement == one ]]; then flags=(--one-gpu); suffix=_one; fi
    [[ $placement == spread && $gpus -lt 2 ]] && continue
    run "allreduce, STRIDER_GPU_REDUCE=$gpu_reduce, $placement" 80 LD_PRELOAD="$lib" \
      STRIDER_GPU_REDUCE=$gpu_reduce -- $ck --colls allreduce --types int,double \
      --kinds device,device managed,managed --touch device "${flags[@]}" \
      --counts 1,1024,65530,1048576,8388608 --budget-ms 150 --time-limit 60 \
      --out "$OUT/reduce_$name$suffix.csv"
  done
done
if ((gpus == 1)) && start_mps; then
  for gpu_reduce in 1 0; do
    name=gpu
    [[ $gpu_reduce == 0 ]] && name=host
    run "allreduce under MPS, STRIDER_GPU_REDUCE=$gpu_reduce" 80 LD_PRELOAD="$lib" \
      STRIDER_GPU_REDUCE=$gpu_reduce -- $ck --colls allreduce --types int,double \
      --kinds device,device --touch device --one-gpu --counts 1,1024,65530,1048576,8388608 \
      --budget-ms 150 --time-limit 60 --out "$OUT/reduce_${name}_one_mps.csv"
  done
fi
tar czf "$OUT/extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
echo "== done after $((SECONDS - start)) s" | tee -a "$log"

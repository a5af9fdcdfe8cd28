#!/usr/bin/env bash
# Issue 21 (bursts) and issue 22 (no behaviour change) in one device call of under 10 minutes:
# build this tree (sm_90) and .before/'s libstrider.so (a `git archive` of the commit to compare
# with, git-ignored); the GPU tests into ctest-gpu.txt (skipped with TESTS=0); then bench/halo
# with every form (persistent and waitany included) at per-rank 64 and 128 on $NP ranks (default
# 2, one GPU each; dims from MPI_Dims_create), this tree with STRIDER_BURST=1 and =0 and the
# before tree, twice in turn, so that differences can be read against the run-to-run spread
# (halo_{after,burst0,before}_{1,2}.csv; with forms notices and wires, form (i)'s messages on host
# memory, also run without Strider: halo_without_strider_*); the point-to-point forms with STRIDER_SAME_NODE=0
# (halo_nooffers_*); bench/pingpong after and before (pingpong_*), all archived in bench.tar.gz.
# MPS=1 runs the tests and the ranks on one GPU under an MPS daemon (CUDA_VISIBLE_DEVICES=0).
# BENCHES may name "multiple": the point-to-point forms and one Neighbor_alltoallw under
# MPI_THREAD_MULTIPLE (mpi4py's default level; ranks unbound, so that Strider's progress thread,
# without which nothing is deferred there, has a CPU; halo_multiple_*), and "overlap": forms isend,
# waitany and persistent computing COMPUTE_US (default
# 1000) between posting and completing, under MPI_THREAD_SERIALIZED (where the progress thread
# runs on Open MPI), this tree with its progress thread (STRIDER_PROGRESS_US=100) and without
# (=0), in turn (halo_overlap_{on,off}_*). NAME (default bursts) names the
# log (NAME.txt) and archives (NAME-bench.tar.gz, NAME-extras.tar.gz), so that one device call
# can run the script twice (say NP=4, then NP=2). "profile": form (i) at box 64 with
# STRIDER_PROFILE=1, this tree and the before tree (profile_*.txt); PROFILE_FORMS="isend waitany"
# profiles each form named alone.
# Usage: [NP=2|4] [TESTS=0] [MPS=1] [BENCHES="halo nooffers pingpong multiple overlap profile"]
#        [COMPUTE_US=1000] [PROFILE_FORMS=isend]
#        [BEFORE_PERSISTENT=0] [NAME=bursts] scripts/gpu-bursts.sh
set -uo pipefail
source "$(dirname "$0")/gpu-build-env.sh"
name=${NAME:-bursts}
log=$OUT/$name.txt
gpu_begin bursts || exit 1
gpu_build_before "$log"
if [[ ${MPS:-0} == 1 ]]; then
  export CUDA_VISIBLE_DEVICES=0
  start_mps && echo "== MPS on, every rank on GPU 0 (tests and benchmarks)" | tee -a "$log"
fi
[[ ${TESTS:-1} == 1 ]] && gpu_tests "$log" 300
run_tail=30
mkdir -p "$OUT/bench"
after=$PWD/$build/src/libstrider.so
prior=$PWD/$before/src/libstrider.so
benches=" ${BENCHES:-halo nooffers pingpong} "
for round in 1 2; do
  for which in after burst0 before; do
    l=$after burst=1
    [[ $which == before ]] && l=$prior
    [[ $which == burst0 ]] && burst=0
    [[ -e $l ]] || continue
    # A before tree older than 2026-11-26 refuses persistent requests on GPU memory: with
    # BEFORE_PERSISTENT=0 its runs leave form (vi) out.
    forms=isend,pack,alltoallw,expert,waitany,persistent p2p_forms=isend,waitany,expert,persistent
    [[ $which == before && ${BEFORE_PERSISTENT:-1} == 0 ]] &&
      forms=${forms%,persistent} p2p_forms=${p2p_forms%,persistent}
    # The MPI's share of form (i): its messages on host memory, empty and with their bytes.
    forms+=,notices,wires
    [[ $benches == *" halo "* ]] &&
      run "halo, $which $round" 120 LD_PRELOAD="$l" STRIDER_BURST=$burst -- \
      $build/bench/strider_bench_halo --n 64 128 --iters 10 --forms $forms \
      --csv "$OUT/bench/halo_${which}_$round.csv"
    # ... and the same without Strider (the MPI alone; no GPU buffer reaches it), also completed
    # by form (vii)'s loop of MPI_Waitany.
    [[ $benches == *" halo "* && $which == after ]] &&
      run "halo messages without Strider $round" 120 -- $build/bench/strider_bench_halo \
      --n 64 128 --iters 10 --forms expert,notices,wires,notices_waitany,wires_waitany \
      --csv "$OUT/bench/halo_without_strider_$round.csv"
    [[ $benches == *" nooffers "* ]] &&
      run "halo without offers, $which $round" 120 LD_PRELOAD="$l" STRIDER_BURST=$burst \
      STRIDER_SAME_NODE=0 -- $build/bench/strider_bench_halo --n 64 128 --iters 10 \
      --forms $p2p_forms --csv "$OUT/bench/halo_nooffers_${which}_$round.csv"
    # Unbound ranks: under MULTIPLE sends are deferred only where the progress thread has a CPU.
    [[ $benches == *" multiple "* ]] && MPIRUN_FLAGS="${MPIRUN_FLAGS:-} --bind-to none" \
      run "halo under MPI_THREAD_MULTIPLE, $which $round" 120 LD_PRELOAD="$l" STRIDER_BURST=$burst \
      -- $build/bench/strider_bench_halo --n 64 128 --iters 10 --forms "$p2p_forms,alltoallw" \
      --thread multiple --csv "$OUT/bench/halo_multiple_${which}_$round.csv"
    if [[ $benches == *" overlap "* && $which != before ]]; then
      thread=on us=100
      [[ $which == burst0 ]] && thread=off us=0
      run "halo computing ${COMPUTE_US:-1000} us, progress thread $thread $round" 120 \
        LD_PRELOAD="$after" STRIDER_PROGRESS_US=$us -- $build/bench/strider_bench_halo --n 64 128 \
        --iters 10 --forms isend,waitany,persistent --compute-us "${COMPUTE_US:-1000}" --serialized \
        --csv "$OUT/bench/halo_overlap_${thread}_$round.csv"
    fi
    # "profile": each of PROFILE_FORMS (default isend: form (i)) alone at box 64 with
    # STRIDER_PROFILE=1 (the phases' host time, printed at MPI_Finalize), this tree and the
    # before tree (profile_{after,before}_*.txt; profile_FORM_* for a form other than isend).
    for form in ${PROFILE_FORMS:-isend}; do
      [[ $benches == *" profile "* && $which != burst0 ]] || break
      tag=$which; [[ $form != isend ]] && tag=${form}_$which
      run_tail=200 log=$OUT/bench/profile_${tag}_$round.txt run "halo profile $form, $which $round" \
        120 LD_PRELOAD="$l" STRIDER_PROFILE=1 -- $build/bench/strider_bench_halo --n 64 \
        --iters 20 --forms $form --csv "$OUT/bench/halo_profile_${tag}_$round.csv"
    done
    [[ $benches == *" pingpong "* && $which != burst0 ]] &&
      run "pingpong, $which $round" 60 LD_PRELOAD="$l" -- $build/bench/strider_bench_pingpong \
      --budget-ms 100 --out "$OUT/bench/pingpong_${which}_$round.csv"
  done
done
tar czf "$OUT/$name-bench.tar.gz" -C "$OUT" bench && rm -rf "$OUT/bench"
tar czf "$OUT/$name-extras.tar.gz" -C "$OUT" extras && rm -rf "$OUT/extras"
echo "== done after $((SECONDS - start)) s" | tee -a "$log"

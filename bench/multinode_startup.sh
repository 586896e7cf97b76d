#!/usr/bin/env bash
# multinode_startup.sh — how often a multi-node launch loses a rank at start-up, and whether the
# job templates recover (docs/CLUSTER.md, "A rank dies at start-up").  Root; runs ROUNDS
# (default 100) rounds of the two jobs multinode.sh starts together — the smoke ensemble (3000
# members) on 3 nodes x 1 rank and on 2 nodes x 2 ranks, cluster/ensemble.sbatch, srun
# --mpi=pmix — on the private network-namespace cluster (tests/scripts/netns_cluster.sh).
#
#   bash bench/multinode_startup.sh build/twofold
#
# LOAD=1 runs two CPU-bound loops beside it; SERIAL=1 submits the second job of a round only
# after the first ended; OSC=pt2pt replaces the cluster's osc/ucx.  Prints one line per job
# that lost a rank (its state and how the template answered) and a summary: jobs, jobs in
# which a rank died by a signal, relaunches, jobs not COMPLETED, and files that differ from
# a one-rank run of the same ensemble.
set -euo pipefail
TWOFOLD=$(realpath "${1:?usage: multinode_startup.sh TWOFOLD}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-100}
WORK=$(mktemp -d /var/tmp/twofold-mnstart.XXXXXX)
cd "$WORK"
source "$ROOT/tests/scripts/netns_cluster.sh"
[ -n "${OSC:-}" ] && export OMPI_MCA_osc=$OSC
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TWOFOLD
loops=()
stop_all() {
  [ ${#loops[@]} -gt 0 ] && kill "${loops[@]}" 2>/dev/null
  netns_stop
  rm -rf "$WORK"
}
netns_cluster_start >/dev/null 2>&1
trap stop_all EXIT
if [ "${LOAD:-0}" = 1 ]; then
  for _ in 1 2; do (while :; do :; done) & loops+=($!); done
fi
SET=(--set ensemble.members=3000 --set integrator.t_end=0.5)
"$TWOFOLD" run "$ROOT/configs/smoke.yaml" -o ref.h5 "${SET[@]}" --quiet
jobs=0 died=0 relaunched=0 bad=0 differ=0
wait_job() { # ID: until SLURM no longer lists it (at most 300 s)
  local t0=$SECONDS
  while [ -n "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; do
    [ $((SECONDS - t0)) -lt 300 ] || { scancel "$1"; return 1; }
    sleep 0.3
  done
}
for r in $(seq "$ROUNDS"); do
  rm -f n3x1.h5 n2x2.h5 ./*.log
  ids=()
  for shape in "n3x1 -w tfmn[1-3] -N3 --ntasks=3 --ntasks-per-node=1" \
               "n2x2 -w tfmn[1-2] -N2 --ntasks=4 --ntasks-per-node=2"; do
    set -- $shape
    name=$1; shift
    ids+=("$name:$(sbatch --parsable "$@" --time=5 --signal=B:USR1@10 --output="$name-%j.log" \
      "$ROOT/cluster/ensemble.sbatch" "$ROOT/configs/smoke.yaml" "$name.h5" "${SET[@]}")")
    [ "${SERIAL:-0}" = 1 ] && wait_job "${ids[-1]#*:}"
  done
  for entry in "${ids[@]}"; do
    name=${entry%%:*} id=${entry#*:}
    wait_job "$id" || true
    jobs=$((jobs + 1))
    state=$(scontrol -o show job "$id" | tr ' ' '\n' | sed -n 's/^JobState=//p')
    log=$(cat "$name-$id.log")
    n=$(grep -c 'launching again' <<<"$log" || true)
    if grep -Eq 'Segmentation fault|Caught signal|task [0-9-]*: Killed|exited abnormally' <<<"$log"; then
      died=$((died + 1))
      echo "round $r, job $id ($name): a rank died by a signal; relaunched $n time(s); $state"
    fi
    relaunched=$((relaunched + n))
    [ "$state" = COMPLETED ] || { bad=$((bad + 1)); echo "round $r, job $id ($name): $state"; }
    h5diff -q ref.h5 "$name.h5" /members /members >/dev/null 2>&1 || differ=$((differ + 1))
  done
  [ $((r % 10)) = 0 ] && echo "  ... $r of $ROUNDS rounds" >&2
done
echo "multinode_startup: $jobs jobs (LOAD=${LOAD:-0} SERIAL=${SERIAL:-0} osc=${OMPI_MCA_osc}):" \
  "$died lost a rank to a signal, $relaunched relaunch(es), $bad not COMPLETED," \
  "$differ file(s) different from the one-rank run"

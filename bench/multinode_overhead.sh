#!/usr/bin/env bash
# multinode_overhead.sh — the overhead terms of docs/CLUSTER.md's model measured across nodes:
# start-up, flush rounds and chunk claims (the RMA counter on rank 0, over TCP) on 1 to NODES
# (default 4) nodes of the private network-namespace cluster (tests/scripts/netns_cluster.sh), 1 rank
# per node, every rank launched by srun --mpi=pmix.  Root; prints a markdown table.
#
#   bash bench/multinode_overhead.sh build/twofold
#
# Per node count, inside one allocation (each time the least of REPEAT, default 3, runs): srun
# of `true`; a run of 1 member per rank (start-up,
# twofold's process_seconds); the smoke ensemble (M members) with flush_interval 10 s and
# 0.02 s (the difference over the extra rounds is the cost of a round) and with chunk 256 and
# 1 (the difference over the extra claims is the cost of a claim).  All "nodes" share this
# machine's cores, so the per-member work does not scale: read the overheads, not speed-ups.
set -euo pipefail
TWOFOLD=$(realpath "${1:?usage: multinode_overhead.sh TWOFOLD}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
M=${M:-2000}
fail() { echo "multinode_overhead: $*" >&2; }
WORK=$(mktemp -d /var/tmp/twofold-mnbench.XXXXXX)
cd "$WORK"
NODES=${NODES:-4}
NETNS_NODES=$NODES
source "$ROOT/tests/scripts/netns_cluster.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TWOFOLD
netns_cluster_start >/dev/null 2>&1
cat > step.sh <<'EOF'
#!/bin/bash
# one allocation: each measurement a step over all its ranks; wall seconds via date
set -u
C=$1 M=$2
t() { # the least of REPEAT runs: one run's noise on shared cores hides a claim's cost
  local t0 t1 best="" d
  for _ in $(seq "${REPEAT:-3}"); do
    t0=$(date +%s.%N); "$@" > last.json 2>/dev/null; t1=$(date +%s.%N)
    d=$(echo "$t1 - $t0" | bc)
    if [ -z "$best" ] || [ "$(echo "$d < $best" | bc)" = 1 ]; then best=$d; fi
  done
  echo "$best"; }
S=(srun --mpi=pmix "$TWOFOLD" run "$C" --overwrite --json --quiet --set integrator.t_end=0.25)
a=$(t srun --mpi=pmix true)
b=$(t "${S[@]}" -o one.h5 --set ensemble.members=$SLURM_NTASKS)
bp=$(grep -o '"process_seconds": [0-9.]*' last.json | grep -o '[0-9.]*$')
f10=$(t "${S[@]}" -o f10.h5 --set ensemble.members=$M --set ensemble.chunk=16)
r10=$(grep -o '"flush_rounds": [0-9]*' last.json | grep -o '[0-9]*$')
f002=$(t "${S[@]}" -o f002.h5 --set ensemble.members=$M --set ensemble.chunk=16 --set output.flush_interval=0.02)
r002=$(grep -o '"flush_rounds": [0-9]*' last.json | grep -o '[0-9]*$')
c256=$(t "${S[@]}" -o c256.h5 --set ensemble.members=$M --set ensemble.chunk=256)
c1=$(t "${S[@]}" -o c1.h5 --set ensemble.members=$M --set ensemble.chunk=1)
echo "RESULT $SLURM_JOB_NUM_NODES $a $b $bp $f10 $r10 $f002 $r002 $c256 $c1"
EOF
echo "| nodes × 1 rank | srun true s | start-up: run of 1 member/rank s (process s) | $M members, flush 10 s / 0.02 s | rounds | per round ms | chunk 256 / 1 s | per claim µs |"
echo "|---|---|---|---|---|---|---|---|"
for n in $(seq 1 "$NODES"); do
  id=$(sbatch --parsable -N$n --ntasks=$n --ntasks-per-node=1 --time=10 --output=bench-$n.log \
    step.sh "$ROOT/configs/smoke.yaml" "$M")
  slurm_wait_job "$id" 600
  read -r _ nn a b bp f10 r10 f002 r002 c256 c1 < <(grep '^RESULT' bench-$n.log || echo "RESULT $n")
  [ -n "${c1:-}" ] || { fail "no result for $n nodes: $(tail -n 5 bench-$n.log)"; continue; }
  awk -v n="$nn" -v a="$a" -v b="$b" -v bp="$bp" -v f10="$f10" -v r10="$r10" -v f002="$f002" \
    -v r002="$r002" -v c256="$c256" -v c1="$c1" -v M="$M" 'BEGIN {
    printf "| %d | %.2f | %.2f (%.2f) | %.2f / %.2f | %d / %d | %.1f | %.2f / %.2f | %.0f |\n",
      n, a, b, bp, f10, f002, r10, r002, 1e3 * (f002 - f10) / (r002 - r10), c256, c1,
      1e6 * (c1 - c256) / (M - M / 256) * n }'
done
rm -rf "$WORK"

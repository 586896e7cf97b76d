#!/bin/bash
# cluster_overhead.sh — the numbers behind the overhead model in docs/CLUSTER.md, measured on
# this machine: start-up, throughput and flush-round cost on 1, 2 and 4 (oversubscribed)
# ranks under mpiexec and under srun --mpi=pmix on a private single-node SLURM; queue and
# job-array latency; the cost of merging part files, by copy and by HDF5 virtual datasets.
#
#   bench/cluster_overhead.sh [OUT.md]        (root; installs slurm-wlm/munge if missing)
#
# Environment: TWOFOLD (default build/twofold), WORK (default /tmp/twofold-cluster-bench).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
export TWOFOLD=${TWOFOLD:-$SRC/build/twofold} MPIEXEC=${MPIEXEC:-$(command -v mpiexec)}
export CONFIGS=$SRC/configs WORK=${WORK:-/tmp/twofold-cluster-bench} PYTHON=/usr/bin/python3
REPORT=${1:-$WORK/cluster_overhead.md}
case $REPORT in /*) ;; *) REPORT=$PWD/$REPORT ;; esac
source "$SRC/tests/scripts/lib.sh" # scratch dir, Open MPI as root, helpers
source "$SRC/tests/scripts/slurm_lib.sh"
T=$TWOFOLD
C=$CONFIGS/smoke.yaml
now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
json() { sed -n "s/.*\"$1\": \([-0-9.e+]*\).*/\1/p" | tail -1 | awk '{ printf "%.3f", $1 }'; }
out() { echo "$*" | tee -a "$REPORT"; }
: > "$REPORT"

out "## Cluster overhead (bench/cluster_overhead.sh)"
out ""
out "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
out "- Machine: $(nproc) cores; $(mpiexec --version | head -1); $(sinfo --version 2>/dev/null || echo slurm: installing)"
out ""

# 1. mpiexec: start-up (a run with one short member per rank), throughput and flush rounds.
START=(--set integrator.t_end=0.001 --quiet --json)
WORKLOAD=(--set ensemble.members=8000 --quiet --json)
out "### mpiexec on this machine (4 ranks on 2 cores are oversubscribed)"
out ""
out "| ranks | start-up s (run of 1 member/rank) | 8000 members s | members/s | flush rounds (0.02 s) s | cost per round ms |"
out "|---|---|---|---|---|---|"
for P in 1 2 4; do
  t0=$(now); mpirun_n "$P" "$T" run "$C" -o s$P.h5 --set ensemble.members=$P "${START[@]}" > /dev/null; t1=$(now)
  startup=$(dt "$t0" "$t1")
  t0=$(now); mpirun_n "$P" "$T" run "$C" -o w$P.h5 "${WORKLOAD[@]}" > w$P.json; t1=$(now)
  wall=$(dt "$t0" "$t1"); rate=$(json members_per_second < w$P.json)
  t0=$(now)
  mpirun_n "$P" "$T" run "$C" -o f$P.h5 "${WORKLOAD[@]}" --set output.flush_interval=0.02 > f$P.json
  t1=$(now)
  fwall=$(dt "$t0" "$t1")
  # rounds: compute seconds of the default run / 0.02 (every rank joins every round)
  per=$(awk -v a="$wall" -v b="$fwall" -v s="$startup" \
    'BEGIN { r = (a - s) / 0.02; if (r < 1) r = 1; printf "%.2f", 1000 * (b - a) / r }')
  out "| $P | $startup | $wall | ${rate%.*} | $fwall | $per |"
done
out ""

# 2. SLURM: queue latency, srun --mpi=pmix start-up on 1, 2, 4 tasks, array + merge.
slurm_start
cat > launch.sbatch <<'EOF'
#!/bin/bash
echo "start $(date +%s.%N)"
for P in 1 2 4; do
  t0=$(date +%s.%N)
  srun --mpi=pmix --overcommit -n $P "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o srun$P.h5 \
    --set ensemble.members=$P --set integrator.t_end=0.001 --quiet
  t1=$(date +%s.%N)
  echo "srun $P $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.3f", b - a }')"
  t0=$(date +%s.%N); srun --overcommit -n $P true; t1=$(date +%s.%N)
  echo "bare $P $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.3f", b - a }')"
done
# oversubscribed ranks that yield the core while they wait (mpiexec does this by itself)
t0=$(date +%s.%N)
OMPI_MCA_mpi_yield_when_idle=1 srun --mpi=pmix --overcommit -n 4 "$TWOFOLD" run \
  "$CONFIGS/smoke.yaml" -o yield4.h5 --set ensemble.members=4 --set integrator.t_end=0.001 --quiet
t1=$(date +%s.%N)
echo "yield 4 $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.3f", b - a }')"
EOF
t_submit=$(now)
id=$(sbatch --parsable --ntasks=4 --overcommit --output=launch.log launch.sbatch)
slurm_wait_job "$id" 120
t_start=$(sed -n 's/^start //p' launch.log)
out "### srun --mpi=pmix inside a SLURM job (private single-node SLURM, 2 cores)"
out ""
out "Submit to start of the batch script: $(dt "$t_submit" "$t_start") s."
out ""
out "| tasks | srun of \`true\` s | srun --mpi=pmix twofold (1 member/rank) s |"
out "|---|---|---|"
for P in 1 2 4; do
  out "| $P | $(sed -n "s/^bare $P //p" launch.log) | $(sed -n "s/^srun $P //p" launch.log) |"
done
out "| 4, OMPI_MCA_mpi_yield_when_idle=1 | | $(sed -n "s/^yield 4 //p" launch.log) |"
out ""

# an array of N tasks + merge against one job with the same members, both through the helper
ARR=(--set ensemble.members=16000 --set integrator.t_end=1)
t0=$(now)
o=$("$T" slurm "$C" --array 8 --time 10 --signal-lead 60 --dir arr -o arr.h5 "${ARR[@]}")
m=$(echo "$o" | sed -n 's/.* merge job \([0-9]*\) .*/\1/p')
slurm_wait_job "$m" 300
t1=$(now)
o=$("$T" slurm "$C" --ntasks 2 --time 10 --signal-lead 60 --dir one -o one.h5 "${ARR[@]}")
j=$(echo "$o" | sed -n 's/^submitted job \([0-9]*\) .*/\1/p')
slurm_wait_job "$j" 300
t2=$(now)
merge_s=$(grep -h '"job": "merge"' arr/logs/*merge*.log | json wall_seconds)
out "16000 smoke members (t_end 1): 8 array tasks of 1 rank + merge, submit to merged file:"
out "$(dt "$t0" "$t1") s (merge job itself: ${merge_s} s); one job of 2 ranks: $(dt "$t1" "$t2") s."
out ""
slurm_stop

# 3. Merging part files: copy (twofold merge) against HDF5 virtual datasets (h5py).
out "### Merging part files: copy against virtual datasets"
out ""
out "| members | parts | part files MB | merge: checks + copy s | + summary pass s | copy MB/s | VDS build s | read final_state: copy s | VDS s |"
out "|---|---|---|---|---|---|---|---|---|"
for spec in "1000000 4" "1000000 16"; do
  set -- $spec
  M=$1 N=$2
  files=()
  for ((k = 0; k < N; k++)); do
    "$T" run "$C" -o m$N-$k.h5 --set ensemble.members=$M --set integrator.t_end=0.001 --quiet \
      --part $k/$N
    files+=(m$N-$k.h5)
  done
  mb=$(du -cm "${files[@]}" | tail -1 | cut -f1)
  "$T" merge copy$N.h5 "${files[@]}" --json > merge$N.json
  ms=$(json wall_seconds < merge$N.json)
  cs=$(json copy_seconds < merge$N.json)
  read -r vds_build read_copy read_vds < <("$PYTHON" - "$N" copy$N.h5 "${files[@]}" <<'EOF'
import sys, time, h5py, numpy as np
n, merged, parts = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
t0 = time.perf_counter()
with h5py.File(parts[0], "r") as f:
    names = [k for k in f["members"] if f["members"][k].shape[0] == f["members/done"].shape[0]]
    shapes = {k: (f["members"][k].shape, f["members"][k].dtype) for k in names}
m = shapes["done"][0][0]
with h5py.File(f"vds{n}.h5", "w") as out:
    for k, (shape, dtype) in shapes.items():
        layout = h5py.VirtualLayout(shape=shape, dtype=dtype)
        for i, p in enumerate(parts):
            lo, hi = m * i // n, m * (i + 1) // n
            layout[lo:hi] = h5py.VirtualSource(p, "members/" + k, shape=shape)[lo:hi]
        out.create_virtual_dataset("members/" + k, layout)
build = time.perf_counter() - t0
def read(path):
    t = time.perf_counter()
    with h5py.File(path, "r") as f:
        x = f["members/final_state"][...]
    return time.perf_counter() - t, x
rc, a = read(merged)
rv, b = read(f"vds{n}.h5")
assert np.array_equal(a, b)
print(f"{build:.3f} {rc:.3f} {rv:.3f}")
EOF
  )
  out "| $M | $N | $mb | $cs | $(awk -v a="$ms" -v b="$cs" 'BEGIN { printf "%.3f", a - b }') | $(awk -v a="$mb" -v s="$cs" 'BEGIN { printf "%.0f", a / s }') | $vds_build | $read_copy | $read_vds |"
done
out ""
out "(The merge time includes the job's summary pass over the merged file, as at the end of a single run.)"
echo "report: $REPORT"

# multinode.sh — twofold on a real multi-node SLURM (netns_cluster.sh: 4 nodes in network
# namespaces, MPI over TCP between them, srun --mpi=pmix), checked against one-rank runs:
#   - an ensemble on 3 nodes x 1 rank and on 2 nodes x 2 ranks equals the 1-rank run;
#   - a job array spread over 3 nodes, merged, equals the 1-rank run;
#   - node failure: a node (slurmd, job step, rank) is SIGKILLed while the run holds at a known
#     member count (--pause-after); SLURM ends the job NODE_FAIL and requeues it, it resumes on
#     the remaining nodes and the file equals the uninterrupted run; the members lost are
#     counted and bounded by one flush round (output.buffer_mb, so the bound is in members);
#   - a hung rank (SIGSTOP) is ended by the job's time limit (state TIMEOUT), not waited on;
#   - preemption: USR1 to every rank on every node at once (scancel --signal), the job
#     checkpoints, requeues itself, resumes and equals the uninterrupted run.
# Every wait is bounded; nothing sleeps to let something happen (the runs hold at
# --pause-after until signalled).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_cluster.sh"
T="$TWOFOLD"
: "${SOURCE_DIR:?}"
export TWOFOLD=$T # for the cluster/*.sbatch templates
netns_cluster_start
M=3000
SET=(--set ensemble.members=$M --set integrator.t_end=0.5)

# wait_for FILE REGEX SECONDS: until FILE matches (a job's log line), else fail.
wait_for() {
  local t0=$SECONDS
  until grep -Eq "$2" "$1" 2>/dev/null; do
    if [ $((SECONDS - t0)) -ge "$3" ]; then
      fail "no /$2/ in $1 after ${3}s: $(tail -n 5 "$1" 2>/dev/null)"
      return 1
    fi
    sleep 0.2
  done
}
# rank_pids NODE: the twofold ranks running in NODE's namespace
rank_pids() {
  local p
  for p in $(netns_pids "$1"); do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = twofold ] && echo "$p"
  done
  return 0
}
done_count() { # FILE: members marked done (read while a killed run's lock may be stale)
  HDF5_USE_FILE_LOCKING=FALSE "$PYTHON" -c \
    "import h5py,sys; print(int(h5py.File(sys.argv[1],'r')['members/done'][...].sum()))" "$1"
}
expect_state() { # ID STATE
  local s
  s=$(slurm_job_field "$1" JobState)
  [ "$s" = "$2" ] && pass "job $1: $s" || fail "job $1 is $s, expected $2"
}

# --- the hung rank: submitted first, on its own node, ends at its 1-minute limit -------------
# Two ranks hold at --pause-after; one is stopped (SIGSTOP), the other is sent USR1 and enters
# the collective flush round, where it waits for the stopped one forever.  Only SLURM's time
# limit ends the job (slurmctld checks limits every 30 s, so 60-90 s after start).
# The templates ask for USR1 300 s before the limit (--signal=B:USR1@300), more than this job's
# minute, so SLURM would send it at once; URG, which the batch shell ignores, takes its place.
hang=$(sbatch --parsable -w tfmn4 --ntasks=2 --time=1 --signal=B:URG@10 --output=hang-%j.log \
  "$SOURCE_DIR/cluster/ensemble.sbatch" "$CONFIGS/smoke.yaml" hang.h5 "${SET[@]}" \
  --pause-after 500)

# --- reference: one rank, no SLURM ------------------------------------------------------------
"$T" run "$CONFIGS/smoke.yaml" -o ref.h5 "${SET[@]}" --quiet

# --- 3 nodes x 1 rank, 2 nodes x 2 ranks --------------------------------------------------------
# Every job below states its signal lead: the template's 300 s would reach a 5-minute job at its
# start, and a run that checkpoints there is not the run under test.
j31=$(sbatch --parsable -w "tfmn[1-3]" -N3 --ntasks=3 --ntasks-per-node=1 --time=5 --signal=B:USR1@10 --output=n3x1-%j.log \
  "$SOURCE_DIR/cluster/ensemble.sbatch" "$CONFIGS/smoke.yaml" n3x1.h5 "${SET[@]}" --json)
j22=$(sbatch --parsable -w "tfmn[1-2]" -N2 --ntasks=4 --ntasks-per-node=2 --time=5 --signal=B:USR1@10 --output=n2x2-%j.log \
  "$SOURCE_DIR/cluster/ensemble.sbatch" "$CONFIGS/smoke.yaml" n2x2.h5 "${SET[@]}" --json)
wait_for "hang-$hang.log" 'paused' 60 && {
  victim=$(rank_pids tfmn4 | sed -n 1p)
  if [ -n "$victim" ]; then
    kill -STOP "$victim"
    scancel --signal=USR1 "$hang" # the other rank stops and waits in the flush round
    pass "hang job $hang: rank pid $victim stopped on tfmn4"
  else
    fail "no twofold rank on tfmn4"
  fi
}
# 180 s: a rank lost at start-up (docs/CLUSTER.md) costs srun's 60-second wait and a relaunch
for id in $j31 $j22; do slurm_wait_job "$id" 180; expect_state "$id" COMPLETED; done
same_members ref.h5 n3x1.h5
same_members ref.h5 n2x2.h5
grep -q '"ranks": 3' n3x1-*.log && grep -q '"ranks": 4' n2x2-*.log &&
  pass "3 and 4 ranks reported" || fail "rank counts: $(grep -h '"ranks"' n*-*.log | cut -c1-120)"
[ "$(slurm_job_field "$j31" NodeList)" = "tfmn[1-3]" ] && [ "$(slurm_job_field "$j22" NodeList)" = "tfmn[1-2]" ] &&
  pass "jobs ran on tfmn[1-3] and tfmn[1-2]" || fail "node lists: $(slurm_job_field "$j31" NodeList) $(slurm_job_field "$j22" NodeList)"

# --- a job array over the nodes, merged -----------------------------------------------------------
arr=$(sbatch --parsable --array=0-2 -x tfmn4 --exclusive --ntasks=1 --time=5 --signal=B:USR1@10 \
  --output=array-%A_%a.log "$SOURCE_DIR/cluster/array.sbatch" 3 "$CONFIGS/smoke.yaml" array.h5 "${SET[@]}")
slurm_wait_job "$arr" 120
nodes=""
for k in 0 1 2; do
  expect_state "${arr}_$k" COMPLETED
  nodes+="$(scontrol -o show job "${arr}_$k" | tr ' ' '\n' | sed -n 's/^NodeList=//p') "
done
[ "$(echo $nodes | tr ' ' '\n' | sort -u | wc -l)" = 3 ] && pass "array tasks ran on $nodes" ||
  fail "array tasks not spread over 3 nodes: $nodes"
"$T" merge array.h5 array.parts/part-{0,1,2}-of-3.h5 --quiet && same_members ref.h5 array.h5 || fail "merge of the array failed"

# --- node failure ------------------------------------------------------------------------------
# 3 ranks on tfmn1-3 (2-3 nodes allowed, spread), flushing whenever a rank holds 0.05 MiB of
# rows; at 1500 members tfmn3 is killed whole.  SLURM declares it DOWN (SlurmdTimeout=10),
# ends the job NODE_FAIL and requeues it (--requeue); it restarts on tfmn1-2 with --resume.
BUF=0.05
nf=$(sbatch --parsable -N2-3 --ntasks=3 --spread-job -x tfmn4 --time=5 --signal=B:USR1@10 \
  --output=nodefail-%j.log "$SOURCE_DIR/cluster/requeue.sbatch" "$CONFIGS/smoke.yaml" \
  nodefail.h5 "${SET[@]}" --set output.flush_interval=600 --set output.buffer_mb=$BUF --set ensemble.chunk=10 \
  --pause-after 1500 --json)
if wait_for "nodefail-$nf.log" 'paused' 90; then
  [ "$(slurm_job_field "$nf" NodeList)" = "tfmn[1-3]" ] || fail "node-failure job on $(slurm_job_field "$nf" NodeList)"
  before=$(done_count nodefail.h5)
  ranks_before=$(rank_pids tfmn3 | wc -l)
  netns_kill_node tfmn3
  pass "killed tfmn3 (slurmd, step, $ranks_before rank) at 1500 members; $before flushed before"
  t0=$SECONDS
  until [ "$(slurm_job_field "$nf" Restarts)" -ge 1 ] 2>/dev/null; do
    [ $((SECONDS - t0)) -lt 90 ] || { fail "job $nf not requeued after the node failure"; break; }
    sleep 0.5
  done
  sinfo -h -n tfmn3 -o %T | grep -q down && pass "tfmn3 is down" || fail "tfmn3: $(sinfo -h -n tfmn3 -o %T)"
  # the requeued run holds at 1500 again if fewer were flushed before the kill: checkpoint it
  # once more (the next restart starts past 1500 and goes on)
  t0=$SECONDS
  while [ -n "$(squeue -h -j "$nf" -o %i)" ] && [ $((SECONDS - t0)) -lt 90 ]; do
    if [ "$(grep -c paused "nodefail-$nf.log")" -ge 2 ]; then
      scancel --signal=USR1 "$nf"
      break
    fi
    sleep 0.2
  done
  slurm_wait_job "$nf" 150
  expect_state "$nf" COMPLETED
  log=$(cat "nodefail-$nf.log")
  grep -q 'DUE TO NODE FAILURE' <<<"$log" && pass "the log says the job step ended by node failure" ||
    fail "no node failure in the log"
  [ "$(slurm_job_field "$nf" NodeList)" = "tfmn[1-2]" ] && pass "resumed on the remaining tfmn[1-2]" ||
    fail "resumed on $(slurm_job_field "$nf" NodeList)"
  same_members ref.h5 nodefail.h5
  # lost: computed before the kill but not in the file, which the requeued run found as the
  # kill left it.  A rank claims a chunk (10 members) only while fewer than 1500 are done, so
  # at most 1500 - 1 + 3 * 10 were computed.  Each rank holds at most BUF MiB of rows before
  # it makes everyone flush, a row being at least its id, status and the four smoke columns
  # (8 + 1 + 3*8 + 3*8 + 8 + 8 bytes): the bound of one flush round on every rank.
  resumed=$(grep -o '"resumed_from": [1-9][0-9]*' <<<"$log" | head -n 1 | grep -o '[0-9]*$' || true)
  bound=$(awk -v b=$BUF 'BEGIN{printf "%d", 3 * b * 1048576 / 73}')
  lost=$((1529 - before))
  echo "node failure: $before members in the file at the kill, the requeued run resumed from" \
    "${resumed:-?}; lost at most $lost of the 1500-1529 computed (bound: 3 ranks x one buffer = $bound)"
  [ "${resumed:-}" = "$before" ] && pass "the requeued run resumed from the $before members flushed before the kill" ||
    fail "resumed from ${resumed:-?}, but $before were in the file at the kill"
  [ "$lost" -ge 0 ] && [ "$lost" -le "$bound" ] &&
    pass "members lost by the node failure: at most $lost <= $bound (one flush round per rank)" ||
    fail "lost up to $lost members (bound $bound)"
fi
netns_node_start tfmn3
_slurm_wait_idle 60 tfmn3 && pass "tfmn3 back in service"

# --- preemption: USR1 to every rank on every node at once --------------------------------------
pre=$(sbatch --parsable -w "tfmn[1-3]" -N3 --ntasks=3 --ntasks-per-node=1 --time=5 --signal=B:USR1@10 \
  --output=preempt-%j.log "$SOURCE_DIR/cluster/requeue.sbatch" "$CONFIGS/smoke.yaml" \
  preempt.h5 "${SET[@]}" --pause-after 1000)
if wait_for "preempt-$pre.log" 'paused' 90; then
  scancel --signal=USR1 "$pre"
  slurm_wait_job "$pre" 120
  expect_state "$pre" COMPLETED
  log=$(cat "preempt-$pre.log")
  grep -q 'engine exit status 3 (job [0-9]*, restart 0)' <<<"$log" &&
    grep -q 'engine exit status 0 (job [0-9]*, restart 1)' <<<"$log" &&
    pass "preempted job checkpointed (status 3), requeued itself, resumed and finished" ||
    fail "preemption log: $log"
  same_members ref.h5 preempt.h5
fi

# --- the hung job's end ----------------------------------------------------------------------------
slurm_wait_job "$hang" 150
expect_state "$hang" TIMEOUT
grep -q 'DUE TO TIME LIMIT' "hang-$hang.log" && pass "the hung job's log says it hit its time limit" ||
  fail "hang log: $(cat "hang-$hang.log")"
echo "multinode: ${SECONDS} s in all"
finish

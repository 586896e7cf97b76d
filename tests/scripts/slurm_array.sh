# slurm_array.sh — a job array on a real (private, single-node) SLURM: `twofold slurm --array`
# submits N tasks writing part files and a merge job after them; the merged file holds the
# same data as one uninterrupted run, for the smoke ensemble (srun --mpi=pmix, 1 rank per
# task) and for the wheel's Fig. 5 Monte-Carlo (mpiexec, 1 rank per task, with event logs
# and trajectories).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
T="$TWOFOLD"
: "${SOURCE_DIR:?}"
slurm_start

SMOKE=(--set ensemble.members=3000 --set integrator.t_end=1)
WHEEL=(--set ensemble.members=24 --set integrator.t_end=60 --set output.trajectory_samples=50)

# submit CONFIG ARGS...: submits through the helper; sets ARRAY_ID and MERGE_ID.
submit() {
  local out
  out=$("$T" slurm "$@") || { fail "twofold slurm $*: $out"; return 1; }
  echo "$out"
  ARRAY_ID=$(echo "$out" | sed -n 's/^submitted array job \([0-9]*\) .*/\1/p')
  MERGE_ID=$(echo "$out" | sed -n 's/.* merge job \([0-9]*\) .*/\1/p')
  [ -n "$ARRAY_ID" ] && [ -n "$MERGE_ID" ] || fail "no job ids in: $out"
}

# The dry run prints both scripts and submits nothing.
"$T" slurm "$CONFIGS/smoke.yaml" --array 3 --time 5 --signal-lead 60 -o dry.h5 --dry-run \
  "${SMOKE[@]}" > dry.txt
grep -q '^#SBATCH --array=0-2$' dry.txt && grep -q -- '--part "$K/$N"' dry.txt &&
  grep -q '^#SBATCH --signal=B:USR1@60$' dry.txt && grep -q 'twofold merge\|"$TWOFOLD" merge' dry.txt &&
  grep -q 'sbatch --dependency=afterany:' dry.txt && pass "dry run prints the array and merge scripts" ||
  fail "dry run output: $(cat dry.txt)"
[ -z "$(squeue -h)" ] && pass "dry run submitted nothing" || fail "dry run submitted: $(squeue -h)"
[ ! -e slurm-smoke ] && [ ! -e dry.logs ] && pass "dry run wrote nothing" || fail "dry run wrote $(ls -d slurm-smoke dry.logs)"
# logs next to the output; the merge job's own limit, not the array's 5 minutes
grep -q "^#SBATCH --output=$PWD/dry.logs/smoke-task-%A_%a.log$" dry.txt &&
  grep -q "^#SBATCH --output=$PWD/dry.logs/smoke-merge-%j.log$" dry.txt &&
  [ "$(grep -c '^#SBATCH --time=00:30:00$' dry.txt)" = 1 ] && [ "$(grep -c '^#SBATCH --time=5$' dry.txt)" = 1 ] &&
  pass "dry run: logs in dry.logs/, merge --time 00:30:00, array --time 5" ||
  fail "dry run logs/time: $(grep -e '--output' -e '--time' dry.txt)"

submit "$CONFIGS/smoke.yaml" --array 3 --ntasks 1 --time 5 --signal-lead 60 -o smoke.h5 \
  "${SMOKE[@]}"
submit_smoke=($ARRAY_ID $MERGE_ID)
submit "$CONFIGS/wheel-fig5.yaml" --array 3 --ntasks 1 --launcher mpiexec --time 5 \
  --signal-lead 60 --dir slurm-wheel -o wheel.h5 "${WHEEL[@]}"
submit_wheel=($ARRAY_ID $MERGE_ID)

# the single-job template, srun with 2 ranks (its own signal lead: the template's 300 s is the
# whole of a 5-minute job, and SLURM would send the warning at the start)
single=$(sbatch --parsable --ntasks=2 --time=5 --signal=B:USR1@10 --output=single-%j.log \
  "$SOURCE_DIR/cluster/ensemble.sbatch" "$CONFIGS/smoke.yaml" single.h5 "${SMOKE[@]}")

# A rank killed by a signal at start-up: the launcher ends >128 and the template launches again
# from the file.  The stand-in for such a crash is a wrapper that kills itself with SIGSEGV the
# first time it runs (a marker directory makes it once only) and runs the engine after that.
# With 2 ranks the other one starts and waits in MPI_Init for the dead one until srun ends it
# (--wait, TWOFOLD_SRUN_WAIT seconds after the first rank ended).
cat > crash-once.sh <<CRASH
#!/bin/bash
mkdir "\$CRASH_MARKER" 2>/dev/null && kill -SEGV \$\$
exec "$T" "\$@"
CRASH
chmod +x crash-once.sh
relaunch=$(CRASH_MARKER=$PWD/crashed-1 TWOFOLD=$PWD/crash-once.sh TWOFOLD_SRUN_WAIT=5 \
  sbatch --parsable --ntasks=2 \
  --time=5 --signal=B:USR1@10 --output=relaunch-%j.log "$SOURCE_DIR/cluster/ensemble.sbatch" \
  "$CONFIGS/smoke.yaml" relaunch.h5 "${SMOKE[@]}")
# The checkpoint signal reaching a rank before its handler exists (while its libraries load):
# a wrapper that asks SLURM to signal the batch shell and waits for the USR1 passed on to it.
cat > signal-at-start.sh <<SIGNAL
#!/bin/bash
if mkdir "\$CRASH_MARKER" 2>/dev/null; then
  scancel --batch --signal=USR1 "\$SLURM_JOB_ID"
  # the rank becomes the sleep: the USR1 passed on kills it whichever process it reaches first
  # (a shell waiting for a child sleep could see only the child die and go on)
  exec sleep 60
fi
exec "$T" "\$@"
SIGNAL
chmod +x signal-at-start.sh
early=$(CRASH_MARKER=$PWD/crashed-3 TWOFOLD=$PWD/signal-at-start.sh sbatch --parsable --ntasks=1 \
  --time=5 --signal=B:USR1@10 --output=early-%j.log "$SOURCE_DIR/cluster/ensemble.sbatch" \
  "$CONFIGS/smoke.yaml" early.h5 "${SMOKE[@]}")
norelaunch=$(CRASH_MARKER=$PWD/crashed-2 TWOFOLD=$PWD/crash-once.sh TWOFOLD_RELAUNCHES=0 \
  sbatch --parsable --ntasks=1 --time=5 --signal=B:USR1@10 --output=norelaunch-%j.log \
  "$SOURCE_DIR/cluster/ensemble.sbatch" "$CONFIGS/smoke.yaml" norelaunch.h5 "${SMOKE[@]}")

# The references: one uninterrupted run each, computed here while the jobs run.
"$T" run "$CONFIGS/smoke.yaml" -o smoke-ref.h5 "${SMOKE[@]}" --quiet
mpirun_n 2 "$T" run "$CONFIGS/wheel-fig5.yaml" -o wheel-ref.h5 "${WHEEL[@]}" --quiet

for pair in "${submit_smoke[*]}" "${submit_wheel[*]}"; do
  set -- $pair
  slurm_wait_job "$2" 120
  for id in "$1" "$2"; do
    state=$(slurm_job_field "$id" JobState)
    [ "$state" = COMPLETED ] && pass "job $id completed" ||
      { fail "job $id: $state"; cat ./*.logs/* >&2 || true; }
  done
done
slurm_wait_job "$single" 120
[ "$(slurm_job_field "$single" JobState)" = COMPLETED ] && pass "cluster/ensemble.sbatch job completed" ||
  fail "cluster/ensemble.sbatch: $(cat single-*.log)"
same_members smoke-ref.h5 single.h5
slurm_wait_job "$relaunch" 120
log=$(cat relaunch-*.log)
[ "$(slurm_job_field "$relaunch" JobState)" = COMPLETED ] &&
  grep -q "launcher ended with status 139 (a rank died by signal 11); launching again from 'relaunch.h5' (1 more allowed)" <<<"$log" &&
  [ "$(grep -c 'launching again' <<<"$log")" = 1 ] &&
  pass "a rank killed at start-up (SIGSEGV): the template launched once more and finished" ||
  fail "relaunch job $relaunch: $(slurm_job_field "$relaunch" JobState); log: $log"
same_members smoke-ref.h5 relaunch.h5
slurm_wait_job "$early" 120
log=$(cat early-*.log)
grep -q 'USR1 at .*asking the engine to checkpoint' <<<"$log" &&
  grep -q 'killed by the checkpoint signal before the engine had started; nothing was lost: status 3' <<<"$log" &&
  ! grep -q 'launching again' <<<"$log" && [ "$(slurm_job_field "$early" ExitCode)" = 3:0 ] &&
  pass "a checkpoint signal that kills a rank before its handler exists ends the job as checkpointed (status 3)" ||
  fail "early-signal job $early: exit $(slurm_job_field "$early" ExitCode); log: $log"
slurm_wait_job "$norelaunch" 120
log=$(cat norelaunch-*.log)
[ "$(slurm_job_field "$norelaunch" JobState)" = FAILED ] && ! grep -q 'launching again' <<<"$log" &&
  grep -q 'engine exit status 139' <<<"$log" && [ ! -e norelaunch.h5 ] &&
  pass "TWOFOLD_RELAUNCHES=0: the crash ends the job (FAILED, status 139, no file)" ||
  fail "norelaunch job $norelaunch: $(slurm_job_field "$norelaunch" JobState); log: $log"
# every array task ran, and as an array task of its own block
for k in 0 1 2; do
  [ -s "smoke.parts/part-$k-of-3.h5" ] || fail "missing smoke.parts/part-$k-of-3.h5"
  [ -s "wheel.parts/part-$k-of-3.h5" ] || fail "missing wheel.parts/part-$k-of-3.h5"
done

# Same data as the uninterrupted runs: every dataset, compared by an independent reader.
if ! "$PYTHON" - smoke.h5 smoke-ref.h5 wheel.h5 wheel-ref.h5 <<'EOF'
import sys, h5py, numpy as np
def datasets(f):
    out = {}
    f.visititems(lambda n, o: out.__setitem__(n, o[...]) if isinstance(o, h5py.Dataset) else None)
    return out
bad = 0
for merged, ref in zip(sys.argv[1::2], sys.argv[2::2]):
    with h5py.File(merged, "r") as a, h5py.File(ref, "r") as b:
        da, db = datasets(a), datasets(b)
        if sorted(da) != sorted(db):
            print(f"FAIL: {merged} datasets {sorted(set(da) ^ set(db))} differ"); bad += 1; continue
        for name in da:
            x, y = da[name], db[name]
            same = x.dtype == y.dtype and x.shape == y.shape and (
                np.array_equal(x, y, equal_nan=True) if x.dtype.kind == "f" else np.array_equal(x, y))
            if not same:
                print(f"FAIL: {merged}:/{name} differs from {ref}"); bad += 1
        assert a.attrs["complete"] == 1 and "part" not in a.attrs
        n = int(a["members/done"][...].sum())
        assert n == len(a["members/done"]), f"{merged}: {n} members done"
        print(f"ok: {merged}: {len(da)} datasets identical to {ref} ({n} members, "
              f"merged from {len(list(a.attrs['merged_from']))} parts)")
sys.exit(1 if bad else 0)
EOF
then
  fail "merged files differ from uninterrupted runs"
fi
# the merge job's log holds its JSON line
grep -h '"job": "merge"' smoke.logs/smoke-merge-*.log | grep -q '"status": "complete"' &&
  pass "merge job log (next to the output) has the JSON summary" || fail "merge log: $(cat smoke.logs/smoke-merge-*.log)"
# a module name that would inject shell code, submitted to the real SLURM: the job runs
# `module load` with it as one word (no module command here: "not found"), and nothing else
out=$("$T" slurm "$CONFIGS/smoke.yaml" --module 'true; touch INJECTED' --dir hostile --time 10 \
  -o hostile.h5 --set ensemble.members=10 --set integrator.t_end=0.1) || fail "hostile submit: $out"
hid=$(echo "$out" | sed -n 's/^submitted job \([0-9]*\) .*/\1/p')
[ -n "$hid" ] && slurm_wait_job "$hid" 120
hlog=$(cat hostile.logs/*.log 2>/dev/null || true)
[ ! -e INJECTED ] && [ ! -e hostile/INJECTED ] && grep -q "module" <<<"$hlog" &&
  pass "a hostile module name submitted to SLURM ran as one word, nothing injected" ||
  fail "hostile module: $(ls) $hlog"
finish

# resume.sh — interrupted runs resume to the same data as an uninterrupted run, whatever
# the ranks before and after, by each of the ways a run gets stopped:
#   --time-limit; SIGUSR1 sent to mpiexec (Open MPI forwards it to the ranks); SIGTERM sent
#   to the ranks themselves (what SLURM does); Ctrl-C or SIGTERM to `twofold mpirun`.
# No step races the clock: each run stands still after 300 members (--pause-after) until its
# signal or time limit arrives, so it is interrupted on any machine, fast or slow.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"
SET=(--set ensemble.members=20000 --set integrator.t_end=1 --set output.flush_interval=0.2 --quiet)
mpirun_n 2 "$T" run "$CONFIGS/smoke.yaml" -o ref.h5 "${SET[@]}"

done_count() { "$PYTHON" -c "import h5py,sys; print(int(h5py.File(sys.argv[1],'r')['members/done'][...].sum()))" "$1"; }
check_partial() {
  local f=$1 least=${2:-300} n
  n=$(done_count "$f")
  if [ "$n" -ge "$least" ] && [ "$n" -lt 20000 ]; then pass "$f checkpointed with $n/20000 members done"
  else fail "$f has $n done members after the interruption (expected partial)"; fi
  "$T" info "$f" | grep -q "complete: no" || fail "$f not marked incomplete"
}

# 1. wall-time budget, 1 rank -> resume on 2 ranks
rc=0; "$T" run "$CONFIGS/smoke.yaml" -o tl.h5 "${SET[@]}" --time-limit 0.5 --pause-after 300 || rc=$?
[ "$rc" = 3 ] && pass "time limit exits 3" || fail "time limit exit status $rc"
check_partial tl.h5 0 # a machine slower than 300 members in 0.5 s stops before the pause
mpirun_n 2 "$T" run "$CONFIGS/smoke.yaml" -o tl.h5 "${SET[@]}" --resume
same_members ref.h5 tl.h5

# 2. SIGUSR1 to mpiexec, 2 ranks -> resume on 3 ranks
# the run says "paused" on stderr once it stands still (bounded wait: CTest's timeout)
# a hang guard, not a timing: a run that never pauses fails the test (then the signal frees it)
wait_paused() {
  for _ in $(seq 12000); do grep -q paused "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "$1: the run never said 'paused' in 600 s"
}
"$MPIEXEC" -n 2 "$T" run "$CONFIGS/smoke.yaml" -o usr1.h5 "${SET[@]}" --pause-after 300 2>usr1.err & pid=$!
wait_paused usr1.err
kill -USR1 "$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" = 3 ] && pass "SIGUSR1 via mpiexec exits 3" || fail "SIGUSR1 exit status $rc"
check_partial usr1.h5
mpirun_n 3 "$T" run "$CONFIGS/smoke.yaml" -o usr1.h5 "${SET[@]}" --resume
same_members ref.h5 usr1.h5

# 3. SIGTERM to the ranks (not to mpiexec), 2 ranks -> resume on 1 rank
"$MPIEXEC" -n 2 "$T" run "$CONFIGS/smoke.yaml" -o term.h5 "${SET[@]}" --pause-after 300 2>term.err & pid=$!
wait_paused term.err
# this mpiexec's own ranks (its children): a pattern over all processes would also signal the
# ranks of another suite running the same test on this machine
ranks=$(pgrep -P "$pid" -f "twofold run" || true)
[ -n "$ranks" ] || fail "no rank processes found"
kill -TERM $ranks
rc=0; wait "$pid" || rc=$?
[ "$rc" = 3 ] && pass "SIGTERM to ranks exits 3" || fail "SIGTERM exit status $rc"
check_partial term.h5
"$T" run "$CONFIGS/smoke.yaml" -o term.h5 "${SET[@]}" --resume
same_members ref.h5 term.h5

# 4. Ctrl-C (SIGINT) and SIGTERM to `twofold mpirun`, 2 ranks -> exit 3 with the message;
#    the first resumed on 2 ranks (plain mpiexec kills the job on either and exits 1: src/app/launcher.h)
for sig in INT TERM; do
  "$T" mpirun -n 2 -- run "$CONFIGS/smoke.yaml" -o launcher_$sig.h5 "${SET[@]}" --pause-after 300 2>launcher_$sig.err & pid=$!
  wait_paused launcher_$sig.err
  kill -$sig "$pid"
  rc=0; wait "$pid" || rc=$?
  [ "$rc" = 3 ] && pass "SIG$sig to twofold mpirun exits 3" || fail "SIG$sig to twofold mpirun: exit status $rc"
  grep -q "interrupted: the ranks checkpoint" launcher_$sig.err && pass "the launcher says what it does" ||
    fail "no launcher message: $(cat launcher_$sig.err)"
  check_partial launcher_$sig.h5
done
"$T" mpirun -n 2 -- run "$CONFIGS/smoke.yaml" -o launcher_INT.h5 "${SET[@]}" --resume
same_members ref.h5 launcher_INT.h5
expect_fail 2 "usage: twofold mpirun" -- "$T" mpirun -n 2 run x.yaml
# more ranks than cores, and as root when the suite runs as root, with none of Open MPI's
# permissions in the environment: the launcher gives them (bare mpiexec refuses both)
over=$(($(nproc) + 1))
env -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM -u OMPI_MCA_rmaps_base_oversubscribe \
  "$T" mpirun -n $over -- run "$CONFIGS/smoke.yaml" -o over.h5 "${SET[@]}" --quiet 2>over.err ||
  fail "twofold mpirun -n $over (cores: $(nproc), uid $(id -u)): $(cat over.err)"
same_members ref.h5 over.h5

# resuming a complete file changes nothing
"$T" run "$CONFIGS/smoke.yaml" -o ref.h5 "${SET[@]}" --resume --json > again.json
grep -q '"computed": 0' again.json && pass "resume of a complete file computes nothing" \
  || fail "resume of complete file: $(cat again.json)"
# --resume with no file starts afresh (same command before and after a requeue)
"$T" run "$CONFIGS/smoke.yaml" -o fresh.h5 --set ensemble.members=10 --set integrator.t_end=0.1 --quiet --resume \
  && pass "--resume without a file starts afresh" || fail "--resume without a file"
finish

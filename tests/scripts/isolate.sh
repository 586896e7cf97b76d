# isolate.sh — a model that crashes is contained by --isolate (its member ends 'crashed', the
# others finish bit for bit as without it, on one rank or two, stopped and resumed), and
# named with its time and state without it.  Shared setup: isolate_lib.sh.
source "$(dirname "$0")/isolate_lib.sh"
# (a) a segfault ends its member 'crashed'; the others finish
rc=0
"$T" run SEGV.yaml -o SEGV.h5 --quiet --isolate >out.txt 2>err.txt || rc=$?
[ "$rc" = 0 ] && pass "SEGV --isolate: exit 0" || fail "SEGV --isolate: exit $rc: $(head -c 400 err.txt)"
segv_why="the model's process died of signal 11: SIGSEGV (invalid memory access) inside the member's computation at t = 0, state [{x}] (the last step reached)"
compare SEGV.h5 none.h5 crashed "$segv_why"
for m in $bad_members; do
  grep -q "rank 0, member $m: the model's process died of signal 11" err.txt ||
    fail "SEGV --isolate: member $m not said to be crashed: $(head -c 400 err.txt)"
done
"$T" info SEGV.h5 | grep -qF "member $first, crashed: the model's process died of signal 11: SIGSEGV" &&
  pass "info names why member $first crashed" || fail "info: no reason for member $first: $("$T" info SEGV.h5 | head -c 600)"
# run in two parts and merged, the reasons travel with their rows
"$T" run SEGV.yaml -o part0.h5 --quiet --isolate --part 0/2 2>/dev/null &&
  "$T" run SEGV.yaml -o part1.h5 --quiet --isolate --part 1/2 2>/dev/null &&
  "$T" merge part0.h5 part1.h5 -o merged.h5 >/dev/null || fail "--isolate --part 0/2, 1/2 and merge"
same_members SEGV.h5 merged.h5
# on two ranks (each with its own worker) the file is the same
mpirun_n 2 "$T" run SEGV.yaml -o SEGV2.h5 --quiet --isolate 2>/dev/null || fail "2 ranks --isolate"
same_members SEGV.h5 SEGV2.h5

# a crashed member is done: stopped and resumed, the file is the one of a straight run
rc=0
"$T" run SEGV.yaml -o SEGVr.h5 --quiet --isolate --stop-after 60 2>/dev/null || rc=$?
[ "$rc" = 3 ] || fail "--stop-after 60: exit $rc, expected 3"
"$T" run SEGV.yaml -o SEGVr.h5 --quiet --isolate --resume 2>/dev/null || fail "--isolate --resume"
same_members SEGV.h5 SEGVr.h5
# resumed without --isolate, no crashed member runs again: nothing left to do, no crash
"$T" run SEGV.yaml -o SEGV.h5 --quiet --resume 2>err.txt && ! grep -q SIGSEGV err.txt &&
  pass "the complete isolated file resumed without --isolate: nothing runs again" ||
  fail "resume without --isolate: $(head -c 300 err.txt)"
# ... and its summary still counts the crashed members (the file's statuses, not the run's)
counted=$("$PYTHON" -c "import h5py; print(h5py.File('SEGV.h5','r')['summary/status_counts'][9])")
[ "$counted" = "$(echo $bad_members | wc -w)" ] && pass "resumed without --isolate: /summary counts $counted crashed" ||
  fail "resumed without --isolate: /summary/status_counts[crashed] = $counted, expected $(echo $bad_members | wc -w)"
# a file begun without isolation cannot record a crash: resuming it isolated is refused
expect_fail 2 "cannot resume 'none30.h5' with --isolate: the run that started it was not isolated" -- \
  "$T" run none.yaml -o none30.h5 --quiet --isolate --resume --set ensemble.members=30

expect_fail 2 "integrator 'petsc-ts/rosw' calls MPI inside a member" -- \
  "$T" run none.yaml -o ts.h5 --quiet --isolate --set integrator.method=petsc-ts
expect_fail 2 "--isolate \(run.isolate\): job 'trajectory' is one computation" -- \
  "$T" run none.yaml -o traj.h5 --quiet --isolate --set job=trajectory

# (d) without --isolate: the model, the member, t and the state at the crash are named; the
# numbers are the crash condition's (t = 0, the member's initial state), written by Python
rc=0
"$T" run SEGV.yaml -o SEGVd.h5 --quiet >out.txt 2>err.txt || rc=$?
want=$("$PYTHON" -c "import h5py; x=h5py.File('none.h5','r')['members/initial_state'][...].reshape(200, -1); print('member $first of model \'crashing.c\': SIGSEGV (invalid memory access) inside the member\'s computation at t = %.17g, state [%.17g]' % (0.0, x[$first, 0]))")
[ "$rc" = 139 ] && grep -qF "$want" err.txt && pass "no --isolate: exit 139, $want" ||
  fail "no --isolate: exit $rc, expected 139 and '$want': $(head -c 500 err.txt)"
finish

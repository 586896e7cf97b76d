# isolate.sh — a model that crashes, calls exit() or never returns is contained by --isolate,
# and named with its time and state without it.
# tests/plugins/crashing.c misbehaves once x > 1.5, in the way its parameter `way` says; its
# members start at 1 + 0.3 N(0,1) and decay, so exactly the members whose initial state
# exceeds 1.5 misbehave, at their first model call: t = 0 and the initial state.  Which
# members those are is read from a run of the same ensemble with way 0 (harmless), whose rows
# the isolated runs must reproduce bit for bit for every other member.  The endless loop is
# stopped by run.member_time_limit (1 s): a member that returns takes microseconds, so which
# members time out does not depend on the machine's speed.
source "$(dirname "$0")/lib.sh"
T=$TWOFOLD
export TWOFOLD_CACHE=$WORK/cache
mkdir -m 700 "$TWOFOLD_CACHE"
cp "$SOURCE_DIR/tests/plugins/crashing.c" .
config() { # NAME WAY MEMBERS [EXTRA YAML]
  cat >"$1.yaml" <<CFG
job: ensemble
model:
  source: crashing.c
  params: {way: $2}
initial:
  state: [1.0]
  spread: 0.3
integrator:
  t_end: 1.0
ensemble:
  members: $3
  seed: 3
${4:-}
CFG
}
config none 0 200
config SEGV 1 200
config EXIT 4 200 "run:
  isolate: true"
config LOOP 3 30 "run:
  member_time_limit: 1"
"$T" run none.yaml -o none.h5 --quiet
"$T" run none.yaml -o none30.h5 --quiet --set ensemble.members=30

# compare.py RESULT REFERENCE STATUS: members starting above 1.5 have STATUS and NaN rows, all
# others the reference's rows bit for bit
cat >compare.py <<'PY'
import sys
import h5py
import numpy as np
sys.path.insert(0, sys.argv[4])
from twofold.results import STATUS_NAMES
got, ref = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
n = ref["members/status"].shape[0]
bad = ref["members/initial_state"][...].reshape(n, -1)[:, 0] > 1.5
status = got["members/status"][...]
want = STATUS_NAMES.index(sys.argv[3])
problems = []
if not bad.any() or bad.all():
    problems.append(f"{bad.sum()} of {n} members start above 1.5: no test")
if list(np.nonzero(status == want)[0]) != list(np.nonzero(bad)[0]):
    problems.append(f"{sys.argv[3]}: {np.nonzero(status == want)[0]}, expected {np.nonzero(bad)[0]}")
for name in ref["members"]:
    a, b = ref["members"][name][...], got["members"][name][...]
    if name in ("status", "checksum"):
        same = np.array_equal(a[~bad], b[~bad])
    else:
        same = a[~bad].tobytes() == b[~bad].tobytes()
        if b.dtype.kind == "f" and name != "done" and not np.isnan(b[bad]).all():
            problems.append(f"{name}: the {sys.argv[3]} rows are not NaN")
    if not same:
        problems.append(f"/members/{name} differs from the run without the misbehaving members")
print("; ".join(problems) if problems else f"{bad.sum()} of {n} members {sys.argv[3]}, "
      f"the other {n - bad.sum()} bitwise equal to the plain run")
sys.exit(1 if problems else 0)
PY
compare() { # RESULT REFERENCE STATUS
  local said
  if said=$("$PYTHON" compare.py "$1" "$2" "$3" "$SOURCE_DIR/python"); then pass "$1: $said"; else fail "$1: $said"; fi
}
bad_members=$("$PYTHON" -c "import h5py; x=h5py.File('none.h5','r')['members/initial_state'][...].reshape(200, -1)[:, 0]; print(' '.join(str(i) for i in (x > 1.5).nonzero()[0]))")

# (a) a segfault ends its member 'crashed'; the others finish
rc=0
"$T" run SEGV.yaml -o SEGV.h5 --quiet --isolate >out.txt 2>err.txt || rc=$?
[ "$rc" = 0 ] && pass "SEGV --isolate: exit 0" || fail "SEGV --isolate: exit $rc: $(head -c 400 err.txt)"
compare SEGV.h5 none.h5 crashed
for m in $bad_members; do
  grep -q "rank 0, member $m: the model's process died of signal 11" err.txt ||
    fail "SEGV --isolate: member $m not said to be crashed: $(head -c 400 err.txt)"
done
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
# a file begun without isolation cannot record a crash: resuming it isolated is refused
expect_fail 2 "cannot resume 'none30.h5' with --isolate: the run that started it was not isolated" -- \
  "$T" run none.yaml -o none30.h5 --quiet --isolate --resume --set ensemble.members=30

# (b) exit() in the model (isolated by run.isolate: true in EXIT.yaml)
rc=0
"$T" run EXIT.yaml -o EXIT.h5 --quiet >out.txt 2>err.txt || rc=$?
[ "$rc" = 0 ] && pass "EXIT --isolate: exit 0" || fail "EXIT --isolate: exit $rc: $(head -c 400 err.txt)"
compare EXIT.h5 none.h5 crashed
first=${bad_members%% *}
grep -q "rank 0, member $first: the model called exit(7); recorded as crashed" err.txt &&
  pass "EXIT: $(grep -o "member $first: the model called exit(7)[^;]*" err.txt)" ||
  fail "EXIT: not said: $(head -c 400 err.txt)"

# (c) an endless loop: timeout after run.member_time_limit, the others finish
rc=0
timeout 120 "$T" run LOOP.yaml -o LOOP.h5 --quiet --isolate >out.txt 2>err.txt || rc=$?
[ "$rc" = 0 ] && pass "LOOP --isolate: exit 0" || fail "LOOP --isolate: exit $rc: $(head -c 400 err.txt)"
compare LOOP.h5 none30.h5 timeout
grep -q "member $first: ran longer than run.member_time_limit (1 s) and was stopped; recorded as timeout" err.txt ||
  fail "LOOP: timeout not said: $(head -c 400 err.txt)"
expect_fail 2 "LOOP.yaml:[0-9]+: run.member_time_limit needs isolated members" -- \
  "$T" run LOOP.yaml -o LOOP2.h5 --quiet
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

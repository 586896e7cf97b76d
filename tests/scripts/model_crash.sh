# model_crash.sh — a model that crashes or never returns is named, and the time limit holds.
# tests/plugins/crashing.c fails once x > 1.5 (a segfault, an abort, an endless loop); the
# members start at 1 + 0.3 N(0,1), so on one rank the first member whose initial state exceeds
# 1.5 — read from a run of the same ensemble with the harmless model — is the one named.
# The endless loop must end at --time-limit plus its grace (5 s) with status 3; the bound
# below (120 s) only catches a hang.
source "$(dirname "$0")/lib.sh"
T=$TWOFOLD
export TWOFOLD_CACHE=$WORK/cache
P="$SOURCE_DIR/tests/plugins/crashing.c"
for way in none SEGV ABORT LOOP; do
  { [ "$way" = none ] || echo "#define $way"; cat "$P"; } >"$way.c"
  cat >"$way.yaml" <<CFG
job: ensemble
model:
  source: $way.c
initial:
  state: [1.0]
  spread: 0.3
integrator:
  t_end: 1.0
ensemble:
  members: 200
  seed: 3
CFG
done
"$T" run none.yaml -o none.h5 --quiet
first=$("$PYTHON" -c "import h5py,numpy as np; x=h5py.File('none.h5','r')['members/initial_state'][...].reshape(200, -1)[:, 0]; print(int(np.argmax(x > 1.5)))")
[ "$first" -gt 0 ] && pass "member $first is the first to start above 1.5" || fail "no member starts above 1.5"

check_named() { # WAY EXPECTED_RC TEXT
  local rc=0
  timeout 120 "$T" run "$1.yaml" -o "$1.h5" --quiet ${4:-} >out.txt 2>err.txt || rc=$?
  if [ "$rc" != "$2" ]; then fail "$1: exit $rc, expected $2: $(head -c 300 err.txt)"
  elif ! grep -q "rank 0, member $first of model '$1.c': $3" err.txt; then fail "$1: not named: $(head -c 400 err.txt)"
  else pass "$1: exit $rc, $(grep -o "member $first of model '$1.c': [A-Za-z ]*" err.txt | head -1)"; fi
}
check_named SEGV 139 "SIGSEGV"
check_named ABORT 134 "SIGABRT"
# compiled before the timed run (model check evaluates at x = 1, where it returns), so the
# soft limit cannot pass before member $first starts, however slow the machine
"$T" model check LOOP.yaml >/dev/null || fail "model check of LOOP.yaml"
check_named LOOP 3 "the hard time limit (--time-limit plus 5 s) has passed" "--time-limit 2"

# on two ranks the crash is named too (which member depends on the schedule)
rc=0
timeout 120 "$MPIEXEC" -n 2 "$T" run SEGV.yaml -o SEGV2.h5 --quiet >out.txt 2>err.txt || rc=$?
[ "$rc" != 0 ] && grep -q "member [0-9]* of model 'SEGV.c': SIGSEGV" err.txt &&
  pass "2 ranks: exit $rc, the crashing member named" || fail "2 ranks: exit $rc: $(head -c 400 err.txt)"
finish

# cli.sh — the command line: help, version, models, jobs, check, info, --json as the last
# stdout line, PETSc options reaching PETSc's options database.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"
# (the output is captured first: grep -q stops reading at its match, and under pipefail the
# writer's SIGPIPE on a longer text would fail the line)
help=$("$T" --help) && grep -q "usage: twofold" <<<"$help" && grep -q "model build SOURCE.c" <<<"$help" \
  && pass "--help" || fail "--help"
"$T" --version | grep -Eq "^twofold [0-9]+\.[0-9]+\.[0-9]+" && pass "--version" || fail "--version"
"$T" models > models.txt
for want in "lorenz" "sigma +default 10 " "rho +default 28 " "noise" "ornstein-uhlenbeck" "harmonic"; do
  grep -Eq -- "$want" models.txt && pass "models lists '$want'" || fail "models lacks '$want'"
done
jobs=$("$T" jobs) && grep -q "^ensemble" <<<"$jobs" && pass "jobs" || fail "jobs"
"$T" check "$CONFIGS/smoke.yaml" --print > check.txt
grep -q "ok (job ensemble)" check.txt && pass "check ok" || fail "check: $(cat check.txt)"
# defaults appear in the config as run
grep -Eq "^  rtol: 1e-08" check.txt && pass "check --print shows defaults" || fail "no defaults in: $(cat check.txt)"

"$T" run "$CONFIGS/smoke.yaml" -o j.h5 --set ensemble.members=50 --set integrator.t_end=0.5 \
  --json --quiet > j.out
"$PYTHON" - <<'PY' || fail "JSON summary"
import json, h5py, numpy as np
lines = open("j.out").read().strip().splitlines()
s = json.loads(lines[-1])
for key in ("job", "status", "output", "ranks", "wall_seconds", "model", "members", "done",
            "failed", "status_counts", "final_state_mean", "final_state_std", "members_per_second"):
    assert key in s, key
assert s["job"] == "ensemble" and s["status"] == "complete" and s["members"] == 50 and s["done"] == 50
f = h5py.File("j.h5", "r")
x = f["members/final_state"][...]
assert np.allclose(s["final_state_mean"], x.mean(axis=0), rtol=1e-12, atol=1e-12)
assert np.allclose(s["final_state_std"], x.std(axis=0, ddof=1), rtol=1e-10)
print("json ok:", lines[-1][:120])
PY
"$T" info j.h5 > info.txt
grep -q "complete: yes" info.txt && grep -q "ok 50" info.txt && grep -q "/members/final_state *50 x 3" info.txt \
  && pass "info" || fail "info: $(cat info.txt)"
stored=$("$T" info j.h5 --config) && grep -q "name: lorenz" <<<"$stored" && pass "info --config" \
  || fail "info --config"

# PETSc-style options go to PETSc and reach the TS that integrates the members: the smoothed
# wheel on PETSc TS (named: auto takes the Rosenbrock stepper; ROSW by its config), and
# -ts_type bdf must change the integrator
"$T" run "$CONFIGS/wheel-smoothed.yaml" -o p.h5 --set ensemble.members=2 --set integrator.t_end=1 \
  --set integrator.method=petsc-ts --quiet --json > rosw.json 2> rosw.err || fail "smoothed run"
"$T" run "$CONFIGS/wheel-smoothed.yaml" -o p.h5 --overwrite --set ensemble.members=2 \
  --set integrator.t_end=1 --set integrator.method=petsc-ts --quiet --json -ts_type bdf \
  > bdf.json 2> bdf.err \
  || fail "smoothed run with -ts_type bdf"
grep -q '"integrator": "petsc-ts/rosw"' rosw.json && grep -q '"integrator": "petsc-ts/bdf"' bdf.json \
  && pass "-ts_type bdf reaches the members' TS (rosw -> bdf)" \
  || fail "-ts_type did not reach the TS: $(cat bdf.json rosw.json)"

# PETSc is started only by runs that integrate on PETSc TS: a PETSc option given to any other
# run is reported as ignored (before, PETSc started anyway and took it silently)
"$T" run "$CONFIGS/smoke.yaml" -o np.h5 --set ensemble.members=2 --quiet -ts_type rosw 2> np.err \
  || fail "smoke run with a PETSc option"
grep -q "PETSc options given (-ts_type rosw) but this run uses no PETSc TS integrator: ignored" np.err \
  && pass "a PETSc option given to a run without PETSc TS is reported as ignored" \
  || fail "no warning for an ignored PETSc option: $(cat np.err)"
[ -f rosw.err ] && [ -f bdf.err ] && ! grep -q "ignored" rosw.err bdf.err \
  && pass "a PETSc TS run given PETSc options does not call them ignored" \
  || fail "a PETSc TS run warned that its options were ignored: $(cat rosw.err bdf.err)"

# a trajectory of member k ends exactly where member k of the ensemble ends
"$T" run "$CONFIGS/smoke.yaml" -o tr.h5 --set job=trajectory --set ensemble.member=17 \
  --set integrator.t_end=0.5 --set output.samples=11 --quiet --json > tr.out
"$PYTHON" - <<'PY' || fail "trajectory vs ensemble"
import json, h5py, numpy as np
e = h5py.File("j.h5", "r")["members/final_state"][17]
g = h5py.File("tr.h5", "r")["trajectory"]
t, x = g["t"][...], g["state"][...]
assert len(t) == 11 and abs(t[-1] - 0.5) < 1e-15 and t[0] == 0
assert np.array_equal(x[-1], e), (x[-1], e)
assert np.array_equal(x[0], h5py.File("j.h5", "r")["members/initial_state"][17])
print("trajectory end == ensemble member 17:", x[-1])
PY
finish

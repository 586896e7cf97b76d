# devs_bad_input.sh — bad DEVS input gets a clear error naming file, line and key, exit
# status 2, and never damages existing results.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"
cp "$CONFIGS/devs-load.yaml" load.yaml
cp "$CONFIGS/devs-lyapunov.yaml" plain.yaml
# X1,2 not real: xi = mu / P < 4a
expect_fail 2 "load.yaml:[0-9]+: model 'devs-load': X1,2 .* are not real: xi = mu / P = 0.2 < 4 a = 0.4" -- \
  "$T" check load.yaml --set model.params.mu=0.1 --set model.params.P=0.5
# run: a model refusing its parameters is a model setup failure (exit 5); check refuses it (2)
expect_fail 5 "load.yaml:[0-9]+: model 'devs-load': X1,2 .* not real" -- "$T" run load.yaml -o x.h5 --set model.params.a=2
# out of range, wrong type, not whole, misspelt
expect_fail 2 "key 'model.params.q': expected a number in \\[0, 1\\], got 1.5" -- "$T" check plain.yaml --set model.params.q=1.5
expect_fail 2 "key 'model.params.P': expected a number in \\[1e-09, 1\\], got 0" -- "$T" check load.yaml --set model.params.P=0
expect_fail 2 "plain.yaml:[0-9]+: model 'devs-logistic': N = 2.5 must be a whole number" -- "$T" check plain.yaml --set model.params.N=2.5
expect_fail 2 "key 'model.params.mu': expected a number, got 'big'" -- "$T" check plain.yaml --set model.params.mu=big
sed 's/^  seed: 1/  sead: 1/' plain.yaml > misspelt.yaml
expect_fail 2 "misspelt.yaml:[0-9]+: unknown key 'devs.sead'.*did you mean 'seed'" -- "$T" check misspelt.yaml
expect_fail 2 "unknown key 'initial'" -- "$T" check plain.yaml --set initial.state=[0.3]
expect_fail 2 "key 'devs.path'.*generic" -- "$T" check plain.yaml --set devs.path=simd
expect_fail 2 "key 'lyapunov.blocks': 100 blocks need at least as many steps" -- \
  "$T" check plain.yaml --set lyapunov.blocks=100 --set model.params.steps=50
# the bifurcation job: a DEVS model, sensible panels, no scan of steps
cp "$CONFIGS/devs-bifurcation-q.yaml" bif.yaml
expect_fail 2 "model.name=logistic: key 'model.name': job 'bifurcation' needs a DEVS model" -- "$T" check bif.yaml --set model.name=logistic --set model.params='{}' --set bifurcation.panels.param=mu
expect_fail 2 "key 'bifurcation.panels.param': panels cannot vary 'steps'" -- "$T" check bif.yaml --set bifurcation.panels.param=steps
expect_fail 2 "key 'bifurcation.panels.values': 1.5 is outside \[0, 1\] for 'q'" -- "$T" check bif.yaml --set 'bifurcation.panels.values=[0.5, 1.5]'
expect_fail 2 "key 'bifurcation.x.param'.*(choices|expected|one of)" -- "$T" check bif.yaml --set bifurcation.x.param=nu
cp "$CONFIGS/devs-load-scan.yaml" scan.yaml
expect_fail 2 "key 'scan': a DEVS scan cannot vary 'steps'" -- "$T" check scan.yaml --set scan.x.param=steps --set scan.x.min=10 --set scan.x.max=20

# existing results are never damaged by a bad run
"$T" run plain.yaml -o good.h5 --set model.params.steps=1000 --quiet
sum_before=$(md5sum good.h5)
expect_fail 5 "not real" -- "$T" run load.yaml -o good.h5 --overwrite --set model.params.mu=0.1
expect_fail 2 "good.h5' already exists" -- "$T" run plain.yaml -o good.h5 --set model.params.steps=1000
grep -q "steps:" err.txt && fail "the refused run computed before refusing" || pass "refused before computing"
[ "$sum_before" = "$(md5sum good.h5)" ] && pass "existing results untouched" || fail "good.h5 changed"

# a scan point the model rejects is recorded as failed; the other points are computed
"$T" run scan.yaml -o rej.h5 --set model.params.mu=0.3 --set scan.x.min=0.5 --set scan.x.max=1 \
  --set scan.x.points=4 --set model.params.steps=500 --set scan.series=false --quiet --json > rej.json
"$PYTHON" - <<'PY' && pass "rejected loads (xi < 4a) are failed points, the rest computed" || fail "rejected scan points"
import h5py, json, numpy as np
r = json.loads(open("rej.json").read().strip().splitlines()[-1])
with h5py.File("rej.h5", "r") as f:
    valid, lam, grid = f["members/valid"][:], f["members/lambda1"][:], f["members/grid"][:, 0]
expect = (0.3 / grid) >= 0.4  # xi = mu / P >= 4a
assert r["failed"] == int((~expect).sum()) and r["failed"] > 0, r
assert (valid.astype(bool) == expect).all() and np.isfinite(lam[expect]).all() and np.isnan(lam[~expect]).all()
PY
[ "$FAILURES" = 0 ] || exit 1
echo "all passed"

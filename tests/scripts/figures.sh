# figures.sh — every post-processing script turns a (small) results file into a PNG; the
# Fig. 5 figure's data are checked against the file.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"
P="$SOURCE_DIR/postproc"
is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }
"$T" run "$CONFIGS/smoke.yaml" -o smoke.h5 --set ensemble.members=50 --set integrator.t_end=0.5 --quiet
"$T" run "$CONFIGS/wheel-fig5.yaml" -o f5.h5 --set ensemble.members=8 --set integrator.t_end=100 \
  --set output.trajectory_samples=100 --quiet
"$T" run "$CONFIGS/wheel-fig4.yaml" -o f4.h5 --set map.x.points=30 --set map.y.points=20 --quiet
"$T" run "$CONFIGS/logistic-scan.yaml" -o scan.h5 --set scan.x.points=50 --quiet
"$PYTHON" "$P/ensemble_figure.py" smoke.h5 smoke.png >/dev/null
"$PYTHON" "$P/scan_figure.py" scan.h5 scan.png >/dev/null
"$PYTHON" "$P/wheel_fig5.py" f5.h5 f5.png >/dev/null
"$PYTHON" "$P/wheel_fig4.py" f4.h5 f4.png >/dev/null
for f in smoke.png f5.png f4.png scan.png; do is_png "$f" && pass "$f" || fail "$f not written"; done

# what the Fig. 5 figure draws, against the file read independently here: the exit points it
# dots are the two-fold exits (within exit.distance of the two-fold, all in the escaping
# region), its full-stick marks are the logged intersection events (all on v = 0,
# omega = omega0), and its title counts them
"$PYTHON" - "$P" <<'PY' || fail "Fig. 5 figure data"
import sys
import h5py
import numpy as np
sys.path.insert(0, sys.argv[1])
import wheel_fig5 as fig
d = fig.load("f5.h5")
f = h5py.File("f5.h5", "r")
n = f["members/status"].shape[0]
ex = f["members/exits"][:].reshape(n, -1, int(f["members/exits"].attrs["slot_width"]))
ex = ex[~np.isnan(ex[:, :, 0])]
twofold_exits = ex[ex[:, 3] == 0]
assert np.array_equal(d["exits"], twofold_exits), "the dotted exits are the two-fold exits"
p, fields = d["p"], d["exit_fields"]
x_star = np.array([p["rstar"], twofold_exits[0, 5], p["omegastar"]])
dist = np.linalg.norm(twofold_exits[:, 4:7] - x_star, axis=1)
assert (dist < 1.2e-4).all(), dist.max()
assert fig.exit_fraction_escaping(d["exits"], fields, p) == 1.0
ev = f["members/event_log"][:].reshape(n, -1, int(f["members/event_log"].attrs["slot_width"]))
kinds = list(f["members/event_log"].attrs["kinds"])
meet = np.isin(ev[:, :, 1], [i for i, k in enumerate(kinds) if k.startswith("intersection_")])
assert np.array_equal(d["meets"], ev[meet][:, 4:7]), "the full-stick marks are the logged arrivals"
assert (np.abs(d["meets"][:, 1]) < 1e-12).all() and (np.abs(d["meets"][:, 2] - p["omega0"]) < 1e-12).all()
assert d["meet_members"] == n, (d["meet_members"], n)
title = fig.title(d)
assert f"{int(f['members/twofold_visits'][:].sum())} two-fold visits" in title, title
assert f"(full-stick rule: {f.attrs['intersection_policy']})" in title, title  # what decides the visits
assert f"reached by {n} of {n} members" in title, title
# the title's count of arrivals at full stick is every member's, from /members/events (the
# event log may hold only the first output.event_log of them)
counts = f["members/events"][:]
stick = sum(int(counts[:, i].sum()) for i, k in enumerate(kinds) if k.startswith("intersection_"))
assert f", {stick} times (pass" in title, (stick, title)
print("Fig. 5 draws", len(d["exits"]), "exits and", len(d["meets"]), "full-stick arrivals:", title)
PY
# the ensemble figure draws the final states of the members that ended ok (read here), the
# scan figure the file's lambda_1(mu), checked against the logistic map's exponent computed
# here with numpy (iterated from the config's x0 = 0.3, the same transient and length), and
# the Fig. 4 figure the file's class and validity grids (classes: tests/scripts/wheel_fig4.py)
"$PYTHON" - "$P" <<'PY' || fail "ensemble, scan and Fig. 4 figure data"
import sys
import h5py
import numpy as np
sys.path.insert(0, sys.argv[1])
import ensemble_figure, scan_figure, wheel_fig4
d = ensemble_figure.load("smoke.h5")
with h5py.File("smoke.h5", "r") as f:
    ok = (f["members/status"][...] == 1) & f["members/done"][...].astype(bool)
    assert np.array_equal(d["x"], f["members/final_state"][...][ok]), "drawn final states"
    assert ensemble_figure.title(d).startswith(f"lorenz: {ok.sum()} members ok, 0 failed, 0 pending")
s = scan_figure.load("scan.h5")
mu = s["grid"][:, 0]
assert np.allclose(mu, np.linspace(2.8, 3.99, 50)), mu
x = np.full(mu.shape, 0.3)
for _ in range(2000):
    x = mu * x * (1 - x)
acc = np.zeros_like(mu)
for _ in range(20000):
    acc += np.log(np.abs(mu * (1 - 2 * x)))
    x = mu * x * (1 - x)
lam = acc / 20000
diff = np.abs(s["spec"][:, 0] - lam)
assert diff.max() < 1e-9, diff.max()  # the same iteration: equal up to round-off
print("scan figure: lambda_1 drawn at", len(mu), "points, median |difference| to numpy",
      np.median(diff), ", largest", diff.max())
# its title counts lambda_1 > 0 only beyond two standard errors (both read from the file
# here): a periodic orbit's lambda_1 = 0 comes out scattered around 0 by about its error
with h5py.File("scan.h5", "r") as f:
    l1 = f["members/spectrum"][...].reshape(len(mu), -1)[:, 0]
    e1 = f["members/error"][...].reshape(len(mu), -1)[:, 0]
share = round(100 * np.mean(l1 > 2 * e1))
assert f"lambda_1 > 0 beyond 2 s.e. on {share} %" in scan_figure.title(s), scan_figure.title(s)
print("scan figure title:", scan_figure.title(s))
g = wheel_fig4.load("f4.h5")
with h5py.File("f4.h5", "r") as f:
    assert np.array_equal(np.ravel(g["cls"]), f["members/class"][...]), "class grid"
    assert np.array_equal(np.ravel(g["valid"]), f["members/valid"][...] == 1), "valid grid"
    assert g["cls"].shape == (20, 30), g["cls"].shape
print("ensemble figure:", d["x"].shape[0], "members drawn;", ensemble_figure.title(d))
PY
finish

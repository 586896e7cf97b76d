"""devs.py — the DEVS engine (Feldstein & Kuzmin 1998) against numbers computed here.

* lambda_1 of the full state of a DEVS of logistic maps against q times the single map's
  exponent, the latter a long-orbit average of ln|mu (1 - 2x)| in numpy (mu = 3.9 and 3.7,
  never mu = 4 where double-precision orbits collapse).
* The load model against an independent single-element computation: the element map
  (xi x(1-x) with exponential tails, X1,2 from the quadratic) iterated in numpy gives the
  element exponent, and lambda_1 of the DEVS must be P times it (chaotic and periodic loads).
* Wolf et al. (1985) from X_i against lambda_1 where they must agree: N = 1, q = 1.
* Bifurcation diagrams at mu = 3.2 (after the first period doubling): N + 1 branches for
  N = 10, counted by clustering, at the values (j x+ + (N - j) x-) / N from the 2-cycle
  x+- = (mu + 1 +- sqrt((mu + 1)(mu - 3))) / (2 mu); the stable "middle" branch
  (mu + 1) / (2 mu) for N = 2, visited about half the time; none for N = 1.
* The vectorised logistic paths (AVX-512, AVX2, portable C) and the generic path (function
  pointers) give the same bits.
* Fig. 5 as drawn (postproc/devs_fig5.drawn): lambda_1(P) and lambda_1 over (P, mu) within
  0.03-0.04 of P lambda_elem(mu / P) of one element map iterated here; the docs' claim that
  lambda_elem(xi) > 0 only in two bands of xi, so that no mu in 0.5..20 makes lambda_1
  positive at most loads.
* Fig. 6 as drawn (postproc/devs_bifurcation.drawn): at mu = 3.2 every sample on one of the
  N + 1 closed-form levels, the visited levels as reported; at q = 1 two mirror levels j and
  N - j alternating, other pairs for other initial states; band widths in the chaotic range
  against a numpy ensemble with its own random numbers (0.05 < 1 < 0.5).
"""
import os

import h5py
import numpy as np

import testlib as T

T.setup()
C = T.CONFIGS


def logistic_orbits(mu, orbits=400, steps=5000, skip=1000):
    """Averages over many independent long orbits of x -> mu x (1 - x): the exponent
    (ln|f'(x)|) and the invariant mean of x."""
    xs = np.linspace(0.11, 0.89, orbits)
    for _ in range(skip):
        xs = mu * xs * (1 - xs)
    log_sum = x_sum = 0.0
    for _ in range(steps):
        log_sum += np.log(np.abs(mu * (1 - 2 * xs))).sum()
        x_sum += xs.sum()
        xs = mu * xs * (1 - xs)
    return log_sum / (orbits * steps), x_sum / (orbits * steps)


def logistic_exponent(mu):
    return logistic_orbits(mu)[0]


def logistic_mean(mu):
    return logistic_orbits(mu)[1]


def load_element_exponent(mu, P, a=0.1, orbits=400, steps=5000, skip=1000):
    """The same for the load model's element map, written from the paper's formulas."""
    xi = mu / P
    root = np.sqrt(xi * xi - 4 * a * xi)
    X1, X2 = (xi + root) / (2 * xi), (xi - root) / (2 * xi)

    def f(x):
        return np.where(x >= X1, a * np.exp(X1 - x), np.where(x <= X2, a * np.exp(x - X2), xi * x * (1 - x)))

    def df(x):
        return np.where(x >= X1, -a * np.exp(X1 - x), np.where(x <= X2, a * np.exp(x - X2), xi * (1 - 2 * x)))

    xs = np.linspace(0.05, 0.95, orbits)
    for _ in range(skip):
        xs = f(xs)
    acc = 0.0
    for _ in range(steps):
        acc += np.log(np.abs(df(xs))).sum()
        xs = f(xs)
    return acc / (orbits * steps)


# ---- plain DEVS: lambda_1 = q lambda_single --------------------------------------------
for mu, q, n in ((3.9, 0.5, 10), (3.7, 0.25, 4)):
    ref = logistic_exponent(mu)
    s = T.run(C + "/devs-lyapunov.yaml", f"plain_{mu}.h5", f"model.params.mu={mu}", f"model.params.q={q}",
              f"model.params.N={n}", "model.params.steps=200000")
    # the full-state norm is dominated by the element with the largest finite-time exponent:
    # a bias of order sqrt(2 ln N / steps) above q lambda; the element mean has none
    T.check(abs(s["lambda1"] - q * ref) < 0.006,
            f"mu {mu}, q {q}, N {n}: lambda1 {s['lambda1']:.5f} vs q * lambda_single {q * ref:.5f}")
    T.check(abs(s["lambda1_elements"] - q * ref) < 0.003,
            f"mu {mu}: mean element exponent {s['lambda1_elements']:.5f} vs {q * ref:.5f}")
    # X_mean is the time average of X/N (the same meaning as in scan): the invariant mean of
    # the map, since an element frozen on a step keeps a value drawn from that measure
    xbar = logistic_mean(mu)
    T.check(abs(s["X_mean"] - xbar) < 0.01, f"mu {mu}: X_mean {s['X_mean']:.4f} vs the map's mean {xbar:.4f}")

# ---- the load model against one element ------------------------------------------------
for P in (0.96, 0.6):
    ref = load_element_exponent(3.9, P)
    s = T.run(C + "/devs-load.yaml", f"load_{P}.h5", f"model.params.P={P}", "model.params.N=20",
              "model.params.steps=100000")
    T.check(abs(s["lambda1"] - P * ref) < 0.01 + 0.02 * abs(P * ref),
            f"load P {P}: lambda1 {s['lambda1']:.5f} vs P * lambda_element {P * ref:.5f}")
    T.check(s["q"] == P, f"load model: q = P ({s['q']})")
with h5py.File("load_0.6.h5", "r") as f:
    xi, X1, X2, a = (float(f["model"].attrs[k]) for k in ("xi", "X1", "X2", "a"))
T.check(abs(xi - 3.9 / 0.6) < 1e-12 and abs(xi * X1 * (1 - X1) - a) < 1e-12 and abs(xi * X2 * (1 - X2) - a) < 1e-12,
        f"derived xi = mu/P = {xi}, X1,2 = {X1:.6f}, {X2:.6f} solve xi x (1 - x) = a")

# ---- Wolf's estimate from X_i where it must agree: one element, always updated ----------
s = T.run(C + "/devs-lyapunov.yaml", "wolf.h5", "model.params.N=1", "model.params.q=1",
          "model.params.steps=50000")
ref = logistic_exponent(3.9)
T.check(abs(s["lambda1_series"] - s["lambda1"]) < 0.02 and abs(s["lambda1"] - ref) < 0.01,
        f"N = 1, q = 1: Wolf from X_i {s['lambda1_series']:.4f}, lambda1 {s['lambda1']:.4f}, "
        f"single map {ref:.4f}")
# q < 1: the element keeps its value on skipped steps; Wolf on X_i drops the repeats and scales
# back to steps, so it estimates q lambda_single (it gave 1.97 for 0.246 when repeats counted)
for q in (0.5, 0.25):
    s = T.run(C + "/devs-lyapunov.yaml", f"wolf_q{q}.h5", "model.params.N=1", f"model.params.q={q}",
              "model.params.steps=50000")
    T.check(s["series_meaningful"] and abs(s["lambda1_series"] - q * ref) < 0.015 and
            abs(s["series_update_fraction"] - q) < 0.03,
            f"N = 1, q = {q}: Wolf from X_i {s['lambda1_series']:.4f} vs q lambda_single "
            f"{q * ref:.4f} (updates {s['series_update_fraction']:.3f} of the steps)")
# N > 1: X_i is a signal of N dimensions seen through a 2-D embedding; nearest neighbours part
# at once (median one-step stretch far above |f'|), so no estimate is claimed: null, and why
s = T.run(C + "/devs-lyapunov.yaml", "wolf_n10.h5", "model.params.N=10", "model.params.q=0.5",
          "model.params.steps=20000")
T.check(not s["series_meaningful"] and s["lambda1_series"] is None and s["series_stretch"] > 10,
        f"N = 10: no Wolf estimate claimed (stretch {s['series_stretch']:.1f}, value "
        f"{s['lambda1_series']})")

# ---- vectorised and generic element paths: same bits -----------------------------------
a = T.run(C + "/devs-lyapunov.yaml", "fast.h5", "model.params.N=3000", "model.params.steps=3000")
b = T.run(C + "/devs-lyapunov.yaml", "generic.h5", "model.params.N=3000", "model.params.steps=3000",
          "devs.path=generic")
# the same tile for AVX2 and in portable C (where the processor has the instructions)
isa = {}
for name in ("avx2", "portable"):
    os.environ["TWOFOLD_DEVS_ISA"] = name
    isa[name] = T.run(C + "/devs-lyapunov.yaml", f"{name}.h5", "model.params.N=3000", "model.params.steps=3000")
del os.environ["TWOFOLD_DEVS_ISA"]
with h5py.File("fast.h5", "r") as f:
    ref = f["devs/X"][:]
same = True
for name in ("generic", "avx2", "portable"):
    with h5py.File(f"{name}.h5", "r") as g:
        same = same and np.array_equal(ref, g["devs/X"][:])
T.check(same and a["lambda1"] == b["lambda1"] == isa["avx2"]["lambda1"] == isa["portable"]["lambda1"]
        and a["vectorised"] and not b["vectorised"],
        f"AVX-512 (where available), AVX2, portable C and generic element paths: X_i and lambda1 "
        f"identical ({a['lambda1']!r})")

# ---- bifurcation branches ---------------------------------------------------------------
MU = 3.2
root = np.sqrt((MU + 1) * (MU - 3))
xp, xm = (MU + 1 + root) / (2 * MU), (MU + 1 - root) / (2 * MU)
T.write("bif.yaml", f"""job: bifurcation
model:
  name: devs-logistic
  params: {{q: 0.5, steps: 4000, transient: 2000}}
bifurcation:
  x: {{param: mu, min: {MU}, max: 3.3, points: 2}}
  panels: {{param: N, values: [10, 2, 1]}}
""")
T.run("bif.yaml", "bif.h5")


def clusters(values, gap=1e-6):
    v = np.sort(values)
    starts = np.concatenate(([0], np.nonzero(np.diff(v) > gap)[0] + 1))
    return [v[i:j] for i, j in zip(starts, np.concatenate((starts[1:], [len(v)])))]


with h5py.File("bif.h5", "r") as f:
    grid, samples = f["members/grid"][:], f["members/samples"][:]
for n in (10, 2, 1):
    row = np.nonzero((grid[:, 0] == MU) & (grid[:, 1] == n))[0][0]
    cl = clusters(samples[row])
    centres = np.array([c.mean() for c in cl])
    expect = np.sort([(j * xp + (n - j) * xm) / n for j in range(n + 1)])
    T.check(len(cl) == n + 1 and np.allclose(centres, expect, atol=1e-9),
            f"N = {n}, mu = {MU}: {len(cl)} branches (expected N + 1 = {n + 1}) at the 2-cycle mixtures")
    if n == 2:
        middle = np.mean(np.abs(samples[row] - (MU + 1) / (2 * MU)) < 1e-9)
        fixed = np.mean(np.abs(samples[row] - (1 - 1 / MU)) < 1e-3)
        T.check(0.4 < middle < 0.6 and fixed == 0,
                f"N = 2: middle branch (mu+1)/(2mu) holds {middle:.2f} of the samples (1/2: the relative "
                f"phase flips with probability 2q(1-q)); the unstable fixed point 1 - 1/mu none")

# ---- Fig. 5: the data drawn against one element map iterated here ------------------------
import subprocess  # noqa: E402
import sys  # noqa: E402

SRC = os.environ["SOURCE_DIR"]
sys.path.insert(0, SRC + "/postproc")
import devs_bifurcation  # noqa: E402
import devs_fig5  # noqa: E402


def load_element_exponents(mu, P, a=0.1, orbits=24, steps=3000, skip=1000):
    """Per-orbit exponents per update of the element map (paper's formulas) for arrays mu, P:
    the tangent map of the ensemble is diagonal and element k's derivative enters only on its
    updates (probability P), so lambda_1 = P lambda_elem(mu / P) for any N, where
    lambda_elem is that of the element's attractor (the largest if several coexist)."""
    xi = (np.asarray(mu, float) / np.asarray(P, float))[:, None]
    root = np.sqrt(xi * xi - 4 * a * xi)
    X1, X2 = (xi + root) / (2 * xi), (xi - root) / (2 * xi)
    xs = np.tile(np.linspace(0.05, 0.95, orbits), (xi.shape[0], 1))
    acc = np.zeros_like(xs)
    with np.errstate(over="ignore"):
        for i in range(skip + steps):
            hi, lo = xs >= X1, xs <= X2
            f = np.where(hi, a * np.exp(X1 - xs), np.where(lo, a * np.exp(xs - X2), xi * xs * (1 - xs)))
            if i >= skip:
                df = np.where(hi, -a * np.exp(X1 - xs), np.where(lo, a * np.exp(xs - X2), xi * (1 - 2 * xs)))
                acc += np.log(np.abs(df) + 1e-300)
            xs = f
    return acc / steps


def within_element(lam, mu, P, tol):
    """lambda_1 lies within tol of P times the range of the element's per-orbit exponents."""
    e = load_element_exponents(mu, P)
    lo, hi = np.asarray(P) * e.min(axis=1), np.asarray(P) * e.max(axis=1)
    return (lam >= lo - tol) & (lam <= hi + tol), lo, hi


T.run(C + "/devs-load-scan.yaml", "scan.h5", "scan.x.min=0.2", "scan.x.max=1.0", "scan.x.points=9",
      "model.params.N=20", "scan.series=false")
T.run(C + "/devs-load-mu-sweep.yaml", "sweep.h5", "scan.x.min=0.3", "scan.x.max=1.0", "scan.x.points=8",
      "scan.y.min=2", "scan.y.max=14", "scan.y.points=4", "model.params.N=10", "model.params.steps=8000")
d = devs_fig5.drawn("scan.h5", "sweep.h5")
ok, lo, hi = within_element(d["lambda1"], d["mu"], d["P"], 0.03)
T.check(len(d["P"]) == 9 and ok.all(),
        "Fig. 5 drawn lambda_1(P), mu = 3.9: within 0.03 of P lambda_elem(mu/P) of one element: "
        + ", ".join(f"P {p:.1f}: {v:+.3f} [{a:+.3f}, {b:+.3f}]" for p, v, a, b in zip(d["P"], d["lambda1"], lo, hi)))
T.check(np.all(np.abs(d["reference"] - 0.5 * (lo + hi)) < 0.03 + 0.5 * (hi - lo)),
        "the figure's own one-element curve agrees with this test's")
T.check(d["positive_fraction"] == np.mean(d["lambda1"] > 0), "annotated share of positive loads is the drawn one")
mus, Ps = np.meshgrid(d["sweep_mu"], d["sweep_P"], indexing="ij")
ok, lo, hi = within_element(d["sweep_lambda1"].ravel(), mus.ravel(), Ps.ravel(), 0.04)
T.check(d["sweep_lambda1"].shape == (4, 8) and ok.all(),
        f"Fig. 5 (b): lambda_1 over (P, mu) within 0.04 of P lambda_elem(mu/P) at all {ok.size} points "
        f"(worst {np.max(np.maximum(lo - d['sweep_lambda1'].ravel(), d['sweep_lambda1'].ravel() - hi)):+.3f})")
T.check(np.allclose(d["sweep_positive"], np.mean(d["sweep_lambda1"] > 0, axis=1)),
        "Fig. 5 (c): share of positive loads per mu is that of the drawn table")
# the docs' claim: for no mu in [0.5, 20] is lambda_1 positive at most loads P in [0.01, 1]
# (sign lambda_1 = sign lambda_elem(xi), xi = mu / P), and xi > 0 only in 3.57-4.2 and 12.4-22
xi = np.geomspace(0.5, 2000, 1200)
g = load_element_exponents(xi, np.ones_like(xi), orbits=6, steps=1500).max(axis=1)
P = np.linspace(0.01, 1, 100)
share = [np.mean(np.interp(np.log(m / P), np.log(xi), g) > 0) for m in np.arange(0.5, 20.01, 0.5)]
pos = xi[g > 0]
T.check(max(share) < 0.4 and pos.min() > 3.5 and pos.max() < 23 and not np.any((pos > 4.25) & (pos < 12.3)),
        f"lambda_elem(xi) > 0 only for xi in [{pos.min():.2f}, 4.25] and [12.3, {pos.max():.1f}]; at most "
        f"{max(share):.2f} of the loads positive for any mu in 0.5..20")

# ---- Fig. 6: the q panels' levels and band widths against a numpy ensemble -----------------
MU_LO = 3.2
T.run(C + "/devs-bifurcation-q.yaml", "bifq.h5", f"bifurcation.x.min={MU_LO}", "bifurcation.x.max=3.99",
      "bifurcation.x.points=80")
panels = devs_bifurcation.drawn("bifq.h5")
r = np.sqrt((MU_LO + 1) * (MU_LO - 3))
xp, xm = (MU_LO + 1 + r) / (2 * MU_LO), (MU_LO + 1 - r) / (2 * MU_LO)
levels = (np.arange(11) * xp + (10 - np.arange(11)) * xm) / 10
with h5py.File("bifq.h5", "r") as f:
    grid, samples = f["members/grid"][:], f["members/samples"][:]
for p in panels:
    s = samples[np.nonzero((grid[:, 0] == MU_LO) & (grid[:, 1] == p["q"]))[0][0]]
    j = np.argmin(np.abs(s[:, None] - levels[None, :]), axis=1)
    T.check(np.allclose(s, levels[j], atol=1e-9) and np.array_equal(np.unique(j), p["visited"])
            and p["levels_mu"] == MU_LO and np.allclose(p["levels"], levels, atol=1e-12),
            f"q = {p['q']:g}, mu = {MU_LO}: every sample on a level (j x+ + (N - j) x-)/N; levels visited "
            f"{list(np.unique(j))}")
    if p["q"] == 1:
        T.check(len(set(j[::2])) == 1 and len(set(j[1::2])) == 1 and j[0] + j[1] == 10,
                f"q = 1: X/N alternates between the mirror levels j = {j[0]} and N - j = {j[1]} (phases fixed)")


def band_width(q, mus, n=10, realisations=6, transient=4000, steps=200, seed=3):
    """Mean over mus and realisations of max - min of X/N over `steps` recorded steps."""
    rng = np.random.default_rng(seed)
    mu = np.repeat(mus, realisations)[:, None]
    x = rng.uniform(size=(len(mu), n))
    lo, hi = np.full(len(mu), np.inf), np.full(len(mu), -np.inf)
    for i in range(transient + steps):
        x = np.where(rng.uniform(size=x.shape) < q, mu * x * (1 - x), x)
        if i >= transient:
            X = x.mean(axis=1)
            lo, hi = np.minimum(lo, X), np.maximum(hi, X)
    return np.mean(hi - lo)


chaos = np.unique(grid[:, 0])
chaos = chaos[chaos >= devs_bifurcation.MU_CHAOS]
width = {q: band_width(q, chaos) for q in (0.05, 0.5, 1.0)}
for p in panels:
    T.check(abs(p["spread"] - width[p["q"]]) < 0.07 * width[p["q"]],
            f"q = {p['q']:g}: band width of X/N for mu >= 3.6 {p['spread']:.3f} vs numpy ensemble {width[p['q']]:.3f}")
w = [p["spread"] for p in panels]
T.check(w[0] < w[2] < w[1] and width[0.05] < width[1.0] < width[0.5],
        f"band widths q = 0.05 < 1 < 0.5 (engine {w[0]:.3f} < {w[2]:.3f} < {w[1]:.3f}): more diffuse from "
        f"q = 0.05 to 0.5, less at q = 1")
# the N + 1 steady states at q = 1 are those of different initial states (devs.seed)
pairs = set()
for seed in range(1, 9):
    T.run(C + "/devs-bifurcation-q.yaml", f"seed{seed}.h5", f"bifurcation.x.min={MU_LO}", "bifurcation.x.max=3.3",
          "bifurcation.x.points=2", "bifurcation.panels.values=[1.0]", f"devs.seed={seed}", "model.params.steps=20")
    with h5py.File(f"seed{seed}.h5", "r") as f:
        s = f["members/samples"][np.argmin(np.abs(f["members/grid"][:, 0] - MU_LO))]
    j = np.argmin(np.abs(s[:, None] - levels[None, :]), axis=1)
    pairs.add(tuple(sorted(set(j))) if np.allclose(s, levels[j], atol=1e-9) else ("off a level",))
T.check(len(pairs) >= 3 and all(pr == (5,) or (len(pr) == 2 and sum(pr) == 10) for pr in pairs),
        f"q = 1, 8 initial states: mirror pairs of levels {sorted(pairs)}")

# ---- the scripts write the figures -----------------------------------------------------
for script, args in (("devs_bifurcation.py", ["bifq.h5", "bifq.png"]), ("devs_fig5.py", ["scan.h5", "fig5.png", "sweep.h5"])):
    r = subprocess.run([os.environ["PYTHON"], f"{SRC}/postproc/{script}", *args], capture_output=True, text=True)
    T.check(r.returncode == 0 and os.path.exists(args[1]), f"postproc/{script} runs {r.stderr.strip()[-200:]}")

T.finish()

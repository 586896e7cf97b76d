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

# ---- figures: the post-processing scripts turn the files into PNGs ------------------------
import subprocess  # noqa: E402

SRC = os.environ["SOURCE_DIR"]
T.run(C + "/devs-load-scan.yaml", "scan.h5", "scan.x.points=5", "model.params.steps=2000", "model.params.N=20")
for script, h5 in (("devs_bifurcation.py", "bif.h5"), ("devs_fig5.py", "scan.h5")):
    r = subprocess.run([os.environ["PYTHON"], f"{SRC}/postproc/{script}", h5, h5 + ".png"], capture_output=True, text=True)
    ok = r.returncode == 0 and os.path.getsize(h5 + ".png") > 10000 if os.path.exists(h5 + ".png") else False
    T.check(ok, f"postproc/{script} {h5} -> PNG {r.stderr.strip()[-200:]}")

T.finish()

"""sampling.py — a Monte-Carlo study: sampled initial states and a sampled parameter per member.

The third-order relay feedback system of tests/scripts/lyapunov_relay.py (di Bernardo,
Johansson & Vasca's form; x' = A x + B u, u = -sign(x1)), written as model.equations, with
    x1 ~ U(-1, 1), x2 ~ U(-0.5, 0.5), x3 ~ U(0, 2)   (initial.sample)
    lam ~ U(0.1, 0.3)                                (model.sample)
over 10,000 members, short runs (t_end 0.05), read back with the Python reader (twofold.open):

* the stored draws follow their distributions: a Kolmogorov-Smirnov test (scipy.stats.kstest)
  per state component and for lam, p > 1e-3;
* as do a normal x1 (mean initial.state's 0.1) and log-uniform x3 and lam;
* they are a pure function of (seed, member): 1 and 2 ranks store the same initial states,
  parameters and final states bit for bit, and another seed draws other values;
* each member ran with its own lam: members that stay on one side of x1 = 0 are integrated here
  independently (scipy's solve_ivp on the linear field with that member's lam) to 1e-6;
* a Latin hypercube (initial.design: latin-hypercube) of N members puts exactly one member in
  each of the N strata of every component and of lam, on 1 and on 2 ranks and after a stop
  and resume alike;
* a Sobol design (initial.design: sobol) gives member m point m + 1 of GSL's Sobol sequence,
  generated here independently by calling GSL's gsl_qrng_sobol through ctypes (its first two
  dimensions also equal scipy.stats.qmc.Sobol's unscrambled ones; the others use other
  direction numbers), and the first 2^k points with the origin have one point per 1/2^k
  stratum in every dimension;
* initial.from_file takes member m's state from row m of a CSV, a .npy and an HDF5 dataset.
"""
import ctypes
import ctypes.util
import os
import sys

import h5py
import numpy as np
from scipy import stats
from scipy.integrate import solve_ivp
from scipy.stats import qmc

import testlib as T

sys.path.insert(0, os.path.join(os.environ["SOURCE_DIR"], "python"))
import twofold  # noqa: E402

ZETA, OMEGA, RHO, K, SIGMA = 0.05, 10.0, 1.0, 1.0, 1.0
BOX = {"x1": (-1.0, 1.0), "x2": (-0.5, 0.5), "x3": (0.0, 2.0)}
LAM = (0.1, 0.3)
T_END = 0.05
MEMBERS = 10000

T.setup()
os.environ.setdefault("TWOFOLD_CACHE", os.path.join(T.WORK, "cache"))
study = T.write("relay-mc.yaml", f"""job: ensemble
model:
{T.relay3_equations(ZETA, OMEGA, 0.15, RHO, K, SIGMA)}  sample:
    lam: {{dist: uniform, lo: {LAM[0]}, hi: {LAM[1]}}}
initial:
  state: [0.1, 0, 0]
  sample:
{chr(10).join(f"    {n}: {{dist: uniform, lo: {lo}, hi: {hi}}}" for n, (lo, hi) in BOX.items())}
integrator: {{t_end: {T_END}, rtol: 1.0e-8, atol: 1.0e-10}}
exit: {{max_logged: 0}}
output: {{event_log: 0}}
ensemble: {{members: {MEMBERS}, seed: 7}}
""")


def draws(path):
    with twofold.open(path) as res:
        return (res.initial_states(), res.parameters(), res["members/final_state"],
                res.statuses())


# --- uniform draws, 1 and 2 ranks -----------------------------------------------------------
T.run(study, "one.h5")
T.run(study, "two.h5", ranks=2)
x, p, final, status = draws("one.h5")
T.check(x.shape == (MEMBERS, 3) and list(p) == ["lam"] and p["lam"].shape == (MEMBERS,),
        f"the reader gives {x.shape} initial states and parameters {list(p)}")
T.check((status == "ok").all(), "every member finished ok")
for j, (name, (lo, hi)) in enumerate(BOX.items()):
    pv = stats.kstest(x[:, j], stats.uniform(lo, hi - lo).cdf).pvalue
    T.check(pv > 1e-3 and lo <= x[:, j].min() and x[:, j].max() <= hi,
            f"{name} ~ U({lo}, {hi}): KS p = {pv:.3f}, inside the box")
pv = stats.kstest(p["lam"], stats.uniform(LAM[0], LAM[1] - LAM[0]).cdf).pvalue
T.check(pv > 1e-3, f"lam ~ U{LAM}: KS p = {pv:.3f}")
# the components and lam are drawn independently of each other
r = np.corrcoef(np.column_stack([x, p["lam"]]).T)
T.check(np.abs(r - np.eye(4)).max() < 0.05, f"draws uncorrelated (largest |r| "
        f"{np.abs(r - np.eye(4)).max():.3f} < 0.05)")
x2, p2, final2, _ = draws("two.h5")
T.check(np.array_equal(x, x2) and np.array_equal(p["lam"], p2["lam"]) and
        np.array_equal(final, final2), "1 and 2 ranks: initial states, lam and final states "
        "bitwise equal")
T.run(study, "seed8.h5", "ensemble.seed=8")
x8, p8, _, _ = draws("seed8.h5")
T.check(not np.any(x8 == x) and not np.any(p8["lam"] == p["lam"]),
        "another seed draws other values for every member")

# normal (around initial.state) and log-uniform, random design
T.run(study, "shapes.h5", "ensemble.members=2000",
      "initial.sample.x1={dist: normal, sigma: 0.2}",
      "initial.sample.x3={dist: log-uniform, lo: 0.1, hi: 10}",
      "model.sample.lam={dist: log-uniform, lo: 0.1, hi: 0.3}")
nx, nparams, _, _ = draws("shapes.h5")
for name, values, law in (("x1", nx[:, 0], stats.norm(0.1, 0.2)),
                          ("x3", nx[:, 2], stats.loguniform(0.1, 10)),
                          ("lam", nparams["lam"], stats.loguniform(0.1, 0.3))):
    pv = stats.kstest(values, law.cdf).pvalue
    T.check(pv > 1e-3, f"{name} ~ {law.dist.name}{law.args}: KS p = {pv:.3f}")

# --- each member runs with its own lam --------------------------------------------------------
def field(lam, u):
    A = np.array([[-(2 * ZETA * OMEGA + lam), 1, 0], [-(2 * ZETA * OMEGA * lam + OMEGA**2), 0, 1],
                  [-lam * OMEGA**2, 0, 0]])
    B = K * np.array([1, -2 * SIGMA * RHO, RHO**2])
    return lambda t, y: A @ y + B * u


checked = worst = 0
for m in range(200):
    u = -np.sign(x[m, 0])
    sol = solve_ivp(field(p["lam"][m], u), (0, T_END), x[m], rtol=1e-11, atol=1e-13,
                    dense_output=True)
    ts = np.linspace(0, T_END, 400)
    if np.any(np.sign(sol.sol(ts)[0]) != -u) or abs(sol.y[0, -1]) < 1e-3:
        continue  # crosses or slides: not a single linear flight
    worst = max(worst, np.abs(sol.y[:, -1] - final[m]).max())
    checked += 1
T.check(checked >= 50 and worst < 1e-6, f"{checked} members that stay on one side end where "
        f"their own lam takes them (largest difference {worst:.1e} < 1e-6)")
fixed = np.array([solve_ivp(field(0.15, -np.sign(x[m, 0])), (0, T_END), x[m], rtol=1e-11,
                            atol=1e-13).y[:, -1] for m in range(5)])
T.check(np.abs(fixed - final[:5]).max() > 1e-3, "the fixed lam 0.15 would end elsewhere")

# --- Latin hypercube --------------------------------------------------------------------------
N = 1000
T.run(study, "lhs1.h5", f"ensemble.members={N}", "initial.design=latin-hypercube")
T.run(study, "lhs2.h5", f"ensemble.members={N}", "initial.design=latin-hypercube", ranks=2)
lx, lp, _, _ = draws("lhs1.h5")
lx2, lp2, _, _ = draws("lhs2.h5")
units = [(lx[:, j] - lo) / (hi - lo) for j, (lo, hi) in enumerate(BOX.values())]
units.append((lp["lam"] - LAM[0]) / (LAM[1] - LAM[0]))
for name, u in zip(list(BOX) + ["lam"], units):
    strata = np.floor(u * N).astype(int)
    T.check(np.array_equal(np.sort(strata), np.arange(N)),
            f"LHS {name}: each of the {N} strata holds exactly one member")
T.check(np.array_equal(lx, lx2) and np.array_equal(lp["lam"], lp2["lam"]),
        "LHS: 1 and 2 ranks draw the same members bitwise")
T.run(study, "lhs-resumed.h5", f"ensemble.members={N}", "initial.design=latin-hypercube",
      extra=("--stop-after", "300"), code=3)
T.run(study, "lhs-resumed.h5", f"ensemble.members={N}", "initial.design=latin-hypercube",
      extra=("--resume",))
lx3, lp3, _, _ = draws("lhs-resumed.h5")
T.check(np.array_equal(lx, lx3) and np.array_equal(lp["lam"], lp3["lam"]),
        "LHS: a run stopped after 300 members and resumed draws the same members bitwise")
T.check(not np.array_equal(np.argsort(units[0]), np.argsort(units[1])),
        "LHS: the components' strata are permuted independently")

# --- Sobol ------------------------------------------------------------------------------------
N = 1024
T.run(study, "sobol.h5", f"ensemble.members={N}", "initial.design=sobol")
sx, sp, _, _ = draws("sobol.h5")
units = np.column_stack([(sx[:, j] - lo) / (hi - lo) for j, (lo, hi) in enumerate(BOX.values())]
                        + [(sp["lam"] - LAM[0]) / (LAM[1] - LAM[0])])
gsl = ctypes.CDLL(ctypes.util.find_library("gsl") or "libgsl.so", mode=ctypes.RTLD_GLOBAL)
gsl.gsl_qrng_alloc.restype = ctypes.c_void_p
gsl.gsl_qrng_alloc.argtypes = [ctypes.c_void_p, ctypes.c_uint]
gsl.gsl_qrng_get.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)]
gsl.gsl_qrng_free.argtypes = [ctypes.c_void_p]
q = gsl.gsl_qrng_alloc(ctypes.c_void_p.in_dll(gsl, "gsl_qrng_sobol"), 4)
point = (ctypes.c_double * 4)()
reference = []
for _ in range(N):
    gsl.gsl_qrng_get(q, point)
    reference.append(list(point))
gsl.gsl_qrng_free(q)
reference = np.array(reference)
# the box maps u exactly when hi - lo is a power of two; x3 and lam are compared to rounding
T.check(np.abs(units - reference).max() < 1e-14,
        f"Sobol: member m is point m + 1 of GSL's sequence (largest difference "
        f"{np.abs(units - reference).max():.1e})")
scipy_points = qmc.Sobol(2, scramble=False).random_base2(11)[1:N + 1]
T.check(np.abs(units[:, :2] - scipy_points).max() < 1e-14,
        "Sobol: the first two dimensions equal scipy.stats.qmc.Sobol's (unscrambled)")
net = np.vstack([np.zeros(4), reference[:N - 1]])
T.check(all(np.array_equal(np.sort(np.floor(net[:, j] * N)), np.arange(N)) for j in range(4)),
        f"Sobol: the first {N} points (origin included) fill each of the {N} strata once per "
        "dimension")

# --- initial states from a file ---------------------------------------------------------------
N = 50
rows = np.random.default_rng(3).normal(size=(N, 3))
np.savetxt("states.csv", rows, delimiter=",", header="x1,x2,x3", fmt="%.17g")
np.save("states.npy", rows)
with h5py.File("states.h5", "w") as f:
    f["runs/x0"] = rows
text = open(study).read()
base = text[:text.index("initial:")] + text[text.index("integrator:"):]
for name, keys in (("csv", "from_file: states.csv"), ("npy", "from_file: states.npy"),
                   ("h5", "from_file: states.h5\n  dataset: /runs/x0")):
    cfg = T.write(f"file-{name}.yaml", base.replace("integrator:", f"initial:\n  {keys}\n"
                                                    "integrator:", 1))
    T.run(cfg, f"file-{name}.h5", f"ensemble.members={N}")
    fx, _, _, _ = draws(f"file-{name}.h5")
    T.check(np.array_equal(fx, rows), f"initial.from_file ({name}): member m starts at row m")
T.finish()

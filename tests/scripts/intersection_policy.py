"""intersection_policy.py — the rules for choices at the wheel's full stick (intersection.policy)
against computations written here from the paper's equations (Szalai & Jeffrey 2014, eqs 1-7).

At full stick (h = g = 0) of configs/wheel-fig5.yaml the engine's verdict is often `choice`:
several repelling limit directions, i.e. departures into slip-, slip+ or the sticking flow
along Sigma.  This test checks
1. weighted: kinds of weight 0 are never taken (an ensemble's count), and the frequency of
   each kind agrees with the normalised weights over the departures admissible at each logged
   arrival — the admissible set computed here, in the (h, g) plane, from eqs (1)-(7): limit
   directions are the roots of V in each sector (repelling if R > 0), plus the Filippov sticking
   flow along Sigma where it moves away from I (sliding) or escapes.  Poisson-binomial bounds
   (4.5 sigma) at a fixed seed (weights 1 : 9, so equal shares would miss by 10 sigma);
2. replay: a weighted run and a regularised run replayed from their logs are identical, and the
   log's kind column keeps the rule (2 weighted, 3 regularised); both are identical on 1 and 2
   ranks, and a weighted run stopped and resumed equals an uninterrupted one;
3. regularised: at >= 20 logged arrivals the branch the engine picks is the branch the smoothed
   wheel (sign(h) -> tanh(h / eps) in eqs 6-7, integrated here with scipy's Radau) takes from
   the member's own path (its previous crossing of Sigma) through the arrival, at
   eps = 1e-5, 1e-6 and 1e-7 — and the smoothed branch is the same at all three eps; the same
   arrivals run through twofold's own smoothed route (model.smoothing tanh, PETSc TS) at
   eps = 1e-5 and 1e-6 take that branch (at 1e-4 the arrivals just below the threshold still
   leave on slip-: the limit is reached between 1e-4 and 1e-5); and the
   threshold along I between the two branches, bisected on the eps-free blow-up written here,
   separates the engine's regularised choices;
4. bad input: an unknown kind, a negative weight, weights without `weighted`, replay without a
   file: exit 2 with file, line and key.
"""
import json
import math
import re
import subprocess

import h5py
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import testlib as T
from wheel_fields import f0_b, friction, hg, jac_hg, M, sector_directions, stick, W0

T.setup()
CFG = f"{T.CONFIGS}/wheel-fig5.yaml"
COMMON = ["output.trajectory_samples=0", "output.event_log=400", "exit.max_logged=400"]












def admissible(r):
    """The departure kinds at (r, 0, omega0) on I, from the limit directions of eqs (1)-(7)."""
    x = np.array([r, 0.0, W0])
    f0, b = f0_b(x)
    J = jac_hg(x)
    a, G = J @ f0, J @ b

    def rv(th):
        w = a + G @ friction(math.cos(th), math.sin(th), np.sign(math.cos(th)))
        return w @ [math.cos(th), math.sin(th)], w @ [-math.sin(th), math.cos(th)]

    kinds = [("slip+" if lo < 0 else "slip-") for lo, _, radial in sector_directions(rv)
             if radial > 0]
    for gs in (1, -1):  # along Sigma next to I: Filippov's sticking flow
        y = x + np.linalg.pinv(J) @ np.array([0, gs * 1e-9])
        y = y - hg(y)[0] * jac_hg(y)[0] / (jac_hg(y)[0] @ jac_hg(y)[0])
        gh = jac_hg(y)[0]
        lp, lm = gh @ stick(y, 1), gh @ stick(y, -1)
        if (lp < 0 < lm) or (lm < 0 < lp):
            f = stick(y, (lp + lm) / (lm - lp))
            if gs * (jac_hg(y)[1] @ f) > 0:
                kinds.append("sliding" if lp < 0 < lm else "escaping")
    return kinds


def choices(path):
    """Every logged choice at full stick: (member, t, u, side, code, state)."""
    with h5py.File(path, "r") as f:
        ex = f["members/exits"][...]
        ex = ex.reshape(ex.shape[0], -1, int(f["members/exits"].attrs["slot_width"]))
    rows = []
    for m, slots in enumerate(ex):
        for s in slots[~np.isnan(slots[:, 0])]:
            if s[3] >= 1:
                rows.append((m, s[0], s[1], int(s[2]), int(s[3]), s[4:]))
    return rows


def members_equal(a, b):
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        return all(np.array_equal(fa["members"][k][...], fb["members"][k][...], equal_nan=True)
                   for k in fa["members"])


SIDE = {"slip-": -1, "sliding": 0, "escaping": 0, "slip+": 1}

# --- 1: weighted ---------------------------------------------------------------------------
W = {"slip-": 1.0, "slip+": 0.0, "sliding": 9.0, "escaping": 0.0}
wset = "intersection.weights={" + ", ".join(f"{k}: {v}" for k, v in W.items()) + "}"
T.run(CFG, "weighted.h5", "ensemble.members=120", "integrator.t_end=60", *COMMON,
      "intersection.policy=weighted", wset)
rows = choices("weighted.h5")
with h5py.File("weighted.h5", "r") as f:
    T.check(f.attrs["intersection_policy"] == "weighted" and "sliding: 9" in f.attrs["intersection_weights"],
            f"the results file names the rule: {f.attrs['intersection_policy']},"
            f" {f.attrs['intersection_weights']}")
sides = np.array([r[3] for r in rows])
codes = np.array([r[4] for r in rows])
print(f"weighted: {len(rows)} choices, sides {np.unique(sides, return_counts=True)}")
T.check(len(rows) >= 200, f"enough choices for the statistics ({len(rows)})")
T.check((sides != 1).all(), f"slip+ (weight 0) never taken: {(sides == 1).sum()} times")
expect = {k: 0.0 for k in W}
var = {k: 0.0 for k in W}
fallback = 0
for r in rows:
    kinds = admissible(r[5][0])
    total = sum(W[k] for k in kinds)
    if total == 0:
        fallback += 1
        continue
    for k in kinds:
        p = W[k] / total
        expect[k] += p
        var[k] += p * (1 - p)
T.check((codes == 2).sum() == len(rows) - fallback,
        f"every choice with a weighted admissible kind is logged as weighted ({(codes == 2).sum()}"
        f" of {len(rows)}, {fallback} all-zero)")
for k, side in (("slip-", -1), ("sliding", 0)):
    seen = int((sides[codes == 2] == side).sum())
    bound = 4.5 * math.sqrt(var[k]) + 1
    T.check(abs(seen - expect[k]) <= bound,
            f"{k}: {seen} taken, {expect[k]:.1f} expected from the normalised weights (+-{bound:.1f})")

only = "intersection.weights={sliding: 1, slip-: 0, slip+: 0, escaping: 0}"
T.run(CFG, "sliding.h5", "ensemble.members=40", "integrator.t_end=60", *COMMON,
      "intersection.policy=weighted", only)
rows_s = choices("sliding.h5")
ok = [r for r in rows_s if "sliding" in admissible(r[5][0])]
T.check(len(ok) >= 20 and all(r[3] == 0 for r in ok),
        f"weights only on sliding: all {len(ok)} arrivals where it is admissible take it")

# --- 2: replay, ranks ----------------------------------------------------------------------
T.run(CFG, "weighted-2.h5", "ensemble.members=120", "integrator.t_end=60", *COMMON,
      "intersection.policy=weighted", wset, "ensemble.chunk=7", ranks=2)
T.check(members_equal("weighted.h5", "weighted-2.h5"), "weighted on 2 ranks: /members identical to 1 rank")
# stopped after 40 members on 1 rank, resumed on 2: the same as uninterrupted
wrun = [T.TWOFOLD, "run", CFG, "-o", "weighted-resumed.h5", "--quiet"] + [
    a for s in ("ensemble.members=120", "integrator.t_end=60", *COMMON, "intersection.policy=weighted", wset,
                "output.flush_interval=0.1") for a in ("--set", s)]
stopped = subprocess.run(wrun + ["--stop-after", "40"], capture_output=True, text=True).returncode
resumed = subprocess.run([T.MPIEXEC, "-n", "2"] + wrun + ["--resume", "--json"], capture_output=True, text=True)
done_before = json.loads(resumed.stdout.strip().splitlines()[-1])["resumed_from"] if resumed.returncode == 0 else -1
T.check(stopped == 3 and done_before >= 40 and members_equal("weighted.h5", "weighted-resumed.h5"),
        f"weighted, stopped (exit {stopped}) after {done_before} members and resumed on 2 ranks:"
        " /members identical")
T.run(CFG, "replayed.h5", "ensemble.members=120", "integrator.t_end=60", *COMMON,
      "intersection.policy=replay", "intersection.replay=weighted.h5")
T.check(members_equal("weighted.h5", "replayed.h5"), "weighted run replayed: /members identical")

# --- 3: regularised against the smoothed wheel --------------------------------------------
T.run(CFG, "regularised.h5", "ensemble.members=12", "integrator.t_end=40", *COMMON,
      "intersection.policy=regularised")
T.run(CFG, "regularised-replay.h5", "ensemble.members=12", "integrator.t_end=40", *COMMON,
      "exit.policy=replay", "exit.replay=regularised.h5")
T.run(CFG, "regularised-2.h5", "ensemble.members=12", "integrator.t_end=40", *COMMON,
      "intersection.policy=regularised", "ensemble.chunk=1", ranks=2)
T.check(members_equal("regularised.h5", "regularised-2.h5"), "regularised on 2 ranks: /members identical")
T.check(members_equal("regularised.h5", "regularised-replay.h5"),
        "regularised run replayed by exit.policy replay alone: /members identical")
reg = choices("regularised.h5")
T.check(reg and all(r[4] == 3 for r in reg), f"every choice logged as regularised ({len(reg)})")
with h5py.File("regularised.h5", "r") as f:
    log = f["members/event_log"][...]
    log = log.reshape(log.shape[0], -1, int(f["members/event_log"].attrs["slot_width"]))
    kinds = list(f["members/event_log"].attrs["kinds"])


def smoothed(eps):
    def rhs(t, x):
        h, g = hg(x)
        f0, b = f0_b(x)
        return f0 + b @ friction(h, g, math.tanh(h / eps))
    return rhs


def smoothed_branch(start, t0, t_arrive, eps):
    """The branch the smoothed wheel is on 0.1 after passing the arrival."""
    s = solve_ivp(smoothed(eps), (t0, t_arrive + 0.1), start, method="Radau", rtol=1e-9, atol=1e-13)
    h, g = hg(s.y[:, -1])
    if h > 20 * eps:
        return 1
    return 0 if g < 0 else -1


choice_kind = kinds.index("intersection_choice")


def arrivals(count):
    """The first `count` logged choices reached by a crossing into slip+: (choice, crossing)."""
    found = []
    for mlog in log:
        mlog = mlog[~np.isnan(mlog[:, 0])]
        for i in range(1, len(mlog)):
            ev, prev = mlog[i], mlog[i - 1]
            if ev[1] == choice_kind and prev[1] == kinds.index("crossing") and prev[3] == 1:
                found.append((ev, prev))
                if len(found) == count:
                    return found
    return found


tested, agree = 0, 0
for ev, prev in arrivals(22):
    branches = [smoothed_branch(prev[4:], prev[0], ev[0], eps) for eps in (1e-5, 1e-6, 1e-7)]
    tested += 1
    agree += branches[0] == branches[1] == branches[2] == int(ev[3])
    print(f"  t = {ev[0]:.4f}, r = {ev[4]:.6f}: engine {int(ev[3]):+d}, smoothed {branches}")
T.check(tested >= 20 and agree == tested,
        f"regularised = the smoothed wheel's branch at eps = 1e-5, 1e-6, 1e-7: {agree} of {tested}")


# the same arrivals through the engine's own smoothed route (model.smoothing: tanh, convex, on
# PETSc TS's Rosenbrock-W), decreasing eps: full smoothed runs take the branch regularised picks
def petsc_branch(start, t0, t_arrive, eps, tag):
    import yaml
    params = yaml.safe_load(open(CFG))["model"]["params"]
    cfg = {"job": "trajectory",
           "model": {"name": "wheel", "params": params,
                     "smoothing": {"law": "tanh", "epsilon": eps, "field": "convex"}},
           "initial": {"state": [float(v) for v in start]},
           "integrator": {"method": "petsc-ts", "t_end": float(t_arrive + 0.1 - t0),
                          "rtol": 1e-9, "atol": 1e-13},
           "output": {"samples": 2}}
    T.write(f"petsc-{tag}.yaml", yaml.safe_dump(cfg))
    T.run(f"petsc-{tag}.yaml", f"petsc-{tag}.h5")
    with h5py.File(f"petsc-{tag}.h5", "r") as f:
        h, g = hg(f["trajectory/state"][-1])
    return 1 if h > 20 * eps else 0 if g < 0 else -1


ts_tested, ts_agree = 0, 0
for ev, prev in arrivals(20):
    branches = [petsc_branch(prev[4:], prev[0], ev[0], eps, f"{ts_tested}-{k}")
                for k, eps in enumerate((1e-5, 1e-6))]
    ts_tested += 1
    ts_agree += branches[0] == branches[1] == int(ev[3])
    print(f"  PETSc TS: r = {ev[4]:.6f}: engine {int(ev[3]):+d}, eps 1e-5/1e-6 {branches}")
T.check(ts_tested >= 20 and ts_agree == ts_tested,
        f"regularised = the branch of full smoothed runs on PETSc TS at eps = 1e-5 and 1e-6: "
        f"{ts_agree} of {ts_tested}")

# the threshold along I from the blow-up written here: z = (h, g) / eps obeys the eps-free
# z' = a + G (F, M)(direction z, tanh(z_h)) at (r, 0, omega0); the orbit entering from z = 100
# along the arriving fan direction ends in the layer going to g < 0 (sticking flow) or in slip-


def blowup_branch(r):
    x = np.array([r, 0.0, W0])
    f0, b = f0_b(x)
    J = jac_hg(x)
    a, G = J @ f0, J @ b

    def field(t, z):
        return a + G @ friction(z[0], z[1], math.tanh(z[0]))

    def v_of(th):
        w = a + G @ friction(math.cos(th), math.sin(th), 1.0)
        return w @ [-math.sin(th), math.cos(th)]

    grid = np.linspace(1.0, math.pi / 2 - 1e-7, 800)
    vals = [v_of(t) for t in grid]
    roots = [brentq(v_of, grid[i], grid[i + 1]) for i in range(len(grid) - 1) if vals[i] * vals[i + 1] < 0]
    th = roots[-1]  # the arrivals' direction next to the g > 0 edge of h > 0

    def out(t, z):
        return abs(z[0]) - 20 if t > 1 else -1
    out.terminal = True

    def far(t, z):
        return abs(z[1]) - 200 if t > 1 else -1
    far.terminal = True
    s = solve_ivp(field, (0, 1e6), 100 * np.array([math.cos(th), math.sin(th)]), method="LSODA",
                  rtol=1e-10, atol=1e-12, events=(out, far))
    z = s.y[:, -1]
    return 1 if z[0] >= 20 else -1 if z[0] <= -20 else (0 if z[1] < 0 else -1)


lo, hi = 0.1815, 0.1830
T.check(blowup_branch(0.1755) == 0 and blowup_branch(lo) == 0 and blowup_branch(hi) == -1,
        "blow-up: sticking flow at r = 0.1755 and 0.1815, slip- at 0.1830")
while hi - lo > 5e-6:
    mid = 0.5 * (lo + hi)
    lo, hi = (mid, hi) if blowup_branch(mid) == 0 else (lo, mid)
print(f"blow-up threshold along I: r = {lo:.6f} .. {hi:.6f}")
rs = np.array([r[5][0] for r in reg])
sd = np.array([r[3] for r in reg])
T.check(((sd == 0) == (rs < hi)).all() and not ((rs > lo) & (rs < hi)).any(),
        f"every regularised choice ({len(reg)}) on the side of the blow-up threshold it belongs to")

# --- 4: bad input --------------------------------------------------------------------------
def refused(pattern, *sets):
    cmd = [T.TWOFOLD, "check", CFG] + [a for s in sets for a in ("--set", s)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    T.check(res.returncode == 2 and re.search(pattern, res.stderr) is not None,
            f"{' '.join(sets)}: exit {res.returncode}, {res.stderr.strip()[:200]}")


refused(r"--set intersection.weights=\{slide: 1\}.*key 'intersection.weights.slide'.*unknown departure kind 'slide'.*slip-, slip\+, sliding or escaping",
        "intersection.policy=weighted", "intersection.weights={slide: 1}")
refused(r"key 'intersection.weights.sliding'.*>= 0", "intersection.policy=weighted",
        "intersection.weights={sliding: -1}")
refused(r"key 'intersection.weights' applies only to intersection.policy 'weighted'",
        "intersection.weights={sliding: 1}")
refused(r"key 'intersection.weights': policy 'weighted' needs a mapping", "intersection.policy=weighted")
refused(r"'intersection.policy' is 'replay' but 'intersection.replay'.*missing", "intersection.policy=replay")
refused(r"key 'intersection.policy'.*expected one of uniform, weighted, regularised, replay",
        "intersection.policy=smooth")
with open(CFG) as f:
    text = f.read()
T.write("bad.yaml", text + "intersection:\n  policy: weighted\n  weights:\n    sliding: 1\n    stick: 2\n")
res = subprocess.run([T.TWOFOLD, "check", "bad.yaml"], capture_output=True, text=True)
line = len(text.splitlines()) + 5
T.check(res.returncode == 2 and f"bad.yaml:{line}:" in res.stderr and "'intersection.weights.stick'" in res.stderr,
        f"a config file names its line ({line}): {res.stderr.strip()[:160]}")
T.finish()

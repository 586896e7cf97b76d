"""member_sections.py — user events (poincare.event level or function) of Filippov members and
of bodies under spatial friction in the jobs ensemble and trajectory, against closed forms.

* Filippov, one switching function: x' = -k sign(x), (y, z) rotating (y' = z, z' = -y), from
  (x0, y0, z0) (each member's own, initial.spread): x = s max(|x0| - k t, 0) (s = sign x0:
  slip+ or slip- until t = |x0| / k, then sliding on x = 0), y = y0 cos t + z0 sin t,
  z = z0 cos t - y0 sin t.  The crossings of g = y + c x (both directions) are found here by
  brentq on that closed form, with the mode at each (s while slipping, 0 sliding).
  - ensemble, x0 uniform in [-2.5, 2.5] and y0 in [0.8, 1.2] (initial.sample), action log (the
    default), count 2: times, states and modes (slip-, slip+ and sliding all occur) of every
    member's first two crossings; members run on to t_end;
  - trajectory of one member from x0 near 1, log, count 5 (fewer crossings before t_end):
    /trajectory/poincare and poincare_mode the same, NaN-padded, the member's initial state
    read from its first sample;
  - trajectory, action stop, count 3: t_final and final_state are the third crossing's, the
    samples after it NaN.
  - ensemble, x' = -k sign(x) + 0.3 z, a level section x = 0, the switching surface itself:
    one crossing per member, at its arrival; sliding on along the section (x a rounding error
    about 0) records nothing more.
* Two switching functions (the engine of several): u' = -2 k sign(u) as well, so the mode code
  is (s_x + 1) + 3 (s_u + 1), each s the sign while slipping, 0 once stuck; ensemble, action
  stop, count 2: t_final the second crossing, every recorded mode code exact.
* A body under spatial friction (ball-pool, a codimension-2 kernel): a ball launched without
  spin at speed w0 slips with u = v along its direction, w' = -f - c w and |u|' = -7/2 f - c w
  (f = mu g, c = K / m), so w = (w0 + f/c) e^(-c t) - f/c and |u| = w - 5/2 f t; it rolls from
  the t_r where w = 5/2 f t (brentq), with w = w(t_r) e^(-5 c (t - t_r) / 7).
  - trajectory, function event "(speed - 1.5)*(speed - 0.5)" on the kernel's output speed:
    the crossing at speed 1.5 while slipping (closed form, mode 1 slip) and at 0.5 while
    rolling (mode 0 roll);
  - ensemble, level event v_y = 1.2 (slipping), action stop, count 1: t_final the closed form.
* Refusals name file, line and key: reset for both routes, extremum for a body under friction.
"""
import json
import math
import os
import subprocess

import h5py
import numpy as np
from scipy.optimize import brentq

import testlib as T

T.setup()
os.environ.setdefault("TWOFOLD_CACHE", os.path.join(T.WORK, "cache"))
os.makedirs(os.environ["TWOFOLD_CACHE"], mode=0o700, exist_ok=True)
MEMBERS = 8
K, C, T_END = 1.0, 0.5, 10.0

SLIDE3 = """    name: slide3
    state: [x, y, z]
    parameters: {k: {default: 1.0, min: 0.1, max: 10}, c: {default: 0.5}}
    switching: x
    slip:
      plus: {x: "-k", y: "z", z: "-y"}
      minus: {x: "k", y: "z", z: "-y"}
"""
SLIDE4 = """    name: slide4
    state: [x, u, y, z]
    parameters: {k: {default: 1.0, min: 0.1, max: 10}, c: {default: 0.5}}
    switching: {s1: x, s2: u}
    field: {x: "-k*s1", u: "-2*k*s2", y: "z", z: "-y"}
"""


def filippov(name, job, poincare, equations=SLIDE3, start="1.0, 1.0, 0.0", extra="",
             sample="spread: 0.3"):
    return T.write(f"{name}.yaml", f"""job: {job}
model:
  equations:
{equations}initial: {{state: [{start}], {sample}}}
integrator: {{t_end: {T_END}, rtol: 1.0e-11, atol: 1.0e-13}}
ensemble: {{members: {MEMBERS}, seed: 7}}
{extra}poincare:
{poincare}""")


def slipping(x0, rate, t):
    """A component under -rate sign(.) from x0 at t, and its sign while slipping (0 stuck)."""
    left = abs(x0) - rate * t
    return math.copysign(max(left, 0.0), x0), (math.copysign(1.0, x0) if left > 0 else 0.0)


def crossings(x0, y0, z0, u0=None):
    """(t, state, mode) at every zero of y + c x up to T_END, found on the closed form."""
    def state(t):
        x, sx = slipping(x0, K, t)
        y, z = y0 * math.cos(t) + z0 * math.sin(t), z0 * math.cos(t) - y0 * math.sin(t)
        if u0 is None:
            return [x, y, z], sx
        u, su = slipping(u0, 2 * K, t)
        return [x, u, y, z], (sx + 1) + 3 * (su + 1)
    g = lambda t: (state(t)[0][-2] if u0 is not None else state(t)[0][1]) + C * state(t)[0][0]
    ts = np.linspace(0, T_END, 20001)
    gs = [g(t) for t in ts]
    roots = [brentq(g, a, b, xtol=1e-15) for a, b, ga, gb in zip(ts[:-1], ts[1:], gs[:-1], gs[1:])
             if ga * gb < 0]
    return [(t, *state(t)) for t in roots]


def read(path, group="members"):
    with h5py.File(path, "r") as f:
        return {k: f[group][k][()] for k in f[group]}


def compare(rows, modes, want, count):
    """Largest time and state error of recorded rows against the closed form; None if the
    counts or any mode differ."""
    got = rows[~np.isnan(rows[:, 0])]
    want = want[:count]
    if len(got) != len(want) or not np.array_equal(modes[:len(got)], [w[2] for w in want]):
        return None
    return max((max(abs(r[0] - w[0]), np.abs(r[1:] - w[1]).max()) for r, w in zip(got, want)),
               default=0.0)


# --- Filippov, one switching function: ensemble, log --------------------------------------------
ens = filippov("ens", "ensemble", "  event: function\n  function: \"y + c*x\"\n  count: 2\n",
               sample="sample: {x: {dist: uniform, lo: -2.5, hi: 2.5}, "
               "y: {dist: uniform, lo: 0.8, hi: 1.2}}")
T.run(ens, "ens.h5")
r = read("ens.h5")
worst, ok, signs, modes = 0.0, True, set(), set()
for m in range(MEMBERS):
    x0, y0, z0 = r["initial_state"][m]
    signs.add(np.sign(x0))
    want = crossings(x0, y0, z0)
    modes |= {int(c) for c in r["poincare_mode"][m]}
    err = compare(r["poincare"][m].reshape(-1, 4), r["poincare_mode"][m], want, 2)
    ok &= err is not None and r["status"][m] == 1 and r["t_final"][m] == T_END and \
        len(want) > 2 and r["poincare_recorded"][m] == 2
    worst = max(worst, err if err is not None else np.inf)
T.check(ok and worst < 1e-8,
        f"Filippov ensemble, g = y + c x, action log, count 2: the first 2 of the "
        f"{MEMBERS} members' crossings against the closed form (times and states within "
        f"{worst:.1e}), modes {sorted(modes)} exact (x0 signs {sorted(signs)}); every member "
        f"runs on to t_end")

# --- lanes asked for: a section's members run one by one, the same bits -----------------------
# The lanes take no section (its crossings are recorded around one member's run), so Filippov
# members with poincare.event run member by member whatever integrator.lanes says.  The wheel has
# a lanes slip field, so `auto` would take lanes for it without a section: there this run crashed.
def same_files(a, b):
    ra, rb = read(a), read(b)
    return ra.keys() == rb.keys() and all(np.array_equal(ra[k], rb[k], equal_nan=True) for k in ra)


T.run(ens, "ens16.h5", "integrator.lanes=16")
WHEEL = T.write("wheel_section.yaml", open(os.path.join(T.CONFIGS, "wheel-fig5.yaml"))
                .read().replace("members: 500", "members: 6").replace("t_end: 300", "t_end: 20")
                + "poincare:\n  event: function\n  function: \"v\"\n  count: 3\n")
T.run(WHEEL, "wheel_auto.h5")
T.run(WHEEL, "wheel_one.h5", "integrator.lanes=1")
wheel = read("wheel_auto.h5")
T.check(same_files("ens.h5", "ens16.h5") and same_files("wheel_auto.h5", "wheel_one.h5") and
        (wheel["poincare_recorded"] > 0).any(),
        "poincare.event with lanes asked for (slide3, integrator.lanes 16) or taken by auto (the "
        "wheel, whose slip field has lanes): every dataset the same as member by member "
        f"(wheel crossings recorded {list(wheel['poincare_recorded'])})")

# --- the section is the switching surface itself: the arrival counts once --------------------
# x' = -k sign(x) + a z: x reaches 0 where x0 - s k t + a (z0 sin t + y0 (cos t - 1)) = 0
# (s = sign x0; brentq) and slides on x = 0 to t_end (|a z| < k), the sliding state's x a rounding
# error about 0: one crossing, not that noise.
SLIDE3N = SLIDE3.replace("slide3", "slide3n").replace('"-k"', '"-k + 0.3*z"').replace(
    '"k"', '"k + 0.3*z"')
surf = filippov("surf", "ensemble", "  event: level\n  component: x\n  level: 0\n  count: 5\n",
                SLIDE3N)
T.run(surf, "surf.h5")
r = read("surf.h5")


def arrival(x0, y0, z0):
    s = math.copysign(1.0, x0)
    x = lambda t: x0 - s * K * t + 0.3 * (z0 * math.sin(t) + y0 * (math.cos(t) - 1))
    return brentq(x, 0.0, 2 * abs(x0) / (K - 0.3 * math.hypot(y0, z0)), xtol=1e-15)


arrivals = [arrival(*x0) for x0 in r["initial_state"]]
got = [r["poincare"][m].reshape(-1, 4) for m in range(MEMBERS)]
T.check(all(r["poincare_recorded"][m] == 1 and abs(got[m][0, 0] - arrivals[m]) < 1e-8 and
            abs(got[m][0, 1]) < 1e-9 and np.isnan(got[m][1:]).all() for m in range(MEMBERS)),
        f"section x = 0 on the switching surface: each of the {MEMBERS} members records one "
        f"crossing, its arrival (closed form; recorded {list(r['poincare_recorded'])}), none "
        f"while it slides on to t_end")

# --- the same member traced: log, then stop ----------------------------------------------------
MEMBER = 3
tr = filippov("tr", "trajectory", "  event: function\n  function: \"y + c*x\"\n  count: 5\n",
              extra=f"output: {{samples: 101}}\n")
T.run(tr, "tr.h5", f"ensemble.member={MEMBER}")
t = read("tr.h5", "trajectory")
x0, y0, z0 = t["state"][0]
want = crossings(x0, y0, z0)
err = compare(t["poincare"], t["poincare_mode"].ravel(), want, 5)
T.check(err is not None and err < 1e-8 and len(want) < 5 and
        np.all(np.isnan(t["poincare"][len(want):])),
        f"trajectory of member {MEMBER}: /trajectory/poincare and poincare_mode against the "
        f"closed form (within {err if err is not None else np.inf:.1e}), NaN after the "
        f"{len(want)} crossings before t_end")

summary = T.run(tr, "trstop.h5", f"ensemble.member={MEMBER}", "poincare.action=stop",
                "poincare.count=3")
s = read("trstop.h5", "trajectory")
t3, x3, _ = want[2]
after = s["t"] > t3
T.check(summary["member_status"] == "ok" and abs(summary["t_final"] - t3) < 1e-8 and
        np.abs(np.array(summary["final_state"]) - x3).max() < 1e-8 and
        summary["poincare_recorded"] == 3 and np.all(np.isnan(s["state"][after])) and
        np.all(np.isfinite(s["state"][~after])),
        f"trajectory, action stop, count 3: t_final {summary['t_final']:.10f} and the final "
        f"state are the third crossing's (closed form {t3:.10f}); the {after.sum()} samples "
        f"after it are NaN")

# --- two switching functions: ensemble, stop ---------------------------------------------------
two = filippov("two", "ensemble", "  event: function\n  function: \"y + c*x\"\n  count: 2\n"
               "  action: stop\n", SLIDE4, "1.0, 1.0, 1.0, 0.0")
T.run(two, "two.h5")
w = read("two.h5")
worst, ok, codes = 0.0, True, set()
for m in range(MEMBERS):
    x0, u0, y0, z0 = w["initial_state"][m]
    want = crossings(x0, y0, z0, u0)
    err = compare(w["poincare"][m].reshape(-1, 5), w["poincare_mode"][m], want, 2)
    ok &= err is not None and w["status"][m] == 1 and abs(w["t_final"][m] - want[1][0]) < 1e-8
    worst = max(worst, err if err is not None else np.inf)
    codes |= {int(c) for c in w["poincare_mode"][m]}
T.check(ok and worst < 1e-8,
        f"two switching functions, action stop, count 2: every member ends at its second "
        f"crossing (closed form), crossings within {worst:.1e}, mode codes {sorted(codes)} exact")

# --- a body under spatial friction -------------------------------------------------------------
MASS, KV, MU, GRAV, W0, DIR = 0.17, 0.5, 0.2, 9.81, 2.0, 30.0
F, CV = MU * GRAV, KV / MASS


def slip_speed(t):
    return (W0 + F / CV) * math.exp(-CV * t) - F / CV


T_ROLL = brentq(lambda t: slip_speed(t) - 2.5 * F * t, 0.0, W0 / F)
W_ROLL = slip_speed(T_ROLL)


def time_at_speed(w):
    if w >= W_ROLL:
        return -math.log((w + F / CV) / (W0 + F / CV)) / CV
    return T_ROLL + 7 / (5 * CV) * math.log(W_ROLL / w)


def ball(name, job, poincare):
    return T.write(f"{name}.yaml", f"""job: {job}
model:
  name: ball-pool
  params: {{m: {MASS}, r: 0.028575, mu: {MU}, g: {GRAV}, K: {KV}}}
initial: {{speed: {W0}, direction_deg: {DIR}}}
integrator: {{t_end: 2, rtol: 1.0e-11, atol: 1.0e-13}}
ensemble: {{members: 2}}
poincare:
{poincare}""")


bt = ball("ball", "trajectory", "  event: function\n  function: \"(speed - 1.5)*(speed - 0.5)\"\n"
          "  count: 4\n")
summary = T.run(bt, "ball.h5")
b = read("ball.h5", "trajectory")
rows = b["poincare"][:int(summary["poincare_recorded"])]
want = [time_at_speed(1.5), time_at_speed(0.5)]
speeds = np.hypot(rows[:, 3], rows[:, 4])
T.check(len(rows) == 2 and np.abs(rows[:, 0] - want).max() < 1e-8 and
        np.abs(speeds - [1.5, 0.5]).max() < 1e-8 and
        np.array_equal(b["poincare_mode"][:2].ravel(), [1, 0]) and
        np.all(np.isnan(b["poincare"][2:])) and summary["t_final"] == 2,
        f"ball under 2-D friction, g = (speed - 1.5)(speed - 0.5) on the kernel's output: "
        f"crossings at t = {rows[0, 0]:.10f} (slipping) and {rows[-1, 0]:.10f} (rolling from "
        f"t_r = {T_ROLL:.6f}) against the closed form {want[0]:.10f}, {want[1]:.10f}; modes "
        f"slip, roll; the member runs on to t_end")

LEVEL = 1.2  # v_y while slipping
be = ball("balle", "ensemble", f"  event: level\n  component: v_y\n  level: {LEVEL}\n"
          "  count: 1\n  action: stop\n")
T.run(be, "balle.h5")
e = read("balle.h5")
t_level = time_at_speed(LEVEL / math.cos(math.radians(DIR)))
T.check(np.all(e["status"] == 1) and np.abs(e["t_final"] - t_level).max() < 1e-8 and
        np.abs(e["final_state"][:, 2] - LEVEL).max() < 1e-8 and
        np.all(e["poincare_recorded"] == 1) and np.all(e["poincare_mode"] == 1),
        f"ball ensemble, level v_y = {LEVEL}, action stop: t_final {e['t_final'][0]:.10f} "
        f"against the closed form {t_level:.10f}, recorded while slipping")


# --- refusals ----------------------------------------------------------------------------------
def line_of(path, text):
    return next(i + 1 for i, l in enumerate(open(path)) if text in l)


fres = filippov("fres", "ensemble", "  event: level\n  component: y\n  action: reset\n"
                "  reset: {y: \"0\"}\n")
T.refused(fres, [], f"fres.yaml:{line_of(fres, 'action: reset')}: key 'poincare.action': reset "
          "is not defined for a Filippov model ('slide3')")
bres = ball("bres", "ensemble", "  event: level\n  component: v_y\n  action: reset\n"
            "  reset: {v_y: \"0\"}\n")
T.refused(bres, [], f"bres.yaml:{line_of(bres, 'action: reset')}: key 'poincare.action': reset "
          "is not defined for a body under spatial friction ('ball-pool')")
bext = ball("bext", "trajectory", "  event: extremum\n  component: v_y\n")
T.refused(bext, [], f"bext.yaml:{line_of(bext, 'event: extremum')}: key 'poincare.event': a body "
          "under spatial friction ('ball-pool') is recorded at crossings of a level or of an "
          "expression only")
T.finish()

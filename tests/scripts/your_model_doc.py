"""your_model_doc.py — docs/YOUR_MODEL.md runs as written and its numbers are right.

Every fenced block after a `<!-- file: NAME -->` marker is written to NAME and every block
after `<!-- run -->` is run line by line in order, with `twofold` the build's executable and
the package twofold (python/) on the path of `/usr/bin/python3`, the system Python (h5py).
The results are then compared with an independent
computation of the same friction oscillator: scipy's solve_ivp on each smooth slip field with
the return to belt speed as an event, sticking decided by |k x + c vb| <= mus and the stick
phase moving with the belt in closed form.
* model check passes (exit 0, "result: ok") for the equations and the C source;
* departures from the belt at x_s = (mus - c vb)/k, the stick-slip period (from period.py's
  printout and from /trajectory/events of both routes) equal to scipy's;
* the C route's trajectory equals the equations' to the integrator's tolerance;
* every ensemble member's final state (read_ensemble.py's ensemble.txt) equals scipy's
  piecewise solution from that member's initial state;
* `twofold model build` names the library's model, and the library's trajectory equals the C
  source's bit for bit (same compiler and flags);
* the Lyapunov exponents of the stick-slip cycle: the largest is 0 (scipy finds a periodic
  orbit of an autonomous system) within its error, the second -inf (scipy's cycle sticks on
  every return, and the saltation into sticking has rank one), printed and stored as such;
* the figure's drawn arrays (phase_plane.npz) are the trajectory's samples, and its marked
  departures lie at scipy's (x_s, vb).
Section 9, the chain of two blocks with a contact each (two switching functions), against an
independent scipy solution: each mode integrated on its own, a contact on the belt sticking
while the static friction holds it (|force| <= mus, per mass: the contacts' multipliers are
decoupled here), else slipping the way the force pushes:
* model check passes for the equations and the C source; their trajectories agree to the
  integrator's tolerance (the library runs the ensemble and the spectrum below);
* every event of the trajectory (time, kind, contact) and its final state equal scipy's;
* every ensemble member's final state equals scipy's from that member's initial state;
* the spectrum: 0, ln|mu|/T of the cycle (mu from central differences of scipy's return map
  over one period, T its period), -inf, -inf, with "collapses 2 directions" printed;
* the figure's arrays are the trajectory's samples and its double-sticking intervals scipy's.
"""
import os
import re
import shlex
import subprocess

import h5py
import numpy as np
from scipy.integrate import solve_ivp

import testlib as T

T.setup()
DOC = os.path.join(os.environ["SOURCE_DIR"], "docs", "YOUR_MODEL.md")
os.environ["TWOFOLD_CACHE"] = os.path.join(T.WORK, "cache")
os.makedirs("bin")
for name, target in (("twofold", T.TWOFOLD),):
    T.write(f"bin/{name}", f'#!/bin/sh\nexec "{target}" "$@"\n')
    os.chmod(f"bin/{name}", 0o755)
env = dict(os.environ, PATH=os.path.abspath("bin") + ":" + os.environ["PATH"],
           PYTHONPATH=os.path.join(os.environ["SOURCE_DIR"], "python"), TWOFOLD_EXECUTABLE=T.TWOFOLD)

# --- the tutorial, as written -----------------------------------------------------------------
blocks = re.findall(r"<!-- (file: (\S+)|run) -->\n```\w*\n(.*?)```", open(DOC).read(), re.S)
T.check(sum(b[0] == "run" for b in blocks) >= 9 and sum(b[0] != "run" for b in blocks) >= 9,
        f"the tutorial has its files and commands marked ({len(blocks)} blocks)")
out = {}
for kind, name, body in blocks:
    if kind != "run":
        T.write(name, body)
        continue
    for line in body.strip().splitlines():
        res = subprocess.run(shlex.split(line), capture_output=True, text=True, env=env)
        out[line] = res.stdout
        T.check(res.returncode == 0, f"`{line}` exits 0 ({res.returncode}) {res.stderr.strip()[-300:]}")
for cfg in ("friction.yaml", "friction_c.yaml"):
    o = out.get(f"twofold model check {cfg}", "")
    T.check("result: ok" in o and "FAIL" not in o, f"model check {cfg}: {o.strip().splitlines()[-1:]}")

# --- the independent solution --------------------------------------------------------------------
K, C, MUS, MUK, VS, VB = 1.0, 0.05, 1.0, 0.5, 0.2, 0.3
XS = (MUS - C * VB) / K  # departure from the belt
TOL = dict(rtol=1e-12, atol=1e-13)


def slip(side):
    return lambda t, y: [y[1], -K * y[0] - C * y[1]
                         - side * (MUK + (MUS - MUK) * np.exp(-side * (y[1] - VB) / VS))]


def arrival(side):
    """Return to belt speed from the given side (a departure from the belt is not one)."""
    def event(t, y):
        return y[1] - VB
    event.terminal, event.direction = True, -side
    return event


def solve(y0, t_end):
    """The Filippov solution from y0 at t_end (every phase: slip, stick, crossing)."""
    t, y = 0.0, np.array(y0, float)
    on_belt = False
    for _ in range(1000):  # far more phases than 30 time units hold
        if t >= t_end:
            break
        if on_belt:  # moves with the belt until the spring and damper exceed static friction
            t_leave = t + (XS - y[0]) / VB
            if t_leave >= t_end:
                return np.array([y[0] + VB * (t_end - t), VB])
            t, y, on_belt = t_leave, np.array([XS, VB]), False
            side = -1  # tangential departure below belt speed
        else:
            side = 1 if y[1] > VB else -1
        sol = solve_ivp(slip(side), (t, t_end), y, events=arrival(side), method="DOP853", **TOL)
        if sol.status == 0:
            return sol.y[:, -1]
        t, y = sol.t_events[0][0], sol.y_events[0][0].copy()
        y[1] = VB
        force = -K * y[0] - C * VB
        on_belt = abs(force) <= MUS
        if not on_belt:  # crossing Sigma: nudge to the side the field points to
            y[1] = VB + np.sign(force) * 1e-14
    return y


def period():
    """One slip phase from the departure point, then the stick phase back to it."""
    sol = solve_ivp(slip(-1), (0, 100), [XS, VB], events=arrival(-1), method="DOP853", **TOL)
    t_slip, x_arr = sol.t_events[0][0], sol.y_events[0][0][0]
    assert abs(K * x_arr + C * VB) <= MUS, "the cycle sticks on its return"
    return t_slip + (XS - x_arr) / VB


P = period()
m = re.search(r"period (\S+)", out.get("/usr/bin/python3 period.py", ""))
T.check(m is not None and abs(float(m.group(1)) - P) < 1e-6,
        f"period.py prints the period {m and m.group(1)}; scipy {P:.8f}")
m = re.search(r"departures at x = (\S+)", out.get("/usr/bin/python3 period.py", ""))
T.check(m is not None and abs(float(m.group(1)) - XS) < 1e-6,
        f"departures at x = {m and m.group(1)}; (mus - c vb)/k = {XS}")
for h5 in ("friction.h5", "friction_c.h5"):
    with h5py.File(h5) as f:
        ev = f["/trajectory/events"][...]
        kinds = list(f["/trajectory/events"].attrs["kinds"])
    dep = ev[ev[:, 1] == kinds.index("slide_end")]
    per = np.diff(dep[:, 0])
    T.check(len(per) >= 5 and np.max(np.abs(per - P)) < 1e-6,
            f"{h5}: {len(per)} periods within {np.max(np.abs(per - P)):.1e} of scipy's {P:.8f}")
with h5py.File("friction.h5") as a, h5py.File("friction_c.h5") as b:
    d = np.max(np.abs(a["/trajectory/state"][...] - b["/trajectory/state"][...]))
T.check(d < 1e-6, f"C source and equations give the same trajectory (max difference {d:.1e})")
want_final = solve([0.0, 0.3], 60.0)
with h5py.File("friction.h5") as f:
    got = f["/trajectory/state"][-1]
T.check(np.max(np.abs(got - want_final)) < 1e-6, f"trajectory at t = 60: {got} vs scipy {want_final}")

o = out.get("/usr/bin/python3 read_ensemble.py", "")
T.check("16 members, 16 ok" in o, f"read_ensemble.py: {o.strip()!r}")
tab = np.loadtxt("ensemble.txt")
worst = max(np.max(np.abs(solve(r[:2], 30.0) - r[2:])) for r in tab)
T.check(len(tab) == 16 and worst < 1e-6,
        f"{len(tab)} ensemble members' final states equal scipy's (worst {worst:.1e})")

# --- the library built once, the Lyapunov exponents, the figure ------------------------------
o = out.get("twofold model build friction.c -o libfriction.so", "")
T.check("stribeck-oscillator-c" in o, f"model build names the library's model: {o.strip()!r}")
with h5py.File("friction_c.h5") as a, h5py.File("friction_lib.h5") as b:
    same = np.array_equal(a["/trajectory/state"][...], b["/trajectory/state"][...])
T.check(same, "the library's trajectory equals the C source's, bit for bit")
o = out.get("twofold run lyapunov.yaml -o lyapunov.h5 --overwrite", "")
T.check(re.search(r"± \S+ -inf ± ", o) is not None and "collapses 1 direction" in o,
        f"the printed spectrum ends in -inf, with the reason: {o.strip()!r}")
with h5py.File("lyapunov.h5") as f:
    lam, err = f["/lyapunov/spectrum"][...], f["/lyapunov/error"][...]
T.check(abs(lam[0]) <= max(3 * err[0], 1e-2) and lam[1] == -np.inf,
        f"spectrum {lam} ± {err}: 0 (a periodic orbit, period {P:.4f}) and -inf (it sticks)")
d = np.load("phase_plane.npz")
with h5py.File("friction.h5") as f:
    drawn = np.array_equal(d["x"], f["/trajectory/state"][:, 0]) and \
        np.array_equal(d["v"], f["/trajectory/state"][:, 1])
T.check(drawn, "the figure draws the trajectory's samples")
dep = d["departures"]
T.check(len(dep) >= 6 and np.max(np.abs(dep[:, 0] - XS)) < 1e-6 and np.max(np.abs(dep[:, 1] - VB)) < 1e-9,
        f"the figure marks {len(dep)} departures at (x_s, vb) = ({XS}, {VB})")
T.check(open("phase_plane.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n", "phase_plane.png written")
# --- section 9: two contacts ---------------------------------------------------------------------
for cfg in ("chain.yaml", "chain_c.yaml"):
    o = out.get(f"twofold model check {cfg}", "")
    T.check("result: ok" in o and "FAIL" not in o, f"model check {cfg}: {o.strip().splitlines()[-1:]}")
K1, K2 = 1.0, 1.0


def forces(y):
    """The forces on each mass other than its friction."""
    x1, v1, x2, v2 = y
    return (-K1 * x1 + K2 * (x2 - x1) - C * v1, -K2 * (x2 - x1) - C * v2)


def chain_field(mode):
    def f(t, y):
        F, dy = forces(y), [y[1], 0.0, y[3], 0.0]
        for i in (0, 1):
            if mode[i]:
                vr = y[2 * i + 1] - VB
                dy[2 * i + 1] = F[i] - mode[i] * (MUK + (MUS - MUK) * np.exp(-abs(vr) / VS))
        return dy
    return f


def chain_events(mode):
    evs = []
    for i in (0, 1):
        if mode[i]:
            def e(t, y, i=i, s=mode[i]):
                return s * (y[2 * i + 1] - VB)
        else:
            def e(t, y, i=i):
                return MUS - abs(forces(y)[i])
        e.terminal, e.direction = True, -1
        evs.append(e)
    return evs


def on_belt(y, i):
    F = forces(y)[i]
    return 0 if abs(F) <= MUS else (1 if F > 0 else -1)


def chain_solve(y0, t_end, log=None):
    """(final state, modes); log gets (t, 'stick' | 'cross' | 'release', contact, state)."""
    t, y = 0.0, np.array(y0, float)
    mode = [on_belt(y, i) if abs(y[2 * i + 1] - VB) < 1e-12 else int(np.sign(y[2 * i + 1] - VB))
            for i in (0, 1)]
    while t < t_end:
        r = solve_ivp(chain_field(mode), (t, t_end), y, method="DOP853", events=chain_events(mode), **TOL)
        t, y = r.t[-1], r.y[:, -1].copy()
        if r.status != 1:
            break
        i = next(j for j in (0, 1) if len(r.t_events[j]))
        if mode[i]:
            y[2 * i + 1] = VB
            new = on_belt(y, i)
            kind = "stick" if new == 0 else "cross"
        else:
            new = 1 if forces(y)[i] > 0 else -1
            kind = "release"
        if log is not None:
            log.append((t, kind, i))
        mode[i] = new
    return y, mode


log = []
want, _ = chain_solve([0, 0.3, 0.5, 0.3], 100.0, log)
with h5py.File("chain.h5") as a, h5py.File("chain_c.h5") as b:
    d = np.max(np.abs(a["/trajectory/state"][...] - b["/trajectory/state"][...]))
    got, ev = a["/trajectory/state"][-1], a["/trajectory/events"][...]
    kinds = list(a["/trajectory/events"].attrs["kinds"])
T.check(d < 1e-7, f"chain: C source and equations give the same trajectory (max difference {d:.1e})")
ev = ev[~np.isnan(ev[:, 0])]
names = {"stick": "slide_start", "cross": "crossing", "release": "slide_end"}


def contact(row):
    """The contact whose mode changed (modes coded (s1 + 1) + 3 (s2 + 1))."""
    a, b = int(row[2]), int(row[3])
    return 0 if a % 3 != b % 3 else 1


same = len(ev) == len(log) and all(
    kinds[int(r[1])] == names[k] and contact(r) == i for r, (t, k, i) in zip(ev, log))
dt = max((abs(r[0] - t) for r, (t, k, i) in zip(ev, log)), default=np.inf)
T.check(same and len(log) >= 20 and dt < 1e-7,
        f"chain: {len(ev)} events (scipy {len(log)}), kinds and contacts alike, times within {dt:.1e}")
T.check(np.max(np.abs(got - want)) < 1e-7, f"chain at t = 100: {got} vs scipy {want}")
with h5py.File("chain_ensemble.h5") as f:
    x0, x1 = f["/members/initial_state"][...], f["/members/final_state"][...]
    ok = np.all(f["/members/status"][...] == 1)
worst = max(np.max(np.abs(chain_solve(a, 50.0)[0] - b)) for a, b in zip(x0, x1))
T.check(ok and len(x1) == 24 and worst < 1e-6,
        f"chain: {len(x1)} ensemble members' final states equal scipy's (worst {worst:.1e})")


def return_map(x1):
    """From contact 1 leaving double sticking (force on mass 1 at -mus) to the next time."""
    x2 = ((K1 + K2) * x1 + C * VB - MUS) / K2
    t, y, mode = 0.0, np.array([x1, VB, x2, VB]), [-1, 0]
    while True:
        r = solve_ivp(chain_field(mode), (t, t + 100), y, method="DOP853", events=chain_events(mode), **TOL)
        t, y = r.t[-1], r.y[:, -1].copy()
        i = next(j for j in (0, 1) if len(r.t_events[j]))
        if mode[i]:
            y[2 * i + 1] = VB
            mode[i] = on_belt(y, i)
        elif i == 0 and mode == [0, 0]:
            return y[0], t
        else:
            mode[i] = 1 if forces(y)[i] > 0 else -1


def period_map(x1):
    """Mass 1 leaves double sticking twice per period."""
    xa, ta = return_map(x1)
    xb, tb = return_map(xa)
    return xb, ta + tb


# start from scipy's own last departure of mass 1 out of double sticking
xs = chain_solve([0, 0.3, 0.5, 0.3], [t for t, k, i in log if k == "release" and i == 0][-1])[0][0]
for _ in range(30):
    xs, period = period_map(xs)
mu = (period_map(xs + 1e-5)[0] - period_map(xs - 1e-5)[0]) / 2e-5
lam2 = np.log(abs(mu)) / period
o = out.get("twofold run chain_lyapunov.yaml -o chain_lyapunov.h5 --overwrite", "")
T.check("collapses 2 directions" in o, f"the chain's printed spectrum says why two are -inf: {o.strip()!r}")
with h5py.File("chain_lyapunov.h5") as f:
    lam, err = f["/lyapunov/spectrum"][...], f["/lyapunov/error"][...]
T.check(abs(lam[0]) <= max(3 * err[0], 2e-3) and abs(lam[1] - lam2) <= max(3 * err[1], 2e-3)
        and lam[2] == -np.inf and lam[3] == -np.inf,
        f"chain spectrum {lam} ± {err}: 0, ln|mu|/T = {lam2:.5f} (mu {mu:.5f}, T {period:.5f}), -inf, -inf")
d = np.load("chain.npz")
with h5py.File("chain.h5") as f:
    st = f["/trajectory/state"][...]
    drawn = np.array_equal(d["t"], f["/trajectory/t"][...]) and np.array_equal(d["v1"], st[:, 1]) \
        and np.array_equal(d["v2"], st[:, 3])
T.check(drawn, "the chain figure draws the trajectory's samples")
# scipy's double-sticking intervals: both masses start on the belt; an interval ends at the
# next event and starts at an arrival that makes both stick
m, both, start = [0, 0], [], 0.0
for t, k, i in log:
    if m == [0, 0]:
        both.append((start, t))
    m[i] = 0 if k == "stick" else 1
    start = t
got_both = d["both"]
T.check(len(got_both) == len(both) and len(both) >= 6 and np.max(np.abs(got_both - np.array(both))) < 1e-7,
        f"the figure shades {len(got_both)} double-sticking intervals, scipy {len(both)}")
T.check(open("chain.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n", "chain.png written")
T.finish()

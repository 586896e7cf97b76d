"""valve.py — the pressure-relief-valve reference (valve_ref.py) and the boost::odeint peer of the
benchmark (bench_valve_odeint) against physics derived here and against each other.

1. Stationary state: v = 0, p* = x* + delta, q = x* sqrt(p*).  Its stability from the
   eigenvalues of a finite-difference Jacobian of the vector field written here (not from the
   Routh–Hurwitz expression in valve_ref): it changes at valve_ref.hopf_q(), and there the
   critical pair is +-i omega with omega^2 = 1 + kappa b.
2. Above q_H (q = 10) the reference stops early at x* of (1); at q = 9 the decaying oscillation
   in its linear regime has the eigenvalues' period 2 pi / Im(lambda) between maxima and the
   amplitude ratio exp(Re(lambda) T) between successive maxima.
3. The reference against itself: rtol 1e-11 and 1e-9 on an impacting periodic orbit; its chatter
   convention: where a chatter sequence is cut off does not move the lift-off; impacts that a
   step jumps over (x under the seat and back) are found.
4. odeint (when built) against the reference on periodic orbits (the recorded sets), and at
   q = 10 against x*; its command line rejects bad input.
5. The benchmark's branch classification and set distance on sequences built here.
"""
import math
import os
import subprocess
import sys

import numpy as np

import testlib as T
import valve_ref as V

T.setup()


def hausdorff(a, b):
    d = np.abs(np.asarray(a)[:, None] - np.asarray(b)[None, :])
    return float(max(d.min(axis=1).max(), d.min(axis=0).max()))


def field(y, q):
    x, v, p = y
    return np.array([v, -1.25 * v - (x + 10.0) + p, 20.0 * (q - x * math.sqrt(p))])


def eig(q):
    xs = brent_xstar(q)
    y0, J, h = np.array([xs, 0.0, xs + 10.0]), np.zeros((3, 3)), 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        J[:, k] = (field(y0 + e, q) - field(y0 - e, q)) / (2 * h)
    return np.linalg.eigvals(J)


def brent_xstar(q):
    lo, hi = 0.0, q + 1.0  # x sqrt(x + 10) is increasing
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if mid * math.sqrt(mid + 10.0) < q else (lo, mid)
    return 0.5 * (lo + hi)


# 1. stationary state and its loss of stability
qh = V.hopf_q()
for q in (0.5, 3.0, 10.0):
    xs, ps = V.stationary(q)
    T.check(abs(xs - brent_xstar(q)) < 1e-12 and abs(ps - xs - 10.0) < 1e-12 and
            abs(xs * math.sqrt(ps) - q) < 1e-12, f"stationary state at q = {q}: x* = {xs}")
re_below, re_above = max(eig(qh - 1e-3).real), max(eig(qh + 1e-3).real)
T.check(re_below > 0 > re_above, f"q_H = {qh:.6f}: max Re(lambda) {re_below:.2e} below, {re_above:.2e} above")
im = max(abs(eig(qh).imag))
T.check(abs(im - V.hopf_omega(qh)) < 1e-5, f"Hopf frequency {im:.8f} vs omega {V.hopf_omega(qh):.8f}")
T.check(8.4 < qh < 8.6, f"q_H = {qh} inside the scanned range, above the impacting orbits")

# 2. above q_H: the stationary state and the linear decay towards it
r10 = V.simulate(10.0, 2048, 64)
x10 = brent_xstar(10.0)
T.check(r10.converged and len(r10.x) == 1 and abs(r10.x[0] - x10) < 1e-8 and r10.kinds.count("impact") == 0,
        f"q = 10: converged {r10.converged} after {r10.events} events to {r10.x} (x* = {x10})")
lam = max(eig(9.0), key=lambda z: z.imag)
r9 = V.simulate(9.0, 150, 160)
xs9 = brent_xstar(9.0)
mx = [(t, x - xs9) for t, x, k in zip(r9.times, r9.x, r9.kinds) if k == "max" and 1e-7 < x - xs9 < 1e-3]
T.check(len(mx) >= 10, f"q = 9: {len(mx)} maxima in the linear regime")
if len(mx) >= 10:
    t, a = np.array(mx).T
    per = np.diff(t)
    ratio = a[1:] / a[:-1]
    T.check(np.max(np.abs(per / (2 * math.pi / lam.imag) - 1)) < 1e-5,
            f"q = 9: period between maxima {per.mean():.8f} vs 2 pi/Im(lambda) {2 * math.pi / lam.imag:.8f}")
    T.check(np.max(np.abs(ratio / np.exp(lam.real * per) - 1)) < 1e-4,
            f"q = 9: amplitude ratio {ratio.mean():.8f} vs exp(Re(lambda) T) {math.exp(lam.real * per.mean()):.8f}")

# 3. the reference at two tolerances on an impacting period-2 orbit (impact, maximum)
a = V.simulate(3.0, 512, 16)
b = V.simulate(3.0, 512, 16, rtol=1e-9, atol=1e-9)
T.check(a.kinds.count("impact") == 8 and not a.converged and np.ptp(a.x[a.x > 0]) < 1e-8,
        f"q = 3: period-2 impacting orbit, kinds {a.kinds[:4]}, maxima {a.x[a.x > 0][:3]}")
T.check(hausdorff(a.x, b.x) < 1e-7, f"q = 3: rtol 1e-11 vs 1e-9: {hausdorff(a.x, b.x):.2e}")

# 3b. chatter: the rest on the seat ends where p = delta whatever impact ends the sequence, so
# the threshold V_STICK changes only how many bounces (an impact and an apex each) are counted:
# from 1e-5 to 1e-6 the speeds fall 10-fold more, ln 10/ln(1/r) = 10.3 bounces
runs = {}
for vs in (1e-5, 1e-6):
    V.V_STICK = vs
    runs[vs] = V.simulate(0.2, 0, 200)
V.V_STICK = 1e-6
(ra, rb), (sa, sb) = (runs[1e-5], runs[1e-6]), (runs[1e-5].sticks[0], runs[1e-6].sticks[0])
T.check(abs(ra.times[sa] - rb.times[sb]) < 1e-9 and abs(ra.x[sa] - rb.x[sb]) < 1e-9
        and ra.kinds[sa] == "max" and 2 * 10 <= sb - sa <= 2 * 11,
        f"q = 0.2: rest after event {sa} / {sb}; the next maximum at t = {ra.times[sa]:.12f} / "
        f"{rb.times[sb]:.12f}, x = {ra.x[sa]:.12f} / {rb.x[sb]:.12f}")

# 3c. near grazing (q = 7.4) shallow impacts fall inside one step, x dipping under the seat and
# back: they must still be impacts, never minima below the seat
r74 = V.simulate(7.4, 0, 600)
T.check(r74.dips > 0 and r74.x.min() == 0.0 and all(k != "min" or x > 0 for k, x in zip(r74.kinds, r74.x)),
        f"q = 7.4: {r74.dips} impacts found under a step, min x {r74.x.min()}")

# 4. the odeint peer
oi = os.path.join(os.path.dirname(T.TWOFOLD), "bench_valve_odeint")
if not os.path.exists(oi):
    print(f"SKIP odeint peer: {oi} not built (no C++ compiler or Boost headers)")
else:
    def odeint(q):
        subprocess.run([oi, repr(q), repr(q), "1", "o.csv"], check=True, capture_output=True)
        f = open("o.csv").read().splitlines()[1].split(",")
        return bool(int(f[1])), np.array([float(v) for v in f[3:3 + int(f[2])]])

    # period 4 in events: impact, maximum, minimum off the seat, maximum
    conv, xo = odeint(5.8)
    ref = V.record(5.8)
    T.check(not conv and len(xo) == 64 and hausdorff(xo, ref) < 1e-7,
            f"odeint vs reference at q = 5.8: {hausdorff(xo, ref):.2e}")
    conv, xo = odeint(7.4)
    T.check(not conv and xo.min() == 0.0, f"odeint at q = 7.4 (grazing impacts): min x {xo.min()}")
    conv, xo = odeint(10.0)
    T.check(conv and len(xo) == 1 and abs(xo[0] - x10) < 1e-8, f"odeint at q = 10: {conv}, {xo} (x* = {x10})")
    for bad in (["0", "1", "4"], ["1", "0.5", "4"], ["1", "2", "0"], ["1", "x", "3"], ["1", "2"]):
        p = subprocess.run([oi, *bad], capture_output=True, text=True)
        T.check(p.returncode != 0 and "q_min" in p.stderr, f"odeint rejects {bad}: {p.returncode}, {p.stderr.strip()}")

# 5. the benchmark's comparison (bench/valve_compare.py): branches and set distances
sys.path.insert(0, os.path.join(os.environ["SOURCE_DIR"], "bench"))
import valve_compare as C  # noqa: E402

orbit = np.tile([0.0, 2.5, 0.0, 2.75], 16)
T.check(C.branch(False, orbit) == "period-4" and C.branch(False, orbit[:-1] + 1e-7) == "period-4"
        and C.branch(True, np.array([x10]), 10.0) == "stationary"
        and C.branch(False, x10 + 1e-7 * (-1.0) ** np.arange(64), 10.0) == "decaying"
        and C.branch(False, np.linspace(0, 1, 64)) == "aperiodic", "valve_compare.branch")
T.check(abs(C.hausdorff(orbit, np.array([2.75, 0.0, 2.5 + 3e-9])) - 3e-9) < 1e-15
        and abs(C.hausdorff(orbit, np.array([0.0, 2.5])) - 0.25) < 1e-15, "valve_compare.hausdorff")

T.finish()

#!/usr/bin/python3
"""impact_ball.py — period doubling of the ball on a vibrating table against the standard
impact-oscillator analysis, derived here independently.

Table s = A sin(w t), flight under gravity g, Newton restitution r relative to the table.  The
impact map (t_k, u_k) -> (t_k+1, u_k+1) (u: ball speed after impact) is defined implicitly by
  A sin(w t_k) + u_k D - g D^2 / 2 = A sin(w t_k+1),   D = t_k+1 - t_k,
  u_k+1 = (1 + r) A w cos(w t_k+1) - r (u_k - g D).
Period 1 (D = T = 2 pi / w): u = g T / 2 and cos(w t) = g T (1 - r) / (2 (1 + r) A w), which
exists from A = pi g (1 - r) / ((1 + r) w^2).  Its Jacobian (implicit differentiation, sympy)
has an eigenvalue -1 at A_pd (Brent).  Just below A_pd the engine's impacts (scan.quantity
poincare) must settle on that orbit, with that speed and phase; just above, on period 2."""
import os

import subprocess

import h5py
import numpy as np
import sympy as sp
from scipy.optimize import brentq

import testlib as T

g, r, w = 9.81, 0.5, 2 * np.pi
Tp = 2 * np.pi / w
t0, u0, t1, A = sp.symbols("t0 u0 t1 A", real=True)
D = t1 - t0
G = A * sp.sin(w * t0) + u0 * D - g * D**2 / 2 - A * sp.sin(w * t1)
U1 = (1 + r) * A * w * sp.cos(w * t1) - r * (u0 - g * D)
d1 = [-sp.diff(G, v) / sp.diff(G, t1) for v in (t0, u0)]
J = sp.Matrix([[d1[0], d1[1]],
               [sp.diff(U1, t0) + sp.diff(U1, t1) * d1[0], sp.diff(U1, u0) + sp.diff(U1, t1) * d1[1]]])
Jf = sp.lambdify((t0, u0, t1, A), J, "numpy")


def phase(a):
    return np.arccos(g * Tp * (1 - r) / (2 * (1 + r) * a * w))


def jac(a):
    ph = phase(a) / w
    return np.array(Jf(ph, g * Tp / 2, ph + Tp, a), dtype=float)


A_exist = np.pi * g * (1 - r) / ((1 + r) * w * w)
A_pd = brentq(lambda a: np.linalg.det(jac(a) + np.eye(2)), 1.01 * A_exist, 3 * A_exist)
print(f"period 1 exists from A = {A_exist:.6f}, doubles at A = {A_pd:.6f}")
closed = g / w**2 * np.hypot(np.pi * (1 - r) / (1 + r), 2 * (1 + r**2) / (1 + r) ** 2)
T.check(abs(A_pd - closed) < 1e-9, f"A_pd {A_pd:.10f} equals the closed form {closed:.10f}")
T.check(np.abs(np.linalg.eigvals(jac(0.98 * A_pd))).max() < 1,
        "period 1 is stable just below A_pd (independent check of the root)")

T.setup()
cfg = os.path.join(T.CONFIGS, "bouncing-ball-scan.yaml")
for factor, period in ((0.98, 1), (1.02, 2)):
    a = factor * A_pd
    ph = phase(a)
    start = f"[{a * np.sin(ph) + 1e-3}, {g * Tp / 2}, {ph / w}]"  # just above the orbit's impact
    T.run(cfg, "ball.h5", f"scan.x.min={a}", f"scan.x.max={a + 1e-9}", "scan.x.points=2",
          f"initial.state={start}")
    with h5py.File("ball.h5") as f:
        s = f["members/poincare"][0].reshape(-1, 4)
        found = int(f["members/poincare_period"][0])
        counts = f["members/impacts"][0]
        recorded = int(f["members/poincare_recorded"][0])
    T.check(found == period and counts[1] == 0,
            f"A = {factor} A_pd: period {found} (expected {period}), chattering {counts[1]}")
    if period == 1:
        T.check(np.abs(s[:, 2] - g * Tp / 2).max() < 1e-7,
                f"period 1: speed after impact {s[-1, 2]:.10f} = g T / 2 = {g * Tp / 2:.10f}")
        pe = np.mod(w * s[:, 3], 2 * np.pi)
        T.check(np.abs(pe - ph).max() < 1e-7, f"period 1: impact phase {pe[-1]:.10f} = {ph:.10f}")
        lag = np.abs(s[:recorded, 3] - s[:recorded, 0] - ph / w).max()  # tau(0) = ph / w
        T.check(lag < 1e-6, f"the state's clock tau follows t (within {lag:.1e})")
    else:
        T.check(abs(s[-1, 2] - s[-2, 2]) > 1e-3 and abs(s[-1, 2] - s[-3, 2]) < 1e-7,
                f"period 2: speeds {s[-2, 2]:.6f}, {s[-1, 2]:.6f} alternate")
# The lyapunov job on the period-1 orbit: the exponents are ln |mu| / T of the impact map's
# multipliers (and 0 along the flow); each block restarts its tangents from the identity, which
# biases a block's estimate by O(1 / block time) (~0.8 / block here), so blocks of 2000.
a = 0.98 * A_pd
ph = phase(a)
mu = np.sort(np.log(np.abs(np.linalg.eigvals(jac(a)))) / Tp)[::-1]
ly = T.write("ly.yaml", f"""job: lyapunov
model: {{name: bouncing_ball, params: {{g: {g}, r: {r}, A: {a}, omega: {w}}}}}
initial: {{state: [{a * np.sin(ph) + 1e-3}, {g * Tp / 2}, {ph / w}]}}
integrator: {{rtol: 1e-11, atol: 1e-11}}
lyapunov: {{transient: 50, duration: 4000, interval: 1, blocks: 2}}
output: {{file: ly.h5}}
""")
spec = np.array(T.run(ly, "ly.h5")["spectrum"])
# (0 for the clock: within the same 1e-3, the one-time alignment of the generic start frame)
T.check(abs(spec[0]) < 1e-3 and np.abs(spec[1:] - mu).max() < 1e-3,
        f"spectrum {spec} against 0 and ln|mu|/T = {mu}")
T.check(abs(spec.sum() - 2 * np.log(r) / Tp) < 1e-9,
        f"sum {spec.sum():.12f} = 2 ln r / T (the impact map's determinant r^2)")

# An orbit that chatters into sticking (A w^2 just above g: the ball leaves the table, chatters
# back and rides it until the table's acceleration falls below -g).  Riding the table, the ball's
# (y, v) are the table's, (A sin w tau, A w cos w tau), and it leaves where sin w tau = g / (A w^2):
# a perturbation of y or v dies in finite time, one of the clock tau is a shift in time.  So the
# spectrum is 0 (the clock) and -inf, -inf.  Checked here in two ways: (1) trajectories from
# starts 1e-6 apart in y or v end in the same state, and one from a start 1e-6 apart in tau ends
# 1e-6 f away (f the field there); (2) the lyapunov job gives 0 within its error and -inf twice
# (a block ending on the table hands its state, below it by the integration's drift, to the
# next); tests/unit/test_impact.c compares the tangent vectors through sticking with
# differences of the flow map.  Before the tangent vectors were carried onto the table at every
# arrival this run printed +6.7, and until now it was refused.
def ball(name, job, params, state, atol, job_keys):
    """A config of the ball for a trajectory or a lyapunov job, written to name."""
    return T.write(name, f"""job: {job}
model: {{name: bouncing_ball, params: {params}}}
initial: {{state: {state}}}
integrator: {{rtol: 1e-10, atol: {atol}{', t_end: ' + str(job_keys) if job == 'trajectory' else ''}}}
""" + (f"lyapunov: {job_keys}\n" if job == "lyapunov" else ""))


BALL = "{g: 9.81, r: 0.5, A: 0.12, omega: 10}"
traj = ball("stick_tr.yaml", "trajectory", BALL, "[0.1, 0, 0]", 1e-12, 10)
ends = [np.array(T.run(traj, f"tr{i}.h5", f"initial.state={s}")["final_state"])
        for i, s in enumerate(("[0.1, 0, 0]", "[0.100001, 0, 0]", "[0.1, 0.000001, 0]",
                                "[0.1, 0, 0.000001]"))]
T.check(max(np.abs(ends[1] - ends[0]).max(), np.abs(ends[2] - ends[0]).max()) < 1e-9,
        f"starts 1e-6 apart in y or v end {np.abs(ends[1] - ends[0]).max():.1e}, "
        f"{np.abs(ends[2] - ends[0]).max():.1e} apart (perturbations across the table die)")
y, v, tau = ends[0]
ph, gg, AA, ww = 10 * tau, 9.81, 0.12, 10
on_table = abs(y - AA * np.sin(ph)) < 1e-9 and abs(v - AA * ww * np.cos(ph)) < 1e-9
f = np.array([v, -AA * ww * ww * np.sin(ph), 1.0]) if on_table else np.array([v, -gg, 1.0])
shift = (ends[3] - ends[0]) / 1e-6
T.check(np.abs(shift - f).max() < 1e-3 * np.abs(f).max(),
        f"a start 1e-6 apart in tau ends 1e-6 x {shift} apart, the field there {f} "
        f"({'on the table' if on_table else 'in flight'}): a shift in time")
stick = ball("stick.yaml", "lyapunov", BALL, "[0.1, 0, 0]", 1e-12,
             "{exponents: 3, transient: 20, duration: 1000, interval: 1.0, blocks: 10}")
s = T.run(stick, "stick.h5")
lam, err = s["spectrum"], s["spectrum_error"]
T.check(abs(lam[0]) < 3 * err[0] + 1e-3 and lam[1] is None and lam[2] is None,
        f"chattering into sticking: spectrum {lam} +- {err} (0 and -inf twice)")

# A ball that sticks between long irregular excursions (A = 0.4533, omega = 2 pi, r = 0.5).
# Every release leaves the table in the same state at the same table phase, so an orbit that
# sticks twice is periodic, and for infinitesimal perturbations superstable (the exact
# linearisation: 0, -inf, -inf).  But between arrivals perturbations grow (low-speed impacts
# of a chattering sequence by 1/u each, then the free excursion) so far that starts 1e-12
# apart stick at different episodes: the orbit the engine computes is sensitive, and the QR
# average, which measures that growth, reports it (lambda_1 > 0, and -inf twice for the
# directions every arrival kills).
EXC = "{g: 9.81, r: 0.5, A: 0.4533, omega: 6.283185307179586}"
exc_tr = ball("exc_tr.yaml", "trajectory", EXC, "[0.61, 4.905, 0.1266]", 1e-10, 300)
e0 = T.run(exc_tr, "exc0.h5")
e1 = T.run(exc_tr, "exc1.h5", "initial.state=[0.610000000001, 4.905, 0.1266]")
gap = np.abs(np.array(e1["final_state"]) - np.array(e0["final_state"])).max()
T.check(gap > 1e-3 and e0["releases"] > 3,
        f"A = 0.4533: starts 1e-12 apart end {gap:.2g} apart ({e0['releases']} and "
        f"{e1['releases']} releases): sensitive despite sticking")
exc_ly = ball("exc_ly.yaml", "lyapunov", EXC, "[0.61, 4.905, 0.1266]", 1e-10,
              "{exponents: 3, transient: 100, duration: 400, interval: 1.0, blocks: 10}")
s = T.run(exc_ly, "exc_ly.h5")
T.check(s["spectrum"][0] > 0.1 and s["spectrum"][1:] == [None, None],
        f"A = 0.4533: spectrum {s['spectrum']} (positive, then -inf twice)")

# An ensemble on a fixed table from perturbed starts (y0, v0): members starting below the table
# fail (a recorded status, the others go on); the others chatter to rest, sticking from
# t_inf = t1 + 2 r V / (g (1 - r)), V = sqrt(v0^2 + 2 g y0), t1 = (v0 + V) / g.
ens = T.write("ens.yaml", f"""job: ensemble
model: {{name: bouncing_ball, params: {{g: {g}, r: {r}, A: 0}}}}
initial: {{state: [0.0, 1.0, 0.0], spread: 0.01}}
integrator: {{t_end: 2.0, rtol: 1e-12, atol: 1e-12}}
ensemble: {{members: 16, seed: 7}}
output: {{file: ens.h5}}
""")
js = T.run(ens, "ens.h5", ranks=2)
with h5py.File("ens.h5") as f:
    m = f["members"]
    x0, st, counts, stick = (m[k][...] for k in ("initial_state", "status", "impacts", "stick_time"))
below = x0[:, 0] < 0
T.check((st[below] == 6).all() and (st[~below] == 1).all() and below.any() and (~below).any(),
        f"{below.sum()} members starting below the table failed, {(~below).sum()} ran ok")
V = np.sqrt(x0[:, 1] ** 2 + 2 * g * x0[:, 0])
t_inf = (x0[:, 1] + V) / g + 2 * r * V / (g * (1 - r))
err = np.abs(stick[~below] - (2.0 - t_inf[~below])).max()
T.check(err < 1e-9 and (counts[~below, 1] == 1).all(),
        f"stick time 2 - t_inf for every ok member (error {err:.1e}), one chattering episode each")
# the whole scan of configs/bouncing-ball-scan.yaml (200 amplitudes, 0.3 s): every point ends
# ok.  Free flight is exactly quadratic, so steps run far past the next impact and a chattering
# ball's last low bounce can be 1e-8 of a sample interval: an event locator that missed such an
# excursion ended 25 of these points as zeno.
import h5py  # noqa: E402

js = T.run(cfg, "scan_all.h5")
with h5py.File("scan_all.h5") as f:
    statuses = f["members/status"][...]
    counts = f["members/impacts"][...].reshape(len(statuses), -1)
T.check(js["failed"] == 0 and len(statuses) == 200 and len(set(statuses.tolist())) == 1
        and (counts[:, 1] > 0).sum() > 50,
        f"the 200-point scan: {js['failed']} failed, {int(counts[:, 0].sum())} impacts, "
        f"{int((counts[:, 1] > 0).sum())} points with chattering")
T.finish()

"""flowmeter.py — the rotating ball flowmeter (Antali 2017, chapter 4) on the dual-contact
engine (src/engine/dual_contact.c) against closed forms and independent integrations written here.
Parameters of Example 4.4 (g = 1.35, c = 0.039, d = 0.096, j = 2/5), three friction regimes.

1. Rolling-rolling (4.34): v' = -c/(1+2j) (v - v_f), so v = v_f + (v0 - v_f) e^{-ct/(1+2j)}
   exactly while X stays in Sigma_RR (mu = 0.6, v_f = 0.5 below sqrt(gd/j)).
2. mu > j: rolling ends where the codim-1 sliding region of F_SR at Sigma_RR stops being
   attracting, e1+ . F_SR(u1+ -> 0+) = 0 from (4.29-4.30): -c/(1+j)(v - v_f) =
   (1+2j)/(j(1+j)) mu (g - j v^2/d) — at the stationary state (v = v_f) this is
   v = sqrt(gd/j) of (4.52), during the spin-up the drag shifts it; the time follows from
   case 1.  Then the ball slips at the bottom only (case SR); the SR motion equals scipy's
   integration of F_SR from the transition state, and it settles on
   X_SR = (v_f - gd/(j v_f), 0, 0, v_f) (4.65).
3. mu < j: rolling ends where the double discontinuity gets a neutral limit direction:
   F_SS(d+ = (cos a, sin a), d- = (cos b, sin b)) with zero u1+, u1-, u2 components
   ((4.60); at v = v_f this gives a = b = pi/2 and v_RR/SS of (4.63)), solved here by
   fsolve from F_SS written out from (4.24)-(4.27); both contacts then slip, and the ball
   settles on X_SS of (4.68-4.70) (the parametrisation of the errata:
   s = sin phi, D = mu^2(1 + j s^2) + (j - mu)s, v^2 = g d mu (1 + mu s^2)/D, ...), whose
   v_f(phi) is inverted here by brentq; both for mu < mu_fold and mu_fold < mu < j.
4. Hysteresis (mu_fold < mu < j, sqrt(gd/mu) < v_f < v_fold): started rolling the ball ends
   on the lower X_SS branch, started on X_SR it stays there (Fig. 4.6).
5. postproc/flowmeter_diagram.py runs a coarse sweep and draws its PNG.
6. Job codim2-point at the stationary X_RR = (0, 0, 0, v_f): Proposition 3.3's tests change
   sign exactly at the thesis' thresholds — for mu < j the double discontinuity's largest
   R^ at v_RR/SS (4.63), in the direction phi+ = phi- = pi/2 (4.61); for mu > j the
   codim-1 tangency of F_SR at sqrt(gd/j) (4.52), and the wall never starts slipping (4.57).
"""
import math
import os
import subprocess

import h5py
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq, fsolve

import testlib as T

T.setup()
g, d, j, c = 1.35, 0.096, 0.4, 0.039


def run(name, mu, vf, state, t_end, samples=2, atol=1e-12):
    cfg = T.write(name + ".yaml", f"""
job: trajectory
model: {{name: flowmeter, params: {{g: {g}, d: {d}, j: {j}, c: {c}, mu: {mu}, v_f: {vf}}}}}
initial: {{state: {list(state)}}}
integrator: {{t_end: {t_end}, rtol: 1.0e-10, atol: {atol}}}
output: {{samples: {samples}, event_log: 50}}
""")
    s = T.run(cfg, name + ".h5")
    f = h5py.File(name + ".h5", "r")
    return s, f["trajectory/events"][...], f


def x_ss(mu, vf):
    """Stationary dual-point slipping states for flow velocity vf (errata parametrisation)."""
    def parts(phi):
        s = math.sin(phi)
        D = mu**2 * (1 + j * s * s) + (j - mu) * s
        v = math.sqrt(g * d * mu * (1 + mu * s * s) / D)
        rho = mu * g * d * (j - mu) * math.cos(phi) / (j * v * D)
        return v, rho, v + mu * g * (j - mu) * s * math.cos(phi) / (c * D)
    grid = np.linspace(1e-6, math.pi / 2, 20001)
    f = [parts(p)[2] - vf for p in grid]
    out = []
    for i in range(len(grid) - 1):
        if f[i] * f[i + 1] < 0:
            phi = brentq(lambda p: parts(p)[2] - vf, grid[i], grid[i + 1], xtol=1e-15)
            v, rho, _ = parts(phi)
            out.append(np.array([rho * math.cos(phi), 0.0, rho * math.sin(phi), v]))
    return out


# --- 1: RR ---------------------------------------------------------------------------------------
mu, vf, v0 = 0.6, 0.5, 0.3
s, ev, f = run("rr", mu, vf, [0, 0, 0, v0], 100.0, samples=11)
t = f["trajectory/t"][...]
v = f["trajectory/state"][:, 3]
exact = vf + (v0 - vf) * np.exp(-c * t / (1 + 2 * j))
T.check(len(ev) == 0 and s["final_case"] == "RR", f"rolls at both contacts throughout ({s['events']})")
T.check(np.max(np.abs(v - exact)) < 1e-9, f"v(t) = v_f + (v0 - v_f) exp(-ct/(1+2j)) "
        f"(max error {np.max(np.abs(v - exact)):.1e})")

# --- 2: mu > j: RR -> SR, then F_SR -------------------------------------------------------
mu, vf, v0 = 0.6, 0.8, 0.3
vc = math.sqrt(g * d / j)
v_star = brentq(lambda v: -c / (1 + j) * (v - vf) - (1 + 2 * j) / (j * (1 + j)) * mu *
                (g - j * v * v / d), v0, vf)
T.check(abs(brentq(lambda v: -(1 + 2 * j) / (j * (1 + j)) * mu * (g - j * v * v / d), 0.1, 5.0)
            - vc) < 1e-12, f"at v = v_f the threshold is sqrt(gd/j) = {vc:.10f} (4.52)")
t1 = -(1 + 2 * j) / c * math.log((v_star - vf) / (v0 - vf))
s, ev, f = run("rrsr", mu, vf, [0, 0, 0, v0], 400.0)
kinds = [int(k) for k in ev[:, 1]]
T.check(len(kinds) >= 1 and kinds[0] == 1, f"first transition RR -> SR (kinds {kinds})")
if kinds:
    T.check(abs(ev[0, 0] - t1) < 1e-7 and abs(ev[0, 3 + 3] - v_star) < 1e-9,
            f"at t = {ev[0, 0]:.9f} (closed form {t1:.9f}), v = {ev[0, 6]:.12f} "
            f"(closed form {v_star:.12f})")


def f_sr(t, y):  # (4.29)-(4.30) with sgn u1+ = +1 (the ball overtakes at the bottom)
    u, v = y
    T1 = -mu * (g - j * v * (v - u) / d) * (1.0 if u >= 0 else -1.0)
    drag = -c / (1 + j) * (v - vf)
    return [drag + (1 + 2 * j) / (j * (1 + j)) * T1, drag + T1 / (1 + j)]


last_rr = max(i for i, k in enumerate(kinds) if k == 1)  # the last entry into SR
y0 = [ev[last_rr, 3], ev[last_rr, 6]]
ref = solve_ivp(f_sr, (ev[last_rr, 0], 400.0), y0, method="LSODA", rtol=1e-12, atol=1e-14)
xf = s["final_state"]
T.check(s["final_case"] == "SR" and abs(xf[0] - ref.y[0, -1]) < 1e-7 and
        abs(xf[3] - ref.y[1, -1]) < 1e-7 and abs(xf[1]) < 1e-12 and abs(xf[2]) < 1e-12,
        f"SR motion = scipy on F_SR: ({xf[0]:.10f}, {xf[3]:.10f}) vs "
        f"({ref.y[0, -1]:.10f}, {ref.y[1, -1]:.10f})")
T.check(abs(xf[0] - (vf - g * d / (j * vf))) < 1e-4 and abs(xf[3] - vf) < 1e-4,
        f"settles on X_SR = ({vf - g * d / (j * vf):.6f}, 0, 0, {vf}) (4.65)")

# --- 3: mu < j: RR -> SS, then X_SS -------------------------------------------------------------
def f_ss(v, mu, vf, dp, dm, u2=0.0, u1p=0.0):
    """(4.26)-(4.27) per unit mass with slip directions dp, dm."""
    den = 1 + mu * mu * dp[1] * dm[1]
    Np = (g - mu * dm[1] * v * v / d) / den
    Nm = (v * v / d + g * mu * dp[1]) / den
    T1p, T2p, T1m, T2m = -mu * Np * dp[0], -mu * Np * dp[1], -mu * Nm * dm[0], -mu * Nm * dm[1]
    drag = -c * (v - vf)
    return np.array([drag + v * u2 / d + (1 + j) / j * T1p + T1m, drag + (1 + j) / j * T1m + T1p,
                     v * (v - u1p) / d + (T2p + T2m) / j, drag + T1p + T1m])


def neutral(mu, vf, guess):
    def eqs(z):
        a, b, v = z
        return f_ss(v, mu, vf, (math.cos(a), math.sin(a)), (math.cos(b), math.sin(b)))[:3]
    return fsolve(eqs, guess, xtol=1e-14)


for mu, vf in ((0.1, 0.6), (0.02, 0.1)):
    vrs = math.sqrt(g * d / mu) * math.sqrt(mu**2 * (mu + 1) / (mu**2 * (j + 1) + j - mu))
    a, b, vn = neutral(mu, vf, [math.pi / 2, math.pi / 2, vrs])
    a0, b0, v0n = neutral(mu, vrs, [math.pi / 2, math.pi / 2, vrs])
    T.check(abs(a0 - math.pi / 2) < 1e-9 and abs(b0 - math.pi / 2) < 1e-9 and
            abs(v0n - vrs) < 1e-10, f"mu = {mu}: at v = v_f the neutral direction is "
            f"(pi/2, pi/2) at v_RR/SS = {vrs:.10f} (4.61, 4.63)")
    v0 = 0.9 * vn
    s, ev, f = run(f"rrss{mu}", mu, vf, [0, 0, 0, v0], 400.0)
    kinds = [int(k) for k in ev[:, 1]]
    t1 = -(1 + 2 * j) / c * math.log((vn - vf) / (v0 - vf))
    T.check(len(kinds) >= 1 and kinds[0] == 0 and abs(ev[0, 0] - t1) < 1e-6 and
            abs(ev[0, 6] - vn) < 1e-8,
            f"mu = {mu}: RR -> SS at t = {ev[0, 0] if len(ev) else None} (closed form "
            f"{t1:.9f}), v = {ev[0, 6] if len(ev) else None} (fsolve {vn:.10f})")
    xs = x_ss(mu, vf)
    err = min(np.max(np.abs(np.array(s["final_state"]) - x)) for x in xs)
    T.check(s["final_case"] == "SS" and err < 1e-5,
            f"mu = {mu}, v_f = {vf}: settles on X_SS (4.68-4.70), distance {err:.1e}")
    T.check(all(np.max(np.abs(f_ss(x[3], mu, vf, (x[0] / math.hypot(x[0], x[2]),
                                                      x[2] / math.hypot(x[0], x[2])), (0, 1),
                                   x[2], x[0]))) < 1e-12 for x in xs),
            f"mu = {mu}: F_SS(X_SS) = 0 for the parametrised states")

# --- 4: hysteresis ------------------------------------------------------------------------------------
mu, vf = 0.1, 1.3
xs = sorted(x_ss(mu, vf), key=lambda x: x[3])
T.check(len(xs) == 2 and math.sqrt(g * d / mu) < vf, f"two X_SS at v_f = {vf} (fold above)")
s, ev, f = run("hyst_low", mu, vf, [0, 0, 0, 0.1], 400.0)
err = np.max(np.abs(np.array(s["final_state"]) - xs[0]))
T.check(s["final_case"] == "SS" and err < 1e-5, f"from rolling: lower X_SS (distance {err:.1e})")
x_sr = [vf - g * d / (j * vf), 0, 0, vf]
s, ev, f = run("hyst_sr", mu, vf, x_sr, 100.0)
err = np.max(np.abs(np.array(s["final_state"]) - x_sr))
T.check(s["final_case"] == "SR" and err < 1e-9 and len(ev) == 0,
        f"from X_SR: stays on X_SR (stable for v_f > sqrt(gd/mu)), distance {err:.1e}")
# --- 6: Proposition 3.3 at the stationary rolling state ------------------------------------------
def rr_point(mu, vf):
    cfg = T.write("point.yaml", f"""
job: codim2-point
model: {{name: flowmeter, params: {{g: {g}, d: {d}, j: {j}, c: {c}, mu: {mu}, v_f: {vf!r}}}}}
initial: {{state: [0, 0, 0, {vf!r}]}}
""")
    return T.run(cfg, "point.h5")


mu = 0.1
vrs = math.sqrt(g * d / mu) * math.sqrt(mu**2 * (mu + 1) / (mu**2 * (j + 1) + j - mu))
below, at, above = rr_point(mu, 0.99 * vrs), rr_point(mu, vrs), rr_point(mu, 1.01 * vrs)
T.check(below["rolls"] and below["R_hat_max"] < 0 and not above["rolls"] and
        above["R_hat_max"] > 0 and abs(at["R_hat_max"]) < 1e-9,
        f"mu = {mu}: max R^ at X_RR {below['R_hat_max']:.3g} / {at['R_hat_max']:.2g} / "
        f"{above['R_hat_max']:.3g} at 0.99, 1, 1.01 v_RR/SS")
T.check(abs(at["phi_plus"] - math.pi / 2) < 1e-8 and abs(at["phi_minus"] - math.pi / 2) < 1e-8,
        f"the neutral direction is ({at['phi_plus']:.10f}, {at['phi_minus']:.10f}) = (pi/2, pi/2)")
mu = 0.6
vc = math.sqrt(g * d / j)
below, above = rr_point(mu, 0.99 * vc), rr_point(mu, 1.01 * vc)
T.check(below["rolls"] and below["lp_sr"] < 0 and above["lp_sr"] > 0 and not above["rolls"],
        f"mu = {mu}: e1+ . F_SR(+) at X_RR {below['lp_sr']:.3g} / {above['lp_sr']:.3g} "
        f"at 0.99 / 1.01 sqrt(gd/j)")
T.check(below["lp_rs"] < 0 < below["lm_rs"] and above["lp_rs"] < 0 < above["lm_rs"],
        "the wall contact stays in the attracting sliding region of F_RS (4.57)")

# --- 7: just above the persistence bifurcation P3 -------------------------------------------------
# d = 0.1, mu = 0.2: X_RR stops at v_RR/SS = P3 = 0.355756; for v_f just above, both contacts
# slip with |u| ~ 1e-6..1e-3 (X_SS), where the slip directions relax 10^5 times faster than
# the rest (the focus of X_SS has eigenvalues -0.011 +- 1.86i beside -9e4, -1.8e5 at
# v_f = 0.356).  The member must leave X_RR once, at the closed-form time, follow F_SS
# (scipy's Radau, an implicit integrator, from the exit along the neutral direction) and
# settle on X_SS of the errata's parametrisation.
d, mu = 0.1, 0.2
p3 = math.sqrt(g * d / mu) * math.sqrt(mu**2 * (mu + 1) / (mu**2 * (j + 1) + j - mu))
T.check(abs(p3 - 0.355756) < 1e-6, f"P3 = v_RR/SS(mu = 0.2, d = 0.1) = {p3:.9f} (4.63)")


def f_full(t, x, vf):
    sp, sm = math.hypot(x[0], x[2]), math.hypot(x[1], x[2])
    return f_ss(x[3], mu, vf, (x[0] / sp, x[2] / sp), (x[1] / sm, x[2] / sm), x[2], x[0])


for vf in (0.356, 0.4):
    a, b, vn = neutral(mu, vf, [math.pi / 2, math.pi / 2, p3])
    t_end = 1500.0
    s, ev, f = run(f"p3_{vf}", mu, vf, [0, 0, 0, 0.05], t_end, samples=15001, atol=1e-13)
    kinds = [int(k) for k in ev[:, 1]]
    t1 = -(1 + 2 * j) / c * math.log((vn - vf) / (0.05 - vf))
    # near v_f = P3 the exit time is stiff in v: dt/dv = (1 + 2j)/(c (v_f - v))
    T.check(s["member_status"] == "ok" and kinds == [0] and
            abs(ev[0, 0] - t1) * c * (vf - vn) / (1 + 2 * j) < 1e-10 and
            abs(ev[0, 6] - vn) < 1e-8 and s["steps"] < 200000,
            f"v_f = {vf}: {s['member_status']} in {s['steps']} steps, one RR -> SS at t = "
            f"{ev[0, 0] if len(ev) else None} (closed form {t1:.9f}), events {kinds[:5]}")
    xs = x_ss(mu, vf)
    err = min(np.max(np.abs(np.array(s["final_state"]) - x)) for x in xs)
    T.check(s["final_case"] == "SS" and err < 1e-10,
            f"v_f = {vf}: settles on X_SS = {xs[0]} (slip {math.hypot(xs[0][0], xs[0][2]):.6e}), "
            f"distance {err:.1e}")
    # F_SS from the exit, the slip started 1e-14 along the neutral direction (a, b)
    nh = np.array([math.cos(a) / math.sin(a), math.cos(b) / math.sin(b), 1.0])
    x0 = np.append(1e-14 * nh / np.linalg.norm(nh), vn)
    t = f["trajectory/t"][...]
    window = (t > t1) & (t < t1 + 60)
    ref = solve_ivp(f_full, (t1, t[window][-1]), x0, args=(vf,), method="Radau", rtol=1e-12,
                    atol=1e-16, t_eval=t[window])
    got = f["trajectory/state"][window]
    dev = np.max(np.abs(got - ref.y.T), axis=0)
    T.check(ref.success and np.max(dev) < 1e-9,
            f"v_f = {vf}: the first 60 s of slipping = Radau on F_SS (max deviation u1+ {dev[0]:.1e},"
            f" u1- {dev[1]:.1e}, u2 {dev[2]:.1e}, v {dev[3]:.1e}; slip up to "
            f"{np.max(np.hypot(got[:, 0], got[:, 2])):.2e})")

# --- 5: the diagram script (a coarse sweep) ------------------------------------------------------
r = subprocess.run([os.environ.get("PYTHON", "/usr/bin/python3"),
                    os.path.join(os.environ["SOURCE_DIR"], "postproc", "flowmeter_diagram.py"),
                    os.path.join(T.CONFIGS, "flowmeter-high-friction.yaml"), "diagram.png",
                    "--twofold", T.TWOFOLD, "--points", "3", "--t-end", "60", "--data", "drawn.npz",
                    "--scan-output", "sweep.h5"],
                   capture_output=True, text=True)
ok = r.returncode == 0
if ok:  # mu = 0.6 > j: the dots are the sweep's final states, rolling below sqrt(gd/j) (4.52)
    dr = np.load("drawn.npz")
    with h5py.File("sweep.h5", "r") as h:
        ok = np.array_equal(dr["vf"], h["members/x"][0]) and np.array_equal(
            dr["state"], h["members/state"][0].reshape(len(dr["vf"]), -1))
    vc = math.sqrt(g * 0.096 / j)
    ok = ok and all(case == ("RR" if vf < vc else "SR") for vf, case in zip(dr["vf"], dr["case"]))
T.check(ok, f"postproc/flowmeter_diagram.py sweeps v_f and draws the sweep's states, RR below "
        f"sqrt(gd/j), SR above ({r.stderr.strip()[-200:]})")
T.finish()

"""flowmeter_scan.py — `scan` with scan.quantity: stationary (numerical continuation of
stationary states along a parameter) against closed-form stationary solutions written here.

1. The rotating ball flowmeter (Antali 2017, chapter 4; parameters of Example 4.4: g = 1.35,
   c = 0.039, d = 0.096, j = 2/5), one scan over v_f per friction regime, continuation both:
   every stationary point equals the thesis' stationary solution of its kinematic case —
   X_RR = (0, 0, 0, v_f) (4.50), X_SR = (v_f - gd/(j v_f), 0, 0, v_f) (4.65), X_SS of
   (4.68-4.70) in the errata parametrisation (s = sin phi, D = mu^2 (1 + j s^2) + (j - mu) s,
   v^2 = g d mu (1 + mu s^2)/D, rho = mu g d (j - mu) cos phi/(j v D),
   v_f = v + mu g (j - mu) s cos phi/(c D)), inverted here by brentq — and the case is the
   one the thesis predicts between its thresholds v_RR/SS (4.63), sqrt(gd/j) (4.52),
   sqrt(gd/mu) (4.66) and the fold of X_SS (found here as the maximum of v_f(phi)):
   * mu = 0.02 < mu_fold (Fig. 4.5): RR, SS, SR in both sweeps, no hysteresis;
   * mu_fold < mu = 0.1 < j (Fig. 4.6): sweeping up the ball stays on the lower X_SS up to the
     fold, sweeping down on X_SR down to sqrt(gd/mu): the sweeps differ exactly in between
     (the bistable range the scan reports), and agree outside it;
   * mu = 0.6 > j (Fig. 4.7): RR below sqrt(gd/j), SR above, no hysteresis.
2. The other engines: a smooth flow (Lorenz, rho in (1, 24.74): C+ = (q, q, rho - 1),
   q = sqrt(beta (rho - 1))), a Filippov kernel on the event-driven engine (the unforced
   stick-slip oscillator on a belt of speed vb > 0 rests slipping at x = mu, mode slip-), a
   codimension-2 kernel (the ball on the pool bottom with viscous drag K rolls to rest at 0).
3. postproc/flowmeter_diagram.py draws the diagram from the scan's file: its data are checked
   (the dots, the engine's X_SS branch and fold, mu_fold).
"""
import math
import os
import subprocess

import h5py
import numpy as np
from scipy.optimize import brentq, minimize_scalar

import flowmeter_ref as fref
import testlib as T

T.setup()
g, d, j, c = 1.35, 0.096, 0.4, 0.039
CASES = ["SS", "SR", "RS", "RR"]


def ss_parts(mu, phi):
    s = math.sin(phi)
    D = mu**2 * (1 + j * s * s) + (j - mu) * s
    v = math.sqrt(g * d * mu * (1 + mu * s * s) / D)
    rho = mu * g * d * (j - mu) * math.cos(phi) / (j * v * D)
    return v, rho, v + mu * g * (j - mu) * s * math.cos(phi) / (c * D)


def x_ss(mu, vf):
    """All X_SS for flow velocity vf, sorted by the ball speed v."""
    grid = np.linspace(1e-6, math.pi / 2, 4001)
    f = [ss_parts(mu, p)[2] - vf for p in grid]
    out = []
    for i in range(len(grid) - 1):
        if f[i] * f[i + 1] < 0:
            phi = brentq(lambda p: ss_parts(mu, p)[2] - vf, grid[i], grid[i + 1], xtol=1e-15)
            v, rho, _ = ss_parts(mu, phi)
            out.append(np.array([rho * math.cos(phi), 0.0, rho * math.sin(phi), v]))
    return sorted(out, key=lambda x: x[3])


def thresholds(mu):
    t = {"rr_sr": math.sqrt(g * d / j), "sr_ss": math.sqrt(g * d / mu), "fold": None}
    if mu < j:
        t["rr_ss"] = math.sqrt(g * d / mu) * math.sqrt(mu**2 * (mu + 1) / (mu**2 * (j + 1) + j - mu))
        phis = np.linspace(1e-6, math.pi / 2, 20001)
        vfs = np.array([ss_parts(mu, p)[2] for p in phis])
        k = int(np.argmax(vfs))
        if 0 < k < len(phis) - 1:  # an interior maximum of v_f(phi): the fold F
            m = minimize_scalar(lambda p: -ss_parts(mu, p)[2], bounds=(phis[k - 1], phis[k + 1]),
                                method="bounded", options={"xatol": 1e-13})
            t["fold"] = -m.fun
    return t


def expected(mu, vf, direction):
    """(case, state) the thesis predicts for a sweep in `direction` arriving at vf."""
    t = thresholds(mu)
    x_sr = np.array([vf - g * d / (j * vf), 0, 0, vf])
    if mu > j:
        return ("RR", np.array([0, 0, 0, vf])) if vf < t["rr_sr"] else ("SR", x_sr)
    if vf < t["rr_ss"]:
        return "RR", np.array([0, 0, 0, vf])
    if vf >= t["sr_ss"] and (t["fold"] is None or vf > t["fold"] or direction < 0):
        return "SR", x_sr
    return "SS", x_ss(mu, vf)[0]  # the lower (stable) X_SS


def flowmeter_scan(name, mu, vmin, vmax, points, extra=""):
    cfg = T.write(name + ".yaml", f"""
job: scan
model: {{name: flowmeter, params: {{g: {g}, d: {d}, j: {j}, c: {c}, mu: {mu}}}}}
initial: {{state: [0, 0, 0, 0.05]}}
integrator: {{rtol: 1.0e-9, atol: 1.0e-11}}
scan:
  quantity: stationary
  continuation: both
  time: 1000
  x: {{param: v_f, min: {vmin}, max: {vmax}, points: {points}}}
{extra}""")
    s = T.run(cfg, name + ".h5")
    f = h5py.File(name + ".h5", "r")
    P = int(f.attrs["points_per_line"])
    m = f["members"]
    return s, dict(x=m["x"][0], direction=m["direction"][0], state=m["state"][0].reshape(P, -1),
                   stationary=m["stationary"][0], mode=m["mode"][0], status=m["point_status"][0])


def check_regime(name, mu, vmin, vmax, points, extra=""):
    s, r = flowmeter_scan(name, mu, vmin, vmax, points, extra)
    t = thresholds(mu)
    near = [v for v in (t.get("rr_ss"), t["rr_sr"] if mu > j else None, t["sr_ss"], t["fold"]) if v]
    worst, wrong, skipped = 0.0, [], 0
    for i, vf in enumerate(r["x"]):
        if any(abs(vf - v) < 0.03 * v for v in near):
            skipped += 1  # within 3 % of a bifurcation: slow convergence, not a test of it
            continue
        case, x = expected(mu, vf, r["direction"][i])
        got = CASES[r["mode"][i]]
        err = float(np.max(np.abs(r["state"][i] - x)))
        if got != case or r["status"][i] != 1 or not r["stationary"][i] or err > 1e-6:
            wrong.append(f"v_f = {vf:.4f} dir {r['direction'][i]:+d}: {got} (expected {case}), "
                         f"error {err:.1e}, stationary {r['stationary'][i]}")
        worst = max(worst, err)
    T.check(not wrong, f"mu = {mu}: {len(r['x']) - skipped} points on the thesis' X_RR/X_SS/X_SR "
            f"in the predicted case (max error {worst:.1e}); {'; '.join(wrong[:4])}")
    return s, r, t


# --- 1. the three regimes ---------------------------------------------------------------------
# (points within 10 % below P2 = sqrt(gd/mu) cost the engine ~10^5-10^6 steps each: left out)
s, r, t = check_regime("low", 0.02, 0.05, 3.05, 4,
                       "  tolerance: 1.0e-5\ncodim2: {slave_radius: 1.0e-3}")
T.check(s.get("bistable_points") == 0, f"mu = 0.02 < mu_fold: no hysteresis ({s.get('bistable_x')})")

s, r, t = check_regime("mid", 0.1, 0.1, 4.0, 14)
nx = len(r["x"]) // 2
up, down = r["state"][:nx], r["state"][nx:][::-1]
xs = r["x"][:nx]
differ = np.max(np.abs(up - down), axis=1) > 1e-3
predicted = (xs > t["sr_ss"]) & (xs < t["fold"])
T.check(np.array_equal(differ, predicted) and predicted.sum() >= 4,
        f"mu = 0.1: up and down sweeps differ exactly for sqrt(gd/mu) = {t['sr_ss']:.4f} < v_f < "
        f"v_fold = {t['fold']:.4f} ({int(differ.sum())} of {nx} points: "
        f"{xs[differ].round(3).tolist()})")
lo, hi = xs[predicted].min(), xs[predicted].max()
T.check(s["bistable_points"] == int(predicted.sum()) and s["bistable_x"] == [lo, hi],
        f"the JSON reports the bistable range {s['bistable_x']} (expected [{lo:.4f}, {hi:.4f}])")

s, r, t = check_regime("high", 0.6, 0.1, 0.7, 10)
T.check(s.get("bistable_points") == 0, f"mu = 0.6 > j: no hysteresis ({s.get('bistable_x')})")

# --- 2. the other engines -------------------------------------------------------------------------
def scan_other(name, model, x, extra=""):
    cfg = T.write(name + ".yaml", f"""
job: scan
model: {model}
{extra}
scan:
  quantity: stationary
  time: 600
  x: {x}
""")
    s = T.run(cfg, name + ".h5")
    f = h5py.File(name + ".h5", "r")
    P = int(f.attrs["points_per_line"])
    m = f["members"]
    return s, m["x"][0], m["state"][0].reshape(P, -1), m["mode"][0], m["stationary"][0]


s, xs, st, mode, ok = scan_other("lorenz", "{name: lorenz, params: {sigma: 10, beta: 2.6666666666666665}}",
                                 "{param: rho, min: 2, max: 14, points: 5}", "initial: {state: [1, 1, 1]}")
q = np.sqrt(8 / 3 * (xs - 1))
ref = np.stack([q, q, xs - 1], axis=1)
err = np.max(np.abs(st - ref))
T.check(err < 1e-6 and ok.all(), f"smooth flow (Lorenz): the scan follows C+ = (q, q, rho - 1), "
        f"max error {err:.1e}")

s, xs, st, mode, ok = scan_other(
    "stickslip", "{name: stick-slip, params: {zeta: 0.05, vb: 0.5, a: 0, omega: 1.0e-12}}",
    "{param: mu, min: 0.1, max: 0.4, points: 4}", "initial: {state: [0.2, 0, 0]}")
err = np.max(np.abs(st[:, 0] - xs)) + np.max(np.abs(st[:, 1]))
T.check(err < 1e-6 and (mode == -1).all() and ok.all(),
        f"Filippov (stick-slip, event-driven): rests slipping (mode slip-) at x = mu, v = 0, "
        f"max error {err:.1e}")

s, xs, st, mode, ok = scan_other(
    "ballpool", "{name: ball-pool, params: {K: 0.5}}", "{param: mu, min: 0.1, max: 0.4, points: 4}",
    "initial: {speed: 1.0, direction_deg: 30}")
err = np.max(np.abs(st))
T.check(err < 1e-6 and (mode == 0).all() and ok.all() and s["final_modes"] == {"roll": 4},
        f"codimension-2 (ball on the pool bottom, physical initial.speed): rolls (mode roll) to "
        f"rest at 0 under the drag K, max |x| {err:.1e}")

# --- 3. the diagram from the scan's file -------------------------------------------------------------
# what postproc/flowmeter_diagram.py draws: the scan's points as the file holds them, X_SS as
# the engine continues it (job fold) — every point a zero of F_SS written out here and on the
# errata's X_SS, solid (stable) exactly up to the fold F, the maximum of v_f(phi), the
# unstable part ending at NF2 = sqrt(gd/mu) — and mu_fold where the fold leaves X_SS,
# against the thesis' (c^2 d/(4 g))^(1/3)
import sys  # noqa: E402

sys.path.insert(0, os.path.join(os.environ["SOURCE_DIR"], "postproc"))
import flowmeter_diagram as fig  # noqa: E402


def f_ss(x, mu, vf):
    return fref.f_ss(x, mu, vf, g, d, j, c)


mu = 0.1
p, pts, vmax, eng = fig.drawn("mid.h5", T.TWOFOLD)
with h5py.File("mid.h5", "r") as h:
    P = int(h.attrs["points_per_line"])
    T.check(np.array_equal(pts["vf"], h["members/x"][0]) and
            np.array_equal(pts["state"], h["members/state"][0].reshape(P, -1)),
            "the dots are the scan's points")
t = thresholds(mu)
res = max(np.max(np.abs(f_ss(x, mu, vf))) for vf, x in zip(eng["vf"], eng["state"]))
def off_errata(vf, x):  # distance to the errata's X_SS at the point's own phi
    phi = math.atan2(x[2], x[0])
    v, rho, vf_phi = ss_parts(mu, phi)
    return max(abs(vf_phi - vf), np.max(np.abs(x - [rho * math.cos(phi), 0, rho * math.sin(phi), v])))


on = max(off_errata(vf, x) for vf, x in zip(eng["vf"], eng["state"]) if x[2] > 1e-6)
T.check(len(eng["vf"]) > 50 and res < 1e-10 and on < 1e-7,
        f"X_SS drawn: {len(eng['vf'])} points, zeros of F_SS (max |F| {res:.1e}), on the errata's "
        f"X_SS (distance {on:.1e})")
k = int(np.argmax(eng["vf"]))
T.check(len(eng["fold_vf"]) == 1 and abs(eng["fold_vf"][0] - t["fold"]) < 1e-9 and
        abs(eng["vf"][k] - t["fold"]) < 1e-9,
        f"F drawn at v_f = {eng['fold_vf']} (max of v_f(phi): {t['fold']:.12f})")
stable = eng["max_real"] < 0
T.check(stable[:k].all() and not stable[k + 1:].any(),
        f"solid (stable) up to F, dashed after ({stable.sum()} / {(~stable).sum()} points)")
T.check(abs(eng["vf"][-1] - t["sr_ss"]) < 1e-6 and eng["state"][-1][2] < 1e-6,
        f"the unstable part ends at v_f = {eng['vf'][-1]:.9f} where u2 -> 0 "
        f"(NF2 = sqrt(gd/mu) = {t['sr_ss']:.9f})")
mu_fold = (c * c * d / (4 * g)) ** (1 / 3)
T.check(abs(eng["mu_fold"] - mu_fold) < 1e-8,
        f"mu_fold in the title {eng['mu_fold']:.10f} ((c^2 d/(4g))^(1/3) = {mu_fold:.10f})")
r = subprocess.run([os.environ.get("PYTHON", "/usr/bin/python3"),
                    os.path.join(os.environ["SOURCE_DIR"], "postproc", "flowmeter_diagram.py"),
                    "mid.h5", "flowmeter-mid.png", "--twofold", T.TWOFOLD],
                   capture_output=True, text=True)
T.check(r.returncode == 0, f"postproc/flowmeter_diagram.py draws Fig. 4.6 ({r.stderr.strip()[-300:]})")
T.finish()

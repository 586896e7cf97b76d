#!/usr/bin/python3
"""wheelset.py — the wheelset of Antali (2017), chapter 5: Coulomb friction at both rails,
dual-point rolling (the kinematic oscillation) against slipping, on the dual-contact engine,
checked against the thesis' closed forms evaluated here:

1. onset of slipping on the rolling ellipse y = A cos(w t + th), Psi = -(A/eta) sin(w t + th)
   (5.61): the first time Proposition 5.1 (5.59) fails,
       (alpha_y^2 - w^2)^2 y^2 + (alpha_psi^2 - w^2)^2 Psi^2/M_psi^2 = 4 C^2,
   in case SS (both contacts, never SR or RS: §5.4.1), leaving along the neutral double limit
   direction (5.57): cos phi+ = (alpha_psi^2 - w^2) Psi/(2 M_psi C), sin phi+ =
   -(alpha_y^2 - w^2) y/(2C), phi- = pi - phi+;
2. below the threshold the motion is the kinematic oscillation itself (5.42);
3. the maximum amplitude without slipping by bisection on simulations against
   min(ybar_1, ybar_2) (5.63, 5.65) in both regimes (5.62/5.64), independent of M_phi;
4. Proposition 5.1 at scattered points of the rolling plane;
5. chapter 1: the kinematic frequency from the profile geometry, Meijaard's formula (1.57),
   and the yaw amplitude A/eta with eta from (1.56), for two amplitudes (linear model);
6. a speed scan on 1 and 2 ranks: bitwise equal, each point on min(ybar_1, ybar_2);
7. bad input: file:line:key errors, no output written, an existing result left intact;
8. the figure (postproc/wheelset_threshold.py) of the scan of 6: the curves drawn are (5.63),
   (5.65) and their minimum, the points the file's thresholds, omega_L1 marked where the two
   closed forms cross (found here by root finding), the boundary drawn in the phase plane is
   (5.58) and the rolling ellipse at the simulated threshold touches it.
"""
import hashlib
import math
import os
import subprocess
import sys

import h5py
import numpy as np
from scipy.optimize import brentq

import testlib as T

T.setup()
CFG = os.path.join(T.CONFIGS, "wheelset-slip.yaml")
TCFG = os.path.join(T.CONFIGS, "wheelset-threshold.yaml")

# Example 5.2 (the configs' parameters), written out here
P = dict(omega_per_v=0.9642, eta=1.04, alpha_y=63.2, alpha_psi=93.6, M_psi=1.64, mu=0.15,
         load_per_mass=137.2)
C = 0.5 * P["mu"] * P["load_per_mass"]


def omega(v):
    return P["omega_per_v"] * v


def ybar12(v):
    w = omega(v)
    return (2 * C / abs(P["alpha_y"] ** 2 - w ** 2),
            2 * C * P["M_psi"] * P["eta"] / abs(P["alpha_psi"] ** 2 - w ** 2))


def slip_lhs(v, y, psi):
    """Left side minus right side of (5.59): negative where dual rolling persists."""
    w = omega(v)
    return ((P["alpha_y"] ** 2 - w ** 2) ** 2 * y ** 2
            + (P["alpha_psi"] ** 2 - w ** 2) ** 2 * psi ** 2 / P["M_psi"] ** 2 - 4 * C ** 2)


def rolling(v, A, th_deg, t):
    w, ph = omega(v), math.radians(th_deg)
    return A * np.cos(w * t + ph), -A / P["eta"] * np.sin(w * t + ph)


def onset_time(v, A, th_deg):
    """First zero of (5.59) along the rolling ellipse, from a fine scan and Brent."""
    f = lambda t: slip_lhs(v, *rolling(v, A, th_deg, t))  # noqa: E731
    period = 2 * math.pi / omega(v)
    ts = np.linspace(0, period, 20001)
    vals = f(ts)
    if vals[0] >= 0:
        return 0.0
    i = int(np.argmax(vals >= 0))
    return brentq(f, ts[i - 1], ts[i], xtol=1e-15)


def departure_phi(v, y, psi):
    w = omega(v)
    c = (P["alpha_psi"] ** 2 - w ** 2) * psi / (2 * P["M_psi"] * C)
    s = -(P["alpha_y"] ** 2 - w ** 2) * y / (2 * C)
    return math.atan2(s, c), math.pi - math.atan2(s, c)


def ang(a, b):
    return abs(math.remainder(a - b, 2 * math.pi))


# --- 1: onset of slipping on the rolling ellipse -----------------------------------------------
KMH = 1 / 3.6
for v_kmh, fac, th in ((200, 6.1 / 5.957876, 0), (200, 1.2, 10), (320, 1.05, 60), (150, 1.1, 30)):
    v = v_kmh * KMH
    A = fac * min(ybar12(v))
    assert slip_lhs(v, *rolling(v, A, th, 0.0)) < 0, "each case starts inside (5.58)"
    s = T.run(CFG, f"onset{v_kmh}_{th}.h5", f"model.params.v={v!r}", f"initial.amplitude={A!r}",
              f"initial.phase_deg={th}", "integrator.t_end=0.2")
    t_ref = onset_time(v, A, th)
    y, psi = rolling(v, A, th, t_ref)
    T.check(s["slipped"] and s["slip_case"] == "SS" and s["slipping_contacts"] == "both",
            f"v = {v_kmh} km/h, A = {A * 1e3:.4f} mm, phase {th}: slips at both contacts "
            f"({s['slip_case']}, {s['slipping_contacts']})")
    T.check(abs(s["slip_onset_time"] - t_ref) < 1e-7,
            f"  onset at t = {s['slip_onset_time']:.10f} s, (5.59) on (5.61): {t_ref:.10f} s")
    x = s["slip_state"]
    T.check(abs(x[0] - y) < 1e-9 and abs(x[1] - psi) < 1e-9 and max(map(abs, x[2:])) < 1e-12,
            f"  state there ({x[0]:.9f}, {x[1]:.9f}) = the kinematic oscillation "
            f"({y:.9f}, {psi:.9f}), no slip yet")
    pp, pm = departure_phi(v, x[0], x[1])
    T.check(ang(s["departure_phi_plus"], pp) < 1e-5 and ang(s["departure_phi_minus"], pm) < 1e-5,
            f"  leaves along phi+ = {s['departure_phi_plus']:.7f}, phi- = "
            f"{s['departure_phi_minus']:.7f}; (5.57): {pp:.7f}, {math.remainder(pm, 2 * math.pi):.7f}")

# --- 2: below the threshold: the kinematic oscillation (5.42) for a whole period ---------------
v = 200 * KMH
A = 0.98 * min(ybar12(v))
t_end = 2 * math.pi / omega(v) * 1.3
s = T.run(CFG, "rolls.h5", f"model.params.v={v!r}", f"initial.amplitude={A!r}", "initial.phase_deg=20",
          f"integrator.t_end={t_end!r}")
y, psi = rolling(v, A, 20, t_end)
x = s["slip_state"]
T.check(not s["slipped"] and s["slip_onset_time"] is None and s["slipping_contacts"] == "none",
        f"A = 0.98 ybar_2 = {A * 1e3:.4f} mm keeps rolling at both contacts for 1.3 periods")
T.check(abs(x[0] - y) < 1e-9 and abs(x[1] - psi) < 1e-9,
        f"  final (y, Psi) = ({x[0]:.10f}, {x[1]:.10f}) = (5.42) solution ({y:.10f}, {psi:.10f})")

# --- 3: the maximum amplitude without slipping -------------------------------------------------
for v_kmh, extra, which, tol in ((200, [], 1, 1e-5), (200, ["model.params.M_phi=5"], 1, 1e-4),
                                 (320, [], 0, 1e-4)):
    v = v_kmh * KMH
    y12 = ybar12(v)
    s = T.run(CFG, f"thr{v_kmh}.h5", f"model.params.v={v!r}", "threshold.high=0.05",
              f"threshold.rel_tol={tol}", "initial.phase_deg=0", "integrator.t_end=0.06", *extra)
    ref = y12[which]
    T.check(min(y12) == ref and abs(s["threshold"] / ref - 1) < 2 * tol,
            f"v = {v_kmh} km/h {' '.join(extra)}: simulated maximum amplitude "
            f"{s['threshold'] * 1e3:.6f} mm, thesis ybar_{which + 1} = {ref * 1e3:.6f} mm "
            f"(other {y12[1 - which] * 1e3:.3f} mm; {s['runs']} runs)")
    T.check(s["slip_case"] == "SS", f"  1% above it both contacts start slipping ({s['slip_case']})")

# --- 4: Proposition 5.1 at scattered points of Sigma_RR ----------------------------------------
rng = np.random.default_rng(5)
v = 250 * KMH
w = omega(v)
Y, S = 2 * C / abs(P["alpha_y"] ** 2 - w ** 2), 2 * C * P["M_psi"] / abs(P["alpha_psi"] ** 2 - w ** 2)
STATE_CFG = T.write("state.yaml", open(CFG).read().replace(
    "  amplitude: 0.0061   # m\n  phase_deg: 0\n", "  state: [0.001, 0, 0, 0, 0]\n"))
agree, total, cases = 0, 0, set()
while total < 10:
    y, psi = rng.uniform(-1.6 * Y, 1.6 * Y), rng.uniform(-1.6 * S, 1.6 * S)
    ratio = math.sqrt((y / Y) ** 2 + (psi / S) ** 2)
    if abs(ratio - 1) < 0.03:
        continue
    s = T.run(STATE_CFG, "prop51.h5", f"model.params.v={v!r}", f"initial.state=[{y!r}, {psi!r}, 0, 0, 0]",
              "integrator.t_end=1e-6")
    total += 1
    agree += bool(s["slipped"]) == (ratio > 1)
    if s["slipped"]:
        cases.add(s["slip_case"])
T.check(agree == total and cases <= {"SS"},
        f"Proposition 5.1 at {total} points of the rolling plane: the engine slips exactly "
        f"outside the ellipse (5.58) ({agree}/{total}), always at both contacts ({cases})")

# --- 5: chapter 1: the kinematic frequency from the geometry -----------------------------------
h, b, r, Rw, Rr, vg = 0.05, 0.7465, 0.4575, 0.5, 0.3, 30.0
a01 = vg * (b - h * r) / b
b10 = -vg * h * Rw * (b + Rr * h / math.sqrt(1 + h * h)) / (b * r * (b - h * r) * (Rw - Rr))
w_meijaard = vg * math.sqrt(h / (b * r) * Rw / (Rw - Rr) * (1 + Rr * h / (b * math.sqrt(1 + h * h))))
eta_geo = math.sqrt(-a01 / (b * b * b10))
T.check(abs(math.sqrt(-a01 * b10) / w_meijaard - 1) < 1e-12, "(1.56) and (1.57) agree here")
geo = ["model.params.omega_per_v=0", "model.params.eta=0", f"model.params.v={vg}",
       f"model.params.h={h}", f"model.params.b={b}", f"model.params.r={r}",
       f"model.params.R_w={Rw}", f"model.params.R_r={Rr}"]
periods = 3
t_end = periods * 2 * math.pi / w_meijaard
for A in (0.001, 0.004):
    T.run(CFG, f"kin{A}.h5", "job=trajectory", *geo, f"initial.amplitude={A}",
          f"integrator.t_end={t_end!r}", "output.samples=3001")
    with h5py.File(f"kin{A}.h5", "r") as f:
        t = f["trajectory/t"][...]
        st = f["trajectory/state"][...]
        mode = f["trajectory/mode"][...]
    yy = st[:, 0]
    up = np.where((yy[:-1] > 0) & (yy[1:] <= 0))[0]  # downward zero crossings, interpolated
    tz = t[up] - yy[up] * (t[up + 1] - t[up]) / (yy[up + 1] - yy[up])
    w_sim = 2 * math.pi / np.mean(np.diff(tz))
    T.check(np.all(mode == 3) and abs(w_sim / w_meijaard - 1) < 1e-5,
            f"A = {A * 1e3:g} mm rolls (RR) at omega = {w_sim:.7f} 1/s; Meijaard (1.57): "
            f"{w_meijaard:.7f} 1/s")
    T.check(abs(np.max(np.abs(st[:, 1])) / (A / eta_geo) - 1) < 1e-4,
            f"  yaw amplitude max|Psi| = {np.max(np.abs(st[:, 1])) * 1e3:.6f} mm = A/eta, eta from "
            f"(1.56) = {eta_geo:.6f}")

# --- 6: a speed scan on 1 and 2 ranks ----------------------------------------------------------
scan = ["scan.x.min=50", "scan.x.max=90", "scan.x.points=3", "threshold.rel_tol=1e-4",
        "integrator.t_end=0.066"]  # half a period at 180 km/h
s1 = T.run(TCFG, "scan1.h5", *scan)
s2 = T.run(TCFG, "scan2.h5", *scan, ranks=2)
with h5py.File("scan1.h5", "r") as f1, h5py.File("scan2.h5", "r") as f2:
    same = all(np.array_equal(f1["threshold/" + d][...], f2["threshold/" + d][...], equal_nan=True)
               for d in ("values", "threshold", "low", "high", "onset_time", "case", "onset_state"))
T.check(same and s1["thresholds"] == s2["thresholds"],
        "scan on 2 ranks bitwise equal to 1 rank (thresholds, brackets, departures)")
ref = np.array([min(ybar12(v)) for v in s1["scan_values"]])
err = np.max(np.abs(np.array(s1["thresholds"]) / ref - 1))
T.check(s1["failed"] == 0 and err < 2e-4 and s1["slip_cases"] == [0, 0, 0],
        f"scan v = 180..324 km/h: thresholds {np.round(np.array(s1['thresholds']) * 1e3, 5)} mm "
        f"on min(ybar_1, ybar_2) within {err:.1e}; slipping in case SS")

# --- 7: bad input --------------------------------------------------------------------------------
T.run(CFG, "keep.h5")
digest = hashlib.sha256(open("keep.h5", "rb").read()).hexdigest()
for sets, key in ((["threshold.hihg=0.05"], "threshold.hihg"),
                  (["threshold.high=0.001", "threshold.low=0.002"], "threshold.high"),
                  (["initial.amplitude=-0.001"], "initial.amplitude"),
                  (["model.params.eta=-1"], "model.params.eta"),
                  (["scan.x.param=v"], "scan"),
                  (["model.name=ball-pool"], "model.name")):
    for out in ("bad.h5", "keep.h5"):
        cmd = [T.TWOFOLD, "run", CFG, "-o", out, "--overwrite"]
        for x in sets:
            cmd += ["--set", x]
        r = subprocess.run(cmd, capture_output=True, text=True)
        intact = hashlib.sha256(open("keep.h5", "rb").read()).hexdigest() == digest
        T.check(r.returncode == 2 and key in r.stderr and not os.path.exists("bad.h5") and intact,
                f"--set {' '.join(sets)} (-o {out}): exit {r.returncode}, {r.stderr.strip()}")
r = subprocess.run([T.TWOFOLD, "run", CFG, "-o", "keep.h5", "--overwrite", "--set",
                    "threshold.high=0.003"], capture_output=True, text=True)
intact = hashlib.sha256(open("keep.h5", "rb").read()).hexdigest() == digest
T.check(r.returncode != 0 and "keeps rolling at the upper end" in r.stderr and intact,
        f"a bracket that does not contain the threshold: exit {r.returncode}, {r.stderr.strip()}")

# --- 8: the figure draws the scan of 6 -----------------------------------------------------------
sys.path.insert(0, os.path.join(os.environ["SOURCE_DIR"], "postproc"))
import wheelset_threshold as fig  # noqa: E402

d = fig.load("scan1.h5")
y1, y2 = ybar12(d["v_curve"])
T.check(np.abs(d["ybar1"] / y1 - 1).max() < 1e-12 and np.abs(d["ybar2"] / y2 - 1).max() < 1e-12
        and np.array_equal(d["ybar_min"], np.minimum(d["ybar1"], d["ybar2"])),
        f"figure: ybar_1, ybar_2 (5.63, 5.65) and their minimum drawn at {len(y1)} speeds = the "
        "closed forms evaluated here")
with h5py.File("scan1.h5", "r") as f:
    v_file, th_file = f["threshold/values"][...], f["threshold/threshold"][...]
T.check(np.array_equal(d["v_points"], v_file) and np.array_equal(d["threshold"], th_file)
        and len(d["v_failed"]) == 0
        and np.abs(d["threshold"] / [min(ybar12(v)) for v in v_file] - 1).max() < 2e-4,
        f"figure: the points are the file's {len(v_file)} simulated thresholds, on "
        "min(ybar_1, ybar_2)")
lo, hi = d["xlim"]
vs = np.linspace(lo, hi, 20001)
gap = np.subtract(*ybar12(vs))
roots = [brentq(lambda x: np.subtract(*ybar12(x)), vs[i], vs[i + 1], xtol=1e-12)
         for i in np.nonzero(np.sign(gap[:-1]) != np.sign(gap[1:]))[0]]
res = [a / P["omega_per_v"] for a in (P["alpha_y"], P["alpha_psi"])
       if lo < a / P["omega_per_v"] < hi]
T.check(len(roots) == len(d["crossings"]) == 1
        and all(abs(c - r) < 1e-8 for (_, c), r in zip(d["crossings"], roots))
        and [x for _, x in d["resonances"]] == res,
        f"figure: crossing omega_L1 marked at {[c * 3.6 for _, c in d['crossings']]} km/h = "
        f"where ybar_1 = ybar_2 here {[r * 3.6 for r in roots]}; resonance alpha_y/omega_per_v "
        f"at {[r * 3.6 for r in res]} km/h")
v = d["v_phase"]
A = d["threshold"][np.argmin(np.abs(d["v_points"] * 3.6 - 200))]
by, bpsi = d["boundary"]
(f0, ey0, epsi0), (f1, ey1, epsi1) = d["ellipses"]
boundary_err = np.abs(slip_lhs(v, by, bpsi)).max() / (4 * C ** 2)
touch = slip_lhs(v, ey0, epsi0).max() / (4 * C ** 2)
T.check(abs(v * 3.6 - 180) < 1e-9 and boundary_err < 1e-12
        and abs(d["psi_sli"] - np.abs(bpsi).max()) < 1e-15
        and abs(d["psi_sli"] - 2 * C * P["M_psi"] / abs(P["alpha_psi"] ** 2 - omega(v) ** 2))
        < 1e-15,
        f"figure, phase plane at 180 km/h (the scan speed nearest 200): the boundary drawn is "
        f"(5.58) to {boundary_err:.0e}, Psi_sli its top")
T.check(f0 == 1.0 and np.abs(np.hypot(ey0, epsi0 * P["eta"]) - A).max() < 1e-15
        and abs(touch) < 4e-4
        and f1 == 1.1 and slip_lhs(v, ey1, epsi1).max() / (4 * C ** 2) > 0.2,
        f"figure, phase plane: the rolling ellipse (5.61) at the simulated threshold touches "
        f"(5.58) (max of (5.59) on it {touch:.1e} of 4C^2), 10% above it leaves")
png = "wheelset.png"
r = subprocess.run([os.environ.get("PYTHON", "/usr/bin/python3"),
                    os.path.join(os.environ["SOURCE_DIR"], "postproc", "wheelset_threshold.py"),
                    "scan1.h5", png], capture_output=True, text=True)
T.check(r.returncode == 0 and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
        f"postproc/wheelset_threshold.py writes the PNG ({r.stderr.strip()[-300:]})")
T.finish()

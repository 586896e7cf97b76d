"""smooth_wheel.py — configs/wheel-smoothed.yaml against an independent smoothed wheel.

The wheel on a turntable (Szalai & Jeffrey 2014) at the Fig. 5 parameters, smoothed with
Jeffrey's Lambda_eps(h) = (h/eps)/sqrt(1 + (h/eps)^2) in the convex form
    f = (1 + Lambda)/2 f(x; F+, M+) + (1 - Lambda)/2 f(x; F-, M-)
with the slip friction of the stretched-string tyre model (eqs 6-7), F± = ±mu (4/3 -
cot(psi) / (18 kappa)), M± = ±sign(g) mu cot(psi) / 6, psi = arccot(6 kappa) + |1 - 2
arccot(6 kappa)/pi| atan(|h| / |g|), and eqs (1)-(3) for f(x; F, M).  Since eqs (1)-(3) are
affine in (F, M), f = f(x; Lambda F+, Lambda M+).  kappa and k2 come from the sympy oracle
(wheel_oracle.py: the two-fold conditions, eqs 9-11).  This file writes that field again
and integrates it with scipy's Radau from the engine's recorded initial states; the engine's
members on the config's default (integrator.method auto: the Rosenbrock stepper, RODAS4, with
the analytic Jacobian of the convex field, and ROS3P) and on PETSc TS (bdf, one TS per member
and in batches; rosw with that analytic Jacobian, with coloured differences, with the Jacobian
kept over steps, and the order-4 veldd4) must agree.  `twofold model check` passes the wheel's slip_jacobian.
"""
import math
import subprocess

import h5py
import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

import testlib as T
from wheel_oracle import PAPER, derive_twofold, k2, kappa, twofold_point

T.setup()
at = twofold_point(derive_twofold(), "0.1859", "-1.037")
KAP, K2 = float(at[kappa]), float(at[k2])
D, M, C1, C2, BETA, R0, W0, MU, G = 1.0, 1.0, 1e-3, 1e-3, 0.05, 0.1, -1.0, 1.0, -3 * math.pi / 4
EPS = 1e-3
print(f"kappa = {KAP:.12g}, k2 = {K2:.12g} (oracle)")


def field(t, x):
    r, v, w = x
    dw = w - W0
    h = -(v - D * dw) * math.sin(G) - r * dw * math.cos(G)      # eq (4)
    g = -(v - D * dw) * math.cos(G) + r * dw * math.sin(G)      # eq (5)
    a6k = math.atan(1 / (6 * KAP))
    psi = a6k + abs(1 - 2 / math.pi * a6k) * math.atan2(abs(h), abs(g))
    cot = math.cos(psi) / math.sin(psi)
    lam = (h / EPS) / math.sqrt(1 + (h / EPS) ** 2)
    force = lam * MU * (4 / 3 - cot / (18 * KAP))
    moment = lam * np.sign(g) * MU / 6 * cot
    b2 = BETA * BETA
    p1 = K2 * (R0 - r) - C2 * v + M * r * w * w
    p2 = D * r * math.cos(G) + (b2 + r * r) * math.sin(G)
    coupling = C1 + 2 * M * r * v
    return [M * (b2 + r * r) * v,
            (b2 + D * D + r * r) * p1 - D * coupling * w + force * p2 + D * moment,
            D * p1 - coupling * w + force * r * math.cos(G) + moment]


C = T.CONFIGS + "/wheel-smoothed.yaml"
sets = ("ensemble.members=4", "integrator.t_end=20", "integrator.rtol=1e-9", "integrator.atol=1e-12",
        "initial.spread=1e-3")
TS = ("integrator.method=petsc-ts",)
ref, jacobians = None, {}
for label, extra_sets, extra in (("the default (auto), analytic Jacobian", (), ()),
                                 ("rosenbrock ros3p", ("integrator.rosenbrock=ros3p",), ()),
                                 ("bdf, batch 1", (*TS, "integrator.ts.batch=1"), ("-ts_type", "bdf")),
                                 ("bdf order 5, batch 4", (*TS, "integrator.ts.batch=4"),
                                  ("-ts_type", "bdf", "-ts_bdf_order", "5")),
                                 ("rosw (the config's), analytic Jacobian", TS, ()),
                                 ("rosw, coloured differences", (*TS, "integrator.ts.jacobian=fd"), ()),
                                 ("rosw, Jacobian kept 8 steps", (*TS, "integrator.ts.jacobian_lag=8"), ()),
                                 ("rosw veldd4 (order 4)", TS, ("-ts_rosw_type", "veldd4"))):
    j = T.run(C, "w.h5", *sets, *extra_sets, extra=extra)
    if "steps" not in j:  # the stepper types report their steps per member, in the file
        with h5py.File("w.h5") as f:
            j["steps"] = int(f["members/steps"][:].sum())
    with h5py.File("w.h5") as f:
        x0s, xs = f["members/initial_state"][:], f["members/final_state"][:]
    if ref is None:
        ref = np.array([solve_ivp(field, (0, 20), x0, method="Radau", rtol=1e-11, atol=1e-13).y[:, -1]
                        for x0 in x0s])
    d = np.abs(xs - ref).max()
    print(f"{label}: {j['integrator']}, {j['steps']} steps, max |engine - Radau| = {d:.2e}")
    T.check(j["failed"] == 0 and d < 1e-5, f"smoothed wheel ({label}) agrees with the independent Radau solve: {d:.1e}")
    want = ("rodas4" if label.startswith("the default") else "ros3p" if "ros3p" in label
            else "petsc-ts/bdf" if label.startswith("bdf") else "petsc-ts/rosw")
    T.check(j["integrator"] == want, f"{label}: runs {j['integrator']}")
    if want.startswith("petsc-ts"):
        jacobians[label] = j["jacobian_evals"] / j["steps"]
kept, fresh = jacobians["rosw, Jacobian kept 8 steps"], jacobians["rosw (the config's), analytic Jacobian"]
T.check(kept < 0.5 * fresh, f"jacobian_lag 8 reaches the solver: {kept:.2f} Jacobians per step, "
        f"{fresh:.2f} without it")

# The wheel's slip_jacobian (the analytic Jacobian above) at the config's initial state, which
# lies on Sigma where the slip fields (continued with |h|) have a kink: model check moves the
# state into each side's own region and compares with differences there.
r = subprocess.run([T.TWOFOLD, "model", "check", C], capture_output=True, text=True)
lines = [l for l in r.stdout.splitlines() if "slip_jacobian, side" in l]
T.check(r.returncode == 0 and len(lines) == 2 and all(l.split()[0] == "ok" and "moved off Sigma" in l
                                                       for l in lines),
        f"model check of the wheel on Sigma: exit {r.returncode}, {lines}")
T.finish()

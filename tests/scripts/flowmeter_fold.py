"""flowmeter_fold.py — job `fold` (src/geometry/fold.c) on the rotating ball flowmeter against the
errata's parametrisation of X_SS (Antali 2017, 4.68-4.70; flowmeter_ref.py):
  X_SS = (rho cos phi, 0, rho sin phi, v).
1. From a state of the lower X_SS at v_f = 1.3 (mu = 0.1), the continuation upwards in v_f
   passes the fold F where v_f(phi) is largest (maximised here by scipy) and comes back on
   the upper part; every branch point is a zero of F_SS (written out here), and its
   stability (largest real part of the eigenvalues, numpy on a difference Jacobian of that
   F_SS) changes at F only.
2. The fold followed in mu down to where the wall's slip u2 vanishes ends at
   mu_fold = (c^2 d/(4 g))^(1/3) (the thesis' closed form); on the way, the fold's v_f is the
   maximum of v_f(phi) at three values of mu.
3. Bad input: an unknown parameter, a start that is not stationary, a model without a field.
"""
import math
import subprocess

import h5py
import numpy as np
from scipy.optimize import minimize_scalar

import flowmeter_ref as ref
import testlib as T

T.setup()
g, d, j, c, r = 1.35, 0.096, 0.4, 0.039, 0.005


def parts(phi, mu):
    return ref.ss_parts(phi, mu, g, d, j, c)


def x_ss(phi, mu):
    v, rho, _ = parts(phi, mu)
    return np.array([rho * math.cos(phi), 0.0, rho * math.sin(phi), v])


def fold_of(mu):
    res = minimize_scalar(lambda p: -parts(p, mu)[2], bounds=(1e-9, 1.5), method="bounded",
                          options={"xatol": 1e-13})
    return res.x, -res.fun


def f_ss(x, mu, vf):
    return ref.f_ss(x, mu, vf, g, d, j, c)


def max_real(x, mu, vf):
    J = np.zeros((4, 4))
    for k in range(4):
        h = 1e-7 * max(abs(x[k]), 1e-3)
        e = np.zeros(4)
        e[k] = h
        J[:, k] = (f_ss(x + e, mu, vf) - f_ss(x - e, mu, vf)) / (2 * h)
    return np.max(np.linalg.eigvals(J).real)


def config(name, mu, vf, state, fold):
    return T.write(name + ".yaml", f"""
job: fold
model: {{name: flowmeter, params: {{r: {r}, d: {d}, j: {j}, g: {g}, mu: {mu}, c: {c}, v_f: {vf}}}}}
initial: {{state: {[float(q) for q in state]}}}
fold: {fold}
""")


# --- 1: the branch through the fold at mu = 0.1 ---------------------------------------------------
mu, vf0 = 0.1, 1.3
phi_f, vf_f = fold_of(mu)
lower = [p for p in np.linspace(0.3, 1.5, 2001) if abs(parts(p, mu)[2] - vf0) < 0.05]
phi0 = min(lower, key=lambda p: abs(parts(p, mu)[2] - vf0))  # a guess: Newton finishes it
cfg = config("branch", mu, vf0, x_ss(phi0, mu), "{parameter: v_f, min: 0.5, max: 5, points: 3000}")
s = T.run(cfg, "branch.h5")
T.check(len(s["folds"]) == 1 and abs(s["folds"][0] - vf_f) < 1e-9,
        f"one fold, at v_f = {s['folds'][0] if s['folds'] else None!r} (max of v_f(phi): "
        f"{vf_f:.13f} at phi = {phi_f:.9f})")
T.check(np.max(np.abs(np.array(s["fold_state"]) - x_ss(phi_f, mu))) < 1e-7,
        f"the fold's state is X_SS(phi = {phi_f:.6f}) = {x_ss(phi_f, mu)}")
f = h5py.File("branch.h5", "r")
br = f["fold/branch"][...]
res = max(np.max(np.abs(f_ss(row[1:5], mu, row[0]))) for row in br)
T.check(len(br) > 50 and res < 1e-10, f"{len(br)} branch points, all zeros of F_SS (max |F| {res:.1e})")
i_fold = int(np.argmax(br[:, 0]))
stable = br[:, 5] < 0
T.check(stable[:i_fold].all() and not stable[i_fold + 1:].any(),
        f"stable before F, unstable after ({stable[:i_fold].sum()} / {(~stable[i_fold + 1:]).sum()})")
for k in (i_fold // 2, i_fold + (len(br) - i_fold) // 2):
    mr = max_real(br[k, 1:5], mu, br[k, 0])
    T.check(np.sign(mr) == np.sign(br[k, 5]) and abs(mr - br[k, 5]) < 1e-5 * max(1, abs(mr)),
            f"v_f = {br[k, 0]:.4f}: largest real part {br[k, 5]:.6g} (numpy: {mr:.6g})")

# --- 2: the fold curve to mu_fold ----------------------------------------------------------------
mu_fold = (c * c * d / (4 * g)) ** (1 / 3)
cfg = config("curve", mu, vf0, x_ss(phi0, mu),
             "{parameter: v_f, min: 0.5, max: 5, points: 3000, "
             "track: {parameter: mu, to: 0.02, steps: 70, end_state: u2}}")
s = T.run(cfg, "curve.h5")
T.check(abs(s["curve_end_extrapolated"] - mu_fold) < 1e-8,
        f"the fold curve ends at mu = {s['curve_end_extrapolated']:.12f} (u2 -> 0; last point "
        f"{s['curve_end']:.9f} with u2 = {s['end_state_value']:.2e}), mu_fold = (c^2 d/(4g))^(1/3) "
        f"= {mu_fold:.12f}")
curve = h5py.File("curve.h5", "r")["fold/curve"][...]
for k in (5, 30, 60):
    q, p_fold = curve[k, 0], curve[k, 1]
    T.check(abs(p_fold - fold_of(q)[1]) < 1e-8,
            f"mu = {q:.5f}: the fold at v_f = {p_fold:.10f} (max of v_f(phi): {fold_of(q)[1]:.10f})")

# --- 3: bad input --------------------------------------------------------------------------------
def fails(name, text, *words):
    path = T.write(name + ".yaml", text)
    p = subprocess.run([T.TWOFOLD, "run", path, "-o", name + ".h5", "--quiet"], capture_output=True,
                       text=True)
    ok = p.returncode == 2 and all(w in p.stderr for w in words)
    T.check(ok, f"{name}: exit {p.returncode}, '{p.stderr.strip()[:160]}'")


model = f"model: {{name: flowmeter, params: {{mu: {mu}, d: {d}, v_f: {vf0}}}}}"
state = f"initial: {{state: {[float(q) for q in x_ss(phi0, mu)]}}}"
fails("unknown_parameter", f"job: fold\n{model}\n{state}\nfold: {{parameter: v_x}}\n",
      "fold.parameter", "v_x")
fails("not_stationary", f"job: fold\n{model}\ninitial: {{state: [1, 2, 3, 4]}}\nfold: {{parameter: v_f}}\n",
      "not_stationary.yaml:3", "initial.state", "not near a stationary state")
fails("no_field", "job: fold\nmodel: {name: logistic}\ninitial: {state: [0.5]}\nfold: {parameter: r}\n",
      "model.name")
T.finish()

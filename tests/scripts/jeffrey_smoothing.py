"""jeffrey_smoothing.py — the behaviours of Jeffrey's (2015) dry-friction oscillator persist
under smoothing sign(v) -> Lambda_eps(v) (the smoothed model is stiff: integrator.method auto
takes the Rosenbrock stepper, RODAS4, for it).

1. Stick–slip: with a = 1.5 > N mu_s = sqrt 2 the discontinuous (event-driven Filippov) block
   alternates sticking and slipping.  The smoothed trajectories converge to it at first
   order: sup_t |y_eps - y_0| shrinks tenfold per decade of eps (ratios within [6, 16]) and
   stays below 40 eps.  The reference is the Filippov run, an independent method (events,
   sliding with the multiplier), not a smoothed run at smaller eps.
2. Proposition 5's boundary under smoothing (eps = 1e-4): started stuck, the block never
   leaves the O(eps) layer (max |v| < 5 eps, |y| < 1e-3) at a = 0.98 N mu_s, and slips
   (max |v| > 0.1) at a = 1.02 N mu_s, where mu_s = sqrt 2 is the maximum of
   lambda + rho lambda (1 - lambda^2) at rho = 2, computed here.
3. The engine's generic smoothing section (model.smoothing, law sqrt = Lambda_eps, field
   auto = the kernel's regularised field) is the same model as the kernel's own eps:
   trajectories agree to 1e-8.
The Rosenbrock stepper takes the exact Jacobian at every step; the configs keep the setting
PETSc TS needs (integrator.method petsc-ts): Newton's Jacobian recomputed at every iteration
(-snes_lag_jacobian 1), since the friction law turns by 1/eps within |v| ~ eps, and a lagged
Jacobian there costs accuracy and steps.
"""
import math

import h5py
import numpy as np

import testlib as T

T.setup()
PERIODS_T = 3 * 2 * math.pi / 0.2
RHO = 2.0
lam = np.linspace(0, 1, 200001)
MU_S = float(np.max(lam + RHO * lam * (1 - lam**2)))
PARAMS = "k: 1, c: 0.1, N: 1, omega: 0.2, rho: 2, beta: 0.01"


def filippov(a):
    cfg = T.write("filippov.yaml", f"""
job: ensemble
model: {{name: jeffrey-oscillator, params: {{{PARAMS}, a: {a}}}}}
initial: {{state: [0, 0, 1, 0]}}
integrator: {{t_end: {PERIODS_T!r}, rtol: 1.0e-10, atol: 1.0e-12}}
ensemble: {{members: 1}}
output: {{trajectory_samples: 1001}}
""")
    s = T.run(cfg, "filippov.h5")
    with h5py.File("filippov.h5", "r") as f:
        return s, f["members/trajectory"][0].reshape(-1, 4)


def smoothed(a, eps, name, section=False):
    model = (f"{{name: jeffrey-oscillator, params: {{{PARAMS}, a: {a!r}}}, "
             f"smoothing: {{law: sqrt, epsilon: {eps}}}}}" if section else
             f"{{name: jeffrey-oscillator, params: {{{PARAMS}, a: {a!r}, eps: {eps}}}}}")
    cfg = T.write(name + ".yaml", f"""
job: trajectory
model: {model}
initial: {{state: [0, 0, 1, 0]}}
integrator: {{t_end: {PERIODS_T!r}, rtol: 1.0e-8, atol: 1.0e-10,
             ts: {{options: "-snes_lag_jacobian 1"}}}}
output: {{samples: 1001}}
""")
    s = T.run(cfg, name + ".h5")
    with h5py.File(name + ".h5", "r") as f:
        return s, f["trajectory/state"][:]


s, ref = filippov(1.5)
T.check(s["events"]["slide_end"] >= 4 and s["events"]["slide_start"] >= 4,
        f"Filippov a = 1.5: stick-slip ({s['events']['slide_start']} sticking phases)")
errs = []
for eps in (1e-2, 1e-3, 1e-4):
    s, x = smoothed(1.5, eps, f"eps{eps:g}")
    if eps == 1e-3:
        _, xs = smoothed(1.5, eps, "section", section=True)
        gap = float(np.max(abs(xs - x)))
        T.check(gap < 1e-8, f"model.smoothing (sqrt, regularised) = the kernel's eps: {gap:.1e}")
    T.check(s["integrator"] == "rodas4", f"eps = {eps:g} runs on {s['integrator']} (auto's)")
    errs.append(float(np.max(abs(x[:, 0] - ref[:, 0]))))
    T.check(errs[-1] < 40 * eps, f"eps = {eps:g}: sup |y_eps - y_0| = {errs[-1]:.3e} < 40 eps")
for e1, e2 in zip(errs, errs[1:]):
    T.check(6 <= e1 / e2 <= 16, f"first order in eps: error ratio per decade {e1 / e2:.2f}")

for frac, sticks in [(0.98, True), (1.02, False)]:
    a = frac * MU_S
    s, x = smoothed(a, 1e-4, f"stick{frac}")
    vmax, ymax = float(np.max(abs(x[:, 1]))), float(np.max(abs(x[:, 0])))
    stuck = vmax < 5e-4 and ymax < 1e-3
    T.check(stuck == sticks, f"eps = 1e-4, a = {frac} N mu_s: "
            f"{'stays stuck' if sticks else 'slips'} (max |v| {vmax:.2e}, max |y| {ymax:.2e})")
T.finish()

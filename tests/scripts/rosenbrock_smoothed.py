"""rosenbrock_smoothed.py — integrator.method rosenbrock on smoothed (stiff) Filippov members,
against scipy's Radau IIA integration of the same smoothed field written out here.

The model: a forced friction oscillator on a belt of speed vb, given as model.equations (so the
stepper gets the expression compiler's symbolic slip Jacobians through the smoothing's chain
rule), smoothed by Jeffrey's law Lambda_eps(h) = (h/eps) / sqrt(1 + (h/eps)^2), convex field:
  x' = v, v' = -x - 2 zeta v + a cos(theta) - mu Lambda_eps(v - vb), theta' = omega.
With a = 0.5 < mu = 0.6 the block sticks to the belt twice before t = 6; there the smoothed
field is stiff (df/dv ~ -mu/eps), at eps = 1e-4 and 1e-6.  For both Rosenbrock methods
(rodas4, the default, and ros3p) at rtol 1e-10 the final state agrees with Radau at rtol 1e-11
(analytic Jacobian) to within 1e-8, and the results name the method.
"""
import numpy as np
from scipy.integrate import solve_ivp

import testlib as T

T.setup()
ZETA, MU, VB, A, OMEGA = 0.05, 0.6, 0.5, 0.5, 1.25
X0, T_END = [0.2, 0.0, 0.0], 6.0


def model(eps):
    return f"""model:
  equations:
    name: belt-oscillator
    state: [x, v, theta]
    parameters: {{zeta: {ZETA}, mu: {MU}, vb: {VB}, a: {A}, omega: {OMEGA}}}
    switching: v - vb
    slip:
      plus: {{x: v, v: "-x - 2*zeta*v + a*cos(theta) - mu", theta: omega}}
      minus: {{x: v, v: "-x - 2*zeta*v + a*cos(theta) + mu", theta: omega}}
  smoothing: {{law: sqrt, epsilon: {eps!r}, field: convex}}
"""


def engine(eps, method, extra=()):
    cfg = T.write(f"belt-{eps}.yaml", f"""job: ensemble
{model(eps)}initial: {{state: {X0}}}
integrator: {{method: {method}, t_end: {T_END}, rtol: 1.0e-10, atol: 1.0e-12}}
ensemble: {{members: 1}}
""")
    import h5py
    out = f"belt-{eps}-{method}-{len(extra)}.h5"
    j = T.run(cfg, out, *extra)
    with h5py.File(out) as f:
        return j, int(f["members/steps"][0]), f["members/final_state"][0][()]


def radau(eps):
    def lam(h):
        u = h / eps
        return u / np.sqrt(1 + u * u), 1 / (eps * (1 + u * u) ** 1.5)

    def f(t, y):
        x, v, th = y
        return [v, -x - 2 * ZETA * v + A * np.cos(th) - MU * lam(v - VB)[0], OMEGA]

    def jac(t, y):
        x, v, th = y
        return [[0, 1, 0], [-1, -2 * ZETA - MU * lam(v - VB)[1], -A * np.sin(th)], [0, 0, 0]]

    r = solve_ivp(f, (0, T_END), X0, method="Radau", jac=jac, rtol=1e-11, atol=1e-13)
    assert r.success, r.message
    return r.y[:, -1]


for eps in (1e-4, 1e-6):
    ref = radau(eps)
    for method, extra in (("rosenbrock", ()),
                          ("rosenbrock", ("integrator.rosenbrock=ros3p",))):
        j, steps, x = engine(eps, method, extra)
        err = float(np.max(np.abs(x - ref)))
        name = j["integrator"]
        print(f"eps {eps:g}: {name}: {steps} steps, max |x - Radau| = {err:.2e}")
        T.check(name == ("ros3p" if extra else "rodas4"), f"eps {eps:g}: integrator {name}")
        T.check(err < 1e-8, f"eps {eps:g}: {name} final state within 1e-8 of Radau ({err:.1e})")
T.finish()

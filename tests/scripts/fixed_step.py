"""fixed_step.py — `integrator.step: fixed`: DOPRI5 takes exactly integrator.h0 per step.

On a linear flow x' = A x one DOPRI5 step of length h multiplies the state by R(hA), with the
stability polynomial of the Dormand–Prince 5th-order solution,
R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24 + z^5/120 + z^6/600 (Hairer & Wanner, Solving ODEs II,
IV.2).  For the harmonic oscillator, N fixed steps must give R(hA)^N x0 to rounding, while the
exact solution differs from it by the method's error at that h (much more than rounding); the
adaptive run lands near the exact solution instead.  The Lorenz spectrum on fixed steps has
the exact volume rate -(sigma + 1 + beta) as its sum.  Bad combinations are refused, naming
the key.

The same for `integrator.method: dop853`: one step multiplies by the pair's own stability
polynomial, R(z) = 1 + sum_k b^T A^(k-1) 1 z^k over its 12 stages, computed here from the
published tableau as scipy ships it (scipy.integrate._ivp.dop853_coefficients), not from
twofold's copy; its adaptive Lorenz spectrum has the exact sum too, and the run names its
integrator.
"""
import math
import os
import subprocess

import h5py
import numpy as np
import testlib as T

T.setup()
omega, x0, h, n = 1.3, np.array([1.0, 0.5]), 0.1, 20
C = T.write("harmonic.yaml", f"""job: ensemble
model:
  name: harmonic
  params: {{omega: {omega}}}
initial:
  state: [{x0[0]}, {x0[1]}]
integrator:
  t_end: {h * n}
  rtol: 1e-12
  atol: 1e-14
ensemble:
  members: 1
""")
A = np.array([[0.0, 1.0], [-omega**2, 0.0]])
Z = h * A
R, term = np.eye(2), np.eye(2)
for k in range(1, 6):
    term = term @ Z / k
    R = R + term
R = R + np.linalg.matrix_power(Z, 6) / 600.0
predicted = np.linalg.matrix_power(R, n) @ x0
t = h * n
exact = np.array([x0[0] * np.cos(omega * t) + x0[1] / omega * np.sin(omega * t),
                  -x0[0] * omega * np.sin(omega * t) + x0[1] * np.cos(omega * t)])


def final(out):
    with h5py.File(out) as f:
        return np.array(f["members/final_state"][0])


T.run(C, "fixed.h5", "integrator.step=fixed", f"integrator.h0={h}")
T.run(C, "adaptive.h5")
xf, xa = final("fixed.h5"), final("adaptive.h5")
method_error = np.max(np.abs(predicted - exact))
T.check(np.max(np.abs(xf - predicted)) < 1e-13,
        f"fixed steps: {xf} = R(hA)^{n} x0 = {predicted} "
        f"(difference {np.max(np.abs(xf - predicted)):.1e})")
T.check(method_error > 1e-8, f"the method's own error at h = {h} is visible: {method_error:.1e}")
T.check(np.max(np.abs(xa - exact)) < 1e-10 and np.max(np.abs(xa - predicted)) > 1e-8,
        f"the adaptive run lands on the exact solution instead ({np.max(np.abs(xa - exact)):.1e})")


# DOP853: R(z) from the tableau's 12 stages and 8th-order weights
from scipy.integrate._ivp import dop853_coefficients as d853  # noqa: E402

A8, b8 = d853.A[:12, :12], d853.B
R8, Ak = np.eye(2), np.eye(2)
gamma = [1.0]
for k in range(1, 13):
    # b^T A^(k-1) 1: the coefficient of z^k
    gamma.append(float(b8 @ np.linalg.matrix_power(A8, k - 1) @ np.ones(12)))
# a precondition on the reference itself (scipy's copy of the tableau), not a test of twofold
T.check(all(abs(gamma[k] - 1 / math.factorial(k)) < 1e-14 for k in range(9)),
        f"reference: the published tableau's R(z) matches exp(z) to z^8: {gamma[:9]}")
h8, n8 = 0.5, 4  # the same span in steps long enough for the 8th-order error to show
R8 = sum(g * np.linalg.matrix_power(h8 * A, k) for k, g in enumerate(gamma))
predicted8 = np.linalg.matrix_power(R8, n8) @ x0
j8 = T.run(C, "fixed853.h5", "integrator.step=fixed", f"integrator.h0={h8}", "integrator.method=dop853")
x8 = final("fixed853.h5")
T.check(np.max(np.abs(x8 - predicted8)) < 1e-13 and np.max(np.abs(predicted8 - exact)) > 1e-9,
        f"DOP853 fixed steps: R8(h8 A)^{n8} x0 at h8 = {h8} to {np.max(np.abs(x8 - predicted8)):.1e} "
        f"(its method error {np.max(np.abs(predicted8 - exact)):.1e})")
T.check(j8.get("integrator") == "dop853", f"the run names its integrator: {j8.get('integrator')}")

lor = T.run(T.CONFIGS + "/lorenz-spectrum.yaml", "lorenz.h5", "lyapunov.duration=500",
            "lyapunov.transient=50", "integrator.step=fixed", "integrator.h0=0.02")
s = lor["spectrum"]
T.check(abs(sum(s) + 41.0 / 3.0) < 2e-4,
        f"Lorenz on fixed steps 0.02: sum {sum(s):.6f} = -41/3 within 2e-4; lambda1 {s[0]:.3f}")
lor8 = T.run(T.CONFIGS + "/lorenz-spectrum.yaml", "lorenz853.h5", "lyapunov.duration=500",
             "lyapunov.transient=50", "integrator.method=dop853")
s8 = lor8["spectrum"]
T.check(abs(sum(s8) + 41.0 / 3.0) < 2e-4 and abs(s8[0] - s[0]) < 0.05,
        f"Lorenz on adaptive DOP853: sum {sum(s8):.6f} = -41/3 within 2e-4; lambda1 {s8[0]:.3f}")


def refused(sets, regex):
    cmd = [T.TWOFOLD, "run", C, "-o", "bad.h5", "--quiet"]
    for x in sets:
        cmd += ["--set", x]
    r = subprocess.run(cmd, capture_output=True, text=True)
    import re
    T.check(r.returncode == 2 and re.search(regex, r.stderr) and "integrator.step" in r.stderr,
            f"refused ({r.returncode}): {r.stderr.strip()}")


refused(["integrator.step=fixed"], r"h0 > 0")
refused(["integrator.step=fixed", "integrator.h0=0.1", "integrator.method=petsc-ts"], r"dopri5 or dop853")
refused(["integrator.step=constant"], r"adaptive|fixed")

# DOP853 is refused where slip starts non-smoothly (bodies under spatial friction)
r = subprocess.run([T.TWOFOLD, "run", T.CONFIGS + "/ball-rolling.yaml", "-o", "bad853.h5", "--quiet",
                    "--set", "integrator.method=dop853"], capture_output=True, text=True)
T.check(r.returncode == 2 and "integrator.method" in r.stderr and "dop853" in r.stderr
        and not os.path.exists("bad853.h5"), f"dop853 on a rolling ball refused: {r.stderr.strip()}")
T.finish()

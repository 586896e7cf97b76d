#!/usr/bin/python3
"""valve_step_limit.py — what limits the valve's step size where the scan spends its steps.

Integrates the valve (Hős & Champneys; configs/valve-bifurcation.yaml's parameters) at one
flow rate q with scipy's DOP853 (an independent implementation of the engine's pair) at the
benchmark's tolerance, and over the last stretch of the run reports the accepted step sizes
and h * lambda_min, lambda_min the most negative real part of the field's Jacobian's
eigenvalues at each step.  DOP853's stability region reaches about -6 on the real axis: a
median |h lambda| well inside it means the steps are limited by accuracy, not by stiffness.

  valve_step_limit.py [Q] [T_END] [WINDOW]      (defaults 7.54 300 30)
"""
import sys

import numpy as np
from scipy.integrate import solve_ivp

KAPPA, BETA, DELTA = 1.25, 20.0, 10.0


def main():
    q = float(sys.argv[1]) if len(sys.argv) > 1 else 7.54
    t_end = float(sys.argv[2]) if len(sys.argv) > 2 else 300.0
    window = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0

    def field(t, y):
        x, v, p = y
        return [v, -KAPPA * v - (x + DELTA) + p, BETA * (q - x * np.sqrt(max(p, 0.0)))]

    def jacobian(y):
        x, _, p = y
        s = np.sqrt(max(p, 1e-300))
        return np.array([[0, 1, 0], [-1, -KAPPA, 1], [-BETA * s, 0, -BETA * x / (2 * s)]])

    sol = solve_ivp(field, (0, t_end), [0.2, 0.0, 0.0], method="DOP853", rtol=1e-9, atol=1e-9)
    t, y = sol.t, sol.y
    idx = np.where(t[:-1] > t_end - window)[0]
    h = t[idx + 1] - t[idx]
    hl = np.array([h[k] * min(np.linalg.eigvals(jacobian(y[:, i])).real)
                   for k, i in enumerate(idx)])
    print(f"q = {q}: {len(t) - 1} steps to t = {t_end:g} (x from {y[0].min():.3g}, no impacts "
          f"handled: the seat is ignored); last {window:g} time units: {len(idx)} steps, "
          f"median h {np.median(h):.4g}; h * lambda_min percentiles 5/25/50/75/95: "
          + " ".join(f"{v:.3g}" for v in np.percentile(hl, [5, 25, 50, 75, 95])))
    print(f"x in [{y[0][idx].min():.3g}, {y[0][idx].max():.3g}], "
          f"p in [{y[2][idx].min():.3g}, {y[2][idx].max():.3g}]")


if __name__ == "__main__":
    main()

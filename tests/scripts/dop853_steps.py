"""dop853_steps.py — DOP853's step-size control against an independent implementation.

Hairer's DOP853 (Hairer, Norsett & Wanner, Solving ODEs I, II.10; the coefficients as scipy ships
them), written here in numpy with Hairer's error measure (the 5th-order estimate damped by the
3rd-order one) and his controller (h_new = h / clamp(err^(1/8) / 0.9, 1/6, 1/0.333); a rejected
step shrinks by at most 1/0.333), his starting step (order 8), and the engine's rule for the
last, truncated step.  On the harmonic oscillator and on Lorenz over one time unit (where the
controller also rejects steps) the accepted steps and the final state must be the engine's
(members/steps of a one-member ensemble): the same step sequence gives the same state to
rounding, any other one differs by about the tolerance.  (Dropping the 3rd-order damping from
the engine's error measure fails 6 of the 7 checks.)
"""
import math

import numpy as np
from scipy.integrate._ivp import dop853_coefficients as D

import testlib as T

A, B, C, E3, E5 = D.A[:12, :12], D.B, D.C[:12], D.E3, D.E5


def dop853(f, x, t_end, rtol, atol):
    n, t, nf = len(x), 0.0, 0
    f0 = f(x); nf += 1
    sk = atol + rtol * np.abs(x)
    d0, d1 = np.sqrt(np.mean((x / sk) ** 2)), np.sqrt(np.mean((f0 / sk) ** 2))
    h = 1e-6 if d0 < 1e-10 or d1 < 1e-10 else 0.01 * d0 / d1
    f1 = f(x + h * f0); nf += 1
    d2 = np.sqrt(np.mean(((f1 - f0) / h / sk) ** 2))
    dmax = max(d1, d2)
    h = min(100 * h, max(1e-6, h * 1e-3) if dmax <= 1e-15 else (0.01 / dmax) ** (1 / 8))
    acc = rej = 0
    while t < t_end:
        while True:
            step, last = h, t + h >= t_end
            if last:
                step = t_end - t
            K = np.zeros((13, n))
            K[0] = f0
            for s in range(1, 12):
                K[s] = f(x + step * (A[s, :s] @ K[:s])); nf += 1
            x1 = x + step * (B @ K[:12])
            K[12] = f(x1); nf += 1
            sk = atol + rtol * np.maximum(np.abs(x), np.abs(x1))
            e5, e3 = (E5 @ K) / sk, (E3 @ K) / sk
            s5, s3 = np.sum(e5 ** 2), np.sum(e3 ** 2)
            den = s5 + 0.01 * s3
            err = abs(step) * s5 / math.sqrt((den if den > 0 else 1.0) * n)
            fac11 = max(err, 1e-16) ** (1 / 8)
            if err <= 1.0:
                acc += 1
                fac = min(1 / 0.333, max(1 / 6, fac11 / 0.9))
                if not last or step / fac > h:
                    h = step / fac
                t = t_end if last else t + step
                x, f0 = x1, K[12]
                break
            rej += 1
            h = step / min(1 / 0.333, fac11 / 0.9)
    return x, acc, rej, nf


T.setup()


def compare(name, model, rhs, x0, t_end, rtol):
    atol = rtol * 1e-2
    xe, acc, rej, nf = dop853(rhs, np.array(x0, dtype=float), t_end, rtol, atol)
    steps, xt = T.run_one_member(name, model, "dop853", x0, t_end, rtol, atol)
    # the same steps give the same state to rounding; another step sequence differs by ~rtol
    gap = np.max(np.abs(xt - xe)) / max(1.0, np.max(np.abs(xe)))
    T.check(steps == acc and gap < 1e-13,
            f"{name}: engine {steps} steps; independent DOP853 {acc} accepted + {rej} rejected "
            f"({nf} evaluations); final states {gap:.1e} apart (relative)")
    return rej


omega = 2.0
for rtol, t_end in ((1e-6, 10.0), (1e-9, 10.0), (1e-12, 7.0)):
    compare(f"harmonic-{rtol:g}", f"{{name: harmonic, params: {{omega: {omega}}}}}",
            lambda y: np.array([y[1], -omega ** 2 * y[0]]), [1.0, 0.3], t_end, rtol)
# Lorenz over one time unit: its fast turns make the controller reject steps
s_, r_, b_ = 10.0, 28.0, 8.0 / 3.0
rejected = sum(compare(f"lorenz-{rtol:g}", "{name: lorenz}",
                       lambda y: np.array([s_ * (y[1] - y[0]), y[0] * (r_ - y[2]) - y[1],
                                           y[0] * y[1] - b_ * y[2]]),
                       [1.0, 1.0, 20.0], 1.0, rtol) for rtol in (1e-5, 1e-8, 1e-11))
T.check(rejected > 0, f"the Lorenz runs exercise rejected steps too ({rejected})")
T.finish()

"""bs23_steps.py — integrator.method: bs23 against an independent implementation.

Bogacki & Shampine's 3(2) pair (Appl. Math. Lett. 2, 1989: c = 0, 1/2, 3/4, 1; b = 2/9, 1/3, 4/9;
embedded weights 7/24, 1/4, 1/3, 1/8), written here in numpy with the step control the engine
documents for it (docs/CONFIG.md): the error of the 2nd-order solution measured as the RMS of
e_i / (atol + rtol max(|x_i|, |x1_i|)), h_new = h / clamp(err^(1/3) / 0.9, 1/5, 5), a rejected
step shrinking by at most 5, Hairer's starting step of order 3, and the last step truncated to
land on t_end (keeping the proposed step if that was larger).  On the harmonic oscillator, whose
exact solution is known, and on Lorenz over one time unit (where steps are rejected too), a
one-member ensemble must take the same accepted steps and end in the same state to rounding;
the harmonic runs must also be within 100 rtol of the exact solution.
"""
import math

import numpy as np

import testlib as T

A = np.array([[0, 0, 0, 0], [1 / 2, 0, 0, 0], [0, 3 / 4, 0, 0], [2 / 9, 1 / 3, 4 / 9, 0]])
C = np.array([0, 1 / 2, 3 / 4, 1])
B = np.array([2 / 9, 1 / 3, 4 / 9, 0])
BHAT = np.array([7 / 24, 1 / 4, 1 / 3, 1 / 8])


def bs23(f, x, t_end, rtol, atol):
    n, t, nf = len(x), 0.0, 0
    f0 = f(x); nf += 1
    sk = atol + rtol * np.abs(x)
    d0, d1 = np.sqrt(np.mean((x / sk) ** 2)), np.sqrt(np.mean((f0 / sk) ** 2))
    h = 1e-6 if d0 < 1e-10 or d1 < 1e-10 else 0.01 * d0 / d1
    f1 = f(x + h * f0); nf += 1
    d2 = np.sqrt(np.mean(((f1 - f0) / h / sk) ** 2))
    dmax = max(d1, d2)
    h = min(100 * h, max(1e-6, h * 1e-3) if dmax <= 1e-15 else (0.01 / dmax) ** (1 / 3))
    acc = rej = 0
    while t < t_end:
        while True:
            step, last = h, t + h >= t_end
            if last:
                step = t_end - t
            K = np.zeros((4, n))
            K[0] = f0
            for s in range(1, 4):
                K[s] = f(x + step * (A[s, :s] @ K[:s])); nf += 1
            x1 = x + step * (B @ K)
            sk = atol + rtol * np.maximum(np.abs(x), np.abs(x1))
            err = math.sqrt(np.mean((step * ((B - BHAT) @ K) / sk) ** 2))
            fac11 = max(err, 1e-16) ** (1 / 3)
            if err <= 1.0:
                acc += 1
                fac = min(5.0, max(1 / 5, fac11 / 0.9))
                if not last or step / fac > h:
                    h = step / fac
                t = t_end if last else t + step
                x, f0 = x1, K[3]
                break
            rej += 1
            h = step / min(5.0, fac11 / 0.9)
    return x, acc, rej, nf


T.setup()


def compare(name, model, rhs, x0, t_end, rtol, exact=None):
    atol = rtol * 1e-2
    xe, acc, rej, nf = bs23(rhs, np.array(x0, dtype=float), t_end, rtol, atol)
    steps, xt = T.run_one_member(name, model, "bs23", x0, t_end, rtol, atol)
    gap = np.max(np.abs(xt - xe)) / max(1.0, np.max(np.abs(xe)))
    T.check(steps == acc and gap < 1e-12,
            f"{name}: engine {steps} steps; independent BS23 {acc} accepted + {rej} rejected "
            f"({nf} evaluations); final states {gap:.1e} apart (relative)")
    if exact is not None:
        err = np.max(np.abs(xt - exact))
        T.check(err < 100 * rtol, f"{name}: {err:.2e} from the exact solution (rtol {rtol:g})")
    return rej


omega = 2.0
x0, v0 = 1.0, 0.3
for rtol, t_end in ((1e-5, 10.0), (1e-8, 5.0)):
    ex = np.array([x0 * math.cos(omega * t_end) + v0 / omega * math.sin(omega * t_end),
                   -x0 * omega * math.sin(omega * t_end) + v0 * math.cos(omega * t_end)])
    compare(f"harmonic-{rtol:g}", f"{{name: harmonic, params: {{omega: {omega}}}}}",
            lambda y: np.array([y[1], -omega ** 2 * y[0]]), [x0, v0], t_end, rtol, ex)
s_, r_, b_ = 10.0, 28.0, 8.0 / 3.0
rejected = sum(compare(f"lorenz-{rtol:g}", "{name: lorenz}",
                       lambda y: np.array([s_ * (y[1] - y[0]), y[0] * (r_ - y[2]) - y[1],
                                           y[0] * y[1] - b_ * y[2]]),
                       [1.0, 1.0, 20.0], 1.0, rtol) for rtol in (1e-4, 1e-7))
T.check(rejected > 0, f"the Lorenz runs exercise rejected steps too ({rejected})")
T.finish()

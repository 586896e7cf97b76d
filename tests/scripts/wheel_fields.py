"""wheel_fields.py — the wheel on a turntable (Szalai & Jeffrey 2014, eqs 1-7) in numpy, written
from the paper for the tests, at the Fig. 5 parameters: the slip velocity (h, g) and its
Jacobian, the field as f0 + B (F, M), the friction (F, M) of a slip direction, and the
sticking field.  kappa and k2 at the two-fold come from the independent sympy oracle
(wheel_oracle.py); nothing is read from twofold."""
import math

import numpy as np
from scipy.optimize import brentq

from wheel_oracle import derive_twofold, k2, kappa, twofold_point

_at = twofold_point(derive_twofold(), "0.1859", "-1.037")
KAP, K2 = float(_at[kappa]), float(_at[k2])
D, M, C1, C2, BETA, R0, W0, MU, GAM = 1.0, 1.0, 1e-3, 1e-3, 0.05, 0.1, -1.0, 1.0, -0.75 * math.pi
S, C, B2 = math.sin(GAM), math.cos(GAM), BETA**2
A6K = math.atan(1 / (6 * KAP))


def hg(x):
    r, v, w = x
    dw = w - W0
    return -(v - D * dw) * S - r * dw * C, -(v - D * dw) * C + r * dw * S


def jac_hg(x):
    r, v, w = x
    dw = w - W0
    return np.array([[-dw * C, -S, D * S - r * C], [dw * S, -C, D * C + r * S]])


def f0_b(x):
    """eqs (1)-(3) = f0 + B (F, M)."""
    r, v, w = x
    p1 = K2 * (R0 - r) - C2 * v + M * r * w * w
    cp = C1 + 2 * M * r * v
    f0 = np.array([M * (B2 + r * r) * v, (B2 + D * D + r * r) * p1 - D * cp * w, D * p1 - cp * w])
    p2 = D * r * C + (B2 + r * r) * S
    return f0, np.array([[0, 0], [p2, D], [r * C, 1.0]])


def friction(h, g, lam):
    """(F, M) of eqs (6)-(7) for the slip direction (h, g), with sign(h) replaced by lam."""
    psi = A6K + abs(1 - 2 / math.pi * A6K) * math.atan2(abs(h), abs(g))
    cot = math.cos(psi) / math.sin(psi)
    return np.array([lam * MU * (4 / 3 - cot / (18 * KAP)), np.sign(g) * lam * MU / 6 * cot])


def stick(x, lam):
    f0, b = f0_b(x)
    return f0 + b @ np.array([MU * lam, np.sign(hg(x)[1]) * KAP * MU * lam])


def sector_directions(rv):
    """The limit directions at the intersection: the roots th of the angular rate V (rv(th)[1])
    in the sector h > 0, then h < 0, each as (sector start, th, radial rate R = rv(th)[0])."""
    found = []
    for lo in (-math.pi / 2, math.pi / 2):
        grid = lo + np.concatenate([[1e-7, 1e-5, 1e-3], np.linspace(0.01, math.pi - 0.01, 400),
                                    math.pi - np.array([1e-3, 1e-5, 1e-7])])
        vals = [rv(t)[1] for t in grid]
        for i in range(len(grid) - 1):
            if vals[i] * vals[i + 1] < 0:
                th = brentq(lambda t: rv(t)[1], grid[i], grid[i + 1], xtol=1e-14)
                found.append((lo, th, rv(th)[0]))
    return found

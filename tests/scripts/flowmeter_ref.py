"""flowmeter_ref.py — the rotating ball flowmeter written out for the tests, independently of
the engine (Antali 2017, chapter 4): F_SS per unit mass with the slip directions of the state
(4.24)-(4.27), and the errata's parametrisation of the stationary states X_SS (4.68-4.70):
  s = sin phi, D = mu^2 (1 + j s^2) + (j - mu) s, v^2 = g d mu (1 + mu s^2)/D,
  rho = mu g d (j - mu) cos phi/(j v D), v_f = v + mu g (j - mu) s cos phi/(c D)."""
import math

import numpy as np


def f_ss(x, mu, vf, g, d, j, c):
    u1p, u1m, u2, v = x
    sp, sm = math.hypot(u1p, u2), math.hypot(u1m, u2)
    dp, dm = (u1p / sp, u2 / sp), (u1m / sm, u2 / sm)
    den = 1 + mu * mu * dp[1] * dm[1]
    Np, Nm = (g - mu * dm[1] * v * v / d) / den, (v * v / d + g * mu * dp[1]) / den
    T1p, T2p, T1m, T2m = -mu * Np * dp[0], -mu * Np * dp[1], -mu * Nm * dm[0], -mu * Nm * dm[1]
    drag = -c * (v - vf)
    return np.array([drag + v * u2 / d + (1 + j) / j * T1p + T1m, drag + (1 + j) / j * T1m + T1p,
                     v * (v - u1p) / d + (T2p + T2m) / j, drag + T1p + T1m])


def ss_parts(phi, mu, g, d, j, c):
    """(v, rho, v_f) of X_SS at phi."""
    s = math.sin(phi)
    D = mu**2 * (1 + j * s * s) + (j - mu) * s
    v = math.sqrt(g * d * mu * (1 + mu * s * s) / D)
    rho = mu * g * d * (j - mu) * math.cos(phi) / (j * v * D)
    return v, rho, v + mu * g * (j - mu) * s * math.cos(phi) / (c * D)

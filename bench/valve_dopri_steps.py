#!/usr/bin/python3
"""valve_dopri_steps.py — how many steps an independent Dormand–Prince 5(4) (scipy's RK45, RMS
error norm over atol + rtol |x|) takes on the valve protocol of bench/valve.sh at one q: impacts
on the seat reset v -> -r v, extrema of x counted, until 2048 + 64 events.  The count is set
beside twofold's DOPRI5 steps and odeint's Cash–Karp steps in docs/BENCHMARKS.md.

    /usr/bin/python3 bench/valve_dopri_steps.py [q] [tol]      (defaults 2.0, 1e-9)"""
import sys

import numpy as np
from scipy.integrate import solve_ivp

kappa, beta, delta, r = 1.25, 20.0, 10.0, 0.8
q = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
tol = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-9


def field(t, y):
    return [y[1], -kappa * y[1] - (y[0] + delta) + y[2], beta * (q - y[0] * np.sqrt(max(y[2], 0.0)))]


def seat(t, y):
    return y[0]


seat.terminal, seat.direction = True, -1


def extremum(t, y):
    return y[1]


y, t, steps, nfev, events = np.array([0.2, 0.0, 0.0]), 0.0, 0, 0, 0
while events < 2112:
    s = solve_ivp(field, (t, t + 1e4), y, method="RK45", rtol=tol, atol=tol, events=(seat, extremum))
    steps += len(s.t) - 1
    nfev += s.nfev
    events += len(s.t_events[1])
    if s.status != 1 or not len(s.t_events[0]):
        break  # no impact within 1e4 time units: at rest, or only extrema left
    events += 1
    t, y = s.t_events[0][0], s.y_events[0][0].copy()
    y[0], y[1] = 0.0, -r * y[1]
    if abs(y[1]) < 1e-6:
        break  # chattering: the reference does not follow it
print(f"q {q}: {steps} steps, {nfev} field evaluations, {events} events, t {t:.6g}")

#!/usr/bin/python3
"""impact_valve.py — the pressure-relief valve's bifurcation diagram against an independent
computation, and its bad input.

What the figure script draws (postproc/poincare_diagram.py, from a scan with quantity poincare)
is compared with:
  - q = 10: the stable rest point off the seat, x sqrt(x + delta) = q (closed form, Brent);
  - q = 3: the impacting period-1 orbit, from scipy's DOP853 with its own event location
    (impacts x = 0 with v -> -r v, extrema v = 0): the maxima of x and the period.
Bad input: r outside [0, 1] and q <= 0 are refused naming the key; the scan of a sticking
member records its stick time."""
import os
import subprocess
import sys

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import testlib as T

sys.path.insert(0, os.path.join(os.environ["SOURCE_DIR"], "postproc"))
import poincare_diagram as fig  # noqa: E402

KAPPA, BETA, DELTA, R = 1.25, 20.0, 10.0, 0.8


def field(t, y, q):
    x, v, p = y
    return [v, -KAPPA * v - (x + DELTA) + p, BETA * (q - x * np.sqrt(max(p, 0.0)))]


def reference_maxima(q, t_end=600.0, keep=40):
    """Maxima of x and their times, with impacts applied by restarting at each one."""
    hit = lambda t, y, q: y[0]  # noqa: E731
    hit.terminal, hit.direction = True, -1
    ext = lambda t, y, q: y[1]  # noqa: E731
    ext.direction = -1  # v decreasing through 0: a maximum of x
    t, y, maxima = 0.0, [0.2, 0.0, 0.0], []
    while t < t_end:
        s = solve_ivp(field, (t, t_end), y, method="DOP853", rtol=1e-11, atol=1e-11,
                      events=(hit, ext), args=(q,))
        maxima += [(te, ye[0]) for te, ye in zip(s.t_events[1], s.y_events[1])]
        if s.status != 1:
            break
        t, y = s.t_events[0][0], s.y_events[0][0].copy()
        y[0], y[1] = 0.0, -R * y[1]
    return np.array(maxima[-keep:])


T.setup()
cfg = os.path.join(T.CONFIGS, "valve-bifurcation.yaml")
T.run(cfg, "valve.h5", "scan.x.min=3", "scan.x.max=10", "scan.x.points=2")
d = fig.load("valve.h5", "x")
q3, q10 = d["x"][d["q"] == 3.0], d["x"][d["q"] == 10.0]
T.check(len(q3) == 64 and len(q10) == 64, f"64 recorded events per point ({len(q3)}, {len(q10)})")

x_rest = brentq(lambda x: x * np.sqrt(x + DELTA) - 10.0, 0.0, 10.0)
T.check(np.abs(q10 - x_rest).max() < 1e-6,
        f"q = 10: rest point x = {x_rest:.10f}, drawn {q10.min():.10f}..{q10.max():.10f}")

ref = reference_maxima(3.0)
ref_max, ref_period = ref[-1, 1], ref[-1, 0] - ref[-2, 0]
drawn_max = q3[q3 > 1.0]
T.check(len(drawn_max) == 32 and np.abs(drawn_max - ref_max).max() < 1e-6,
        f"q = 3: maxima {drawn_max.min():.10f}..{drawn_max.max():.10f}, scipy {ref_max:.10f}")
T.check(np.abs(q3[q3 < 1.0]).max() < 1e-8, "q = 3: the other events are impacts at x = 0")
import h5py  # noqa: E402

with h5py.File("valve.h5") as f:
    s = f["members/poincare"][0].reshape(64, 4)
    times = s[s[:, 1] > 1.0, 0]
    period = f["members/poincare_period"][0]
T.check(period == 2 and abs(np.diff(times).mean() - ref_period) < 1e-6,
        f"q = 3: period {np.diff(times).mean():.10f} (scipy {ref_period:.10f}), 2 events each")

# the same points on 2 ranks: bitwise the same samples
T.run(cfg, "valve2.h5", "scan.x.min=3", "scan.x.max=10", "scan.x.points=2", ranks=2)
with h5py.File("valve.h5") as a, h5py.File("valve2.h5") as b:
    same = all(np.array_equal(a["members/" + k][...], b["members/" + k][...], equal_nan=True)
               for k in ("poincare", "impacts", "stick_time", "poincare_period", "work"))
T.check(same, "1 and 2 ranks give bitwise identical samples")

# bad input: restitution outside [0, 1], flow rate not positive
for key, value in (("model.params.r", "1.5"), ("model.params.q", "0")):
    p = subprocess.run([T.TWOFOLD, "run", cfg, "-o", "bad.h5", "--set", f"{key}={value}",
                        "--set", "scan.x.points=2"], capture_output=True, text=True)
    T.check(p.returncode == 2 and key.split(".")[-1] in p.stderr and not os.path.exists("bad.h5"),
            f"{key}={value} refused naming the key: {p.stderr.strip()[:160]}")
T.finish()

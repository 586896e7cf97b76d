"""jeffrey_sticking.py — Proposition 5 of Jeffrey (2015) on the discontinuous (Filippov) dry-
friction oscillator with nonlinear sticking, checked on both sides of its boundary.

The static friction level mu_s is computed here, independently of the engine, as the maximum
of the sticking law mu(lambda) = lambda + rho lambda (1 - lambda^2) on [0, 1] (sympy for the
critical point, a dense grid as a cross-check).  Then, with forcing qdd = -a sin(omega t):
1. the block started stuck at rest stays stuck for ever iff a <= N mu_s: a = 0.98 N mu_s
   gives no slip event and y, v = 0 to rounding; a = 1.02 N mu_s breaks loose (rho = 0, 0.3, 2, 5:
   mu_s = 1, 1, sqrt 2, 2.53);
2. the strip |y0| <= (N mu_s - a)/k of sticking orbits: 0.97 of the half-width sticks,
   1.03 of it breaks loose (both signs);
3. stability along zeta (a = 0, y0 fixed so -k y0 = N mu(zeta) has roots either side of
   lambda_s): the root |zeta| < lambda_s attracts z; the root lambda_s < |zeta| < 1 is a
   saddle — z started 1e-6 on one side returns to the stable root, on the other side the
   block breaks loose.
"""
import math

import h5py
import numpy as np
import sympy as sp

import testlib as T

T.setup()
K, C, N, OMEGA, BETA = 1.0, 0.1, 1.0, 0.2, 1e-3


def static_friction(rho):
    """(lambda_s, mu_s): the maximum of mu on [0, 1], by sympy and checked on a grid."""
    lam = sp.symbols("lambda", positive=True)
    mu = lam + rho * lam * (1 - lam**2)
    crit = [float(r) for r in sp.solve(sp.diff(mu, lam), lam) if 0 < float(r) < 1]
    cands = crit + [1.0]
    lam_s = max(cands, key=lambda r: float(mu.subs(lam, r)))
    mu_s = float(mu.subs(lam, lam_s))
    grid = np.linspace(0, 1, 200001)
    assert abs(np.max(grid + rho * grid * (1 - grid**2)) - mu_s) < 1e-8
    return lam_s, mu_s


def run(name, rho, a, state, t_end=3 * 2 * math.pi / OMEGA):
    cfg = T.write(name + ".yaml", f"""
job: ensemble
model:
  name: jeffrey-oscillator
  params: {{k: {K}, c: {C}, N: {N}, a: {a!r}, omega: {OMEGA}, rho: {rho}, beta: {BETA}}}
initial: {{state: {[float(s) for s in state]}}}
integrator: {{t_end: {t_end!r}, rtol: 1.0e-10, atol: 1.0e-12}}
ensemble: {{members: 1}}
output: {{event_log: 4}}
""")
    s = T.run(cfg, name + ".h5")
    with h5py.File(name + ".h5", "r") as f:
        x = f["members/final_state"][0]
        status = int(f["members/status"][0])
    return s, x, status


mus = {}
for rho, expect in [(0.0, 1.0), (0.3, 1.0), (2.0, math.sqrt(2)), (5.0, None)]:
    lam_s, mu_s = static_friction(rho)
    mus[rho] = (lam_s, mu_s)
    if expect is not None:
        T.check(abs(mu_s - expect) < 1e-12, f"rho={rho}: mu_s = {mu_s} (expected {expect})")
    below = 0.98 * N * mu_s
    s, x, st = run(f"below{rho}", rho, below, [0, 0, 1, 0])
    T.check(s["events"]["slide_end"] == 0 and abs(x[0]) < 1e-10 and abs(x[1]) < 1e-12,
            f"rho={rho}: a = {below:.4f} < N mu_s stays stuck over 3 periods "
            f"(slide_end {s['events']['slide_end']}, y {x[0]:g}, v {x[1]:g})")
    above = 1.02 * N * mu_s
    s, x, st = run(f"above{rho}", rho, above, [0, 0, 1, 0])
    T.check(s["events"]["slide_end"] >= 1 and st == 1,
            f"rho={rho}: a = {above:.4f} > N mu_s breaks loose "
            f"(slide_end {s['events']['slide_end']}, status {st})")

# 2: the strip of sticking orbits, rho = 2, a = 1
rho, a = 2.0, 1.0
lam_s, mu_s = mus[rho]
half = (N * mu_s - a) / K


def stable_root(force):
    """zeta with N zeta (1 + rho (1 - zeta^2)) = force and |zeta| < lambda_s."""
    roots = np.roots([-N * rho, 0.0, N * (1 + rho), -force])
    real = [r.real for r in roots if abs(r.imag) < 1e-12 and abs(r.real) < lam_s]
    assert len(real) == 1, roots
    return real[0]


for sign in (+1, -1):
    for frac, sticks in [(0.97, True), (1.03, False)]:
        y0 = sign * frac * half
        zeta = stable_root(-K * y0)
        s, x, st = run(f"strip{sign}{frac}", rho, a, [y0, 0, 1 - zeta**2, 0])
        stuck = s["events"]["slide_end"] == 0 and abs(x[0] - y0) < 1e-10 and abs(x[1]) < 1e-12
        T.check(stuck == sticks,
                f"strip: y0 = {y0:+.4f} ({frac} of (N mu_s - a)/k = {half:.4f}) "
                f"{'sticks' if sticks else 'breaks loose'} (slide_end {s['events']['slide_end']})")

# 3: attracting and saddle sticking states (a = 0: constant applied force -k y0)
y0 = -0.95 * N * mu_s / K  # force 0.95 N mu_s: roots either side of lambda_s
force = -K * y0
roots = sorted(r.real for r in np.roots([-N * rho, 0.0, N * (1 + rho), -force])
               if abs(r.imag) < 1e-12 and 0 < r.real <= 1)
T.check(len(roots) == 2 and roots[0] < lam_s < roots[1],
        f"two sticking states zeta = {roots} either side of lambda_s = {lam_s:.4f}")
z_stable, z_saddle = 1 - roots[0] ** 2, 1 - roots[1] ** 2
for z0, label in [(z_stable + 0.05, "above the stable state"),
                  (z_stable - 0.05, "below the stable state"),
                  (z_saddle + 1e-6, "just above the saddle")]:
    s, x, st = run("attract", rho, 0.0, [y0, 0, z0, 0], t_end=40 * BETA * 10)
    T.check(s["events"]["slide_end"] == 0 and abs(x[2] - z_stable) < 1e-6,
            f"z from {label} ({z0:.6f}) relaxes to gamma(zeta) = {z_stable:.6f}: {x[2]:.8f}")
s, x, st = run("saddle", rho, 0.0, [y0, 0, z_saddle - 1e-6, 0], t_end=0.4)
T.check(s["events"]["slide_end"] == 1,
        f"z just below the saddle ({z_saddle - 1e-6:.6f}) breaks loose "
        f"(slide_end {s['events']['slide_end']})")
T.finish()

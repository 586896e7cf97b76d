"""jeffrey_noise.py — static friction of Jeffrey's (2015) smoothed oscillator survives small
noise and vanishes abruptly with enough noise, against an independent computation here.

Setting: no spring (k = 0), constant load qdd = a (theta = -pi/2, omega = 0) with a = 1.2
between the kinetic level N = 1 and the static level N mu_s = sqrt 2 (rho = 2), no hysteresis
(beta = 0), smoothing eps = 0.02, a random force sigma dW on v.  Then v obeys the 1-D SDE
    dv = (a - c v - N mu(v / eps)) dt + sigma dW,   mu(u) = Lambda(u) (1 + rho Gamma(u)),
and the block, started at rest, has broken loose by time T iff v has reached v_a = 0.3 (past
the static peak the drift stays positive, so it never sticks again).  The probability of
that is 1 - S(T, 0), where the survival probability S(t, v) solves the backward Kolmogorov
equation S_t = b S_v + sigma^2/2 S_vv with S = 0 at v_a, reflecting far below 0: solved here
by finite differences (Il'in exponential fitting, Crank–Nicolson).  The engine's ensembles
(Euler–Maruyama) must match it at sigma = 0.03 (static friction survives), 0.05 (the
threshold) and 0.08 (it is gone); without noise the block stays stuck, and with linear
sticking (rho = 0) it slides at once: the effect of noise is on the nonlinear term only.
"""
import math

import h5py
import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spl
from scipy.optimize import brentq

import testlib as T

T.setup()
A, C, N, RHO, EPS, V_A, T_END = 1.2, 0.1, 1.0, 2.0, 0.02, 0.3, 10.0
MEMBERS = 200


def drift(v, rho):
    u = v / EPS
    gam = 1 / (1 + u * u)
    return A - C * v - N * u * np.sqrt(gam) * (1 + rho * gam)


def escape_probability(sigma, rho=RHO, dv=EPS / 20, dt=5e-3, v_left=-0.1):
    v = np.arange(v_left, V_A + dv / 2, dv)
    n = len(v)
    b = drift(v, rho)
    pe = b * dv / sigma**2
    diff = np.where(abs(pe) > 1e-8, b * dv / 2 / np.tanh(np.where(pe == 0, 1, pe)), sigma**2 / 2)
    lo, up = diff / dv**2 - b / (2 * dv), diff / dv**2 + b / (2 * dv)
    L = sps.diags([lo[1:], -2 * diff / dv**2, up[:-1]], [-1, 0, 1], format="lil")
    L[0, 1] = lo[0] + up[0]  # reflecting: ghost node mirrors node 1
    L = L.tocsr()[: n - 1, : n - 1]  # node n-1 (v_a) is absorbing: S = 0 there
    eye = sps.identity(n - 1, format="csc")
    S = np.ones(n - 1)
    half = spl.splu((eye - dt / 2 * L).tocsc())
    for _ in range(4):  # Rannacher start: backward Euler half steps
        S = half.solve(S)
    explicit = eye + dt / 2 * L
    for _ in range(int(round((T_END - 2 * dt) / dt))):
        S = half.solve(explicit @ S)
    return 1 - S[int(round(-v_left / dv))]


def broke_loose(sigma, rho=RHO, members=MEMBERS, name="run", ranks=2):
    cfg = T.write(name + ".yaml", f"""
job: ensemble
model:
  name: jeffrey-oscillator
  params: {{k: 0, c: {C}, N: {N}, a: {A}, omega: 0, rho: {rho}, beta: 0, eps: {EPS},
           noise: {sigma}}}
initial: {{state: [0, 0, 1, {-math.pi / 2!r}]}}
integrator: {{method: {'euler-maruyama' if sigma > 0 else 'dopri5'}, dt: {EPS / 50}, t_end: {T_END},
             max_steps: 10000000}}
ensemble: {{members: {members}, seed: 11}}
""")
    T.run(cfg, name + ".h5", ranks=ranks)
    with h5py.File(name + ".h5", "r") as f:
        v = f["members/final_state"][:, 1]
        ok = f["members/status"][:] == 1
    T.check(ok.all(), f"{name}: every member ok")
    return float(np.mean(v >= V_A)), v


# the finite-difference solution against its own refinement
p_coarse, p_fine = escape_probability(0.05), escape_probability(0.05, dv=EPS / 60, dt=1e-3)
T.check(abs(p_coarse - p_fine) < 5e-3, f"Kolmogorov solution converged: {p_coarse:.4f} vs "
        f"{p_fine:.4f} on a 3x finer grid")

frac, v = broke_loose(0.0, members=2, name="quiet")
# the stuck state: the root of the drift below the static peak at lambda_s = 1/sqrt(2)
v_stuck = brentq(lambda x: drift(x, RHO), 0.0, EPS * 1.0)
T.check(frac == 0 and np.all(abs(v - v_stuck) < 1e-6),
        f"no noise: static friction holds a = {A} > N: v(T) = {v[0]:.6e} = the stuck root "
        f"{v_stuck:.6e} (an O(eps) creep)")
frac, v = broke_loose(0.0, rho=0.0, members=2, name="coulomb")
T.check(frac == 1, f"rho = 0 (no static peak): the same load slides at once (v(T) = {v[0]:.3f})")

for sigma in (0.03, 0.05, 0.08):
    p = escape_probability(sigma)
    frac, _ = broke_loose(sigma, name=f"sigma{sigma}")
    tol = 3 * math.sqrt(max(p * (1 - p), 0.01) / MEMBERS) + 0.04
    T.check(abs(frac - p) <= tol,
            f"sigma = {sigma}: broke loose by t = {T_END:g} in {frac:.3f} of {MEMBERS} members, "
            f"Kolmogorov equation {p:.3f} (tolerance {tol:.3f})")
# counter-based noise: the same members on 1 and 3 ranks are bitwise identical
_, v1 = broke_loose(0.05, members=30, name="ranks1", ranks=1)
_, v3 = broke_loose(0.05, members=30, name="ranks3", ranks=3)
T.check(np.array_equal(v1, v3), "noisy members bitwise identical on 1 and 3 ranks")
T.finish()

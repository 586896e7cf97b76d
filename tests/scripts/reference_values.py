"""reference_values.py — engine results against independent computations.

1. Deterministic Lorenz members (DOPRI5) against scipy's DOP853 at tight tolerance, started
   from the initial states the engine recorded.
2. Ornstein-Uhlenbeck ensemble (Euler-Maruyama, 2 ranks): sample mean and variance against
   the exact mean and variance of the EM recursion x_{k+1} = x_k + theta (mu - x_k) h + sigma dW,
   within Monte-Carlo error.
3. Harmonic oscillator trajectory (dense output samples) against cos/sin.
"""
import math

import h5py
import numpy as np
from scipy.integrate import solve_ivp

import testlib as T

T.setup()

# 1 ------------------------------------------------------------------------------------------
cfg = T.write("lorenz.yaml", """
job: ensemble
model: {name: lorenz, params: {sigma: 10, rho: 28, beta: 2.6666666666666665, noise: 0}}
initial: {state: [1, 1, 20], spread: 2.0}
integrator: {method: dopri5, t_end: 1.5, rtol: 1.0e-11, atol: 1.0e-11}
ensemble: {members: 24, seed: 5}
""")
T.run(cfg, "lorenz.h5")
f = h5py.File("lorenz.h5", "r")
x0, xf = f["members/initial_state"][...], f["members/final_state"][...]
worst = 0.0
for m in range(x0.shape[0]):
    def rhs(t, x):
        return [10 * (x[1] - x[0]), x[0] * (28 - x[2]) - x[1], x[0] * x[1] - 8 / 3 * x[2]]
    ref = solve_ivp(rhs, (0, 1.5), x0[m], method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
    worst = max(worst, np.max(np.abs(xf[m] - ref) / (1 + np.abs(ref))))
T.check(len(np.unique(x0[:, 0])) == 24, "initial states are distinct")
T.check(worst < 1e-7, f"Lorenz DOPRI5 vs scipy DOP853: max relative deviation {worst:.2e} < 1e-7")

# 2 ------------------------------------------------------------------------------------------
theta, mu, sigma, x_start, t_end, h, M = 1.5, 0.7, 0.8, 2.0, 1.0, 1e-3, 6000
cfg = T.write("ou.yaml", f"""
job: ensemble
model: {{name: ornstein-uhlenbeck, params: {{theta: {theta}, mu: {mu}, sigma: {sigma}}}}}
initial: {{state: [{x_start}]}}
integrator: {{method: euler-maruyama, t_end: {t_end}, dt: {h}}}
ensemble: {{members: {M}, seed: 99}}
""")
s = T.run(cfg, "ou.h5", ranks=2)
n = round(t_end / h)
a = 1 - theta * h
mean_exact = mu + (x_start - mu) * a**n
var_exact = sigma**2 * h * (1 - a ** (2 * n)) / (1 - a**2)
x = h5py.File("ou.h5", "r")["members/final_state"][...]
mean_se = math.sqrt(var_exact / M)
var_se = var_exact * math.sqrt(2 / (M - 1))
T.check(abs(x.mean() - mean_exact) < 4 * mean_se,
        f"OU mean {x.mean():.5f} vs exact EM mean {mean_exact:.5f} (4 se = {4 * mean_se:.5f})")
T.check(abs(x.var(ddof=1) - var_exact) < 4 * var_se,
        f"OU variance {x.var(ddof=1):.5f} vs exact EM variance {var_exact:.5f} (4 se = {4 * var_se:.5f})")
T.check(abs(s["final_state_mean"][0] - x.mean()) < 1e-12, "JSON mean equals the file's mean")

# 3 ------------------------------------------------------------------------------------------
cfg = T.write("osc.yaml", """
job: trajectory
model: {name: harmonic, params: {omega: 2.0}}
initial: {state: [1.0, 0.0]}
integrator: {t_end: 10.0, rtol: 1.0e-10, atol: 1.0e-12}
output: {samples: 401}
""")
T.run(cfg, "osc.h5")
g = h5py.File("osc.h5", "r")["trajectory"]
t, xs = g["t"][...], g["state"][...]
err = max(np.max(np.abs(xs[:, 0] - np.cos(2 * t))), np.max(np.abs(xs[:, 1] + 2 * np.sin(2 * t))))
T.check(len(t) == 401 and np.allclose(t, np.linspace(0, 10, 401), atol=1e-14, rtol=0), "sample times")
T.check(err < 1e-8, f"harmonic trajectory (dense output) max error {err:.2e} < 1e-8")
T.finish()

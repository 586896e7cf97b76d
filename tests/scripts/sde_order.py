"""sde_order.py — noisy members end to end: where the noise enters, and the schemes' moments.

Every expectation here is derived in this file from the scheme's recursion or the SDE, not
taken from the engine:
* friction noise, relay far above Sigma (x0 = 10, eps = 0.1, tanh(100) = 1): the multiplier
  lambda -> lambda + sigma xi moves x along df/dlambda = (-a, 0), so x_T = x0 + sum h y -
  a T - a sigma W_T; y_k = t_k exactly, and the drift sum is T^2/2 - T h/2 for
  Euler–Maruyama (left points) and T^2/2 + T h/2 for drift-implicit Euler (right points).
  Mean and variance a^2 sigma^2 T against the ensemble with their standard errors.
* noise on the parameter b of y' = 1 + b y (additive, b = 0): dy = dt + sigma y dW; and the
  same SDE from multiplicative state noise on y.  The scheme's moments follow
  m1_{k+1} = m1_k + h, m2_{k+1} = (1 + sigma^2 h) m2_k + 2 h m1_k + h^2 (both schemes: the
  drift does not depend on y); the SDE's own E y_T^2 = int_0^T 2 s e^{sigma^2 (T - s)} ds.
* weak order 1 on Ornstein–Uhlenbeck dX = -theta X dt + dW, x0 = 10: the mean of EM is
  x0 (1 - theta h)^N and of drift-implicit Euler x0 (1 + theta h)^-N; the ensemble means
  match these, and their bias against x0 e^{-theta T} halves with h.
* stiff noisy smoothed members (eps = 1e-4, dt = 1e-2 = 100 eps) on drift-implicit Euler,
  bitwise identical on 1, 2 and 3 ranks, with y_T ~ N(2, sigma^2 (1 + T)) (the spread on y_0
  plus the noise).
"""
import h5py
import numpy as np
from scipy.integrate import quad

import testlib as T

T.setup()
N = 2000


def finals(out):
    with h5py.File(out) as f:
        x = f["members/final_state"][:]
        return x.reshape(len(x), -1), f["members/status"][:]


def moments_ok(what, sample, mean, var):
    n = len(sample)
    m, v = sample.mean(), sample.var(ddof=1)
    se_m, se_v = np.sqrt(var / n), var * np.sqrt(2.0 / (n - 1))
    T.check(abs(m - mean) < 4 * se_m and abs(v - var) < 4 * se_v,
            f"{what}: mean {m:.5f} (exact {mean:.5f}, se {se_m:.1e}), var {v:.5f} (exact {var:.5f}, se {se_v:.1e})")


RELAY = T.write("relay.yaml", f"""job: ensemble
model:
  name: relay
  smoothing: {{law: tanh, epsilon: 0.1}}
  noise: {{on: friction, sigma: 0.05}}
initial: {{state: [10.0, 0.0]}}
integrator: {{t_end: 1.0, dt: 0.01}}
ensemble: {{members: {N}, seed: 3}}
""")
h, Tend, sigma = 0.01, 1.0, 0.05
for method, drift in (("euler-maruyama", Tend**2 / 2 - Tend * h / 2), ("drift-implicit", Tend**2 / 2 + Tend * h / 2)):
    for form in ("additive", "multiplicative"):
        j = T.run(RELAY, f"fr-{method}-{form}.h5", f"integrator.method={method}", f"model.noise.form={form}")
        T.check(j["integrator"] == method, f"integrator {j['integrator']}")
        x, st = finals(f"fr-{method}-{form}.h5")
        T.check(np.abs(x[:, 1] - Tend).max() < 1e-12, f"{method}: friction noise leaves y alone")
        moments_ok(f"friction noise ({method}, {form})", x[:, 0], 10 + drift - 1.0, sigma**2 * Tend)

# parameter and state noise giving dy = dt + s y dW
s2 = 0.5
m1, m2 = 0.0, 0.0
for k in range(100):
    m1, m2 = m1 + h, (1 + s2**2 * h) * m2 + 2 * h * m1 + h * h
sde_m2 = quad(lambda s: 2 * s * np.exp(s2**2 * (Tend - s)), 0, Tend)[0]
print(f"E y_T^2: scheme {m2:.5f}, SDE {sde_m2:.5f}")
for label, noise in (("parameter b", f"{{on: parameter, parameter: b, sigma: {s2}}}"),
                     ("state y, multiplicative", f"{{on: state, components: y, form: multiplicative, sigma: {s2}}}")):
    for method in ("euler-maruyama", "drift-implicit"):
        out = f"par-{method}-{label[:5]}.h5"
        T.run(RELAY, out, f"model.noise={noise}", f"integrator.method={method}", "initial.state=[0.3, 0.0]")
        x, st = finals(out)
        moments_ok(f"{label} ({method}) y_T", x[:, 1], m1, m2 - m1 * m1)
        T.check(abs(m2 - sde_m2) < 0.02, "the scheme's moments are those of the SDE to O(h)")
T.run(RELAY, "milstein.h5", f"model.noise={{on: parameter, parameter: b, sigma: {s2}}}",
      "integrator.method=drift-implicit", "integrator.milstein=true", "initial.state=[0.3, 0.0]")
x, st = finals("milstein.h5")
moments_ok("parameter noise, drift-implicit Milstein", x[:, 1], 1.0, sde_m2 - 1.0)

# weak order on Ornstein-Uhlenbeck
OU = T.write("ou.yaml", f"""job: ensemble
model: {{name: ornstein-uhlenbeck, params: {{theta: 1.0, mu: 0.0, sigma: 1.0}}}}
initial: {{state: [10.0]}}
integrator: {{t_end: 1.0, dt: 0.1}}
ensemble: {{members: 4000, seed: 9}}
""")
bias = {}
for method, factor in (("euler-maruyama", lambda h: (1 - h) ** round(1 / h)),
                       ("drift-implicit", lambda h: (1 + h) ** -round(1 / h))):
    for dt in (0.1, 0.05):
        T.run(OU, f"ou-{method}-{dt}.h5", f"integrator.method={method}", f"integrator.dt={dt}")
        x, st = finals(f"ou-{method}-{dt}.h5")
        # variance of the scheme: EM (1-h)^2 per step, implicit 1/(1+h)^2, plus h per step
        r = (1 - dt) ** 2 if method == "euler-maruyama" else (1 + dt) ** -2
        n_steps = round(1 / dt)
        var = sum(dt * r**k for k in range(n_steps)) if method == "euler-maruyama" else \
            sum(dt * r ** (k + 1) for k in range(n_steps))
        moments_ok(f"OU {method} dt={dt}", x[:, 0], 10 * factor(dt), var)
        bias[(method, dt)] = x[:, 0].mean() - 10 * np.exp(-1.0)
    ratio = bias[(method, 0.1)] / bias[(method, 0.05)]
    T.check(1.6 < ratio < 2.5, f"{method}: weak bias halves with h (ratio {ratio:.2f}): weak order 1")

# stiff noisy smoothed members
STIFF = T.write("stiff.yaml", """job: ensemble
model:
  name: relay
  smoothing: {law: sqrt, epsilon: 1.0e-4}
  noise: {on: state, sigma: 0.01}
initial: {state: [0.3, 0.0], spread: 0.01}
integrator: {t_end: 2.0, dt: 0.01}
ensemble: {members: 24, seed: 4}
""")
runs = []
for ranks in (1, 2, 3):
    j = T.run(STIFF, f"stiff-r{ranks}.h5", ranks=ranks)
    T.check(j["integrator"] == "drift-implicit" and j["failed"] == 0, f"auto picks drift-implicit: {j['integrator']}, failed {j['failed']}")
    runs.append(finals(f"stiff-r{ranks}.h5")[0])
T.check(all(np.array_equal(runs[0], r) for r in runs), "noisy smoothed ensemble bitwise identical on 1, 2, 3 ranks")
# y_T = y_0 + 2 + 0.01 W_T with y_0 ~ N(0, 0.01^2): x does not feed back into y
moments_ok("stiff members' y_T", runs[0][:, 1], 2.0, 0.01**2 * (1 + 2.0))
T.finish()

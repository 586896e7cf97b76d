"""lyapunov.py — Lyapunov spectra against published values and exact identities.

* Lorenz (sigma 10, rho 28, beta 8/3): published 0.9056, 0, -14.5723 (Sprott 2003); the sum
  of all exponents equals the time average of tr J = -(sigma + 1 + beta) exactly.
* Hénon (1.4, 0.3): published 0.41922, -1.62319 (each exponent on its own: their sum is
  ln b for any QR bookkeeping, so it would test nothing).
* Logistic map: the exponent against a long-orbit average of log|mu (1 - 2x)| computed here
  (independent of the engine), in a chaotic band and in the period-3 window.
* The finite-difference Jacobian gives the same spectrum as the analytic one.
* Time series (one component): Wolf et al. 1985 and Rosenstein et al. 1993 estimate lambda_1.
* Bad input: too many exponents, a duration shorter than the blocks, a noisy model, bad
  estimator settings.
* Filippov spectra through sliding: the smallest of a whole spectrum is -inf (sticking
  stick-slip oscillator; a mass stuck to its belt throughout: exactly 0 and -inf).
"""
import math
import subprocess

import numpy as np

import testlib as T

T.setup()
C = T.CONFIGS

s = T.run(C + "/lorenz-spectrum.yaml", "lorenz.h5")
l1, l2, l3 = s["spectrum"]
e = s["spectrum_error"]
T.check(abs(l1 - 0.9056) < max(4 * e[0], 0.015), f"Lorenz l1 = {l1:.4f} ± {e[0]:.1e} (0.9056)")
T.check(abs(l2) < max(4 * e[1], 0.01), f"Lorenz l2 = {l2:.5f} ± {e[1]:.1e} (0)")
T.check(abs(l3 + 14.5723) < max(4 * e[2], 0.03), f"Lorenz l3 = {l3:.4f} ± {e[2]:.1e} (-14.5723)")
trace = -(10 + 1 + 8 / 3)
T.check(abs(sum(s["spectrum"]) - trace) < 1e-6, f"Lorenz sum {sum(s['spectrum']):.9f} = tr J {trace:.9f}")
T.check(2.0 < s["kaplan_yorke_dimension"] < 2.1, f"Kaplan-Yorke {s['kaplan_yorke_dimension']:.4f} (2.06)")

fd = T.run(C + "/lorenz-spectrum.yaml", "lorenz_fd.h5", "lyapunov.jacobian=finite-differences")
# Step sizes see the tangent vectors, so the chaotic orbit itself differs after a while: the
# two estimates agree within their statistical errors, not bitwise.
dev = max(abs(a - b) for a, b in zip(fd["spectrum"], s["spectrum"]))
T.check(dev < 4 * max(e), f"finite-difference Jacobian: spectrum differs by {dev:.1e} (< 4 se)")

s = T.run(C + "/henon-spectrum.yaml", "henon.h5")
h1, h2 = s["spectrum"]
T.check(abs(h1 - 0.41922) < 0.002, f"Hénon l1 = {h1:.5f} (0.41922)")
T.check(abs(h2 + 1.62319) < 0.002, f"Hénon l2 = {h2:.5f} (-1.62319)")


def orbit_average(mu, n=2_000_000, skip=1000, x=0.3):
    """log|f'(x)| averaged along a long orbit (vectorised in blocks of independent orbits)."""
    xs = np.linspace(0.2, 0.8, 200)
    for _ in range(skip):
        xs = mu * xs * (1 - xs)
    acc = 0.0
    steps = n // len(xs)
    for _ in range(steps):
        acc += np.log(np.abs(mu * (1 - 2 * xs))).sum()
        xs = mu * xs * (1 - xs)
    return acc / (steps * len(xs))


for mu in (3.7, 3.83):
    ref = orbit_average(mu)
    s = T.run(C + "/henon-spectrum.yaml", f"logistic{mu}.h5", "model.name=logistic",
              f"model.params={{mu: {mu}}}", "initial.state=[0.3]", "lyapunov.duration=200000")
    T.check(abs(s["spectrum"][0] - ref) < 0.01,
            f"logistic mu={mu}: {s['spectrum'][0]:.5f} vs orbit average {ref:.5f}")


# Time-series estimators on one measured component (x), with their default embeddings:
# estimates of lambda_1, so a few percent off is expected (Wolf et al. 1985 quote ~10 %).
# The estimate is a property of one trajectory, and a change of rounding moves the
# trajectory: the settings are those whose estimate stays put between trajectories.
# Measured over starts x0 = (1.0 .. 1.7, 1, 20): Rosenstein (defaults) 0.84 .. 0.94; Wolf
# with the defaults (10000 samples, max_scale 0.03, evolve 20) 0.80 .. 1.17 over x0 1.0 ..
# 1.5 (one short record), with 100000 samples, max_scale 0.02 and evolve 10 0.86 .. 0.89.
WOLF_LORENZ = ("lyapunov.series.samples=100000", "lyapunov.wolf.max_scale=0.02",
               "lyapunov.wolf.evolve=10")
for est, tol_lorenz, tol_henon in (("rosenstein", 0.10, 0.02), ("wolf", 0.12, 0.03)):
    s = T.run(C + "/lorenz-spectrum.yaml", f"lorenz_{est}.h5", f"lyapunov.estimator={est}",
              *(WOLF_LORENZ if est == "wolf" else ()))
    T.check(abs(s["lambda1"] / 0.9056 - 1) < tol_lorenz,
            f"Lorenz x(t), {est}: lambda_1 = {s['lambda1']:.4f} (0.9056 within {tol_lorenz:.0%})")
    s = T.run(C + "/henon-spectrum.yaml", f"henon_{est}.h5", f"lyapunov.estimator={est}")
    T.check(abs(s["lambda1"] / 0.41922 - 1) < tol_henon,
            f"Hénon x_k, {est}: lambda_1 = {s['lambda1']:.4f} (0.41922 within {tol_henon:.0%})")


def fails(*sets, expect):
    cmd = [T.TWOFOLD, "check", C + "/lorenz-spectrum.yaml"]
    for x in sets:
        cmd += ["--set", x]
    r = subprocess.run(cmd, capture_output=True, text=True)
    T.check(r.returncode == 2 and expect in r.stderr, f"{sets}: exit {r.returncode}: {r.stderr.strip()}")


fails("lyapunov.exponents=4", expect="lyapunov.exponents")
fails("lyapunov.duration=5", expect="lyapunov.duration")
fails("model.params.noise=0.1", expect="noise")
fails("lyapunov.estimator=rosenstein", "lyapunov.rosenstein.fit_to=500", expect="fit_to")
fails("lyapunov.estimator=wolf", "lyapunov.series.component=w", expect="series.component")

# Any Filippov model smoothed by model.smoothing goes through the same job: the engine's
# smoothed field (src/geometry/smooth.c, finite-difference Jacobian) against the stick-slip kernel's own
# hand-written tanh smoothing with its analytic Jacobian.  All three exponents: with axis-aligned
# start vectors the forcing phase direction (exponent 0) is reached only slowly by rounding in
# the smoothed field, so the run is long and the first block carries that transient.
ss = C + "/stick-slip-spectrum.yaml"
common = ("lyapunov.duration=4000", "lyapunov.exponents=3")
own = T.run(ss, "own.h5", *common, "model.params.eps=0.001")
gen = T.run(ss, "gen.h5", *common, "model.smoothing.law=tanh", "model.smoothing.epsilon=0.001")
T.check(gen["method"] == "smoothed-variational" and own["method"] == "variational", "methods")
tol = [3 * math.hypot(a, b) + 2e-3 for a, b in zip(own["spectrum_error"], gen["spectrum_error"])]
T.check(all(abs(a - b) < t for a, b, t in zip(own["spectrum"], gen["spectrum"], tol)),
        f"model.smoothing spectrum {gen['spectrum']} = the kernel's own smoothing {own['spectrum']}")
T.check(abs(gen["spectrum_sum"] - gen["volume_rate"]) < 1e-6,
        f"smoothed: sum of exponents {gen['spectrum_sum']} = volume rate {gen['volume_rate']}")
# Sliding collapses a direction: an arrival in sliding (saltation into T Sigma), or sliding
# throughout, leaves the tangent vectors in T Sigma, so with the whole spectrum asked for the
# smallest exponent is -inf (reported as such, not as averaged rounding noise), and the others
# are those of the run that carries one vector fewer.
# (a) the forced stick-slip oscillator with long sticking phases (mu = 50);
sticky = ("model.params.mu=50", "lyapunov.duration=500")
three = T.run(ss, "ss3.h5", *sticky, "lyapunov.exponents=3")
T.check(three["spectrum"][2] is None and three.get("collapsed_directions") == 1
        and all(math.isfinite(v) for v in three["spectrum"][:2]),
        f"stick-slip with sticking: spectrum {three['spectrum']}, "
        f"collapsed {three.get('collapsed_directions')}")
# (b) a mass stuck to a belt for the whole run (x' = vb, v = vb): x-perturbations stay (0),
# v-perturbations are gone (-inf); before, the v direction came out as 0 too.
belt = T.write("belt.yaml", """job: lyapunov
model:
  equations:
    state: [x, v]
    parameters: {k: 1, c: 0.05, mus: 1000, muk: 0.5, vs: 0.2, vb: 0.3}
    switching: v - vb
    slip:
      plus: {x: v, v: "-k*x - c*v - (muk + (mus - muk)*exp(-(v - vb)/vs))"}
      minus: {x: v, v: "-k*x - c*v + (muk + (mus - muk)*exp((v - vb)/vs))"}
initial: {state: [0, 0.3]}
integrator: {rtol: 1.0e-10, atol: 1.0e-12}
lyapunov: {exponents: 2, transient: 1, duration: 100, interval: 1.0, blocks: 10}
""")
stuck = T.run(belt, "belt.h5")
T.check(abs(stuck["spectrum"][0]) < 1e-8 and stuck["spectrum"][1] is None
        and stuck.get("collapsed_directions") == 1,
        f"stuck to the belt throughout: spectrum {stuck['spectrum']} (0 and -inf)")

r = subprocess.run([T.TWOFOLD, "check", C + "/lorenz-spectrum.yaml", "--set",
                    "model.smoothing.epsilon=0.01"], capture_output=True, text=True)
T.check(r.returncode == 2 and "model.smoothing" in r.stderr, f"smoothing a smooth flow: {r.stderr.strip()}")
T.finish()

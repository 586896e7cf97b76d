"""model_refusals.py — the growable model ABI and the int returns of field callbacks
(tests/plugins/refusals.c).

- old-decay, compiled with sizes ending before members this header appended (and garbage in
  them), loads and runs: x(1) = exp(-r) for x' = -r x, r = 0.7.
- sqrt-decay, x' = -sqrt(x) refusing x < 0, started with a step so large that its trial stages
  leave the domain, is retried with smaller steps and reaches the analytic
  x(t) = (1 - t/2)^2 at t = 1.5 (0.0625).
- ceiling, x' = r x failing with code -7 once x > 1.5: in an ensemble spread around 0.8 the
  members whose x0 e^r exceeds 1.5 end as `failed` with the model's message (before t_end),
  the others reach x0 e^r, and the run's failure summary counts them; on DOPRI5, DOP853,
  PETSc TS, Euler-Maruyama and (as a Filippov model's slip field) the event-driven engine.
"""
import math
import os
import subprocess

import h5py
import numpy as np

import testlib as T

T.setup()
os.environ["TWOFOLD_CACHE"] = os.path.join(T.WORK, "cache")
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plugins", "refusals.c")


def first_component(f, name):
    return np.asarray(f[name][...]).reshape(len(f["/members/status"]), -1)[:, 0]


def config(tag, name, body):
    return T.write(f"{tag}.yaml", f"job: ensemble\nmodel:\n  source: {SOURCE}\n  name: {name}\n"
                   + body)


T.run(config("old", "old-decay", "  params: {r: 0.7}\n"
             "integrator: {t_end: 1, rtol: 1.0e-10, atol: 1.0e-12}\nensemble: {members: 1}\n"),
      "old.h5")
with h5py.File("old.h5") as f:
    x = first_component(f, "/members/final_state")[0]
    status = int(f["/members/status"][0])
T.check(status == 1 and abs(x - math.exp(-0.7)) < 1e-8,
        f"a model with shorter (older) tables loads and runs: x(1) = {x!r}, exp(-0.7) = "
        f"{math.exp(-0.7)!r}")

T.run(config("sqrt", "sqrt-decay", "integrator: {t_end: 1.5, h0: 4, rtol: 1.0e-10, "
             "atol: 1.0e-12}\nensemble: {members: 1}\n"), "sqrt.h5")
with h5py.File("sqrt.h5") as f:
    x = first_component(f, "/members/final_state")[0]
    status = int(f["/members/status"][0])
T.check(status == 1 and abs(x - 0.0625) < 1e-8,
        f"refusals outside the domain are retried with smaller steps: x(1.5) = {x!r} "
        f"(analytic 0.0625)")

R = 0.5
# (model, its extra keys, integrator settings, tolerance of x0 e^r): every route that runs a
# field (the SDE scheme's noise is too weak to matter at that tolerance)
ROUTES = [("ceiling", "", "method: dopri5", 1e-8), ("ceiling", "", "method: dop853", 1e-8),
          ("ceiling", "", "method: petsc-ts", 1e-5),
          ("ceiling", "  noise: {on: state, sigma: 1.0e-9}\n", "method: euler-maruyama, dt: 1.0e-4",
           1e-4), ("ceiling-filippov", "", "method: auto", 1e-8)]
for name, extra, integrator, tol in ROUTES:
    tag = f"{name} {integrator.split(',')[0]}"
    cfg = config("ceiling", name, f"  params: {{r: {R}}}\n{extra}initial: {{spread: 0.3}}\n"
                 f"integrator: {{t_end: 1, rtol: 1.0e-10, atol: 1.0e-12, {integrator}}}\n"
                 "ensemble: {members: 40}\n")
    res = subprocess.run([T.TWOFOLD, "run", cfg, "-o", "ceiling.h5", "--overwrite"],
                         capture_output=True, text=True)
    if not os.path.exists("ceiling.h5"):
        T.check(False, f"{tag}: no results ({res.returncode}): {res.stderr.strip()}")
        continue
    with h5py.File("ceiling.h5") as f:
        x0 = first_component(f, "/members/initial_state")
        xf = first_component(f, "/members/final_state")
        tf = f["/members/t_final"][...]
        status = f["/members/status"][...].astype(int)
    os.remove("ceiling.h5")
    peak = x0 * math.exp(R)
    above, below = peak > 1.5 * (1 + tol), peak < 1.5 * (1 - tol)  # clear of the threshold
    FAILED, OK = 6, 1
    ok_right = np.all(status[below] == OK) and np.allclose(xf[below], peak[below], rtol=tol)
    failed_right = np.all(status[above] == FAILED) and np.all(tf[above] < 1.0)
    n_failed = int(np.sum(status == FAILED))
    T.check(above.any() and below.any() and ok_right and failed_right,
            f"{tag}: the {above.sum()} of 40 members that cross x = 1.5 fail before t_end, the "
            f"others reach x0 e^r: statuses {np.bincount(status).tolist()}")
    T.check(res.stderr.count("model '" + name + "': x rose above the calibrated range (x > 1.5)")
            == n_failed, f"{tag}: each failed member is reported with the model's message")
    first = ", ".join(str(i) for i in np.flatnonzero(status == FAILED)[:5])
    T.check(f"{n_failed} of 40 members failed: failed {n_failed} (first: {first}" in res.stderr,
            f"{tag}: the failure summary names them: {res.stderr.strip().splitlines()[-1]!r}")
T.finish()

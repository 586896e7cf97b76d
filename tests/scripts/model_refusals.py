"""model_refusals.py — the growable model ABI and the int returns of field callbacks
(tests/plugins/refusals.c).

- old-decay, compiled with sizes ending before members this header appended (and garbage in
  them), loads and runs: x(1) = exp(-r) for x' = -r x, r = 0.7.
- sqrt-decay, x' = -sqrt(x) refusing x < 0, started with a step so large that its trial stages
  leave the domain, is retried with smaller steps and reaches the analytic
  x(t) = (1 - t/2)^2 at t = 1.5 (0.0625).
- ceiling, x' = r x failing with code -7 once x > 1.5: in an ensemble spread around 0.8 the
  members whose x0 e^r exceeds 1.5 end as `failed` with the model's message (before t_end),
  the others reach x0 e^r, and the run's failure summary counts them.
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
cfg = config("ceiling", "ceiling", f"  params: {{r: {R}}}\ninitial: {{spread: 0.3}}\n"
             "integrator: {t_end: 1, rtol: 1.0e-10, atol: 1.0e-12}\nensemble: {members: 40}\n")
res = subprocess.run([T.TWOFOLD, "run", cfg, "-o", "ceiling.h5"], capture_output=True, text=True)
with h5py.File("ceiling.h5") as f:
    x0 = first_component(f, "/members/initial_state")
    xf = first_component(f, "/members/final_state")
    tf = f["/members/t_final"][...]
    status = f["/members/status"][...].astype(int)
above = x0 * math.exp(R) > 1.5
FAILED, OK = 6, 1
ok_right = np.all(status[~above] == OK) and np.allclose(xf[~above], x0[~above] * math.exp(R),
                                                        rtol=1e-8)
failed_right = np.all(status[above] == FAILED) and np.all(tf[above] < 1.0)
T.check(above.any() and (~above).any() and ok_right and failed_right,
        f"{above.sum()} of 40 members cross x = 1.5 and fail before t_end; the others reach "
        f"x0 e^r: statuses {np.bincount(status).tolist()}")
T.check(res.stderr.count("model 'ceiling': x rose above the calibrated range (x > 1.5)")
        == above.sum(), "each failed member is reported with the model's message")
first = ", ".join(str(i) for i in np.flatnonzero(above)[:5])
T.check(f"{above.sum()} of 40 members failed: failed {above.sum()} (first: {first}" in res.stderr,
        f"the failure summary names them: {res.stderr.strip().splitlines()[-1]!r}")
T.finish()

"""switches_routes.py — a model with several switching functions, written outside twofold, runs
through every job that takes its kind by each of the three routes, with no rebuild.

The model is a chain of two blocks on a belt with Stribeck friction at each contact (as in
docs/YOUR_MODEL.md section 9, whose test checks the numbers against scipy).  Here it is given
as `model.equations`, as a C source (`model.source`) and as a library built from that source
(`twofold model build`), and each runs `trajectory`, `ensemble` (1 and 2 ranks), `lyapunov` and
`scan` (Lyapunov over the belt speed):
* the three routes agree: the source and the library bit for bit (same code, compiler and
  flags), the equations to the integrator's tolerance (the generated C orders operations its
  own way);
* the ensemble is the same bits on 1 and 2 ranks, and after an interruption (--stop-after) and
  --resume on 2 ranks;
* the spectra end in -inf where both blocks stick at once, on every route;
* a broken copy of the model (its field NaN below x1 = -0.5) costs only the members that go
  there: they are recorded with status nonfinite where they stopped, the others finish as with
  the sound model.
"""
import subprocess

import h5py
import numpy as np

import testlib as T

T.setup()

PARAMS = """    parameters:
      k1: {default: 1, min: 0}
      k2: {default: 1, min: 0}
      c: {default: 0.05, min: 0}
      mus: {default: 1.0, min: 0}
      muk: {default: 0.5, min: 0}
      vs: {default: 0.2, min: 0.001}
      vb: {default: 0.3}
"""
EQUATIONS = """model:
  equations:
    name: chain
    state: [x1, v1, x2, v2]
""" + PARAMS + """    switching: {s1: v1 - vb, s2: v2 - vb}
    field:
      x1: v1
      v1: "-k1*x1 + k2*(x2 - x1) - c*v1 - s1*(muk + (mus - muk)*exp(-abs(v1 - vb)/vs))"
      x2: v2
      v2: "-k2*(x2 - x1) - c*v2 - s2*(muk + (mus - muk)*exp(-abs(v2 - vb)/vs))"
"""
SOURCE = r"""#include <math.h>
#include <string.h>

#include "twofold/model.h"

enum { K1, K2, C, MUS, MUK, VS, VB };
static const tf_param params[] = {
    {"k1", 1, 0, INFINITY, "", false},  {"k2", 1, 0, INFINITY, "", false},
    {"c", 0.05, 0, INFINITY, "", false}, {"mus", 1, 0, INFINITY, "", false},
    {"muk", 0.5, 0, INFINITY, "", false}, {"vs", 0.2, 0.001, INFINITY, "", false},
    {"vb", 0.3, -INFINITY, INFINITY, "", false}};
static const char *const names[] = {"x1", "v1", "x2", "v2"};

static double h(int i, const double *x, const double *p, double *grad) {
  if (grad) memset(grad, 0, 4 * sizeof *grad), grad[2 * i + 1] = 1;
  return x[2 * i + 1] - p[VB];
}

static double mu(double vr, const double *p) {
  return p[MUK] + (p[MUS] - p[MUK]) * exp(-fabs(vr) / p[VS]);
}

static int f(double t, const double *x, const double *s, const double *p, double *dx) {
  (void)t;
  dx[0] = x[1];
  dx[1] = -p[K1] * x[0] + p[K2] * (x[2] - x[0]) - p[C] * x[1] - s[0] * mu(x[1] - p[VB], p);
  dx[2] = x[3];
  dx[3] = -p[K2] * (x[2] - x[0]) - p[C] * x[3] - s[1] * mu(x[3] - p[VB], p);
  BROKEN
  return 0;
}

static const tf_switches_ops ops = {TF_OPS_SIZE(tf_switches_ops), .nswitches = 2, .switching = h,
                                    .field = f};
static const tf_model_def chain = {TF_MODEL_HEAD, .name = "chain",
                                   .kind = TF_MODEL_SWITCHES, .dim = 4, .state_names = names,
                                   .nparams = 7, .params = params, .switches = &ops};
TWOFOLD_MODELS(&chain);
"""
T.write("chain.c", SOURCE.replace("BROKEN", ""))
T.write("broken.c", SOURCE.replace("BROKEN", "if (x[0] < -0.5) dx[1] = NAN;"))
res = subprocess.run([T.TWOFOLD, "model", "build", "chain.c", "-o", "libchain.so"],
                     capture_output=True, text=True)
T.check(res.returncode == 0, f"model build: {res.stderr.strip()}")

ROUTES = {"equations": EQUATIONS, "source": "model: {source: chain.c}\n",
          "library": "model: {library: libchain.so}\n"}
INITIAL = "initial: {state: [0, 0.3, 0.5, 0.3]}\n"
JOBS = {
    "trajectory": INITIAL + "integrator: {t_end: 40, rtol: 1.0e-10, atol: 1.0e-12}\n"
                  "output: {samples: 401, event_log: 100}\n",
    "ensemble": "initial: {state: [0, 0.3, 0.5, 0.3], spread: 0.1}\n"
                "integrator: {t_end: 30, rtol: 1.0e-10, atol: 1.0e-12}\n"
                "ensemble: {members: 16, seed: 5}\n",
    "lyapunov": INITIAL + "integrator: {rtol: 1.0e-10, atol: 1.0e-12}\n"
                "lyapunov: {transient: 50, duration: 400, interval: 1.0, blocks: 2}\n",
    "scan": INITIAL + "integrator: {rtol: 1.0e-9, atol: 1.0e-11}\n"
            "lyapunov: {transient: 50, duration: 200, interval: 1.0, blocks: 2}\n"
            "scan: {quantity: lyapunov, x: {param: vb, min: 0.25, max: 0.35, points: 3}}\n",
}
DATA = {"trajectory": "trajectory/state", "ensemble": "members/final_state",
        "lyapunov": "lyapunov/spectrum", "scan": "members/spectrum"}

got = {}
for route, model in ROUTES.items():
    for job, rest in JOBS.items():
        cfg = T.write(f"{route}_{job}.yaml", f"job: {job}\n" + model + rest)
        try:
            T.run(cfg, f"{route}_{job}.h5")
            with h5py.File(f"{route}_{job}.h5") as f:
                got[route, job] = f[DATA[job]][...]
            T.check(np.all(np.isfinite(got[route, job]) | (got[route, job] == -np.inf)),
                    f"{route} / {job}: runs, finite results")
        except RuntimeError as e:
            T.check(False, f"{route} / {job}: {e}")
    try:
        T.run(f"{route}_ensemble.yaml", f"{route}_ensemble2.h5", ranks=2)
        with h5py.File(f"{route}_ensemble2.h5") as f:
            same = np.array_equal(f["members/final_state"][...], got.get((route, "ensemble")))
        T.check(same, f"{route} / ensemble: the same bits on 2 ranks as on 1")
    except RuntimeError as e:
        T.check(False, f"{route} / ensemble on 2 ranks: {e}")

# interrupted after 5 members (one per claim), resumed on 2 ranks: the uninterrupted bits
cmd = [T.TWOFOLD, "run", "source_ensemble.yaml", "-o", "resumed.h5", "--quiet", "--overwrite",
       "--set", "ensemble.chunk=1"]
r1 = subprocess.run(cmd + ["--stop-after", "5"], capture_output=True, text=True)
with h5py.File("resumed.h5") as f:
    partial = int(np.count_nonzero(f["members/done"][...]))
r2 = subprocess.run([T.MPIEXEC, "-n", "2"] + cmd[:-3] + ["--resume", "--set", "ensemble.chunk=1"],
                    capture_output=True, text=True)
with h5py.File("resumed.h5") as f:
    same = np.array_equal(f["members/final_state"][...], got.get(("source", "ensemble")))
T.check(r1.returncode == 3 and partial == 5 and r2.returncode == 0 and same,
        f"ensemble stopped after {partial} members (exit {r1.returncode}), resumed on 2 ranks "
        f"(exit {r2.returncode} {r2.stderr.strip()[-200:]}): the uninterrupted bits")

for job in JOBS:
    if all((r, job) in got for r in ROUTES):
        a, b, c = (got[r, job] for r in ROUTES)
        T.check(np.array_equal(b, c), f"{job}: the library gives the source's bits")
        fin = np.isfinite(a)
        d = np.max(np.abs(a[fin] - b[fin])) if fin.any() else 0.0
        T.check(np.array_equal(fin, np.isfinite(b)) and d < 1e-7,
                f"{job}: equations and source agree (max difference {d:.1e})")
for route in ROUTES:
    lam = got.get((route, "lyapunov"))
    T.check(lam is not None and abs(lam[0]) < 0.02 and np.all(lam[2:] == -np.inf),
            f"{route}: spectrum {lam}: about 0, then two -inf (both blocks stick at once)")

# a broken model: members that reach x1 < -0.5 are recorded as nonfinite, the rest finish
wide = "initial: {state: [0, 0.3, 0.5, 0.3], spread: 0.4}\n" \
       "integrator: {t_end: 30, rtol: 1.0e-10, atol: 1.0e-12}\nensemble: {members: 24, seed: 5}\n"
T.write("sound.yaml", "job: ensemble\nmodel: {source: chain.c}\n" + wide)
T.write("broken.yaml", "job: ensemble\nmodel: {source: broken.c}\n" + wide)
sound, broken = T.run("sound.yaml", "sound.h5"), T.run("broken.yaml", "broken.h5")
with h5py.File("sound.h5") as s, h5py.File("broken.h5") as b:
    status, end = b["members/status"][...], b["members/final_state"][...]
    fine = status == 1
    d = np.max(np.abs(s["members/final_state"][...][fine] - end[fine]))
T.check(broken["status"] == "complete" and 0 < np.count_nonzero(status == 2) < len(status),
        f"broken model: the ensemble completes, {np.count_nonzero(status == 2)} of {len(status)} "
        f"members nonfinite ({broken['status_counts']})")
T.check(np.all(end[status == 2][:, 0] < -0.5 + 1e-6) and np.all(fine | (status == 2)),
        f"the nonfinite members stopped where the field is NaN: x1 = {end[status == 2][:, 0]}")
T.check(d < 1e-9, f"the other members end as with the sound model (max difference {d:.1e}: "
        "the two sources compile to different code)")
T.finish()

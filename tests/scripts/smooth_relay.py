"""smooth_relay.py — smoothed Filippov members on PETSc TS, against exact and independent answers.

The relay x' = y - a sign(x), y' = 1 (kernels/relay.c) from (0.3, 0) has the exact Filippov
solution: slip down x = 0.3 + t^2/2 - t until t1 = 1 - sqrt(0.4), sliding on x = 0 while
|y| = t < a = 1, then slip up x = (t - 1)^2 / 2.  Smoothed with sign -> Lambda(x/eps), the
sliding becomes a layer x = eps Lambda^{-1}(t), and the error is largest where sliding ends
(t -> 1, where Lambda^{-1} blows up).  Balancing the layer's drift against y - 1 gives the
rates checked here:
  linear  clamp: the layer reaches x = eps at t = 1 and then slips exactly: sup error -> eps;
  tanh:   1 - tanh u ~ 2 e^{-2u}: error ~ eps log(1/eps) (ratio per decade of eps ~ 10/1.3);
  sqrt:   Jeffrey's Lambda_eps, 1 - Lambda ~ 1/(2u^2): the layer x ~ eps s^{-1/2} (s = 1 - t)
          moves at eps s^{-3/2}, which meets the drift s at s ~ eps^{2/5}: error ~ eps^{4/5}.
y(t) = t is exact in every case (y does not see x).
Also: PETSc TS (bdf, rosw, arkimex, with coloured finite-difference Jacobians) against an
independent scipy solve_ivp(Radau) of the smoothed relay with b = 0.5 written here; the
command line's -ts_type overriding the config; ensembles bitwise identical on 1, 2 and 3
ranks, one TS per member and in batches (with chunks that split batches); bad input.
"""
import json
import os
import subprocess

import h5py
import numpy as np
from scipy.integrate import solve_ivp

import testlib as T

T.setup()
TRAJ = T.write("relay.yaml", """job: trajectory
model:
  name: relay
  smoothing: {law: tanh, epsilon: 1.0e-3}
initial: {state: [0.3, 0.0]}
integrator: {t_end: 2.0, rtol: 1.0e-9, atol: 1.0e-12}
output: {samples: 401}
""")


def exact_x(t):
    t1 = 1 - np.sqrt(0.4)
    return np.where(t < t1, 0.3 + t * t / 2 - t, np.where(t < 1, 0.0, (t - 1) ** 2 / 2))


def trajectory(out, *sets, extra=()):
    T.run(TRAJ, out, *sets, extra=extra)
    with h5py.File(out) as f:
        return f["trajectory/t"][:], f["trajectory/state"][:]


# --- convergence to the Filippov solution as eps -> 0 -------------------------------------
eps = [1e-2, 1e-3, 1e-4]
for law in ("linear", "tanh", "sqrt"):
    errs = []
    for e in eps:
        t, s = trajectory(f"{law}{e:g}.h5", f"model.smoothing.law={law}", f"model.smoothing.epsilon={e}")
        errs.append(np.abs(s[:, 0] - exact_x(t)).max())
        T.check(np.abs(s[:, 1] - t).max() < 1e-10, f"{law} eps={e:g}: y(t) = t exactly")
    rate = np.polyfit(np.log(eps), np.log(errs), 1)[0]
    print(f"{law}: sup |x - x_Filippov| = {errs}, rate {rate:.3f}")
    if law == "linear":
        T.check(all(abs(err / e - 1) < 0.02 for err, e in zip(errs, eps)), f"linear: error -> eps ({errs})")
    elif law == "tanh":
        ratios = [errs[i] / (eps[i] * np.log(1 / eps[i])) for i in range(3)]
        T.check(max(ratios) / min(ratios) < 1.3 and 0.85 < rate < 1.0,
                f"tanh: error ~ eps log(1/eps) (error / (eps log 1/eps) = {ratios})")
    else:
        T.check(abs(rate - 0.8) < 0.06, f"sqrt (Jeffrey's Lambda_eps): rate {rate:.3f} ~ 4/5")
    T.check(errs[2] < errs[1] < errs[0], f"{law}: converges to the Filippov solution")

# the figure of the same: smoothed members against the event-driven engine's trajectory
FIL = T.write("fil.yaml", """job: ensemble
model: {name: relay}
initial: {state: [0.3, 0.0]}
integrator: {t_end: 2.0, rtol: 1.0e-10, atol: 1.0e-12}
ensemble: {members: 1}
output: {trajectory_samples: 2001}
""")
T.run(FIL, "fil.h5")
fig = subprocess.run(["/usr/bin/python3", os.environ["SOURCE_DIR"] + "/postproc/smooth_convergence.py", "relay.png", "fil.h5"]
                     + [f"{law}{e:g}.h5" for law in ("linear", "tanh", "sqrt") for e in eps],
                     capture_output=True, text=True)
T.check(fig.returncode == 0 and os.path.getsize("relay.png") > 10000, f"figure postproc/smooth_convergence.py: {fig.stderr[-200:]}")

# --- PETSc TS against an independent Radau solve (b = 0.5, eps = 1e-3, tanh) ----------------
A, B, E = 1.0, 0.5, 1e-3
ref = solve_ivp(lambda t, z: [z[1] - A * np.tanh(z[0] / E), 1 + B * z[1]], (0, 2), [0.3, 0.0],
                method="Radau", rtol=1e-11, atol=1e-13, dense_output=True,
                jac=lambda t, z: [[-A / E * (1 - np.tanh(z[0] / E) ** 2), 1], [0, B]])
for ts_type in ("bdf", "rosw", "arkimex"):
    t, s = trajectory(f"radau-{ts_type}.h5", "model.params.b=0.5", extra=("-ts_type", ts_type))
    d = np.abs(s - ref.sol(t).T).max()
    print(f"{ts_type}: max |TS - Radau| = {d:.2e}")
    T.check(d < 2e-5, f"petsc-ts/{ts_type} agrees with scipy Radau to {d:.1e}")

# --- smooth kernels on TS: the kernel's analytic Jacobian and coloured differences ---------
LOR = T.write("lorenz.yaml", """job: ensemble
model: {name: lorenz}
initial: {state: [1.0, 1.0, 1.0], spread: 0.1}
integrator: {method: petsc-ts, t_end: 1.0, rtol: 1.0e-10, atol: 1.0e-12, ts: {type: rosw, batch: 1}}
ensemble: {members: 3, seed: 2}
""")
sig, rho, beta = 10.0, 28.0, 8.0 / 3.0
lor = lambda t, z: [sig * (z[1] - z[0]), z[0] * (rho - z[2]) - z[1], z[0] * z[1] - beta * z[2]]
res = {}
for jac in ("analytic", "fd"):
    j = T.run(LOR, f"lor-{jac}.h5", f"integrator.ts.jacobian={jac}")
    with h5py.File(f"lor-{jac}.h5") as f:
        res[jac] = f["members/final_state"][:]
        x0s = f["members/initial_state"][:]
    ref = np.array([solve_ivp(lor, (0, 1), x0, method="Radau", rtol=1e-12, atol=1e-12).y[:, -1] for x0 in x0s])
    d = np.abs(res[jac] - ref).max()
    T.check(j["jacobian_evals"] > 0 and d < 1e-5, f"lorenz on petsc-ts/rosw, {jac} Jacobian: |TS - Radau| = {d:.1e}")

# --- options: config, then the command line -----------------------------------------------
ENS = T.write("ens.yaml", """job: ensemble
model:
  name: relay
  smoothing: {law: sqrt, epsilon: 1.0e-3}
initial: {state: [0.3, 0.0], spread: 0.05}
integrator:
  t_end: 2.0
  ts: {type: rosw}
ensemble: {members: 10, seed: 5}
""")
j = T.run(ENS, "rosw.h5")
T.check(j["integrator"] == "petsc-ts/rosw" and j["steps"] > 0 and j["jacobian_evals"] > 0,
        f"config type reported with counts: {j['integrator']}, {j['steps']} steps, {j['jacobian_evals']} Jacobians")
j = T.run(ENS, "cl.h5", extra=("-ts_type", "bdf"))
T.check(j["integrator"] == "petsc-ts/bdf", f"-ts_type on the command line wins: {j['integrator']}")
j = T.run(ENS, "steps.h5", 'integrator.ts.options="-ts_max_steps 5"')
T.check(j["status_counts"]["max_steps"] == 10, f"config option -ts_max_steps 5 honoured: {j['status_counts']}")
T.run(ENS, "steps300.h5", 'integrator.ts.options="-ts_max_steps 300"', "integrator.ts.batch=4")
with h5py.File("steps300.h5") as f:
    tf = f["members/t_final"][:]
T.check(len(set(tf.tolist())) == 10 and (tf < 2).all(),
        f"a failed batch is rerun member by member: each member records its own time reached")
j = T.run(ENS, "steps2.h5", 'integrator.ts.options="-ts_max_steps 5"', extra=("-ts_max_steps", "100000"))
T.check(j["failed"] == 0, "the command line's -ts_max_steps overrides the config's")

# the options in effect are part of the config as run, so a resume cannot mix integrators
r = subprocess.run([T.TWOFOLD, "run", ENS, "-o", "rosw.h5", "--resume", "--quiet", "-ts_type", "bdf"],
                   capture_output=True, text=True)
T.check(r.returncode == 2 and "cannot resume" in r.stderr, f"resume with another -ts_type refused: {r.stderr.strip()[:120]}")
r = subprocess.run([T.TWOFOLD, "check", ENS, "--print", "-ts_type", "arkimex", "-ts_adapt_type", "basic"],
                   capture_output=True, text=True)
T.check("type: arkimex" in r.stdout and "-ts_adapt_type basic" in r.stdout,
        "command-line PETSc options appear in the config as run")

# --- rank independence, one TS per member and in batches -----------------------------------
def finals(out):
    with h5py.File(out) as f:
        return f["members/final_state"][:], f["members/steps"][:]


for batch, chunk in ((1, 0), (4, 3)):
    runs = []
    for ranks in (1, 2, 3):
        out = f"b{batch}c{chunk}r{ranks}.h5"
        T.run(ENS, out, f"integrator.ts.batch={batch}", f"ensemble.chunk={chunk}", ranks=ranks)
        runs.append(finals(out))
    same = all(np.array_equal(runs[0][0], r[0]) and np.array_equal(runs[0][1], r[1]) for r in runs)
    T.check(same, f"batch {batch}, chunk {chunk}: bitwise identical on 1, 2, 3 ranks")
    x = runs[0][0]
    with h5py.File(f"b{batch}c{chunk}r1.h5") as f:
        x0s = f["members/initial_state"][:]
    sqrt_law = lambda t, z: [z[1] - (z[0] / E) / np.sqrt(1 + (z[0] / E) ** 2), 1.0]
    x_ref = np.array([solve_ivp(sqrt_law, (0, 2), x0, method="Radau", rtol=1e-10, atol=1e-12).y[:, -1]
                      for x0 in x0s])
    d = np.abs(x - x_ref).max()
    T.check(d < 5e-5, f"batch {batch}: members agree with independent Radau solves ({d:.1e})")

# --- a sampled member (job trajectory) ends where the ensemble's member does ---------------
for batch in (1, 4):
    member = 9  # in the last batch, which holds members 8 and 9
    T.run(ENS, f"traj{batch}.h5", "job=trajectory", f"ensemble.member={member}", "output.samples=50",
          f"integrator.ts.batch={batch}")
    with h5py.File(f"traj{batch}.h5") as f:
        last = f["trajectory/state"][-1]
    x = finals(f"b{batch}c{3 if batch == 4 else 0}r1.h5")[0][member]
    T.check(np.array_equal(last, x), f"batch {batch}: trajectory's last sample equals the ensemble member bitwise")

# --- bad input ------------------------------------------------------------------------------
def fails(what, *sets, extra=(), expect=()):
    cmd = [T.TWOFOLD, "run", ENS, "-o", "bad.h5", "--overwrite", "--quiet", *extra]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    ok = r.returncode == 2 and all(e in r.stderr for e in expect)
    T.check(ok, f"{what}: exit {r.returncode}, {r.stderr.strip()[:200]}")


fails("unknown law", "model.smoothing.law=tanhh", expect=("model.smoothing.law", "tanh"))
fails("epsilon = 0", "model.smoothing.epsilon=0", expect=("model.smoothing.epsilon", "> 0"))
fails("epsilon < 0", "model.smoothing.epsilon=-1e-3", expect=("model.smoothing.epsilon",))
fails("missing epsilon", "model.smoothing={law: tanh}", expect=("model.smoothing.epsilon", "required"))
fails("unknown ts type in the config", "integrator.ts.type=bdff", expect=("integrator.ts.type", "bdff"))
fails("unknown -ts_type", extra=("-ts_type", "nosuch"), expect=("nosuch", "-ts_type"))
fails("analytic Jacobian that does not exist", "integrator.ts.jacobian=analytic",
      expect=("integrator.ts.jacobian", "fd"))
fails("smoothing a smooth model", "model.name=lorenz", expect=("model.smoothing", "not a Filippov"))
fails("noise with a deterministic integrator", "model.noise={on: state, sigma: 0.1}",
      "integrator.method=petsc-ts", expect=("integrator.method", "drift-implicit"))
fails("noise without its size", "model.noise={on: friction}", expect=("model.noise.sigma",))
fails("unknown noise parameter", "model.noise={on: parameter, sigma: 0.1, parameter: bb}",
      expect=("model.noise.parameter", "bb", "known: a, b"))
fails("unknown noise component", "model.noise={on: state, sigma: 0.1, components: z}",
      expect=("model.noise.components", "'z'"))
T.finish()

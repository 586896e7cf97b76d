"""smooth_ts.py — PETSc TS members: options, resume, rank independence, batches, bad input.
(integrator.method petsc-ts, set in the config: auto takes the Rosenbrock stepper for these.)

The smoothed relay x' = y - a Lambda(x/eps), y' = 1 (sqrt law, eps = 1e-3, ten members with
a Gaussian spread) as an ensemble:
* the config's TS type and options, and the command line's -ts_type / -ts_max_steps taking
  precedence; the options in effect stored in the config as run, so --resume with another
  -ts_type is refused;
* a batch that fails is rerun member by member (each member records its own time reached);
* final states bitwise identical on 1, 2 and 3 ranks, one TS per member and in batches of 4
  with chunks of 3 (so batches are split between ranks), and equal to independent scipy
  Radau solves of the same members within the tolerance;
* a sampled member (job trajectory) ends bitwise where the ensemble's member does, also in
  the last, partial batch, and the ensemble's own trajectories (output.trajectory_samples)
  are the trajectory job's samples;
* bad input: unknown law, eps <= 0, missing eps, unknown TS type (config and -ts_type), an
  analytic Jacobian the model lacks, smoothing a smooth model, noise with a deterministic
  integrator, unknown noise parameter or component: exit 2 and a message naming the key.
"""
import subprocess

import h5py
import numpy as np
from scipy.integrate import solve_ivp

import testlib as T

T.setup()
E = 1e-3
# --- options: config, then the command line -----------------------------------------------
ENS = T.write("ens.yaml", """job: ensemble
model:
  name: relay
  smoothing: {law: sqrt, epsilon: 1.0e-3}
initial: {state: [0.3, 0.0], spread: 0.05}
integrator:
  method: petsc-ts
  t_end: 2.0
  ts: {type: rosw}
ensemble: {members: 10, seed: 5}
""")
j = T.run(ENS, "rosw.h5")
T.check(j["integrator"] == "petsc-ts/rosw" and j["steps"] > 0 and j["jacobian_evals"] > 0,
        f"config type reported with counts: {j['integrator']}, {j['steps']} steps, {j['jacobian_evals']} Jacobians")
j = T.run(ENS, "cl.h5", extra=("-ts_type", "bdf"))
T.check(j["integrator"] == "petsc-ts/bdf", f"-ts_type on the command line wins: {j['integrator']}")
j = T.run(ENS, "steps.h5", 'integrator.ts.options="-ts_max_steps 5"', code=4)  # none succeeds
T.check(j["status_counts"]["max_steps"] == 10, f"config option -ts_max_steps 5 honoured: {j['status_counts']}")
T.run(ENS, "steps300.h5", 'integrator.ts.options="-ts_max_steps 300"', "integrator.ts.batch=4", code=4)
with h5py.File("steps300.h5") as f:
    tf = f["members/t_final"][:]
T.check(len(set(tf.tolist())) == 10 and (tf < 2).all(),
        "a failed batch is rerun member by member: each member records its own time reached")
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

# the ensemble's own trajectories of smooth members (output.trajectory_samples) are those
T.run(ENS, "etraj.h5", "output.trajectory_samples=50", "integrator.ts.batch=4", ranks=2)
with h5py.File("etraj.h5") as f:
    tr = f["members/trajectory"][member].reshape(50, 2)
    final = f["members/final_state"][member]
with h5py.File("traj4.h5") as f:
    T.check(np.array_equal(tr, f["trajectory/state"][:]) and np.array_equal(tr[-1], final),
            "ensemble trajectory samples of a batched member equal the trajectory job's, bitwise")

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
fails("negative Jacobian lag", "integrator.ts.jacobian_lag=-1", expect=("integrator.ts.jacobian_lag",))
# (the relay's convex field has one through its slip_jacobian; the Jeffrey oscillator's has not)
fails("analytic Jacobian that does not exist", "model.name=jeffrey-oscillator",
      "initial.state=[0.3, 0.0, 0.0, 0.0]", "model.smoothing.field=convex",
      "integrator.ts.jacobian=analytic", expect=("integrator.ts.jacobian", "fd"))
fails("smoothing a smooth model", "model.name=lorenz", expect=("model.smoothing", "not a Filippov"))
fails("noise with a deterministic integrator", "model.noise={on: state, sigma: 0.1}",
      "integrator.method=petsc-ts", expect=("integrator.method", "drift-implicit"))
fails("noise without its size", "model.noise={on: friction}", expect=("model.noise.sigma",))
fails("unknown noise parameter", "model.noise={on: parameter, sigma: 0.1, parameter: bb}",
      expect=("model.noise.parameter", "bb", "known: a, b"))
fails("unknown noise component", "model.noise={on: state, sigma: 0.1, components: z}",
      expect=("model.noise.components", "'z'"))
T.finish()

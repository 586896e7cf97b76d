"""smooth_relay.py — smoothed Filippov members (on auto's Rosenbrock stepper, and on PETSc TS)
against exact and independent answers.

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
independent scipy solve_ivp(Radau) of the smoothed relay with b = 0.5 written here; Lorenz
on TS with its analytic Jacobian and with coloured differences against Radau.  The figure
postproc/smooth_convergence.py draws the event-driven trajectory (equal to the exact one),
each smoothed file's x(t), and per law the distances measured here with their fitted slope
(linear 1, sqrt 4/5, tanh just below 1).  Options, ranks, batches and bad input: smooth_ts.py.
"""
import os
import subprocess
import sys

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
measured = {}  # law -> (sup errors against exact_x, fitted rate), for the figure's check
for law in ("linear", "tanh", "sqrt"):
    errs = []
    for e in eps:
        t, s = trajectory(f"{law}{e:g}.h5", f"model.smoothing.law={law}", f"model.smoothing.epsilon={e}")
        errs.append(np.abs(s[:, 0] - exact_x(t)).max())
        T.check(np.abs(s[:, 1] - t).max() < 1e-10, f"{law} eps={e:g}: y(t) = t exactly")
    rate = np.polyfit(np.log(eps), np.log(errs), 1)[0]
    measured[law] = (np.array(errs), rate)
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
POSTPROC = os.environ["SOURCE_DIR"] + "/postproc"
sys.path.insert(0, POSTPROC)
import smooth_convergence as fig  # noqa: E402

smoothed = [f"{law}{e:g}.h5" for law in ("linear", "tanh", "sqrt") for e in eps]
d = fig.load("fil.h5", smoothed)
with h5py.File("fil.h5") as f:
    fil = f["members/trajectory"][0].reshape(2001, 2)
t_fil = np.linspace(0, 2, 2001)
T.check(np.array_equal(d["t_ref"], t_fil) and np.array_equal(d["ref"], fil[:, 0])
        and np.abs(d["ref"] - exact_x(t_fil)).max() < 1e-8,
        f"figure (a): the black curve is the stored Filippov trajectory, = the exact solution to "
        f"{np.abs(d['ref'] - exact_x(t_fil)).max():.1e}")
same = sorted((r["law"], r["eps"]) for r in d["runs"]) == \
    sorted((law, e) for law in ("linear", "tanh", "sqrt") for e in eps)
for r in d["runs"] if same else []:
    with h5py.File(f"{r['law']}{r['eps']:g}.h5") as f:
        same &= np.array_equal(r["t"], f["trajectory/t"][:]) and \
            np.array_equal(r["x"], f["trajectory/state"][:, 0])
T.check(same, "figure (a): each smoothed curve is its file's x(t), labelled with its law and eps")
for law, (errs, rate) in measured.items():
    drawn = d["laws"][law]
    T.check(np.array_equal(drawn["eps"], np.sort(eps))
            and np.abs(drawn["err"] / errs[::-1] - 1).max() < 1e-3
            and abs(drawn["slope"] - rate) < 1e-3 and f"slope {rate:.2f}" in drawn["label"],
            f"figure (b), {law}: distances drawn {drawn['err']} = sup |x - x_exact| measured "
            f"here, slope {drawn['slope']:.3f} (fit here {rate:.3f})")
slopes = {law: v["slope"] for law, v in d["laws"].items()}
T.check(abs(slopes["linear"] - 1) < 0.02 and abs(slopes["sqrt"] - 0.8) < 0.06
        and 0.85 < slopes["tanh"] < 1.0,
        f"figure (b): slopes drawn {slopes}: linear 1, sqrt 4/5, tanh just below 1 "
        "(eps log 1/eps)")
png = subprocess.run(["/usr/bin/python3", POSTPROC + "/smooth_convergence.py", "relay.png",
                      "fil.h5"] + smoothed, capture_output=True, text=True)
T.check(png.returncode == 0 and open("relay.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n",
        f"postproc/smooth_convergence.py writes the PNG ({png.stderr[-200:]})")

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
T.finish()

"""wheel_full_stick.py — the wheel's full stick (h = g = 0) against an analysis written here.

At full stick the wheel neither slips sideways (h = 0, eq 4) nor rolls relative to the
turntable (g = 0, eq 5): v = 0, omega = omega0, a line I of states.  The tyre law (eqs 6-7)
depends there on the direction of (h, g), so I is a codimension-2 set.  From the paper's
equations alone (kappa, k2 from the sympy oracle of eqs 9-11), this test
1. integrates x0 = (0.1859, -0.0301217, -1.0) with scipy: slip until h = 0, then the sticking
   (sliding) flow with the signed moment M = sign(g) kappa F until g = 0, and compares the
   engine's logged events: sticking starts at the same time and full stick is reached at
   t = 26.00163372 (the engine to 1e-7), logged as an intersection event, never as a crossing;
2. classifies the arrival point in the (h, g) plane: for u = (h, g) = rho (cos th, sin th),
   u' = a + G Phi(th) with a, G from eqs (1)-(5) and Phi the (F, M) limit of eqs (6)-(7);
   limit directions are the roots of V = u'.(-sin, cos) in each open sector h > 0, h < 0,
   attracting if R = u'.(cos, sin) < 0; along Sigma (h = 0, g = +-) the Filippov sticking
   flow's g-rate; rest would need (F, M) = -G^-1 a inside the hexagon of limits.  Theorem
   2.15 of Antali (2017) then says: one repelling direction, into h < 0 — the engine must
   pass into slip- there;
3. continues with scipy along that direction to t = 26.5 and compares the engine's state;
4. runs the smoothed wheel (auto's RODAS4, Jeffrey's Lambda_eps in the convex form) from x0 at
   eps = 1e-3 ... 1e-6: its state at t = 26.5 must approach the engine's Filippov one as eps
   falls (to below 1e-3), its closest approach to I must shrink with eps, and it must stay
   far from the rest point (the verdict "rest" would be wrong) — the arrays that
   postproc/wheel_full_stick.py draws.
"""
import math
import os
import subprocess
import sys

import h5py
import numpy as np
from scipy.integrate import solve_ivp

import testlib as T
from wheel_fields import f0_b, friction, GAM, hg, jac_hg, KAP, M, MU, sector_directions, stick, W0

T.setup()
X0 = [0.1859, -0.0301217, -1.0]
T_ARRIVE = 26.00163372  # the independent computation








def phi_limit(h, g):
    """(F, M) of eqs (6)-(7) for the slip direction (h, g)."""
    return friction(h, g, np.sign(h))


def slip(t, x):
    f0, b = f0_b(x)
    return f0 + b @ phi_limit(*hg(x))




def sliding(t, x):
    gh = jac_hg(x)[0]
    lp, lm = gh @ stick(x, 1), gh @ stick(x, -1)
    return stick(x, (lp + lm) / (lm - lp))


# --- 1: the arrival, independently --------------------------------------------------------
on_sigma = lambda t, x: hg(x)[0]  # noqa: E731
on_sigma.terminal = True
s1 = solve_ivp(slip, (0, 5), X0, method="DOP853", rtol=1e-12, atol=1e-14, events=on_sigma)
t_stick, x_stick = s1.t_events[0][0], s1.y_events[0][0]
at_i = lambda t, x: hg(x)[1]  # noqa: E731
at_i.terminal = True
s2 = solve_ivp(sliding, (t_stick, 60), x_stick, method="DOP853", rtol=1e-12, atol=1e-14, events=at_i)
t_meet, x_meet = s2.t_events[0][0], s2.y_events[0][0]
print(f"scipy: sticking from t = {t_stick:.10f}, full stick at t = {t_meet:.10f}, r = {x_meet[0]:.8f}")
T.check(abs(t_meet - T_ARRIVE) < 1e-7, f"scipy's arrival {t_meet:.10f} = the issue's {T_ARRIVE}")

cfg = T.write("x0.yaml", f"""
job: ensemble
model:
  name: wheel
  params: {{d: 1, m: 1, c1: 0.001, c2: 0.001, beta: 0.05, r0: 0.1, omega0: -1, mu: 1,
           gamma: {GAM!r}, rstar: 0.1859, omegastar: -1.037}}
initial: {{state: {X0}}}
integrator: {{t_end: 26.5, rtol: 1.0e-10, atol: 1.0e-12}}
ensemble: {{members: 1, seed: 1}}
output: {{trajectory_samples: 2651, event_log: 16}}
""")
T.run(cfg, "filippov.h5")
with h5py.File("filippov.h5", "r") as f:
    log = f["members/event_log"][0].reshape(-1, int(f["members/event_log"].attrs["slot_width"]))
    kinds = list(f["members/event_log"].attrs["kinds"])
    x_engine = f["members/final_state"][0]
    status = int(f["members/status"][0])
log = log[~np.isnan(log[:, 0])]
names = [kinds[int(k)] for k in log[:, 1]]
print("engine events:", [(n, round(t, 10)) for n, t in zip(names, log[:, 0])])
T.check(status == 1, f"member ends ok at t = 26.5 (status {status})")
T.check(names[:2] == ["slide_start", "intersection_pass"], f"sticking, then full stick: {names[:2]}")
T.check(abs(log[0, 0] - t_stick) < 1e-8, f"sticking starts at {log[0, 0]:.10f} (scipy {t_stick:.10f})")
T.check(abs(log[1, 0] - T_ARRIVE) < 1e-7, f"full stick reached at {log[1, 0]:.10f} (+-1e-7)")
T.check(np.abs(log[1, 4:] - x_meet).max() < 1e-7, f"at {log[1, 4:]} (scipy {x_meet})")
dist_i = np.hypot(log[:, 5], log[:, 6] - W0)
crossing_at_i = [(n, t) for n, t, d in zip(names, log[:, 0], dist_i) if n == "crossing" and d < 1e-8]
T.check(not crossing_at_i, f"no crossing logged at full stick ({crossing_at_i})")

# the same member through job trajectory: its event log and samples, bit for bit
tr = T.run(cfg, "trajectory.h5", "job=trajectory", "output.samples=2651")
with h5py.File("trajectory.h5", "r") as f:
    tr_events, tr_state = f["trajectory/events"][...], f["trajectory/state"][...]
    tr_kinds = list(f["trajectory/events"].attrs["kinds"])
with h5py.File("filippov.h5", "r") as f:
    ens_traj = f["members/trajectory"][0].reshape(-1, 3)
T.check(tr["member_status"] == "ok" and tr["events"]["intersection_pass"] == 1,
        f"job trajectory runs the Filippov member: {tr['member_status']}, {tr['events']}")
T.check(np.array_equal(tr_events, log) and tr_kinds == kinds, "trajectory's event log = the ensemble's")
T.check(np.array_equal(tr_state, ens_traj), "trajectory's samples = the ensemble member's")

# --- 2: the verdict at the arrival point, from eqs (1)-(7) ---------------------------------
x = np.array([x_meet[0], 0.0, W0])
f0, b = f0_b(x)
a, G = jac_hg(x) @ f0, jac_hg(x) @ b
need = -np.linalg.solve(G, a)
hexagon = MU * np.array([[4 / 3, 0], [1, KAP], [-1, KAP], [-4 / 3, 0], [-1, -KAP], [1, -KAP]])
inside = all(np.cross(hexagon[(i + 1) % 6] - hexagon[i], need - hexagon[i]) > 0 for i in range(6))
print(f"rest would need (F, M) = {need}, inside the hexagon of limits: {inside}")
T.check(inside, "Filippov's inclusion admits rest here (the needed friction is admissible)")


def rv(th):
    w = a + G @ phi_limit(math.cos(th), math.sin(th))
    return w @ [math.cos(th), math.sin(th)], w @ [-math.sin(th), math.cos(th)]


directions = [(th, radial, "h>0" if math.cos(th) > 0 else "h<0")
              for _, th, radial in sector_directions(rv)]  # sector h > 0, then h < 0
for gs in (1, -1):  # along Sigma: Filippov's sticking flow next to I
    y = x + np.linalg.pinv(jac_hg(x)) @ np.array([0, gs * 1e-9])
    y = y - hg(y)[0] * jac_hg(y)[0] / (jac_hg(y)[0] @ jac_hg(y)[0])
    lp, lm = jac_hg(y)[0] @ stick(y, 1), jac_hg(y)[0] @ stick(y, -1)
    if lp < 0 < lm:
        directions.append((gs * math.pi / 2, gs * (jac_hg(y)[1] @ sliding(0, y)), f"Sigma g{'+' if gs > 0 else '-'}"))
print("limit directions (theta in the (h, g) plane, R, where):", directions)
repelling = [d for d in directions if d[1] > 0]
T.check(len(repelling) == 1 and repelling[0][2] == "h<0",
        "Theorem 2.15: crossing region, one repelling direction, into h < 0 (slip-)")
T.check(any(d[2] == "Sigma g-" and d[1] < 0 for d in directions),
        "the sticking flow along Sigma (g < 0) is the attracting direction it arrives by")
T.check(int(log[1, 3]) == -1, f"the engine leaves into slip- (to = {int(log[1, 3])})")

# --- 3: the continuation, independently ----------------------------------------------------
th = repelling[0][0]
dx = np.linalg.pinv(jac_hg(x)) @ (1e-9 * np.array([math.cos(th), math.sin(th)]))
s3 = solve_ivp(slip, (t_meet, 26.5), x + dx, method="DOP853", rtol=1e-12, atol=1e-14)
x_cont = s3.y[:, -1]
err = np.abs(x_engine - x_cont).max()
T.check(err < 1e-6, f"state at t = 26.5 {x_engine} vs scipy {x_cont} (error {err:.2e})")

# --- 4: the smoothed wheel converges to the verdict ----------------------------------------
smooth_cfg = os.path.join(T.CONFIGS, "wheel-smoothed.yaml")
files = []
for eps in ("1e-3", "1e-4", "1e-5", "1e-6"):
    out = f"smoothed-{eps}.h5"
    T.run(smooth_cfg, out, f"model.smoothing.epsilon={eps}", f"initial.state={X0}", "initial.spread=0",
          "ensemble.members=1", "integrator.t_end=26.5", "integrator.rtol=1e-9", "integrator.atol=1e-12",
          "output.trajectory_samples=2651")
    files.append(out)
sys.path.insert(0, os.path.join(os.environ["SOURCE_DIR"], "postproc"))
import wheel_full_stick as fig  # noqa: E402

eps, dist, approach, _ = fig.convergence("filippov.h5", files)
print("eps", eps, "distance to the Filippov state at t = 26.5", dist, "closest approach to I", approach)
T.check(list(eps) == [1e-3, 1e-4, 1e-5, 1e-6], f"epsilons read back from the files: {eps}")
T.check(all(np.diff(dist) < 0) and dist[-1] < 1e-3, "smoothed -> Filippov continuation as eps -> 0")
T.check(all(np.diff(approach) < 0) and approach[-1] < 1e-4, "smoothed members pass ever closer to I")
rest = np.array([x_meet[0], 0, W0])
T.check(all(np.linalg.norm(np.array(h5py.File(p, "r")["members/final_state"][0]) - rest) > 0.05 for p in files),
        "no smoothed member rests at the full-stick point")
subprocess.run([sys.executable, os.path.join(os.environ["SOURCE_DIR"], "postproc", "wheel_full_stick.py"),
                "filippov.h5", *files, "full_stick.png"], check=True)
# what panel (a) draws, recomputed here from the files: the distance of each smoothed final
# state to the Filippov member's, and the closest approach of its samples to v = 0, omega = W0
xf_file = np.array(h5py.File("filippov.h5", "r")["members/final_state"][0])
mine_dist, mine_app = [], []
for path in files:  # in eps order 1e-3 .. 1e-6, as drawn
    with h5py.File(path, "r") as h:
        mine_dist.append(np.linalg.norm(np.array(h["members/final_state"][0]) - xf_file))
        tr = h["members/trajectory"][0].reshape(-1, 3)
        mine_app.append(np.min(np.hypot(tr[:, 1], tr[:, 2] - W0)))
T.check(np.allclose(dist, mine_dist, rtol=1e-12, atol=0) and np.allclose(approach, mine_app, rtol=1e-12, atol=0),
        f"panel (a) draws the distances read from the files here ({mine_dist}, {mine_app})")
T.finish()

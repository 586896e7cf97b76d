"""ball_rolling.py — the event-driven codimension-2 engine on the ball in the pool
(Antali 2017, §2.4.1) against closed forms written here:

1. Billiard ball (K = 0), launched without spin at speed v0 in direction theta: the slip
   u = v decays in a straight line, u = v0 - 7/2 mu g t, so rolling starts at
   t* = 2 v0/(7 mu g) with speed 5 v0/7 in the original direction, and then stays (sliding
   field 0).  Several speeds/directions and tolerances; the sampled speed before and after.
2. K > 0, launched without spin: along the launch line u' = -7/2 mu g - K/m v,
   v' = -mu g - K/m v, so v(t) = -a + (v0 + a) e^{-Kt/m} (a = mu g m/K), u = v - 5/2 mu g t;
   rolling starts where u = 0 (Newton here), then v decays as e^{-5K t/(7m)} (2.45).
3. K > 0, put on Sigma (rolling) at speed v0: below v_crit = 7 mu g m/(2K) it rolls from
   t = 0 with v = v0 e^{-5Kt/(7m)}; above, the contact point slips at once opposite to v
   (u' = 7/2 mu g - K/m v < 0), v(t) = a + (v0 - a) e^{-Kt/m}, u = v - v0 + 5/2 mu g t, and
   rolling starts where u returns to 0.
4. The trajectory job on 1 and 3 ranks writes bitwise identical files.
5. Bad input: initial.state together with initial.speed, a misspelt codim2 key, a negative
   speed — each a clear error naming the key, exit status 2, no output file.
6. postproc/ball_trajectory.py draws the K > 0 run of 2: the curves |v|, |u| equal the stored
   samples and the closed forms, rolling is shaded after t* and the one transition marked
   there, the hodograph and the slip arrows lie on the launch line, the slip direction and
   the limit direction are the launch direction.
8. A start whose slip is not parallel to the velocity (u0 = (1, 1), v0 = (3, 0), K = 0.5, the
   kernel's m = 1): the slip direction turns while |u| -> 0, so there is no closed form; the
   onset of rolling is computed here with |u| as the clock (s = ln|u| from ln|u0| down to
   ln 1e-15: dt/ds = |u|^2/(u.u'), no discontinuity on the way) and must equal the engine's,
   whatever codim2.slave_radius (1e-8 ... 1e-3), to 1e-9.
9. The ensemble job runs codimension-2 bodies: 40 billiard balls (K = 0) from random
   states (initial.spread, so the slip is not parallel to the velocity): the slip moves on
   a straight line to 0 (u' = -7/2 mu g u/|u|), so every member rolls from
   t* = 2|u0|/(7 mu g) on with v = v0 - 2 u0/7; 1 and 2 ranks write identical members,
   and member 5 of the ensemble is the trajectory job's member 5.
7. Lyapunov exponents through the saltation at the slip -> roll arrival (K > 0): over a run
   that slips, arrives along a limit direction and rolls, lambda_1 T = log |J q1| and
   (lambda_1 + lambda_2) T = log |J q1 ^ J q2| where J is the Jacobian of the flow map
   computed here by central differences of whole runs (no tangent machinery) and q1, q2 the
   first two vectors of the generic frame the tangent vectors start from (event_loop.h,
   Gram-Schmidt of sin(1 + 0.7548776662466927 (c + 1)(i + 1))); while rolling
   every tangential vector decays at -5K/(7m) (2.45), so lambda_i(T) T grows by exactly that
   rate; the two directions off Sigma have exponents of -infinity (below -100 here).
"""
import math
import os
import subprocess
import sys

import h5py
import numpy as np

import testlib as T

T.setup()
CFG = T.CONFIGS + "/ball-rolling.yaml"
mu, g, m = 0.2, 9.81, 0.17  # as in the config


def run(name, *sets, ranks=1):
    s = T.run(CFG, name + ".h5", *sets, ranks=ranks)
    return s, h5py.File(name + ".h5", "r")


def newton(f, df, t):
    for _ in range(100):
        t -= f(t) / df(t)
    return t


# --- 1: billiard ball --------------------------------------------------------------------
for v0, deg, rtol, tol in ((2.0, 30.0, 1e-10, 1e-9), (0.7, -135.0, 1e-6, 1e-6),
                           (5.0, 90.0, 1e-12, 1e-9)):
    s, f = run(f"billiard{v0}", f"initial.speed={v0}", f"initial.direction_deg={deg}",
               f"integrator.rtol={rtol}", f"integrator.atol={rtol * 1e-2}")
    t_star = 2 * v0 / (7 * mu * g)
    th = math.radians(deg)
    vf = s["final_state"][2:]
    T.check(s["member_status"] == "ok" and s["events"] == {"roll_start": 1, "roll_end": 0,
                                                           "crossing": 0},
            f"v0 = {v0}: one slip -> roll transition ({s['events']})")
    T.check(abs(s["rolling_onset_time"] - t_star) < tol,
            f"v0 = {v0}: rolling at {s['rolling_onset_time']:.12f}, 2 v0/(7 mu g) = {t_star:.12f}")
    T.check(abs(s["final_speed"] - 5 * v0 / 7) < tol,
            f"v0 = {v0}: final speed {s['final_speed']:.12f} = 5 v0/7 = {5 * v0 / 7:.12f}")
    T.check(abs(vf[0] * math.sin(th) - vf[1] * math.cos(th)) < tol and
            vf[0] * math.cos(th) + vf[1] * math.sin(th) > 0,
            f"v0 = {v0}: final velocity {vf} along the launch direction {deg} deg")
    t = f["trajectory/t"][...]
    x = f["trajectory/state"][...]
    mode = f["trajectory/mode"][...]
    speed = np.hypot(x[:, 2], x[:, 3])
    exact = np.where(t < t_star, v0 - mu * g * t, 5 * v0 / 7)
    T.check(np.max(np.abs(speed - exact)) < 10 * tol,
            f"v0 = {v0}: sampled speed = v0 - mu g t, then 5 v0/7 (max error "
            f"{np.max(np.abs(speed - exact)):.1e})")
    T.check(np.all(mode[t < t_star - 1e-9] == 1) and np.all(mode[t > t_star + 1e-9] == 0),
            f"v0 = {v0}: mode slip before t*, roll after")

# --- 2: K > 0, launched without spin ----------------------------------------------------
K, v0 = 0.05, 3.0
a = mu * g * m / K
v = lambda t: -a + (v0 + a) * math.exp(-K * t / m)
t_star = newton(lambda t: v(t) - 2.5 * mu * g * t,
                lambda t: -K / m * (v0 + a) * math.exp(-K * t / m) - 2.5 * mu * g, 0.1)
v_star = v(t_star)
s, f = run("drag", f"model.params.K={K}", f"initial.speed={v0}", "initial.direction_deg=-60")
T.check(abs(s["rolling_onset_time"] - t_star) < 1e-9,
        f"K = {K}: rolling at {s['rolling_onset_time']:.12f}, closed form {t_star:.12f}")
v_end = v_star * math.exp(-5 * K / (7 * m) * (5.0 - t_star))
T.check(abs(s["final_speed"] - v_end) < 1e-8,
        f"K = {K}: rolling decays as exp(-5Kt/7m): {s['final_speed']:.12f} vs {v_end:.12f}")

# --- 3: K > 0, started rolling below and above the critical speed -----------------------
K = 0.5
v_crit = 7 * mu * g * m / (2 * K)
for ratio in (0.8, 1.4):
    v0 = ratio * v_crit
    cfg = T.write(f"onsigma{ratio}.yaml", open(CFG).read().replace(
        "  speed: 2.0          # m/s, centre velocity, no spin\n  direction_deg: 30.0\n",
        f"  state: [0, 0, {v0!r}, 0]\n"))
    s = T.run(cfg, f"onsigma{ratio}.h5", f"model.params.K={K}")
    if ratio < 1:
        T.check(s["rolling_onset_time"] == 0 and s["events"]["roll_end"] == 0 and
                s["events"]["roll_start"] == 0,
                f"|v| = {ratio} v_crit on Sigma: rolls from t = 0 ({s['events']})")
        want = v0 * math.exp(-5 * K / (7 * m) * 5.0)
        T.check(abs(s["final_speed"] - want) < 1e-9,
                f"|v| = {ratio} v_crit: rolling speed {s['final_speed']:.12g} vs {want:.12g}")
    else:
        a = mu * g * m / K
        vv = lambda t: a + (v0 - a) * math.exp(-K * t / m)
        t_star = newton(lambda t: vv(t) - v0 + 2.5 * mu * g * t,
                        lambda t: -K / m * (v0 - a) * math.exp(-K * t / m) + 2.5 * mu * g, 0.2)
        T.check(s["events"]["roll_end"] == 1 and s["events"]["roll_start"] == 1,
                f"|v| = {ratio} v_crit on Sigma: slips at once, rolls later ({s['events']})")
        T.check(abs(s["rolling_onset_time"] - t_star) < 1e-9,
                f"|v| = {ratio} v_crit: rolling again at {s['rolling_onset_time']:.12f}, "
                f"closed form {t_star:.12f}")
        f = h5py.File(f"onsigma{ratio}.h5", "r")
        ev = f["trajectory/events"][...]
        T.check(abs(math.remainder(ev[0, 2] - math.pi, 2 * math.pi)) < 1e-9,
                f"|v| = {ratio} v_crit: leaves along phi = {ev[0, 2]:.12f} = pi (opposite to v)")

# --- 4: rank independence ------------------------------------------------------------------
for ranks in (1, 3):
    T.run(CFG, f"ranks{ranks}.h5", "model.params.K=0.05", ranks=ranks)
ref = h5py.File("ranks1.h5", "r")
for ranks in (3,):
    f = h5py.File(f"ranks{ranks}.h5", "r")
    same = all(np.array_equal(ref["trajectory/" + d][...], f["trajectory/" + d][...])
               for d in ("t", "state", "mode", "events"))
    T.check(same, f"{ranks} ranks: trajectory, modes and events bitwise equal to 1 rank")

# --- 5: bad input ----------------------------------------------------------------------------
for sets, key in ((["initial.state=[1, 0, 1, 0]"], "initial.state"),
                  (["codim2.sigma_tl=1e-9"], "codim2.sigma_tl"),
                  (["initial.speed=-1"], "initial.speed")):
    cmd = [T.TWOFOLD, "run", CFG, "-o", "bad.h5"]
    for x in sets:
        cmd += ["--set", x]
    r = subprocess.run(cmd, capture_output=True, text=True)
    T.check(r.returncode == 2 and key in r.stderr and not os.path.exists("bad.h5"),
            f"--set {sets[0]}: exit {r.returncode}, {r.stderr.strip()}")
# --- 7: Lyapunov exponents with saltation -------------------------------------------------------
K, v0, deg, T_end = 0.05, 2.0, 30.0, 2.0
th = math.radians(deg)
x0 = np.array([v0 * math.cos(th), v0 * math.sin(th), v0 * math.cos(th), v0 * math.sin(th)])
lyap_sets = [f"model.params.K={K}", f"initial.speed={v0}", f"initial.direction_deg={deg}",
             "lyapunov.exponents=4", "integrator.rtol=1e-12", "integrator.atol=1e-14"]
s2 = T.run(CFG, "lyap.h5", *lyap_sets, f"integrator.t_end={T_end}")
lam = np.array(s2["lyapunov"])
fd_cfg = T.write("fd.yaml", open(CFG).read().replace(
    "  speed: 2.0          # m/s, centre velocity, no spin\n  direction_deg: 30.0\n",
    "  state: [1, 0, 1, 0]\n"))
h = 1e-6
J = np.zeros((4, 4))
for i in range(4):
    ends = []
    for sgn in (1, -1):
        x = x0.copy()
        x[i] += sgn * h
        r = T.run(fd_cfg, "fd.h5", f"model.params.K={K}", "initial.state=[" +
                  ", ".join(repr(float(v)) for v in x) + "]", f"integrator.t_end={T_end}",
                  "integrator.rtol=1e-12", "integrator.atol=1e-14")
        ends.append(np.array(r["final_state"]))
    J[:, i] = (ends[0] - ends[1]) / (2 * h)
raw = [np.sin(1.0 + 0.7548776662466927 * (c + 1) * np.arange(1, 5)) for c in range(2)]
q1 = raw[0] / np.linalg.norm(raw[0])
q2 = raw[1] - np.dot(q1, raw[1]) * q1
q2 /= np.linalg.norm(q2)
c1, c2 = J @ q1, J @ q2  # the vectors lambda_1, lambda_2 measure
area = math.sqrt(max(np.dot(c1, c1) * np.dot(c2, c2) - np.dot(c1, c2) ** 2, 0.0))
T.check(abs(lam[0] * T_end - math.log(np.linalg.norm(c1))) < 1e-4,
        f"lambda_1 T = {lam[0] * T_end:.8f} vs log|J q1| = {math.log(np.linalg.norm(c1)):.8f}")
T.check(abs((lam[0] + lam[1]) * T_end - math.log(area)) < 1e-4,
        f"(lambda_1 + lambda_2) T = {(lam[0] + lam[1]) * T_end:.8f} vs log|J q1 ^ J q2| = "
        f"{math.log(area):.8f}")
T.check(lam[2] < -100 and lam[3] < -100, f"off-Sigma exponents {lam[2]:.0f}, {lam[3]:.0f}")
s3 = T.run(CFG, "lyap2.h5", *lyap_sets, f"integrator.t_end={2 * T_end}")
rate = (np.array(s3["lyapunov"][:2]) * 2 * T_end - lam[:2] * T_end) / T_end
T.check(np.max(np.abs(rate + 5 * K / (7 * m))) < 1e-8,
        f"while rolling the tangential exponents accumulate at {rate} = -5K/(7m) = "
        f"{-5 * K / (7 * m):.10f}")

# --- 8: a non-collinear start against an integration in ln|u| --------------------------------
from scipy.integrate import solve_ivp  # noqa: E402

f8, c8 = 0.2 * 9.81, 0.5 / 1.0  # mu g and K/m with the kernel's defaults m = 1, mu = 0.2


def in_log_u(s, y):  # y = (t, u_y, u_z, v_y, v_z) as functions of s = ln|u|
    u, v = y[1:3], y[3:5]
    nu = math.hypot(*u)
    du = -3.5 * f8 * u / nu - c8 * v
    dv = -f8 * u / nu - c8 * v
    dt_ds = nu * nu / np.dot(u, du)
    return np.concatenate([[dt_ds], du * dt_ds, dv * dt_ds])


y0 = np.array([0.0, 1.0, 1.0, 3.0, 0.0])
sol = solve_ivp(in_log_u, (math.log(math.sqrt(2)), math.log(1e-15)), y0, method="DOP853",
                rtol=1e-13, atol=1e-15)
onset = sol.y[0, -1]
ball_cfg = T.write("noncollinear.yaml", """
job: trajectory
model: {name: ball-pool, params: {K: 0.5}}
initial: {state: [1, 1, 3, 0]}
integrator: {t_end: 1, rtol: 1.0e-12, atol: 1.0e-14}
output: {samples: 11}
""")
onsets = {}
for radius in ("1e-8", "1e-6", "1e-5", "1e-4", "1e-3"):
    r = T.run(ball_cfg, "noncollinear.h5", f"codim2.slave_radius={radius}")
    onsets[radius] = (r["member_status"], r["rolling_onset_time"], r["steps"])
print("ln|u| integration: rolling from t =", repr(onset), "engine:", onsets)
T.check(all(st == "ok" and abs(t - onset) < 1e-9 for st, t, _ in onsets.values()),
        f"non-collinear start: rolling onset {onset:.12f} (ln|u| integration) for every slave radius")
T.check(max(n for _, _, n in onsets.values()) < 5000, "and in a few hundred steps")

# --- 6: the figure draws the K > 0 run of part 2 ---------------------------------------------
POSTPROC = os.path.join(os.environ["SOURCE_DIR"], "postproc")
sys.path.insert(0, POSTPROC)
import ball_trajectory as fig  # noqa: E402

K, v0, th = 0.05, 3.0, math.radians(-60.0)  # the run "drag" of part 2
a = mu * g * m / K
v = lambda t: -a + (v0 + a) * np.exp(-K * t / m)  # noqa: E731
t_star = newton(lambda t: v(t) - 2.5 * mu * g * t,
                lambda t: -K / m * (v0 + a) * math.exp(-K * t / m) - 2.5 * mu * g, 0.1)
v_star = v(t_star)
d = fig.load("drag.h5")
with h5py.File("drag.h5", "r") as f:
    t, x = f["trajectory/t"][...], f["trajectory/state"][...]  # (u_y, u_z, v_y, v_z)
before, after = t < t_star, t > t_star
speed = np.where(before, v(t), v_star * np.exp(-5 * K / (7 * m) * (t - t_star)))
slip = np.where(before, v(t) - 2.5 * mu * g * t, 0.0)
T.check(np.array_equal(d["t"], t) and np.array_equal(d["speed"], np.hypot(x[:, 2], x[:, 3]))
        and np.array_equal(d["slip"], np.hypot(x[:, 0], x[:, 1])),
        "figure (a): the curves |v|, |u| drawn are the stored samples")
err_v, err_u = np.abs(d["speed"] - speed).max(), np.abs(d["slip"] - slip).max()
T.check(err_v < 1e-8 and err_u < 1e-8,
        f"figure (a): |v| drawn = closed form (slip, then v* e^(-5K(t-t*)/7m)) to {err_v:.1e}, "
        f"|u| = v(t) - 5/2 mu g t, then 0, to {err_u:.1e}")
T.check(np.array_equal(d["rolling"], after) and len(d["event_t"]) == 1
        and abs(d["event_t"][0] - t_star) < 1e-9 and d["event_kind"].tolist() == [0],
        f"figure (a): rolling shaded exactly after t* = {t_star:.10f} (closed form), one roll "
        f"start marked there ({d['event_t']})")
line = np.array([math.cos(th), math.sin(th)])
slipping = d["v_slipping"][~np.isnan(d["v_slipping"][:, 0])]
T.check(np.array_equal(~np.isnan(d["v_slipping"][:, 0]), before)
        and np.array_equal(~np.isnan(d["v_rolling"][:, 0]), after)
        and np.abs(slipping @ np.array([-line[1], line[0]])).max() < 1e-12
        and np.abs(slipping @ line - v(t[before])).max() < 1e-8,
        "figure (b): dashed hodograph = v(t) on the launch line while slipping, solid after t*")
arrows = d["arrow_to"] - d["arrow_from"]
at = np.array([np.flatnonzero((x[:, 2:] == p).all(axis=1))[0] for p in d["arrow_from"]])
u_at = x[at, :2]
T.check(len(arrows) >= 5 and before[at].all()
        and np.allclose(arrows, fig.ARROW_SCALE * u_at, rtol=0, atol=1e-14)
        and np.abs(arrows @ line - fig.ARROW_SCALE * np.hypot(*u_at.T)).max() < 1e-12,
        f"figure (b): {len(arrows)} arrows = {fig.ARROW_SCALE} u at slipping samples, along the "
        "launch direction (no spin: u parallel to v)")
T.check(np.abs(d["event_v"][0] - v_star * line).max() < 1e-8,
        f"figure (b): roll start drawn at v* (cos, sin)(-60 deg), v* = {v_star:.10f}")
phi = d["phi"][~np.isnan(d["phi"])]
T.check(np.array_equal(~np.isnan(d["phi"]), before) and np.abs(phi - th).max() < 1e-9
        and abs(d["event_phi"][0] - th) < 1e-9,
        f"figure (c): slip direction and the limit direction at rolling = {th:.10f} (launch line)")
# --- 9: ensembles of codimension-2 bodies -------------------------------------------------
ens_cfg = T.write("ball-ensemble.yaml", f"""job: ensemble
model:
  name: ball-pool
  params: {{m: {m}, mu: {mu}, g: {g}, K: 0.0}}
initial:
  state: [1.0, 0.5, 2.0, -0.3]
  spread: 0.3
integrator: {{t_end: 3, rtol: 1.0e-10, atol: 1.0e-12}}
ensemble: {{members: 40, seed: 7}}
codim2: {{sigma_tol: 1.0e-8}}
""")
s1 = T.run(ens_cfg, "ens1.h5")
T.run(ens_cfg, "ens2.h5", ranks=2)
e1, e2 = h5py.File("ens1.h5", "r"), h5py.File("ens2.h5", "r")
x0, xe = e1["members/initial_state"][...], e1["members/final_state"][...]
u0, v0 = x0[:, :2], x0[:, 2:]
t_roll = 2 * np.hypot(*u0.T) / (7 * mu * g)
T.check(s1["integrator"] == "dopri5+codim2" and s1["status_counts"]["ok"] == 40
        and t_roll.max() < 3 and np.std(u0[:, 0] / np.hypot(*u0.T)) > 0.05,
        f"ensemble of 40 balls from spread states, all ok, rolling before t_end (t* <= {t_roll.max():.3f})")
T.check(np.abs(xe[:, 2:] - (v0 - 2 * u0 / 7)).max() < 1e-9 and np.abs(xe[:, :2]).max() < 1e-12
        and (e1["members/final_mode"][...] == 0).all() and (e1["members/events"][...] == 1).all(),
        f"every member rolls with v = v0 - 2 u0/7 (max error {np.abs(xe[:, 2:] - (v0 - 2 * u0 / 7)).max():.1e}), "
        "one event, final mode roll")
T.check(all(np.array_equal(e1["members"][k][...], e2["members"][k][...]) for k in e1["members"]),
        "the ensemble on 1 and 2 ranks: identical members")
T.run(ens_cfg, "member5.h5", "job=trajectory", "ensemble.member=5", "output.samples=3")
tr = h5py.File("member5.h5", "r")
T.check(np.array_equal(tr["trajectory/state"][-1], xe[5]),
        "member 5 of the ensemble ends where the trajectory job's member 5 ends (bitwise)")

png = "ball.png"
r = subprocess.run([os.environ.get("PYTHON", "/usr/bin/python3"),
                    os.path.join(POSTPROC, "ball_trajectory.py"), "drag.h5", png],
                   capture_output=True, text=True)
T.check(r.returncode == 0 and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
        f"postproc/ball_trajectory.py writes the PNG ({r.stderr.strip()[-300:]})")
T.finish()

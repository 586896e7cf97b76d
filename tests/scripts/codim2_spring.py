"""codim2_spring.py — both transitions of the codimension-2 engine on the ball tied by a
spring (kernels/ball_spring.c), against closed forms written here and against the codim-1
engine:

1. Rolling -> slipping.  A ball (j = 2/5, K = 0) put on Sigma rolls as a 2-D harmonic
   oscillator, w = (w0 cos wt, a sin wt), w^2 = k/(m(1 + j)), a = v0/w, while the friction
   it needs stays below mu m g, i.e. while |w| < w_c = (1 + j) mu m g/(j k).  With
   w0 < w_c < a the sliding condition fails at cos^2(wt) = (a^2 - w_c^2)/(a^2 - w0^2), and
   the contact point starts slipping along the spring load, phi = angle(-w).
2. Cross-check with the codim-1 engine: with j = 1/2 and motion on a line the model is
   Antali's Example 2.7 (kernels/disk_spring.c).  Started so that it rolls, slips, crosses
   and rolls again, both engines must give the same event sequence and times and the same
   state at t = 10.
3. The thresholds on Sigma: |w| < 3 mu g m/k rolls, |w| > 3 mu g m/k slips at once (j = 1/2).
"""
import math

import h5py
import numpy as np

import testlib as T

T.setup()
m, k, mu, g = 1.0, 4.0, 0.1, 9.81


def spring(name, state, j, t_end, extra=""):
    cfg = T.write(name + ".yaml", f"""
job: trajectory
model: {{name: ball-spring, params: {{m: {m}, k: {k}, mu: {mu}, g: {g}, j: {j}}}}}
initial: {{state: {list(state)}}}
integrator: {{t_end: {t_end}, rtol: 1.0e-11, atol: 1.0e-13}}
output: {{samples: 11, event_log: 100}}
{extra}""")
    s = T.run(cfg, name + ".h5")
    return s, h5py.File(name + ".h5", "r")["trajectory/events"][...]


# --- 1: rolling ends -------------------------------------------------------------------------
j = 0.4
w0, v0 = 0.2, 1.5
om = math.sqrt(k / (m * (1 + j)))
a, wc = v0 / om, (1 + j) * mu * m * g / (j * k)
assert w0 < wc < a
t1 = math.acos(math.sqrt((a * a - wc * wc) / (a * a - w0 * w0))) / om
s, ev = spring("rollend", [w0, 0, 0, v0, 0, 0], j, t1 + 0.01)
T.check(s["rolling_onset_time"] == 0 and len(ev) >= 1 and int(ev[0, 1]) == 1,
        f"rolls from t = 0, then roll_end ({ev[:, 1] if len(ev) else []})")
if len(ev):
    T.check(abs(ev[0, 0] - t1) < 1e-9,
            f"sliding condition fails at {ev[0, 0]:.12f}, closed form {t1:.12f}")
    wy, wz = w0 * math.cos(om * t1), a * math.sin(om * t1)
    T.check(abs(math.remainder(ev[0, 2] - math.atan2(-wz, -wy), 2 * math.pi)) < 1e-6,
            f"slips along the spring load: phi = {ev[0, 2]:.9f} vs {math.atan2(-wz, -wy):.9f}")
    T.check(abs(math.hypot(ev[0, 3], ev[0, 4]) - wc) < 1e-9,
            f"|w| at the transition {math.hypot(ev[0, 3], ev[0, 4]):.12f} = w_c {wc:.12f}")

# --- 2: the codim-1 engine on the same motion (j = 1/2, Example 2.7) ------------------------
A3 = 3 * mu * g * m / k
state = [0.5 * A3, 2.0, 0.0]  # rolling with an amplitude beyond the strip: it will slip
cfg = T.write("disk.yaml", f"""
job: ensemble
model: {{name: disk-spring, params: {{m: {m}, k: {k}, mu: {mu}, g: {g}}}}}
initial: {{state: {state}}}
integrator: {{t_end: 10, rtol: 1.0e-11, atol: 1.0e-13}}
ensemble: {{members: 1}}
output: {{event_log: 100}}
""")
T.run(cfg, "disk.h5")
fd = h5py.File("disk.h5", "r")
evd = fd["members/event_log"][0].reshape(-1, 7)
evd = evd[~np.isnan(evd[:, 0])]
xd = fd["members/final_state"][0]
s, ev = spring("line", [state[0], 0, state[1], 0, state[2], 0], 0.5, 10.0)
codim1 = {0: "crossing", 1: "roll_start", 2: "roll_end"}  # evolve.h kinds
codim2 = {0: "roll_start", 1: "roll_end", 2: "crossing"}  # evolve2.h kinds
k1 = [codim1[int(e)] for e in evd[:, 1]]
k2 = [codim2[int(e)] for e in ev[:, 1]]
T.check(len(k1) >= 3 and k1 == k2, f"same transitions: codim-1 {k1} / codim-2 {k2}")
if k1 == k2:
    dt = np.max(np.abs(evd[:, 0] - ev[:, 0]))
    T.check(dt < 1e-8, f"same transition times (max difference {dt:.1e})")
x2 = np.array(s["final_state"])[[0, 2, 4]]
T.check(np.max(np.abs(x2 - xd)) < 1e-7 and abs(s["final_state"][1]) < 1e-12,
        f"same state at t = 10: {x2} vs {xd}")

# --- 3: the strip of Example 2.7 --------------------------------------------------------------
for ratio, rolls in ((0.95, True), (1.05, False)):
    s, ev = spring(f"strip{ratio}", [ratio * A3, 0, 0, 0, 0, 0], 0.5, 1e-3)
    T.check((s["rolling_onset_time"] == 0 and len(ev) == 0) == rolls,
            f"|w| = {ratio} * 3 mu g m/k on Sigma: {'rolls' if rolls else 'slips at once'} "
            f"(events {[codim2[int(e)] for e in ev[:, 1]]})")
T.finish()

"""disk_spring.py — the event-driven Filippov integrator on Antali's Example 2.7 (disk tied by
a spring, rolling or slipping), against closed-form solutions written here:

1. Start rolling (on Sigma, u = 0) with |w0| < 3 mu g m / k: the disk rolls forever with
   w'' = -(2/3) k/m w (the sliding field is the rolling dynamics), so
   w = w0 cos(wr t) + v0/wr sin(wr t), u = 0.
2. Start slipping forwards (u0 > 0, w0 = v0 = 0): w = -A (1 - cos(w0 t)), A = mu g m / k,
   u = u0 - 2 mu g t - mu g sin(w0 t)/w0 until u = 0 (Newton below); there |w| <= 2A < 3A,
   so it starts rolling and rolls on harmonically from that state.
3. Start on Sigma outside the strip (|w0| > 3A): crossing, not rolling.
"""
import math

import h5py
import numpy as np

import testlib as T

T.setup()
m, k, mu, g = 2.0, 3.0, 0.25, 9.81
A = mu * g * m / k
wr, w0 = math.sqrt(2 * k / (3 * m)), math.sqrt(k / m)


def run(name, state, t_end, rtol=1e-11):
    cfg = T.write(name + ".yaml", f"""
job: ensemble
model: {{name: disk-spring, params: {{m: {m}, k: {k}, mu: {mu}, g: {g}}}}}
initial: {{state: {list(state)}}}
integrator: {{t_end: {t_end}, rtol: {rtol}, atol: {rtol}}}
ensemble: {{members: 1}}
output: {{event_log: 8}}
""")
    s = T.run(cfg, name + ".h5")
    f = h5py.File(name + ".h5", "r")
    ev = f["members/event_log"][0].reshape(-1, 7)
    return s, f["members/final_state"][0], ev[~np.isnan(ev[:, 0])]


# 1: rolling forever
s, x, ev = run("roll", [0.5 * 3 * A, 0.1, 0.0], 20.0)
wx = 1.5 * A * math.cos(wr * 20) + 0.1 / wr * math.sin(wr * 20)
vx = -1.5 * A * wr * math.sin(wr * 20) + 0.1 * math.cos(wr * 20)
T.check(len(ev) == 0 and s["events"]["slide_start"] == 0, f"rolls without events ({len(ev)})")
T.check(abs(x[0] - wx) < 1e-8 and abs(x[1] - vx) < 1e-8 and abs(x[2]) < 1e-12,
        f"rolling state at t=20: {x} vs ({wx}, {vx}, 0)")

# 2: slipping, then rolling
u0 = 0.4
t1 = 0.1
for _ in range(100):
    u = u0 - 2 * mu * g * t1 - mu * g * math.sin(w0 * t1) / w0
    du = -2 * mu * g - mu * g * math.cos(w0 * t1)
    t1 -= u / du
w1, v1 = -A * (1 - math.cos(w0 * t1)), -A * w0 * math.sin(w0 * t1)
tau = 10.0 - t1
wx = w1 * math.cos(wr * tau) + v1 / wr * math.sin(wr * tau)
vx = -w1 * wr * math.sin(wr * tau) + v1 * math.cos(wr * tau)
for rtol, tol in [(1e-6, 1e-4), (1e-9, 1e-7), (1e-12, 1e-10)]:
    s, x, ev = run(f"slip{rtol:g}", [0.0, 0.0, u0], 10.0, rtol)
    kinds = list(ev[:, 1].astype(int))
    T.check(kinds == [1], f"rtol {rtol:g}: one event, slide_start (rolling begins): {kinds}")
    if len(ev):
        T.check(abs(ev[0, 0] - t1) < tol,
                f"rtol {rtol:g}: rolling starts at {ev[0, 0]:.14f}, exact {t1:.14f} "
                f"(error {abs(ev[0, 0] - t1):.1e} < {tol:g})")
    T.check(abs(x[0] - wx) < 100 * tol and abs(x[1] - vx) < 100 * tol,
            f"rtol {rtol:g}: state at t=10 {x[:2]} vs ({wx:.12f}, {vx:.12f})")

# 3: on Sigma outside the strip |w| < 3A: it must cross, not roll
s, x, ev = run("cross", [1.2 * 3 * A, 0.0, 0.0], 0.05)
T.check(len(ev) == 0 and x[2] < 0, f"outside the strip the disk slips backwards (u = {x[2]:.3g})")
T.finish()

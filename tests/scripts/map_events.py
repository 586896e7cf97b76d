"""map_events.py — events of the user's own on maps, and their refusal on DEVS jobs without a signal.

A map's member is the orbit x_{n+1} = F(x_n) from its stored initial state; an event is a sign
change of g between consecutive iterates in poincare.direction (up: g_{n-1} < 0 <= g_n, down:
g_{n-1} > 0 >= g_n), recorded at iterate n with t = n.  Each case is iterated here by numpy
from the member's stored initial state (the Hénon map (x, y) -> (1 - a x^2 + y, b x), the
logistic map x -> mu x (1 - x)), its events found by the rule above, and held against the
engine's: iterate indices exactly, states to 1e-12.

* Hénon ensemble, g = x - y/b + 0.5 (a parameter in the expression), up, log, transient 2,
  count 6: /members/poincare (t, x, y), poincare_recorded, the total events, t_final = t_end
  and the final state;
* Hénon, g = y, down, stop at the 4th event: t_final the event's iterate, final_state its
  state, steps = t_final;
* logistic, level 0.8 both ways, reset x -> x/2 at every event (transient ones included): the
  recorded states are the reset ones, the orbit goes on from them, the final state at t_end;
* a trajectory of the Hénon map sampled at every iterate equals the numpy orbit; with the stop
  action it ends at the event's iterate;
* refused with file, line and key: extremum on a map, a non-integer t_end, impact keys on a map,
  the poincare section on a DEVS model in the jobs ensemble and scan (devs_events.py covers
  the jobs that have one).
"""
import numpy as np
import h5py

import testlib as T

T.setup()
A, B = 1.4, 0.3
MEMBERS = 6


def henon(x):
    return np.array([1 - A * x[0] * x[0] + x[1], B * x[0]])


def logistic(mu):
    return lambda x: np.array([mu * x[0] * (1 - x[0])])


def events(step, x0, t_end, g, direction, transient=0, count=64, reset=None, stop=False):
    """The independent iteration: (recorded [(n, state)], events seen, final n, final state)."""
    x = np.array(x0, float)
    gp = g(x, 0)
    rec, seen = [], 0
    for n in range(1, t_end + 1):
        x = step(x)
        gn = g(x, n)
        up, down = gp < 0 <= gn, gp > 0 >= gn
        if (direction >= 0 and up) or (direction <= 0 and down):
            if reset:
                x = reset(x)
                gn = g(x, n)
            seen += 1
            if seen > transient and len(rec) < count:
                rec.append((n, x.copy()))
                if stop and len(rec) == count:
                    return rec, seen, n, x
        gp = gn
    return rec, seen, t_end, x


def ensemble(name, model, state, t_end, poincare, members=MEMBERS, job="ensemble"):
    body = "\n".join(f"  {k}: {v}" for k, v in poincare.items())
    return T.write(f"{name}.yaml", f"""job: {job}
model:
{model}
initial:
  state: {state}
  spread: 0.02
integrator:
  t_end: {t_end}
poincare:
{body}
ensemble:
  members: {members}
  seed: 7
""")


def close(a, b):
    return np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=0, atol=1e-12)


def check_members(what, path, step, t_end, g, direction, count, **kw):
    with h5py.File(path) as f:
        m = f["members"]
        x0s, pc = m["initial_state"][...], m["poincare"][...]
        recorded, seen = m["poincare_recorded"][...], m["events"][...]
        t_final, final = m["t_final"][...], m["final_state"][...]
        steps, status = m["steps"][...], m["status"][...]
    x0s, final = x0s.reshape(len(status), -1), final.reshape(len(status), -1)  # dim 1: 1-D
    dim = x0s.shape[1]
    for i, x0 in enumerate(x0s):
        rec, n_seen, n_end, x_end = events(step, x0, t_end, g, direction, count=count, **kw)
        slots = pc[i].reshape(count, 1 + dim)
        got_n = [int(t) for t in slots[: recorded[i], 0]]
        T.check(got_n == [n for n, _ in rec] and recorded[i] == len(rec),
                f"{what} member {i}: event iterates {got_n} == {[n for n, _ in rec]}")
        T.check(all(close(slots[j, 1:], s) for j, (_, s) in enumerate(rec))
                and np.isnan(slots[len(rec):]).all(),
                f"{what} member {i}: recorded states to 1e-12, NaN after")
        T.check(seen[i] == n_seen and t_final[i] == n_end and steps[i] == n_end
                and status[i] == 1 and close(final[i], x_end),
                f"{what} member {i}: {seen[i]} events ({n_seen}), t_final {t_final[i]} "
                f"({n_end}), final state to 1e-12")
        T.check(len(rec) >= 2, f"{what} member {i}: the case records events ({len(rec)})")


HENON = f"  name: henon\n  params: {{a: {A}, b: {B}}}"

# log: an up crossing of g = x - y/b + 0.5 (y/b is the previous x)
g1 = lambda x, n: x[0] - x[1] / B + 0.5
cfg = ensemble("log", HENON, "[0.1, 0.1]", 300,
               {"event": "function", "function": '"x - y/b + 0.5"', "direction": "up",
                "action": "log", "transient": 2, "count": 6})
T.run(cfg, "log.h5")
check_members("henon log", "log.h5", henon, 300, g1, 1, 6, transient=2)

# stop at the 4th down crossing of g = y
g2 = lambda x, n: x[1]
cfg = ensemble("stop", HENON, "[0.1, 0.1]", 300,
               {"event": "function", "function": "y", "direction": "down", "action": "stop",
                "count": 4})
T.run(cfg, "stop.h5")
check_members("henon stop", "stop.h5", henon, 300, g2, -1, 4, stop=True)

# reset: logistic, the level 0.8 both ways, x -> x/2
MU = 3.9
g3 = lambda x, n: x[0] - 0.8
cfg = ensemble("reset", f"  name: logistic\n  params: {{mu: {MU}}}", "[0.3]", 200,
               {"event": "level", "level": 0.8, "action": "reset", "reset": '{x: "x/2"}',
                "count": 10})
T.run(cfg, "reset.h5")
check_members("logistic reset", "reset.h5", logistic(MU), 200, g3, 0, 10,
              reset=lambda x: x / 2)

# trajectory: every iterate, and the stop action's end
cfg = ensemble("traj", HENON, "[0.1, 0.1]", 50,
               {"event": "function", "function": "y", "direction": "down", "action": "stop",
                "count": 3}, job="trajectory")
out = T.run(cfg, "traj.h5", "output.samples=51", "ensemble.member=2")
with h5py.File("traj.h5") as f:
    t, xs = f["trajectory/t"][...], f["trajectory/state"][...]
    traj_pc = f["trajectory/poincare"][...]
orbit = [xs[0]]
for n in range(1, len(t)):
    orbit.append(henon(orbit[-1]))
rec, _, n_end, _ = events(henon, xs[0], 50, g2, -1, count=3, stop=True)
T.check(list(t) == list(range(len(t))) and close(xs, orbit),
        f"trajectory: samples at iterates 0..{len(t) - 1} equal the numpy orbit to 1e-12")
T.check(traj_pc.shape == (3, 3) and [int(r[0]) for r in traj_pc] == [n for n, _ in rec]
        and close(traj_pc[:, 1:], [x for _, x in rec]),
        f"trajectory: /trajectory/poincare rows {traj_pc[:, 0]} are the events' iterates and states")
T.check(out["t_final"] == n_end == t[-1] and out["member_status"] == "ok" and out["events"] == 3,
        f"trajectory stop: t_final {out['t_final']} == {n_end}, the 3rd event's iterate")

# refusals: file, line and key
bad = ensemble("bad", HENON, "[0.1, 0.1]", 50, {"event": "extremum"})
T.refused(bad, [], "bad.yaml:11: key 'poincare.event': extremum needs the derivative")
half = ensemble("half", HENON, "[0.1, 0.1]", 50.5, {"event": "level"})
T.refused(half, [], "half.yaml:9: key 'integrator.t_end': expected an integer")
T.refused(bad, ["poincare.event=level", "impact.event_tol=1e-9"], "unknown key 'impact")
devs = T.write("devs.yaml", """job: lyapunov
model:
  name: devs-logistic
  params: {N: 10, steps: 200, transient: 10}
poincare:
  event: level
""")
T.refused(devs, ["job=ensemble"], "devs.yaml:5: key 'poincare': the ensemble job on a DEVS model")
T.refused(devs, ["job=scan", "scan.x.param=mu", "scan.x.min=3.5", "scan.x.max=3.9",
                 "scan.x.points=3"], "devs.yaml:5: key 'poincare': the scan job on a DEVS model")
T.finish()

"""relay_section.py — scan quantity poincare of a Filippov model against independent orbits.

configs/relay-bifurcation.yaml (the third-order relay feedback system x' = A x + B u,
u = -sign(x1), of configs/relay-feedback.yaml) at two values of lam:
  - lam = 5: the symmetric periodic orbit crosses Sigma = {x1 = 0} transversally (|x2| > k there)
    and never slides.  The system is linear on each side, so a half period from p on Sigma is
    x(t) = e^{At} (p + A^-1 B) - A^-1 B (u = -1), and the orbit is the p with x(tau) = -p,
    solved here by Newton (fsolve) on (p2, p3, tau).  The section (x3 = 0 upwards) is found on
    the closed-form orbit by Brent; the engine's crossing state and period must agree to 1e-6,
    with no sliding recorded;
  - lam = 1: the orbit slides on Sigma twice a period.  An independent event-driven solution
    (scipy solve_ivp, DOP853, the slip fields off Sigma and Filippov's sliding field
    x' = A x + B u_eq, u_eq = -(A x)_1 / k, on it while |(A x)_1| < k) gives the sliding entries
    and time per period and the section crossing, which the engine must record alike.
Several switching functions: two uncoupled copies of the relay at lam = 1 as one model with
`switching: {s1: x1, s2: y1}` (a field affine in the signs).  Each copy runs the orbit above,
so on each surface the engine must record two sliding entries and exits a period and the
reference's sliding time; at k = 1 and at k = 2 (the system is linear with the sliding region
|x2| < k: x -> k x maps its orbits, so the times do not change).
"""
import os

import h5py
import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from scipy.optimize import brentq, fsolve

import testlib as T

ZETA, W, SIGMA, K = 0.05, 3.0, 1.0, 1.0
NO_SLIDING, SLIDING = 5.0, 1.0


def matrices(lam):
    A = np.array([[-(2 * ZETA * W + lam), 1, 0], [-(2 * ZETA * W * lam + W**2), 0, 1],
                  [-lam * W**2, 0, 0]])
    return A, K * np.array([1, -2 * SIGMA, 1])


def closed_form_orbit(lam, guess):
    """The symmetric orbit without sliding: p on Sigma (entering x1 > 0), half period tau, and
    x(t) on [0, tau], by Newton from `guess` (a crossing state of filippov_solve)."""
    A, B = matrices(lam)
    shift = np.linalg.solve(A, B)  # u = -1: x' = A x - B = A (x - A^-1 B)
    flight = lambda p, t: expm(A * t) @ (p - shift) + shift
    p = guess if guess[1] > 0 else -guess
    tau = first_return(lambda s: flight(p, s)[0])
    sol = fsolve(lambda v: flight(np.array([0, v[0], v[1]]), v[2]) + [0, v[0], v[1]],
                 [p[1], p[2], tau], xtol=1e-14)
    p = np.array([0.0, sol[0], sol[1]])
    return p, sol[2], lambda s: flight(p, s)


def first_return(x1, step=1e-3):
    """The first t > 0 where x1 (positive just after 0) returns to 0."""
    s = step
    while x1(s) > 0:
        s += step
    return brentq(x1, max(s - step, 1e-12), s, xtol=1e-15)


def section_up(x, t0, t1, step=1e-3):
    """Where x(t)[2] crosses 0 upwards in (t0, t1): (t, state) pairs."""
    out, grid = [], np.arange(t0, t1, step)
    for a, b in zip(grid[:-1], grid[1:]):
        if x(a)[2] < 0 <= x(b)[2]:
            t = brentq(lambda s: x(s)[2], a, b, xtol=1e-15)
            out.append((t, x(t)))
    return out


def filippov_solve(lam, x0, t_end):
    """Event-driven Filippov solution: sliding entries (t), exits (t), section crossings (t, x),
    and the last state where it crossed Sigma transversally."""
    A, B = matrices(lam)
    t, x = 0.0, np.array(x0, float)
    mode = 1 if x[0] > 0 else -1
    entries, exits, crossings, switch = [], [], [], None
    sec = lambda s, y: y[2]
    sec.direction = 1
    while t < t_end:
        if mode == 0:
            f = lambda s, y: A @ y - B * (A @ y)[0] / K
            ev = lambda s, y: abs((A @ y)[0]) - K
            ev.direction = 1
        else:
            f = lambda s, y, u=-mode: A @ y + B * u
            ev = lambda s, y, m=mode: m * y[0]
            ev.direction = -1
        ev.terminal = True
        r = solve_ivp(f, (t, t_end), x, method="DOP853", rtol=1e-12, atol=1e-13,
                      events=[ev, sec])
        crossings += list(zip(r.t_events[1], r.y_events[1]))
        if r.status != 1:
            break
        t, x = r.t_events[0][-1], r.y_events[0][-1].copy()
        if mode == 0:
            exits.append(t)
            mode = 1 if (A @ x)[0] > 0 else -1
        else:
            x[0] = 0.0
            if abs((A @ x)[0]) < K:
                entries.append(t)
                mode = 0
            else:
                mode, switch = -mode, x.copy()
    return entries, exits, crossings, switch


T.setup()
config = os.path.join(T.CONFIGS, "relay-bifurcation.yaml")
T.run(config, "relay.h5", f"scan.x.min={SLIDING}", f"scan.x.max={NO_SLIDING}", "scan.x.points=2")
with h5py.File("relay.h5") as f:
    m = f["members"]
    lams = m["grid"][:, 0]
    poincare = m["poincare"][()].reshape(2, -1, 4)
    recorded, period = m["poincare_recorded"][()], m["poincare_period"][()]
    sliding, slides, modes = m["sliding"][()], m["slides"][()], m["poincare_mode"][()]
    status = m["status"][()]
T.check(list(lams) == [SLIDING, NO_SLIDING] and list(status) == [1, 1],
        f"two points, lam {list(lams)}, status ok: {list(status)}")
T.check(list(period) == [1, 1], f"both orbits periodic at the section: period {list(period)}")

# lam = 5: no sliding, closed-form orbit
p, tau, flight = closed_form_orbit(NO_SLIDING, filippov_solve(NO_SLIDING, [0, 0.5, 0], 30.0)[3])
T.check(abs(p[1]) > K, f"lam 5: the orbit crosses Sigma at |x2| = {abs(p[1]):.6f} > k (no sliding)")
orbit = lambda s: flight(s) if s <= tau else -flight(s - tau)
cross = section_up(orbit, 0.0, 2 * tau)
T.check(len(cross) == 1, f"lam 5: one upward x3 crossing a period (found {len(cross)})")
engine = poincare[1, recorded[1] - 1]
dx = np.max(np.abs(engine[1:] - cross[0][1]))
dT = abs((engine[0] - poincare[1, recorded[1] - 2, 0]) - 2 * tau)
print(f"lam 5: closed form T = {2 * tau:.10f}, crossing {cross[0][1]}; engine {engine[1:]}")
T.check(dx < 1e-6, f"lam 5: section crossing state agrees to {dx:.1e} (< 1e-6)")
T.check(dT < 1e-6, f"lam 5: period agrees to {dT:.1e} (< 1e-6)")
T.check(np.all(sliding[1] == 0) and np.all(np.isnan(slides[1])),
        f"lam 5: no sliding recorded ({sliding[1]})")
T.check(np.all(modes[1, :recorded[1]] == -1), "lam 5: crossings in slip- (x3 rises while u = +1)")

# lam = 1: sliding, independent event-driven Filippov solution
entries, exits, crossings, _ = filippov_solve(SLIDING, [0, 0.5, 0], 60.0)
times = np.array([c[0] for c in crossings])
ref_T = times[-1] - times[-2]
late = [t for t in entries if times[-4] < t <= times[-1]]
ref_slide = sum(min(b, times[-1]) - max(a, times[-4])
                for a, b in zip([t for t in entries], [t for t in exits if t > entries[0]])
                if b > times[-4] and a < times[-1])
engine = poincare[0, recorded[0] - 1]
window = engine[0] - poincare[0, 0, 0]
periods = round(window / ref_T)
print(f"lam 1: reference T = {ref_T:.9f}, {len(late) / 3:g} slides a period, sliding "
      f"{ref_slide / 3:.9f} a period; engine entries {sliding[0, 0]:g}, exits {sliding[0, 1]:g}, "
      f"time {sliding[0, 2]:.9f} over {periods} periods")
T.check(len(late) == 6 and sliding[0, 0] == 2 * periods and sliding[0, 1] == 2 * periods,
        f"lam 1: two sliding entries and exits a period, as the reference ({len(late)} in 3)")
T.check(abs(sliding[0, 2] / periods - ref_slide / 3) < 1e-6,
        f"lam 1: sliding time a period {sliding[0, 2] / periods:.9f} = reference "
        f"{ref_slide / 3:.9f} to 1e-6")
dx = np.max(np.abs(engine[1:] - crossings[-1][1]))
dT = abs(engine[0] - poincare[0, recorded[0] - 2, 0] - ref_T)
T.check(dx < 1e-6 and dT < 1e-6, f"lam 1: section crossing ({dx:.1e}) and period ({dT:.1e}) agree")
logged = slides[0].reshape(-1, 6)  # t, surface, entry, x1, x2, x3
logged = logged[~np.isnan(logged[:, 0])]
n = len(logged)
T.check(n == sliding[0, 0] + sliding[0, 1] and np.all(np.abs(logged[:, 3]) < 1e-9)
        and np.all(np.abs(logged[:, 4]) <= K + 1e-9),
        f"lam 1: {n} sliding entries and exits logged, each on Sigma where |x2| <= k")
# several switching functions: two uncoupled relays, one per surface
def copy(x, s):
    a, b, c = x
    return {a: f"-(2*zeta*w + lam)*{a} + {b} - k*{s}", b: f"-(2*zeta*w*lam + w^2)*{a} + {c} + "
            f"2*sigma*k*{s}", c: f"-lam*w^2*{a} - k*{s}"}


field = {**copy(("x1", "x2", "x3"), "s1"), **copy(("y1", "y2", "y3"), "s2")}
pair = T.write("pair.yaml", f"""job: scan
model:
  equations:
    name: relay-pair
    state: [x1, x2, x3, y1, y2, y3]
    parameters: {{zeta: {ZETA}, w: {W}, lam: {SLIDING}, sigma: {SIGMA}, k: {K}}}
    switching: {{s1: x1, s2: y1}}
    field: {{{", ".join(f"{v}: '{e}'" for v, e in field.items())}}}
initial: {{state: [0.1, 0.5, 0, 0.1, 0.5, 0]}}
integrator: {{t_end: 400, rtol: 1.0e-10, atol: 1.0e-12}}
poincare: {{event: level, component: x3, level: 0, direction: up, transient: 60, count: 16,
            tol: 1.0e-8}}
scan:
  quantity: poincare
  x: {{param: k, min: {K}, max: {2 * K}, points: 2}}
""")
T.run(pair, "pair.h5")
with h5py.File("pair.h5") as f:
    m = f["members"]
    sliding, samples = m["sliding"][()], m["poincare"][()]
    recorded, modes = m["poincare_recorded"][()], m["poincare_mode"][()]
for j, k in enumerate((K, 2 * K)):
    got, rows, n = sliding[j].reshape(2, 3), samples[j].reshape(-1, 7), recorded[j]
    periods = round((rows[n - 1, 0] - rows[0, 0]) / ref_T)
    for i in range(2):
        T.check(got[i, 0] == 2 * periods and got[i, 1] == 2 * periods
                and abs(got[i, 2] / periods - ref_slide / 3) < 1e-6,
                f"two switching functions, k {k:g}: surface {i}: {got[i, 0]:g} entries, "
                f"{got[i, 1]:g} exits, sliding {got[i, 2] / periods:.9f} a period over {periods} "
                f"periods (reference {ref_slide / 3:.9f})")
    mode = modes[j, :n]
    T.check(np.all(mode == mode[0]) and mode[0] in {0, 4, 8},
            f"two switching functions, k {k:g}: the copies share a mode at every crossing "
            f"({mode[0]:g})")
T.finish()

"""lyapunov_relay.py — a Filippov spectrum that does not depend on lyapunov.blocks.

A third-order relay feedback system (di Bernardo, Johansson & Vasca's form)
    x' = A x + B u,  u = -sign(x1),
    A = [[-(2 zeta w + lam), 1, 0], [-(2 zeta w lam + w^2), 0, 1], [-lam w^2, 0, 0]],
    B = k (1, -2 sigma rho, rho^2),
at zeta 0.05, w 10, lam 0.15, rho 1, k 1, sigma 1 has a stable symmetric periodic orbit
(x(t + T/2) = -x(t)) with sliding on x1 = 0 (where |x2| < k).  Its exponents are known:
    lambda_1 = 0 (the flow direction),
    lambda_2 = ln|mu| / (T/2), mu the multiplier of the half-period map on the line where
               sliding ends (x1 = 0, x2 = +-k), composed with x -> -x,
    lambda_3 = -inf (an arrival in sliding maps every perturbation into T Sigma).
They are computed here independently: the system is linear between events, so each flight is
a matrix exponential, each sliding leg (equivalent control u = -x2/k) one too, and the
half-period map's derivative is the product of their tangent maps from section to section
(x1 = 0 for a flight, |x2| = k for a sliding leg); the orbit is found by Newton on the map.

The engine's spectrum must not depend on the number of blocks: the tangent vectors run on
across blocks.  Restarting them per block, as the event-driven routes did, gave (duration 4000,
interval 0.1) lambda_1 = 0.0022 / 0.0039 / 0.0117 / 0.0417 for 2 / 4 / 10 / 40 blocks, standard
errors 1e-4 to 2e-3 (24 of them off at 4 blocks), and lambda_2 = -0.0291 / -0.0308 / -0.0406 /
-0.0700.  Carried across blocks but started from the identity when averaging began, the frame's
alignment added about ln(c) to the sums: lambda_1 = 0.0013 +- 0.0010, lambda_2 = -0.02826.  Now
the transient carries the tangent vectors too, and the frame averaging starts from is aligned.

What is left of a finite average is a boundary term: once aligned, the first vector is the flow
direction, whose log growth from s to s + D is ln(|f(x(s + D))| / |f(x(s))|), the speed along
the orbit at the two ends (it telescopes: the blocks' terms sum to the whole run's, so their
spread only estimates it).  At duration 4000 (not a whole number of periods) that is 2.8e-4 on
lambda_1, 1.9 standard errors of the 4 blocks' spread; the last check computes it from the field
at the trajectory job's states and requires lambda_1 to equal it (to 1e-7; a frame not aligned
where averaging starts adds its ln(c) / D: 0.0013 before the transient carried it).  It
vanishes where the averaging spans whole periods, and so does lambda_2's (over a period the
plane of the first two vectors is mapped by the monodromy, with determinant mu^2 on it), so
the averaging time here is 421
periods T of the independent computation, the interval T / 40: the exponents must then be the
true ones to round-off (1e-6), and within one standard error (the blocks' standard error, which
the engine reports) for 4 and for 40 blocks.  Neither block count cuts whole half-periods
(105.25 and 10.525 periods a block), so the reported errors are the phase's spread, not zero.
"""
import h5py
import numpy as np
from scipy.linalg import expm
from scipy.optimize import brentq

import testlib as T

ZETA, OMEGA, LAM, RHO, K, SIGMA = 0.05, 10.0, 0.15, 1.0, 1.0, 1.0
A = np.array([[-(2 * ZETA * OMEGA + LAM), 1, 0], [-(2 * ZETA * OMEGA * LAM + OMEGA**2), 0, 1],
              [-LAM * OMEGA**2, 0, 0]])
B = K * np.array([1, -2 * SIGMA * RHO, RHO**2])
# sliding on x1 = 0: x1' = x2 + k u = 0 gives u = -x2/k, so (x2, x3)' = S (x2, x3)
S = np.array([[2 * SIGMA * RHO, 1], [-RHO**2, 0]])
GRID = 1e-2  # root search grid: the flights oscillate at w = 10, far slower


def first_root(fn, sign):
    """First t > 0 where fn(t) takes `sign`, on the grid, refined by Brent."""
    t = GRID
    while np.sign(fn(t)) != sign:
        t += GRID
    return brentq(fn, t - GRID, t, xtol=1e-15, rtol=1e-15)


def flight(p, u):
    """From p on x1 = 0 into the side of u (u = -1: x1 > 0) until x1 = 0 again: time, arrival,
    tangent map of the section-to-section map (neighbours arrive earlier or later)."""
    shift = np.linalg.solve(A, B) * u  # x(t) = e^{At} (p + A^-1 B u) - A^-1 B u
    x = lambda t: expm(A * t) @ (p + shift) - shift
    tau = first_root(lambda t: x(t)[0], u)
    q, f = x(tau), A @ x(tau) + B * u
    return tau, q, (np.eye(3) - np.outer(f, [1, 0, 0]) / f[0]) @ expm(A * tau)


def slide(q):
    """Sliding from q until |x2| = k, where it leaves (x2 = k: into x1 > 0): time, exit, tangent
    map on (x2, x3) of the map onto the exit line."""
    z = lambda t: expm(S * t) @ q[1:]
    tau = first_root(lambda t: abs(z(t)[0]) - K, 1)
    g = S @ z(tau)
    return tau, np.array([0, *z(tau)]), (np.eye(2) - np.outer(g, [1, 0]) / g[0]) @ expm(S * tau)


def half_period(x3):
    """From (0, k, x3), leaving into x1 > 0, to the first exit into x1 < 0 at (0, -k, y):
    returns -y, the time, d(-y)/dx3 and the legs taken."""
    p, u, t, v, legs = np.array([0.0, K, x3]), -1, 0.0, np.array([0.0, 0.0, 1.0]), []
    while True:
        tau, q, m = flight(p, u)
        t, v = t + tau, m @ v
        legs.append("flight")
        if abs(q[1]) > K:  # a crossing: on into the other side
            p, u = q, -u
            legs.append("crossing")
            continue
        tau, p, m = slide(q)
        t, v = t + tau, np.array([0.0, *(m @ v[1:])])
        legs.append("slide")
        u = -1 if p[1] > 0 else 1
        if u == 1:
            return -p[2], t, -v[2], legs


x3 = 2.5
for _ in range(20):
    y, half, mu, legs = half_period(x3)
    if abs(y - x3) < 1e-13:
        break
    x3 -= (y - x3) / (mu - 1)
lam2 = np.log(abs(mu)) / half
h = 1e-6
mu_fd = (half_period(x3 + h)[0] - half_period(x3 - h)[0]) / (2 * h)
T.check(abs(y - x3) < 1e-12, f"symmetric periodic orbit: leaves sliding at (0, 1, {x3:.10f})")
T.check("slide" in legs and "crossing" not in legs,
        f"the half period slides (legs {legs}): sliding is part of the orbit")
T.check(abs(mu_fd - mu) < 1e-6, f"multiplier {mu:.9f} = difference quotient {mu_fd:.9f}")
print(f"independent: T/2 = {half:.9f}, mu = {mu:.9f}, lambda_2 = {lam2:.7f}")

PERIODS = 421  # whole periods of averaging: no boundary term (docstring)
T.setup()
relay = T.write("relay.yaml", f"""job: lyapunov
model:
{T.relay3_equations(ZETA, OMEGA, LAM, RHO, K, SIGMA)}initial: {{state: [0.1, 0, 0]}}
integrator: {{rtol: 1.0e-10, atol: 1.0e-12}}
lyapunov: {{exponents: 3, transient: 400, duration: {PERIODS * 2 * half!r}, interval: {2 * half / 40!r},
            blocks: 4}}
""")
runs = {b: T.run(relay, f"relay{b}.h5", f"lyapunov.blocks={b}") for b in (4, 40)}
for b, s in runs.items():
    (l1, l2, l3), (e1, e2, _) = s["spectrum"], s["spectrum_error"]
    print(f"{b} blocks: {s['spectrum']} ± {s['spectrum_error']}")
    T.check(s["method"] == "events+saltation", f"{b} blocks: event-driven with saltation")
    T.check(abs(l1) < e1 and abs(l1) < 1e-6,
            f"{b} blocks: lambda_1 = {l1:.2e} ± {e1:.1e} is 0 within 1 se and 1e-6")
    T.check(abs(l2 - lam2) < e2 and abs(l2 - lam2) < 1e-6,
            f"{b} blocks: lambda_2 = {l2:.9f} ± {e2:.1e} = ln|mu|/(T/2) = {lam2:.9f} within 1 se "
            f"and 1e-6")
    T.check(l3 is None and s.get("collapsed_directions") == 1,
            f"{b} blocks: lambda_3 = -inf (sliding), collapsed {s.get('collapsed_directions')}")
four, forty = runs[4], runs[40]
for i in range(2):
    d = abs(four["spectrum"][i] - forty["spectrum"][i])
    se = min(four["spectrum_error"][i], forty["spectrum_error"][i])
    T.check(d < se and d < 1e-8, f"lambda_{i + 1}: 4 and 40 blocks differ by {d:.1e} (< {se:.1e})")

# Off whole periods the boundary term is all there is: over 4000 time units after a transient
# of 400, lambda_1 D = ln(|f(x(4400))| / |f(x(400))|), the field computed here at the
# trajectory job's states.  A frame not aligned when averaging starts adds its ln(c).
D = 4000.0
s = T.run(relay, "relay-d.h5", f"lyapunov.duration={D}", "lyapunov.interval=0.1")
text = open(relay).read()
traj = T.write("traj.yaml",
               text[:text.index("lyapunov:")].replace("job: lyapunov", "job: trajectory"))
speed = []
for t_end in (400.0, 400.0 + D):
    T.run(traj, "traj.h5", f"integrator.t_end={t_end}")
    with h5py.File("traj.h5") as f:
        x = f["trajectory/state"][-1]
    sliding = abs(x[0]) < 1e-6 and abs(x[1]) < K  # the sliding field (x2, x3)' = S (x2, x3)
    speed.append(np.linalg.norm(S @ x[1:] if sliding else A @ x - B * np.sign(x[0])))
boundary = np.log(speed[1] / speed[0]) / D
T.check(abs(s["spectrum"][0] - boundary) < 1e-7,
        f"duration {D:g}: lambda_1 = {s['spectrum'][0]:.9f} = ln(|f(x_end)| / |f(x_start)|) / D "
        f"= {boundary:.9f} (± {s['spectrum_error'][0]:.1e} from the blocks)")
T.finish()

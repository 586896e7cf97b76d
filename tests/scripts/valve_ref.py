#!/usr/bin/python3
"""valve_ref.py — the pressure-relief valve (Hős & Champneys; the MPGOS ensemble benchmark of
Hegedűs et al.) integrated independently of the engine and of bench/valve_odeint.cpp, so that
both can be checked against it:

  x' = v,  v' = -kappa v - (x + delta) + p,  p' = beta (q - x sqrt(p)),
  kappa = 1.25, beta = 20, delta = 10, start (x, v, p) = (0.2, 0, 0).

Protocol (the one bench/valve_odeint.cpp and configs/valve-bifurcation.yaml follow):
* events are impacts (x reaches 0 with v < 0; v -> -r v, r = 0.8, x placed on the seat) and
  extrema of x (v = 0, both directions; the start and a lift-off, where v = 0 already, are not
  events);
* chatter: an impact arriving slower than V_STICK while p < delta (the net force holds the
  valve on its seat) ends the chatter sequence, whose remaining infinitely many impacts last
  < 2 r V_STICK / ((1 - r)(delta - p)); the valve rests on the seat, where p' = beta q exactly,
  and lifts off when p = delta.  Every located impact, the last one included, is one event;
* after `transient` events the displacement x at the next `n` events is recorded;
* two consecutive events that are both extrema with |x_k - x_(k-1)| < CONV have converged to
  the stationary state: the run stops (the record then holds what was recorded so far, or the
  last extremum when that was still in the transient).

Integration: scipy solve_ivp (DOP853 by default, or Radau) with rtol = atol = 1e-11, one call
per flight between impacts; extrema are non-terminal events located on the dense output.

Python API: simulate(q, ...) -> Run(x, kinds, times, converged); record(q, transient, n) -> x.
Physics: stationary(q) -> (x*, p*), hopf_q() -> the flow rate where x* loses stability.
CLI: valve_ref.py q [q ...] [--transient N] [--n N] [--rtol R] [--method M] [--csv FILE]
"""
import argparse
import math
import sys
from typing import NamedTuple

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

KAPPA, BETA, DELTA, R = 1.25, 20.0, 10.0, 0.8
X0 = (0.2, 0.0, 0.0)
V_STICK = 1e-6   # slowest impact still followed by a rebound (chatter ends below it)
CONV = 1e-9      # consecutive extrema closer than this: stationary state reached
T_CHUNK = 200.0  # length of one solve_ivp call between impacts (no impact: the next chunk)
T_QUIET = 1e4    # no event for this long: give up (never happens for q in [0.2, 10])


def rhs(t, y, q):
    x, v, p = y
    return [v, -KAPPA * v - (x + DELTA) + p, BETA * (q - x * math.sqrt(max(p, 0.0)))]


def stationary(q):
    """(x*, p*): v = 0, p* = x* + delta and q = x* sqrt(p*), x* > 0."""
    xs = brentq(lambda x: x * math.sqrt(x + DELTA) - q, 0.0, q + 1.0, xtol=1e-15, rtol=1e-15)
    return xs, xs + DELTA


def routh_hurwitz(q):
    """> 0 where (x*, 0, p*) is stable: char. polynomial l^3 + (k+b) l^2 + (1+k b) l + (a+b),
    a = beta sqrt(p*), b = beta x* / (2 sqrt(p*)); stable iff (k+b)(1+k b) > a+b."""
    xs, ps = stationary(q)
    a, b = BETA * math.sqrt(ps), BETA * xs / (2 * math.sqrt(ps))
    return (KAPPA + b) * (1 + KAPPA * b) - (a + b)


def hopf_q():
    """The flow rate at which the stationary state changes stability (one root in (0.2, 10))."""
    return brentq(routh_hurwitz, 0.2, 10.0, xtol=1e-14)


def hopf_omega(q):
    """Angular frequency of the critical pair at the Hopf point: omega^2 = 1 + kappa b."""
    xs, ps = stationary(q)
    return math.sqrt(1 + KAPPA * BETA * xs / (2 * math.sqrt(ps)))


class Run(NamedTuple):
    x: np.ndarray       # recorded displacements
    kinds: list         # 'impact' / 'max' / 'min' of each recorded event
    times: np.ndarray   # their times
    converged: bool     # stopped early at the stationary state
    events: int         # events seen in all
    sticks: list        # event numbers (1-based) of the impacts after which the valve rested
    dips: int           # impacts found under a minimum below the seat (skipped by a step)


def _start_sign(y, q, d):
    """Sign of component d (0: x, 1: v) just after a segment starts (values that are exactly 0
    at the start — on the seat, at the initial point, at lift-off — are not events)."""
    if y[d] != 0.0:
        return math.copysign(1.0, y[d])
    f = rhs(0.0, y, q)
    if d == 0:
        return math.copysign(1.0, f[0]) if f[0] != 0.0 else 1.0
    if f[1] != 0.0:
        return math.copysign(1.0, f[1])
    # lift-off (x = v = 0, p = delta): v'' = p' - x' - kappa v' = beta q > 0
    return 1.0


def simulate(q, transient=2048, n=64, rtol=1e-11, atol=1e-11, method="DOP853"):
    y = np.array(X0, dtype=float)
    t, last_event_t = 0.0, 0.0
    total, sticks, dips = 0, [], 0
    rec_x, rec_k, rec_t = [], [], []
    prev = None                       # (kind, x) of the previous event
    last_extremum = None

    def take(kind, te, xe):
        nonlocal total, prev, last_extremum, last_event_t
        total += 1
        last_event_t = te
        if total > transient:
            rec_x.append(xe), rec_k.append(kind), rec_t.append(te)
        conv = (kind != "impact" and prev is not None and prev[0] != "impact"
                and abs(xe - prev[1]) < CONV)
        prev = (kind, xe)
        if kind != "impact":
            last_extremum = (kind, te, xe)
        return conv

    while True:
        t0, y0 = t, y.copy()
        sx, sv = _start_sign(y0, q, 0), _start_sign(y0, q, 1)

        def ev_impact(tt, yy, _q):
            return yy[0] if tt > t0 else sx

        def ev_extremum(tt, yy, _q):
            return yy[1] if tt > t0 else sv

        ev_impact.terminal, ev_impact.direction = True, -1
        ev_extremum.terminal, ev_extremum.direction = False, 0
        def flight(dense):
            return solve_ivp(rhs, (t0, t0 + T_CHUNK), y0, method=method, rtol=rtol, atol=atol,
                             events=(ev_impact, ev_extremum), args=(q,), dense_output=dense)

        # the interpolant of every step (a fifth of the run's time) is kept only for a flight
        # whose impact a step jumped over; it is flown again to get it (the steps do not
        # depend on dense_output, so the flight is the same)
        sol = flight(False)
        if sol.status < 0:
            raise RuntimeError(f"valve_ref: q = {q}: solve_ivp failed at t = {sol.t[-1]}: {sol.message}")
        t, y, impact = sol.t[-1], sol.y[:, -1].copy(), sol.status == 1
        t_above = t0                   # last time known to be off the seat
        for te, ye in zip(sol.t_events[1], sol.y_events[1]):
            if ye[0] < 0.0:
                # a minimum below the seat: x dipped under 0 and back within one step, where
                # the impact's sign test at step ends cannot see it; the impact is the root of
                # x on the dense output between the last point off the seat and this minimum
                dense = flight(True).sol
                t, impact = _missed_impact(dense, t_above, te), True
                dips += 1
                y = dense(t)
                break
            # an extremum is a maximum when v goes + -> -, i.e. v' < 0 there
            kind = "max" if rhs(te, ye, q)[1] < 0 else "min"
            if take(kind, te, ye[0]):
                return _finish(rec_x, rec_k, rec_t, True, total, sticks, dips, last_extremum)
            if len(rec_x) >= n:
                return _finish(rec_x, rec_k, rec_t, False, total, sticks, dips, last_extremum)
            t_above = te
        if impact:
            vin, p = y[1], y[2]
            y[0] = 0.0
            if take("impact", t, 0.0):
                return _finish(rec_x, rec_k, rec_t, True, total, sticks, dips, last_extremum)
            if len(rec_x) >= n:
                return _finish(rec_x, rec_k, rec_t, False, total, sticks, dips, last_extremum)
            if -vin < V_STICK and p < DELTA:
                sticks.append(total)
                t += (DELTA - p) / (BETA * q)   # resting on the seat: p' = beta q
                y[:] = (0.0, 0.0, DELTA)
            else:
                y[1] = -R * vin
        elif t - last_event_t > T_QUIET:
            raise RuntimeError(f"valve_ref: q = {q}: no event for {T_QUIET} time units")


def _missed_impact(dense, ta, tm):
    """Root of x in (ta, tm) where x(tm) < 0 and x > 0 somewhere after ta (x may be 0 at ta,
    just after an impact: the last positive sample of the dense output brackets the root)."""
    grid = np.linspace(ta, tm, 257)[:-1]
    pos = [tt for tt in grid if dense(tt)[0] > 0.0]
    if not pos:
        raise RuntimeError(f"valve_ref: minimum below the seat at t = {tm} with no flight before it")
    return brentq(lambda tt: dense(tt)[0], pos[-1], tm, xtol=1e-14, rtol=1e-15)


def _finish(rx, rk, rt, converged, total, sticks, dips, last_extremum):
    if converged and not rx:
        rx, rk, rt = [last_extremum[2]], [last_extremum[0]], [last_extremum[1]]
    return Run(np.array(rx), list(rk), np.array(rt), converged, total, sticks, dips)


def record(q, transient=2048, n=64, **kw):
    """The recorded x values of the protocol (fewer than n when the run converged early)."""
    return simulate(q, transient, n, **kw).x


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("q", type=float, nargs="+")
    ap.add_argument("--transient", type=int, default=2048)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--rtol", type=float, default=1e-11)
    ap.add_argument("--atol", type=float, default=None, help="default: rtol")
    ap.add_argument("--method", default="DOP853")
    ap.add_argument("--csv", help="write q,converged,n,x_1..x_n (the layout of bench/valve_odeint)")
    a = ap.parse_args(argv)
    rows = []
    for q in a.q:
        r = simulate(q, a.transient, a.n, a.rtol, a.atol or a.rtol, a.method)
        rows.append((q, r))
        print(f"q = {q:.6g}: {len(r.x)} values{' (converged)' if r.converged else ''}, "
              f"{r.kinds.count('impact')} impacts; x in [{r.x.min():.9g}, {r.x.max():.9g}]")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("q,converged,n,x\n")
            for q, r in rows:
                f.write(",".join([repr(q), str(int(r.converged)), str(len(r.x))]
                                 + [repr(float(v)) for v in r.x]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

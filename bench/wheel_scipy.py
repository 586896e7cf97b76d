#!/usr/bin/python3
"""wheel_scipy.py — an independent Python reference of the Filippov wheel (Szalai & Jeffrey
2014), written from the paper's equations, with scipy.integrate.solve_ivp and terminal events.

  /usr/bin/python3 bench/wheel_scipy.py ENGINE.h5 [--members M] [--t-end T] [--rtol R]
        [--atol A] [--method DOP853|RK45] [--capture 1e-6] [--first-n N] [--events-out F]

Model (arXiv text, seed 000): eqs (1)-(3) with the stretched-string tyre (6)-(7), sign(h) =
side of the slip mode, h and g by eqs (4)-(5); v*, kappa, k2 by eqs (9)-(11) (derived here,
checked against the engine's /model attributes).  On Sigma the sticking field has
F = mu*lambda, M = sign(g)*kappa*mu*lambda, lambda in [-1, 1] (kernels/wheel.c,
signed_moment = 1; signed_moment = 0 gives M = kappa*F as printed).

Mode machine (as src/engine/evolve.c): slip+ / slip- / sliding.  Slip s ends where s*h reaches 0;
on arrival, L+- = grad h . f(x, +-1) decide: cross if the other side's field carries on
through Sigma, slide otherwise.  Sliding ends where L+ reaches 0 (-> slip+) or L- reaches 0
(-> slip-), or at |x - x*| = capture radius (the two-fold), where the trajectory continues
from the engine's logged exit point of that visit (replay).  Every member starts from the
engine's slot 0 of /members/exits.

Prints one JSON line: members, wall seconds, members/s, RHS evaluations, events, and the
event-time agreement with the engine's /members/event_log."""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wheel_events  # noqa: E402

CROSSING, SLIDE_START, SLIDE_END, TWOFOLD, EXIT = range(5)


class Wheel:
    def __init__(self, p):
        p = {k: float(v) for k, v in p.items() if k != "name"}
        self.d, self.m, self.c1, self.c2 = p["d"], p["m"], p["c1"], p["c2"]
        self.beta, self.r0, self.w0, self.mu = p["beta"], p["r0"], p["omega0"], p["mu"]
        self.gam, self.rs, self.ws = p["gamma"], p["rstar"], p["omegastar"]
        self.signed = p.get("signed_moment", 1.0) != 0.0
        d, m, c1, c2, b2 = self.d, self.m, self.c1, self.c2, self.beta ** 2
        g, rs, ws, w0 = self.gam, self.rs, self.ws, self.w0
        self.vs = (ws - w0) * (d - rs / math.tan(g))  # eq (9)
        self.kappa = -(2 * rs * rs + b2 * (1 - math.cos(2 * g))) / (2 * rs * math.cos(g))  # eq (10)
        p2 = d * rs * math.cos(g) + (b2 + rs * rs) * math.sin(g)
        vs = self.vs
        self.k2 = (math.sin(g) * (b2 + rs * rs) * (m * rs * ws * ws - c2 * vs)  # eq (11)
                   - math.cos(g) * (c1 * rs * ws + c2 * d * rs * vs
                                    + m * (rs * rs * (vs * (ws + w0) - d * ws * ws)
                                           + b2 * vs * (w0 - ws)))) / ((rs - self.r0) * p2)
        self.sg, self.cg = math.sin(g), math.cos(g)
        self.a6k = math.atan(1.0 / (6 * self.kappa))  # arccot(6 kappa)
        self.psi_scale = abs(1 - 2 / math.pi * self.a6k)
        self.twofold = (rs, self.vs, ws)
        self.nrhs = 0

    def h(self, x):  # eq (4)
        dw = x[2] - self.w0
        return -(x[1] - self.d * dw) * self.sg - x[0] * dw * self.cg

    def grad_h(self, x):
        return (-(x[2] - self.w0) * self.cg, -self.sg, self.d * self.sg - x[0] * self.cg)

    def g(self, x):  # eq (5)
        dw = x[2] - self.w0
        return -(x[1] - self.d * dw) * self.cg + x[0] * dw * self.sg

    def field(self, r, v, w, F, M):  # eqs (1)-(3)
        b2, d, m = self.beta ** 2, self.d, self.m
        p1 = self.k2 * (self.r0 - r) - self.c2 * v + m * r * w * w
        p2 = d * r * self.cg + (b2 + r * r) * self.sg
        cpl = self.c1 + 2 * m * r * v
        return (m * (b2 + r * r) * v,
                (b2 + d * d + r * r) * p1 - d * cpl * w + F * p2 + d * M,
                d * p1 - cpl * w + F * r * self.cg + M)

    def slip(self, x, side):  # eqs (6)-(7), sign(h) = side
        self.nrhs += 1
        r, v, w = x[0], x[1], x[2]
        h, g = self.h(x), self.g(x)
        psi = self.a6k + self.psi_scale * math.atan2(abs(h), abs(g))
        cot = math.cos(psi) / math.sin(psi)
        F = side * self.mu * (4.0 / 3.0 - cot / (18 * self.kappa))
        sgn = (g > 0) - (g < 0)
        M = sgn * side * self.mu / 6 * cot
        return self.field(r, v, w, F, M)

    def stick(self, x, lam):  # on Sigma: F = mu lambda, M = sign(g) kappa mu lambda
        g = self.g(x)
        sgn = ((g > 0) - (g < 0)) if self.signed else 1
        return self.field(x[0], x[1], x[2], self.mu * lam, sgn * self.kappa * self.mu * lam)

    def tangencies(self, x):
        gh = self.grad_h(x)
        fp, fm = self.stick(x, 1.0), self.stick(x, -1.0)
        return (gh[0] * fp[0] + gh[1] * fp[1] + gh[2] * fp[2],
                gh[0] * fm[0] + gh[1] * fm[1] + gh[2] * fm[2])

    def sliding(self, x):  # eq (16) with the undivided tangencies
        self.nrhs += 1
        lp, lm = self.tangencies(x)
        den = lm - lp
        return self.stick(x, (lp + lm) / den if den != 0 else 0.0)

    def project(self, x):  # Newton along grad h onto Sigma (as the engine)
        x = list(x)
        for _ in range(3):
            h = self.h(x)
            gr = self.grad_h(x)
            g2 = sum(c * c for c in gr)
            if g2 == 0 or h == 0:
                break
            x = [x[i] - h * gr[i] / g2 for i in range(3)]
        return x


def run_member(wh, exits, t_end, rtol, atol, method, capture, max_event_rate=1e5):
    """Integrates one member; returns (events [(t, kind)], status)."""
    t = exits[0][0]
    x = list(exits[0][3:6])
    mode = int(exits[0][2])
    visits = 1
    events = []
    win_t, win_n = t, 0
    xs = wh.twofold
    cap2 = capture * capture
    while t < t_end:
        t0 = t
        if mode != 0:
            s = mode

            def fun(tt, y, s=s):
                return wh.slip(y.tolist(), s)

            # The start is on Sigma (after a crossing, a sliding exit or a two-fold exit):
            # count it as inside, as the engine does, so that only a return to Sigma is an
            # event.  h(x0) is ~1e-17 of either sign after projection, and for the first
            # ~1e-10 time units round-off dominates s*h (near a fold h grows like 1e-7 t):
            # subtracting h(x0) and clamping that window keeps Brent's method from taking
            # round-off next to t0 for a root (the engine subsamples the step instead).
            h0 = wh.h(x)

            def ev_h(tt, y, s=s, t0=t0, h0=h0):
                v = s * (wh.h(y.tolist()) - h0)
                return max(v, 1e-300) if tt - t0 < 1e-10 else v
            ev_h.terminal, ev_h.direction = True, -1
            evs = [ev_h]
        else:
            def fun(tt, y):
                return wh.sliding(y.tolist())

            def ev_p(tt, y):
                return -wh.tangencies(y.tolist())[0]

            def ev_m(tt, y):
                return wh.tangencies(y.tolist())[1]

            def ev_c(tt, y):
                y = y.tolist()
                return (y[0] - xs[0]) ** 2 + (y[1] - xs[1]) ** 2 + (y[2] - xs[2]) ** 2 - cap2
            for e in (ev_p, ev_m, ev_c):
                e.terminal, e.direction = True, -1
            evs = [ev_p, ev_m, ev_c]
        sol = solve_ivp(fun, (t, t_end), np.array(x, dtype=float), method=method, rtol=rtol, atol=atol, events=evs)
        if sol.status == -1:
            return events, "failed"
        if sol.status == 0:
            break
        which = min((i for i in range(len(evs)) if len(sol.t_events[i])),
                    key=lambda i: sol.t_events[i][0])
        t = float(sol.t_events[which][0])
        x = sol.y_events[which][0].tolist()
        if mode != 0:
            x = wh.project(x)
            lp, lm = wh.tangencies(x)
            other = lm if mode == 1 else lp
            if mode * other < 0:
                events.append((t, CROSSING, mode, -mode))
                mode = -mode
            else:
                events.append((t, SLIDE_START, mode, 0))
                mode = 0
        elif which == 2:
            events.append((t, TWOFOLD, 0, 0))
            if visits >= len(exits):
                return events, "replay_exhausted"
            ex = exits[visits]
            visits += 1
            x = list(ex[3:6])
            mode = int(ex[2])
            events.append((t, EXIT, 0, mode))
        else:
            mode = 1 if which == 0 else -1
            events.append((t, SLIDE_END, 0, mode))
        n_win = len(events) - win_n
        if n_win >= 100:
            if n_win > max_event_rate * (t - win_t):
                return events, "zeno"
            win_t, win_n = t, len(events)
    return events, "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("engine_h5")
    ap.add_argument("--members", type=int, default=None)
    ap.add_argument("--t-end", type=float, default=None)
    ap.add_argument("--rtol", type=float, default=1e-10)
    ap.add_argument("--atol", type=float, default=1e-12)
    ap.add_argument("--method", default="DOP853")
    ap.add_argument("--capture", type=float, default=1e-6)
    ap.add_argument("--first-n", type=int, default=None, help="compare the first N events of each member")
    ap.add_argument("--events-out", default=None, help="write 'member t kind' lines here")
    a = ap.parse_args()
    params, exits, eng_events = wheel_events.load_engine(a.engine_h5, a.members)
    wh = Wheel(params)
    check = max(abs(wh.kappa - params["kappa"]) / params["kappa"], abs(wh.k2 - params["k2"]) / params["k2"])
    if a.t_end is None:
        sys.exit("--t-end is required (the engine's integrator.t_end)")
    out = []
    statuses = {}
    begin = time.perf_counter()
    for m, ex in enumerate(exits):
        evs, st = run_member(wh, ex, a.t_end, a.rtol, a.atol, a.method, a.capture)
        statuses[st] = statuses.get(st, 0) + 1
        out.append(evs)
    wall = time.perf_counter() - begin
    if a.events_out:
        with open(a.events_out, "w") as f:
            for m, evs in enumerate(out):
                for t, k, fr, to in evs:
                    f.write(f"{m} {t!r} {k} {fr} {to}\n")
    cmp = wheel_events.compare(eng_events, out, a.first_n)
    res = {"side": "scipy", "method": a.method, "members": len(exits), "t_end": a.t_end,
           "rtol": a.rtol, "atol": a.atol, "wall_seconds": wall, "members_per_second": len(exits) / wall,
           "rhs_evals": wh.nrhs, "events": sum(len(e) for e in out), "status_counts": statuses,
           "params_rel_diff": check, **cmp}
    print(json.dumps(res))


if __name__ == "__main__":
    main()

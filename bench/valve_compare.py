#!/usr/bin/python3
"""valve_compare.py — compares the recorded values of the pressure-relief-valve benchmark
between codes and writes the bench record (numbers and markdown) of bench/valve.sh.

  valve_compare.py --odeint O.csv --odeint-json O.json --ref R.csv --ref-seconds S
                   [--twofold T.csv --twofold-json T.json] [--twofold-missing WHY]

CSV layout (bench/valve_odeint.cpp, tests/scripts/valve_ref.py --csv): q,converged,n,x_1..x_n.
Codes are compared per q where both sit on the same branch: both stopped at the stationary
state, or both periodic with the same period (k <= 32 events, repeating to 1e-6).  Just above
the Hopf point the decay to x* outlasts the record; such members (every value within 1e-5 of
x*) are counted apart: their extrema are at the resolution of the tolerance.  There the
difference is the Hausdorff distance between the two sets of recorded values (so a different
phase, or a different number of impacts counted in a chatter sequence, does not count);
elsewhere (chaotic windows, or codes on different branches) nothing is compared: after 2048
events of a chaotic orbit the codes' trajectories are unrelated, and only the count is given.
The last stdout line is the JSON record.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "scripts"))
from valve_ref import stationary  # noqa: E402

# Measured once (perf record -e cpu-clock, 32 q of the grid, twofold on DOP853): why twofold is
# still slower on this protocol, and why 5x is out of reach for one member at a time.
WHERE_TIME_GOES = (
    ".  Where its time goes (perf, 32 q): the valve's right-hand side 34 % (in the stages and in "
    "the extremum event's field; each stage waits for the square root of the stage before: about "
    "27 cycles a call), the DOP853 stages and error measure 20 %, event sampling (8 points a "
    "step, on the Hermite interpolant) and location 20 %, the step loop and controller 12 %.  DOP853 "
    "(`integrator.method: dop853`) takes {steps:,.0f} steps and {rhs:,.0f} evaluations per "
    "trajectory here (averages over the grid), odeint's Cash-Karp pair {odeint_steps:,.0f} "
    "accepted steps.  DOPRI5 took 2.1 times DOP853's time (measured on 32 q: 188,440 steps per "
    "trajectory on average, 103,792 at q = 2.1; scipy's RK45, an independent implementation of "
    "the same pair with the same RMS norm, takes 95,008 at q = 2: bench/valve_dopri_steps.py).  "
    "The higher order saves less than on a smooth orbit because the pressure equation's "
    "Jacobian, -beta x / (2 sqrt p), is large when p is small: steps are limited by stability "
    "as much as by accuracy.  odeint has a looser error test (the largest |error| / (eps_abs + "
    "eps_rel (|x| + dt |x'|)) over the components) and an inlined right-hand side: the whole "
    "run's CPU time per evaluation is at most {ns_odeint:.0f} ns for odeint (counting 6 per "
    "accepted try_step, not its bisection re-steps) against twofold's {ns_twofold:.0f} ns "
    "(through its function tables, event sampling and landing included).  5x odeint is "
    "{goal:.0f} trajectories per second: with twofold's evaluations per trajectory that is "
    "{ns_goal:.1f} ns an evaluation, less than the latency of the chain of stages on one core.  "
    "Only integrating several members side by side (SIMD lanes, as MPGOS runs one member per GPU "
    "thread) could hide that latency, and even then the evaluations per trajectory would have "
    "to fall; the engine integrates one member at a time")


PERIOD_TOL = 1e-6
DECAY_TOL = 1e-5  # not stopped, yet this close to x*: the slow decay just above the Hopf point
MPGOS_TRAJ, MPGOS_SECONDS = 4147200, 1000.7   # Hegedűs et al.: Titan Black, whole scan
ODEINT_PAPER_RATE = 25.6                        # same paper: odeint, one core of an i7-4820K


def load(path):
    out = {}
    for line in open(path).read().splitlines()[1:]:
        f = line.split(",")
        out[round(float(f[0]), 9)] = (bool(int(f[1])), np.array([float(v) for v in f[3:3 + int(f[2])]]))
    return out


def branch(conv, x, q=None):
    """'stationary', 'decaying' (with q given), 'period-k' or 'aperiodic'."""
    if conv:
        return "stationary"
    if q is not None and len(x) and np.max(np.abs(x - stationary(q)[0])) < DECAY_TOL:
        return "decaying"
    for k in range(1, min(32, len(x) // 2) + 1):
        if np.all(np.abs(x[k:] - x[:-k]) < PERIOD_TOL):
            return f"period-{k}"
    return "aperiodic"


def hausdorff(a, b):
    d = np.abs(a[:, None] - b[None, :])
    return float(max(d.min(axis=1).max(), d.min(axis=0).max()))


def compare(a, b):
    """Per-q comparison of two loaded CSVs on their common q values."""
    common = sorted(set(a) & set(b))
    same, differ, aperiodic, decaying, worst = [], [], [], [], (0.0, None)
    for q in common:
        ba, bb = branch(*a[q], q), branch(*b[q], q)
        if ba == "aperiodic" or bb == "aperiodic":
            aperiodic.append(q)
        elif ba == "decaying" or bb == "decaying":
            decaying.append(q)
        elif ba != bb:
            differ.append((q, ba, bb))
        else:
            h = hausdorff(a[q][1], b[q][1])
            same.append(q)
            if h >= worst[0]:
                worst = (h, q)
    return {"common_q": len(common), "compared_q": len(same), "max_difference": worst[0],
            "max_difference_at_q": worst[1], "aperiodic_q": len(aperiodic),
            "decaying_q": len(decaying),
            "different_branch": [{"q": q, "a": x, "b": y} for q, x, y in differ]}


def classes(a):
    c = {}
    for q in a:
        k = branch(*a[q], q)
        c[k] = c.get(k, 0) + 1
    return dict(sorted(c.items()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--odeint", required=True)
    ap.add_argument("--odeint-json", required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--ref-seconds", type=float, required=True)
    ap.add_argument("--twofold")
    ap.add_argument("--twofold-json")
    ap.add_argument("--twofold-missing", default="")
    a = ap.parse_args()
    o, oj, r = load(a.odeint), json.loads(open(a.odeint_json).read()), load(a.ref)
    grid = sorted(o)
    res = {"q_min": grid[0], "q_max": grid[-1], "n_q": len(grid), "transient": 2048, "recorded": 64,
           "tolerance": 1e-9, "odeint": oj, "odeint_branches": classes(o),
           "reference_q": len(r), "reference_seconds": a.ref_seconds,
           "odeint_vs_reference": compare(o, r),
           "mpgos_titan_black_traj_per_s": MPGOS_TRAJ / MPGOS_SECONDS,
           "odeint_i7_4820k_traj_per_s_per_core_published": ODEINT_PAPER_RATE}
    tw_row, tw_cmp = "| twofold | — | to be measured |", ""
    if a.twofold and os.path.exists(a.twofold):
        t, tj = load(a.twofold), json.loads(open(a.twofold_json).read())
        res["twofold"] = tj
        res["twofold_vs_odeint"] = compare(t, o)
        res["twofold_vs_reference"] = compare(t, r)
        rate = tj.get("trajectories_per_cpu_second")
        res["ratio_twofold_over_odeint"] = rate / oj["trajectories_per_cpu_second"] if rate else None
        tw_row = (f"| twofold (1 rank, the whole process per CPU second) | {len(t)} | {rate:.1f} |"
                  if rate else tw_row)
        c = res["twofold_vs_odeint"]
        tw_cmp = (f"\ntwofold against odeint: {c['compared_q']} of {c['common_q']} q on the same branch, "
                  f"largest difference {c['max_difference']:.1e}; against the reference: "
                  f"{res['twofold_vs_reference']['max_difference']:.1e}.")
        ratio = res["ratio_twofold_over_odeint"]
        if ratio:
            rhs = tj.get("rhs_per_trajectory", float("nan"))
            goal = 5 * oj["trajectories_per_cpu_second"]
            where = WHERE_TIME_GOES.format(
                steps=tj.get("steps_per_trajectory", float("nan")), rhs=rhs,
                odeint_steps=oj["steps"] / oj["trajectories"],
                ns_odeint=1e9 * oj["cpu_seconds"] / (6 * oj["steps"]), ns_twofold=1e9 / (rate * rhs),
                goal=goal, ns_goal=1e9 / (goal * rhs))
            tw_cmp += (f"  twofold ({tj.get('integrator', 'dopri5')}) / odeint per core: **{ratio:.2f}**"
                       + ("" if ratio >= 1 else " — twofold loses here" + where) + ".")
    else:
        res["twofold"] = None
        res["twofold_missing"] = a.twofold_missing
        tw_cmp = f"\ntwofold's side is missing: {a.twofold_missing}."
    gpu = MPGOS_TRAJ / MPGOS_SECONDS
    tw_rate = (res.get("twofold") or {}).get("trajectories_per_cpu_second")
    res["cores_to_match_gpu"] = {"odeint": gpu / oj["trajectories_per_cpu_second"],
                                 "twofold": gpu / tw_rate if tw_rate else None}
    cores = (f"At these rates the GPU's {gpu:,.0f} trajectories per second take "
             f"{gpu / oj['trajectories_per_cpu_second']:.0f} of these cores with odeint"
             + (f" and {gpu / tw_rate:.0f} with twofold (its ranks scale over cores and nodes:"
                " bench/cluster_overhead.sh)" if tw_rate else "") + ".")
    c = res["odeint_vs_reference"]
    br = ", ".join(f"{k} {v}" for k, v in res["odeint_branches"].items())
    res["title"] = "Pressure-relief valve"
    res["markdown"] = f"""## Pressure-relief valve (bench/valve.sh: the MPGOS impact benchmark)

Hős & Champneys' valve, x' = v, v' = −κv − (x + δ) + p, p' = β(q − x√p), κ 1.25, β 20, δ 10,
impacts on the seat x = 0 with r = 0.8; {res['n_q']} flow rates q on [{grid[0]:g}, {grid[-1]:g}] from
(0.2, 0, 0); events are impacts and extrema of x; x at events 2049..2112 is recorded (stop
early at the stationary state); tolerances 1e-9 (docs/IMPACTS.md has the protocol and the
dynamics).  The peer is boost::odeint as its users write it (bench/valve_odeint.cpp:
`runge_kutta_cash_karp54` under `make_controlled`, `try_step`, events bisected on re-tried
steps to 1e-10 in time); one core, rate per CPU second.

| code | trajectories | trajectories/s per core |
|---|---|---|
| boost::odeint (Cash–Karp 5(4), here) | {oj['trajectories']} | {oj['trajectories_per_cpu_second']:.1f} |
{tw_row}
| MPGOS, one Titan Black GPU (published) | {MPGOS_TRAJ} | {MPGOS_TRAJ / MPGOS_SECONDS:.0f} (whole GPU) |
| boost::odeint, i7-4820K (published with MPGOS) | — | {ODEINT_PAPER_RATE} |

The published figures (Hegedűs et al., MPGOS) are for scale only: their protocol stops at
1024 + 32 maxima of x at tolerance 1e-10, so the work per trajectory differs from this one.
{cores}

odeint's branches over the grid: {br}.  Against the independent reference
(tests/scripts/valve_ref.py, scipy DOP853 at 1e-11, {len(r)} of the q values, {a.ref_seconds:.0f} s):
{c['compared_q']} q on the same branch, largest difference of the recorded sets
{c['max_difference']:.1e} (at q = {c['max_difference_at_q']}); {c['aperiodic_q']} q aperiodic (chaotic windows, or
transients longer than the record: not compared), {c['decaying_q']} q still decaying to x* (just above
the Hopf point: the extrema left are at the resolution of tolerance 1e-9, not compared),
{len(c['different_branch'])} on different branches.
The differences are the size of an error at tolerance 1e-9 (docs/IMPACTS.md: on the large
impact-free orbit at q = 7.58 the reference moves by 8e-11 from rtol 1e-11 to 1e-12, and
DOP853 itself by 1.3e-8 at rtol 1e-9).{tw_cmp}"""
    print(json.dumps(res))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""valve_study.py — the dynamics of the pressure-relief valve over q, from the independent
reference (tests/scripts/valve_ref.py), for the note in docs/IMPACTS.md: per q the branch of
the recorded events (stationary, period-k in events, aperiodic), the impacts and chatter
sequences ending on the seat among them, and the range of x.

  valve_study.py Q_MIN Q_MAX N [--transient 2048] [--n 64] [--json OUT]
"""
import argparse
import json
import os
import sys


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "scripts"))
import valve_ref as V  # noqa: E402
from valve_compare import branch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qmin", type=float)
    ap.add_argument("qmax", type=float)
    ap.add_argument("n", type=int)
    ap.add_argument("--transient", type=int, default=2048)
    ap.add_argument("--n-rec", type=int, default=64)
    ap.add_argument("--json")
    a = ap.parse_args()
    qh = V.hopf_q()
    print(f"stationary state loses stability at q_H = {qh:.6f} (omega {V.hopf_omega(qh):.6f})")
    rows = []
    for i in range(a.n):
        q = a.qmin + (a.qmax - a.qmin) * i / max(a.n - 1, 1)
        r = V.simulate(q, a.transient, a.n_rec)
        rec_sticks = sum(1 for e in r.sticks if e > a.transient)
        row = {"q": q, "branch": branch(r.converged, r.x, q), "impacts": r.kinds.count("impact"),
               "sticks": rec_sticks, "x_min": float(r.x.min()), "x_max": float(r.x.max()),
               "x_star": V.stationary(q)[0]}
        rows.append(row)
        print(f"q {q:7.4f}  {row['branch']:11s} impacts {row['impacts']:2d}  rests {rec_sticks:2d}  "
              f"x in [{row['x_min']:.6f}, {row['x_max']:.6f}]  x* {row['x_star']:.6f}", flush=True)
    if a.json:
        json.dump({"q_hopf": qh, "rows": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()

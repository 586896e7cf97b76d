#!/usr/bin/python3
"""wheel_compare.py — Wheel Fig. 5 members/s: twofold against the scipy reference
(bench/wheel_scipy.py) and SUNDIALS CVODE (bench/wheel_cvode.c) at matched accuracy, in one
invocation, on the same members and exits.

  /usr/bin/python3 bench/wheel_compare.py BUILD_DIR [--members 400] [--t-end 2]
        [--scipy-members 40] [--first-n 20] [--json OUT.json]

1. Reference: twofold at rtol 1e-13 (atol 1e-15) with its event log; every other run replays
   its exits (continuation points after each two-fold visit), so all follow the same members.
   An independent check of the reference: CVODE at rtol 1e-13 on the same exits.
2. Accuracy of a run: per member, the largest |t - t_ref| over its first N events (bursts
   closer than 1e-4 merged, bench/wheel_events.py); the run's error is the 90th percentile of
   that over the members (the largest is kept too: a member whose trajectory grazes a fold
   can part from the reference in any code).
3. Sweep rtol 1e-8 … 1e-12 (atol = rtol/100): after one twofold run with the long event log
   for the accuracy, --pairs alternated timed runs (twofold, CVODE, twofold, CVODE, ...):
   twofold's scheduler rate and CVODE's integration loop; a rate is the median over the
   pairs, with its spread (min .. max).  scipy (solve_ivp DOP853, terminal events, the
   right-hand side in Python) at rtol 1e-10 on the first --scipy-members, for scale only: an
   interpreted right-hand side is no competent peer, so it stays out of the headline.
4. Matched accuracy: for every rtol at which CVODE completes every member, twofold at its
   loosest rtol that completes every member at least as accurately; the ratio of the median
   rates.  The headline is the smallest of these ratios over CVODE's rtols.

The window t = 0..T is one that every code completes for every member: over longer horizons
the codes' trajectories part at grazing contacts and their amounts of work differ (one reaches
the two-fold more often than the exits replayed), which a members/s ratio must not mix in.
It also ends before the first arrival at full stick (h = g = 0; checked on the reference,
the script stops otherwise): the baselines have no treatment of it.
Prints one JSON line (and writes it to --json)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import wheel_events  # noqa: E402
import wheel_scipy  # noqa: E402
from work_precision import error as accuracy  # noqa: E402
from work_precision import run_engine as twofold  # noqa: E402

RTOLS = [1e-8, 1e-9, 1e-10, 1e-11, 1e-12]


def say(msg):
    print(f"wheel_compare: {msg}", file=sys.stderr, flush=True)


def cvode(build, ref_h5, t_end, rtol, atol, events_out):
    r = subprocess.run([os.path.join(build, "bench_wheel_cvode"), ref_h5, str(t_end), str(rtol), str(atol),
                        events_out], check=True, capture_output=True, text=True).stdout
    return json.loads(r.strip().splitlines()[-1])


def rates(runs):
    """Median members/s of timed runs, and their spread."""
    r = [x["members_per_second"] for x in runs]
    return {"members_per_s": statistics.median(r), "min_members_per_s": min(r), "max_members_per_s": max(r),
            "runs": len(r)}


def pick(rows, bound):
    """The loosest rtol whose run completed every member with error <= bound."""
    ok = [r for r in rows if r["complete"] and r["accuracy"]["p90_member_max_dt"] <= bound]
    return max(ok, key=lambda r: r["rtol"]) if ok else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--members", type=int, default=400)
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--scipy-members", type=int, default=40)
    ap.add_argument("--first-n", type=int, default=20)
    ap.add_argument("--pairs", type=int, default=5, help="alternated timed pairs per rtol (>= 5)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    if a.pairs < 5:
        ap.error("--pairs must be at least 5: a rate is a median of alternated pairs")
    have_cvode = os.access(os.path.join(a.build, "bench_wheel_cvode"), os.X_OK)
    M, T, N = a.members, a.t_end, a.first_n
    res = {"members": M, "t_end": T, "first_n": N, "scipy_members": a.scipy_members,
           "pairs": a.pairs, "twofold": [], "cvode": [], "goal_cvode": 2.0}
    with tempfile.TemporaryDirectory() as tmp:
        ref_h5 = os.path.join(tmp, "ref.h5")
        say(f"reference: twofold at rtol 1e-13, {M} members to t = {T:g}")
        r = twofold(a.build, ref_h5, M, T, 1e-13, 1e-15, 20000)
        res["reference_status"] = r["status_counts"]
        res["first_full_stick"] = wheel_events.require_window_before_full_stick(ref_h5, T, "wheel_compare")
        _, exits, ref = wheel_events.load_engine(ref_h5)
        if have_cvode:
            cvode(a.build, ref_h5, T, 1e-13, 1e-15, os.path.join(tmp, "cv.txt"))
            res["reference_vs_cvode_1e-13"] = accuracy(
                ref, wheel_events.read_event_text(os.path.join(tmp, "cv.txt"), M), N)
        for rtol in RTOLS:
            atol = rtol / 100
            log_h5 = os.path.join(tmp, "acc.h5")
            twofold(a.build, log_h5, M, T, rtol, atol, 20000, replay=ref_h5)
            acc = accuracy(ref, wheel_events.load_engine(log_h5)[2], N)
            txt = os.path.join(tmp, "cv.txt")
            runs, cruns = [], []
            for _ in range(a.pairs):  # alternated: the machine's drift falls on both sides
                runs.append(twofold(a.build, os.path.join(tmp, "timed.h5"), M, T, rtol, atol, 64, replay=ref_h5))
                if have_cvode:
                    cruns.append(cvode(a.build, ref_h5, T, rtol, atol, txt))
            last = runs[-1]
            res["twofold"].append({"rtol": rtol, **rates(runs), "events": sum(last["events"].values()),
                                   "rhs_per_event": last["rhs_per_event"], "status_counts": last["status_counts"],
                                   "complete": all(x["status_counts"]["ok"] == M for x in runs), "accuracy": acc})
            if have_cvode:
                cl = cruns[-1]
                res["cvode"].append({"rtol": rtol, **rates(cruns), "events": cl["events"],
                                     "rhs_evals": cl["rhs_evals"], "steps": cl["steps"],
                                     "status_counts": cl["status_counts"],
                                     "complete": all(x["status_counts"]["ok"] == M for x in cruns),
                                     "accuracy": accuracy(ref, wheel_events.read_event_text(txt, M), N),
                                     "pair_ratios": [x["members_per_second"] / y["members_per_second"]
                                                     for x, y in zip(runs, cruns)]})
            say(f"rtol {rtol:g}: twofold {res['twofold'][-1]['members_per_s']:.0f} members/s"
                + (f", CVODE {res['cvode'][-1]['members_per_s']:.0f}" if have_cvode else ""))

        # scipy: one rtol, the first few members (a Python loop: ~0.25 s per member)
        K = min(a.scipy_members, M)
        params = wheel_events.load_engine(ref_h5)[0]
        wh = wheel_scipy.Wheel(params)
        t0 = time.perf_counter()
        outs = [wheel_scipy.run_member(wh, ex, T, 1e-10, 1e-12, "DOP853", 1e-6) for ex in exits[:K]]
        wall = time.perf_counter() - t0
        sev = [o[0] for o in outs]
        res["scipy"] = {"rtol": 1e-10, "method": "DOP853", "members": K, "members_per_s": K / wall,
                        "wall_seconds": wall, "rhs_evals": wh.nrhs,
                        "complete": all(o[1] == "ok" for o in outs),
                        "accuracy": accuracy(ref[:K], sev, N)}
        say(f"scipy DOP853 at rtol 1e-10: {K / wall:.2f} members/s")

    # matched accuracy: twofold at its loosest rtol at least as accurate as the other code's run
    if have_cvode:
        rows = []
        for cv in res["cvode"]:
            if not cv["complete"]:
                continue
            tf = pick(res["twofold"], cv["accuracy"]["p90_member_max_dt"])
            rows.append({"cvode_rtol": cv["rtol"], "cvode_error": cv["accuracy"]["p90_member_max_dt"],
                         "twofold_rtol": tf and tf["rtol"],
                         "twofold_error": tf and tf["accuracy"]["p90_member_max_dt"],
                         "ratio": tf["members_per_s"] / cv["members_per_s"] if tf else None})
        res["matched_cvode"] = rows
        ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
        res["ratio_twofold_over_cvode"] = min(ratios) if ratios else None
        same = [y for y in res["cvode"] if y["rtol"] == 1e-10]  # one rtol: the pairs' own ratios
        res["same_rtol_cvode_ratio"] = statistics.median(same[0]["pair_ratios"]) if same else None
        res["same_rtol_cvode_ratio_spread"] = [min(same[0]["pair_ratios"]), max(same[0]["pair_ratios"])] if same else None
    sp = res["scipy"]
    tf = pick(res["twofold"], sp["accuracy"]["p90_member_max_dt"])
    res["matched_scipy"] = {"twofold_rtol": tf and tf["rtol"], "scipy_rtol": 1e-10,
                            "twofold_error": tf and tf["accuracy"]["p90_member_max_dt"],
                            "scipy_error": sp["accuracy"]["p90_member_max_dt"]}
    res["ratio_twofold_over_scipy"] = tf["members_per_s"] / sp["members_per_s"] if tf else None
    same = [x for x in res["twofold"] if x["rtol"] == 1e-10]
    res["same_rtol_scipy_ratio"] = same[0]["members_per_s"] / sp["members_per_s"] if same else None
    if have_cvode:
        res["meets_goal_cvode"] = (res["ratio_twofold_over_cvode"] or 0) >= res["goal_cvode"]
    line = json.dumps(res)
    if a.json:
        with open(a.json, "w") as f:
            f.write(line + "\n")
    print(line)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""work_precision.py — work-precision diagram of the Filippov integrator on the wheel (Fig. 5
config): event-time error versus cost over rtol = 1e-4 .. 1e-12.

  /usr/bin/python3 bench/work_precision.py BUILD_DIR OUT.png [--members 10] [--t-end 2]
        [--first-n 20] [--json OUT.json]

Reference: the engine at rtol 1e-13 (atol 1e-15); its exits (u of every visit) are replayed
by every other run (exit.policy replay), so all runs follow the same members and exits.  The
reference is checked against the independent scipy DOP853 reference (bench/wheel_scipy.py)
at rtol 1e-13 on the same exit points.  For each rtol (atol = rtol / 100): the engine
(DOPRI5 + events), and, for comparison, scipy DOP853 and CVODE Adams (if BUILD_DIR has
bench_wheel_cvode) replaying the same exit points.  Error = max |t - t_ref| over the first N
events (bursts < 1e-4 merged, bench/wheel_events.py) of every member, up to the first event
where a run and the reference disagree about what happens (then the point is drawn hollow);
cost = right-hand-side evaluations and wall seconds."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import wheel_events  # noqa: E402
import wheel_scipy  # noqa: E402

import h5py  # noqa: E402
import numpy as np  # noqa: E402


def error(ref, other, first_n):
    """Event-time agreement (bench/wheel_events.py) with the 90th percentile over members of
    each member's largest difference: one member grazing a fold can part from the reference
    in any code, and the largest alone would measure that member."""
    c = wheel_events.compare(ref, other, first_n)
    per = c.pop("per_member")
    c["raw"].pop("per_member", None)
    c["p90_member_max_dt"] = float(np.percentile(per, 90)) if per else 0.0
    return c


def run_engine(build, out, members, t_end, rtol, atol, log, replay=None, extra=()):
    """One twofold run of the Fig. 5 config (event log of `log` slots, replaying the exits of
    `replay` if given, further --set KEY=VALUE in `extra`); returns its --json summary."""
    args = [os.path.join(build, "twofold"), "run", os.path.join(ROOT, "configs", "wheel-fig5.yaml"), "-o", out,
            "--overwrite", "--quiet", "--json", "--set", f"ensemble.members={members}",
            "--set", f"integrator.t_end={t_end}", "--set", f"integrator.rtol={rtol}",
            "--set", f"integrator.atol={atol}", "--set", f"output.event_log={log}",
            "--set", "output.trajectory_samples=0"]
    if replay:
        args += ["--set", "exit.policy=replay", "--set", f"exit.replay={replay}"]
    for kv in extra:
        args += ["--set", kv]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()
                      .splitlines()[-1])


def engine(build, out, members, t_end, rtol, atol, replay=None):
    """(events, rhs evaluations, compute seconds): events from a run with the long event log;
    the time from a second run with the config's short log (the long one is written only for
    the comparison), as members over the scheduler's rate (start-up excluded, like the other
    codes' integration loops; flushing results included)."""
    run_engine(build, out, members, t_end, rtol, atol, 20000, replay)
    with h5py.File(out, "r") as f:
        rhs = int(f["members/rhs_evals"][()].sum())
    _, _, ev = wheel_events.load_engine(out)
    timed = run_engine(build, out + ".timed.h5", members, t_end, rtol, atol, 64, replay)
    return ev, rhs, timed["members"] / timed["members_per_second"]


def scipy_run(ref_h5, t_end, rtol, atol, method="DOP853"):
    params, exits, _ = wheel_events.load_engine(ref_h5)
    wh = wheel_scipy.Wheel(params)
    t0 = time.perf_counter()
    evs = [wheel_scipy.run_member(wh, ex, t_end, rtol, atol, method, 1e-6)[0] for ex in exits]
    return evs, wh.nrhs, time.perf_counter() - t0


def cvode_run(build, ref_h5, t_end, rtol, atol, tmp):
    out = os.path.join(tmp, "cvode.txt")
    r = json.loads(subprocess.run([os.path.join(build, "bench_wheel_cvode"), ref_h5, str(t_end), str(rtol),
                                   str(atol), out], check=True, capture_output=True, text=True)
                   .stdout.strip().splitlines()[-1])
    _, exits, _ = wheel_events.load_engine(ref_h5)
    return wheel_events.read_event_text(out, len(exits)), r["rhs_evals"], r["wall_seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("png")
    ap.add_argument("--members", type=int, default=10)
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--first-n", type=int, default=20)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rtols = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12]
    have_cvode = os.access(os.path.join(a.build, "bench_wheel_cvode"), os.X_OK)
    res = {"members": a.members, "t_end": a.t_end, "first_n": a.first_n, "engine": [], "scipy_DOP853": [],
           "cvode_Adams": []}
    with tempfile.TemporaryDirectory() as tmp:
        ref_h5 = os.path.join(tmp, "ref.h5")
        ref, _, _ = engine(a.build, ref_h5, a.members, a.t_end, 1e-13, 1e-15)
        res["first_full_stick"] = wheel_events.require_window_before_full_stick(ref_h5, a.t_end,
                                                                              "work_precision")
        sref, _, _ = scipy_run(ref_h5, a.t_end, 1e-13, 1e-15)
        check = error(ref, sref, a.first_n)
        res["reference_vs_scipy_1e-13"] = check
        print(f"work_precision: reference engine 1e-13 vs scipy DOP853 1e-13: p90 dt {check['p90_member_max_dt']:.2e} "
              f"over {check['matched_events']} events", file=sys.stderr)
        if have_cvode:
            cref, _, _ = cvode_run(a.build, ref_h5, a.t_end, 1e-13, 1e-15, tmp)
            res["reference_vs_cvode_1e-13"] = error(ref, cref, a.first_n)
        for rtol in rtols:
            atol = rtol / 100
            ev, rhs, wall_engine = engine(a.build, os.path.join(tmp, "e.h5"), a.members, a.t_end, rtol, atol,
                                             replay=ref_h5)
            c = error(ref, ev, a.first_n)
            res["engine"].append({"rtol": rtol, "rhs": rhs, "wall": wall_engine, **c})
            sev, srhs, swall = scipy_run(ref_h5, a.t_end, rtol, atol)
            c = error(ref, sev, a.first_n)
            res["scipy_DOP853"].append({"rtol": rtol, "rhs": srhs, "wall": swall, **c})
            if have_cvode:
                cev, crhs, cwall = cvode_run(a.build, ref_h5, a.t_end, rtol, atol, tmp)
                c = error(ref, cev, a.first_n)
                res["cvode_Adams"].append({"rtol": rtol, "rhs": crhs, "wall": cwall, **c})
            print(f"work_precision: rtol {rtol:g} done", file=sys.stderr)

    full = a.members * a.first_n
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.2))
    styles = {"engine": ("twofold (DOPRI5 + events)", "C0", "o"),
              "scipy_DOP853": ("scipy solve_ivp DOP853", "C1", "s"),
              "cvode_Adams": ("CVODE Adams + rootfinding", "C2", "^")}
    for ax, cost, label in ((axes[0], "rhs", "right-hand-side evaluations"), (axes[1], "wall", "wall seconds")):
        for key, (name, col, mk) in styles.items():
            pts = res[key]
            if not pts:
                continue
            xs = [p[cost] for p in pts]
            ys = [max(p["p90_member_max_dt"], 1e-16) for p in pts]
            ax.loglog(xs, ys, "-", color=col, label=name)
            for p, x, y in zip(pts, xs, ys):
                complete = p["matched_events"] >= full and p["diverged_members"] == 0
                ax.plot(x, y, mk, color=col, mfc=col if complete else "white", ms=7)
                if key == "engine":
                    ax.annotate(f"{p['rtol']:.0e}", (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8,
                                color=col)
        ax.set_xlabel(f"cost: {label} ({a.members} members, t = 0..{a.t_end:g})"
                      + ("\ntwofold: scheduler time (start-up excluded, result output included)" if cost == "wall" else ""))
        ax.set_ylabel(f"event-time error (first {a.first_n} events;\n90th percentile over members)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(loc="upper right", fontsize=9)
    axes[1].text(0.02, 0.02, "hollow: the run disagrees with the reference about an event\n"
                 "within the compared window (error over the matched prefix)",
                 transform=axes[1].transAxes, fontsize=8, va="bottom")
    check = res.get("reference_vs_cvode_1e-13", res["reference_vs_scipy_1e-13"])
    fig.suptitle("Wheel Fig. 5 (Filippov, replayed exits): event-time error vs cost, rtol 1e-4..1e-12 "
                 f"(reference: twofold at rtol 1e-13;\n{'CVODE' if 'reference_vs_cvode_1e-13' in res else 'scipy DOP853'}"
                 f" at 1e-13 agrees to {check['p90_member_max_dt']:.1e})", fontsize=11)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    if a.json:
        json.dump(res, open(a.json, "w"), indent=1)
    print(json.dumps({"png": a.png, "members": a.members, "t_end": a.t_end,
                      "first_full_stick": res["first_full_stick"],
                      "reference_vs_scipy_p90_dt": res["reference_vs_scipy_1e-13"]["p90_member_max_dt"],
                      "reference_vs_cvode_p90_dt": res.get("reference_vs_cvode_1e-13", {}).get("p90_member_max_dt"),
                      "engine": [(p["rtol"], p["rhs"], p["p90_member_max_dt"]) for p in res["engine"]],
                      "cvode": [(p["rtol"], p["rhs"], p["p90_member_max_dt"]) for p in res["cvode_Adams"]]}))


if __name__ == "__main__":
    main()

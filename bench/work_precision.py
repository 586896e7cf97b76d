#!/usr/bin/python3
"""work_precision.py — work-precision diagram of the Filippov integrator on the wheel (Fig. 5
config): event-time error versus cost over rtol = 1e-4 .. 1e-12.

  /usr/bin/python3 bench/work_precision.py BUILD_DIR OUT.png [--members 5] [--t-end 30]
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


def engine(build, out, members, t_end, rtol, atol, replay=None):
    args = [os.path.join(build, "twofold"), "run", os.path.join(ROOT, "configs", "wheel-fig5.yaml"), "-o", out,
            "--overwrite", "--quiet", "--json", "--set", f"ensemble.members={members}",
            "--set", f"integrator.t_end={t_end}", "--set", f"integrator.rtol={rtol}",
            "--set", f"integrator.atol={atol}", "--set", "output.event_log=20000",
            "--set", "output.trajectory_samples=0"]
    if replay:
        args += ["--set", "exit.policy=replay", "--set", f"exit.replay={replay}"]
    t0 = time.perf_counter()
    r = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
    wall = time.perf_counter() - t0
    with h5py.File(out, "r") as f:
        rhs = int(f["members/rhs_evals"][()].sum())
    _, _, ev = wheel_events.load_engine(out)
    return ev, rhs, r["wall_seconds"], wall


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
    ap.add_argument("--members", type=int, default=5)
    ap.add_argument("--t-end", type=float, default=30.0)
    ap.add_argument("--first-n", type=int, default=20)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rtols = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12]
    have_cvode = os.access(os.path.join(a.build, "bench_wheel_cvode"), os.X_OK)
    res = {"members": a.members, "t_end": a.t_end, "first_n": a.first_n, "engine": [], "scipy_DOP853": [],
           "cvode_Adams": []}
    with tempfile.TemporaryDirectory() as tmp:
        ref_h5 = os.path.join(tmp, "ref.h5")
        ref, _, _, _ = engine(a.build, ref_h5, a.members, a.t_end, 1e-13, 1e-15)
        sref, _, _ = scipy_run(ref_h5, a.t_end, 1e-13, 1e-15)
        check = wheel_events.compare(ref, sref, a.first_n)
        res["reference_vs_scipy_1e-13"] = check
        print(f"work_precision: reference engine 1e-13 vs scipy DOP853 1e-13: max dt {check['max_event_dt']:.2e} "
              f"over {check['matched_events']} events", file=sys.stderr)
        for rtol in rtols:
            atol = rtol / 100
            ev, rhs, wall_engine, _ = engine(a.build, os.path.join(tmp, "e.h5"), a.members, a.t_end, rtol, atol,
                                             replay=ref_h5)
            c = wheel_events.compare(ref, ev, a.first_n)
            res["engine"].append({"rtol": rtol, "rhs": rhs, "wall": wall_engine, **c})
            sev, srhs, swall = scipy_run(ref_h5, a.t_end, rtol, atol)
            c = wheel_events.compare(ref, sev, a.first_n)
            res["scipy_DOP853"].append({"rtol": rtol, "rhs": srhs, "wall": swall, **c})
            if have_cvode:
                cev, crhs, cwall = cvode_run(a.build, ref_h5, a.t_end, rtol, atol, tmp)
                c = wheel_events.compare(ref, cev, a.first_n)
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
            ys = [max(p["max_event_dt"], 1e-16) for p in pts]
            ax.loglog(xs, ys, "-", color=col, label=name)
            for p, x, y in zip(pts, xs, ys):
                complete = p["matched_events"] >= full and p["diverged_members"] == 0
                ax.plot(x, y, mk, color=col, mfc=col if complete else "white", ms=7)
                if key == "engine":
                    ax.annotate(f"{p['rtol']:.0e}", (x, y), textcoords="offset points", xytext=(6, 4), fontsize=8,
                                color=col)
        ax.set_xlabel(f"cost: {label} ({a.members} members, t = 0..{a.t_end:g})"
                      + ("\ntwofold: the whole run (start-up, MPI, HDF5 output included)" if cost == "wall" else ""))
        ax.set_ylabel(f"max event-time error (first {a.first_n} events)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(loc="upper right", fontsize=9)
    axes[1].text(0.02, 0.02, "hollow: the run disagrees with the reference about an event\n"
                 "within the compared window (error over the matched prefix)",
                 transform=axes[1].transAxes, fontsize=8, va="bottom")
    fig.suptitle("Wheel Fig. 5 (Filippov, replayed exits): event-time error vs cost, rtol 1e-4..1e-12 "
                 f"(reference: twofold at rtol 1e-13;\nscipy DOP853 at 1e-13 agrees to "
                 f"{res['reference_vs_scipy_1e-13']['max_event_dt']:.1e})", fontsize=11)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    if a.json:
        json.dump(res, open(a.json, "w"), indent=1)
    print(json.dumps({"png": a.png, "reference_vs_scipy_max_dt": res["reference_vs_scipy_1e-13"]["max_event_dt"],
                      "engine": [(p["rtol"], p["rhs"], p["max_event_dt"]) for p in res["engine"]]}))


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# section_stiff.sh — bench section "stiff": the smoothed wheel (configs/wheel-smoothed.yaml,
# Jeffrey's Lambda_eps at small eps) on twofold's Rosenbrock stepper (integrator.method auto's
# choice for it) and on PETSc TS against SUNDIALS CVODE BDF (bench/stiff_cvode.c) on the same
# members, as a work-precision comparison in one run.
#
#   bench/section_stiff.sh BUILD_DIR
#   env: STIFF_MEMBERS 128, STIFF_T_END 20, STIFF_EPS "1e-4 1e-5 1e-6",
#        STIFF_RTOLS_TWOFOLD "1e-4 3e-5 1e-5 3e-6 1e-6 3e-7 1e-7", STIFF_RTOLS_CVODE "1e-5 1e-6 1e-7 1e-8"
#        STIFF_CODES "rosw rosw4 bdf5 rodas4 ros3p" (twofold's configurations below; also
#        rodas4-1: RODAS4 member by member, integrator.lanes 1; rodas4-fast: RODAS4 with the
#        opt-in vectorised math, model.field_math fast and integrator.controller_math fast,
#        whose results agree with rodas4's within 1e-12 relative, not bit for bit),
#        STIFF_PAIRS 5 (alternated pairs per matched comparison)
#
# Every code runs at several tolerances (atol = 1e-3 rtol); every run's final states are
# compared with a reference (CVODE BDF, difference-quotient Jacobian, rtol 1e-12).  Matched
# accuracy: for each CVODE run, the fastest twofold run whose error is no larger.  Rates are
# members per second of whole-process wall time for both codes (fork to exit, measured here the
# same way for both: loading, MPI_Init, PETSc or SUNDIALS set-up, reading the initial states,
# output); twofold's job clock and CVODE's integration loop are reported beside them.
# The matched comparisons are then timed again as alternated pairs (twofold, CVODE, twofold, ...,
# STIFF_PAIRS of each, whole process) and reported as the median ratio with its spread, of wall
# time and of CPU time (user + system of each process and its children).
# Last stdout line: the JSON record that bench/report.py files under bench/results/stiff.json.
set -euo pipefail
BUILD=$(cd "${1:?usage: section_stiff.sh BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$BUILD/bench_stiff_cvode" ] || {
  echo "section_stiff: $BUILD/bench_stiff_cvode not built (libsundials-dev missing)" >&2
  exit 1
}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/stiff.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
/usr/bin/python3 - "$BUILD" "$ROOT" "$WORK" <<'PY'
import json, os, resource, subprocess, sys, time
import h5py, numpy as np

build, root, work = sys.argv[1:4]
M = int(os.environ.get("STIFF_MEMBERS", "128"))
TE = os.environ.get("STIFF_T_END", "20")
EPS = os.environ.get("STIFF_EPS", "1e-4 1e-5 1e-6").split()
RT_TW = os.environ.get("STIFF_RTOLS_TWOFOLD", "1e-4 3e-5 1e-5 3e-6 1e-6 3e-7 1e-7").split()
RT_CV = os.environ.get("STIFF_RTOLS_CVODE", "1e-5 1e-6 1e-7 1e-8").split()
cvode = os.path.join(build, "bench_stiff_cvode")
# twofold's configurations: the PETSc TS defaults (ROSW ra34pw2, batches of 16, analytic
# Jacobian), an order-4 Rosenbrock-W method (needs the exact Jacobian, which the wheel gives),
# BDF at its best fixed order (PETSc's BDF does not vary its order), and twofold's own
# Rosenbrock stepper (integrator.method rosenbrock: RODAS4 or ROS3P, members side by side in
# lanes, integrator.lanes auto; rodas4-1 member by member)
TS = ("--set", "integrator.method=petsc-ts")
TWOFOLD_ALL = (("rosw", "twofold PETSc TS rosw ra34pw2 (default), batches of 16",
                (*TS, "--set", "integrator.ts.type=rosw")),
               ("rosw4", "twofold PETSc TS rosw veldd4 (order 4), batches of 16",
                (*TS, "--set", "integrator.ts.type=rosw", "-ts_rosw_type", "veldd4")),
               ("bdf5", "twofold PETSc TS bdf order 5, batches of 16",
                (*TS, "--set", "integrator.ts.type=bdf", "-ts_bdf_order", "5")),
               ("rodas4", "twofold rosenbrock rodas4",
                ("--set", "integrator.method=rosenbrock")),
               ("ros3p", "twofold rosenbrock ros3p",
                ("--set", "integrator.method=rosenbrock", "--set", "integrator.rosenbrock=ros3p")),
               ("rodas4-1", "twofold rosenbrock rodas4, lanes 1 (member by member)",
                ("--set", "integrator.method=rosenbrock", "--set", "integrator.lanes=1")),
               ("rodas4-fast", "twofold rosenbrock rodas4, fast field and controller math",
                ("--set", "integrator.method=rosenbrock", "--set", "model.field_math=fast",
                 "--set", "integrator.controller_math=fast")))
CODES = os.environ.get("STIFF_CODES", "rosw rosw4 bdf5 rodas4 ros3p").split()
TWOFOLD = tuple(c for c in TWOFOLD_ALL if c[0] in CODES)
PAIRS = int(os.environ.get("STIFF_PAIRS", "5"))
CVODE = (("dq", "CVODE BDF, difference-quotient Jacobian"),
         ("analytic", "CVODE BDF, the engine's analytic Jacobian"))


def say(*a):
    print("section_stiff:", *a, file=sys.stderr, flush=True)


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, cpu=None):
    """Wall time of the whole process and its JSON; with cpu (a list), its CPU time (user +
    system, the process and its children) is appended there."""
    c0, t0 = children_cpu(), time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
    wall = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(children_cpu() - c0)
    return wall, json.loads(r.stdout.strip().splitlines()[-1])


def twofold_cmd(eps, rtol, ty, extra):
    out = f"{work}/tw-{eps}-{rtol}-{ty}.h5"
    return out, [f"{build}/twofold", "run", f"{root}/configs/wheel-smoothed.yaml", "-o", out,
                 "--quiet", "--json", "--overwrite", "--set", f"ensemble.members={M}",
                 "--set", f"integrator.t_end={TE}", "--set", f"model.smoothing.epsilon={eps}",
                 "--set", f"integrator.rtol={rtol}",
                 "--set", f"integrator.atol={float(rtol) * 1e-3!r}", *extra]


def twofold(eps, rtol, ty, extra):
    out, cmd = twofold_cmd(eps, rtol, ty, extra)
    wall, j = timed(cmd)
    with h5py.File(out, "r") as f:
        x = f["members/final_state"][...]
        steps = float(np.sum(f["members/steps"][...]))
    j.setdefault("steps", steps)  # the stepper types' runs report their steps per member only
    return out, wall, j, x


def cv_cmd(h5, eps, rtol, jac):
    return [cvode, h5, TE, rtol, repr(float(rtol) * 1e-3), "sqrt", eps, "convex", str(M), jac]


def cv(h5, eps, rtol, jac):
    return timed(cv_cmd(h5, eps, rtol, jac))


def alternated(cmd_a, cmd_b):
    """PAIRS runs of each, a b a b ..., whole process; the ratios time_b / time_a pair by pair,
    of wall time and of CPU time (user + system: what the process itself took, less sensitive
    to other jobs on a shared machine than its wall time)."""
    ta, tb, ca, cb = [], [], [], []
    for _ in range(PAIRS):
        ta.append(timed(cmd_a, ca)[0])
        tb.append(timed(cmd_b, cb)[0])
    r = [b / a for a, b in zip(ta, tb)]
    rc = [b / a for a, b in zip(ca, cb)]
    return (float(np.median(ta)), float(np.median(tb)), float(np.median(r)), min(r), max(r),
            float(np.median(rc)), min(rc), max(rc))


res = {"members": M, "t_end": float(TE), "epsilons": [float(e) for e in EPS], "runs": [],
       "matched": []}
sections = []
for eps in EPS:
    runs = []
    first = None
    for ty, name, extra in TWOFOLD:
        for rtol in RT_TW:
            say(f"eps {eps}: {name}, rtol {rtol}")
            out, wall, j, x = twofold(eps, rtol, ty, extra)
            first = first or out
            runs.append(dict(code=name, key=f"twofold_{ty}", rtol=float(rtol), process_s=wall,
                             job_s=j["wall_seconds"], steps=j["steps"] / M,
                             jacobians=j.get("jacobian_evals", 0) / M, x=x, cmd=(ty, extra)))
    say(f"eps {eps}: reference, CVODE BDF at rtol 1e-12")
    _, ref = cv(first, eps, "1e-12", "dq")
    ref = np.array(ref["final_state"]).reshape(M, 3)
    for jac, name in CVODE:
        for rtol in RT_CV:
            say(f"eps {eps}: {name}, rtol {rtol}")
            wall, j = cv(first, eps, rtol, jac)
            runs.append(dict(code=name, key=f"cvode_{jac}", rtol=float(rtol), process_s=wall,
                             job_s=j["seconds"], steps=j["steps"] / M,
                             jacobians=j["jacobian_evals"] / M,
                             x=np.array(j["final_state"]).reshape(M, 3)))
    for r in runs:
        r["error"] = float(np.max(np.abs(r.pop("x") - ref)))
        r["rate"], r["rate_job"], r["epsilon"] = M / r["process_s"], M / r["job_s"], float(eps)
    res["runs"] += runs
    tw = [r for r in runs if r["key"].startswith("twofold")]
    rows = []
    for c in (r for r in runs if r["key"].startswith("cvode")):
        ok = [r for r in tw if r["error"] <= c["error"]]
        best = max(ok, key=lambda r: r["rate"]) if ok else None
        m = dict(epsilon=float(eps), cvode=c["code"], cvode_rtol=c["rtol"], cvode_error=c["error"],
                 cvode_rate=c["rate"], cvode_rate_loop=c["rate_job"],
                 twofold=best and f"{best['code']}, rtol {best['rtol']:g}",
                 twofold_error=best and best["error"], twofold_rate=best and best["rate"],
                 twofold_rate_job=best and best["rate_job"],
                 ratio=best["rate"] / c["rate_job"] if best else None,
                 ratio_process=best["rate"] / c["rate"] if best else None)
        if best and PAIRS > 0:
            say(f"eps {eps}: {PAIRS} alternated pairs, {m['twofold']} against {c['code']}, "
                f"rtol {c['rtol']:g}")
            ty, extra = best["cmd"]
            jac = c["key"][len("cvode_"):]
            tw_s, cv_s, ratio, lo, hi, cpu, cpu_lo, cpu_hi = alternated(twofold_cmd(eps, best["rtol"], ty, extra)[1],
                                                   cv_cmd(first, eps, repr(c["rtol"]), jac))
            m.update(pair_twofold_s=tw_s, pair_cvode_s=cv_s, pair_ratio=ratio, pair_ratio_min=lo,
                     pair_ratio_max=hi, pair_cpu_ratio=cpu, pair_cpu_ratio_min=cpu_lo,
                     pair_cpu_ratio_max=cpu_hi)
        res["matched"].append(m)
        rows.append(m)
    table = "\n".join(
        f"| {r['code']} | {r['rtol']:g} | {r['rate']:.0f} | {r['rate_job']:.0f} | "
        f"{r['steps']:.0f} | {r['jacobians']:.0f} | {r['error']:.1e} |" for r in runs)
    matched = "\n".join(
        f"| {m['cvode']}, rtol {m['cvode_rtol']:g} | {m['cvode_error']:.1e} | "
        f"{m['cvode_rate_loop']:.0f} | {m['cvode_rate']:.0f} | " +
        (f"{m['twofold']} | {m['twofold_error']:.1e} | {m['twofold_rate']:.0f} | "
         f"**{m['ratio']:.2f}** | {m['ratio_process']:.2f} | " +
         (f"**{m['pair_ratio']:.2f}** [{m['pair_ratio_min']:.2f}, {m['pair_ratio_max']:.2f}] | "
          f"{m['pair_cpu_ratio']:.2f} [{m['pair_cpu_ratio_min']:.2f}, "
          f"{m['pair_cpu_ratio_max']:.2f}] |"
          if "pair_ratio" in m else " | |") if m["twofold"]
         else "none as accurate | | | **0** | 0 | | |")
        for m in rows)
    sections.append(f"""### ε = {eps}

| code | rtol | members/s (process) | members/s (job or loop) | steps/member | Jacobians/member | max error |
|---|---|---|---|---|---|---|
{table}

Matched accuracy (the fastest twofold run at least as accurate as each CVODE run):

| CVODE run | its error | its members/s (loop) | (process) | twofold run | its error | its members/s (process) | twofold process / CVODE loop | / CVODE process | CVODE process time / twofold's, {PAIRS} alternated pairs: median [min, max] | the same in CPU time |
|---|---|---|---|---|---|---|---|---|---|---|
{matched}
""")

# Where the time goes at the smallest epsilon: a batch shares one step sequence, so it takes
# the steps of whichever member is hardest at each moment; one TS per member takes only its
# own, but pays PETSc's per-step cost alone.
eps = EPS[-1]
diag = []
for batch in (1, 16):
    say(f"eps {eps}: twofold rosw, batch {batch}, rtol 1e-6 (cost per member step)")
    _, wall, j, _ = twofold(eps, "1e-6", "rosw", (*TS, "--set", "integrator.ts.type=rosw",
                                                  "--set", f"integrator.ts.batch={batch}"))
    diag.append((f"twofold rosw, batches of {batch}", j["steps"] / M,
                 1e6 * j["wall_seconds"] / j["steps"]))
for lanes in ("auto", "1"):
    say(f"eps {eps}: twofold rosenbrock rodas4, lanes {lanes}, rtol 1e-6 (cost per member step)")
    _, wall, j, _ = twofold(eps, "1e-6", "rodas4", ("--set", "integrator.method=rosenbrock",
                                                    "--set", f"integrator.lanes={lanes}"))
    diag.append((f"twofold rosenbrock rodas4, lanes {lanes}", j["steps"] / M,
                 1e6 * j["wall_seconds"] / j["steps"]))
wall, j = cv(first, eps, "1e-6", "dq")
diag.append(("CVODE BDF (DQ Jacobian)", j["steps"] / M, 1e6 * j["seconds"] / j["steps"]))
res["cost_per_step"] = [dict(code=c, steps_per_member=n, us_per_member_step=u) for c, n, u in diag]
diag_table = "\n".join(f"| {c} | {n:.0f} | {u:.2f} |" for c, n, u in diag)

ratios = [m["ratio"] or 0.0 for m in res["matched"]]
res["ratio_process_min"] = min(m["ratio_process"] or 0.0 for m in res["matched"])
res["ratio_min"] = min(ratios)
res["ratio_median"] = float(np.median(ratios))
by_eps = {e: min(m["ratio"] or 0.0 for m in res["matched"] if m["epsilon"] == float(e))
          for e in EPS}
pairs_by_eps = {e: [m["pair_ratio"] for m in res["matched"]
                    if m["epsilon"] == float(e) and "pair_ratio" in m] for e in EPS}
res["pair_ratio_by_epsilon"] = {e: (min(v), max(v)) if v else None
                                for e, v in pairs_by_eps.items()}
pair_summary = "; ".join(f"ε = {e}: {v[0]:.2f} to {v[1]:.2f}" if v else f"ε = {e}: none"
                         for e, v in res["pair_ratio_by_epsilon"].items())
cpu_by_eps = {e: [m["pair_cpu_ratio"] for m in res["matched"]
                  if m["epsilon"] == float(e) and "pair_cpu_ratio" in m] for e in EPS}
res["pair_cpu_ratio_by_epsilon"] = {e: (min(v), max(v)) if v else None
                                    for e, v in cpu_by_eps.items()}
cpu_summary = "; ".join(f"ε = {e}: {v[0]:.2f} to {v[1]:.2f}" if v else f"ε = {e}: none"
                        for e, v in res["pair_cpu_ratio_by_epsilon"].items())
res["ratio_min_by_epsilon"] = {e: v for e, v in by_eps.items()}
res["title"] = "Smoothed stiff wheel"
summary = ", ".join(f"ε = {e}: {v:.2f}" for e, v in by_eps.items())
res["markdown"] = f"""## Smoothed stiff wheel: the Rosenbrock stepper (auto's choice), PETSc TS and CVODE BDF, work-precision and alternated pairs (bench/section_stiff.sh)

configs/wheel-smoothed.yaml (Fig. 5 parameters, Jeffrey's Λ_ε, convex field), {M} members
from the two-fold plus a 1e-5 perturbation, t = 0..{TE}, one core, atol = 1e-3 rtol.  Error:
max |x(t_end) − reference| over the members, the reference being CVODE BDF at rtol 1e-12.
Rates: members per second of **whole-process** wall time for both codes, fork to exit,
measured the same way for both (loading, MPI_Init, PETSc or SUNDIALS set-up, reading or
writing HDF5 included); next to it twofold's job clock (`wall_seconds`, after MPI_Init) and
CVODE's integration loop alone.  twofold's PETSc TS runs (`integrator.method: petsc-ts`) take
its TS defaults: ROSW ra34pw2 in batches of 16 with the analytic Jacobian (the chain rule
through the wheel's slip_jacobian) and point-block Jacobi, which is an exact solve of the
block-diagonal system.  The error is dominated by the
most sensitive member (members leave the two-fold's neighbourhood at different times, and
smaller ε makes that exit more sensitive), which is why it does not fall in step with rtol.

twofold's own Rosenbrock stepper (`integrator.method: rosenbrock`, RODAS4 or ROS3P, each
member with its own steps and Gustafsson's predictive step control, the same analytic
Jacobian, an LU unrolled for 3 components; `auto`'s choice for smoothed members of at most 16
components, RODAS4) runs members side by side in lanes (`integrator.lanes: auto`, 8 on this
CPU: src/engine/flow_lanes_rosenbrock.c, the smoothed field and its Jacobian through the
wheel's slip_sides_lanes), bit for bit the numbers of `integrator.lanes: 1` (member by member,
the rows "lanes 1" where measured).  Alternated pairs: each matched comparison timed again, twofold and CVODE in
turn, {PAIRS} runs of each, whole process both; the ratio is CVODE's time over twofold's (above
1: twofold faster), its median over the pairs with the smallest and largest.  Over the matched
comparisons the median pair ratios range over {pair_summary}; in CPU time (user + system of
each whole process, which other jobs on the machine disturb less) over {cpu_summary}.

Headline ratio: twofold's whole process against CVODE's integration loop alone (CVODE's
process also loads the HDF5 and PETSc libraries its driver links; that ratio is beside it).
Smallest twofold / CVODE-loop ratio at matched accuracy: {summary}; over all CVODE runs
{res["ratio_min"]:.2f} (median {res["ratio_median"]:.2f}); against CVODE's whole process the
smallest is {res["ratio_process_min"]:.2f}.

{chr(10).join(sections)}
### Cost per member step, and PETSc TS at small ε

At ε = {eps}, rtol 1e-6 (twofold's job clock, CVODE's loop; µs per member step = time /
(members × steps per member)):

| code | steps per member | µs per member step |
|---|---|---|
{diag_table}

One TS per member takes about as many steps as CVODE (the ROSW step control is not the
problem), but each costs PETSc's per-step machinery (four SNES/KSP solves with their
options-database checks, TSAdapt, vector objects) for a 3-component system.  Batches
share that cost among 16 members, but a batch takes one step sequence, the union of its
members' needs: as ε falls, members leave the two-fold's neighbourhood at different times and
each crossing of the layer needs short steps, so a batch of 16 takes several times the steps
of one member.  Closing the gap needs per-member step control at CVODE's per-step cost, which
one PETSc TS per batch cannot give.  Levers tried here and kept: the analytic Jacobian of the
convex field (steps and error down, the coloured differences gone), point-block Jacobi in
place of LU, ROSW in place of BDF, PETSc's per-solve viewer lookups switched off (a quarter of
a one-member solve's time).  Tried and not the default: keeping the Jacobian for several steps
(`integrator.ts.jacobian_lag 8`: about 10 % faster, error doubled), the order-4 veldd4
(fastest at ε ≥ 1e-5 in the tables, but no dense output for trajectory samples)."""
print(json.dumps(res))
PY

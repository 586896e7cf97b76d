"""smooth_batch.py — bench section "smooth": smoothed (stiff) Filippov members on PETSc TS.

Both sides of every comparison run in this one invocation on the smoothed wheel at the Fig. 5
parameters (configs/wheel-smoothed.yaml, Jeffrey's Lambda_eps, t = 0..100):
  A. explicit DOPRI5 against PETSc TS (bdf, rosw) as eps -> 0: where stiffness makes the
     implicit integrator pay off;
  B. one TS per member against one TS per batch of B members (one block-diagonal system, one
     step sequence, one block solve per stage), for nearly identical members (spread
     1e-5, the open-question setting) and for members that differ (spread 1e-2).
Wall times are the job's own clock (the minimum of `repeats` runs), one process.
  /usr/bin/python3 bench/smooth_batch.py BUILD_DIR [repeats]
Prints the section's markdown on stderr and its JSON record as the last stdout line.
"""
import json
import os
import subprocess
import sys
import tempfile

build = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 2
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
twofold = os.path.join(build, "twofold")
config = os.path.join(root, "configs", "wheel-smoothed.yaml")
work = tempfile.mkdtemp()


def run(*sets, extra=()):
    best = None
    for _ in range(repeats):
        cmd = [twofold, "run", config, "-o", os.path.join(work, "b.h5"), "--overwrite", "--quiet", "--json",
               *extra]
        for s in ("integrator.t_end=100",) + sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)}: {r.stderr}")
        j = json.loads(r.stdout.strip().splitlines()[-1])
        if best is None or j["wall_seconds"] < best["wall_seconds"]:
            best = j
    return best


rows_a = []
for eps in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6):
    for method, ts in (("dopri5", None), ("petsc-ts", "bdf"), ("petsc-ts", "rosw")):
        sets = [f"model.smoothing.epsilon={eps}", "ensemble.members=4", f"integrator.method={method}",
                "integrator.ts.batch=1"]
        if ts:
            sets.append(f"integrator.ts.type={ts}")
        j = run(*sets)
        rows_a.append(dict(eps=eps, integrator=j["integrator"], wall=j["wall_seconds"], failed=j["failed"],
                           steps=j.get("steps"), jacobians=j.get("jacobian_evals")))
        print(rows_a[-1], file=sys.stderr)

rows_b = []
for spread in (1e-5, 1e-2):
    for batch in (1, 4, 16, 64):
        j = run("model.smoothing.epsilon=1e-3", "ensemble.members=64", f"initial.spread={spread}",
                f"integrator.ts.batch={batch}")
        rows_b.append(dict(spread=spread, batch=batch, wall=j["wall_seconds"], failed=j["failed"],
                           member_steps=j["steps"], steps_per_solve=j["steps"] // 64,
                           jacobians=j["jacobian_evals"]))
        print(rows_b[-1], file=sys.stderr)

md = ["## Smoothed wheel on PETSc TS (bench/smooth_batch.py)", "",
      "configs/wheel-smoothed.yaml (Fig. 5 parameters, sign(h) -> Jeffrey's Lambda_eps, "
      "t = 0..100, rtol 1e-6, atol 1e-9, one process; wall = the job's clock, best of "
      f"{repeats}).", "",
      "**A. Explicit against implicit as eps -> 0** (4 members, one TS per member)", "",
      "| eps | integrator | wall s | failed | TS steps | Jacobians |", "|---|---|---|---|---|---|"]
for r in rows_a:
    md.append(f"| {r['eps']:g} | {r['integrator']} | {r['wall']:.3f} | {r['failed']} | "
              f"{r['steps'] if r['steps'] is not None else 'n/a'} | "
              f"{r['jacobians'] if r['jacobians'] is not None else 'n/a'} |")
md += ["", "**B. One TS per member against one TS per batch** (64 members, eps = 1e-3, the "
       "defaults: rosw ra34pw2, analytic Jacobian, point-block Jacobi)", "",
       "| initial spread | batch | wall s | speed-up | failed | steps per solve | Jacobians (sum over members) |",
       "|---|---|---|---|---|---|---|"]
for r in rows_b:
    base = [q for q in rows_b if q["spread"] == r["spread"] and q["batch"] == 1][0]["wall"]
    solves = 64 // r["batch"]
    md.append(f"| {r['spread']:g} | {r['batch']} | {r['wall']:.3f} | {base / r['wall']:.2f} | "
              f"{r['failed']} | {r['member_steps'] // 64 if r['batch'] == 1 else r['member_steps'] // 64} | "
              f"{r['jacobians']} |")
best = {}
for spread in (1e-5, 1e-2):
    rs = [r for r in rows_b if r["spread"] == spread]
    best[spread] = min(rs, key=lambda r: r["wall"])
md += ["", "Steps per solve: a batch takes one step sequence for all its members, so it is the "
       "step count of its most demanding member (per-member rows record their batch's counts).  "
       f"Fastest batch: {best[1e-5]['batch']} for nearly identical members, "
       f"{best[1e-2]['batch']} for differing ones."]
record = dict(title="smooth", markdown="\n".join(md), explicit_vs_implicit=rows_a, batches=rows_b,
              fastest_batch={str(k): v["batch"] for k, v in best.items()})
print("\n".join(md), file=sys.stderr)
print(json.dumps(record))

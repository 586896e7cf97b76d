#!/usr/bin/env bash
# section_goals.sh — bench section "goals": the workloads whose goals are stated against
# "today", the engine as the lanes work found it (commit bc0946f, the parent of the first lanes
# commit), timed against this build as alternated pairs in one run.
#
#   bench/section_goals.sh BUILD_DIR
#   env: GOALS_TODAY  the build directory of that revision (default: built once, cached by
#                     tests/scripts/bit_identity.py's builder under ~/.cache/twofold-bit-identity)
#        GOALS_PAIRS  alternated pairs per workload (default 5)
#        GOALS_ONLY   time only the workloads whose name contains this text (e.g. Jeffrey)
#
# Workloads (1 rank, whole process, CPU seconds = user + system of the finished process, so
# loading, MPI_Init, reading the config and writing HDF5 are included on both sides):
#   Lorenz, 4000 members, DOPRI5 to t = 10 at 1e-9 (bench/lanes_bench.py's config);
#   the smoothed Jeffrey oscillator, 1000 members, DOPRI5 to t = 20 (the same script's);
#   the wheel's Fig. 5 ensemble (configs/wheel-fig5.yaml: 500 members, t = 0..300, events);
#   the smoke SDE ensemble (configs/smoke.yaml).
# The wheel also with `model.params.continuation: 1` (its slip fields continued smoothly past
# Sigma) at rtol 4e-11, atol 4e-13, and under DOP853 at rtol 7e-10, atol 7e-12: each as
# accurate as the config's DOPRI5 at 1e-10 without it (bench/wheel_methods.py).
# Each as this build runs it by default (integrator.lanes auto; results byte-compared with
# today's) and with its opt-in fast math where it has one, `model.field_math: fast` (vector
# sin, cos and atan2) or `integrator.normals: fast`: not today's bits (the Jeffrey final
# states' largest relative difference is reported).
# Ratio of a pair: today's CPU seconds over this build's (above 1: this build is faster); the
# median over the pairs with the smallest and largest.
# Last stdout line: the JSON record that bench/report.py files under bench/results/goals.json.
set -euo pipefail
BUILD=$(cd "${1:?usage: section_goals.sh BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/goals.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
/usr/bin/python3 - "$BUILD" "$ROOT" "$WORK" "${GOALS_TODAY:-}" "${GOALS_PAIRS:-5}" "${GOALS_ONLY:-}" <<'PY'
import json, os, statistics, subprocess, sys
import h5py, numpy as np

build, root, work, today_dir, pairs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
only = sys.argv[6]
sys.path[:0] = [os.path.join(root, "bench"), os.path.join(root, "tests", "scripts")]
import lanes_bench  # one copy of the Lorenz and Jeffrey ensembles and of cpu_of

TODAY = "bc0946f"  # the parent of de8d4bd, the first lanes commit
if today_dir:
    today_exe = os.path.join(today_dir, "twofold")
else:
    import bit_identity
    today_exe = bit_identity.binary_of(TODAY, os.path.expanduser("~/.cache/twofold-bit-identity")).exe
today_label = subprocess.run([today_exe, "--version"], capture_output=True, text=True,
                             check=True).stdout.strip()  # names the commit it was built from
now_exe = os.path.join(build, "twofold")

def config(name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path

lorenz = config("lorenz.yaml", lanes_bench.LORENZ.format(members=4000))
jeffrey = config("jeffrey.yaml", lanes_bench.JEFFREY.format(members=1000))
# ten times the members: start-up (about 0.03 s of a 0.15-0.25 s run at 1000) no longer blurs it
jeffrey_10k = config("jeffrey10k.yaml", lanes_bench.JEFFREY.format(members=10000))
wheel = os.path.join(root, "configs", "wheel-fig5.yaml")
smoke = os.path.join(root, "configs", "smoke.yaml")
FAST = ["--set", "model.field_math=fast"]
# (name, config, this build's extra arguments, goal as a speed-up over today)
CONTROL = ["--set", "integrator.controller_math=fast"]
# the wheel's smooth continuation past Sigma, at the rtol where bench/wheel_methods.py finds its
# event times at least as accurate as the config's rtol 1e-10 without it (docs/WHEEL.md)
CONTINUED = ["--set", "model.params.continuation=1", "--set", "integrator.rtol=4e-11",
             "--set", "integrator.atol=4e-13"]
# and under DOP853, at the loosest rtol of bench/wheel_methods.py's grid that is as accurate
CONTINUED853 = ["--set", "model.params.continuation=1", "--set", "integrator.method=dop853",
                "--set", "integrator.rtol=7e-10", "--set", "integrator.atol=7e-12"]
WORKLOADS = [("Lorenz, 4000 members", lorenz, [], 4.0),
             ("Lorenz, 4000 members, controller_math fast", lorenz, CONTROL, 4.0),
             ("smoothed Jeffrey, 1000 members", jeffrey, [], 4.0),
             ("smoothed Jeffrey, 1000 members, field_math fast", jeffrey, FAST, 4.0),
             ("smoothed Jeffrey, 1000 members, field_math and controller_math fast", jeffrey,
              FAST + CONTROL, 4.0),
             ("smoothed Jeffrey, 10000 members, field_math fast", jeffrey_10k, FAST, 4.0),
             ("smoothed Jeffrey, 10000 members, field_math and controller_math fast", jeffrey_10k,
              FAST + CONTROL, 4.0),
             ("wheel Fig. 5, 500 members", wheel, [], 2.5),
             ("wheel Fig. 5, 500 members, field_math fast", wheel, FAST, 2.5),
             ("wheel Fig. 5, 500 members, continuation 1 at rtol 4e-11", wheel, CONTINUED, 2.5),
             ("wheel Fig. 5, 500 members, continuation 1 at rtol 4e-11, field_math fast", wheel,
              CONTINUED + FAST, 2.5),
             ("wheel Fig. 5, 500 members, continuation 1, DOP853 at rtol 7e-10", wheel,
              CONTINUED853, 2.5),
             ("wheel Fig. 5, 500 members, continuation 1, DOP853 at rtol 7e-10, field_math fast",
              wheel, CONTINUED853 + FAST, 2.5),
             ("smoke SDE ensemble", smoke, [], 2.0),
             ("smoke SDE ensemble, normals fast", smoke, ["--set", "integrator.normals=fast"], 2.0)]
WORKLOADS = [w for w in WORKLOADS if only in w[0]]

def run(exe, cfg, out, extra):
    return lanes_bench.cpu_of([exe, "run", cfg, "-o", out, "--overwrite", "--quiet", "--json",
                               *extra])[1]

def same_files(a, b):
    r = subprocess.run(["/usr/bin/python3", os.path.join(root, "tests", "scripts", "h5compare.py"), a, b],
                       capture_output=True, text=True)
    return r.returncode == 0

def largest_relative_difference(a, b):
    with h5py.File(a) as fa, h5py.File(b) as fb:
        x, y = fa["members/final_state"][()], fb["members/final_state"][()]
    return float(np.max(np.abs(x - y) / np.maximum(np.abs(y), 1e-300)))

results, rows = [], []
for name, cfg, extra, goal in WORKLOADS:
    t_out, n_out = os.path.join(work, "today.h5"), os.path.join(work, "now.h5")
    ratios, t_cpu, n_cpu = [], [], []
    for i in range(pairs):
        first_now = i % 2 == 0  # alternate which side starts the pair
        for side in ((0, 1) if first_now else (1, 0)):
            if side == 0:
                n_cpu.append(run(now_exe, cfg, n_out, extra))
            else:
                t_cpu.append(run(today_exe, cfg, t_out, []))
        ratios.append(t_cpu[-1] / n_cpu[-1])
    if extra:
        same = None
        diff = largest_relative_difference(n_out, t_out) if "Jeffrey" in name or "Lorenz" in name else None
    else:
        same, diff = same_files(n_out, t_out), None
    r = {"workload": name, "config": os.path.relpath(cfg, root) if cfg.startswith(root) else cfg,
         "args": extra, "goal": goal, "today_cpu_s": statistics.median(t_cpu),
         "now_cpu_s": statistics.median(n_cpu), "speedup": statistics.median(ratios),
         "speedup_min": min(ratios), "speedup_max": max(ratios), "identical": same,
         "max_rel_diff": diff}
    results.append(r)
    bits = ("byte-identical" if same else "DIFFERENT") if same is not None else (
        f"not today's bits (final states within {diff:.1e} relative)" if diff is not None else
        "not today's bits (rounding differences, which chaotic members grow)")
    met = "met" if r["speedup"] >= goal else "not met"
    rows.append(f"| {name} | {r['today_cpu_s']:.3f} | {r['now_cpu_s']:.3f} | **{r['speedup']:.2f}×** "
                f"({r['speedup_min']:.2f}–{r['speedup_max']:.2f}) | ≥ {goal:g}×: {met} | {bits} |")
    print(f"goals: {name}: {r['speedup']:.2f}x today", file=sys.stderr, flush=True)

md = f"""## Goals against the engine before the lanes (bench/section_goals.sh)

"Today" in the goals of the lanes work is the engine as that work found it: {today_label},
the parent of the first lanes commit, built from that revision.  Each workload ran {pairs}
alternated pairs (this build, today, today, this build, …) in one invocation, 1 rank, whole
process: CPU seconds (user + system) of each finished process, loading, MPI_Init, the config,
and writing HDF5 included on both sides.  Speed-up: today's CPU seconds over this build's,
the median of the pairs' own ratios (smallest–largest).  Lorenz and the Jeffrey oscillator are
bench/lanes_bench.py's configs (DOPRI5; Lorenz 4000 members t = 0..10 at 1e-9, Jeffrey 1000
members, and 10,000 in two rows, eps = 0.05 t = 0..20); the wheel is configs/wheel-fig5.yaml, smoke configs/smoke.yaml.
Rows without opt-in keys run as this build runs the config by default (lanes auto) and their
results files are compared byte for byte with today's.  The opt-in keys change the last bits:
`model.field_math: fast` replaces libm's sin, cos and atan2 in the model's field with
twofold/fast_math.h's vector functions (at most 1.25 ulp from the true values; Jeffrey's
smoothed field also multiplies by 1/eps and 1/beta where it divided), `integrator.controller_math:
fast` the step-size controller's exp and log with twofold's own (src/base/vmath.h), and
`integrator.normals: fast` draws the SDE's normals by the same Box–Muller formula on the same
Philox words with twofold's own vectorised log, sin and cos (each increment within 1e-14 of
the exact one).  The wheel's `model.params.continuation: 1` continues its slip fields past the
switching surface smoothly (docs/WHEEL.md, "Slip fields past Σ"), which changes its steps; it
runs at rtol 4e-11 (atol 4e-13), where `bench/wheel_methods.py build --methods dopri5 --rtols
4e-11 --set model.params.continuation=1` finds its event times at least as accurate as today's
at the config's 1e-10 ("the same accuracy" of the goal), and under DOP853 at rtol 7e-10 (atol
7e-12; `--methods dop853 --rtols 7e-10`).

| workload | today CPU s | this build CPU s | speed-up (median, spread) | goal | results |
|---|---|---|---|---|---|
""" + "\n".join(rows) + """

The lanes work's other goals are stated against peers, not today, and are measured in their
own sections: the valve against boost::odeint ("Pressure-relief valve"), the stiff smoothed
wheel against CVODE BDF ("Smoothed stiff wheel at 128 members", and the work-precision sections before it), the event
machinery against a bare integrator ("Wheel Fig. 5 ensemble"), start-up ("Start-up of a
trivial run").
"""
print(json.dumps({"section": "goals", "markdown": md, "today": today_label, "pairs": pairs,
                  "results": results}))
PY

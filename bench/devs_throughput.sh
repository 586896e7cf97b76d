#!/usr/bin/env bash
# devs_throughput.sh — DEVS element-updates per second: twofold against a competent C loop,
# a straightforward one and numpy, side by side in one run, on the throughput config
# (configs/devs-throughput.yaml: N = 1e6 logistic elements, 200 steps, q = 0.5, mu = 3.9,
# lambda_1 of the full state and X_i tracked).
#   bench/devs_throughput.sh BUILD_DIR [N] [STEPS]     (env: DEVS_ROUNDS 5)
# Sides, run in DEVS_ROUNDS alternated rounds (one run of each side per round, in the order
# below); a side's rates are the medians over the rounds, and twofold's ratio to a side the
# median of the rounds' own ratios, with their spread:
#   twofold        the engine, 1 rank (AVX-512 tile where the CPU has it, else AVX2), 2 ranks
#   twofold-avx2   the engine's AVX2 tile (TWOFOLD_DEVS_ISA=avx2: processors without AVX-512)
#   twofold-c      the engine's portable C tile (TWOFOLD_DEVS_ISA=portable)
#   twofold-generic the engine's element map through function pointers (devs.path=generic)
#   competent      bench/devs_competent.c: counter-based hash, branchless vectorised update,
#                  frexp every 16 steps (flat sweeps, and the engine's cache blocking)
#   naive-xoshiro  bench/devs_naive.c: one xoshiro256** draw, a branch and one log() per update
#   naive-philox   the same with one Philox4x64-10 call per update (counter-based like twofold)
#   numpy          bench/devs_numpy.py, vectorised over elements, one step at a time
# Then how close the engine is to this core's limit: bench/machine_limits.c measures the
# clock, the issue rate of 512-bit operations and the memory bandwidth, and bench/gdb_count.py
# counts the instructions of one tile (N = 1024, 16 steps) and of the competent loop's
# (skipped without gdb).
# Rates are reported per wall second and per CPU second of the process (on a shared machine
# the latter is the rate of the core actually used); ratios are twofold (1 rank) over each
# baseline, per CPU second.  The last stdout line is one JSON object.
set -euo pipefail
BUILD=$(cd "${1:?usage: devs_throughput.sh BUILD_DIR [N] [STEPS]}" && pwd)
N=${2:-1000000}
STEPS=${3:-200}
ROUNDS=${DEVS_ROUNDS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/devs_throughput.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
say() { printf 'devs_throughput: %s\n' "$*" >&2; }
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

NAIVE="$BUILD/bench_devs_naive"
if [ ! -x "$NAIVE" ]; then
  NAIVE="$WORK/devs_naive"
  say "compiling bench/devs_naive.c with cc -O3 -march=native"
  cc -O3 -march=native -DNDEBUG -std=c17 -o "$NAIVE" "$ROOT/bench/devs_naive.c" -lm
fi
COMPETENT="$WORK/devs_competent" LIMITS="$WORK/machine_limits"
cc -O3 -march=native -fopenmp-simd -DNDEBUG -std=c17 -o "$COMPETENT" "$ROOT/bench/devs_competent.c" -lm
cc -O2 -std=c17 -o "$LIMITS" "$ROOT/bench/machine_limits.c" 2>/dev/null || LIMITS="" # x86-64 only
T="$BUILD/twofold"
say "$ROUNDS alternated rounds: twofold (1 rank; AVX2, portable C and generic tiles; 2 ranks), the C loops, numpy"
"$PY" - "$T" "$ROOT" "$WORK" "$N" "$STEPS" "$ROUNDS" "$NAIVE" "$COMPETENT" >"$WORK/rounds.json" <<'PY'
import json, os, subprocess, sys
T, root, work, n, steps, rounds, naive, competent = sys.argv[1:9]
n, steps, rounds = int(n), int(steps), int(rounds)
def tw(*extra, ranks=0, isa=None):
    cmd = [T, "run", f"{root}/configs/devs-throughput.yaml", "-o", f"{work}/t.h5", "--overwrite",
           "--quiet", "--json", "--set", f"model.params.N={n}", "--set", f"model.params.steps={steps}",
           *extra]
    env = dict(os.environ, TWOFOLD_DEVS_ISA=isa) if isa else None
    return (["mpiexec", "-n", str(ranks)] + cmd if ranks else cmd), env
q = ["0.5", "3.9"]
sides = {
    "t1": tw(), "ta": tw(isa="avx2"), "tc": tw(isa="portable"),
    "tg": tw("--set", "devs.path=generic"), "t2": tw(ranks=2),
    "nx": ([naive, "xoshiro", str(n), str(steps), *q], None),
    "np_": ([naive, "philox", str(n), str(steps), *q], None),
    "cf": ([competent, "flat", str(n), str(steps), *q], None),
    "cb": ([competent, "blocked", str(n), str(steps), *q], None),
    "cf10": ([competent, "flat", str(10 * n), str((steps + 4) // 5), *q], None),
    "nu": (["/usr/bin/python3", f"{root}/bench/devs_numpy.py", str(n), str(steps), *q], None)}
runs = {k: [] for k in sides}
for r in range(rounds):
    for k, (cmd, env) in sides.items():
        out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
        runs[k].append(json.loads(out.strip().splitlines()[-1]))
    print(f"devs_throughput: round {r + 1} of {rounds} done", file=sys.stderr)
print(json.dumps(runs))
PY
say "machine limits (clock, 512-bit issue rate, memory bandwidth)"
ml=null
[ -z "$LIMITS" ] || ml=$("$LIMITS")
count() { # COUNT_FUNC=f count PROGRAM ARGS: instructions of one call, or null
  if ! command -v gdb >/dev/null; then echo null; return; fi
  local line
  line=$(timeout 600 gdb -batch -x "$ROOT/bench/gdb_count.py" --args "$@" 2>/dev/null | grep '^GDB_COUNT ' || true)
  if [ -n "$line" ]; then echo "${line#GDB_COUNT }"; else echo null; fi
}
tile=tile_logistic_avx2
grep -qw avx512bw /proc/cpuinfo && tile=tile_logistic_avx512
say "instructions of one tile ($tile, N = 1024, 16 steps) and of the competent loop (gdb stepi)"
it=$(COUNT_FUNC=$tile count "$T" run "$ROOT/configs/devs-throughput.yaml" -o "$WORK/c.h5" --overwrite \
  --quiet --set model.params.N=1024 --set model.params.steps=16)
ic=$(COUNT_FUNC=advance count "$COMPETENT" blocked 1024 16 0.5 3.9)
export ml it ic N STEPS
"$PY" - "$WORK/rounds.json" <<'PY'
import json, os, platform, statistics, subprocess, sys
g = lambda k: json.loads(os.environ[k])
runs = json.load(open(sys.argv[1]))
ml, it, ic = g("ml"), g("it"), g("ic")
r6 = lambda v: float(f"{v:.6g}")
RATE_KEYS = ("element_updates_per_second", "element_updates_per_cpu_second",
             "element_updates_per_second_per_rank")
def median_run(k):
    """the side's record with each rate the median over the rounds"""
    rec = dict(runs[k][0])
    for key in RATE_KEYS:
        if key in rec:
            rec[key] = statistics.median(r[key] for r in runs[k])
    return rec
t1, ta, tc, tg, t2, nx, nph, cf, cb, cf10, nu = (median_run(k) for k in (
    "t1", "ta", "tc", "tg", "t2", "nx", "np_", "cf", "cb", "cf10", "nu"))
CPU = "element_updates_per_cpu_second"
def per_round(num, den):
    """median (min, max) over the rounds of num's CPU rate over den's; den may be a list of
    sides, the fastest of them in each round"""
    dens = den if isinstance(den, list) else [den]
    r = sorted(runs[num][i][CPU] / max(runs[d][i][CPU] for d in dens) for i in range(len(runs[num])))
    return [r6(statistics.median(r)), r6(r[0]), r6(r[-1])]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
def side(r, **kw):
    return dict(kw, wall_rate=r6(r["element_updates_per_second"]),
                cpu_rate=r6(r["element_updates_per_cpu_second"]), lambda1=r6(r["lambda1"]))
base = t1["element_updates_per_cpu_second"]
res = {
    "benchmark": "devs_throughput", "machine": f"{cpu}, {os.cpu_count()} cores",
    "load_average": os.getloadavg()[0], "N": int(os.environ["N"]), "steps": int(os.environ["STEPS"]),
    "twofold": side(t1, vectorised=t1["vectorised"], bytes_per_element=t1["bytes_per_element"]),
    "twofold_avx2": side(ta), "twofold_portable_c": side(tc), "twofold_generic": side(tg),
    "twofold_2_ranks": side(t2, wall_rate_per_rank=r6(t2["element_updates_per_second_per_rank"])),
    "naive_c_xoshiro": side(nx), "naive_c_philox": side(nph), "numpy": side(nu),
    "competent_c_flat": side(cf), "competent_c_blocked": side(cb),
    "competent_c_flat_10n": side(cf10, N=cf10["N"], steps=cf10["steps"]),
    "machine": ml, "instructions": {"twofold_tile": it, "competent_c": ic, "updates_counted": 1024 * 16},
    "ratio_cpu": {
        "twofold_over_competent_c": r6(base / max(cf["element_updates_per_cpu_second"],
                                                  cb["element_updates_per_cpu_second"])),
        "twofold_over_naive_c_xoshiro": r6(base / nx["element_updates_per_cpu_second"]),
        "twofold_over_naive_c_philox": r6(base / nph["element_updates_per_cpu_second"]),
        "twofold_over_numpy": r6(base / nu["element_updates_per_cpu_second"]),
        "twofold_over_portable_c": r6(base / tc["element_updates_per_cpu_second"]),
        "twofold_avx2_over_naive_c_xoshiro": r6(ta["element_updates_per_cpu_second"] / nx["element_updates_per_cpu_second"]),
        "twofold_over_generic": r6(base / tg["element_updates_per_cpu_second"]),
    },
    "ratio_wall": {
        "twofold_over_naive_c_xoshiro": r6(t1["element_updates_per_second"] / nx["element_updates_per_second"]),
        "twofold_over_numpy": r6(t1["element_updates_per_second"] / nu["element_updates_per_second"]),
    },
    "target_1e9_per_core_met": base >= 1e9,
    "rounds": len(runs["t1"]),
    "ratio_cpu_rounds": {  # median, smallest, largest of the rounds' own ratios
        "twofold_over_competent_c": per_round("t1", ["cf", "cb"]),
        "twofold_over_naive_c_xoshiro": per_round("t1", "nx"),
        "twofold_over_naive_c_philox": per_round("t1", "np_"),
        "twofold_over_numpy": per_round("t1", "nu"),
        "twofold_over_portable_c": per_round("t1", "tc"),
        "twofold_avx2_over_naive_c_xoshiro": per_round("ta", "nx"),
        "twofold_over_generic": per_round("t1", "tg"),
    },
}
for key, (med, _, _) in res["ratio_cpu_rounds"].items():
    res["ratio_cpu"][key] = med  # the rounds' median is the headline
print(json.dumps(res))
PY

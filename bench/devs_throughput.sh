#!/usr/bin/env bash
# devs_throughput.sh — DEVS element-updates per second: twofold against a competent C loop,
# a straightforward one and numpy, side by side in one run, on the throughput config
# (configs/devs-throughput.yaml: N = 1e6 logistic elements, 200 steps, q = 0.5, mu = 3.9,
# lambda_1 of the full state and X_i tracked).
#   bench/devs_throughput.sh BUILD_DIR [N] [STEPS]
# Sides (each best of 3 except numpy):
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
SETS=(--set model.params.N=$N --set model.params.steps=$STEPS)
tw() { "$@" run "$ROOT/configs/devs-throughput.yaml" -o "$WORK/t.h5" --overwrite --quiet --json "${SETS[@]}" | tail -n 1; }
best3() { # best (highest CPU-second rate) of three JSON lines from the command
  local out=""
  for _ in 1 2 3; do out+=$("$@")$'\n'; done
  printf '%s' "$out" | "$PY" -c "
import json, sys
rs = [json.loads(l) for l in sys.stdin if l.strip()]
print(json.dumps(max(rs, key=lambda r: r['element_updates_per_cpu_second'])))"
}
say "twofold, 1 rank, N = $N, $STEPS steps"
t1=$(best3 tw "$T")
say "twofold, AVX2 tile"
ta=$(TWOFOLD_DEVS_ISA=avx2 best3 tw "$T")
say "twofold, portable C tile"
tc=$(TWOFOLD_DEVS_ISA=portable best3 tw "$T")
say "twofold, generic element path"
tg=$(SETS+=(--set devs.path=generic); best3 tw "$T")
say "twofold, 2 ranks"
t2=$(best3 tw mpiexec -n 2 "$T")
say "naive C loop, xoshiro256**"
nx=$(best3 "$NAIVE" xoshiro "$N" "$STEPS" 0.5 3.9)
say "naive C loop, Philox per update"
np_=$(best3 "$NAIVE" philox "$N" "$STEPS" 0.5 3.9)
say "competent C loop, flat and cache-blocked"
cf=$(best3 "$COMPETENT" flat "$N" "$STEPS" 0.5 3.9)
cb=$(best3 "$COMPETENT" blocked "$N" "$STEPS" 0.5 3.9)
say "competent C loop, flat, 10 N (x and m no longer fit in the last-level cache)"
cf10=$(best3 "$COMPETENT" flat $((10 * N)) $(((STEPS + 4) / 5)) 0.5 3.9)
say "numpy"
nu=$("$PY" "$ROOT/bench/devs_numpy.py" "$N" "$STEPS" 0.5 3.9)
say "machine limits (clock, 512-bit issue rate, memory bandwidth)"
ml=null
[ -z "$LIMITS" ] || ml=$("$LIMITS")
count() { # COUNT_FUNC=f count PROGRAM ARGS: instructions of one call, or null
  if ! command -v gdb >/dev/null; then echo null; return; fi
  local line
  line=$(gdb -batch -x "$ROOT/bench/gdb_count.py" --args "$@" 2>/dev/null | grep '^GDB_COUNT ' || true)
  if [ -n "$line" ]; then echo "${line#GDB_COUNT }"; else echo null; fi
}
tile=tile_logistic_avx2
grep -qw avx512bw /proc/cpuinfo && tile=tile_logistic_avx512
say "instructions of one tile ($tile, N = 1024, 16 steps) and of the competent loop (gdb stepi)"
it=$(COUNT_FUNC=$tile count "$T" run "$ROOT/configs/devs-throughput.yaml" -o "$WORK/c.h5" --overwrite \
  --quiet --set model.params.N=1024 --set model.params.steps=16)
ic=$(COUNT_FUNC=advance count "$COMPETENT" blocked 1024 16 0.5 3.9)
export t1 ta tc tg t2 nx np_ cf cb cf10 nu ml it ic N STEPS
"$PY" - <<'PY'
import json, os, platform, subprocess
g = lambda k: json.loads(os.environ[k])
t1, ta, tc, tg, t2, nx, nph, cf, cb, cf10, nu, ml, it, ic = (g(k) for k in (
    "t1", "ta", "tc", "tg", "t2", "nx", "np_", "cf", "cb", "cf10", "nu", "ml", "it", "ic"))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
r6 = lambda v: float(f"{v:.6g}")
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
}
print(json.dumps(res))
PY

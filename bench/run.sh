#!/usr/bin/env bash
# run.sh — the benchmark suite (./twofold.sh bench [--json]).  Every comparison runs both
# sides in this one invocation; docs/BENCHMARKS.md is regenerated from the results.
#   1. smoke ensemble members/s on 1 and 2 ranks -> parallel efficiency
#   2. HDF5 write bandwidth of 1e6 member records (engine path, 1 and 2 ranks, with and
#      without compression) against dd writing the same number of bytes to the same disk
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD_DIR [--json]}
shift || true
JSON_OUT=""
[ "${1:-}" = "--json" ] && JSON_OUT=1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "$ROOT/bench/work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
T="$BUILD/twofold"
PY=/usr/bin/python3
MEMBERS=${BENCH_MEMBERS:-8000}

say() { printf 'bench: %s\n' "$*" >&2; }
field() { "$PY" -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }

say "smoke ensemble, $MEMBERS members, 1 rank"
r1=$("$T" run "$ROOT/configs/smoke.yaml" -o "$WORK/s1.h5" --set ensemble.members=$MEMBERS --quiet --json)
say "smoke ensemble, $MEMBERS members, 2 ranks"
r2=$(mpiexec -n 2 "$T" run "$ROOT/configs/smoke.yaml" -o "$WORK/s2.h5" --set ensemble.members=$MEMBERS --quiet --json)
w1=$(echo "$r1" | field wall_seconds); w2=$(echo "$r2" | field wall_seconds)
m1=$(echo "$r1" | field members_per_second); m2=$(echo "$r2" | field members_per_second)

F5_MEMBERS=${BENCH_F5_MEMBERS:-400}
say "wheel Fig. 5 ensemble, $F5_MEMBERS members, 1 rank"
f1=$("$T" run "$ROOT/configs/wheel-fig5.yaml" -o "$WORK/f1.h5" --set ensemble.members=$F5_MEMBERS --quiet --json)
say "wheel Fig. 5 ensemble, $F5_MEMBERS members, 2 ranks"
f2=$(mpiexec -n 2 "$T" run "$ROOT/configs/wheel-fig5.yaml" -o "$WORK/f2.h5" --set ensemble.members=$F5_MEMBERS --quiet --json)
say "event machinery overhead on the slip phases of a Fig. 5 trajectory"
ev=$("$BUILD/bench_events_overhead" 200)
say "wheel Fig. 5 versus scipy solve_ivp and CVODE (same members, replayed exits, rtol 1e-10)"
wc=$("$ROOT/bench/wheel_compare.sh" "$BUILD" --members ${BENCH_WHEEL_MEMBERS:-10} --t-end ${BENCH_WHEEL_T_END:-100} | tail -n 1)
say "work-precision diagram of the Filippov integrator -> docs/wheel-work-precision.png"
wp=$("$PY" "$ROOT/bench/work_precision.py" "$BUILD" "$ROOT/docs/wheel-work-precision.png" --json "$WORK/wp.json" | tail -n 1)

RECORDS=1000000 WIDTH=8
bytes=$((RECORDS * WIDTH * 8))
# best of 3 for every write measurement (first writes pay for page-cache warm-up)
best_of_3() {
  local best="" r
  for _ in 1 2 3; do
    r=$("$@")
    best=$(printf '%s\n%s\n' "$best" "$r" | "$PY" -c "
import json, sys
rs = [json.loads(l) for l in sys.stdin if l.strip()]
print(json.dumps(min(rs, key=lambda r: r['seconds'])))")
  done
  echo "$best"
}
dd_run() {
  local t
  t=$(dd if=/dev/zero of="$WORK/dd.bin" bs=1M count=$((bytes / 1048576)) "$@" 2>&1 | tail -1 \
      | sed -E 's/.* copied, ([0-9.]+) s.*/\1/')
  echo "{\"seconds\": $t}"
}
h5=()
for spec in "1 0" "2 0" "1 4" "2 4"; do
  set -- $spec
  say "HDF5 write: $RECORDS records x $WIDTH doubles, $1 rank(s), deflate $2"
  h5+=("$(best_of_3 mpiexec -n "$1" "$BUILD/bench_h5write" "$WORK/w.h5" $RECORDS $WIDTH "$2")")
done
say "dd: $bytes bytes, page cache and fdatasync"
dd_secs=$(best_of_3 dd_run | "$PY" -c "import json,sys; print(json.load(sys.stdin)['seconds'])")
dd_sync_secs=$(best_of_3 dd_run conv=fdatasync | "$PY" -c "import json,sys; print(json.load(sys.stdin)['seconds'])")

export F1="$f1" F2="$f2" EV="$ev" WC="$wc" WP="$wp"
"$PY" - "$ROOT" "$w1" "$w2" "$m1" "$m2" "$MEMBERS" "$bytes" "$dd_secs" "$dd_sync_secs" "${h5[@]}" "$JSON_OUT" <<'PY'
import json, os, platform, subprocess, sys, datetime
f1 = json.loads(os.environ["F1"].strip().splitlines()[-1])
f2 = json.loads(os.environ["F2"].strip().splitlines()[-1])
ev = json.loads(os.environ["EV"].strip().splitlines()[-1])
wc = json.loads(os.environ["WC"])
wp = json.loads(os.environ["WP"])
def events_total(f): return sum(f["events"].values())
root, w1, w2, m1, m2, members, nbytes, dd_secs, dd_sync_secs = sys.argv[1:10]
h5 = [json.loads(x) for x in sys.argv[10:14]]
want_json = sys.argv[14] == "1"
w1, w2, m1, m2, dd_secs, dd_sync_secs, nbytes = map(float, (w1, w2, m1, m2, dd_secs, dd_sync_secs, nbytes))
dd_mbs = nbytes / dd_secs / 1e6
dd_sync_mbs = nbytes / dd_sync_secs / 1e6
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem = int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal"))) / 2**20
machine = f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB, {platform.system()} {platform.release()}"
date = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")
eff = (w1 / w2) / 2
res = {"date": date, "machine": machine,
       "smoke": {"members": int(members), "wall_1": w1, "wall_2": w2,
                 "members_per_s_1": m1, "members_per_s_2": m2, "parallel_efficiency": eff},
       "hdf5": h5, "dd_MB_per_s": dd_mbs, "dd_fdatasync_MB_per_s": dd_sync_mbs,
       "wheel_fig5": {"members": f1["members"], "wall_1": f1["wall_seconds"], "wall_2": f2["wall_seconds"],
                      "members_per_s_1": f1["members_per_second"], "members_per_s_2": f2["members_per_second"],
                      "events": events_total(f1), "twofold_visits": f1["twofold_visits"],
                      "rhs_per_event": f1["rhs_per_event"]},
       "event_overhead": ev, "wheel_compare": wc, "work_precision": wp}
def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)
cv = wc.get("cvode", {})
f5eff = (f1["wall_seconds"] / f2["wall_seconds"]) / 2
rows = "\n".join(
    f"| {r['ranks']} | {r['compression']} | {r['seconds']:.3f} | {r['MB_per_s']:.0f} | "
    f"{r['MB_per_s'] / dd_mbs:.2f} |" for r in h5)
md = f"""# Benchmarks

Regenerated by `./twofold.sh bench` (bench/run.sh); every comparison below ran in one
invocation on the same machine.  The machine is shared and noisy: read the ratios, not the
absolute times.

- Date: {date}
- Machine: {machine}
- Command: `./twofold.sh bench`

## Smoke ensemble (configs/smoke.yaml: Lorenz + noise, Euler–Maruyama, 4000 steps per member)

| ranks | members | wall s | members/s |
|---|---|---|---|
| 1 | {int(members)} | {w1:.2f} | {m1:.0f} |
| 2 | {int(members)} | {w2:.2f} | {m2:.0f} |

Parallel efficiency 1 → 2 ranks (wall-time speed-up / 2): **{eff:.2f}**.
The wall time includes start-up, the collective flushes and the summary pass.

## Wheel Fig. 5 ensemble (configs/wheel-fig5.yaml: event-driven Filippov, t = 0..300)

| ranks | members | wall s | members/s | events/s |
|---|---|---|---|---|
| 1 | {f1["members"]} | {f1["wall_seconds"]:.2f} | {f1["members_per_second"]:.1f} | {events_total(f1) / f1["wall_seconds"]:.0f} |
| 2 | {f2["members"]} | {f2["wall_seconds"]:.2f} | {f2["members_per_second"]:.1f} | {events_total(f2) / f2["wall_seconds"]:.0f} |

Parallel efficiency 1 → 2 ranks: **{f5eff:.2f}**.  Events in the run: {events_total(f1)}
({f1["twofold_visits"]} two-fold visits); right-hand-side evaluations per event:
{f1["rhs_per_event"]:.0f} (all evaluations of the run divided by its events: most of them
are spent between events, on the slip and sticking phases themselves).

Event machinery overhead (bench/events_overhead.c): the {ev["phases"]} slip phases of one
Fig. 5 trajectory (t = 0..200, {ev["slip_time"]:.1f} time units of slip), each integrated by
the bare DOPRI5 stepper to its known end and by the event-driven integrator, which detects
and locates that end itself: {ev["bare_seconds"] * 1e3:.2f} ms bare, {ev["events_seconds"] * 1e3:.2f} ms
with events, ratio **{ev["ratio"]:.2f}** (goal ≤ 1.5); steps {ev["bare_steps"]} vs
{ev["event_steps"]}, right-hand sides {ev["bare_rhs"]} vs {ev["event_rhs"]}.

## Wheel Fig. 5 against scipy and CVODE (bench/wheel_compare.sh)

Same members (exits replayed from an engine run), same rtol 1e-10 / atol 1e-12, one core.
scipy: `solve_ivp` (DOP853) with terminal events implementing the same mode machine
(bench/wheel_scipy.py, written from the paper's equations); CVODE: SUNDIALS 6 Adams with
`CVodeRootInit` driving the same mode machine (bench/wheel_cvode.c; built only where
libsundials-dev is installed).  The twofold time includes process start-up and HDF5 output.

| code | members/s | twofold / code | goal | max event-time difference to twofold |
|---|---|---|---|---|
| twofold | {fmt(wc["twofold"]["members_per_s"], ".1f")} | 1 | | |
| scipy DOP853 | {fmt(wc["scipy"]["members_per_s"], ".2f")} | {fmt(wc.get("ratio_twofold_over_scipy"), ".0f")} | ≥ 100 | {fmt(wc["scipy_event_agreement"]["max_event_dt"], ".1e")} |
| CVODE Adams | {fmt(cv.get("members_per_s"), ".1f")} | {fmt(wc.get("ratio_twofold_over_cvode"), ".2f")} | ≥ 2 | {fmt(wc.get("cvode_event_agreement", {}).get("max_event_dt"), ".1e")} |

Event times agree to a few 1e-4, not to the tolerance: near fold lines the trajectories
barely touch Sigma (h changes by ~1e-7 per time unit), so tiny state differences become
large timing differences, and the codes' event sequences eventually part (one slides where
another crosses); the differences above cover the events before that.  Where CVODE comes
close, callgrind shows why: its variable-order Adams needs fewer right-hand sides at tight
tolerance, and each wheel evaluation spends its time in libm (sincos, atan2, atan of
constant arguments that could be cached).

![work-precision](wheel-work-precision.png)

Work-precision (bench/work_precision.py): event-time error against the engine at rtol 1e-13
versus right-hand-side evaluations and wall time, rtol 1e-4 … 1e-12, for twofold, scipy
DOP853 and CVODE.

## HDF5 write bandwidth: 1e6 member records of 8 doubles ({nbytes / 1e6:.0f} MB)

Engine path: `tf_h5_create_table` + one collective `tf_h5_write_rows` + close
(bench/h5write.c; like dd without `conv=fdatasync`, the data may still be in the page cache
when it returns), against `dd if=/dev/zero bs=1M` of the same size on the same disk:
{dd_mbs:.0f} MB/s to the page cache, {dd_sync_mbs:.0f} MB/s with `conv=fdatasync`.
Best of 3 runs each.

| ranks | deflate level | seconds | MB/s | ratio to dd |
|---|---|---|---|---|
{rows}
"""
open(os.path.join(root, "docs", "BENCHMARKS.md"), "w").write(md)
print(md)
if want_json:
    json.dump(res, open(os.path.join(root, "bench", "results.json"), "w"), indent=2)
PY

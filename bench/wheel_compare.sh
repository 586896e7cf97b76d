#!/usr/bin/env bash
# wheel_compare.sh — Wheel Fig. 5 members/s: twofold versus the scipy reference
# (bench/wheel_scipy.py) and SUNDIALS CVODE (bench/wheel_cvode.c), in one invocation, on the
# same members, t_end and tolerances.  Prints one JSON line.
#
#   bench/wheel_compare.sh BUILD_DIR [--members M] [--t-end T] [--rtol R] [--atol A]
#                          [--method DOP853|RK45] [--first-n N]
#
# 1. twofold run configs/wheel-fig5.yaml (1 rank, --json) writes the results file; its
#    /members/exits (continuation points) and /members/event_log (events) are what the other
#    two replay and are compared against.  The engine is timed best of 3 (same members).
# 2. the scipy reference (solve_ivp DOP853 by default, terminal events), once.
# 3. the CVODE baseline (Adams, rootfinding; BUILD_DIR/bench_wheel_cvode, skipped with a
#    note if it was not built), best of 3.
# Event-time agreement: bench/wheel_events.py (bursts of events closer than 1e-4 merged;
# max |dt| over the matched prefix of every member's event sequence).
set -euo pipefail
BUILD=${1:?usage: wheel_compare.sh BUILD_DIR [--members M] [--t-end T] [--rtol R] [--atol A] [--method DOP853|RK45] [--first-n N]}
shift
M=${WHEEL_MEMBERS:-10} T=${WHEEL_T_END:-100} RTOL=1e-10 ATOL=1e-12 METHOD=DOP853 FIRST_N=""
while [ $# -gt 0 ]; do
  case "$1" in
    --members) M=$2; shift 2 ;;
    --t-end) T=$2; shift 2 ;;
    --rtol) RTOL=$2; shift 2 ;;
    --atol) ATOL=$2; shift 2 ;;
    --method) METHOD=$2; shift 2 ;;
    --first-n) FIRST_N=$2; shift 2 ;;
    *) echo "wheel_compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wheel_compare.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
say() { printf 'wheel_compare: %s\n' "$*" >&2; }
last_json() { tail -n 1; }

ENGINE_ARGS=(run "$ROOT/configs/wheel-fig5.yaml" -o "$WORK/engine.h5" --set ensemble.members=$M
  --set integrator.t_end=$T --set integrator.rtol=$RTOL --set integrator.atol=$ATOL
  --set output.event_log=20000 --set output.trajectory_samples=0 --overwrite --quiet --json)
say "twofold: $M members to t = $T (rtol $RTOL, atol $ATOL): the run with the event log, then best of 3 timed"
# the long event log (20000 slots of 7 doubles per member) is written only for the comparison;
# the timed runs (same seed, so the same members) keep the config's default log size
"$BUILD/twofold" "${ENGINE_ARGS[@]}" > /dev/null
TIMED_ARGS=("${ENGINE_ARGS[@]}")
TIMED_ARGS[3]="$WORK/timed.h5"
TIMED_ARGS=("${TIMED_ARGS[@]/output.event_log=20000/output.event_log=64}")
eng=""
for _ in 1 2 3; do
  r=$("$BUILD/twofold" "${TIMED_ARGS[@]}" | last_json)
  eng=$(printf '%s\n%s\n' "$eng" "$r" | "$PY" -c "
import json, sys
rs = [json.loads(l) for l in sys.stdin if l.strip()]
print(json.dumps(min(rs, key=lambda r: r['wall_seconds'])))")
done

say "scipy solve_ivp ($METHOD): same members, replaying the engine's exits"
sc=$("$PY" "$ROOT/bench/wheel_scipy.py" "$WORK/engine.h5" --t-end "$T" --rtol "$RTOL" --atol "$ATOL" \
  --method "$METHOD" ${FIRST_N:+--first-n $FIRST_N} --events-out "$WORK/scipy.txt" | last_json)

cv="null" cvcmp="null"
if [ -x "$BUILD/bench_wheel_cvode" ]; then
  say "CVODE (Adams + rootfinding): same members, best of 3"
  cv=""
  for _ in 1 2 3; do
    r=$("$BUILD/bench_wheel_cvode" "$WORK/engine.h5" "$T" "$RTOL" "$ATOL" "$WORK/cvode.txt" | last_json)
    cv=$(printf '%s\n%s\n' "$cv" "$r" | "$PY" -c "
import json, sys
rs = [json.loads(l) for l in sys.stdin if l.strip()]
print(json.dumps(min(rs, key=lambda r: r['wall_seconds'])))")
  done
  cvcmp=$("$PY" "$ROOT/bench/wheel_events.py" compare "$WORK/engine.h5" "$WORK/cvode.txt" $FIRST_N | last_json)
else
  say "no $BUILD/bench_wheel_cvode (SUNDIALS CVODE not found at configure time): CVODE skipped"
fi

ENG="$eng" SC="$sc" CV="$cv" CVCMP="$cvcmp" "$PY" - <<'PY'
import json, os
eng, sc = json.loads(os.environ["ENG"]), json.loads(os.environ["SC"])
cv, cvcmp = json.loads(os.environ["CV"]), json.loads(os.environ["CVCMP"])
tf_mps = eng["members_per_second"]
res = {
    "members": eng["members"], "t_end": sc["t_end"], "rtol": sc["rtol"], "atol": sc["atol"],
    "twofold": {"members_per_s": tf_mps, "wall_seconds": eng["wall_seconds"],
                "events": sum(eng["events"].values()), "rhs_per_event": eng["rhs_per_event"]},
    "scipy": {"method": sc["method"], "members_per_s": sc["members_per_second"],
              "wall_seconds": sc["wall_seconds"], "rhs_evals": sc["rhs_evals"], "events": sc["events"],
              "status_counts": sc["status_counts"]},
    "ratio_twofold_over_scipy": tf_mps / sc["members_per_second"],
    "scipy_event_agreement": {k: sc[k] for k in ("max_event_dt", "median_member_max_dt", "matched_events",
                                                 "diverged_members", "compared_first_n", "burst", "raw")},
    "goal_scipy": 100.0, "goal_cvode": 2.0,
}
if cv is not None:
    res["cvode"] = {"method": cv["method"], "members_per_s": cv["members_per_second"],
                    "wall_seconds": cv["wall_seconds"], "rhs_evals": cv["rhs_evals"], "steps": cv["steps"],
                    "events": cv["events"], "status_counts": cv["status_counts"]}
    res["ratio_twofold_over_cvode"] = tf_mps / cv["members_per_second"]
    res["cvode_event_agreement"] = cvcmp
res["meets_goal_scipy"] = res["ratio_twofold_over_scipy"] >= 100
if cv is not None:
    res["meets_goal_cvode"] = res["ratio_twofold_over_cvode"] >= 2
print(json.dumps(res))
PY

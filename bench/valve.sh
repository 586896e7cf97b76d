#!/usr/bin/env bash
# valve.sh — bench section "valve": the pressure-relief-valve ensemble of the MPGOS paper
# (Hegedűs et al.; model of Hős & Champneys) on boost::odeint (bench/valve_odeint.cpp) and, when
# configs/valve-bifurcation.yaml exists and twofold accepts it, on twofold, over the same q grid
# in this one invocation; both are checked against the independent reference
# tests/scripts/valve_ref.py on every VALVE_REF_STRIDE-th q (the reference takes 10-40 s per q).
# Rates are per core: odeint is serial (trajectories per CPU second), twofold runs on 1 rank
# (members over its wall time, start-up and output included).
#
#   bench/valve.sh BUILD_DIR      (env: VALVE_NQ 256, VALVE_QMIN 0.2, VALVE_QMAX 10,
#                                  VALVE_REF_STRIDE 32, VALVE_SET: more --set KEY=VALUE for
#                                  twofold, several separated by spaces and taken as they are
#                                  (no globbing; a value cannot hold a space), e.g.
#                                  VALVE_SET="integrator.landing=dense integrator.method=dopri5",
#                                  VALVE_PAIRS 5: alternated rounds for the speeds)
# The speeds are medians of VALVE_PAIRS alternated rounds in this invocation (twofold as
# configured, odeint, twofold with the opt-in keys OPT_IN below, and so on), each run's whole
# process in CPU seconds; both of twofold's settings are also checked against the reference.
# twofold's results are read from its HDF5 file as members/grid (q), members/poincare (slots of
# t, x, v, p) and members/poincare_period (1: at rest, converged); a file without them is
# reported as not comparable.  Last stdout line: the JSON record for bench/report.py.
set -euo pipefail
BUILD=$(cd "${1:?usage: valve.sh BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
WORK=$(mktemp -d "${TMPDIR:-/tmp}/valve.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
NQ=${VALVE_NQ:-256} QMIN=${VALVE_QMIN:-0.2} QMAX=${VALVE_QMAX:-10} STRIDE=${VALVE_REF_STRIDE:-32}
PAIRS_N=${VALVE_PAIRS:-5}
# the opt-in keys that change the last bits for speed (docs/CONFIG.md): glibc's exp and log of
# the step-size controller replaced by twofold's own, events landed on the dense output
OPT_IN_KEYS=(integrator.controller_math=fast integrator.landing=dense)
OPT_IN=()
for kv in "${OPT_IN_KEYS[@]}"; do OPT_IN+=(--set "$kv"); done
read -r -a PAIRS <<<"${VALVE_SET:-}"
EXTRA=()
for kv in ${PAIRS[@]+"${PAIRS[@]}"}; do EXTRA+=(--set "$kv"); done
say() { echo "valve: $*" >&2; }
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

OI="$BUILD/bench_valve_odeint"
[ -x "$OI" ] || { say "$OI not built (needs a C++ compiler and libboost-dev)"; exit 1; }
say "boost::odeint, $NQ values of q on [$QMIN, $QMAX]"
"$OI" "$QMIN" "$QMAX" "$NQ" "$WORK/odeint.csv" | tail -n 1 >"$WORK/odeint.json"
cat "$WORK/odeint.json" >&2

# the same grid points as valve_odeint.cpp computes them
QS=$("$PY" -c "
n, a, b, s = $NQ, $QMIN, $QMAX, $STRIDE
print(' '.join(repr(a if n == 1 else a + (b - a) * i / (n - 1)) for i in range(0, n, s)))")
say "reference (scipy DOP853, 1e-11) on every ${STRIDE}th q: $(echo $QS | wc -w) values"
t0=$(date +%s.%N)
"$PY" "$ROOT/tests/scripts/valve_ref.py" $QS --csv "$WORK/ref.csv" >&2
REF_S=$("$PY" -c "print($(date +%s.%N) - $t0)")

# twofold_records NAME [--set ...]: one run of twofold on the grid (the arguments added to
# TWOFOLD_ARGS), its records as $WORK/NAME.csv and its counts as $WORK/NAME.json
twofold_records() {
  local name=$1
  shift
  "$PY" -c 'import json, subprocess, sys
out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout
print(out.strip().splitlines()[-1])' "$BUILD/twofold" "${TWOFOLD_ARGS[@]}" -o "$WORK/$name.h5" "$@" \
    >"$WORK/$name.raw.json"
  "$PY" - "$WORK" "$name" <<'PY'
import json, sys
import h5py, numpy as np
w, name = sys.argv[1:3]
j = json.load(open(f"{w}/{name}.raw.json"))
with h5py.File(f"{w}/{name}.h5", "r") as f:
    # scan.quantity poincare: slots of (t, x, v, p) per point; a member that stopped early on a
    # period P fills the remaining slots with that period; P = 1 is the rest point x*
    q = f["members/grid"][:, 0]
    slots = f["members/poincare"][...].reshape(len(q), -1, 4)
    period = f["members/poincare_period"][...]
    work = f["members/work"][...].reshape(len(q), 2)  # accepted steps, stepper evaluations
with open(f"{w}/{name}.csv", "w") as out:
    out.write("q,converged,n,x\n")
    for qi, si, pi in zip(q, slots, period):
        ri = si[:, 1][~np.isnan(si[:, 1])]
        out.write(",".join([repr(float(qi)), str(int(pi == 1)), str(len(ri))] + [repr(float(v)) for v in ri]) + "\n")
j["trajectories"] = len(q)
j["steps_per_trajectory"] = float(work[:, 0].mean())
j["rhs_per_trajectory"] = float(work[:, 1].mean())
json.dump(j, open(f"{w}/{name}.json", "w"))
PY
}

CFG="$ROOT/configs/valve-bifurcation.yaml"
TW=() MISSING=""
if [ ! -f "$CFG" ]; then
  MISSING="configs/valve-bifurcation.yaml does not exist yet (twofold's impact systems are in progress)"
elif ! "$BUILD/twofold" check "$CFG" >"$WORK/check.txt" 2>&1; then
  MISSING="twofold does not accept configs/valve-bifurcation.yaml yet: $(tail -n 1 "$WORK/check.txt")"
else
  say "twofold, 1 rank, configs/valve-bifurcation.yaml, as configured and with ${OPT_IN[*]}"
  TWOFOLD_ARGS=(run "$CFG" --overwrite --quiet --json --set scan.x.points="$NQ"
    --set scan.x.min="$QMIN" --set scan.x.max="$QMAX" ${EXTRA[@]+"${EXTRA[@]}"})
  if twofold_records tw && twofold_records opt "${OPT_IN[@]}"; then
    TW=(--twofold "$WORK/tw.csv" --twofold-json "$WORK/tw.json"
      --opt-in "$WORK/opt.csv" --opt-in-json "$WORK/opt.json" --opt-in-keys "${OPT_IN_KEYS[*]}")
    say "alternated rounds ($PAIRS_N): twofold, odeint, twofold ${OPT_IN[*]}"
    "$PY" - "$PAIRS_N" "$WORK" "$OI" "$QMIN" "$QMAX" "$NQ" "$BUILD/twofold" "${TWOFOLD_ARGS[@]}" \
      -- "${OPT_IN[@]}" >"$WORK/pairs.json" <<'PY'
import json, resource, subprocess, sys
n, work, odeint, qmin, qmax, nq, exe = sys.argv[1:8]
rest = sys.argv[8:]
cut = rest.index("--")
args, opt_in = rest[:cut], rest[cut + 1:]
def cpu(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
runs = {"twofold": [], "odeint": [], "opt_in": []}
for _ in range(int(n)):
    runs["twofold"].append(cpu([exe] + args + ["-o", f"{work}/p.h5"]))
    runs["odeint"].append(cpu([odeint, qmin, qmax, nq, f"{work}/p.csv"]))
    runs["opt_in"].append(cpu([exe] + args + ["-o", f"{work}/p.h5"] + opt_in))
print(json.dumps(runs))
PY
    TW+=(--pairs "$WORK/pairs.json")
  else
    MISSING="twofold ran configs/valve-bifurcation.yaml, but its file has no members/grid, members/poincare, members/poincare_period"
  fi
fi
[ -z "$MISSING" ] || say "twofold's side is missing: $MISSING"
"$PY" "$ROOT/bench/valve_compare.py" --odeint "$WORK/odeint.csv" --odeint-json "$WORK/odeint.json" \
  --ref "$WORK/ref.csv" --ref-seconds "$REF_S" "${TW[@]}" --twofold-missing "$MISSING"

#!/usr/bin/env bash
# run.sh — the benchmark suite (./twofold.sh bench [--json] [--only a,b] [--list]).
#
# The suite is a list of sections.  Each section runs both sides of its comparison in this one
# invocation and leaves one JSON record in bench/results/<section>.json (date, machine,
# command, numbers, and the section's markdown).  bench/report.py then rebuilds
# docs/BENCHMARKS.md from every record present, so a section can be re-measured alone
# (`--only wheel`) without losing the others; each section states its own date.
#
# A section is either a function run_<name> below (engine benchmarks kept here) or a script
# bench/section_<name>.sh BUILD_DIR that prints the record's JSON as its last stdout line
# (fields: title, markdown, and whatever numbers it measured).
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD_DIR [--json] [--only a,b] [--list]}
shift || true
JSON_OUT="" ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --json) JSON_OUT=1; shift ;;
    --only) ONLY=$2; shift 2 ;;
    --list) LIST=1; shift ;;
    *) echo "bench: unknown option $1 (options: --json, --only a,b, --list)" >&2; exit 2 ;;
  esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$BUILD" && pwd)
RESULTS="$ROOT/bench/results"
WORK=$(mktemp -d "$ROOT/bench/work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
T="$BUILD/twofold"
PY=/usr/bin/python3
export ROOT BUILD WORK T PY

# Order of the sections in the suite and in docs/BENCHMARKS.md.
SECTIONS=(goals smoke startup memory wheel compare precision hdf5 lyapunov devs smooth stiff codim2 valve cluster equations lanes)

say() { printf 'bench: %s\n' "$*" >&2; }
last_line() { tail -n 1; }

# ---- engine sections ------------------------------------------------------------------------

# Runs "$@" (one JSON line each) BENCH_PAIRS times (default 5) as alternated pairs and prints
# {"pairs": [[a, b], ...]}: the sides of each pair ran back to back, so the ratio within a pair
# is the comparison and its spread over the pairs shows the noise.  The two commands are given
# as the names of functions (no arguments).
alternated_pairs() {
  local a=$1 b=$2 n=${BENCH_PAIRS:-5} sep="" ra rb
  printf '{"pairs": ['
  for ((i = 1; i <= n; i++)); do
    say "pair $i of $n"
    ra=$($a | last_line) && rb=$($b | last_line) || return 1
    printf '%s[%s, %s]' "$sep" "$ra" "$rb"
    sep=", "
  done
  printf ']}\n'
}

smoke_1() { "$T" run "$ROOT/configs/smoke.yaml" -o "$WORK/s1.h5" --overwrite --set ensemble.members=${BENCH_MEMBERS:-8000} --quiet --json; }
smoke_2() { mpiexec -n 2 "$T" run "$ROOT/configs/smoke.yaml" -o "$WORK/s2.h5" --overwrite --set ensemble.members=${BENCH_MEMBERS:-8000} --quiet --json; }
run_smoke() {
  say "smoke ensemble, ${BENCH_MEMBERS:-8000} members, 1 rank and 2 ranks in alternated pairs"
  alternated_pairs smoke_1 smoke_2
}

wheel_1() { "$T" run "$ROOT/configs/wheel-fig5.yaml" -o "$WORK/f1.h5" --overwrite --set ensemble.members=${BENCH_F5_MEMBERS:-400} --quiet --json; }
wheel_2() { mpiexec -n 2 "$T" run "$ROOT/configs/wheel-fig5.yaml" -o "$WORK/f2.h5" --overwrite --set ensemble.members=${BENCH_F5_MEMBERS:-400} --quiet --json; }
wheel_1_auto() { "$T" run "$ROOT/configs/wheel-fig5.yaml" -o "$WORK/f1.h5" --overwrite --set ensemble.members=${BENCH_F5_MEMBERS:-400} --set integrator.lanes=auto --quiet --json; }
wheel_1_off() { "$T" run "$ROOT/configs/wheel-fig5.yaml" -o "$WORK/f0.h5" --overwrite --set ensemble.members=${BENCH_F5_MEMBERS:-400} --set integrator.lanes=1 --quiet --json; }
run_wheel() {
  local ranks lanes ev sep="" n=${BENCH_PAIRS:-5}
  say "wheel Fig. 5 ensemble, ${BENCH_F5_MEMBERS:-400} members, 1 rank and 2 ranks in alternated pairs"
  ranks=$(alternated_pairs wheel_1 wheel_2) || return 1
  say "wheel Fig. 5 ensemble, 1 rank, lanes auto and lanes 1 in alternated pairs"
  lanes=$(alternated_pairs wheel_1_auto wheel_1_off) || return 1
  say "event machinery overhead on the slip phases of a Fig. 5 trajectory, $n runs (each times both sides in turn)"
  ev="["
  for ((i = 1; i <= n; i++)); do
    ev+="$sep$("$BUILD/bench_events_overhead" 200 | last_line)" || return 1
    sep=", "
  done
  say "the same with the wheel's slip fields continued past Sigma (continuation=1), $n runs"
  local evc="[" sepc=""
  for ((i = 1; i <= n; i++)); do
    evc+="$sepc$("$BUILD/bench_events_overhead" 200 continuation=1 | last_line)" || return 1
    sepc=", "
  done
  printf '{"ranks": %s, "lanes": %s, "event_overhead": %s], "event_overhead_continued": %s]}\n' \
    "$ranks" "$lanes" "$ev" "$evc"
}

run_compare() {
  say "wheel Fig. 5 versus CVODE at matched accuracy in alternated pairs (same members, replayed exits; scipy for scale)"
  "$PY" "$ROOT/bench/wheel_compare.py" "$BUILD" --members "${BENCH_WHEEL_MEMBERS:-400}" \
    --t-end "${BENCH_WHEEL_T_END:-2}" | last_line
}

run_precision() {
  say "work-precision diagram of the Filippov integrator -> docs/wheel-work-precision.png"
  "$PY" "$ROOT/bench/work_precision.py" "$BUILD" "$ROOT/docs/wheel-work-precision.png" \
    --json "$WORK/wp.json" | last_line
}

# best of 3 for every write measurement (first writes pay for page-cache warm-up)
best_of_3() {
  local r
  for _ in 1 2 3; do r=$("$@" | last_line); echo "$r"; done |
    "$PY" -c "import json, sys; print(json.dumps(min((json.loads(l) for l in sys.stdin if l.strip()), key=lambda r: r['seconds'])))"
}
dd_run() {
  local t
  t=$(dd if=/dev/zero of="$WORK/dd.bin" bs=1M count=$((BYTES / 1048576)) "$@" 2>&1 | tail -1 |
      sed -E 's/.* copied, ([0-9.]+) s.*/\1/')
  echo "{\"seconds\": $t}"
}
run_hdf5() {
  local records=1000000 width=8 h5=() spec
  BYTES=$((records * width * 8))
  for spec in "1 0" "2 0" "1 4" "2 4"; do
    set -- $spec
    say "HDF5 write: $records records x $width doubles, $1 rank(s), deflate $2"
    h5+=("$(best_of_3 mpiexec -n "$1" "$BUILD/bench_h5write" "$WORK/w.h5" $records $width "$2")")
  done
  say "dd: $BYTES bytes, page cache and fdatasync"
  local dd dds
  dd=$(best_of_3 dd_run)
  dds=$(best_of_3 dd_run conv=fdatasync)
  local IFS=,
  printf '{"bytes": %s, "writes": [%s], "dd": %s, "dd_fdatasync": %s}\n' "$BYTES" "${h5[*]}" "$dd" "$dds"
}

run_lyapunov() {
  say "Lyapunov spectra: time to accuracy against the straightforward implementation"
  bash "$ROOT/bench/lyapunov_bench.sh" "$BUILD" | last_line
}

run_devs() {
  say "DEVS throughput: twofold against a competent and a straightforward C loop and numpy, and the core's limits"
  bash "$ROOT/bench/devs_throughput.sh" "$BUILD" | last_line
}

run_valve() {
  say "pressure-relief valve (MPGOS benchmark): boost::odeint and twofold over a q grid"
  bash "$ROOT/bench/valve.sh" "$BUILD" | last_line
}

run_cluster() {
  say "cluster overhead: start-up, flush rounds, srun and queue latency, array + merge (private SLURM)"
  TWOFOLD="$T" WORK="$WORK/cluster" bash "$ROOT/bench/cluster_overhead.sh" "$WORK/cluster.md" >&2
  "$PY" -c 'import json, sys; print(json.dumps({"title": "Cluster overhead", "markdown": open(sys.argv[1]).read()}))' \
    "$WORK/cluster.md"
}

# ---- the suite ------------------------------------------------------------------------------

runner_of() {
  if declare -F "run_$1" >/dev/null; then echo "run_$1"
  elif [ -f "$ROOT/bench/section_$1.sh" ]; then echo "bash $ROOT/bench/section_$1.sh $BUILD"
  fi
}

if [ -n "${LIST:-}" ]; then
  for s in "${SECTIONS[@]}"; do
    [ -n "$(runner_of "$s")" ] && echo "$s" || echo "$s (not available)"
  done
  exit 0
fi

selected=("${SECTIONS[@]}")
if [ -n "$ONLY" ]; then
  IFS=, read -r -a selected <<<"$ONLY"
  for s in "${selected[@]}"; do
    [ -n "$(runner_of "$s")" ] || { echo "bench: no section '$s' (try --list)" >&2; exit 2; }
  done
fi

mkdir -p "$RESULTS"
failed=()
for s in "${selected[@]}"; do
  runner=$(runner_of "$s")
  [ -n "$runner" ] || { say "section $s: not available in this tree, skipped"; continue; }
  say "== $s"
  if out=$($runner) && [ -n "$out" ]; then
    printf '%s\n' "$out" | last_line >"$WORK/$s.raw.json"
    "$PY" "$ROOT/bench/report.py" record "$s" "$WORK/$s.raw.json" "$RESULTS/$s.json"
  else
    say "section $s FAILED (its earlier record, if any, is kept)"
    failed+=("$s")
  fi
done
"$PY" "$ROOT/bench/report.py" render "$RESULTS" "$ROOT/docs/BENCHMARKS.md" \
  ${JSON_OUT:+--json "$ROOT/bench/results.json"}
say "docs/BENCHMARKS.md regenerated from bench/results/*.json"
[ ${#failed[@]} -eq 0 ] || { say "failed sections: ${failed[*]}"; exit 1; }

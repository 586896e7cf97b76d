# scan_stationary.sh — scan.quantity: stationary (lines of continued stationary states) is
# bitwise identical on 1, 2 and 3 ranks, resumes after an interruption to the same data on
# another rank count, and refuses bad input with file:line:key and status 2 before touching
# an existing results file.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"

# Three lines (mu = 0.06 .. 0.12, all above mu_fold = 0.03) of 8 v_f points, swept up and
# down: the flowmeter through its cases SS/SR/RR on the two-contact engine.
cat > lines.yaml <<'YAML'
job: scan
model: {name: flowmeter, params: {g: 1.35, d: 0.096, j: 0.4, c: 0.039}}
initial: {state: [0, 0, 0, 0.05]}
integrator: {rtol: 1.0e-9, atol: 1.0e-11}
scan:
  quantity: stationary
  continuation: both
  time: 500
  tolerance: 1.0e-4
  x: {param: v_f, min: 0.1, max: 4.0, points: 8}
  y: {param: mu, min: 0.06, max: 0.12, points: 3}
output: {flush_interval: 0.05}
YAML

same_scan() {
  local a=$1 b=$2 ds
  for ds in /members/y /members/x /members/direction /members/state /members/drift \
            /members/stationary /members/mode /members/events /members/window_events \
            /members/steps /members/point_status /members/valid /members/outputs \
            /members/status /members/done /scan/x /scan/y; do
    if ! h5diff -q "$a" "$b" "$ds" "$ds" >/dev/null 2>&1; then
      fail "$ds differs between $a and $b"
      return 0
    fi
  done
  pass "$a and $b: every dataset of the scan bitwise equal"
}

# 1. ranks
"$T" run lines.yaml -o r1.h5 --quiet --json > r1.json
mpirun_n 2 "$T" run lines.yaml -o r2.h5 --quiet --json --set ensemble.chunk=1 > r2.json
mpirun_n 3 "$T" run lines.yaml -o r3.h5 --quiet --json --set ensemble.chunk=1 > r3.json
same_scan r1.h5 r2.h5
same_scan r1.h5 r3.h5
summary() { "$PYTHON" -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['points'], s['stationary'], s['final_modes'], s['bistable_points'], s['bistable_x'])" "$1"; }
[ "$(summary r1.json)" = "$(summary r3.json)" ] && pass "JSON summary equal on 1 and 3 ranks: $(summary r1.json)" \
  || fail "JSON summaries differ: $(summary r1.json) / $(summary r3.json)"
"$PYTHON" - <<'PY' || fail "the lines are not stationary, or a line has no hysteresis"
import h5py, numpy as np
f = h5py.File("r1.h5", "r"); m = f["members"]
st = m["stationary"][...]
assert st.sum() >= 0.9 * st.size, st  # a point next to the fold converges slowly
n = 8
up, down = m["state"][:, :4 * n].reshape(3, n, 4), m["state"][:, 4 * n:].reshape(3, n, 4)[:, ::-1]
differ = (np.abs(up - down).max(axis=2) > 1e-3).sum(axis=1)
# every line lies above mu_fold = 0.03: each has a bistable range
assert (differ > 0).all(), differ
print(f"ok: {st.sum()} of {st.size} points stationary; bistable points per line {differ}")
PY

# 2. resume: --stop-after (the stop path of a signal) stops the run between lines; 2 ranks ->
#    resume on 3
for pair in "2 3"; do
  set -- $pair
  rc=0; mpirun_n "$1" "$T" run lines.yaml -o tl$1.h5 --quiet --stop-after 1 || rc=$?
  n=$("$PYTHON" -c "import h5py; print(int(h5py.File('tl$1.h5','r')['members/done'][...].sum()))")
  if [ "$rc" = 3 ] && [ "$n" -lt 3 ]; then pass "stopped on $1 rank(s): exit 3 with $n/3 lines done"
  else fail "stopped on $1 rank(s): exit $rc, $n/3 lines done"; fi
  mpirun_n "$2" "$T" run lines.yaml -o tl$1.h5 --quiet --resume
  same_scan r1.h5 tl$1.h5
done

# 3. bad input: clear error naming file, line and key; exit 2; results untouched
cp r1.h5 keep.h5; sum=$(md5sum < keep.h5)
sed 's/continuation: both/continuation: sideways/' lines.yaml > bad_cont.yaml
expect_fail 2 "bad_cont.yaml:7: key .scan.continuation.*(up|down|both)" -- "$T" run bad_cont.yaml -o keep.h5 --overwrite
sed 's/  time: 500/  time: -5/' lines.yaml > bad_time.yaml
expect_fail 2 "bad_time.yaml:8: key .scan.time.: expected a number" -- "$T" run bad_time.yaml -o keep.h5 --overwrite
expect_fail 2 "--set scan.window=2: key .scan.window.: expected a number in \\[0.001, 1\\]" -- "$T" run lines.yaml -o keep.h5 --overwrite --set scan.window=2
expect_fail 2 "initial.spread.*stationary scan" -- "$T" run lines.yaml -o keep.h5 --overwrite --set initial.spread=0.1
cat > map.yaml <<'YAML'
job: scan
model: {name: logistic}
scan:
  quantity: stationary
  x: {param: mu, min: 3.5, max: 3.9, points: 4}
YAML
expect_fail 2 "map.yaml:4.*scan.quantity.*logistic.*map" -- "$T" run map.yaml -o keep.h5 --overwrite
cat > noisy.yaml <<'YAML'
job: scan
model: {name: ornstein-uhlenbeck}
scan:
  quantity: stationary
  x: {param: theta, min: 0.5, max: 2, points: 4}
YAML
expect_fail 2 "noisy.yaml:2.*model.name.*noise.*distribution" -- "$T" run noisy.yaml -o keep.h5 --overwrite
cat > devs.yaml <<'YAML'
job: scan
model: {name: devs-logistic}
scan:
  quantity: stationary
  x: {param: mu, min: 3.5, max: 3.9, points: 4}
YAML
expect_fail 2 "devs.yaml:4.*scan.quantity.*DEVS" -- "$T" run devs.yaml -o keep.h5 --overwrite
sed 's/quantity: stationary/quantity: lyapunov/' lines.yaml > lyap.yaml
expect_fail 2 "lyap.yaml:7: key .scan.continuation.: applies to scan.quantity: stationary" -- "$T" run lyap.yaml -o keep.h5 --overwrite
grep -v "continuation\|time:\|tolerance" lyap.yaml > lyap2.yaml
expect_fail 2 "lyap2.yaml:2: key .model.name.: .*two contacts.*quantity stationary" -- "$T" run lyap2.yaml -o keep.h5 --overwrite
[ "$(md5sum < keep.h5)" = "$sum" ] && pass "existing results untouched by the refused runs" \
  || fail "a refused run changed keep.h5"
[ "$FAILURES" = 0 ] || exit 1
echo "all passed"

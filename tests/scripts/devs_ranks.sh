# devs_ranks.sh — DEVS results are bitwise independent of the number of ranks: the lyapunov
# job on one ensemble split over 1, 2 and 3 ranks (N not a multiple of the block size, so
# the last block is partial and the ranks own different numbers of blocks), the lambda_1(P)
# scan and a bifurcation diagram distributed point by point, an interrupted scan resumed on
# another rank count, and an interrupted lyapunov run resumed from its checkpoint.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"
SET=(--set model.params.N=5500 --set model.params.steps=3000 --set model.params.transient=200)
json_field() { "$PYTHON" -c "import json,sys; print(repr(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1']))"; }
for n in 1 2 3; do
  mpirun_n $n "$T" run "$CONFIGS/devs-lyapunov.yaml" -o lyap$n.h5 "${SET[@]}" --quiet --json > lyap$n.json
  json_field lambda1 < lyap$n.json > l1_$n.txt
  json_field lambda1_series < lyap$n.json > ls_$n.txt
done
for n in 2 3; do
  if h5diff -q lyap1.h5 lyap$n.h5 /devs/X /devs/X && h5diff -q lyap1.h5 lyap$n.h5 /lyapunov/running /lyapunov/running \
     && cmp -s l1_1.txt l1_$n.txt && cmp -s ls_1.txt ls_$n.txt; then
    pass "lyapunov on $n ranks: X_i, running lambda1, lambda1 $(cat l1_$n.txt) and Wolf's estimate bitwise equal to 1 rank"
  else
    fail "lyapunov on $n ranks differs from 1 rank: $(cat l1_1.txt) vs $(cat l1_$n.txt)"
  fi
done
# a partial last block and more ranks than blocks
mpirun_n 3 "$T" run "$CONFIGS/devs-lyapunov.yaml" -o tiny3.h5 --set model.params.N=7 --set model.params.steps=500 --quiet
"$T" run "$CONFIGS/devs-lyapunov.yaml" -o tiny1.h5 --set model.params.N=7 --set model.params.steps=500 --quiet
if h5diff -q tiny1.h5 tiny3.h5 /devs/X /devs/X; then pass "N = 7 on 3 ranks (two own no element) equals 1 rank"
else fail "N = 7 on 3 ranks differs"; fi

SCAN=(--set scan.x.points=12 --set model.params.steps=40000 --set model.params.N=40)
"$T" run "$CONFIGS/devs-load-scan.yaml" -o scan1.h5 "${SCAN[@]}" --quiet
mpirun_n 3 "$T" run "$CONFIGS/devs-load-scan.yaml" -o scan3.h5 "${SCAN[@]}" --quiet
ok=1
for ds in /members/lambda1 /members/lambda1_series /members/lambda1_elements /members/grid /members/status; do
  h5diff -q scan1.h5 scan3.h5 $ds $ds >/dev/null || { ok=0; fail "scan $ds differs between 1 and 3 ranks"; }
done
[ $ok = 1 ] && pass "lambda1(P) scan on 3 ranks bitwise equal to 1 rank"

BIF=(--set bifurcation.x.points=20 --set model.params.steps=50 --set model.params.transient=300)
"$T" run "$CONFIGS/devs-bifurcation-N.yaml" -o bif1.h5 "${BIF[@]}" --quiet
mpirun_n 2 "$T" run "$CONFIGS/devs-bifurcation-N.yaml" -o bif2.h5 "${BIF[@]}" --quiet
if h5diff -q bif1.h5 bif2.h5 /members/samples /members/samples; then pass "bifurcation diagram on 2 ranks equals 1 rank"
else fail "bifurcation diagram differs between 1 and 2 ranks"; fi

# interrupted after a few points, resumed on 2 ranks: equals the uninterrupted scan
rc=0
"$T" run "$CONFIGS/devs-load-scan.yaml" -o part.h5 "${SCAN[@]}" --set output.flush_interval=0.01 --stop-after 4 --quiet || rc=$?
[ "$rc" = 3 ] || fail "the scan with --stop-after 4 exited $rc, expected 3 (interrupted)"
mpirun_n 2 "$T" run "$CONFIGS/devs-load-scan.yaml" -o part.h5 "${SCAN[@]}" --resume --quiet
if h5diff -q scan1.h5 part.h5 /members/lambda1 /members/lambda1; then pass "scan interrupted (exit $rc) and resumed on 2 ranks equals the uninterrupted one"
else fail "resumed scan differs"; fi
# the lyapunov job on one big ensemble: stopped after 1200 of its 3500 steps (a checkpoint of every
# element's x, tangent mantissa and exponent goes into the file), resumed on 3 ranks
CK=(--set model.params.N=300000 --set model.params.steps=3000 --set model.params.transient=500)
"$T" run "$CONFIGS/devs-lyapunov.yaml" -o ck_full.h5 "${CK[@]}" --quiet
rc=0
"$T" run "$CONFIGS/devs-lyapunov.yaml" -o ck.h5 "${CK[@]}" --stop-after 1200 --quiet || rc=$?
[ "$rc" = 3 ] && h5ls ck.h5/devs/checkpoint/x >/dev/null 2>&1 || fail "lyapunov with --stop-after 1200 (steps): exit $rc, expected 3 and a checkpoint"
mpirun_n 3 "$T" run "$CONFIGS/devs-lyapunov.yaml" -o ck.h5 "${CK[@]}" --resume --quiet
ok=1
for ds in /devs/X /lyapunov/blocks /lyapunov/running; do
  h5diff -q ck_full.h5 ck.h5 $ds $ds >/dev/null || { ok=0; fail "resumed lyapunov: $ds differs"; }
done
h5ls ck.h5/devs/checkpoint >/dev/null 2>&1 && { ok=0; fail "the checkpoint was left in the completed file"; }
[ $ok = 1 ] && pass "lyapunov interrupted (exit $rc) on 1 rank and resumed on 3 equals the uninterrupted run"
[ "$FAILURES" = 0 ] || exit 1
echo "all passed"

#!/usr/bin/env bash
# normals_fast.sh — integrator.normals: fast keeps the reproducibility contract: the smoke
# ensemble gives bitwise identical files on 1 and 2 ranks, and after a run stopped part-way
# and resumed; the exact stream (the default) stays the default, and the fast paths follow
# the exact ones closely (the same Box–Muller on the same Philox words, tests/unit/
# test_fast_normals.c), so the fast file is not simply the exact one either.
source "$(dirname "$0")/lib.sh"
SET=(--set ensemble.members=100 --set integrator.t_end=0.5 --quiet)
FAST=(--set integrator.normals=fast)
"$TWOFOLD" run "$CONFIGS/smoke.yaml" -o f1.h5 "${SET[@]}" "${FAST[@]}"
mpirun_n 2 "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o f2.h5 "${SET[@]}" "${FAST[@]}" \
  --set ensemble.chunk=7
same_members f1.h5 f2.h5
set +e
mpirun_n 2 "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o fs.h5 "${SET[@]}" "${FAST[@]}" \
  --set output.buffer_mb=0.002 --set ensemble.chunk=3 --stop-after 40
rc=$?
set -e
[ "$rc" = 3 ] || fail "--stop-after 40 should exit 3 (interrupted), got $rc"
"$TWOFOLD" run "$CONFIGS/smoke.yaml" -o fs.h5 "${SET[@]}" "${FAST[@]}" --resume
same_members f1.h5 fs.h5
"$TWOFOLD" run "$CONFIGS/smoke.yaml" -o e1.h5 "${SET[@]}"
"$TWOFOLD" run "$CONFIGS/smoke.yaml" -o e2.h5 "${SET[@]}" --set integrator.normals=exact
same_members e1.h5 e2.h5
"$PYTHON" - <<'PY' || fail "fast and exact paths: not the same Brownian paths up to rounding"
import h5py, numpy as np
f = h5py.File("f1.h5", "r")["members/final_state"][...]
e = h5py.File("e1.h5", "r")["members/final_state"][...]
assert not np.array_equal(f, e), "the fast file equals the exact one"
# rounding-level differences in the increments, grown by the Lorenz flow over t = 0.5
# (largest Lyapunov exponent about 0.9): far below the spread of the members
gap = np.abs(f - e).max()
assert gap < 1e-9, f"fast and exact final states differ by {gap}"
PY
expect_fail 2 "integrator.normals.*dopri5 draws no normals" -- "$TWOFOLD" run \
  "$CONFIGS/smoke.yaml" -o d.h5 "${SET[@]}" "${FAST[@]}" --set model.params.noise=0 \
  --set integrator.method=dopri5
finish

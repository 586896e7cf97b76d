#!/usr/bin/env bash
# task_farm.sh — twofold_run_config on MPI_COMM_SELF on each of 2 ranks at once, each rank with
# a config of its own: every call must finish and every rank must get its own model's results.
# A model loaded on the world's communicator instead of the run's hangs (a built-in model on
# rank 0, a model.source plugin on rank 1: rank 1 waits for a rank 0 that never compiles) or
# gives a rank another rank's compiled model (two model.source files).  Each rank's final
# states are checked against its own model's exact solution, computed here with numpy:
# x(t) = x0 exp(-r t) for x' = -r x, and x0 cos(w t) + v0/w sin(w t) for the oscillator.
# Environment from CTest as in lib.sh, plus TASK_FARM (the program tests/library/task_farm.c).
source "$(dirname "$0")/lib.sh"
: "${TASK_FARM:?}" "${PYTHON:?}"
mkdir -m 700 cache && export TWOFOLD_CACHE=$WORK/cache

# decay_source FILE RATE: x' = -r x with default r = RATE (two rates: two different sources)
decay_source() {
  cat >"$1" <<C
#include "twofold/model.h"
static const tf_param params[] = {{"r", $2, 0, 100, "rate", false}};
static const char *const names[] = {"x"};
static int rhs(double t, const double *x, const double *p, double *dx) {
  (void)t;
  dx[0] = -p[0] * x[0];
  return 0;
}
static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs};
static const tf_model_def def = {TF_MODEL_HEAD, .name = "decay", .kind = TF_MODEL_FLOW,
  .dim = 1, .state_names = names, .nparams = 1, .params = params, .flow = &ops};
TWOFOLD_MODELS(&def);
C
}
# the layout of a task farm: a directory per task, each with its own model.c
mkdir slow fast
decay_source slow/model.c 0.1
decay_source fast/model.c 0.5

# config NAME MODEL-LINES STATE: an ensemble of 6 members to t = 5
config() {
  cat >"$1.yaml" <<Y
job: ensemble
model:
$2
initial:
  state: $3
  spread: 0.1
integrator:
  method: dopri5
  t_end: 5.0
  rtol: 1.0e-10
  atol: 1.0e-12
ensemble:
  members: 6
  seed: 3
Y
}
config builtin $'  name: harmonic\n  params:\n    omega: 2.0' '[1.0, 0.0]'
config slow/task '  source: model.c' '[1.0]'
config fast/task '  source: model.c' '[1.0]'

# check FILE MODEL PARAMETER: the file's final states are MODEL's exact solution at t = 5
check() {
  "$PYTHON" - "$@" <<'PY' && pass "$1: $2 (parameter $3) solved exactly to 1e-7" || fail "$1"
import sys, h5py, numpy as np
path, model, p = sys.argv[1], sys.argv[2], float(sys.argv[3])
with h5py.File(path, "r") as f:
    x0, xT = f["members/initial_state"][...], f["members/final_state"][...]
t = 5.0
if model == "decay":
    want = x0 * np.exp(-p * t)
else:
    want = np.stack([x0[:, 0] * np.cos(p * t) + x0[:, 1] / p * np.sin(p * t),
                     -p * x0[:, 0] * np.sin(p * t) + x0[:, 1] * np.cos(p * t)], axis=1)
err = np.max(np.abs(xT - want))
print(f"{path}: {model} p={p}: x(5) of member 0 = {xT[0]}, exact {want[0]}, max error {err:.2e}")
sys.exit(0 if xT.shape == want.shape and err < 1e-7 else 1)
PY
}

# farm CASE CONFIG0 CONFIG1: both ranks' calls return 0 within the time limit (a hang is a
# failure here, not a blocked test)
farm() {
  local rc=0
  timeout -k 10 300 "$MPIEXEC" -n 2 "$TASK_FARM" "$2.yaml" "$1-0.h5" "$3.yaml" "$1-1.h5" \
    >"$1.out" 2>&1 || rc=$?
  cat "$1.out"
  [ "$rc" = 0 ] && pass "$1: both ranks finished with status 0" \
    || fail "$1: mpiexec exited $rc (124: it hung and was stopped)"
}

# A: a built-in model on rank 0, a compiled model.source on rank 1
farm A builtin fast/task
check A-0.h5 harmonic 2.0
check A-1.h5 decay 0.5
# B: two different model.source files, one per rank (fresh sources: nothing cached yet)
rm -rf cache && mkdir -m 700 cache
farm B slow/task fast/task
check B-0.h5 decay 0.1
check B-1.h5 decay 0.5
finish

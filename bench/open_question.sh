#!/usr/bin/env bash
# open_question.sh — the ensembles behind docs/OPEN_QUESTION.md: what happens after the wheel's
# nondeterministic two-fold (Szalai & Jeffrey 2014, Fig. 5 parameters) under
#   (a) random-choice exits, policies uniform (two independent seeds: the sampling floor) and
#       weighted                                  configs/open-question-{uniform,weighted}.yaml
#   (b) smoothing, eps -> 0, tiny random initial perturbations   configs/open-question-smoothed.yaml
#   (c) noise, sigma -> 0, on the smoothed wheel                 configs/open-question-noisy.yaml
#   (d) random-choice members traced densely (uniform, weighted) to t = 150
#   (e) smoothed and noisy members traced densely, one by one, to t = 150
# then postproc/open_question.py (distances with bootstrap intervals, figures).  Stages a and d
# use the event-driven Filippov integrator, b, c and e the smooth and stochastic ones; a stage
# not run keeps the results of an earlier run in OUT_DIR, which the analysis reads as well.
#
#   bench/open_question.sh [BUILD_DIR] [OUT_DIR]     e.g. bench/open_question.sh build-jeffrey
# Environment: MEMBERS (Filippov ensembles, default 4000), SMOOTH_MEMBERS (default 500),
# RANKS (default 2), EPS ("0.01 0.003 0.001 0.0003 0.0001 0.00001"), TINY_EPS ("0.01 0.001 0.00001":
# perturbation 1e-6 instead of eps), SIGMAS ("0.01 0.001 0.0001"), HORIZONS ("10 50": the
# smooth ensembles record final states, so each horizon T is a run), DENSE (members traced
# densely to t = 150 per variant, default 60), STAGES ("a b c d e").
# Stage e traces members one by one with the trajectory job (smooth ensembles keep only final
# states) for the phase-insensitive observables: landing on Sigma, return time, section.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
out=${2:-open-question-runs}
twofold=$(cd "$here" && realpath "$build/twofold")
members=${MEMBERS:-4000}
smooth_members=${SMOOTH_MEMBERS:-500}
horizons=${HORIZONS:-10 50}
ranks=${RANKS:-2}
stages=${STAGES:-a b c d e}
dense=${DENSE:-60}
export OMPI_MCA_rmaps_base_oversubscribe=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir -p "$out"
cd "$out"
run() { # config output sets...
  local cfg=$1 h5=$2; shift 2
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  echo "== $h5" >&2
  mpiexec -n "$ranks" "$twofold" run "$here/configs/$cfg" -o "$h5" --overwrite --json "${sets[@]}" \
    | tail -n 1 > "${h5%.h5}.json"
}
for stage in $stages; do
  case $stage in
    a)
      run open-question-uniform.yaml uniform.h5 ensemble.members=$members ensemble.seed=2014
      run open-question-uniform.yaml uniform-b.h5 ensemble.members=$members ensemble.seed=7
      run open-question-weighted.yaml weighted.h5 ensemble.members=$members ensemble.seed=2014
      # the map exit u -> state at t = 10, 50 (uniform u, no margin at the fold lines): which
      # Filippov continuation does a smoothed or noisy member follow?
      run open-question-uniform.yaml exit-map.h5 ensemble.members=$members exit.margin=0 \
        integrator.t_end=50 output.trajectory_samples=51 output.event_log=4
      ;;
    b)
      for T in $horizons; do
        for eps in ${EPS:-0.01 0.003 0.001 0.0003 0.0001 0.00001}; do
          run open-question-smoothed.yaml "smoothed-eps$eps-T$T.h5" ensemble.members=$smooth_members \
            model.smoothing.epsilon=$eps initial.spread=$eps integrator.t_end=$T
        done
        for eps in ${TINY_EPS:-0.01 0.001 0.00001}; do
          run open-question-smoothed.yaml "tiny-eps$eps-T$T.h5" ensemble.members=$smooth_members \
            model.smoothing.epsilon=$eps initial.spread=1e-6 integrator.t_end=$T
        done
      done
      ;;
    c)
      for T in $horizons; do
        for sigma in ${SIGMAS:-0.01 0.001 0.0001}; do
          run open-question-noisy.yaml "noisy-sigma$sigma-T$T.h5" ensemble.members=$smooth_members \
            model.noise.sigma=$sigma integrator.t_end=$T
        done
      done
      ;;
    d)
      run open-question-uniform.yaml dense-uniform.h5 ensemble.members=$dense integrator.t_end=150 \
        output.trajectory_samples=15001 output.event_log=8
      run open-question-weighted.yaml dense-weighted.h5 ensemble.members=$dense \
        integrator.t_end=150 output.trajectory_samples=15001 output.event_log=8
      ;;
    e)
      trace() { # name config sets...: members 0..dense-1 traced by the trajectory job
        local name=$1 cfg=$2; shift 2
        mkdir -p "dense-$name"
        echo "== dense-$name ($dense members)" >&2
        local sets=()
        for s in "$@"; do sets+=(--set "$s"); done
        seq 0 $((dense - 1)) | xargs -P "$ranks" -I{} "$twofold" run "$here/configs/$cfg" \
          --set job=trajectory --set ensemble.member={} --set integrator.t_end=150 \
          --set output.samples=15001 "${sets[@]}" -o "dense-$name/{}.h5" --overwrite --quiet
      }
      trace smoothed-eps0.0001 open-question-smoothed.yaml model.smoothing.epsilon=0.0001 \
        initial.spread=0.0001
      trace tiny-eps0.0001 open-question-smoothed.yaml model.smoothing.epsilon=0.0001 \
        initial.spread=1e-6
      trace noisy-sigma0.01 open-question-noisy.yaml model.noise.sigma=0.01
      trace noisy-sigma0.001 open-question-noisy.yaml model.noise.sigma=0.001
      ;;
    *)
      echo "open_question.sh: unknown stage '$stage' in STAGES (a b c d e)" >&2
      exit 2
      ;;
  esac
done
/usr/bin/python3 "$here/postproc/open_question.py" --runs . --figures "$here/docs"

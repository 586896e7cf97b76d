#!/usr/bin/env bash
# twofold.sh — the single entry point: deps, build, demo, test, bench.
#   ./twofold.sh demo     install what is missing, build, run the wheel Monte-Carlo (Fig. 5), write its figures
#   ./twofold.sh build    install what is missing, build; says where the executable is
#   ./twofold.sh test     install what is missing, build, run the whole CTest suite
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
BUILD=${TWOFOLD_BUILD_DIR:-$ROOT/build}
JOBS=${TWOFOLD_JOBS:-$(nproc 2>/dev/null || echo 2)}

PACKAGES=(build-essential cmake pkg-config petsc-dev libhdf5-openmpi-dev hdf5-tools
          libopenmpi-dev openmpi-bin libgsl-dev librandom123-dev libyaml-dev libssl-dev
          python3-h5py python3-numpy python3-scipy python3-matplotlib python3-sympy
          python3-pip python3-setuptools
          clang-format slurm-wlm munge iproute2)  # slurm-wlm, munge, iproute2: the private test clusters

say() { printf 'twofold.sh: %s\n' "$*" >&2; }

# Open MPI refuses root unless told, and the tests use more ranks than the 2 cores.
mpi_env() {
  if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
}

# Baselines the benchmarks compare against (not needed to build or test).
BENCH_PACKAGES=(libsundials-dev libboost-dev tcc)

cmd_deps() {
  local missing=() wanted=("${PACKAGES[@]}" "$@")
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

cmd_build() {
  local extra=()
  [ "${CI:-}" = "true" ] && extra+=(-DTWOFOLD_WERROR=ON)
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >/dev/null
  # the build's own exit status decides (a compile error must not leave an old binary in use);
  # the progress lines are filtered from its output only
  local log
  log=$(mktemp)
  if ! cmake --build "$BUILD" -j "$JOBS" >"$log" 2>&1; then
    grep -v '^\[' "$log" >&2 || true
    rm -f "$log"
    say "build failed"
    exit 1
  fi
  grep -v '^\[' "$log" || true
  rm -f "$log"
  say "built $BUILD/twofold (try: $BUILD/twofold configs; install: cmake --install $BUILD --prefix DIR)"
}

# The headline job: the Monte-Carlo through the wheel's nondeterministic two-fold (Fig. 5 of
# Szalai & Jeffrey 2014) on the local machine's ranks, plus the Fig. 4 parameter map.
cmd_demo() {
  cmd_deps
  cmd_build
  mpi_env
  mkdir -p "$ROOT/results"
  local ranks=2
  say "Fig. 5: ensemble through the two-fold on $ranks ranks -> results/wheel-fig5.h5"
  mpiexec -n "$ranks" "$BUILD/twofold" run "$ROOT/configs/wheel-fig5.yaml" \
    -o "$ROOT/results/wheel-fig5.h5" --overwrite --json
  /usr/bin/python3 "$ROOT/postproc/wheel_fig5.py" "$ROOT/results/wheel-fig5.h5" \
    "$ROOT/results/wheel-fig5.png"
  say "Fig. 4: where the two-fold is nondeterministic, on $ranks ranks -> results/wheel-fig4.h5"
  mpiexec -n "$ranks" "$BUILD/twofold" run "$ROOT/configs/wheel-fig4.yaml" \
    -o "$ROOT/results/wheel-fig4.h5" --overwrite --quiet
  /usr/bin/python3 "$ROOT/postproc/wheel_fig4.py" "$ROOT/results/wheel-fig4.h5" \
    "$ROOT/results/wheel-fig4.png"
  "$BUILD/twofold" info "$ROOT/results/wheel-fig5.h5"
  say "results: $ROOT/results/wheel-fig5.h5, figures: $ROOT/results/wheel-fig5.png, $ROOT/results/wheel-fig4.png"
}

cmd_test() {
  cmd_deps
  cmd_build
  mpi_env
  # ctest runs two tests at once, often two 2-rank jobs on 2 cores: a rank waiting in MPI
  # yields its core instead of spinning on it
  export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
  cd "$BUILD"
  # one computing test per core, and beside them the SLURM tests, which mostly wait on SLURM's
  # clocks, one at a time (tests/CMakeLists.txt: RESOURCE_GROUPS cores:1, RESOURCE_LOCK)
  printf '{"version": {"major": 1, "minor": 0}, "local": [{"cores": [{"id": "0", "slots": %d}]}]}\n' \
    "$JOBS" > ctest-resources.json
  ctest --output-on-failure -j "$((JOBS + 1))" --resource-spec-file ctest-resources.json "$@"
}

cmd_bench() {
  cmd_deps "${BENCH_PACKAGES[@]}"
  cmd_build
  mpi_env
  export OMPI_MCA_rmaps_base_oversubscribe=1
  bash "$ROOT/bench/run.sh" "$BUILD" "$@"
}

case "${1:-}" in
  deps) cmd_deps ;;
  build) cmd_deps; cmd_build ;;
  demo) cmd_demo ;;
  test) shift; cmd_test "$@" ;;
  bench) shift; cmd_bench "$@" ;;
  *) echo "usage: ./twofold.sh {deps|build|demo|test|bench}" >&2; exit 2 ;;
esac

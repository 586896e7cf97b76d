#!/usr/bin/env bash
# section_lanes.sh — bench section "lanes": DOPRI5 ensembles with members side by side
# (integrator.lanes 8, 16) against member by member and the boost::odeint peer
# (bench/lanes_bench.py).
#   bench/section_lanes.sh BUILD_DIR      (last stdout line: the section's JSON record)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 "$here/lanes_bench.py" "${1:?usage: section_lanes.sh BUILD_DIR}" \
  --members "${BENCH_LANES_MEMBERS:-4000}" --pairs "${BENCH_LANES_PAIRS:-5}"

#!/usr/bin/env bash
# section_equations.sh — bench section "equations": a model written as model.equations against
# the same built-in kernel, compiled by the system compiler and by tcc (bench/equations_model.py).
#   bench/section_equations.sh BUILD_DIR      (last stdout line: the section's JSON record)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 "$here/equations_model.py" "${1:?usage: section_equations.sh BUILD_DIR}" \
  "${BENCH_EQUATIONS_MEMBERS:-1000}"

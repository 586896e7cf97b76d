#!/usr/bin/env bash
# section_smooth.sh — bench section "smooth": smoothed Filippov members on PETSc TS (explicit
# against implicit as eps -> 0; one TS per member against one per batch), bench/smooth_batch.py.
#   bench/section_smooth.sh BUILD_DIR      (last stdout line: the section's JSON record)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 "$here/smooth_batch.py" "${1:?usage: section_smooth.sh BUILD_DIR}" 2

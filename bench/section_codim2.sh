#!/usr/bin/env bash
# section_codim2.sh — bench section "codim2": the event-driven codimension-2 friction engine
# against regularised friction on a stiff integrator (bench/codim2_ball.py), both in this run.
#   bench/section_codim2.sh BUILD_DIR      (last stdout line: the section's JSON record)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 "$here/codim2_ball.py" "${1:?usage: section_codim2.sh BUILD_DIR}"

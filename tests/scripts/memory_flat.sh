# memory_flat.sh — peak memory per rank does not grow with the number of members: the
# pending members are kept as runs (not a list of ids) and the rows a rank buffers between
# flushes stay within output.buffer_mb.  Before, a rank held 8 bytes per member for the
# pending list and every row computed in a flush interval (~150 bytes each here), so 10x the
# members (1e5 -> 1e6) added well over 100 MB; within the budget it adds nothing but noise.
source "$(dirname "$0")/lib.sh"
peak_kb() { # peak resident set of the command, in KB (the kernel's own count of the child)
  "$PYTHON" -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else -1)' "$@"
}
SET=(--set integrator.t_end=0.002 --set output.buffer_mb=4 --set output.flush_interval=1e9 --quiet)
small=$(peak_kb "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o small.h5 --set ensemble.members=100000 "${SET[@]}")
large=$(peak_kb "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o large.h5 --set ensemble.members=1000000 "${SET[@]}")
echo "peak RSS: 1e5 members $small KB, 1e6 members $large KB"
[ "$small" -gt 0 ] && [ "$large" -gt 0 ] || fail "a run failed"
# 900,000 more members at >= 8 bytes each for a list alone would be 7,000 KB; allow 4,000 KB
[ $((large - small)) -lt 4000 ] || fail "peak RSS grew by $((large - small)) KB from 1e5 to 1e6 members"
"$PYTHON" - <<'PY' || fail "the 1e6-member file is not complete"
import h5py, numpy as np
f = h5py.File("large.h5", "r")
assert f["members/done"][...].all() and (f["members/status"][...] == 1).all()  # 1: ok
assert f["members/t_final"][...].min() == f["members/t_final"][...].max() > 0
PY
finish

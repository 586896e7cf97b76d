# rank_independence.sh — the smoke ensemble gives bitwise identical files on 1, 2 and 3
# ranks and with any chunk size (every random number is keyed by member, not by rank).
source "$(dirname "$0")/lib.sh"
SET=(--set ensemble.members=300 --set integrator.t_end=1 --quiet)
mpirun_n 1 "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o r1.h5 "${SET[@]}"
mpirun_n 2 "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o r2.h5 "${SET[@]}" --set ensemble.chunk=7
mpirun_n 3 "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o r3.h5 "${SET[@]}" --set ensemble.chunk=1 \
  --set output.flush_interval=0.05
"$TWOFOLD" run "$CONFIGS/smoke.yaml" -o r0.h5 "${SET[@]}" --set ensemble.chunk=300
same_members r1.h5 r2.h5
same_members r1.h5 r3.h5
same_members r1.h5 r0.h5
# a memory budget of 2 KB per rank (a dozen rows) ends every round early: many rounds, same
# file; and a run stopped after 100 members of such rounds leaves its done members in many
# runs, which --resume finds and completes to the same file
mpirun_n 2 "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o rb.h5 "${SET[@]}" --set output.buffer_mb=0.002 \
  --json > rb.json
rounds=$("$PYTHON" -c 'import json,sys; print(json.loads(open("rb.json").read().splitlines()[-1])["flush_rounds"])')
# a row costs at least 150 bytes of budget here (5 columns, id, status, the flush's copies):
# at most 13 rows per rank and round, so at least 300 / 26 > 11 rounds (1 without a budget)
[ "$rounds" -ge 12 ] || fail "a 2 KB buffer should force at least 12 flush rounds for 300 members, saw $rounds"
same_members r1.h5 rb.h5
set +e
mpirun_n 2 "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o rs.h5 "${SET[@]}" --set output.buffer_mb=0.002 \
  --set ensemble.chunk=3 --stop-after 100
rc=$?
set -e
[ "$rc" = 3 ] || fail "--stop-after 100 should exit 3 (interrupted), got $rc"
mpirun_n 2 "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o rs.h5 "${SET[@]}" --set output.buffer_mb=0.002 \
  --set ensemble.chunk=3 --resume
same_members r1.h5 rs.h5
# and the members really differ from each other (the test would be vacuous otherwise)
"$PYTHON" - <<'PY' || fail "members are not distinct"
import h5py, numpy as np
x = h5py.File("r1.h5", "r")["members/final_state"][...]
assert len(np.unique(x[:, 0])) == x.shape[0], "duplicate final states"
PY
# fewer members than ranks: idle ranks still take part in every collective write
mpirun_n 3 "$TWOFOLD" run "$CONFIGS/smoke.yaml" -o few3.h5 --set ensemble.members=2 --quiet
"$TWOFOLD" run "$CONFIGS/smoke.yaml" -o few1.h5 --set ensemble.members=2 --quiet
same_members few1.h5 few3.h5
finish

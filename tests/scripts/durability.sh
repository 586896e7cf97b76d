# durability.sh — nothing a crash does to a results file is taken for a result.
#  1. Runs on 1 and 2 ranks are killed (SIGKILL) at moments drawn by a seeded RNG: just
#     before the k-th MPI-IO write of rank r (TWOFOLD_TEST_KILL_AT_WRITE=k@r), i.e. anywhere
#     inside HDF5's data and metadata writes, from file creation to the last flush.  Every
#     killed file is resumed (on 1 or 2 ranks) and must equal an uninterrupted run bitwise
#     (every /members dataset and /summary), and every member marked done before the kill must
#     survive --resume's verification (the done mask covers only rows already flushed).
#  2. Files damaged the two ways a crash used to damage them: a row marked done holding another
#     row's numbers (its initial state), and a chunk that no longer decompresses.  --resume
#     finds them (checksum, unreadable chunk), computes exactly those members again and ends
#     with the uninterrupted run's data.
#  3. --overwrite keeps the old file until the new one has its header: a run killed at its
#     first write leaves the old file byte for byte; a file too damaged to open is kept aside
#     by --resume (which starts again) and can be replaced by --overwrite.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"
CMP="$(dirname "$0")/h5compare.py"
SET=(--set ensemble.members=2000 --set integrator.t_end=0.3 --set output.flush_interval=0.01
     --quiet)
"$T" run "$CONFIGS/smoke.yaml" -o ref.h5 "${SET[@]}"

# How many MPI-IO writes a run makes (rounds follow the clock, so this is only the range the
# kill points are drawn from; a run that ends before its k-th write is counted, not failed).
writes() { grep -o 'made [0-9]* MPI-IO' "$1" | awk '{ if ($2 > m) m = $2 } END { print m }'; }
TWOFOLD_TEST_KILL_AT_WRITE=count "$T" run "$CONFIGS/smoke.yaml" -o count1.h5 "${SET[@]}" 2>count1.err
TWOFOLD_TEST_KILL_AT_WRITE=count mpirun_n 2 "$T" run "$CONFIGS/smoke.yaml" -o count2.h5 "${SET[@]}" 2>count2.err
n1=$(writes count1.err) n2=$(writes count2.err)
[ "${n1:-0}" -gt 10 ] && [ "${n2:-0}" -gt 10 ] || fail "write counts '$n1' '$n2'"

# kill plan: ranks, k, victim rank, ranks of the resume.  DURABILITY_KILLS="A B SEED" asks
# for A kills on 1 rank and B on 2 (a longer campaign than the test's default).
read -r k1 k2 seed <<<"${DURABILITY_KILLS:-6 4 20261124}"
plan=$("$PYTHON" -c "
import random, sys
n1, n2, k1, k2, seed = map(int, sys.argv[1:])
r = random.Random(seed)
for i in range(k1): print(1, r.randint(1, n1 * 9 // 10), 0, 1 + i % 2)
for i in range(k2): print(2, r.randint(1, n2 * 9 // 10), r.randint(0, 1), 1 + (i + 1) % 2)
" "$n1" "$n2" "$k1" "$k2" "$seed")
done_count() {
  "$PYTHON" -c "import h5py,sys; print(int(h5py.File(sys.argv[1],'r')['members/done'][...].sum()))" "$1" 2>/dev/null || echo unreadable
}
killed=0 finished=0 survived=0
while read -r ranks k victim rranks <&3; do
  rm -f k.h5 k.h5.creating
  rc=0
  TWOFOLD_TEST_KILL_AT_WRITE="$k@$victim" mpirun_n "$ranks" "$T" run "$CONFIGS/smoke.yaml" -o k.h5 "${SET[@]}" \
    >/dev/null 2>kill.err || rc=$?
  if [ "$rc" = 0 ]; then finished=$((finished + 1)); elif [ "$rc" = 137 ]; then killed=$((killed + 1)); else
    fail "kill at write $k of rank $victim/$ranks: exit $rc ($(head -c 300 kill.err))"; continue; fi
  before=$(done_count k.h5)
  rc=0
  mpirun_n "$rranks" "$T" run "$CONFIGS/smoke.yaml" -o k.h5 "${SET[@]}" --resume --json >resume.json 2>resume.err || rc=$?
  [ "$rc" = 0 ] || { fail "resume after kill at write $k of rank $victim/$ranks: exit $rc $(cat resume.err)"; continue; }
  kept=$(grep -o '"resumed_from": [0-9]*' resume.json | grep -o '[0-9]*$')
  what="kill at write $k of rank $victim/$ranks (done before: $before, kept: $kept), resumed on $rranks"
  if grep -q "did not verify" resume.err; then fail "$what: $(cat resume.err)"; continue; fi
  if [ "$before" != unreadable ] && [ "$before" != "$kept" ]; then fail "$what: members lost"; continue; fi
  if out=$("$PYTHON" "$CMP" ref.h5 k.h5); then survived=$((survived + 1)); else fail "$what: $out"; fi
done 3<<<"$plan"
total=$((k1 + k2))
[ $((2 * killed)) -ge "$total" ] || fail "only $killed of $total runs were killed (is the hook built in?)"
[ "$survived" = "$total" ] \
  && pass "$total runs ($k1 on 1 rank, $k2 on 2; $killed killed, $finished ended first) resumed to the reference bitwise" \
  || fail "only $survived of $total killed runs resumed to the reference"

# 2. damage of the kinds a crash used to leave; the file is marked incomplete as a killed one is
cp ref.h5 row.h5
cp ref.h5 chunk.h5
"$PYTHON" - <<'EOF'
import h5py
with h5py.File("row.h5", "r+") as f:  # member 7 marked done but holding its initial state
    f["members/final_state"][7] = f["members/initial_state"][7]
    f.attrs["complete"] = 0
with h5py.File("chunk.h5", "r") as f:
    info = f["members/final_state"].id.get_chunk_info(0)
with open("chunk.h5", "r+b") as fh:  # garbage in the middle of the compressed chunk
    fh.seek(info.byte_offset + info.size // 2)
    fh.write(b"\xff" * 64)
with h5py.File("chunk.h5", "r+") as f:
    f.attrs["complete"] = 0
EOF
# the chunk holds all 2000 rows of final_state (chunks are 256 KiB uncompressed)
for case in "row 1" "chunk 2000"; do
  set -- $case
  rc=0
  mpirun_n 2 "$T" run "$CONFIGS/smoke.yaml" -o "$1.h5" "${SET[@]}" --resume --json >dmg.json 2>dmg.err || rc=$?
  computed=$(grep -o '"computed": [0-9]*' dmg.json | grep -o '[0-9]*$')
  if [ "$rc" = 0 ] && [ "$computed" = "$2" ] && grep -q "did not verify" dmg.err \
     && "$PYTHON" "$CMP" ref.h5 "$1.h5" >/dev/null; then
    pass "damaged $1: found, $computed members computed again, equal to the reference"
  else
    fail "damaged $1: exit $rc, computed $computed, $(cat dmg.err) $("$PYTHON" "$CMP" ref.h5 "$1.h5")"
  fi
done

# A run killed during its first metadata flush can leave the /members link on disk without the
# group's header (seen once in a robustness series: "cannot create group /members").  Such a
# file is kept aside as damaged and the run starts again.
cp ref.h5 group.h5
"$PYTHON" - <<'EOF'
import h5py
with h5py.File("group.h5", "r") as f:
    addr = h5py.h5o.get_info(f["members"].id).addr
with open("group.h5", "r+b") as fh:  # the group's object header overwritten
    fh.seek(addr)
    fh.write(b"\xff" * 16)
with h5py.File("group.h5", "r+") as f:
    f.attrs["complete"] = 0
EOF
for r in 1 2; do
  cp group.h5 "group$r.h5"
  rc=0
  mpirun_n "$r" "$T" run "$CONFIGS/smoke.yaml" -o "group$r.h5" "${SET[@]}" --resume --json >grp.json 2>grp.err || rc=$?
  computed=$(grep -o '"computed": [0-9]*' grp.json | grep -o '[0-9]*$')
  if [ "$rc" = 0 ] && [ "$computed" = 2000 ] && grep -q "/members cannot be opened" grp.err \
     && [ -f "group$r.h5.damaged" ] && "$PYTHON" "$CMP" ref.h5 "group$r.h5" >/dev/null; then
    pass "damaged /members header, resumed on $r rank(s): kept aside, 2000 members computed again, equal to the reference"
  else
    fail "damaged /members header on $r rank(s): exit $rc, computed $computed, $(cat grp.err) $("$PYTHON" "$CMP" ref.h5 "group$r.h5")"
  fi
done

# 3. --overwrite
cp ref.h5 old.h5 && cp ref.h5 old.copy
rc=0
TWOFOLD_TEST_KILL_AT_WRITE=1 "$T" run "$CONFIGS/smoke.yaml" -o old.h5 "${SET[@]}" --set ensemble.seed=7 \
  --overwrite 2>/dev/null || rc=$?
[ "$rc" = 137 ] && cmp -s old.h5 old.copy && pass "--overwrite killed at its first write left the old file intact" \
  || fail "--overwrite killed at its first write: exit $rc, old file changed"
# a file HDF5 cannot open at all (its metadata torn by a kill): --resume keeps it aside as
# torn.h5.damaged, says so, and starts again; --overwrite replaces it
head -c 1000 ref.h5 >torn.h5 && cp torn.h5 torn.copy
"$T" run "$CONFIGS/smoke.yaml" -o torn.h5 "${SET[@]}" --resume 2>torn.err \
  && grep -q "kept as 'torn.h5.damaged', starting again" torn.err && cmp -s torn.h5.damaged torn.copy \
  && "$PYTHON" "$CMP" ref.h5 torn.h5 >/dev/null \
  && pass "--resume of a file too damaged to open keeps it aside and starts again" \
  || fail "--resume of a damaged file: $(cat torn.err)"
head -c 1000 ref.h5 >torn.h5
"$T" run "$CONFIGS/smoke.yaml" -o torn.h5 "${SET[@]}" --overwrite \
  && "$PYTHON" "$CMP" ref.h5 torn.h5 >/dev/null && [ ! -e torn.h5.creating ] \
  && pass "--overwrite replaces a file too damaged to open" || fail "--overwrite of a damaged file"
finish

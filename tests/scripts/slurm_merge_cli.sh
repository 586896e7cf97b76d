# slurm_merge_cli.sh — `twofold merge` and `twofold slurm` without a scheduler: part files
# of 1, 2 and 3 ranks merge to the data of one run; every inconsistency is refused with the
# task or file named and nothing written; bad slurm options are refused.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"
S=(--set ensemble.members=2000 --set integrator.t_end=0.5 --quiet)
C="$CONFIGS/smoke.yaml"
"$T" run "$C" -o ref.h5 "${S[@]}"
# parts computed on different rank counts, merged in any order
"$T" run "$C" -o p0.h5 "${S[@]}" --part 0/3
mpirun_n 2 "$T" run "$C" -o p1.h5 "${S[@]}" --part 1/3
mpirun_n 3 "$T" run "$C" -o p2.h5 "${S[@]}" --part 2/3
cp p1.h5 p1.orig
"$T" merge out.h5 p2.h5 p0.h5 p1.h5 --json > merge.json
grep -q '"status": "complete"' merge.json && grep -q '"members": 2000' merge.json &&
  pass "merge JSON: $(cat merge.json)" || fail "merge JSON: $(cat merge.json)"
same_members ref.h5 out.h5
"$PYTHON" -c "import h5py,sys; f=h5py.File('out.h5','r'); a=f.attrs; \
sys.exit(0 if a['complete']==1 and 'part' not in a and 'parts' not in a and 'resumed' not in a else 1)" &&
  pass "merged file is complete and carries no part attributes" || fail "merged attributes"
"$PYTHON" -c "import h5py,sys; v=h5py.File('out.h5','r').attrs['merged_from']; \
sys.exit(0 if list(v)==['p2.h5','p0.h5','p1.h5'] and v.dtype.kind=='O' else 1)" &&
  "$T" info out.h5 | grep -qx "merged_from: p2.h5,p0.h5,p1.h5" &&
  pass "merged_from: the parts' paths as an array of strings, printed by twofold info" ||
  fail "merged_from: $("$T" info out.h5 | grep merged_from)"

# many chunks: whole chunks of one part are copied as stored, shared ones row by row
B=(--set ensemble.members=60000 --set integrator.t_end=0.001 --quiet)
"$T" run "$C" -o bref.h5 "${B[@]}"
for k in 0 1 2; do "$T" run "$C" -o b$k.h5 "${B[@]}" --part $k/3; done
"$T" merge b.h5 b1.h5 b0.h5 b2.h5 --quiet && same_members bref.h5 b.h5

# refusals: nothing written, parts untouched
sum_before=$(md5sum p0.h5 p1.h5 p2.h5)
expect_fail 2 "task 1 \(part 1/3, members 666-1332\): no usable part file" -- "$T" merge m1.h5 p0.h5 p2.h5
"$T" run "$C" -o s1.h5 "${S[@]}" --part 1/3 --set ensemble.seed=7
expect_fail 2 "different configs .*ensemble.seed '20141' vs '7'" -- "$T" merge m2.h5 p0.h5 s1.h5 p2.h5
rc=0; "$T" run "$C" -o i1.h5 "${S[@]}" --part 1/3 --stop-after 100 --set output.flush_interval=0.01 || rc=$?
[ "$rc" = 3 ] || fail "interrupted part exited $rc"
expect_fail 2 "task 1 .*'i1.h5' has only [0-9]+ of 667 members done.*--part 1/3 --resume" -- \
  "$T" merge m3.h5 p0.h5 i1.h5 p2.h5
expect_fail 2 "both hold part 1/3" -- "$T" merge m4.h5 p0.h5 p1.h5 p1.orig p2.h5
echo "not hdf5" > junk.h5
expect_fail 2 "'junk.h5' is not a readable HDF5 file" -- "$T" merge m5.h5 p0.h5 junk.h5 p1.h5 p2.h5
expect_fail 2 "'nothere.h5': No such file" -- "$T" merge m6.h5 p0.h5 p1.h5 p2.h5 nothere.h5
"$T" run "$C" -o o1.h5 --set ensemble.members=500 --quiet --part 1/2
expect_fail 2 "holds 500 members|different configs" -- "$T" merge m7.h5 p0.h5 o1.h5 p2.h5
cp ref.h5 keep.h5
expect_fail 2 "output 'keep.h5' already exists" -- "$T" merge keep.h5 p0.h5 p1.h5 p2.h5
expect_fail 2 "one of the part files" -- "$T" merge p0.h5 p0.h5 p1.h5 p2.h5 --overwrite
cmp -s ref.h5 keep.h5 && pass "existing output untouched" || fail "keep.h5 changed"
ls m?.h5 m?.h5.merging-* >/dev/null 2>&1 && fail "a refused merge left files: $(ls m?.h5*)" ||
  pass "refused merges wrote nothing"
[ "$sum_before" = "$(md5sum p0.h5 p1.h5 p2.h5)" ] && pass "part files unchanged" ||
  fail "part files changed"
"$T" merge keep.h5 p0.h5 p1.h5 p2.h5 --overwrite --quiet && same_members ref.h5 keep.h5
"$T" merge -o minus-o.h5 p0.h5 p1.h5 p2.h5 --quiet && same_members ref.h5 minus-o.h5
expect_fail 2 "usage: twofold merge" -- "$T" merge only.h5
"$T" merge m8.h5 p0.h5 --json > fail.json 2>/dev/null || true
grep -q '"status": "error", "error": "cannot merge' fail.json && pass "merge error JSON" ||
  fail "merge error JSON: $(cat fail.json)"

# twofold slurm: bad options and configs are refused before anything is written
expect_fail 2 "--array: expected a positive integer" -- "$T" slurm "$C" --array 0 --dry-run
expect_fail 2 "--time: expected a SLURM time" -- "$T" slurm "$C" --time 1h --dry-run
expect_fail 2 "not longer than --signal-lead" -- "$T" slurm "$C" --time 3 --dry-run
expect_fail 2 "cannot be split" -- "$T" slurm "$CONFIGS/wheel-twofold.yaml" --array 2 --dry-run
expect_fail 2 "ensemble.memebrs|did you mean" -- "$T" slurm "$C" --set ensemble.memebrs=5 --dry-run
[ ! -e slurm-smoke ] && pass "no scripts written for refused submissions" || fail "slurm-smoke/ written"
"$T" slurm "$C" --ntasks 4 --time 2:00:00 --requeue --dir jobs -o big.h5 --dry-run \
  --set ensemble.members=100000 > dry.txt
grep -q "^#SBATCH --ntasks=4$" dry.txt && grep -q '^#SBATCH --requeue$' dry.txt &&
  grep -q '^#SBATCH --signal=B:USR1@300$' dry.txt && grep -q "ensemble.members=100000" dry.txt &&
  grep -q 'srun --mpi=pmix' dry.txt && [ ! -e jobs ] && [ ! -e big.logs ] &&
  pass "dry run prints the script and writes nothing" || fail "dry run: $(ls -d jobs big.logs) $(cat dry.txt)"
# the printed script is the one written without --dry-run
sed -n '/^# ---- .*smoke.sbatch$/,/^# ---- dry run/p' dry.txt | sed '1d;$d' > printed.sbatch
mkdir -p fakebin # an sbatch that records what it was given
printf '#!/bin/sh\necho "$*" >> %s/sbatch.calls\necho 4242\n' "$PWD" > fakebin/sbatch
chmod +x fakebin/sbatch
PATH=$PWD/fakebin:$PATH "$T" slurm "$C" --ntasks 4 --time 2:00:00 --requeue --dir jobs -o big.h5 \
  --set ensemble.members=100000 > submitted.txt
cmp -s jobs/smoke.sbatch printed.sbatch && bash -n jobs/smoke.sbatch && [ -d big.logs ] &&
  grep -qxF -e "--parsable $PWD/jobs/smoke.sbatch" sbatch.calls &&
  grep -qx "logs: $PWD/big.logs/" submitted.txt &&
  pass "without --dry-run the printed script is written and submitted, the log directory made" ||
  fail "written script or submission: $(diff printed.sbatch jobs/smoke.sbatch) $(cat sbatch.calls submitted.txt)"
grep -q "^#SBATCH --output=$PWD/big.logs/smoke-%j.log$" printed.sbatch &&
  pass "the log goes next to the output: big.logs/" || fail "log line: $(grep -e --output printed.sbatch)"
# module lines run before set -u, in a login shell where `module` is defined
"$T" slurm "$C" --module openmpi --module petsc -o mod.h5 --dry-run > mod.txt
[ "$(sed -n 2p mod.txt)" = '#!/bin/bash -l' ] &&
  [ "$(grep -n -e '^module load' -e '^set -u$' mod.txt | cut -d: -f2- | tr '\n' '|')" = "module load 'openmpi'|module load 'petsc'|set -u|" ] &&
  pass "modules: bash -l, module load lines before set -u" || fail "module lines: $(head -20 mod.txt)"
expect_fail 2 "--merge-time: expected a SLURM time" -- "$T" slurm "$C" --array 2 --merge-time soon --dry-run
"$T" slurm "$C" --array 2 --time 4:00:00 --merge-time 0:10:00 -o m.h5 --dry-run > mt.txt
grep -q '^#SBATCH --time=0:10:00$' mt.txt && [ "$(grep -c '^#SBATCH --time=4:00:00$' mt.txt)" = 1 ] &&
  pass "--merge-time: the merge job's own limit" || fail "merge time: $(grep -e --time mt.txt)"
# the script's own settings from the environment: not whole numbers are refused before any launch
expect_fail 2 "TWOFOLD_SRUN_WAIT must be a whole number, got '1m'" -- \
  env TWOFOLD_SRUN_WAIT=1m TWOFOLD=true bash printed.sbatch
for tpl in ensemble requeue; do
  expect_fail 2 "TWOFOLD_RELAUNCHES must be a whole number, got '-1'" -- \
    env TWOFOLD_RELAUNCHES=-1 TWOFOLD=true bash "$SOURCE_DIR/cluster/$tpl.sbatch" "$C" tpl.h5
done
[ ! -e big.h5 ] && [ ! -e tpl.h5 ] && pass "nothing launched or written for them" || fail "a file was written"
# hostile names: a value that would break out of an #SBATCH line or a shell word is refused,
# a module name is one quoted word
cp "$C" "$(printf 'evil\ntouch INJECTED.yaml')"
expect_fail 2 "cannot go into a batch script" -- "$T" slurm "$(printf 'evil\ntouch INJECTED.yaml')" --dry-run
cp "$C" "two words.yaml"
expect_fail 2 "config file's name 'two words' cannot go into a batch script" -- "$T" slurm "two words.yaml" --dry-run
expect_fail 2 "script directory .* cannot go into a batch script" -- "$T" slurm "$C" --dir "50%" --dry-run
expect_fail 2 "cannot go on an #SBATCH line" -- "$T" slurm "$C" --partition "a b" --dry-run
"$T" slurm "$C" --module 'gcc; touch INJECTED' --dir mods --dry-run > mods.txt
sed -n '/^# ---- .*smoke.sbatch$/,/^# ---- dry run/p' mods.txt | sed '1d;$d' > mods.sbatch
grep -q "^module load 'gcc; touch INJECTED'$" mods.txt && bash -n mods.sbatch &&
  pass "a module name is one quoted word" || fail "module line: $(grep module mods.txt)"
[ ! -e INJECTED ] && pass "nothing injected" || fail "INJECTED exists"
finish

# slurm_merge_fail.sh — a failed array task on a real (private, single-node) SLURM, with the
# templates in cluster/ (submit-array.sh, array.sbatch, merge.sbatch): task 1 of 3 cannot
# write its part file and fails; the merge job that follows the array names task 1, fails,
# writes nothing and leaves the good part files as they were.  Rerunning task 1 alone and
# the merge then gives the data of one uninterrupted run.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
T="$TWOFOLD"
: "${SOURCE_DIR:?}"
CL="$SOURCE_DIR/cluster"
slurm_start
SET=(--set ensemble.members=3000 --set integrator.t_end=1)

# Task 1's part file is in the way (a directory), so its run fails with status 2.
mkdir -p fail.parts/part-1-of-3.h5
out=$(MERGE_TIME=7 "$CL/submit-array.sh" 3 "$CONFIGS/smoke.yaml" fail.h5 --time=5 --signal=B:USR1@60 \
  -- "${SET[@]}")
echo "$out"
array=$(echo "$out" | sed -n 's/^submitted array job \([0-9]*\) .*/\1/p')
merge=$(echo "$out" | sed -n 's/.* merge job \([0-9]*\) .*/\1/p')
[ -n "$array" ] && [ -n "$merge" ] || fail "no job ids in: $out"
# the merge has its own time limit (MERGE_TIME), not the array's
[ "$(slurm_job_field "$merge" TimeLimit)" = 00:07:00 ] && pass "the merge job's own --time (7 min)" ||
  fail "merge TimeLimit $(slurm_job_field "$merge" TimeLimit), MERGE_TIME=7"
"$T" run "$CONFIGS/smoke.yaml" -o ref.h5 "${SET[@]}" --quiet # meanwhile: the reference
slurm_wait_job "$merge" 120

state1=$(scontrol -o show job "${array}_1" | tr ' ' '\n' | sed -n 's/^JobState=//p')
[ "$state1" = FAILED ] && pass "task 1 failed" || fail "task 1: $state1"
for k in 0 2; do
  s=$(scontrol -o show job "${array}_$k" | tr ' ' '\n' | sed -n 's/^JobState=//p')
  [ "$s" = COMPLETED ] && pass "task $k completed" || fail "task $k: $s"
done
mstate=$(slurm_job_field "$merge" JobState)
mexit=$(slurm_job_field "$merge" ExitCode)
[ "$mstate" = FAILED ] && [ "$mexit" = 2:0 ] && pass "merge job failed with status 2" ||
  fail "merge job: $mstate $mexit"
mlog=$(cat fail.logs/merge-"$merge".log) # logs next to the output
ls fail.logs/task-"$array"_[012].log >/dev/null && pass "task logs next to the output (fail.logs/)" ||
  fail "task logs: $(ls fail.logs)"
echo "$mlog" | sed 's/^/  merge log: /'
grep -q 'task 1 (part 1/3, members 1000-1999)' <<<"$mlog" && pass "the merge names task 1" ||
  fail "the merge log does not name task 1"
grep -q 'task [02] ' <<<"$mlog" && fail "the merge blames a task that succeeded" || true
[ ! -e fail.h5 ] && pass "no merged file written" || fail "fail.h5 exists after a failed merge"
ls fail.h5.merging-* >/dev/null 2>&1 && fail "temporary merge file left behind" || true

# Nothing else is lost: the good parts are complete and unchanged by the failed merge.
sums=$(md5sum fail.parts/part-0-of-3.h5 fail.parts/part-2-of-3.h5)
for k in 0 2; do
  "$T" info "fail.parts/part-$k-of-3.h5" | grep -q 'members: 3000; by status: pending 2000 ok 1000$' &&
    pass "part $k holds its 1000 members" || fail "part $k: $("$T" info "fail.parts/part-$k-of-3.h5")"
done

# Recovery: task 1 alone, then the merge again.
rmdir fail.parts/part-1-of-3.h5
rerun=$(sbatch --parsable --array=1 --output=task-%A_%a.log "$CL/array.sbatch" 3 \
  "$CONFIGS/smoke.yaml" fail.h5 "${SET[@]}")
merge2=$(sbatch --parsable --dependency=afterany:"$rerun" "$CL/merge.sbatch" fail.h5 3)
slurm_wait_job "$merge2" 120
[ "$(slurm_job_field "$merge2" JobState)" = COMPLETED ] && pass "merge after rerunning task 1" ||
  fail "second merge: $(cat twofold-merge-"$merge2".log task-*.log)"
[ "$sums" = "$(md5sum fail.parts/part-0-of-3.h5 fail.parts/part-2-of-3.h5)" ] &&
  pass "good part files untouched" || fail "part files changed"
same_members ref.h5 fail.h5

# A step that srun cannot launch: srun then exits 0 without running anything (slurm 22.05 when
# PMIx cannot make the step's directory).  The scripts judge by the file, not the launcher:
# the job fails, naming the file that is not complete.  The step's directory is put in the
# way before the held job is released.
step_in_the_way() { mkdir -p "$SLURM_TEST_DIR/tmp/spmix_appdir_$(id -u)_$1.0"; scontrol release "$1"; }
out=$("$T" slurm "$CONFIGS/smoke.yaml" --ntasks 1 --time 5 --signal-lead 60 --dir stale \
  --sbatch --hold -o stale.h5 "${SET[@]}") || fail "twofold slurm: $out"
gen=$(echo "$out" | sed -n 's/^submitted job \([0-9]*\) .*/\1/p')
tpl=$(sbatch --parsable --hold --ntasks=1 --time=5 --output=stale-tpl-%j.log \
  "$CL/ensemble.sbatch" "$CONFIGS/smoke.yaml" stale-tpl.h5 "${SET[@]}")
if [ -n "$gen" ] && [ -n "$tpl" ]; then
  step_in_the_way "$gen"
  step_in_the_way "$tpl"
  slurm_wait_job "$gen" 120
  slurm_wait_job "$tpl" 120
  for job in "$gen:stale.logs/*-$gen.log:stale.h5" "$tpl:stale-tpl-$tpl.log:stale-tpl.h5"; do
    IFS=: read -r id log file <<<"$job"
    text=$(cat $log 2>/dev/null || true)
    state=$(slurm_job_field "$id" JobState)
    if [ "$state" = FAILED ] && grep -q "launch failed" <<<"$text" &&
       grep -q "the launcher exited 0 but '$file' is not complete" <<<"$text"; then
      pass "job $id: srun launched nothing and exited 0; the job failed, naming $file"
    else
      fail "job $id ($file): state $state; log: $text"
    fi
  done
else
  fail "no job ids: '$out', '$tpl'"
fi
finish

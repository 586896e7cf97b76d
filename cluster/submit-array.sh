#!/bin/bash
# Submits CONFIG as a job array of N tasks and a merge job after them (the shell version of
# `twofold slurm CONFIG --array N`).
#
#   cluster/submit-array.sh N CONFIG OUT.h5 [sbatch options --] [run options...]
#   e.g. cluster/submit-array.sh 16 configs/wheel-fig5.yaml wheel.h5 --ntasks=4 --time=2:00:00 -- \
#          --set ensemble.members=100000
# Logs go next to the output, into OUT.logs/ (made here: sbatch opens them before the job runs);
# the merge job's time limit is MERGE_TIME (default 0:30:00), whatever the array's is.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
N=${1:?usage: submit-array.sh N CONFIG OUT.h5 [sbatch options --] [run options]}
CONFIG=${2:?config}
OUT=${3:?output}
shift 3
sbatch_opts=()
if [[ " $* " == *" -- "* ]]; then
  while [ "$1" != -- ]; do sbatch_opts+=("$1"); shift; done
  shift
fi
logs=${OUT%.h5}.logs
mkdir -p "$logs"
array=$(sbatch --parsable --array=0-$((N - 1)) --output="$logs/task-%A_%a.log" \
  ${sbatch_opts[@]+"${sbatch_opts[@]}"} "$here/array.sbatch" "$N" "$CONFIG" "$OUT" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --dependency=afterany:"$array" --time="${MERGE_TIME:-0:30:00}" \
  --output="$logs/merge-%j.log" "$here/merge.sbatch" "$OUT" "$N")
echo "submitted array job $array ($N tasks) and merge job ${merge%%;*} -> $OUT"
echo "logs: $logs/"

# disk_full.sh — the output's file system fills up (a tmpfs of 2 MB, or 640 kB), on 1 and 2 ranks: a clear
# error, every rank exits with status 6, the output cannot be written (each run under `timeout 600`: a hang fails the test,
# a machine ten times slower than usual does not),
# nothing marked done that is not in the file, and --resume completes, equal to an
# uninterrupted run, once there is room.  Both ways a full disk is met are tested: the space
# check before each flush round (the usual one: the run's own growth), and a write that fails
# anyway (TWOFOLD_TEST_NO_SPACE_CHECK turns the check off), which aborts the job.  Last, a run
# that cannot even write its header on the full disk leaves the old file it was to --overwrite.
# A file-size limit (ulimit -f) is met the same way.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"
CMP="$(dirname "$0")/h5compare.py"
if [ "$(id -u)" != 0 ]; then echo "SKIP: mounting a tmpfs needs root"; exit 0; fi
D="$WORK/small"
mkdir -p "$D"
if ! mount -t tmpfs -o size=640k tmpfs "$D"; then echo "SKIP: cannot mount a tmpfs on $D"; exit 0; fi
trap 'umount "$D"' EXIT
# the finished file takes about 940 kB: a write fails on a 640 kB file system however few
# flush rounds a fast machine makes (at 2 MB only their bloat filled it)
SET=(--set ensemble.members=20000 --set integrator.t_end=0.3 --set output.flush_interval=0.05
     --quiet)
"$T" run "$CONFIGS/smoke.yaml" -o ref.h5 "${SET[@]}"

# rows marked done in a file equal the reference's rows (an independent run, not the engine's
# word); prints the number of done rows, or "unreadable" (a file left as a crash leaves it:
# only --resume's repair makes it readable)
done_rows_correct() {
  "$PYTHON" - "$@" <<'EOF' 2>/dev/null || echo unreadable
import sys
import h5py
import numpy as np
f, ref = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2] if len(sys.argv) > 2 else "ref.h5", "r")
done = f["members/done"][...].astype(bool)
for name in ("final_state", "initial_state", "t_final", "steps", "status"):
    if not np.array_equal(f["members/" + name][...][done], ref["members/" + name][...][done]):
        print("wrong", name)
        sys.exit(0)
print(int(done.sum()))
EOF
}

for ranks in 1 2; do
  for way in check abort; do
    rm -f "$D"/*
    # the check refuses a flush that may not fit, so it needs room for some rows; a write that
    # fails needs a file system smaller than the finished file
    if [ "$way" = check ]; then mount -o remount,size=2m "$D"; else mount -o remount,size=640k "$D"; fi
    env=()
    [ "$way" = abort ] && env=(TWOFOLD_TEST_NO_SPACE_CHECK=1)
    rc=0
    env "${env[@]}" timeout 600 "$MPIEXEC" -n "$ranks" "$T" run "$CONFIGS/smoke.yaml" -o "$D/full.h5" \
      "${SET[@]}" >out.txt 2>err.txt || rc=$?
    what="full disk ($way, $ranks rank(s))"
    if [ "$way" = check ]; then msg="file system has [0-9]+ bytes free and the next flush may need"
    else msg="writing '$D/full.h5' failed .*file system full"; fi
    if [ "$rc" != 6 ]; then fail "$what: exit $rc, expected 6 (the output cannot be written): $(head -c 400 err.txt)"
    elif ! grep -Eq "$msg" err.txt; then fail "$what: no clear error: $(head -c 400 err.txt)"
    elif grep -Eq "Segmentation|signal [0-9]+" err.txt; then fail "$what: crashed: $(head -c 400 err.txt)"
    else pass "$what: exit 6, $(grep -Eo "$msg" err.txt | head -1)"; fi
    rows=$(done_rows_correct "$D/full.h5")
    case "$rows" in
      wrong*) fail "$what: rows marked done differ from the reference: $rows" ;;
      unreadable) [ "$way" = abort ] && pass "$what: file left as a crash leaves it" \
                    || fail "$what: file unreadable after a clean stop" ;;
      *) pass "$what: $rows rows marked done, all equal to the reference" ;;
    esac
    mount -o remount,size=64m "$D"
    rc=0
    timeout 600 "$MPIEXEC" -n "$ranks" "$T" run "$CONFIGS/smoke.yaml" -o "$D/full.h5" "${SET[@]}" --resume \
      --json >resume.json 2>resume.err || rc=$?
    kept=$(grep -o '"resumed_from": [0-9]*' resume.json | grep -o '[0-9]*$')
    if [ "$rc" = 0 ] && ! grep -q "did not verify" resume.err && out=$("$PYTHON" "$CMP" ref.h5 "$D/full.h5"); then
      pass "$what: --resume with room kept $kept members and completed equal to the reference"
    else
      fail "$what: --resume exit $rc, kept $kept: $(cat resume.err) ${out:-}"
    fi
  done
done

# a file-size limit (ulimit -f) met while writing is a full disk too: a message, not SIGXFSZ
# (which would kill the ranks and lose the file under mpiexec), the flushed rows kept, and
# --resume without the limit completes.  4 MiB: below a few MiB Open MPI's own shared-memory
# files exceed the limit and MPI_Init fails before twofold runs; 120000 members make a file of
# about 5.5 MB, so the limit is met however often the run flushes.
FSET=(--set ensemble.members=120000 --set integrator.t_end=0.3 --set output.flush_interval=0.05 --quiet)
"$MPIEXEC" -n 2 "$T" run "$CONFIGS/smoke.yaml" -o fsize-ref.h5 "${FSET[@]}"
what="file size limit (2 ranks)"
rc=0
(ulimit -f 4096; exec timeout 600 "$MPIEXEC" -n 2 "$T" run "$CONFIGS/smoke.yaml" -o fsize.h5 "${FSET[@]}") \
  >out.txt 2>err.txt || rc=$?
if [ "$rc" != 6 ]; then fail "$what: exit $rc, expected 6 (the output cannot be written): $(grep -v PMIX err.txt | head -c 400)"
elif ! grep -q "file size limit (ulimit -f: 4194304 bytes)" err.txt; then fail "$what: no clear error: $(head -c 400 err.txt)"
else pass "$what: exit 6, $(grep -o "writing .* failed ([^)]*)" err.txt | head -1)"; fi
[ -f fsize.h5 ] && pass "$what: the results file exists" || fail "$what: the results file is gone"
rows=$(done_rows_correct fsize.h5 fsize-ref.h5)
case "$rows" in
  wrong*) fail "$what: rows marked done differ from the reference: $rows" ;;
  *) pass "$what: $rows rows marked done, none wrong" ;;
esac
rc=0
timeout 600 "$MPIEXEC" -n 2 "$T" run "$CONFIGS/smoke.yaml" -o fsize.h5 "${FSET[@]}" --resume \
  >/dev/null 2>resume.err || rc=$?
if [ "$rc" = 0 ] && out=$("$PYTHON" "$CMP" fsize-ref.h5 fsize.h5); then
  pass "$what: --resume without the limit completed equal to the reference"
else
  fail "$what: --resume exit $rc: $(cat resume.err) ${out:-}"
fi

# the disk full before the header: the old file stays, byte for byte
cp "$D/full.h5" old.copy
dd if=/dev/zero of="$D/filler" bs=4k 2>/dev/null || true
rc=0
timeout 600 "$MPIEXEC" -n 2 "$T" run "$CONFIGS/smoke.yaml" -o "$D/full.h5" "${SET[@]}" --set ensemble.seed=7 \
  --overwrite >out.txt 2>err.txt || rc=$?
if [ "$rc" = 6 ] && cmp -s "$D/full.h5" old.copy; then
  pass "--overwrite on a full disk: exit 6, old file intact ($(grep -o "twofold: error: [^;]*" err.txt | head -1))"
else
  fail "--overwrite on a full disk: exit $rc, old file $(cmp -s "$D/full.h5" old.copy && echo intact || echo changed)"
fi
finish

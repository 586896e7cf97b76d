# isolate_limits.sh — under --isolate a model that calls exit() ends its member 'crashed', one
# that never returns ends 'timeout' after run.member_time_limit (1 s: a member that returns
# takes microseconds, so which members time out does not depend on the machine's speed) or
# is stopped by --time-limit at once; the others finish bit for bit as without them.  Shared
# setup: isolate_lib.sh.
source "$(dirname "$0")/isolate_lib.sh"
# (b) exit() in the model (isolated by run.isolate: true in EXIT.yaml)
rc=0
"$T" run EXIT.yaml -o EXIT.h5 --quiet >out.txt 2>err.txt || rc=$?
[ "$rc" = 0 ] && pass "EXIT --isolate: exit 0" || fail "EXIT --isolate: exit $rc: $(head -c 400 err.txt)"
compare EXIT.h5 none.h5 crashed "the model called exit(7)"
grep -q "rank 0, member $first: the model called exit(7); recorded as crashed" err.txt &&
  pass "EXIT: $(grep -o "member $first: the model called exit(7)[^;]*" err.txt)" ||
  fail "EXIT: not said: $(head -c 400 err.txt)"

# (c) an endless loop: timeout after run.member_time_limit, the others finish
rc=0
timeout 120 "$T" run LOOP.yaml -o LOOP.h5 --quiet --isolate >out.txt 2>err.txt || rc=$?
[ "$rc" = 0 ] && pass "LOOP --isolate: exit 0" || fail "LOOP --isolate: exit $rc: $(head -c 400 err.txt)"
compare LOOP.h5 none30.h5 timeout "ran longer than run.member_time_limit (1 s) and was stopped"
grep -q "member $first: ran longer than run.member_time_limit (1 s) and was stopped; recorded as timeout" err.txt ||
  fail "LOOP: timeout not said: $(head -c 400 err.txt)"
"$T" info LOOP.h5 | grep -qF "member $first, timeout: ran longer than run.member_time_limit (1 s) and was stopped" &&
  pass "info names why member $first timed out" || fail "info: no reason for member $first: $("$T" info LOOP.h5 | head -c 600)"
# without a member time limit, --time-limit stops the endless member at once (not after the
# hard limit's grace): killed, not done, exit 3
rc=0
timeout 120 "$T" run none.yaml -o stop.h5 --isolate --set model.params.way=3 --time-limit 2 \
  --progress none >out.txt 2>err.txt || rc=$?
done_first=$("$PYTHON" -c "import h5py; print(int(h5py.File('stop.h5','r')['members/done'][$first]))")
[ "$rc" = 3 ] && [ "$done_first" = 0 ] && grep -q "time limit reached" err.txt && ! grep -q "hard time limit" err.txt &&
  pass "endless member, --time-limit 2: exit 3, member $first not done" ||
  fail "endless member, --time-limit 2: exit $rc, member $first done: $done_first: $(head -c 400 err.txt)"
expect_fail 2 "LOOP.yaml:[0-9]+: run.member_time_limit needs isolated members" -- \
  "$T" run LOOP.yaml -o LOOP2.h5 --quiet
finish

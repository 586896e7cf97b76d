# lib.sh — shared helpers for the shell tests (sourced).  Environment from CTest: TWOFOLD,
# MPIEXEC, CONFIGS, WORK, PYTHON.
set -euo pipefail
: "${TWOFOLD:?}" "${MPIEXEC:?}" "${CONFIGS:?}" "${WORK:?}"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
FAILURES=0
fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }
pass() { echo "ok: $*"; }
mpirun_n() { local n=$1; shift; "$MPIEXEC" -n "$n" "$@"; }

# expect_fail CODE REGEX -- CMD...: the command exits with CODE and stderr matches REGEX.
expect_fail() {
  local code=$1 regex=$2; shift 3
  local rc=0
  "$@" >out.txt 2>err.txt || rc=$?
  if [ "$rc" != "$code" ]; then
    fail "'$*' exited $rc, expected $code; stderr: $(cat err.txt)"
  elif ! grep -Eq -- "$regex" err.txt; then
    fail "'$*' stderr does not match /$regex/: $(cat err.txt)"
  else
    pass "$(head -c 200 err.txt | tr '\n' ' ')"
  fi
}

# same_members A.h5 B.h5: the same datasets under /members, every one bitwise equal, and the
# same summary.
same_members() {
  local a=$1 b=$2 ds list_a list_b
  list_a=$(h5ls "$a/members" 2>/dev/null | awk '{print $1}' | sort)
  list_b=$(h5ls "$b/members" 2>/dev/null | awk '{print $1}' | sort)
  if [ -z "$list_a" ] || [ "$list_a" != "$list_b" ]; then
    fail "/members of $a and $b hold different datasets: '$(echo $list_a)' / '$(echo $list_b)'"
    return 0
  fi
  for ds in $list_a; do
    if ! h5diff -q "$a" "$b" "/members/$ds" "/members/$ds" >/dev/null 2>&1; then
      fail "/members/$ds differs between $a and $b"
      return 0
    fi
  done
  if h5ls "$a/summary" >/dev/null 2>&1 && ! h5diff -q "$a" "$b" /summary /summary >/dev/null 2>&1; then
    fail "/summary differs between $a and $b"
    return 0
  fi
  pass "$a and $b hold identical members ($(echo $list_a | wc -w) datasets)"
}

finish() {
  if [ "$FAILURES" -ne 0 ]; then echo "$FAILURES failure(s)"; exit 1; fi
  echo "all passed"
}

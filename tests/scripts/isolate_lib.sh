# isolate_lib.sh — what isolate.sh and isolate_limits.sh share (sourced): the plugin, the
# configs, the runs of the harmless model they compare with, and compare().
# tests/plugins/crashing.c misbehaves once x > 1.5, in the way its parameter `way` says; its
# members start at 1 + 0.3 N(0,1) and decay, so exactly the members whose initial state
# exceeds 1.5 misbehave, at their first model call: t = 0 and the initial state.  Which
# members those are is read from a run of the same ensemble with way 0 (harmless), whose rows
# the isolated runs must reproduce bit for bit for every other member.
source "$(dirname "$0")/lib.sh"
T=$TWOFOLD
export TWOFOLD_CACHE=$WORK/cache
mkdir -m 700 "$TWOFOLD_CACHE"
cp "$SOURCE_DIR/tests/plugins/crashing.c" .
config() { # NAME WAY MEMBERS [EXTRA YAML]
  cat >"$1.yaml" <<CFG
job: ensemble
model:
  source: crashing.c
  params: {way: $2}
initial:
  state: [1.0]
  spread: 0.3
integrator:
  t_end: 1.0
ensemble:
  members: $3
  seed: 3
${4:-}
CFG
}
config none 0 200
config SEGV 1 200
config EXIT 4 200 "run:
  isolate: true"
config LOOP 3 30 "run:
  member_time_limit: 1"
"$T" run none.yaml -o none.h5 --quiet
"$T" run none.yaml -o none30.h5 --quiet --set ensemble.members=30

# compare.py RESULT REFERENCE STATUS PYTHONDIR WHY: members starting above 1.5 have STATUS, NaN
# rows and the text WHY in /members/failure ({x}: their initial state, as %.17g prints it), all
# others the reference's rows bit for bit and no failure text
cat >compare.py <<'PY'
import sys
import h5py
import numpy as np
sys.path.insert(0, sys.argv[4])
from twofold.results import STATUS_NAMES
got, ref = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
n = ref["members/status"].shape[0]
bad = ref["members/initial_state"][...].reshape(n, -1)[:, 0] > 1.5
status = got["members/status"][...]
want = STATUS_NAMES.index(sys.argv[3])
problems = []
if not bad.any() or bad.all():
    problems.append(f"{bad.sum()} of {n} members start above 1.5: no test")
if list(np.nonzero(status == want)[0]) != list(np.nonzero(bad)[0]):
    problems.append(f"{sys.argv[3]}: {np.nonzero(status == want)[0]}, expected {np.nonzero(bad)[0]}")
why = got["members/failure"][...] if "failure" in got["members"] else None
if why is None:
    problems.append("no /members/failure")
else:
    x0 = ref["members/initial_state"][...].reshape(n, -1)[:, 0]
    for m in np.nonzero(bad)[0]:
        want_why = sys.argv[5].replace("{x}", "%.17g" % x0[m])
        if why[m].decode() != want_why:
            problems.append(f"member {m}: failure {why[m].decode()!r}, expected {want_why!r}")
            break
    if any(why[~bad]):
        problems.append("a member that did not fail has a failure text")
for name in ref["members"]:
    a, b = ref["members"][name][...], got["members"][name][...]
    if name in ("status", "checksum"):
        same = np.array_equal(a[~bad], b[~bad])
    else:
        same = a[~bad].tobytes() == b[~bad].tobytes()
        if b.dtype.kind == "f" and name != "done" and not np.isnan(b[bad]).all():
            problems.append(f"{name}: the {sys.argv[3]} rows are not NaN")
    if not same:
        problems.append(f"/members/{name} differs from the run without the misbehaving members")
print("; ".join(problems) if problems else f"{bad.sum()} of {n} members {sys.argv[3]}, "
      f"the other {n - bad.sum()} bitwise equal to the plain run")
sys.exit(1 if problems else 0)
PY
compare() { # RESULT REFERENCE STATUS WHY
  local said
  if said=$("$PYTHON" compare.py "$1" "$2" "$3" "$SOURCE_DIR/python" "$4"); then pass "$1: $said"; else fail "$1: $said"; fi
}
bad_members=$("$PYTHON" -c "import h5py; x=h5py.File('none.h5','r')['members/initial_state'][...].reshape(200, -1)[:, 0]; print(' '.join(str(i) for i in (x > 1.5).nonzero()[0]))")

first=${bad_members%% *}

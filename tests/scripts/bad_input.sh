# bad_input.sh — every class of bad input gets a clear error (file, line, key, what was
# expected), exit status 2, and leaves existing results untouched.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"
cp "$CONFIGS/smoke.yaml" good.yaml
small=(--set ensemble.members=20 --set integrator.t_end=0.1 --quiet)

# misspelt keys get a "did you mean", with file and line
sed 's/^  spread:/  sprea:/' good.yaml > misspelt.yaml
expect_fail 2 "misspelt.yaml:1[0-9]: .*unknown key 'initial.sprea'.*did you mean 'spread'" -- "$T" check misspelt.yaml
sed 's/^    noise:/    noize:/' good.yaml > misspelt2.yaml
expect_fail 2 "misspelt2.yaml:[0-9]+: .*model.params.noize.*did you mean 'noise'" -- "$T" check misspelt2.yaml
sed 's/^integrator:/integrater:/' good.yaml > section.yaml
expect_fail 2 "section.yaml:[0-9]+: .*integrater" -- "$T" check section.yaml
# wrong type, out of range, non-finite
sed 's/^  dt: 0.001/  dt: fast/' good.yaml > type.yaml
expect_fail 2 "type.yaml:1[0-9]: key 'integrator.dt': expected a number, got 'fast'" -- "$T" check type.yaml
sed 's/^  members: 4000/  members: 12.5/' good.yaml > int.yaml
expect_fail 2 "int.yaml:[0-9]+: key 'ensemble.members': expected an integer" -- "$T" check int.yaml
sed 's/^    sigma: 10/    sigma: -1/' good.yaml > range.yaml
expect_fail 2 "range.yaml:[0-9]+: key 'model.params.sigma': expected a number >= 0" -- "$T" check range.yaml
sed 's/^    sigma: 10/    sigma: .inf/' good.yaml > inf.yaml
expect_fail 2 "inf.yaml:[0-9]+: key 'model.params.sigma': expected a finite number, got inf" -- "$T" check inf.yaml
sed 's/^  state: \[1.0, 1.0, 20.0\]/  state: [1.0, .nan, 20.0]/' good.yaml > nan.yaml
expect_fail 2 "nan.yaml:[0-9]+: key 'initial.state'" -- "$T" check nan.yaml
sed 's/^  state: \[1.0, 1.0, 20.0\]/  state: [1.0, 1.0]/' good.yaml > short.yaml
expect_fail 2 "short.yaml:[0-9]+: key 'initial.state': expected .*3" -- "$T" check short.yaml
# unknown model / job / method, with the known choices
sed 's/^  name: lorenz/  name: lorentz/' good.yaml > model.yaml
expect_fail 2 "model.yaml:[0-9]+: key 'model.name': unknown model 'lorentz'.*lorenz" -- "$T" check model.yaml
sed 's/^job: ensemble/job: ensembel/' good.yaml > job.yaml
expect_fail 2 "job.yaml:[0-9]+: key 'job'.*ensemble" -- "$T" check job.yaml
sed 's/^  method: euler-maruyama/  method: dopri5/' good.yaml > method.yaml
expect_fail 2 "method.yaml:[0-9]+: key 'integrator.method': .*noise" -- "$T" check method.yaml
# a codimension-2 model runs on its event-driven engine, never on an integrator that would
# carry its slip field through rolling
cat > codim2.yaml <<'EOF2'
job: ensemble
model: {name: ball-pool}
integrator: {method: petsc-ts, t_end: 1}
ensemble: {members: 4}
EOF2
expect_fail 2 "codim2.yaml:3: key 'integrator.method': model 'ball-pool' runs on the event-driven codimension-2 engine \\(dopri5\\)" -- "$T" check codim2.yaml
# a body with two contacts in the lyapunov job (no tangent dynamics for its kinematic cases)
cp "$CONFIGS/flowmeter-mid-friction.yaml" flow.yaml
expect_fail 2 "flow.yaml:[0-9]+: key .model.name.: model .flowmeter. has two contacts; the lyapunov job has no tangent dynamics" -- "$T" check flow.yaml --set job=lyapunov

# missing and corrupt files
expect_fail 2 "cannot open 'nope.yaml'" -- "$T" check nope.yaml
printf 'job: ensemble\nmodel: [unclosed\n' > corrupt.yaml
expect_fail 2 "corrupt.yaml:[0-9]+(:[0-9]+)?: .*YAML" -- "$T" check corrupt.yaml
printf 'job: ensemble\njob: trajectory\n' > dup.yaml
expect_fail 2 "dup.yaml:2: .*duplicate.*job" -- "$T" check dup.yaml
: > empty.yaml
expect_fail 2 "empty.yaml" -- "$T" check empty.yaml
# overrides are type checked and name the --set argument
expect_fail 2 "\-\-set ensemble.members=many.*expected an integer" -- "$T" check good.yaml --set ensemble.members=many
expect_fail 2 "\-\-set ensemble.membrs=5.*unknown key 'ensemble.membrs'.*did you mean 'members'" -- "$T" check good.yaml --set ensemble.membrs=5
expect_fail 2 "\-\-set" -- "$T" check good.yaml --set =5
# bad command lines
expect_fail 2 "unknown option '--frobnicate'" -- "$T" run good.yaml --frobnicate
expect_fail 2 "time-limit" -- "$T" run good.yaml --time-limit soon
expect_fail 2 "--stop-after: expected a positive whole number, got .0." -- "$T" run good.yaml --stop-after 0
expect_fail 2 "--pause-after: expected a positive whole number, got .x." -- "$T" run good.yaml --pause-after x
expect_fail 2 "unknown command 'rn'" -- "$T" rn good.yaml

# existing results are never damaged
"$T" run good.yaml -o kept.h5 "${small[@]}"
sum=$(md5sum kept.h5)
expect_fail 2 "already exists.*--resume.*--overwrite" -- "$T" run good.yaml -o kept.h5 "${small[@]}"
expect_fail 2 "unknown key" -- "$T" run misspelt.yaml -o kept.h5 --overwrite
expect_fail 2 "cannot resume 'kept.h5': key 'model.params.rho' was 28 in the file and is 29 now" -- "$T" run good.yaml -o kept.h5 --resume "${small[@]}" --set model.params.rho=29
[ "$sum" = "$(md5sum kept.h5)" ] && pass "kept.h5 unchanged" || fail "kept.h5 was modified"
# corrupt result files
head -c 3000 kept.h5 > truncated.h5
expect_fail 2 "truncated.h5" -- "$T" info truncated.h5
echo "not hdf5" > text.h5
expect_fail 2 "text.h5.*not an HDF5 file" -- "$T" info text.h5
expect_fail 2 "text.h5" -- "$T" run good.yaml -o text.h5 --resume "${small[@]}"
expect_fail 2 "missing.h5" -- "$T" info missing.h5

# a member that blows up is recorded with its reason; the ensemble completes (every member
# blows up at this step, so the run exits 4)
rc=0
"$T" run good.yaml -o blowup.h5 "${small[@]}" --set integrator.dt=0.25 --set integrator.t_end=20 \
  --set initial.spread=5 --json > blowup.json 2> blowup.err || rc=$?
[ "$rc" = 4 ] || fail "blow-up ensemble exited $rc: $(cat blowup.err)"
"$PYTHON" - <<'PY' || fail "blow-up members not recorded"
import json, h5py
s = json.loads(open("blowup.json").read().strip().splitlines()[-1])
f = h5py.File("blowup.h5", "r")
st = f["members/status"][...]
names = {v: k for k, v in h5py.check_enum_dtype(f["members/status"].dtype).items()}
assert s["status"] == "members_failed" and s["done"] == s["members"], s
assert s["failed"] == s["members"] and s["status_counts"]["nonfinite"] == s["failed"], s
assert sum(names[v] == "nonfinite" for v in st) == s["failed"]
assert f["members/done"][...].all()
print("nonfinite members:", s["failed"], "of", s["members"])
PY
# a hostile results file: an attribute that should hold one string holds two (H5Aread once
# wrote the second past the one it was given)
"$T" run "$CONFIGS/smoke.yaml" -o listattr.h5 "${small[@]}"
"$PYTHON" -c "import h5py; f = h5py.File('listattr.h5', 'a'); del f.attrs['twofold_version']; f.attrs['twofold_version'] = ['a', 'b']"
expect_fail 2 "listattr.h5': corrupt or not a twofold results file: attribute 'twofold_version': it is not one string" -- "$T" info listattr.h5
# --overwrite replaces only twofold results files; FIFOs are refused, never opened (an open
# would block for ever)
echo keep > important.txt
expect_fail 2 "output 'important.txt' is a file that is not a twofold results file" -- \
  "$T" run good.yaml -o important.txt --overwrite "${small[@]}"
[ "$(cat important.txt)" = keep ] && pass "important.txt untouched" || fail "important.txt was replaced"
mkdir -p adir.h5
expect_fail 2 "output 'adir.h5' is a directory" -- "$T" run good.yaml -o adir.h5 --overwrite "${small[@]}"
rm -f fifo.h5 && mkfifo fifo.h5
expect_fail 2 "'fifo.h5' is a FIFO, not a results file" -- "$T" info fifo.h5
expect_fail 2 "'fifo.h5' is a FIFO, not a results file" -- "$T" run good.yaml -o fifo.h5 --resume "${small[@]}"
if [ "$(id -u)" = 0 ]; then # a character device of our own, like /dev/null
  rm -f nul && mknod nul c 1 3
  expect_fail 2 "output 'nul' is a character device" -- "$T" run good.yaml -o nul --overwrite "${small[@]}"
  [ -c nul ] && pass "the device is still a device" || fail "the device was replaced"
fi
"$T" run good.yaml -o ours.h5 "${small[@]}" && "$T" run good.yaml -o ours.h5 --overwrite "${small[@]}" \
  && pass "--overwrite replaces a results file" || fail "--overwrite of a results file"

# a parameter that overflows every member ends each one with status nonfinite, in bounded
# time (a NaN step size once shrank for ever in src/step/ode.c); no member succeeded, so the run
# exits 4 with its file complete
rc=0
"$T" run "$CONFIGS/jeffrey-sticking.yaml" -o overflow.h5 --set model.params.N=1e308 --json --quiet \
  > overflow.json 2> overflow.err || rc=$?
[ "$rc" = 4 ] && grep -q "members failed: nonfinite .*no member succeeded" overflow.err \
  && pass "every member nonfinite: exit 4, said on stderr" || fail "overflowing run exited $rc: $(cat overflow.err)"
"$PYTHON" - <<'PY' || fail "overflowing members"
import json
s = json.loads(open("overflow.json").read().strip().splitlines()[-1])
assert s["status_counts"]["nonfinite"] == s["members"] > 0, s["status_counts"]
assert s["status"] == "members_failed" and s["done"] == s["members"], s
print("N = 1e308: all", s["members"], "members nonfinite")
PY
# exit weights whose sum overflows a double would make every draw land in one bin (or none)
expect_fail 2 "key 'exit.weights': the weights sum to inf, beyond the largest double; scale them down" -- \
  "$T" check "$CONFIGS/open-question-weighted.yaml" --set 'exit.weights=[1e308, 1e308, 1]'
# the wheel's slip fields continued past Sigma are for event-driven steps: the convex smoothing,
# which combines both sides' fields everywhere, refuses them; the setting is 0 or 1
sed 's/^    rstar: 0.1859/    rstar: 0.1859\n    continuation: 1/' "$CONFIGS/wheel-smoothed.yaml" > continued.yaml
expect_fail 2 "continued.yaml:[0-9]+: key 'model.params': .*continues its slip fields past Sigma.*convex field" -- \
  "$T" check continued.yaml
expect_fail 2 "model 'wheel': continuation must be 0 or 1, got 0.5" -- \
  "$T" check "$CONFIGS/wheel-fig5.yaml" --set model.params.continuation=0.5
finish

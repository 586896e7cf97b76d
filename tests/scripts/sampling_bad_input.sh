# sampling_bad_input.sh — bad Monte-Carlo sampling keys (initial.sample, model.sample,
# initial.design, initial.from_file) get a clear error naming file, line and key (or the data
# file and its line), and exit status 2.
source "$(dirname "$0")/lib.sh"
T="$TWOFOLD"

# the planar relay: parameter a has bounds [1e-12, inf), b none
base() {
  cat <<'EOF2'
job: ensemble
model:
  name: relay
initial:
  state: [0.3, 0.0]
integrator: {t_end: 0.1}
ensemble: {members: 4}
EOF2
}
# write NAME.yaml: the base config with the given lines spliced in after "initial:"/"model:"
cfg() {
  local name=$1 section=$2; shift 2
  base | awk -v sec="$section:" -v add="$(printf '%s\n' "$@")" '{print} $0 == sec {print add}' > "$name"
}

cfg dist.yaml initial "  sample:" "    x: {dist: gauss, sigma: 1}"
expect_fail 2 "dist.yaml:[0-9]+: key 'initial.sample.x.dist'.*normal" -- "$T" check dist.yaml
cfg comp.yaml initial "  sample:" "    z: {dist: uniform, lo: 0, hi: 1}"
expect_fail 2 "comp.yaml:[0-9]+: key 'initial.sample.z': model 'relay' has no state component 'z' \(components: x,y\)" -- "$T" check comp.yaml
cfg box.yaml initial "  sample:" "    x: {dist: uniform, lo: 1, hi: 0}"
expect_fail 2 "box.yaml:[0-9]+: key 'initial.sample.x.hi': expected finite lo < hi" -- "$T" check box.yaml
cfg log.yaml initial "  sample:" "    y: {dist: log-uniform, lo: 0, hi: 1}"
expect_fail 2 "log.yaml:[0-9]+: key 'initial.sample.y.lo': a log-uniform distribution needs lo > 0" -- "$T" check log.yaml
cfg sigma.yaml initial "  sample:" "    x: {dist: normal}"
expect_fail 2 "sigma.yaml:[0-9]+: .*initial.sample.x.sigma" -- "$T" check sigma.yaml
cfg extra.yaml initial "  sample:" "    x: {dist: uniform, lo: 0, hi: 1, sigma: 2}"
expect_fail 2 "extra.yaml:[0-9]+: unknown key 'initial.sample.x.sigma'" -- "$T" check extra.yaml
cfg spread.yaml initial "  spread: 0.1" "  sample:" "    x: {dist: uniform, lo: 0, hi: 1}"
expect_fail 2 "spread.yaml:[0-9]+: key 'initial.spread': a sampled initial state .*takes no spread" -- "$T" check spread.yaml
cfg design.yaml initial "  design: sobel" "  sample:" "    x: {dist: uniform, lo: 0, hi: 1}"
expect_fail 2 "design.yaml:[0-9]+: key 'initial.design'.*sobol" -- "$T" check design.yaml
cfg alone.yaml initial "  design: sobol"
expect_fail 2 "alone.yaml:[0-9]+: key 'initial.design': a design needs quantities to sample" -- "$T" check alone.yaml
# parameters: names, and supports inside the declared bounds
cfg param.yaml model "  sample:" "    c: {dist: uniform, lo: 0, hi: 1}"
expect_fail 2 "param.yaml:[0-9]+: key 'model.sample.c': model 'relay' has no parameter 'c'" -- "$T" check param.yaml
cfg bound.yaml model "  sample:" "    a: {dist: uniform, lo: -1, hi: 1}"
expect_fail 2 "bound.yaml:[0-9]+: key 'model.sample.a': the uniform distribution's support \[-1, 1\] leaves the bounds \[1e-12, inf\] of parameter 'a'" -- "$T" check bound.yaml
cfg normal.yaml model "  sample:" "    a: {dist: normal, sigma: 0.1}"
expect_fail 2 "normal.yaml:[0-9]+: key 'model.sample.a': the normal distribution's support .* leaves the bounds" -- "$T" check normal.yaml
cfg ok.yaml model "  sample:" "    b: {dist: normal, sigma: 0.1}" "    a: {dist: log-uniform, lo: 0.5, hi: 2}"
if "$T" check ok.yaml >out.txt 2>err.txt; then pass "a normal b and a log-uniform a inside a's bounds"; else fail "ok.yaml refused: $(cat err.txt)"; fi

# states from a file: missing, wrong width, too few rows, non-finite, the dataset key
cfg missing.yaml initial "  from_file: nope.csv"
expect_fail 2 "missing.yaml:[0-9]+: key 'initial.from_file': cannot open 'nope.csv'" -- "$T" check missing.yaml
printf 'x,y\n0.1,0.2\n0.3\n' > narrow.csv
cfg narrow.yaml initial "  from_file: narrow.csv"
expect_fail 2 "narrow.csv:3: expected 2 columns \(the state of model 'relay'\), got 1 \(missing.yaml|narrow.yaml:[0-9]+: key 'initial.from_file'\)" -- "$T" check narrow.yaml
printf '# x y\n0.1 0.2\n0.3 0.4\n' > short.csv
cfg short.yaml initial "  from_file: short.csv"
expect_fail 2 "short.csv: 2 rows of initial states, but the ensemble has 4 members \(short.yaml:[0-9]+: key 'initial.from_file'\)" -- "$T" check short.yaml
printf '0.1,0.2\n0.3,nan\n0.1,0.2\n0.1,0.2\n' > nan.csv
cfg nan.yaml initial "  from_file: nan.csv"
expect_fail 2 "nan.csv:2: column 2 \('y'\) is nan, not a finite number" -- "$T" check nan.yaml
printf '0.1,0.2\n0.3,abc\n' > text.csv
cfg text.yaml initial "  from_file: text.csv"
expect_fail 2 "text.csv:2: column 2 \('y'\): expected a number, got 'abc'" -- "$T" check text.yaml
"$PYTHON" -c "import numpy, h5py; numpy.save('wide.npy', numpy.zeros((4, 3))); h5py.File('s.h5', 'w')['x0'] = numpy.zeros((4, 2))"
cfg npy.yaml initial "  from_file: wide.npy"
expect_fail 2 "wide.npy: expected 2 columns \(the state of model 'relay'\), got an array of 'shape': \(4, 3\)" -- "$T" check npy.yaml
cfg nodata.yaml initial "  from_file: s.h5"
expect_fail 2 "nodata.yaml:[0-9]+: .*initial.dataset" -- "$T" check nodata.yaml
cfg wrongdata.yaml initial "  from_file: s.h5" "  dataset: /y0"
expect_fail 2 "wrongdata.yaml:[0-9]+: key 'initial.from_file': 's.h5' has no dataset '/y0'" -- "$T" check wrongdata.yaml
cfg both.yaml initial "  from_file: s.h5" "  dataset: /x0" "  sample:" "    x: {dist: uniform, lo: 0, hi: 1}"
expect_fail 2 "both.yaml:[0-9]+: key 'initial.from_file': give initial.sample or initial.from_file, not both" -- "$T" check both.yaml
finish

#!/usr/bin/env bash
# install.sh — the installed tree works on its own, through each of its doors: `cmake --install`
# into a scratch prefix, then (1) a C program built with mpicc and pkg-config that calls
# twofold_run_config on 2 ranks (the world, then one rank's MPI_COMM_SELF, then a bad config
# that must return 2 with the message and let the program go on), (2) one that initialised
# PETSc itself, (3) a CMake project using find_package(twofold) and twofold::twofold, (4) the
# Python module's run().  Every results file is checked against the harmonic oscillator's exact
# solution, computed with numpy from each member's initial state.  (5) The README's commands
# run from the installed tree alone: the block for the installed executable verbatim (with
# HOME such that $HOME/opt/twofold is the scratch prefix), the "Using it" block with
# build/, configs/ and postproc/ standing for the prefix's bin/ and share/twofold/, and the
# Python block.  Environment from CTest as in lib.sh, plus BUILD_DIR, CMAKE_COMMAND, MPICC,
# SOURCE_DIR and PYTHON.
source "$(dirname "$0")/lib.sh"
: "${BUILD_DIR:?}" "${CMAKE_COMMAND:?}" "${MPICC:?}" "${SOURCE_DIR:?}" "${PYTHON:?}"
PREFIX=$WORK/home/opt/twofold # the README's $HOME/opt/twofold
CONFIG=$CONFIGS/harmonic.yaml

"$CMAKE_COMMAND" --install "$BUILD_DIR" --prefix "$PREFIX" >install.log
for f in bin/twofold lib/libtwofold.so include/twofold/twofold.h include/twofold/model.h \
         include/twofold/version.h lib/pkgconfig/twofold.pc lib/cmake/twofold/twofoldConfig.cmake \
         lib/cmake/twofold/twofoldConfigVersion.cmake lib/python3/dist-packages/twofold/__init__.py \
         lib/python3/dist-packages/twofold/results.py share/twofold/configs/wheel-fig5.yaml \
         share/twofold/postproc/wheel_fig5.py share/twofold/docs/CONFIG.md \
         share/twofold/cluster/array.sbatch share/twofold/cluster/submit-array.sh; do
  [ -e "$PREFIX/$f" ] || fail "not installed: $f"
done

# The version is set once, in project(); everything installed must say the same.
want=$(sed -n 's/^project(twofold VERSION \([0-9.]*\).*/\1/p' "$SOURCE_DIR/CMakeLists.txt")
major=${want%%.*}
soname=$(readelf -d "$PREFIX/lib/libtwofold.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libtwofold.so.$major" ] && pass "SONAME $soname" || fail "SONAME '$soname'"
exe_version=$(env -u LD_LIBRARY_PATH "$PREFIX/bin/twofold" --version)
[[ "$exe_version" == "twofold $want "* ]] && pass "installed executable runs: $exe_version" \
  || fail "installed twofold --version: '$exe_version', project version $want"
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig

# PETSc is in a module loaded on first use (src/step/ts_module.h): neither the executable nor the
# library links it.  The installed executable loads the installed module, never the build
# tree's: missing, it fails a PETSc TS config (2, naming the installed file) and no other;
# writable by others, it is refused.
module=$PREFIX/lib/twofold/libtwofold_ts.so
[ -f "$module" ] || fail "not installed: lib/twofold/libtwofold_ts.so"
for f in bin/twofold lib/libtwofold.so; do
  ! ldd "$PREFIX/$f" | grep -i petsc && pass "$f does not link PETSc" || fail "$f links PETSc"
done
ldd "$module" | grep petsc >/dev/null && pass "lib/twofold/libtwofold_ts.so links PETSc" \
  || fail "the module does not link PETSc: $(ldd "$module")"
petsc_check() { # the installed `twofold check` of a PETSc TS config: its status, output in check.txt
  env -u LD_LIBRARY_PATH "$PREFIX/bin/twofold" check "$CONFIGS/wheel-smoothed.yaml" \
    --set integrator.method=petsc-ts >check.txt 2>&1
}
mv "$module" "$module.away"
petsc_check && rc=0 || rc=$?
env -u LD_LIBRARY_PATH "$PREFIX/bin/twofold" run "$CONFIG" -o no-module.h5 --quiet >no-module.txt 2>&1 \
  && [ ! -s no-module.txt ] && pass "without the module a run that needs no PETSc works" \
  || fail "without the module: $(cat no-module.txt)"
mv "$module.away" "$module"
[ "$rc" = 2 ] && grep -q "needs the PETSc TS module '.*/lib/twofold/libtwofold_ts.so'.*No such file" check.txt \
  && pass "without the module a PETSc TS config fails naming the installed file" \
  || fail "missing module: status $rc, $(cat check.txt)"
chmod o+w "$module"
petsc_check && rc=0 || rc=$?
chmod o-w "$module"
[ "$rc" = 2 ] && grep -qF "PETSc TS module '$(realpath "$module")'" check.txt && grep -q "may be written by others" check.txt \
  && pass "a module writable by others is refused" || fail "writable module: status $rc, $(cat check.txt)"
petsc_check && grep -q ok check.txt && pass "the installed module is loaded" || fail "installed module: $(cat check.txt)"
[ "$(pkg-config --modversion twofold)" = "$want" ] && pass "pkg-config version $want" \
  || fail "pkg-config --modversion twofold: $(pkg-config --modversion twofold)"

sed 's/  t_end: 3.0/  t_endd: 3.0/' "$CONFIG" >bad.yaml
bad_line=$(grep -n 't_endd' bad.yaml | cut -d: -f1)

# (1) MPI_Init; twofold_run_config; MPI_Finalize — with two more calls to show that the
# caller's communicator is the one used and that bad input comes back as a status.
cat >embed.c <<'EOF'
#include <stdio.h>
#include <string.h>
#include <twofold/twofold.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char err[4096] = "untouched";
  const char *sets[] = {"ensemble.members=40", NULL};
  int rc = twofold_run_config(MPI_COMM_WORLD, argv[1], "world.h5", sets, err, sizeof err);
  if (rank == 0) printf("world %d [%s]\n", rc, err);
  if (rank == 0) { /* one rank alone: a run on the world's communicator would wait forever */
    rc = twofold_run_config(MPI_COMM_SELF, argv[1], "self.h5", NULL, err, sizeof err);
    printf("self %d [%s]\n", rc, err);
  }
  rc = twofold_run_config(MPI_COMM_WORLD, argv[2], "bad.h5", NULL, err, sizeof err);
  if (rank == 0) printf("bad %d [%s]\n", rc, err);
  if (argc > 3) { /* PETSc options reach the PETSc initialised for the call */
    const char *args[] = {argv[3], "-o", "nosuch.h5", "--quiet", "--set",
                          "integrator.method=petsc-ts", "-ts_type", "nosuch", NULL};
    rc = twofold_run_args(MPI_COMM_WORLD, 8, args, err, sizeof err);
    if (rank == 0) printf("nosuch %d [%s]\n", rc, err);
  }
  { /* interrupted (3), then completed by --resume (0) */
    const char *stop[] = {argv[1], "-o", "stop.h5", "--quiet", "--stop-after", "5", NULL};
    const char *resume[] = {argv[1], "-o", "stop.h5", "--quiet", "--resume", NULL};
    rc = twofold_run_args(MPI_COMM_WORLD, 6, stop, err, sizeof err);
    const int rc2 = twofold_run_args(MPI_COMM_WORLD, 5, resume, err, sizeof err);
    if (rank == 0) printf("stop %d resume %d [%s]\n", rc, rc2, err);
  }
  { /* steps of at most 0.1 and 5 of them cannot reach t_end 1: every member fails (4), and
       every rank gets the message (rank 0 with the first ids, read back from the file) */
    const char *few[] = {"ensemble.members=8", "integrator.t_end=1", "integrator.hmax=0.1",
                         "integrator.max_steps=5", NULL};
    rc = twofold_run_config(MPI_COMM_WORLD, argv[1], "few.h5", few, err, sizeof err);
    printf("few %d rank %d [%s]\n", rc, rank, err);
    fflush(stdout);
  }
  if (rank == 0) printf("version %s %d.%d.%d\n", twofold_version(), TWOFOLD_VERSION_MAJOR,
                        TWOFOLD_VERSION_MINOR, TWOFOLD_VERSION_PATCH);
  MPI_Finalize();
  if (rank == 0) printf("finalized\n");
  return 0;
}
EOF
rpath="-Wl,-rpath,$(pkg-config --variable=libdir twofold)"
# shellcheck disable=SC2046
if "$MPICC" -Wall -Werror embed.c $(pkg-config --cflags --libs twofold) "$rpath" -o embed 2>cc.txt; then
  pass "mpicc \$(pkg-config --cflags --libs twofold) links"
  timeout 120 "$MPIEXEC" -n 2 ./embed "$CONFIG" bad.yaml "$CONFIGS/wheel-smoothed.yaml" >embed.txt 2>embed.err || fail "embed: $(cat embed.err)"
  cat embed.txt
  grep -qx 'world 0 \[\]' embed.txt && pass "twofold_run_config on 2 ranks returns 0" || fail "world run: $(cat embed.txt embed.err)"
  grep -qx 'self 0 \[\]' embed.txt && pass "a run on MPI_COMM_SELF of one rank returns 0" || fail "self run: $(cat embed.txt)"
  grep -Eq "^bad 2 \[bad.yaml:[0-9]+: missing required key 'integrator.t_end'.*" embed.txt \
    && grep -q "bad.yaml:$bad_line: unknown key 'integrator.t_endd'" embed.txt \
    && pass "bad config: status 2, file, line and key in errbuf" || fail "bad config: $(cat embed.txt)"
  [ ! -e bad.h5 ] || fail "a bad config created its output file"
  grep -q "^nosuch 2 \[.*unknown PETSc TS type 'nosuch' given by -ts_type" embed.txt \
    && pass "twofold_run_args: -ts_type reaches the PETSc it initialised" || fail "nosuch: $(cat embed.txt)"
  grep -qx 'stop 3 resume 0 \[\]' embed.txt && pass "--stop-after: status 3; --resume: 0" \
    || fail "stop/resume: $(grep stop embed.txt)"
  grep -q "^few 4 rank 0 \[8 of 8 members failed: max_steps 8 (first: 0, 1, 2, 3, 4, ...); no member succeeded; the results are complete in 'few.h5'" embed.txt \
    && grep -q "^few 4 rank 1 \[8 of 8 members failed: max_steps 8; no member succeeded" embed.txt \
    && pass "every member failed: status 4 and the message on both ranks" || fail "few: $(grep few embed.txt)"
  grep -qx "version $want ${want//./.}" embed.txt && pass "twofold_version() and TWOFOLD_VERSION_* = $want" \
    || fail "version line: $(grep version embed.txt)"
  grep -qx finalized embed.txt && pass "the program went on to MPI_Finalize" || fail "no MPI_Finalize"
  [ ! -s embed.err ] || fail "the library printed to stderr: $(cat embed.err)"
else
  fail "mpicc with pkg-config: $(cat cc.txt)"
fi

# (2) A caller that has PETSc up keeps it (with its options) after the call; PETSc options
# given to the run reach its solver and are gone afterwards.
cat >petsc.c <<'EOF'
#include <petscsys.h>
#include <stdio.h>
#include <twofold/twofold.h>

int main(int argc, char **argv) {
  PetscInitialize(&argc, &argv, NULL, NULL); /* initialises MPI as well */
  PetscOptionsSetValue(NULL, "-caller_option", "7");
  char err[4096];
  const char *args[] = {argv[1], "-o", "petsc.h5", "--quiet", "--set", "ensemble.members=8",
                        "-run_option", "1", NULL};
  int rc = twofold_run_args(PETSC_COMM_WORLD, 8, args, err, sizeof err);
  PetscBool up = PETSC_FALSE, mine = PETSC_FALSE, theirs = PETSC_TRUE;
  PetscInitialized(&up);
  PetscOptionsHasName(NULL, NULL, "-caller_option", &mine);
  PetscOptionsHasName(NULL, NULL, "-run_option", &theirs);
  printf("petsc %d [%s] up %d caller_option %d run_option %d\n", rc, err, (int)up, (int)mine,
         (int)theirs);
  /* the run's PETSc options reach its solver: an unknown TS type is refused, a known one used
   * (PETSc TS named: auto takes the Rosenbrock stepper for the smoothed wheel) */
  const char *nosuch[] = {argv[2], "-o", "nosuch.h5", "--quiet", "--set", "ensemble.members=2",
                          "--set", "integrator.t_end=0.5", "--set", "integrator.method=petsc-ts",
                          "-ts_type", "nosuch", NULL};
  rc = twofold_run_args(PETSC_COMM_WORLD, 12, nosuch, err, sizeof err);
  printf("nosuch %d [%s]\n", rc, err);
  const char *rosw[] = {argv[2], "-o", "rosw.h5", "--quiet", "--json", "--set", "ensemble.members=2",
                        "--set", "integrator.t_end=0.5", "--set", "integrator.method=petsc-ts",
                        "-ts_type", "rosw", NULL};
  rc = twofold_run_args(PETSC_COMM_WORLD, 13, rosw, err, sizeof err);
  fflush(stdout);
  printf("rosw %d [%s]\n", rc, err);
  PetscFinalize();
  return 0;
}
EOF
# shellcheck disable=SC2046
if "$MPICC" -Wall -Werror petsc.c $(pkg-config --cflags --libs twofold PETSc) "$rpath" -o petsc 2>cc.txt; then
  timeout 120 "$MPIEXEC" -n 1 ./petsc "$CONFIG" "$CONFIGS/wheel-smoothed.yaml" -options_left no >petsc.txt 2>petsc.err || fail "petsc: $(cat petsc.err)"
  grep -qx 'petsc 0 \[\] up 1 caller_option 1 run_option 0' petsc.txt \
    && pass "caller's PETSc left initialised with its options" || fail "petsc: $(cat petsc.txt petsc.err)"
  grep -q "^nosuch 2 \[.*nosuch" petsc.txt && pass "-ts_type nosuch reaches the run: status 2" \
    || fail "-ts_type nosuch: $(cat petsc.txt)"
  grep -q '"integrator": *"petsc-ts/rosw"' petsc.txt && grep -qx 'rosw 0 \[\]' petsc.txt \
    && pass "-ts_type rosw reaches the run's solver" || fail "-ts_type rosw: $(cat petsc.txt)"
else
  fail "mpicc with PETSc: $(cat cc.txt)"
fi

# (3) find_package(twofold) + twofold::twofold.
mkdir -p consumer
cp embed.c consumer/embed.c
cat >consumer/CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(twofold 0.1 REQUIRED)
add_executable(embed embed.c)
target_link_libraries(embed PRIVATE twofold::twofold)
EOF
if "$CMAKE_COMMAND" -S consumer -B consumer/build -DCMAKE_PREFIX_PATH="$PREFIX" >consumer.log 2>&1 \
   && "$CMAKE_COMMAND" --build consumer/build >>consumer.log 2>&1; then
  pass "find_package(twofold) + twofold::twofold builds"
  mkdir -p cm && (cd cm && timeout 120 "$MPIEXEC" -n 1 ../consumer/build/embed "$CONFIG" ../bad.yaml >out.txt 2>&1) \
    || fail "consumer run: $(cat cm/out.txt)"
  grep -qx 'world 0 \[\]' cm/out.txt && pass "the CMake consumer's run returns 0" || fail "consumer: $(cat cm/out.txt)"
else
  fail "CMake consumer: $(tail -20 consumer.log)"
fi
sed -i 's/find_package(twofold 0.1 REQUIRED)/find_package(twofold 99 REQUIRED)/' consumer/CMakeLists.txt
if "$CMAKE_COMMAND" -S consumer -B consumer/build99 -DCMAKE_PREFIX_PATH="$PREFIX" >consumer99.log 2>&1; then
  fail "find_package(twofold 99) accepted version $want"
else
  pass "find_package(twofold 99) refuses version $want"
fi

# (4) The Python module, from the prefix, on the same config; then the CLI on 1 rank.
env -u TWOFOLD_EXECUTABLE PYTHONPATH="$PREFIX/lib/python3/dist-packages" "$PYTHON" - "$CONFIG" "$PREFIX" <<'EOF' >py.txt 2>&1 || fail "python module: $(cat py.txt)"
import os, sys
import twofold
config, prefix = sys.argv[1:]
assert os.path.samefile(twofold.executable(), os.path.join(prefix, "bin", "twofold")), twofold.executable()
res = twofold.run(config, output="python.h5", set={"ensemble.members": 24}, ranks=2)
assert res.run["status"] == "complete" and res.run["ranks"] == 2, res.run
assert res["members/final_state"].shape == (24, 2), res["members/final_state"].shape
assert res.attrs["model"] == "harmonic", res.attrs.get("model")
print("python run ok")
try:
    twofold.run(config, output="python-bad.h5", set={"integrator.t_endd": 3})
    print("no exception")
except twofold.TwofoldError as e:
    print(f"python error {e.status} [{e.message}]")
assert not os.path.exists("python-bad.h5")
try:
    twofold.run(config, output="python-stop.h5", options=["--stop-after", 5])
    print("no exception")
except twofold.TwofoldError as e:
    assert e.status == 3 and e.summary["status"] == "interrupted", (e.status, e.summary)
    res = twofold.run(config, output="python-stop.h5", options=["--resume"])
    assert res.run["status"] == "complete", res.run
    print("python stop and resume ok")
EOF
cat py.txt
grep -qx 'python run ok' py.txt && pass "twofold.run() on 2 ranks from the installed module" || fail "python run: $(cat py.txt)"
grep -q "^python error 2 \[.*unknown key 'integrator.t_endd'" py.txt \
  && pass "twofold.run() raises TwofoldError(2) with the CLI's message" || fail "python error: $(cat py.txt)"
grep -qx 'python stop and resume ok' py.txt && pass "twofold.run(): --stop-after raises status 3, --resume completes" \
  || fail "python stop/resume: $(cat py.txt)"
"$PREFIX/bin/twofold" run "$CONFIG" -o cli.h5 --quiet --set ensemble.members=40 || fail "installed CLI run"

# Every member against x(t) = x0 cos(wt) + v0/w sin(wt), v(t) = -x0 w sin(wt) + v0 cos(wt),
# with omega and t_end read from the config (not from the results file).
"$PYTHON" - "$CONFIG" world.h5 self.h5 stop.h5 petsc.h5 cm/world.h5 python.h5 python-stop.h5 cli.h5 <<'EOF' >exact.txt 2>&1 || fail "exact solution: $(cat exact.txt)"
import sys
import h5py
import numpy as np
text = open(sys.argv[1]).read()
def value(key):
    return float(next(l.split(":")[1] for l in text.splitlines() if l.strip().startswith(key + ":")))
w, T = value("omega"), value("t_end")
members = {"world.h5": 40, "self.h5": 64, "stop.h5": 64, "petsc.h5": 8, "cm/world.h5": 40, "python.h5": 24, "python-stop.h5": 64,
           "cli.h5": 40}
for path in sys.argv[2:]:
    with h5py.File(path, "r") as f:
        x0, xT = f["members/initial_state"][...], f["members/final_state"][...]
        complete = int(f.attrs["complete"])
    exact = np.column_stack([x0[:, 0] * np.cos(w * T) + x0[:, 1] / w * np.sin(w * T),
                             -x0[:, 0] * w * np.sin(w * T) + x0[:, 1] * np.cos(w * T)])
    err = np.max(np.abs(xT - exact))
    spread = np.ptp(x0[:, 0])
    ok = complete == 1 and len(x0) == members[path] and err < 1e-8 and spread > 0.01
    print(f"{'ok' if ok else 'FAIL'} {path}: {len(x0)} members, complete {complete}, "
          f"initial spread {spread:.3f}, max |x(T) - exact| = {err:.2e}")
EOF
cat exact.txt
n_ok=$(grep -c '^ok ' exact.txt || true)
[ "$n_ok" = 8 ] && pass "all 8 results files match the exact solution" || fail "exact solution: $(cat exact.txt)"

# The library on 2 ranks computed what the executable computes on 1: members are bitwise equal.
if [ -e world.h5 ] && [ -e cli.h5 ]; then
  for ds in /members/initial_state /members/final_state; do
    h5diff -q world.h5 cli.h5 "$ds" "$ds" >/dev/null 2>&1 && pass "$ds: library (2 ranks) = executable (1 rank)" \
      || fail "$ds differs between the library's and the executable's runs"
  done
fi

# (5) The README's commands from the installed tree, nothing from the source tree or build.
diff <(ls "$SOURCE_DIR/configs") <(ls "$PREFIX/share/twofold/configs") >/dev/null &&
  [ -x "$PREFIX/share/twofold/cluster/submit-array.sh" ] &&
  pass "share/twofold carries every config, and the cluster scripts executable" ||
  fail "share/twofold/configs differs from configs/ or submit-array.sh is not executable"
readme_block() { # the fenced block (```LANG) of README.md after the line matching REGEX
  awk -v re="$1" -v lang="$2" '$0 ~ re {found = 1} found && $0 == "```" lang {inb = 1; next}
    inb && $0 == "```" {exit} inb {print}' "$SOURCE_DIR/README.md"
}
run_lines() { # SCRIPT LOG: the commands in one bash (-e: the first failing one ends it); a
  # file, not stdin, which mpiexec would read
  env -u TWOFOLD_EXECUTABLE -u LD_LIBRARY_PATH bash -ex "$1" >"$2" 2>&1 </dev/null ||
    fail "a README command failed: $(tail -8 "$2")"
}
mkdir -p readme-installed && cd readme-installed
readme_block '^The installed executable needs no twofold library' sh >commands.sh
[ "$(grep -c . commands.sh)" -ge 5 ] || fail "README's block for the installed tree not found: $(cat commands.sh)"
HOME=$WORK/home PATH=/usr/bin:/bin run_lines commands.sh readme.log
[ -s fig5.png ] && grep -q "'ok': 100" readme.log && grep -q '"members": 500' readme.log &&
  pass "README's installed-tree commands, verbatim: run by name, mpirun, postproc, Python" ||
  fail "installed-tree commands: $(cat readme.log)"
cd "$WORK"
# "Using it": build/ -> the prefix's bin/, configs/ and postproc/ -> share/twofold/; the lines
# that need files of the reader's own (my-model.*) or part files (merge) are left out.
mkdir -p readme-using && cd readme-using
ln -s "$PREFIX/bin" build
ln -s "$PREFIX/share/twofold/configs" configs
ln -s "$PREFIX/share/twofold/postproc" postproc
readme_block '^## Using it' sh | grep -v -e my-model -e ' merge ' >commands.sh
[ "$(grep -c . commands.sh)" -ge 8 ] || fail "README's Using-it block not found: $(cat commands.sh)"
SCRATCH=$PWD run_lines commands.sh readme.log
[ -s out.png ] && grep -q 'job: ensemble' readme.log && grep -q '^#SBATCH --array=0-31$' readme.log &&
  [ ! -e slurm-wheel-fig5 ] && pass "README's Using-it commands from the installed tree" ||
  fail "Using-it commands: $(tail -30 readme.log)"
# the Python block, with the package from the prefix (pandas optional: its line needs it)
readme_block '^the source tree without network by' python >example.py
"$PYTHON" -c 'import pandas' 2>/dev/null || sed -i '/to_pandas/d' example.py
cp ../readme-installed/fig5.h5 .
if env -u TWOFOLD_EXECUTABLE PYTHONPATH="$PREFIX/lib/python3/dist-packages" \
    "$PYTHON" example.py >python.log 2>&1 && [ -s harmonic.h5 ]; then
  pass "README's Python block runs ($(grep -c . example.py) lines)"
else
  fail "README's Python block: $(cat python.log)"
fi
cd "$WORK"

[ "$FAILURES" = 0 ] || { echo "$FAILURES failure(s)" >&2; exit 1; }
echo "all passed"

# security.sh — what another local user can plant is refused, through the real executable:
# a link as the output's lock file or as the output itself (either would make the run write
# through it: a victim file truncated), a model cache that others may write to, one that is
# a link, and a model name carrying C.  Each refusal leaves the victim file as it was.
# docs/SECURITY.md says what a config, a plugin, a cache and a results file may do.
source "$(dirname "$0")/lib.sh"
T=$TWOFOLD
cp "$CONFIGS/smoke.yaml" smoke.yaml
SETS=(--set ensemble.members=4 --set integrator.t_end=0.01)
export TWOFOLD_CACHE=$WORK/cache
victim_text="precious results"

# a link planted where the lock file goes: no run, the victim untouched
echo "$victim_text" >victim.txt
ln -s "$WORK/victim.txt" out.h5.lock
expect_fail 2 "lock file .*out.h5.lock' is a symbolic link" -- "$T" run smoke.yaml -o out.h5 "${SETS[@]}" --quiet
[ "$(cat victim.txt)" = "$victim_text" ] && pass "the lock's link target is unchanged" ||
  fail "the victim behind the lock link was changed: '$(cat victim.txt)'"
[ ! -e out.h5 ] && pass "no results file was made" || fail "out.h5 was written"
rm -f out.h5.lock

# a link as the output path itself (with --overwrite, which would replace it)
ln -s "$WORK/victim.txt" linked.h5
expect_fail 2 "output .*linked.h5' is a symbolic link" -- "$T" run smoke.yaml -o linked.h5 --overwrite "${SETS[@]}" --quiet
[ "$(cat victim.txt)" = "$victim_text" ] && [ -L linked.h5 ] && pass "the output link and its target are unchanged" ||
  fail "the output link or its target changed"

# the same run with a real path works (the refusals above are not refusals of everything)
"$T" run smoke.yaml -o real.h5 "${SETS[@]}" --quiet && [ -f real.h5 ] && pass "a plain output path runs" ||
  fail "a plain output path did not run"

# a model cache others may write to, or a link as the cache
cat >decay.yaml <<'EOF'
job: trajectory
model:
  equations:
    name: decay
    state: [x]
    parameters: {k: 1.0}
    field: {x: "-k*x"}
initial:
  state: [1.0]
integrator:
  t_end: 1
EOF
mkdir -m 0777 open-cache && chmod 0777 open-cache
TWOFOLD_CACHE=$WORK/open-cache expect_fail 2 "model cache .*open-cache' may be written by others \(mode 0777\).*chmod go-w" -- "$T" check decay.yaml
[ -z "$(ls open-cache)" ] && pass "nothing was compiled into the open cache" || fail "open cache got: $(ls open-cache)"
mkdir -m 0700 own-cache && ln -s "$WORK/own-cache" linked-cache
TWOFOLD_CACHE=$WORK/linked-cache expect_fail 2 "model cache .*linked-cache' is a symbolic link" -- "$T" check decay.yaml
TWOFOLD_CACHE=$WORK/own-cache "$T" check decay.yaml >/dev/null && pass "a private cache compiles and checks" ||
  fail "a private cache was refused"
ls own-cache/*.so.sha256 >/dev/null 2>&1 && pass "the compile left a manifest beside the object" ||
  fail "no manifest in own-cache: $(ls own-cache)"

# C in a model name: refused by check before anything is generated, and by model show
marker=$WORK/INJECTED
sed "s|name: decay|name: \"d */ __attribute__((constructor)) static void p(void){system(\\\\\"touch $marker\\\\\");} /*\"|" decay.yaml >inject.yaml
expect_fail 2 "inject.yaml:4: key 'model.equations.name': .* is not a model name" -- "$T" check inject.yaml
expect_fail 2 "inject.yaml:4: key 'model.equations.name'" -- "$T" model show inject.yaml
[ ! -e "$marker" ] && pass "the injected constructor never ran" || fail "the injected code ran"
if ls "$TWOFOLD_CACHE"/equations-d* >/dev/null 2>&1; then fail "a refused model left code in the cache"; else pass "a refused model left no code in the cache"; fi

# a library planted in the directory a run starts from, named as one twofold needs (libyaml's,
# found through the search path): never loaded (an empty RUNPATH entry would be that directory)
planted=$WORK/PLANTED
mkdir planted && cd planted
printf '__attribute__((constructor)) static void p(void) { FILE *f = fopen("%s", "w"); if (f) fclose(f); }\n' "$planted" |
  cat <(echo '#include <stdio.h>') - >lib.c
cc -shared -fPIC -Wl,-soname,libyaml-0.so.2 -o libyaml-0.so.2 lib.c || fail "could not build the planted library"
"$T" run ../smoke.yaml -o ../planted.h5 "${SETS[@]}" --quiet && pass "a run started beside a planted library runs" ||
  fail "a run started beside a planted library failed"
cd "$WORK"
[ ! -e "$planted" ] && pass "the planted library was not loaded" || fail "the planted library's constructor ran"
for f in "$T" "$(dirname "$T")"/libtwofold*.so; do
  [ -e "$f" ] || continue
  runpath=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p;s/.*(RPATH).*\[\(.*\)\]/\1/p')
  [ -n "$runpath" ] || { pass "$(basename "$f") has no search path of its own"; continue; }
  case ":$runpath:" in
    *::* | *:[!/]*) fail "$(basename "$f")'s search path '$runpath' has an empty or relative entry" ;;
    *) pass "$(basename "$f")'s search path has only absolute entries" ;;
  esac
done
finish

"""fuzz_configs.py — bad input never crashes twofold, is always named, and never writes.

A seeded generator mutates the shipped configs (configs/*.yaml): unknown and misspelt keys,
wrong types, out-of-range, non-finite and huge numbers, removed keys, truncated files, deep
nesting, alias bombs and hostile strings.  Every mutant goes through `twofold check` (many in
one process: `check --json A B ...`); a share of them also through `twofold run`.  Asserted:
  - the exit status is 0 or 2 (3 for a run stopped by --stop-after): never a signal, never a
    sanitizer report (the CI runs this on the ASan + UBSan build);
  - every rejection names the config file, and the key (or the line, where the file itself
    is broken: truncated YAML has no key);
  - a rejected run writes nothing: the directory holds the config and nothing else.
Environment: TWOFOLD, CONFIGS, WORK as for every script test; FUZZ_COUNT mutants (default
120), FUZZ_SEED (default 1), FUZZ_RUNS rejected mutants also run (default 12),
FUZZ_ACCEPTED_RUNS accepted ones run with --stop-after 1 (default 0: their cost varies).  Runs on the normal
build in CTest and on the sanitizer build in .ci/run with more mutants."""
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(__file__))
import testlib  # noqa: E402

COUNT = int(os.environ.get("FUZZ_COUNT", "120"))
SEED = int(os.environ.get("FUZZ_SEED", "1"))
RUNS = int(os.environ.get("FUZZ_RUNS", "12"))
ACCEPTED_RUNS = int(os.environ.get("FUZZ_ACCEPTED_RUNS", "0"))
BATCH = 40


def fail(what):
    testlib.check(False, what)


def ok(what):
    testlib.check(True, what)
SANITIZER = re.compile(r"AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|LeakSanitizer")

HOSTILE_STRINGS = [
    "%s%s%n%x%p", "../../../../etc/passwd", "x" * 70000, "\u202e\u0000", "\t\r\n", "",
    "null", "~", "-", "--overwrite", "-o /", "a.b.c", "é" * 3000, "1e99999", "0x1p-1074",
    "'; rm -rf /", "\\", "{{{{", "[[[[", "&anchor", "*alias", "!!binary aGVsbG8=",
]
NUMBERS = [
    0, -1, -1e308, 1e308, "1e400", "-1e400", 5e-324, 2**63, -(2**63) - 1, 10**30, 0.5, -0.0,
    ".nan", ".inf", "-.inf", "nan", "inf", "NaN", "1e-320", 123456789012345678901234567890,
]


def leaves(node, path=()):
    """(path, value) of every scalar in a loaded YAML document."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from leaves(v, path + (i,))
    yield path, node


def get(node, path):
    for p in path:
        node = node[p]
    return node


def put(doc, path, value):
    if not path:
        return value
    parent = get(doc, path[:-1])
    parent[path[-1]] = value
    return doc


def dotted(path):
    return ".".join(str(p) for p in path if not isinstance(p, int))


class ConfigLoader(yaml.SafeLoader):
    """YAML as twofold reads it: only true/false are booleans (PyYAML's YAML 1.1 would make a
    key such as `on:` the boolean True, which twofold reads as the text "on")."""


ConfigLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
ConfigLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def mutate(rng, base_text):
    """One mutant: (text, kind, key): key is the dotted path the mutation touched (or None)."""
    doc = yaml.load(base_text, Loader=ConfigLoader)
    paths = [p for p, _ in leaves(doc) if p]
    kind = rng.choice(["unknown", "misspelt", "type", "number", "number", "remove", "hostile",
                       "truncate", "nest", "alias", "duplicate", "text"])
    path = rng.choice(paths)
    key = dotted(path)
    if kind == "unknown":
        maps = [p for p, v in leaves(doc) if isinstance(v, dict)]
        where = rng.choice(maps)
        name = rng.choice(["colour", "t_ned", "membres", "x" * 300, "a b", "ü", "_", "0"])
        get(doc, where)[name] = rng.choice([1, "x", [1, 2], {"a": 1}])
        key = dotted(where + (name,))
    elif kind == "misspelt":
        maps = [p for p, v in leaves(doc) if isinstance(v, dict) and v]
        where = rng.choice(maps)
        m = get(doc, where)
        old = rng.choice(list(m))
        new = old[:-1] if len(old) > 1 else old + "x"
        if new in m:
            new = old + "_"
        m[new] = m.pop(old)
        key = dotted(where + (new,))
    elif kind == "type":
        old = get(doc, path)
        choices = [[1, 2, 3], {"a": 1}, "text", True, None, [], {}, [[1]]]
        doc = put(doc, path, rng.choice([c for c in choices if c != old] or choices))
    elif kind == "number":
        number = str(rng.choice(NUMBERS))  # written as is: .nan, 1e400 are plain YAML scalars
        doc = put(doc, path, "@@NUM@@")
    elif kind == "remove":
        parent = get(doc, path[:-1])
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
        key = None  # a required key that is missing: the message names it, checked below
    elif kind == "hostile":
        doc = put(doc, path, rng.choice(HOSTILE_STRINGS))
    elif kind == "nest":
        depth = rng.choice([5, 50, 99, 101, 500, 5000])
        nest = "[" * depth + "1" + "]" * depth if rng.random() < 0.5 else \
            "{k: " * depth + "1" + "}" * depth
        doc = put(doc, path, "@@NEST@@")
        key = None  # past the nesting limit the parser stops at a line, not a key
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1 << 20)
    if kind == "nest":
        text = text.replace("'@@NEST@@'", nest).replace("@@NEST@@", nest)
    if kind == "number":
        text = text.replace("'@@NUM@@'", number).replace("@@NUM@@", number)
    if kind == "truncate":
        text = base_text[: rng.randrange(0, len(base_text))]
        key = None
    elif kind == "alias":
        text = ("bomb: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" +
                "".join(f"b{i}: &a{i} [*a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1},"
                        f" *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}]\n" for i in range(1, 9)) + text)
        key = "bomb"
    elif kind == "duplicate":
        first = text.splitlines()[0]
        text = text + first + "\n"
        key = None  # a duplicate key: named with its line
    elif kind == "text":
        b = bytearray(text.encode())
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.choice(b"\x00\xff\t:{}[]&*!|>%@`'\"#-?,\x7f\xc3")
        text = b.decode("utf-8", errors="surrogateescape")
        key = None
    return text, kind, key


def write_mutant(name, text):
    with open(name, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)


def crashed(rc, err):
    return rc < 0 or rc > 3 or bool(SANITIZER.search(err))


def judge(name, kind, key, status, message):
    """A rejection names the file, and the key the mutation touched or, where the file itself
    is broken (truncated, mangled, nested past the limit), the line."""
    if status == "ok":
        return
    base = os.path.basename(name)
    leaf = key.split(".")[-1] if key else None
    if base not in message:
        fail(f"{name} ({kind}): the error does not name the file: {message[:300]!r}")
    elif key is not None and leaf not in message and not re.search(rf"{re.escape(base)}:\d+", message):
        fail(f"{name} ({kind} at {key}): the error names neither key nor line: {message[:300]!r}")
    elif key is None and not re.search(r"key '|:\d+|is empty", message):
        fail(f"{name} ({kind}): the error names neither key nor line: {message[:300]!r}")


def check_batch(batch):
    """`twofold check --json` on a batch; a crash is narrowed down to its mutant."""
    names = [b[0] for b in batch]
    res = subprocess.run([testlib.TWOFOLD, "check", "--json", *names], capture_output=True,
                         text=True, errors="replace", timeout=600)
    lines = [json.loads(l) for l in res.stdout.splitlines() if l.startswith("{")]
    if crashed(res.returncode, res.stderr) or len(lines) != len(batch):
        if len(batch) == 1:
            sig = -res.returncode if res.returncode < 0 else 0
            what = f"signal {signal.Signals(sig).name}" if sig else f"exit {res.returncode}"
            fail(f"{names[0]} ({batch[0][1]}): check crashed ({what}): "
                         f"{res.stderr[-2000:]}")
            return {}
        out = {}
        for b in batch:
            out.update(check_batch([b]))
        return out
    if res.returncode not in (0, 2):
        fail(f"check exit status {res.returncode} for {names}")
    return {l["config"]: l for l in lines}


def main():
    # .ci/run passes paths relative to the repository; setup() moves into WORK
    if os.sep in testlib.TWOFOLD:
        testlib.TWOFOLD = os.path.abspath(testlib.TWOFOLD)
    testlib.CONFIGS = os.path.abspath(testlib.CONFIGS)
    testlib.setup()
    rng = random.Random(SEED)
    bases = sorted(glob.glob(os.path.join(testlib.CONFIGS, "*.yaml")))
    mutants = []
    for i in range(COUNT):
        base = rng.choice(bases)
        with open(base) as f:
            text, kind, key = mutate(rng, f.read())
        name = f"m{i:04d}-{kind}-{os.path.basename(base)}"
        write_mutant(name, text)
        mutants.append((name, kind, key))
    results = {}
    for start in range(0, len(mutants), BATCH):
        results.update(check_batch(mutants[start:start + BATCH]))
    rejected = 0
    for name, kind, key in mutants:
        r = results.get(name)
        if r is None:
            continue
        rejected += r["status"] != "ok"
        judge(name, kind, key, r["status"], r.get("error", ""))
    ok(f"{len(mutants)} mutants checked (seed {SEED}): {rejected} rejected, "
               f"{len(mutants) - rejected} accepted, none crashed"
               if not testlib.failures else f"{len(mutants)} mutants checked")

    # A rejected config is rejected by `run` too, before anything is written: each runs alone
    # in an empty directory with its output there.
    bad = [m for m in mutants if results.get(m[0], {}).get("status") == "error"]
    for name, kind, key in rng.sample(bad, min(RUNS, len(bad))):
        d = os.path.abspath(f"run-{name}")
        os.makedirs(d)
        shutil.copy(name, d)
        res = subprocess.run([testlib.TWOFOLD, "run", name, "-o", "out.h5", "--quiet"], cwd=d,
                             capture_output=True, text=True, errors="replace", timeout=600)
        left = sorted(set(os.listdir(d)) - {name})
        if crashed(res.returncode, res.stderr):
            fail(f"{name} ({kind}): run crashed (exit {res.returncode}): "
                         f"{res.stderr[-2000:]}")
        elif res.returncode != 2:
            fail(f"{name} ({kind}): check rejected it but run exited {res.returncode}")
        elif left:
            fail(f"{name} ({kind}): the rejected run left {left}")
        else:
            judge(name, kind, key, "error", res.stderr)
    ok(f"{min(RUNS, len(bad))} rejected mutants also run: exit 2, nothing written")

    # Accepted mutants run too, kept small: stopped after their first unit of work (member,
    # block, sample, point, bisection run) and within a time budget, which every job honours
    # between steps; they must end 0, 2 or 3, never crash or report a runtime error.
    good = [m for m in mutants if results.get(m[0], {}).get("status") == "ok"]
    for name, kind, key in rng.sample(good, min(ACCEPTED_RUNS, len(good))):
        res = subprocess.run([testlib.TWOFOLD, "run", name, "-o", f"{name}.h5", "--quiet",
                              "--stop-after", "1", "--time-limit", "20"],
                             capture_output=True, text=True, errors="replace", timeout=600)
        if crashed(res.returncode, res.stderr) or res.returncode == 1:
            fail(f"{name} ({kind}): accepted, but run exited {res.returncode}: "
                 f"{res.stderr[-1000:]}")
        elif res.returncode == 2:
            judge(name, kind, key, "error", res.stderr)
    if ACCEPTED_RUNS:
        ok(f"{min(ACCEPTED_RUNS, len(good))} accepted mutants run: no crash, no runtime error")
    testlib.finish()


if __name__ == "__main__":
    main()

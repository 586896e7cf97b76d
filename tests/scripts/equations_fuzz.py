"""equations_fuzz.py — the C generated from model.equations carries no user text but as data.

A config's model name, parameter docs and expressions are text that someone else may have
written: they must never become code.  Random names, docs and expressions built from the
characters that end a comment or a literal, start a directive or a trigraph, break a line or
leave ASCII (`*/`, `/*`, `//`, `"`, `\\`, newline, `??=`, `#`, NUL, UTF-8) go through
`twofold model show`, which prints the C that `check` and `run` would compile without
compiling it.  For every config:
  - a name outside the documented alphabet ([A-Za-z][A-Za-z0-9_-]{0,63}) is refused, naming
    the file, line and key, and nothing is generated; a NUL is refused by the reader;
  - an accepted one generates C whose tokens (lexed here by an independent C lexer) are
    exactly the tokens of the same model with plain name and doc, but for the string
    literals, which decode to exactly the name and docs given; its comments are the fixed
    header only; and it compiles (-std=c17 -Wall -Werror, no trigraph warning);
  - a hostile expression is refused naming its key, or generates only the identifiers a
    plain model uses plus the C math functions of the expression language.
`twofold check` of a refused name writes nothing into the cache, and no marker file written
by any injected constructor ever appears.
"""
import os
import random
import re
import subprocess

import testlib as T

T.setup()
INCLUDE = os.path.join(os.environ["SOURCE_DIR"], "include")
CC = os.environ.get("CC", "cc")
COUNT = int(os.environ.get("EQ_FUZZ_COUNT", "50"))
rng = random.Random(20261127)
CACHE = os.path.join(T.WORK, "cache")
os.environ["TWOFOLD_CACHE"] = CACHE
MARKER = os.path.join(T.WORK, "INJECTED")

NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}\Z")
PIECES = ["*/", "/*", "//", '"', "\\", "\n", "??=", "??/", "?", "#", "'", "\t", " ", "{", "}",
          ";", "é", "λ", "\u2028", "a", "Z", "_", "-", "0", "9",
          f'*/ __attribute__((constructor)) static void p(void){{system("touch {MARKER}");}} /*',
          "\\x41", "\\0", "%s", "%n", "$", "`", "\r"]
LIBM = {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log",
        "sqrt", "fabs", "tf_eq_sign", "atan2", "pow", "fmin", "fmax"}

TOKEN = re.compile(r"""
   (?P<ws>[ \t\n]+)
 | (?P<comment>/\*.*?\*/)
 | (?P<line_comment>//[^\n]*)
 | (?P<directive>^[ \t]*\#[^\n]*)
 | (?P<string>"(?:\\.|[^"\\\n])*")
 | (?P<char>'(?:\\.|[^'\\\n])*')
 | (?P<number>\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*)
 | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
 | (?P<punct>\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|[][(){}.,;:?~!<>=+*/%&|^-])
""", re.S | re.M | re.X)


def lex(src):
    """C tokens as (kind, text); raises on any character no token takes."""
    out, pos = [], 0
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m:
            raise ValueError(f"no C token at {pos}: {src[pos:pos + 40]!r}")
        if m.lastgroup != "ws":
            out.append((m.lastgroup, m.group()))
        pos = m.end()
    return out


def decode(literal):
    """A C string literal as the generator writes it: only \\", \\\\ and octal escapes."""
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in '"\\':
            out.append(ord(nxt))
            i += 2
            continue
        m = re.match(r"[0-7]{1,3}", body[i + 1:])
        if not m:
            raise ValueError(f"unexpected escape in {literal!r}")
        out.append(int(m.group(), 8))
        i += 1 + len(m.group())
    return out.decode("utf-8")


def yaml_string(s):
    """A YAML double-quoted scalar (JSON escapes are YAML escapes)."""
    import json
    return json.dumps(s, ensure_ascii=True)


def config(name, doc_a, doc_b, field_x="-a*x + b*y", field_y="x - b*sin(y)"):
    return ("job: trajectory\nmodel:\n  equations:\n"
            f"    name: {yaml_string(name)}\n"
            "    state: [x, y]\n    parameters:\n"
            f"      a: {{default: 1.5, doc: {yaml_string(doc_a)}}}\n"
            f"      b: {{default: 0.5, doc: {yaml_string(doc_b)}}}\n"
            f"    field:\n      x: {yaml_string(field_x)}\n      y: {yaml_string(field_y)}\n"
            "initial:\n  state: [1.0, 0.0]\nintegrator:\n  t_end: 1\n")


def show(text, tag):
    path = T.write(f"fuzz-{tag}.yaml", text)
    res = subprocess.run([T.TWOFOLD, "model", "show", path], capture_output=True, text=True,
                         errors="replace")
    return path, res


def hostile(n_pieces):
    return "".join(rng.choice(PIECES) for _ in range(n_pieces))


def compiles(src, tag):
    path = T.write(f"gen-{tag}.c", src)
    res = subprocess.run([CC, "-std=c17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                          "-I", INCLUDE, path], capture_output=True, text=True)
    return res.returncode == 0, res.stderr


# the plain model: the token stream every accepted hostile one must reproduce
_, base = show(config("plain", "DOC-A", "DOC-B"), "base")
T.check(base.returncode == 0, f"the plain model is shown: {base.stderr}")
base_tokens = lex(base.stdout)
base_literals = {t for k, t in base_tokens if k == "string"}
base_comments = [t for k, t in base_tokens if k in ("comment", "line_comment")]
base_idents = {t for k, t in base_tokens if k == "ident"}
T.check(len(base_comments) == 1 and "Generated by twofold" in base_comments[0],
        f"the plain model's C has one fixed comment: {base_comments}")
ok, why = compiles(base.stdout, "base")
T.check(ok, f"the plain model's C compiles: {why}")
T.check(not os.path.exists(CACHE), "model show creates no cache and compiles nothing")


counts = {"refused": 0, "accepted": 0, "compiled": 0, "bad": 0}
for i in range(COUNT):
    valid_name = rng.random() < 0.4
    name = (rng.choice("abcXYZ") + "".join(rng.choice("abz09_-") for _ in range(rng.randrange(0, 20)))
            if valid_name else hostile(rng.randrange(1, 6)))
    doc_a, doc_b = hostile(rng.randrange(0, 8)), hostile(rng.randrange(0, 8))
    if any(c in "\0" for c in name + doc_a + doc_b):
        continue
    path, res = show(config(name, doc_a, doc_b), i)
    if not NAME_RE.match(name):
        counts["refused"] += 1
        good = (res.returncode == 2 and "model.equations.name" in res.stderr
                and f"{path}:4" in res.stderr and res.stdout == "")
        if not good:
            counts["bad"] += 1
            T.check(False, f"#{i}: name {name!r} refused with file:line and key: "
                           f"rc {res.returncode} {res.stderr!r}")
        continue
    counts["accepted"] += 1
    if res.returncode != 0:
        counts["bad"] += 1
        T.check(False, f"#{i}: name {name!r}, docs {doc_a!r} {doc_b!r} accepted: {res.stderr}")
        continue
    try:
        tokens = lex(res.stdout)
        same_shape = [k for k, _ in tokens] == [k for k, _ in base_tokens]
        values = {"plain": name, "DOC-A": doc_a, "DOC-B": doc_b}
        pairs = [(decode(b), decode(t)) for (kb, b), (_, t) in zip(base_tokens, tokens)
                 if kb == "string"]
        literals_ok = all(got == values.get(plain, plain) for plain, got in pairs)
        others_ok = all(b == t for (kb, b), (kt, t) in zip(base_tokens, tokens) if kb != "string")
    except ValueError as e:
        same_shape, literals_ok, others_ok = False, False, False
        print(f"lex/decode: {e}")
    if not (same_shape and literals_ok and others_ok):
        counts["bad"] += 1
        T.check(False, f"#{i}: tokens of name {name!r}, docs {doc_a!r} {doc_b!r} are the plain "
                       f"model's with the strings as data (shape {same_shape}, literals "
                       f"{literals_ok}, the rest {others_ok})")
        continue
    ok, why = compiles(res.stdout, i)
    counts["compiled"] += ok
    if not ok:
        counts["bad"] += 1
        T.check(False, f"#{i}: the C of name {name!r}, docs {doc_a!r} {doc_b!r} compiles: {why}")
T.check(counts["bad"] == 0 and counts["refused"] > 0.3 * COUNT and counts["compiled"] > 0.25 * COUNT,
        f"{COUNT} hostile names and docs: {counts}")

# hostile expressions: refused naming the key, or only the plain model's identifiers and libm
ops = ["x", "y", "a", "b", "t", "+", "*", "-", "/", "^", "(", ")", "sin(", "1e3", "2"]
expr_counts = {"refused": 0, "accepted": 0, "bad": 0}
for i in range(COUNT // 2):
    e = "".join(rng.choice(ops + PIECES) for _ in range(rng.randrange(1, 8)))
    path, res = show(config("plain", "d", "d", field_x=e), f"e{i}")
    if res.returncode != 0:
        expr_counts["refused"] += 1
        if not (res.returncode == 2 and "model.equations.field.x" in res.stderr and
                f"{path}:" in res.stderr):
            expr_counts["bad"] += 1
            T.check(False, f"expression {e!r} refused naming the key: {res.stderr!r}")
        continue
    expr_counts["accepted"] += 1
    try:
        tokens = lex(res.stdout)
    except ValueError as err:
        expr_counts["bad"] += 1
        T.check(False, f"expression {e!r}: {err}")
        continue
    idents = {t for k, t in tokens if k == "ident"}
    comments = [t for k, t in tokens if k in ("comment", "line_comment")]
    literals = {t for k, t in tokens if k == "string"}
    if not (idents <= base_idents | LIBM and comments == base_comments and
            literals <= base_literals | {'"d"'}):
        expr_counts["bad"] += 1
        T.check(False, f"expression {e!r} generates only known identifiers, the fixed comment "
                       f"and the model's strings: {sorted(idents - base_idents - LIBM)}")
T.check(expr_counts["bad"] == 0 and expr_counts["refused"] > 0.2 * COUNT,
        f"{COUNT // 2} hostile expressions: {expr_counts}")

# a NUL anywhere is refused by the reader
path, res = show('job: trajectory\nmodel:\n  equations:\n    name: "ab\\0c"\n    state: [x]\n'
                 '    field: {x: "-x"}\n', "nul")
T.check(res.returncode == 2 and "NUL" in res.stderr and f"{path}:4" in res.stderr,
        f"a NUL in the name is refused: {res.stderr!r}")

# the injection through `check`: refused before anything is generated or compiled
inj = config(PIECES[25], "d", "d")
path = T.write("inject.yaml", inj)
res = subprocess.run([T.TWOFOLD, "check", path], capture_output=True, text=True)
T.check(res.returncode == 2 and "model.equations.name" in res.stderr,
        f"check refuses the injected name: {res.stderr!r}")
cached = os.listdir(CACHE) if os.path.isdir(CACHE) else []
T.check(not any(f.endswith((".c", ".so")) for f in cached),
        f"check of a refused name wrote no source or object: {cached}")
T.check(not os.path.exists(MARKER), "no injected constructor ever ran")
T.finish()

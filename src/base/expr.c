/* expr.c — see expr.h.  A recursive-descent parser, a differentiator that simplifies as it
 * builds (so Jacobians of ordinary models come out as short as one would write them), an
 * evaluator (for constant folding and the tests) and a C printer. */
#include "expr.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- pool ---------------------------------------------------------------------------------- */

enum { POOL_BLOCK = 256 };

typedef struct block {
  struct block *next;
  size_t used;
  tf_expr nodes[POOL_BLOCK];
} block;

/* When a block cannot be allocated the pool fails for good and hands out its spare node from
 * then on, so the builders below never see NULL; tf_expr_parse and tf_expr_diff report the
 * failure instead of the tree.  The spare is kept a leaf (fold resets it), so a walk over a
 * tree holding it ends. */
struct tf_expr_pool {
  block *head;
  int failed;
  tf_expr spare;
};

tf_expr_pool *tf_expr_pool_new(void) {
  return calloc(1, sizeof(tf_expr_pool));
}

void tf_expr_pool_free(tf_expr_pool *pool) {
  if (!pool) return;
  for (block *b = pool->head, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  free(pool);
}

int tf_expr_pool_failed(const tf_expr_pool *pool) {
  return pool->failed;
}

static tf_expr *node_new(tf_expr_pool *pool, tf_expr_op op) {
  if (!pool->failed && (!pool->head || pool->head->used == POOL_BLOCK)) {
    block *b = calloc(1, sizeof *b);
    if (b) {
      b->next = pool->head;
      pool->head = b;
    }
    pool->failed = !b;
  }
  tf_expr *e = pool->failed ? &pool->spare : &pool->head->nodes[pool->head->used++];
  memset(e, 0, sizeof *e);
  e->op = op;
  return e;
}

/* ---- functions ----------------------------------------------------------------------------- */

static const struct {
  const char *name, *c;
  int nargs;
} functions[TF_FN_COUNT] = {
    [TF_FN_SIN] = {"sin", "sin", 1},       [TF_FN_COS] = {"cos", "cos", 1},
    [TF_FN_TAN] = {"tan", "tan", 1},       [TF_FN_ASIN] = {"asin", "asin", 1},
    [TF_FN_ACOS] = {"acos", "acos", 1},    [TF_FN_ATAN] = {"atan", "atan", 1},
    [TF_FN_SINH] = {"sinh", "sinh", 1},    [TF_FN_COSH] = {"cosh", "cosh", 1},
    [TF_FN_TANH] = {"tanh", "tanh", 1},    [TF_FN_EXP] = {"exp", "exp", 1},
    [TF_FN_LOG] = {"log", "log", 1},       [TF_FN_SQRT] = {"sqrt", "sqrt", 1},
    [TF_FN_ABS] = {"abs", "fabs", 1},      [TF_FN_SIGN] = {"sign", "tf_eq_sign", 1},
    [TF_FN_ATAN2] = {"atan2", "atan2", 2}, [TF_FN_POW] = {"pow", "pow", 2},
    [TF_FN_MIN] = {"min", "fmin", 2},      [TF_FN_MAX] = {"max", "fmax", 2},
};

const char *tf_expr_fn_name(tf_expr_fn fn) {
  return functions[fn].name;
}

int tf_expr_fn_find(const char *name, size_t len) {
  for (int i = 0; i < TF_FN_COUNT; i++)
    if (strlen(functions[i].name) == len && !strncmp(functions[i].name, name, len)) return i;
  return -1;
}

static double sign_of(double u) {
  return u > 0 ? 1.0 : u < 0 ? -1.0 : 0.0;
}

static double apply(tf_expr_fn fn, const double *a) {
  switch (fn) {
    case TF_FN_SIN:
      return sin(a[0]);
    case TF_FN_COS:
      return cos(a[0]);
    case TF_FN_TAN:
      return tan(a[0]);
    case TF_FN_ASIN:
      return asin(a[0]);
    case TF_FN_ACOS:
      return acos(a[0]);
    case TF_FN_ATAN:
      return atan(a[0]);
    case TF_FN_SINH:
      return sinh(a[0]);
    case TF_FN_COSH:
      return cosh(a[0]);
    case TF_FN_TANH:
      return tanh(a[0]);
    case TF_FN_EXP:
      return exp(a[0]);
    case TF_FN_LOG:
      return log(a[0]);
    case TF_FN_SQRT:
      return sqrt(a[0]);
    case TF_FN_ABS:
      return fabs(a[0]);
    case TF_FN_SIGN:
      return sign_of(a[0]);
    case TF_FN_ATAN2:
      return atan2(a[0], a[1]);
    case TF_FN_POW:
      return pow(a[0], a[1]);
    case TF_FN_MIN:
      return fmin(a[0], a[1]);
    case TF_FN_MAX:
      return fmax(a[0], a[1]);
    case TF_FN_COUNT:
      break;
  }
  return NAN;
}

double tf_expr_eval(const tf_expr *e, const double *vals) {
  double a[4] = {0};
  for (int i = 0; i < e->nargs; i++) a[i] = tf_expr_eval(e->arg[i], vals);
  switch (e->op) {
    case TF_EX_NUM:
      return e->value;
    case TF_EX_VAR:
      return vals[e->var];
    case TF_EX_NEG:
      return -a[0];
    case TF_EX_ADD:
      return a[0] + a[1];
    case TF_EX_SUB:
      return a[0] - a[1];
    case TF_EX_MUL:
      return a[0] * a[1];
    case TF_EX_DIV:
      return a[0] / a[1];
    case TF_EX_POW:
      return pow(a[0], a[1]);
    case TF_EX_CALL:
      return apply(e->fn, a);
    case TF_EX_SELECT:
      return a[0] <= a[1] ? a[2] : a[3];
  }
  return NAN;
}

/* ---- simplifying constructors ---------------------------------------------------------------- */

static tf_expr *num(tf_expr_pool *pool, double v) {
  tf_expr *e = node_new(pool, TF_EX_NUM);
  e->value = v;
  return e;
}

static int is_num(const tf_expr *e, double v) {
  return e->op == TF_EX_NUM && e->value == v;
}

static int all_numbers(const tf_expr *e) {
  for (int i = 0; i < e->nargs; i++)
    if (e->arg[i]->op != TF_EX_NUM) return 0;
  return e->op != TF_EX_VAR;
}

/* Replaces a node whose arguments are all numbers by its value, if that is finite.  Every
 * node with arguments passes here once they are set: a failed pool's spare becomes a leaf. */
static tf_expr *fold(tf_expr_pool *pool, tf_expr *e) {
  if (pool->failed) return node_new(pool, TF_EX_NUM);
  if (e->op == TF_EX_NUM || !all_numbers(e)) return e;
  const double v = tf_expr_eval(e, NULL);
  if (!isfinite(v)) return e;
  tf_expr *n = num(pool, v);
  n->column = e->column;
  return n;
}

static tf_expr *make(tf_expr_pool *pool, tf_expr_op op, tf_expr *a, tf_expr *b) {
  tf_expr *e = node_new(pool, op);
  e->nargs = b ? 2 : 1;
  e->arg[0] = a;
  e->arg[1] = b;
  return fold(pool, e);
}

static tf_expr *neg(tf_expr_pool *pool, tf_expr *a) {
  if (a->op == TF_EX_NEG) return a->arg[0];
  return make(pool, TF_EX_NEG, a, NULL);
}

static tf_expr *add(tf_expr_pool *pool, tf_expr *a, tf_expr *b) {
  if (is_num(a, 0)) return b;
  if (is_num(b, 0)) return a;
  if (b->op == TF_EX_NEG) return make(pool, TF_EX_SUB, a, b->arg[0]);
  return make(pool, TF_EX_ADD, a, b);
}

static tf_expr *sub(tf_expr_pool *pool, tf_expr *a, tf_expr *b) {
  if (is_num(b, 0)) return a;
  if (is_num(a, 0)) return neg(pool, b);
  if (b->op == TF_EX_NEG) return make(pool, TF_EX_ADD, a, b->arg[0]);
  return make(pool, TF_EX_SUB, a, b);
}

static tf_expr *mul(tf_expr_pool *pool, tf_expr *a, tf_expr *b) {
  if (is_num(a, 0) || is_num(b, 0)) return num(pool, 0);
  if (is_num(a, 1)) return b;
  if (is_num(b, 1)) return a;
  if (is_num(a, -1)) return neg(pool, b);
  if (is_num(b, -1)) return neg(pool, a);
  return make(pool, TF_EX_MUL, a, b);
}

static tf_expr *divide(tf_expr_pool *pool, tf_expr *a, tf_expr *b) {
  if (is_num(b, 1)) return a;
  if (is_num(a, 0)) return num(pool, 0);
  return make(pool, TF_EX_DIV, a, b);
}

static tf_expr *power(tf_expr_pool *pool, tf_expr *a, tf_expr *b) {
  if (is_num(b, 1)) return a;
  if (is_num(b, 0)) return num(pool, 1);
  return make(pool, TF_EX_POW, a, b);
}

static tf_expr *call(tf_expr_pool *pool, tf_expr_fn fn, tf_expr *a, tf_expr *b) {
  tf_expr *e = node_new(pool, TF_EX_CALL);
  e->fn = fn;
  e->nargs = functions[fn].nargs;
  e->arg[0] = a;
  e->arg[1] = b;
  return fold(pool, e);
}

static tf_expr *select_le(tf_expr_pool *pool, tf_expr *a, tf_expr *b, tf_expr *c, tf_expr *d) {
  tf_expr *e = node_new(pool, TF_EX_SELECT);
  e->nargs = 4;
  e->arg[0] = a, e->arg[1] = b, e->arg[2] = c, e->arg[3] = d;
  return fold(pool, e);
}

/* ---- parser -------------------------------------------------------------------------------- */

typedef struct parser {
  tf_expr_pool *pool;
  const char *text, *at;
  const char *const *names;
  size_t nnames;
  tf_error *err;
  int failed;
  int depth;
} parser;

enum { MAX_NESTING = 200 };

static int column(const parser *ps, const char *where) {
  return (int)(where - ps->text) + 1;
}

static tf_expr *fail_at(parser *ps, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static tf_expr *fail_at(parser *ps, const char *where, const char *fmt, ...) {
  if (ps->failed) return NULL;
  ps->failed = 1;
  char detail[TF_ERROR_MAX - 32];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  tf_fail_code(ps->err, TF_ERR_CONFIG, "column %d: %s", column(ps, where), detail);
  return NULL;
}

static void skip_space(parser *ps) {
  while (*ps->at == ' ' || *ps->at == '\t' || *ps->at == '\n' || *ps->at == '\r') ps->at++;
}

static int is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool tf_expr_is_identifier(const char *s) {
  if (!is_alpha(*s)) return false;
  for (s++; *s; s++)
    if (!is_alpha(*s) && !is_digit(*s)) return false;
  return true;
}

/* A decimal literal written with '.' to a double.  strtod reads the locale's decimal point,
 * so the literal is respelled with that point first: a model means the same in any locale. */
static int read_number(const char *s, size_t len, double *out) {
  char buf[512];
  if (len >= sizeof buf - 8) return -1;
  const struct lconv *lc = localeconv();
  const char *point = lc && lc->decimal_point && *lc->decimal_point ? lc->decimal_point : ".";
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.') {
      const size_t pl = strlen(point);
      if (n + pl >= sizeof buf - 1) return -1;
      memcpy(buf + n, point, pl);
      n += pl;
    } else {
      buf[n++] = s[i];
    }
  }
  buf[n] = '\0';
  char *end;
  *out = strtod(buf, &end);
  return *end == '\0' ? 0 : -1;
}

static tf_expr *parse_expr(parser *ps);
static tf_expr *parse_unary(parser *ps);

/* The character at p as it can be printed in a message: a whole UTF-8 sequence (never a
 * lone byte of one), a control character as \xNN. */
typedef struct shown_char {
  char text[8];
} shown_char;
static shown_char show_char(const char *p) {
  shown_char c = {{0}};
  const unsigned char *u = (const unsigned char *)p;
  const int len = *u < 0x80 ? 1 : (*u & 0xe0) == 0xc0 ? 2 : (*u & 0xf0) == 0xe0 ? 3 : 4;
  int i = 0;
  for (; i < len && u[i] && (i == 0 || (u[i] & 0xc0) == 0x80); i++) c.text[i] = (char)u[i];
  if (*u < 0x20 || *u == 0x7f || i < len || (*u & 0xc0) == 0x80)
    snprintf(c.text, sizeof c.text, "\\x%02x", *u);
  return c;
}

static tf_expr *parse_number(parser *ps) {
  const char *start = ps->at, *p = ps->at;
  while (is_digit(*p)) p++;
  if (*p == '.') {
    p++;
    while (is_digit(*p)) p++;
  }
  if (p == start + 1 && *start == '.') return fail_at(ps, start, "expected a number after '.'");
  if (*p == 'e' || *p == 'E') {
    const char *q = p + 1;
    if (*q == '+' || *q == '-') q++;
    if (!is_digit(*q)) return fail_at(ps, p, "expected digits in the exponent of a number");
    while (is_digit(*q)) q++;
    p = q;
  }
  double v;
  if (read_number(start, (size_t)(p - start), &v) || !isfinite(v))
    return fail_at(ps, start, "number '%.*s' is not a finite double", (int)(p - start), start);
  if (is_alpha(*p)) return fail_at(ps, p, "unexpected '%s' after a number", show_char(p).text);
  ps->at = p;
  tf_expr *e = num(ps->pool, v);
  e->column = column(ps, start);
  return e;
}

static tf_expr *parse_call(parser *ps, const char *name, size_t len, int fn) {
  const char *open = ps->at;
  ps->at++; /* ( */
  tf_expr *args[2] = {NULL, NULL};
  int n = 0;
  skip_space(ps);
  if (*ps->at != ')') {
    for (;;) {
      tf_expr *a = parse_expr(ps);
      if (!a) return NULL;
      if (n < 2) args[n] = a;
      n++;
      skip_space(ps);
      if (*ps->at == ',') {
        ps->at++;
        continue;
      }
      break;
    }
  }
  if (*ps->at != ')')
    return fail_at(ps, *ps->at ? ps->at : open,
                   *ps->at ? "expected ',' or ')' in the arguments of %.*s" : "missing ')' of %.*s",
                   (int)len, name);
  ps->at++;
  if (n != functions[fn].nargs)
    return fail_at(ps, name, "%.*s takes %d argument%s, got %d", (int)len, name,
                   functions[fn].nargs, functions[fn].nargs == 1 ? "" : "s", n);
  tf_expr *e = call(ps->pool, (tf_expr_fn)fn, args[0], args[1]);
  if (!e->column) e->column = column(ps, name);
  return e;
}

static tf_expr *parse_name(parser *ps) {
  const char *start = ps->at;
  while (is_alpha(*ps->at) || is_digit(*ps->at)) ps->at++;
  const size_t len = (size_t)(ps->at - start);
  const char *after = ps->at;
  skip_space(ps);
  const int fn = tf_expr_fn_find(start, len);
  if (*ps->at == '(') {
    if (fn < 0) return fail_at(ps, start, "unknown function '%.*s'", (int)len, start);
    return parse_call(ps, start, len, fn);
  }
  ps->at = after;
  for (size_t i = 0; i < ps->nnames; i++)
    if (strlen(ps->names[i]) == len && !strncmp(ps->names[i], start, len)) {
      tf_expr *e = node_new(ps->pool, TF_EX_VAR);
      e->var = (int)i;
      e->column = column(ps, start);
      return e;
    }
  if (fn >= 0) return fail_at(ps, start, "function '%.*s' needs arguments", (int)len, start);
  char known[TF_ERROR_MAX / 2] = "";
  size_t k = 0;
  for (size_t i = 0; i < ps->nnames && k < sizeof known - 64; i++)
    k += (size_t)snprintf(known + k, sizeof known - k, "%s%s", i ? ", " : "", ps->names[i]);
  return fail_at(ps, start, "unknown name '%.*s' (known: %s)", (int)len, start, known);
}

static tf_expr *parse_primary(parser *ps) {
  skip_space(ps);
  const char c = *ps->at;
  if (is_digit(c) || (c == '.' && is_digit(ps->at[1]))) return parse_number(ps);
  if (is_alpha(c)) return parse_name(ps);
  if (c == '(') {
    const char *open = ps->at++;
    tf_expr *e = parse_expr(ps);
    if (!e) return NULL;
    skip_space(ps);
    if (*ps->at != ')')
      return fail_at(ps, *ps->at ? ps->at : open,
                     *ps->at ? "expected ')'" : "missing ')' of the '(' here");
    ps->at++;
    return e;
  }
  if (!c) return fail_at(ps, ps->at, "expression ends where a value was expected");
  return fail_at(ps, ps->at, "unexpected '%s' where a value was expected", show_char(ps->at).text);
}

static tf_expr *parse_power(parser *ps) {
  tf_expr *base = parse_primary(ps);
  if (!base) return NULL;
  skip_space(ps);
  const char *op = ps->at;
  if (*op == '^' || (op[0] == '*' && op[1] == '*')) {
    ps->at += *op == '^' ? 1 : 2;
    tf_expr *exponent = parse_unary(ps);
    if (!exponent) return NULL;
    tf_expr *e = power(ps->pool, base, exponent);
    if (!e->column) e->column = column(ps, op);
    return e;
  }
  return base;
}

static tf_expr *parse_unary(parser *ps) {
  if (++ps->depth > MAX_NESTING) return fail_at(ps, ps->at, "expression nested too deeply");
  skip_space(ps);
  tf_expr *e;
  if (*ps->at == '-' || *ps->at == '+') {
    const char sign = *ps->at++;
    e = parse_unary(ps);
    if (e && sign == '-') e = neg(ps->pool, e);
  } else {
    e = parse_power(ps);
  }
  ps->depth--;
  return e;
}

static tf_expr *parse_term(parser *ps) {
  tf_expr *e = parse_unary(ps);
  for (;;) {
    if (!e) return NULL;
    skip_space(ps);
    const char c = *ps->at;
    if ((c != '*' && c != '/') || ps->at[1] == '*') return e;
    ps->at++;
    tf_expr *r = parse_unary(ps);
    if (!r) return NULL;
    e = c == '*' ? mul(ps->pool, e, r) : divide(ps->pool, e, r);
  }
}

static tf_expr *parse_expr(parser *ps) {
  if (++ps->depth > MAX_NESTING) return fail_at(ps, ps->at, "expression nested too deeply");
  tf_expr *e = parse_term(ps);
  for (;;) {
    if (!e) break;
    skip_space(ps);
    const char c = *ps->at;
    if (c != '+' && c != '-') break;
    ps->at++;
    tf_expr *r = parse_term(ps);
    if (!r) return NULL;
    e = c == '+' ? add(ps->pool, e, r) : sub(ps->pool, e, r);
  }
  ps->depth--;
  return e;
}

static tf_expr *parse_all(parser *ps) {
  skip_space(ps);
  if (!*ps->at) return fail_at(ps, ps->at, "empty expression");
  tf_expr *e = parse_expr(ps);
  if (!e) return NULL;
  skip_space(ps);
  if (*ps->at) {
    if (*ps->at == ')') return fail_at(ps, ps->at, "unmatched ')'");
    return fail_at(ps, ps->at, "unexpected '%s' after a complete expression",
                   show_char(ps->at).text);
  }
  return e;
}

tf_expr *tf_expr_parse(tf_expr_pool *pool, const char *text, const char *const *names,
                       size_t nnames, tf_error *err) {
  parser ps = {pool, text, text, names, nnames, err, 0, 0};
  tf_expr *e = parse_all(&ps);
  if (!pool->failed) return e;
  tf_fail(err, "out of memory while compiling model equations");
  return NULL;
}

/* ---- derivatives --------------------------------------------------------------------------- */

int tf_expr_depends(const tf_expr *e, int var) {
  if (e->op == TF_EX_VAR) return e->var == var;
  for (int i = 0; i < e->nargs; i++)
    if (tf_expr_depends(e->arg[i], var)) return 1;
  return 0;
}

/* f'(u) for one-argument functions, u being the argument. */
static tf_expr *outer_derivative(tf_expr_pool *pool, tf_expr_fn fn, tf_expr *u) {
  tf_expr *one = num(pool, 1);
  switch (fn) {
    case TF_FN_SIN:
      return call(pool, TF_FN_COS, u, NULL);
    case TF_FN_COS:
      return neg(pool, call(pool, TF_FN_SIN, u, NULL));
    case TF_FN_TAN: { /* 1 + tan^2 */
      tf_expr *t = call(pool, TF_FN_TAN, u, NULL);
      return add(pool, one, mul(pool, t, t));
    }
    case TF_FN_ASIN:
      return divide(pool, one, call(pool, TF_FN_SQRT, sub(pool, one, mul(pool, u, u)), NULL));
    case TF_FN_ACOS:
      return neg(pool,
                 divide(pool, one, call(pool, TF_FN_SQRT, sub(pool, one, mul(pool, u, u)), NULL)));
    case TF_FN_ATAN:
      return divide(pool, one, add(pool, one, mul(pool, u, u)));
    case TF_FN_SINH:
      return call(pool, TF_FN_COSH, u, NULL);
    case TF_FN_COSH:
      return call(pool, TF_FN_SINH, u, NULL);
    case TF_FN_TANH: {
      tf_expr *t = call(pool, TF_FN_TANH, u, NULL);
      return sub(pool, one, mul(pool, t, t));
    }
    case TF_FN_EXP:
      return call(pool, TF_FN_EXP, u, NULL);
    case TF_FN_LOG:
      return divide(pool, one, u);
    case TF_FN_SQRT:
      return divide(pool, num(pool, 0.5), call(pool, TF_FN_SQRT, u, NULL));
    case TF_FN_ABS:
      return call(pool, TF_FN_SIGN, u, NULL);
    case TF_FN_SIGN:
      return num(pool, 0);
    default:
      return NULL;
  }
}

static tf_expr *derivative(tf_expr_pool *pool, const tf_expr *e, int var) {
  if (!tf_expr_depends(e, var)) return num(pool, 0);
  tf_expr *a = e->nargs > 0 ? e->arg[0] : NULL, *b = e->nargs > 1 ? e->arg[1] : NULL;
  tf_expr *da = a ? derivative(pool, a, var) : NULL;
  tf_expr *db = b ? derivative(pool, b, var) : NULL;
  switch (e->op) {
    case TF_EX_NUM:
      return num(pool, 0);
    case TF_EX_VAR:
      return num(pool, 1);
    case TF_EX_NEG:
      return neg(pool, da);
    case TF_EX_ADD:
      return add(pool, da, db);
    case TF_EX_SUB:
      return sub(pool, da, db);
    case TF_EX_MUL:
      return add(pool, mul(pool, da, b), mul(pool, a, db));
    case TF_EX_DIV: /* da/b - a db/b^2 */
      return sub(pool, divide(pool, da, b), divide(pool, mul(pool, a, db), mul(pool, b, b)));
    case TF_EX_POW:
      if (!tf_expr_depends(b, var)) /* b a^(b-1) da */
        return mul(pool, mul(pool, b, power(pool, a, sub(pool, b, num(pool, 1)))), da);
      /* a^b (db log a + b da / a) */
      return mul(pool, (tf_expr *)e,
                 add(pool, mul(pool, db, call(pool, TF_FN_LOG, a, NULL)),
                     divide(pool, mul(pool, b, da), a)));
    case TF_EX_SELECT:
      return select_le(pool, e->arg[0], e->arg[1], derivative(pool, e->arg[2], var),
                       derivative(pool, e->arg[3], var));
    case TF_EX_CALL:
      break;
  }
  switch (e->fn) {
    case TF_FN_ATAN2: /* atan2(y, x): (x dy - y dx) / (x^2 + y^2) */
      return divide(pool, sub(pool, mul(pool, b, da), mul(pool, a, db)),
                    add(pool, mul(pool, b, b), mul(pool, a, a)));
    case TF_FN_POW: {
      tf_expr *p = make(pool, TF_EX_POW, a, b);
      return derivative(pool, p, var);
    }
    case TF_FN_MIN:
      return select_le(pool, a, b, da, db);
    case TF_FN_MAX:
      return select_le(pool, b, a, da, db);
    default:
      return mul(pool, outer_derivative(pool, e->fn, a), da);
  }
}

tf_expr *tf_expr_diff(tf_expr_pool *pool, const tf_expr *e, int var) {
  tf_expr *d = derivative(pool, e, var);
  return pool->failed ? NULL : d;
}

/* ---- C output ------------------------------------------------------------------------------ */

typedef struct sink {
  char **buf;
  size_t *len, *cap;
  int failed;
} sink;

static void put(sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sink *s, const char *fmt, ...) {
  if (s->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    const size_t room = *s->cap - *s->len;
    const int n = vsnprintf(*s->buf ? *s->buf + *s->len : NULL, *s->buf ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      s->failed = 1;
      return;
    }
    if (*s->buf && (size_t)n < room) {
      *s->len += (size_t)n;
      return;
    }
    const size_t want = (*s->len + (size_t)n + 1) * 2;
    char *grown = realloc(*s->buf, want);
    if (!grown) {
      s->failed = 1;
      return;
    }
    *s->buf = grown;
    *s->cap = want;
  }
}

int tf_expr_format_double(double v, char *out, size_t n) {
  if (!isfinite(v) || n < 40) return -1;
  char digits[40];
  snprintf(digits, sizeof digits, "%.17g", fabs(v));
  /* whatever the locale did to the decimal point, the C text uses '.' */
  for (char *c = digits; *c; c++)
    if (!is_digit(*c) && *c != 'e' && *c != '-' && *c != '+') *c = '.';
  double back;
  if (read_number(digits, strlen(digits), &back) || back != fabs(v)) return -1;
  const int integral = strspn(digits, "0123456789") == strlen(digits);
  snprintf(out, n, "%s%s%s%s", v < 0 || signbit(v) ? "(-" : "", digits, integral ? ".0" : "",
           v < 0 || signbit(v) ? ")" : "");
  return 0;
}

static void emit(sink *s, const tf_expr *e, const char *const *c_names) {
  static const char *const infix[] = {
      [TF_EX_ADD] = " + ", [TF_EX_SUB] = " - ", [TF_EX_MUL] = " * ", [TF_EX_DIV] = " / "};
  switch (e->op) {
    case TF_EX_NUM: {
      char text[64];
      if (tf_expr_format_double(e->value, text, sizeof text)) s->failed = 1;
      put(s, "%s", text);
      return;
    }
    case TF_EX_VAR:
      put(s, "%s", c_names[e->var]);
      return;
    case TF_EX_NEG:
      put(s, "(-");
      emit(s, e->arg[0], c_names);
      put(s, ")");
      return;
    case TF_EX_ADD:
    case TF_EX_SUB:
    case TF_EX_MUL:
    case TF_EX_DIV:
      put(s, "(");
      emit(s, e->arg[0], c_names);
      put(s, "%s", infix[e->op]);
      emit(s, e->arg[1], c_names);
      put(s, ")");
      return;
    case TF_EX_POW:
      /* small integer powers as products: what one writes by hand, and exact as pow is not
       * guaranteed to be */
      if (e->arg[1]->op == TF_EX_NUM && (e->arg[1]->value == 2 || e->arg[1]->value == 3)) {
        put(s, "(");
        for (int i = 0; i < (int)e->arg[1]->value; i++) {
          if (i) put(s, " * ");
          emit(s, e->arg[0], c_names);
        }
        put(s, ")");
        return;
      }
      put(s, "pow(");
      emit(s, e->arg[0], c_names);
      put(s, ", ");
      emit(s, e->arg[1], c_names);
      put(s, ")");
      return;
    case TF_EX_CALL:
      put(s, "%s(", functions[e->fn].c);
      for (int i = 0; i < e->nargs; i++) {
        if (i) put(s, ", ");
        emit(s, e->arg[i], c_names);
      }
      put(s, ")");
      return;
    case TF_EX_SELECT:
      put(s, "(");
      emit(s, e->arg[0], c_names);
      put(s, " <= ");
      emit(s, e->arg[1], c_names);
      put(s, " ? ");
      emit(s, e->arg[2], c_names);
      put(s, " : ");
      emit(s, e->arg[3], c_names);
      put(s, ")");
      return;
  }
}

int tf_expr_emit(const tf_expr *e, const char *const *c_names, char **buf, size_t *len,
                 size_t *cap) {
  sink s = {buf, len, cap, 0};
  emit(&s, e, c_names);
  return s.failed ? -1 : 0;
}

/* equations.c — see equations.h.  Reading and checking model.equations, then printing C. */
#define _POSIX_C_SOURCE 200809L
#include "equations.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "code_cache.h"
#include "expr.h"
#include "max_dim.h"
#include "twofold/model.h"

enum {
  MAX_STATES = TF_MAX_DIM,
  MAX_PARAMS = 256,
  MAX_SIGNS = TF_SWITCHES_MAX,
  MAX_NAMES = MAX_STATES + MAX_PARAMS + 1 + MAX_SIGNS
};

#define BASE "model.equations"

typedef enum { SIDE_FIELD, SIDE_PLUS, SIDE_MINUS, SIDE_COUNT } side;

typedef struct model {
  tf_config *cfg;
  tf_expr_pool *pool;
  const char *name;
  size_t dim, nparams, nnames;
  const char *names[MAX_NAMES]; /* states, parameters, t, signs */
  char *c_names[MAX_NAMES];     /* x[i], p[j], t, s[k] */
  size_t t_index;
  double def[MAX_PARAMS], min[MAX_PARAMS], max[MAX_PARAMS];
  const char *doc[MAX_PARAMS];
  bool has_initial;
  double initial[MAX_STATES];
  bool filippov;
  tf_expr *field[SIDE_COUNT][MAX_STATES];
  tf_expr *switching;
  /* `switching` given as a mapping sign name -> h_k: a TF_MODEL_SWITCHES whose one field
   * (field[SIDE_FIELD]) uses the signs, names[t_index + 1 + k] */
  bool switches;
  size_t nsigns;
  tf_expr *switchings[MAX_SIGNS];
  tf_expr *noise[MAX_STATES]; /* NULL: no noise on that component */
  bool noisy;
} model;

bool tf_equations_present(const tf_config *cfg) {
  return tf_config_has(cfg, BASE);
}

/* ---- names --------------------------------------------------------------------------------- */

/* The model's name ends up in generated C (as a string literal) and in file names, so it is
 * held to a plain alphabet before anything is generated, whatever the escaper could do. */
enum { MAX_MODEL_NAME = 64 };
static bool is_model_name(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return false;
  size_t n = 1;
  for (s++; *s; s++, n++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_' || *s == '-'))
      return false;
  return n <= MAX_MODEL_NAME;
}

static int add_name(model *m, const char *name, const char *path, const char *what, tf_error *err) {
  if (!tf_expr_is_identifier(name))
    return tf_config_fail_key(
        m->cfg, path, err,
        "%s name '%s' is not a name (letters, digits and '_', not starting with a digit)", what,
        name);
  if (tf_expr_fn_find(name, strlen(name)) >= 0)
    return tf_config_fail_key(m->cfg, path, err, "%s name '%s' is the name of a function", what,
                              name);
  if (!strcmp(name, "t"))
    return tf_config_fail_key(m->cfg, path, err, "%s name 't' is reserved for time", what);
  for (size_t i = 0; i < m->nnames; i++)
    if (!strcmp(m->names[i], name))
      return tf_config_fail_key(m->cfg, path, err, "%s name '%s' is used twice (%s)", what, name,
                                i < m->dim ? "already a state" : "already a parameter");
  m->names[m->nnames++] = name;
  return 0;
}

static const char *state_list(const model *m, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < m->dim && len + 1 < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", m->names[i]);
  return buf;
}

static int state_index(const model *m, const char *name) {
  for (size_t i = 0; i < m->dim; i++)
    if (!strcmp(m->names[i], name)) return (int)i;
  return -1;
}

/* ---- reading ------------------------------------------------------------------------------- */

static int read_expr(model *m, const char *path, tf_expr **out, tf_error *err) {
  const char *text;
  if (tf_config_get_string(m->cfg, path, NULL, NULL, &text, err)) return -1;
  tf_error why;
  *out = tf_expr_parse(m->pool, text, m->names, m->nnames, &why);
  if (!*out) return tf_config_fail_key(m->cfg, path, err, "%s", why.msg);
  return 0;
}

static int read_parameters(model *m, tf_error *err) {
  const char *keys[MAX_PARAMS];
  size_t n;
  if (tf_config_keys(m->cfg, BASE ".parameters", keys, MAX_PARAMS, &n, err)) return -1;
  for (size_t j = 0; j < n; j++) {
    char path[512], sub[600];
    snprintf(path, sizeof path, BASE ".parameters.%s", keys[j]);
    if (add_name(m, keys[j], path, "parameter", err)) return -1;
    m->min[j] = -INFINITY, m->max[j] = INFINITY, m->doc[j] = "";
    if (!tf_config_is_mapping(m->cfg, path)) {
      if (tf_config_get_double(m->cfg, path, NULL, -INFINITY, INFINITY, &m->def[j], err)) return -1;
    } else {
      const double lo = -INFINITY, hi = INFINITY;
      snprintf(sub, sizeof sub, "%s.min", path);
      if (tf_config_get_double(m->cfg, sub, &lo, -INFINITY, INFINITY, &m->min[j], err)) return -1;
      snprintf(sub, sizeof sub, "%s.max", path);
      if (tf_config_get_double(m->cfg, sub, &hi, -INFINITY, INFINITY, &m->max[j], err)) return -1;
      if (m->min[j] > m->max[j])
        return tf_config_fail_key(m->cfg, sub, err, "max %g is below min %g", m->max[j], m->min[j]);
      snprintf(sub, sizeof sub, "%s.doc", path);
      if (tf_config_get_string(m->cfg, sub, "", NULL, &m->doc[j], err)) return -1;
      snprintf(sub, sizeof sub, "%s.default", path);
      if (tf_config_get_double(m->cfg, sub, NULL, m->min[j], m->max[j], &m->def[j], err)) return -1;
    }
    if (!isfinite(m->def[j]))
      return tf_config_fail_key(m->cfg, path, err, "expected a finite default, got %g", m->def[j]);
  }
  m->nparams = n;
  return 0;
}

/* Reading a missing required field mapping: the getter produces the "missing required key"
 * message with file and line. */
static int require(model *m, const char *path, tf_error *err) {
  const char *s;
  return tf_config_get_string(m->cfg, path, NULL, NULL, &s, err);
}

/* A mapping state -> expression: every state needs one (all_states) or may have one. */
static int read_field(model *m, const char *path, tf_expr **out, bool all_states, tf_error *err) {
  const char *keys[MAX_STATES + 1];
  size_t n;
  char states[1024];
  if (!tf_config_has(m->cfg, path)) return all_states ? require(m, path, err) : 0;
  if (tf_config_keys(m->cfg, path, keys, MAX_STATES + 1, &n, err)) return -1;
  for (size_t i = 0; i < n; i++) {
    char sub[600];
    snprintf(sub, sizeof sub, "%s.%s", path, keys[i]);
    const int s = state_index(m, keys[i]);
    if (s < 0)
      return tf_config_fail_key(m->cfg, sub, err, "'%s' is not a state (states: %s)", keys[i],
                                state_list(m, states, sizeof states));
    if (read_expr(m, sub, &out[s], err)) return -1;
  }
  if (all_states)
    for (size_t i = 0; i < m->dim; i++)
      if (!out[i])
        return tf_config_fail_key(m->cfg, path, err, "state '%s' has no equation here (states: %s)",
                                  m->names[i], state_list(m, states, sizeof states));
  return 0;
}

/* ---- several switching functions ---------------------------------------------------------- */

static int sign_var(const model *m, size_t k) {
  return (int)(m->t_index + 1 + k);
}

/* The leftmost source column of variable var in e (0 if absent). */
static int var_column(const tf_expr *e, int var) {
  if (e->op == TF_EX_VAR) return e->var == var ? e->column : 0;
  int c = 0;
  for (int i = 0; i < e->nargs; i++) {
    const int a = var_column(e->arg[i], var);
    if (a && (!c || a < c)) c = a;
  }
  return c;
}

/* The leftmost source column in e: where the subexpression starts in the text (operators made
 * while parsing carry none, their operands do). */
static int first_column(const tf_expr *e) {
  int c = e->column;
  for (int i = 0; i < e->nargs; i++) {
    const int a = first_column(e->arg[i]);
    if (a && (!c || a < c)) c = a;
  }
  return c;
}

/* Affinity in the signs, decided symbolically: e is affine iff no d e / d s_k depends on any
 * sign (s_k itself included).  Returns the first such k, with the sign left in *other, or -1
 * (also when memory runs out: tf_equations_source reports the failed pool). */
static int nonaffine_in(model *m, const tf_expr *e, size_t *other) {
  for (size_t k = 0; k < m->nsigns; k++) {
    const tf_expr *d = tf_expr_diff(m->pool, e, sign_var(m, k));
    for (size_t j = 0; d && j < m->nsigns; j++)
      if (tf_expr_depends(d, sign_var(m, j))) {
        *other = j;
        return (int)k;
      }
  }
  return -1;
}

/* The innermost subexpression that is itself not affine: where the user has to look. */
static const tf_expr *nonaffine_part(model *m, const tf_expr *e) {
  size_t other;
  for (int i = 0; i < e->nargs; i++)
    if (nonaffine_in(m, e->arg[i], &other) >= 0) return nonaffine_part(m, e->arg[i]);
  return e;
}

/* sign() of an expression of the signs: a step in them whose derivative is 0 almost
 * everywhere, so the symbolic test cannot see it.  Returns the call, the sign in *k. */
static const tf_expr *step_of_sign(const model *m, const tf_expr *e, size_t *k) {
  if (e->op == TF_EX_CALL && e->fn == TF_FN_SIGN)
    for (*k = 0; *k < m->nsigns; ++*k)
      if (tf_expr_depends(e->arg[0], sign_var(m, *k))) return e;
  for (int i = 0; i < e->nargs; i++) {
    const tf_expr *s = step_of_sign(m, e->arg[i], k);
    if (s) return s;
  }
  return NULL;
}

static const char affine_form[] =
    "the field must be f0 + s1*b1 + s2*b2 + ... with f0 and the b's free of signs: no products "
    "of signs, no powers or functions of a sign";

static int check_affine(model *m, tf_error *err) {
  for (size_t r = 0; r < m->dim; r++) {
    const tf_expr *f = m->field[SIDE_FIELD][r];
    char path[600];
    snprintf(path, sizeof path, BASE ".field.%s", m->names[r]);
    size_t j;
    const int k = nonaffine_in(m, f, &j);
    if (k >= 0) {
      const char *sk = m->names[sign_var(m, (size_t)k)], *sj = m->names[sign_var(m, j)];
      return tf_config_fail_key(
          m->cfg, path, err,
          "column %d: the field of '%s' is not affine in the signs: its derivative "
          "with respect to '%s' depends on '%s'%s (%s)",
          first_column(nonaffine_part(m, f)), m->names[r], sk, sj, (size_t)k == j ? " itself" : "",
          affine_form);
    }
    const tf_expr *step = step_of_sign(m, f, &j);
    if (step)
      return tf_config_fail_key(
          m->cfg, path, err,
          "column %d: the field of '%s' is not affine in the signs: sign() of an "
          "expression of '%s' is a step in it (%s)",
          step->column, m->names[r], m->names[sign_var(m, j)], affine_form);
  }
  return 0;
}

/* ---- jumps of the state the switching functions must carry ---------------------------------- */

/* sign() jumps where its argument changes sign: a switching surface.  Inside a Filippov
 * model's fields or switching functions that surface is hidden from the event detection,
 * which steps across it (and d sign = 0 hides it from the Jacobian), so the dynamics come out
 * wrong without a word: refused wherever the argument depends on the state.  abs, min and
 * max stay allowed: they are continuous, so the field is continuous across their kinks (only
 * its Jacobian jumps, which error control copes with; the Stribeck law exp(-|v - vb|/vs) is
 * such a kink on the sticking surface itself).  sign() of parameters and t alone is not a
 * surface in the state space. */
static const tf_expr *sign_of_state(const model *m, const tf_expr *e) {
  if (e->op == TF_EX_CALL && e->fn == TF_FN_SIGN)
    for (size_t i = 0; i < m->dim; i++)
      if (tf_expr_depends(e->arg[0], (int)i)) return e;
  for (int i = 0; i < e->nargs; i++) {
    const tf_expr *s = sign_of_state(m, e->arg[i]);
    if (s) return s;
  }
  return NULL;
}

/* e in a canonical spelling ("(x - 0.5)"), to compare two expressions. */
static void spell(const model *m, const tf_expr *e, char *text, size_t n) {
  char *buf = NULL;
  size_t len = 0, cap = 0;
  snprintf(text, n, "%s",
           tf_expr_emit(e, (const char *const *)m->names, &buf, &len, &cap) ? "?" : buf);
  free(buf);
}

/* The argument of the call at `call` as the user wrote it in the text of key `path`. */
static void source_argument(const model *m, const char *path, const tf_expr *call, char *arg,
                            size_t n) {
  const char *text = NULL, *open;
  tf_error ignored;
  snprintf(arg, n, "...");
  if (tf_config_get_string(m->cfg, path, NULL, NULL, &text, &ignored) || call->column < 1 ||
      (size_t)call->column > strlen(text) || !(open = strchr(text + call->column - 1, '(')))
    return;
  const char *close = open + 1;
  for (int depth = 1; *close && (depth += *close == '(' ? 1 : *close == ')' ? -1 : 0); close++) {
  }
  const char *from = open + 1;
  while (from < close && *from == ' ') from++;
  while (close > from && close[-1] == ' ') close--;
  snprintf(arg, n, "%.*s", (int)(close - from), from);
}

/* The switching function (or sign name's h) that is the same expression as e, -1 if none. */
static int switching_like(const model *m, const tf_expr *e) {
  char want[512], h[512];
  spell(m, e, want, sizeof want);
  for (size_t k = 0; k < (m->switches ? m->nsigns : 1); k++) {
    spell(m, m->switches ? m->switchings[k] : m->switching, h, sizeof h);
    if (!strcmp(h, want)) return (int)k;
  }
  return -1;
}

static int refuse_sign(model *m, const char *path, const tf_expr *call, bool in_switching,
                       tf_error *err) {
  char arg[256], h[256], instead[1400];
  source_argument(m, path, call, arg, sizeof arg);
  const int k = in_switching ? -1 : switching_like(m, call->arg[0]);
  if (in_switching)
    snprintf(instead, sizeof instead,
             "a switching function continuous in the state (the surface is where it is 0), and "
             "%s = 0 as a switching function of its own: 'switching' as a mapping of sign "
             "names, e.g. {s1: ..., s2: %s}, with one 'field' that uses s1 and s2",
             arg, arg);
  else if (k >= 0 && m->switches)
    snprintf(instead, sizeof instead, "the sign '%s' (its switching function is %s)",
             m->names[sign_var(m, (size_t)k)], arg);
  else if (k >= 0)
    snprintf(instead, sizeof instead,
             "its value on each side, since %s is the switching function: +1 in slip.plus "
             "(h > 0), -1 in slip.minus (h < 0)",
             arg);
  else if (m->switches)
    snprintf(instead, sizeof instead,
             "a switching function of its own, 's%zu: %s' under 'switching', and the sign s%zu in "
             "place of sign(%s)",
             m->nsigns + 1, arg, m->nsigns + 1, arg);
  else {
    const char *h_text = NULL;
    tf_error ignored;
    if (tf_config_get_string(m->cfg, BASE ".switching", NULL, NULL, &h_text, &ignored))
      h_text = "h";
    snprintf(h, sizeof h, "%s", h_text);
    snprintf(instead, sizeof instead,
             "a second switching function: 'switching' as a mapping of sign names, "
             "{s1: %s, s2: %s}, and one 'field' with s1 and s2 in place of the sides and of "
             "sign(%s)",
             h, arg, arg);
  }
  return tf_config_fail_key(
      m->cfg, path, err,
      "column %d: sign(%s) jumps where %s changes sign, a switching surface the event "
      "detection does not see (runs would step across it, with wrong dynamics); "
      "write instead %s",
      call->column, arg, arg, instead);
}

static int check_no_sign_of_state(model *m, const char *path, const tf_expr *e, bool in_switching,
                                  tf_error *err) {
  const tf_expr *call = sign_of_state(m, e);
  return call ? refuse_sign(m, path, call, in_switching, err) : 0;
}

/* every state's equation of one field mapping (base.<state>) */
static int check_field_signs(model *m, const char *base, tf_expr *const *f, tf_error *err) {
  for (size_t r = 0; r < m->dim; r++) {
    char path[600];
    snprintf(path, sizeof path, "%s.%s", base, m->names[r]);
    if (check_no_sign_of_state(m, path, f[r], false, err)) return -1;
  }
  return 0;
}

static int check_switches_signs(model *m, tf_error *err) {
  for (size_t k = 0; k < m->nsigns; k++) {
    char path[600];
    snprintf(path, sizeof path, BASE ".switching.%s", m->names[sign_var(m, k)]);
    if (check_no_sign_of_state(m, path, m->switchings[k], true, err)) return -1;
  }
  return check_field_signs(m, BASE ".field", m->field[SIDE_FIELD], err);
}

static int check_filippov_signs(model *m, tf_error *err) {
  return check_no_sign_of_state(m, BASE ".switching", m->switching, true, err) ||
                 check_field_signs(m, BASE ".slip.plus", m->field[SIDE_PLUS], err) ||
                 check_field_signs(m, BASE ".slip.minus", m->field[SIDE_MINUS], err)
             ? -1
             : 0;
}

/* `switching` as a mapping {sign name: h_k}: one field, affine in the signs. */
static int read_switches(model *m, tf_error *err) {
  if (tf_config_has(m->cfg, BASE ".slip"))
    return tf_config_fail_key(
        m->cfg, BASE ".slip", err,
        "with 'switching' a mapping of sign names, the model gives one 'field' that "
        "uses the signs, not slip fields");
  if (tf_config_has(m->cfg, BASE ".noise"))
    return tf_config_fail_key(m->cfg, BASE ".noise", err,
                              "noise is for flows (models without 'switching')");
  const char *keys[64];
  size_t n;
  if (tf_config_keys(m->cfg, BASE ".switching", keys, 64, &n, err)) return -1;
  if (n < 1 || n > MAX_SIGNS)
    return tf_config_fail_key(m->cfg, BASE ".switching", err,
                              "%zu switching functions: expected 1 to %d, each 'sign name: h(x)' "
                              "(e.g. {s1: v1 - vb})",
                              n, MAX_SIGNS);
  char path[MAX_SIGNS][600];
  for (size_t k = 0; k < n; k++) {
    snprintf(path[k], sizeof path[k], BASE ".switching.%s", keys[k]);
    if (add_name(m, keys[k], path[k], "sign", err)) return -1;
  }
  m->nsigns = n;
  for (size_t k = 0; k < n; k++) {
    tf_expr **h = &m->switchings[k];
    if (read_expr(m, path[k], h, err)) return -1;
    int c = var_column(*h, (int)m->t_index);
    if (c)
      return tf_config_fail_key(m->cfg, path[k], err,
                                "column %d: a switching function cannot depend on t", c);
    for (size_t j = 0; j < n; j++)
      if ((c = var_column(*h, sign_var(m, j))))
        return tf_config_fail_key(
            m->cfg, path[k], err,
            "column %d: a switching function cannot depend on the sign '%s' (it is a "
            "function of the state; the signs are values of the field)",
            c, keys[j]);
  }
  if (read_field(m, BASE ".field", m->field[SIDE_FIELD], true, err) || check_affine(m, err))
    return -1;
  for (size_t k = 0; k < n; k++) {
    bool used = false;
    for (size_t r = 0; r < m->dim; r++)
      used |= tf_expr_depends(m->field[SIDE_FIELD][r], sign_var(m, k)) != 0;
    if (!used)
      return tf_config_fail_key(
          m->cfg, path[k], err,
          "the sign '%s' appears in no equation of 'field': the field does not switch "
          "across %s = 0",
          keys[k], keys[k]);
  }
  return check_switches_signs(m, err);
}

static int read_model(model *m, tf_error *err) {
  if (!tf_config_is_mapping(m->cfg, BASE)) {
    const char *keys[1];
    size_t n;
    return tf_config_keys(m->cfg, BASE, keys, 1, &n, err)
               ? -1
               : tf_config_fail_key(m->cfg, BASE, err, "expected a mapping");
  }
  if (tf_config_get_string(m->cfg, BASE ".name", "equations", NULL, &m->name, err)) return -1;
  if (!is_model_name(m->name))
    return tf_config_fail_key(
        m->cfg, BASE ".name", err,
        "'%s' is not a model name: 1 to %d letters, digits, '_' and '-', starting "
        "with a letter (for example 'belt-oscillator')",
        m->name, MAX_MODEL_NAME);
  /* read with room to spare, so that a model over the limit is told the limit, not the size
   * of a buffer */
  const char *states[16 * MAX_STATES];
  if (tf_config_get_string_array(m->cfg, BASE ".state", states, 16 * MAX_STATES, &m->dim, err))
    return -1;
  if (m->dim > TF_MAX_DIM)
    return tf_config_fail_key(m->cfg, BASE ".state", err,
                              "model '%s' has %zu state components; twofold's limit is %d", m->name,
                              m->dim, TF_MAX_DIM);
  for (size_t i = 0; i < m->dim; i++)
    if (add_name(m, states[i], BASE ".state", "state", err)) return -1;
  if (read_parameters(m, err)) return -1;
  m->t_index = m->nnames;
  m->names[m->nnames++] = "t";
  if (tf_config_has(m->cfg, BASE ".initial")) {
    size_t n;
    if (tf_config_get_double_array(m->cfg, BASE ".initial", NULL, 0, m->dim, m->initial, MAX_STATES,
                                   &n, err))
      return -1;
    m->has_initial = true;
  }
  if (tf_config_is_mapping(m->cfg, BASE ".switching")) {
    m->switches = true;
    return read_switches(m, err);
  }
  m->filippov = tf_config_has(m->cfg, BASE ".switching");
  if (m->filippov) {
    if (tf_config_has(m->cfg, BASE ".field"))
      return tf_config_fail_key(
          m->cfg, BASE ".field", err,
          "a Filippov model (with 'switching') gives its fields as slip.plus and "
          "slip.minus, not 'field' (or 'switching' is a mapping of sign names, "
          "e.g. {s1: v - vb}, and 'field' uses them)");
    if (tf_config_has(m->cfg, BASE ".noise"))
      return tf_config_fail_key(m->cfg, BASE ".noise", err,
                                "noise is for flows (models without 'switching')");
    if (read_expr(m, BASE ".switching", &m->switching, err)) return -1;
    if (tf_expr_depends(m->switching, (int)m->t_index))
      return tf_config_fail_key(m->cfg, BASE ".switching", err,
                                "the switching function cannot depend on t");
    if (read_field(m, BASE ".slip.plus", m->field[SIDE_PLUS], true, err) ||
        read_field(m, BASE ".slip.minus", m->field[SIDE_MINUS], true, err))
      return -1;
    /* slip's keys were read one by one; the mapping holding them is used too */
    tf_config_mark_used(m->cfg, BASE ".slip");
    const char *keys[4];
    size_t n;
    if (tf_config_keys(m->cfg, BASE ".slip", keys, 4, &n, err)) return -1;
    for (size_t i = 0; i < n; i++)
      if (strcmp(keys[i], "plus") && strcmp(keys[i], "minus")) {
        char sub[600];
        snprintf(sub, sizeof sub, BASE ".slip.%s", keys[i]);
        return tf_config_fail_key(m->cfg, sub, err,
                                  "expected the sides 'plus' (h > 0) and 'minus' (h < 0)");
      }
    if (check_filippov_signs(m, err)) return -1;
  } else {
    if (tf_config_has(m->cfg, BASE ".slip"))
      return tf_config_fail_key(m->cfg, BASE ".slip", err,
                                "slip fields need a switching function ('switching')");
    if (read_field(m, BASE ".field", m->field[SIDE_FIELD], true, err) ||
        read_field(m, BASE ".noise", m->noise, false, err))
      return -1;
    for (size_t i = 0; i < m->dim; i++) m->noisy |= m->noise[i] != NULL;
  }
  return 0;
}

/* ---- printing ------------------------------------------------------------------------------ */

typedef struct out {
  char *buf;
  size_t len, cap;
  int failed;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...) {
  if (o->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    const size_t room = o->cap - o->len;
    const int n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      o->failed = 1;
      return;
    }
    if (o->buf && (size_t)n < room) {
      o->len += (size_t)n;
      return;
    }
    char *grown = realloc(o->buf, (o->len + (size_t)n + 1) * 2);
    if (!grown) {
      o->failed = 1;
      return;
    }
    o->buf = grown;
    o->cap = (o->len + (size_t)n + 1) * 2;
  }
}

/* e NULL: a derivative that ran out of memory. */
static void put_expr_as(out *o, const tf_expr *e, const char *const *c_names) {
  if (!o->failed && (!e || tf_expr_emit(e, c_names, &o->buf, &o->len, &o->cap))) o->failed = 1;
}

static void put_expr(out *o, const model *m, const tf_expr *e) {
  put_expr_as(o, e, (const char *const *)m->c_names);
}

/* A C string literal: printable ASCII as is, everything else in octal. */
static void put_string(out *o, const char *s) {
  put(o, "\"");
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\')
      put(o, "\\%c", *c);
    else if (*c >= 32 && *c < 127 && *c != '?') /* '?': no trigraphs */
      put(o, "%c", *c);
    else
      put(o, "\\%03o", *c);
  }
  put(o, "\"");
}

static void put_double(out *o, double v) {
  char text[64];
  if (isinf(v))
    put(o, "%sINFINITY", v < 0 ? "-" : "");
  else if (tf_expr_format_double(v, text, sizeof text))
    o->failed = 1;
  else
    put(o, "%s", text);
}

static void put_assignments(out *o, model *m, tf_expr *const *f, const char *target, int indent) {
  for (size_t i = 0; i < m->dim; i++) {
    put(o, "%*s%s[%zu] = ", indent, "", target, i);
    put_expr(o, m, f[i]);
    put(o, ";\n");
  }
}

/* Row-major d f_i / d x_j; a 0 entry is written too (the engine does not clear the matrix). */
static void put_jacobian(out *o, model *m, tf_expr *const *f, const char *target, int indent) {
  for (size_t i = 0; i < m->dim; i++)
    for (size_t j = 0; j < m->dim; j++) {
      put(o, "%*s%s[%zu] = ", indent, "", target, i * m->dim + j);
      put_expr(o, m, tf_expr_diff(m->pool, f[i], (int)j));
      put(o, ";\n");
    }
}

static const char unused[] = "  (void)t, (void)x, (void)p;\n";

/* The C names of the model's symbols inside a loop over lanes l (structure of arrays): state i
 * is x[i * lanes + l], t is t[l], parameter j p[j * lanes + l] where each lane has its own
 * (params_per_lane) and the scalar p[j] otherwise. */
enum { LANE_NAME = 40 };
typedef struct lane_names {
  char text[MAX_NAMES][LANE_NAME];
  const char *at[MAX_NAMES];
} lane_names;
static void name_lanes(const model *m, bool params_per_lane, lane_names *n) {
  for (size_t i = 0; i < m->nnames; i++) {
    if (i < m->dim)
      snprintf(n->text[i], LANE_NAME, "x[%zu * lanes + l]", i);
    else if (i < m->t_index && params_per_lane)
      snprintf(n->text[i], LANE_NAME, "p[%zu * lanes + l]", i - m->dim);
    else if (i == m->t_index)
      snprintf(n->text[i], LANE_NAME, "t[l]");
    else
      snprintf(n->text[i], LANE_NAME, "%s", m->c_names[i]);
    n->at[i] = n->text[i];
  }
}

/* The field for `lanes` members side by side (twofold/model.h's tf_lane_field_fn): each
 * component one loop over the lanes, with the scalar rhs's expression and so its operations
 * in its order per lane (bit for bit rhs's, as the engine requires; the loops vectorise). */
static void put_lane_rhs(out *o, model *m) {
  lane_names names;
  name_lanes(m, false, &names);
  put(o,
      "static void rhs_lanes(int lanes, const double *t, const double *x, const double *p, "
      "double *dxdt, int *code) {\n%s",
      unused);
  for (size_t i = 0; i < m->dim; i++) {
    put(o, "  for (int l = 0; l < lanes; l++) dxdt[%zu * lanes + l] = ", i);
    put_expr_as(o, m->field[SIDE_FIELD][i], names.at);
    put(o, ";\n");
  }
  put(o, "  for (int l = 0; l < lanes; l++) code[l] = 0;\n}\n\n");
}

static void put_flow(out *o, model *m) {
  tf_expr **f = m->field[SIDE_FIELD];
  put(o, "static int rhs(double t, const double *x, const double *p, double *dxdt) {\n%s", unused);
  put_assignments(o, m, f, "dxdt", 2);
  put(o,
      "  return 0;\n}\n\nstatic void jacobian(double t, const double *x, const double *p, double "
      "*jac) {\n%s",
      unused);
  put_jacobian(o, m, f, "jac", 2);
  put(o, "}\n\n");
  if (m->noisy) {
    put(o, "static int diffusion(double t, const double *x, const double *p, double *g) {\n%s",
        unused);
    for (size_t i = 0; i < m->dim; i++) {
      put(o, "  g[%zu] = ", i);
      if (m->noise[i])
        put_expr(o, m, m->noise[i]);
      else
        put(o, "0.0");
      put(o, ";\n");
    }
    put(o,
        "  return 0;\n}\n\nstatic int diffusion_dx(double t, const double *x, const double *p, "
        "double *dg) "
        "{\n%s",
        unused);
    for (size_t i = 0; i < m->dim; i++) {
      put(o, "  dg[%zu] = ", i);
      if (m->noise[i])
        put_expr(o, m, tf_expr_diff(m->pool, m->noise[i], (int)i));
      else
        put(o, "0.0");
      put(o, ";\n");
    }
    put(o, "  return 0;\n}\n\n");
  }
  if (m->noisy) { /* noise keeps a flow off lanes */
    put(o,
        "static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), rhs, jacobian, diffusion, "
        "diffusion_dx};\n\n");
    return;
  }
  put_lane_rhs(o, m);
  put(o,
      "static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), rhs, jacobian, NULL, NULL, "
      "rhs_lanes};\n\n");
}

/* slip for members side by side, each lane with its own parameters (twofold/model.h's
 * slip_lanes): parameter j of lane l at p[j * lanes + l] and the lane's side after them; per
 * lane the scalar slip's expressions for its side (the same operations in the same order: bit
 * for bit slip's, as the engine requires). */
static void put_lane_slip(out *o, model *m) {
  lane_names names;
  name_lanes(m, true, &names);
  put(o,
      "static void slip_lanes(int lanes, const double *t, const double *x, const double *p, "
      "double *dx, int *code) {\n%s  const double *side = p + %zu * lanes;\n"
      "  for (int l = 0; l < lanes; l++) {\n    if (side[l] > 0) {\n",
      unused, m->nparams);
  for (int s = 0; s < 2; s++) {
    for (size_t i = 0; i < m->dim; i++) {
      put(o, "      dx[%zu * lanes + l] = ", i);
      put_expr_as(o, m->field[s ? SIDE_MINUS : SIDE_PLUS][i], names.at);
      put(o, ";\n");
    }
    put(o, s ? "    }\n" : "    } else {\n");
  }
  put(o, "    code[l] = 0;\n  }\n}\n\n");
}

static void put_filippov(out *o, model *m) {
  put(o,
      "static double switching(const double *x, const double *p, double *grad) {\n"
      "  (void)x, (void)p;\n  if (grad) {\n");
  for (size_t j = 0; j < m->dim; j++) {
    put(o, "    grad[%zu] = ", j);
    put_expr(o, m, tf_expr_diff(m->pool, m->switching, (int)j));
    put(o, ";\n");
  }
  put(o, "  }\n  return ");
  put_expr(o, m, m->switching);
  put(o, ";\n}\n\n");
  put(o,
      "static int slip(double t, const double *x, int side, const double *p, double *dx) {\n"
      "%s  if (side > 0) {\n",
      unused);
  put_assignments(o, m, m->field[SIDE_PLUS], "dx", 4);
  put(o, "  } else {\n");
  put_assignments(o, m, m->field[SIDE_MINUS], "dx", 4);
  put(o, "  }\n  return 0;\n}\n\n");
  put(o,
      "static void slip_jacobian(double t, const double *x, int side, const double *p, "
      "double *jac) {\n%s  if (side > 0) {\n",
      unused);
  put_jacobian(o, m, m->field[SIDE_PLUS], "jac", 4);
  put(o, "  } else {\n");
  put_jacobian(o, m, m->field[SIDE_MINUS], "jac", 4);
  put(o, "  }\n}\n\n");
  put_lane_slip(o, m);
  put(o,
      "static const tf_filippov_ops ops = {TF_OPS_SIZE(tf_filippov_ops), .switching = switching, "
      ".slip = slip, "
      ".slip_jacobian = slip_jacobian, .slip_lanes = slip_lanes};\n\n");
}

static void put_switches(out *o, model *m) {
  put(o,
      "/* s[k]: the sign of the k-th switching function, in the order of the config */\n\n"
      "static double switching(int i, const double *x, const double *p, double *grad) {\n"
      "  (void)x, (void)p;\n  switch (i) {\n");
  for (size_t k = 0; k < m->nsigns; k++) {
    put(o, "    case %zu:\n      if (grad) {\n", k);
    for (size_t j = 0; j < m->dim; j++) {
      put(o, "        grad[%zu] = ", j);
      put_expr(o, m, tf_expr_diff(m->pool, m->switchings[k], (int)j));
      put(o, ";\n");
    }
    put(o, "      }\n      return ");
    put_expr(o, m, m->switchings[k]);
    put(o, ";\n");
  }
  put(o, "    default:\n      return NAN;\n  }\n}\n\n");
  static const char unused_s[] = "  (void)t, (void)x, (void)s, (void)p;\n";
  put(o,
      "static int field(double t, const double *x, const double *s, const double *p, "
      "double *dx) {\n%s",
      unused_s);
  put_assignments(o, m, m->field[SIDE_FIELD], "dx", 2);
  put(o,
      "  return 0;\n}\n\nstatic void field_jacobian(double t, const double *x, const double *s, "
      "const double *p, double *jac) {\n%s",
      unused_s);
  put_jacobian(o, m, m->field[SIDE_FIELD], "jac", 2);
  put(o, "}\n\n");
  put(o,
      "static const tf_switches_ops ops = {TF_OPS_SIZE(tf_switches_ops), .nswitches = %zu, "
      ".switching = switching, "
      ".field = field, .field_jacobian = field_jacobian};\n\n",
      m->nsigns);
}

static char *print_model(model *m) {
  out o = {0};
  /* user text reaches this source only through put_string (a C string literal) and through
   * names checked to be identifiers: never inside a comment */
  put(&o,
      "/* Generated by twofold from model.equations.  Do not edit; edit the config. */\n"
      "#include <math.h>\n#include <stddef.h>\n\n#include \"twofold/model.h\"\n\n"
      "static inline double tf_eq_sign(double u) {\n"
      "  return u > 0 ? 1.0 : u < 0 ? -1.0 : 0.0;\n}\n\n");
  put(&o, "static const char *const state_names[] = {");
  for (size_t i = 0; i < m->dim; i++) {
    put(&o, "%s", i ? ", " : "");
    put_string(&o, m->names[i]);
  }
  put(&o, "};\n\n");
  if (m->has_initial) {
    put(&o, "static const double initial[] = {");
    for (size_t i = 0; i < m->dim; i++) {
      put(&o, "%s", i ? ", " : "");
      put_double(&o, m->initial[i]);
    }
    put(&o, "};\n\n");
  }
  if (m->nparams) {
    put(&o, "static const tf_param params[] = {\n");
    for (size_t j = 0; j < m->nparams; j++) {
      put(&o, "    {");
      put_string(&o, m->names[m->dim + j]);
      put(&o, ", ");
      put_double(&o, m->def[j]);
      put(&o, ", ");
      put_double(&o, m->min[j]);
      put(&o, ", ");
      put_double(&o, m->max[j]);
      put(&o, ", ");
      put_string(&o, m->doc[j]);
      put(&o, ", 0},\n");
    }
    put(&o, "};\n\n");
  }
  if (m->switches)
    put_switches(&o, m);
  else if (m->filippov)
    put_filippov(&o, m);
  else
    put_flow(&o, m);
  put(&o, "static const tf_model_def model = {\n    TF_MODEL_HEAD,\n    .name = ");
  put_string(&o, m->name);
  put(&o,
      ",\n    .doc = \"a model written as equations in the config\",\n"
      "    .kind = %s,\n    .dim = %zu,\n    .state_names = state_names,\n"
      "    .initial = %s,\n    .nparams = %zu,\n    .params = %s,\n    .%s = &ops,\n};\n\n"
      "TWOFOLD_MODELS(&model);\n",
      m->switches   ? "TF_MODEL_SWITCHES"
      : m->filippov ? "TF_MODEL_FILIPPOV"
                    : "TF_MODEL_FLOW",
      m->dim, m->has_initial ? "initial" : "NULL", m->nparams, m->nparams ? "params" : "NULL",
      m->switches   ? "switches"
      : m->filippov ? "filippov"
                    : "flow");
  if (o.failed) {
    free(o.buf);
    return NULL;
  }
  return o.buf;
}

/* ---- entry points -------------------------------------------------------------------------- */

int tf_equations_source(tf_config *cfg, char **source, const char **name, tf_error *err) {
  *source = NULL;
  model *m = calloc(1, sizeof *m);
  if (!m) return tf_fail(err, "out of memory");
  m->cfg = cfg;
  m->pool = tf_expr_pool_new();
  int rc = m->pool ? read_model(m, err) : tf_fail(err, "out of memory");
  if (!rc) {
    for (size_t i = 0; i < m->nnames && !rc; i++) {
      char c[32];
      if (i < m->dim)
        snprintf(c, sizeof c, "x[%zu]", i);
      else if (i < m->t_index)
        snprintf(c, sizeof c, "p[%zu]", i - m->dim);
      else if (i == m->t_index)
        snprintf(c, sizeof c, "t");
      else
        snprintf(c, sizeof c, "s[%zu]", i - m->t_index - 1);
      if (!(m->c_names[i] = strdup(c))) rc = tf_fail(err, "out of memory");
    }
  }
  if (!rc) {
    *source = print_model(m);
    *name = m->name;
  }
  /* a pool that ran out of memory voids the checks of affinity and the C made from it */
  if (!rc && tf_expr_pool_failed(m->pool)) {
    free(*source);
    *source = NULL;
    rc = tf_config_fail_key(m->cfg, BASE, err, "out of memory while compiling model equations");
  } else if (!rc && !*source) {
    rc = tf_config_fail_key(m->cfg, BASE, err,
                            "could not print the model as C (a constant that does not "
                            "round-trip through text, or out of memory)");
  }
  for (size_t i = 0; i < m->nnames; i++) free(m->c_names[i]);
  tf_expr_pool_free(m->pool);
  free(m);
  return rc;
}

/* A flow's sign() of the state is a jump the integrator steps across as best it can (steps
 * shrink there, runs can end in max_steps): allowed, since a flow may mean it, but said. */
int tf_equations_warnings(tf_config *cfg, char *text, size_t n) {
  text[0] = '\0';
  model *m = calloc(1, sizeof *m);
  if (!m) return 0;
  m->cfg = cfg;
  m->pool = tf_expr_pool_new();
  int count = 0;
  size_t len = 0;
  if (m->pool && !read_model(m, &(tf_error){0}) && !m->filippov && !m->switches)
    for (size_t r = 0; r < m->dim; r++) {
      const tf_expr *call = sign_of_state(m, m->field[SIDE_FIELD][r]);
      if (!call) continue;
      char path[600], arg[512];
      tf_error w;
      snprintf(path, sizeof path, BASE ".field.%s", m->names[r]);
      source_argument(m, path, call, arg, sizeof arg);
      tf_config_fail_key(
          m->cfg, path, &w,
          "column %d: sign(%s) makes the field jump where %s changes sign, a surface this "
          "flow's integrator does not locate (steps shrink there; runs can end in "
          "max_steps, or step across it): for a discontinuous field write the model with "
          "'switching: %s' and its two sides in slip.plus and slip.minus",
          call->column, arg, arg, arg);
      if (len < n) len += (size_t)snprintf(text + len, n - len, "%s%s", count ? "\n" : "", w.msg);
      count++;
    }
  tf_expr_pool_free(m->pool);
  free(m);
  return count;
}

static uint64_t fnv1a(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

int tf_equations_write(tf_config *cfg, const char *dir, char *path, size_t n, const char **name,
                       tf_error *err) {
  char *source;
  if (tf_equations_source(cfg, &source, name, err)) return -1;
  /* the name is checked to be a plain word; the file is created by mkstemp and renamed */
  snprintf(path, n, "%s/equations-%s-%016llx.c", dir, *name, (unsigned long long)fnv1a(source));
  tf_error why;
  const int rc = tf_cache_write(path, source, strlen(source), &why)
                     ? tf_fail_code(err, TF_ERR_MODEL,
                                    "cannot write the model's generated source: %s", why.msg)
                     : 0;
  free(source);
  return rc;
}

/* member_columns.c — see member_columns.h.  The one table of per-member output columns. */
#include "member_columns.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "h5io.h"

struct tf_member_column {
  const char *name;
  tf_column_type type;
  const char *doc; /* NULL: doc_of */
  uint64_t (*width)(const tf_member_layout *l);
  const char *(*doc_of)(const tf_member_layout *l);
  /* in place: the buffer of b the engine writes the slot to; else from the result */
  double **(*buffer)(tf_member_buffers *b);
  void (*fill)(const tf_member_layout *l, const tf_member_result *r, void *slot);
  void (*describe)(const tf_member_engine *e, hid_t d, hid_t file);
  /* A count of the result's tf_counts (counts.h): 1 + the offset of its field; 0 for every
   * other column */
  size_t count;
  /* written only where a job names it (output.columns), so that the files of the configs
   * that do not ask for it stay as they were */
  bool opt_in;
};

/* --- widths ------------------------------------------------------------------------------ */

static uint64_t one(const tf_member_layout *l) {
  (void)l;
  return 1;
}
static uint64_t state(const tf_member_layout *l) {
  return l->dim;
}
static uint64_t sampled_params(const tf_member_layout *l) {
  return l->sampled_params;
}
static uint64_t if_jacobians(const tf_member_layout *l) {
  return l->counts_jacobians;
}
static uint64_t if_rhs(const tf_member_layout *l) {
  return l->counts_rhs;
}
static uint64_t event_kinds(const tf_member_layout *l) {
  return (uint64_t)l->event_kinds;
}
static uint64_t if_visits(const tf_member_layout *l) {
  return l->counts_visits;
}
static uint64_t if_mode(const tf_member_layout *l) {
  return l->mode_doc != NULL;
}
/* Draws are taken at a two-fold and at intersections of switching surfaces (full stick h = g
 * = 0, or two of several switching functions): a model with neither never draws, and gets no
 * exits table. */
static bool model_draws(const tf_kernel *k) {
  const tf_filippov_ops *f = k->filippov;
  return (f && (f->twofold_guess || f->secondary_switching)) ||
         (k->switches && k->switches->nswitches > 1);
}
static uint64_t exit_slots(const tf_member_layout *l) {
  return model_draws(l->kernel) ? (uint64_t)l->exit_slots * l->exit_width : 0;
}
static uint64_t event_slots(const tf_member_layout *l) {
  return (uint64_t)l->event_slots * l->event_width;
}
static uint64_t samples(const tf_member_layout *l) {
  return (uint64_t)l->samples * l->dim;
}
static uint64_t impact_counts(const tf_member_layout *l) {
  return l->counts_impacts ? 4 : 0;
}
static uint64_t if_impacts(const tf_member_layout *l) {
  return l->counts_impacts;
}
static uint64_t poincare_slots(const tf_member_layout *l) {
  return (uint64_t)l->poincare_slots * (1 + l->dim);
}
static uint64_t if_poincare(const tf_member_layout *l) {
  return l->poincare_slots > 0;
}
static uint64_t poincare_modes(const tf_member_layout *l) {
  return l->poincare_mode_doc ? (uint64_t)l->poincare_slots : 0;
}

/* --- docs the layout gives --------------------------------------------------------------- */

static const char *events_doc(const tf_member_layout *l) {
  return l->events_doc;
}
static const char *mode_doc(const tf_member_layout *l) {
  return l->mode_doc;
}
static const char *poincare_mode_doc(const tf_member_layout *l) {
  return l->poincare_mode_doc;
}

/* --- buffers the engine fills ------------------------------------------------------------ */

static double **final_buffer(tf_member_buffers *b) {
  return &b->final;
}
static double **initial_buffer(tf_member_buffers *b) {
  return &b->initial;
}
static double **parameters_buffer(tf_member_buffers *b) {
  return &b->parameters;
}
static double **exits_buffer(tf_member_buffers *b) {
  return &b->exits;
}
static double **event_log_buffer(tf_member_buffers *b) {
  return &b->event_log;
}
static double **samples_buffer(tf_member_buffers *b) {
  return &b->sample_x;
}

/* --- values from the result -------------------------------------------------------------- */

static void fill_t(const tf_member_layout *l, const tf_member_result *r, void *slot) {
  (void)l;
  *(double *)slot = r->t;
}
static void fill_events(const tf_member_layout *l, const tf_member_result *r, void *slot) {
  for (int i = 0; i < l->event_kinds; i++) ((int64_t *)slot)[i] = r->events[i];
}
static void fill_visits(const tf_member_layout *l, const tf_member_result *r, void *slot) {
  (void)l;
  *(int64_t *)slot = r->visits;
}
static void fill_mode(const tf_member_layout *l, const tf_member_result *r, void *slot) {
  (void)l;
  *(int64_t *)slot = r->mode;
}
static void fill_impacts(const tf_member_layout *l, const tf_member_result *r, void *slot) {
  (void)l;
  const tf_impact_result *c = &r->extra.impact.counts;
  int64_t *v = slot;
  v[0] = c->impacts, v[1] = c->chatters, v[2] = c->releases, v[3] = c->sections;
}
static void fill_stick(const tf_member_layout *l, const tf_member_result *r, void *slot) {
  (void)l;
  *(double *)slot = r->extra.impact.counts.stick_time;
}
static void fill_poincare(const tf_member_layout *l, const tf_member_result *r, void *slot) {
  memcpy(slot, r->poincare.samples, poincare_slots(l) * sizeof(double));
}
static void fill_poincare_mode(const tf_member_layout *l, const tf_member_result *r, void *slot) {
  memcpy(slot, r->poincare.modes, poincare_modes(l) * sizeof(double));
}
static void fill_recorded(const tf_member_layout *l, const tf_member_result *r, void *slot) {
  (void)l;
  *(int64_t *)slot = r->poincare.recorded;
}
static void fill_period(const tf_member_layout *l, const tf_member_result *r, void *slot) {
  (void)l;
  *(int64_t *)slot = r->poincare.period;
}

/* --- attributes -------------------------------------------------------------------------- */

static void describe_events(const tf_member_engine *e, hid_t d, hid_t file) {
  (void)file;
  const tf_member_layout *l = &e->layout;
  if (l->event_kind_names)
    tf_h5_attr_strings(d, "kinds", l->event_kind_names, (size_t)l->event_kinds);
}

static void describe_mode(const tf_member_engine *e, hid_t d, hid_t file) {
  (void)file;
  if (e->layout.modes_attr) tf_h5_attr_string(d, "modes", e->layout.modes_attr);
}

static void log_fields(hid_t d, const tf_member_layout *l, const char *head) {
  char state[512], fields[640];
  tf_join_state_names(l->kernel, state, sizeof state);
  snprintf(fields, sizeof fields, "%s,%s", head, state);
  tf_h5_attr_names(d, "fields", fields);
}

typedef struct draws_place {
  hid_t log, where;
} draws_place;

static void put_draws_attr(void *ctx, bool on_log, const char *name, const char *value) {
  const draws_place *p = ctx;
  if (!on_log || p->log >= 0) tf_h5_attr_string(on_log ? p->log : p->where, name, value);
}

void tf_member_columns_describe_draws(const tf_member_engine *e, hid_t log, hid_t where) {
  draws_place p = {log, where};
  if (e->ops->describe_draws) e->ops->describe_draws(e, put_draws_attr, &p);
}

static void describe_exits(const tf_member_engine *e, hid_t d, hid_t file) {
  log_fields(d, &e->layout, "t,u,side,kind");
  tf_h5_attr_int(d, "slot_width", (long long)e->layout.exit_width);
  tf_member_columns_describe_draws(e, d, file);
}

static void describe_event_log(const tf_member_engine *e, hid_t d, hid_t file) {
  log_fields(d, &e->layout, "t,kind,from,to");
  describe_events(e, d, file);
  tf_h5_attr_int(d, "slot_width", (long long)e->layout.event_width);
}

static void describe_samples(const tf_member_engine *e, hid_t d, hid_t file) {
  (void)file;
  tf_h5_attr_int(d, "samples", e->layout.samples);
  tf_h5_attr_double(d, "t0", e->layout.t0);
  tf_h5_attr_double(d, "t_end", e->layout.t_end);
}

static void describe_parameters(const tf_member_engine *e, hid_t d, hid_t file) {
  (void)file;
  tf_h5_attr_strings(d, "names", e->layout.sampled_names, e->layout.sampled_params);
}

/* --- the table --------------------------------------------------------------------------- */

/* Each row: name, type, doc (NULL: .doc_of), width; then what fills it, designated: a count
 * (.count), a buffer the engine fills in place (.buffer), or a value of the result (.fill);
 * optionally .describe and .opt_in.  The counts' rows are counts.h's list, TF_COUNTS. */
#define COUNT_COLUMN(field, column, doc, width, opt) \
  {column, TF_COLUMN_I64, doc, width, .count = 1 + offsetof(tf_counts, field), .opt_in = opt},
static const tf_member_column table[] = {
    {"final_state", TF_COLUMN_F64, "state at t_final (members x dim)", state,
     .buffer = final_buffer},
    {"initial_state", TF_COLUMN_F64,
     "state at initial.time, perturbation or exit included (members x dim)", state,
     .buffer = initial_buffer},
    {"parameters", TF_COLUMN_F64,
     "the member's sampled model parameters (model.sample; members x sampled, attribute names)",
     sampled_params, .buffer = parameters_buffer, .describe = describe_parameters},
    {"t_final", TF_COLUMN_F64, "time reached", one, .fill = fill_t},
    /* clang-format off: the list expands to rows, each with its comma */
    TF_COUNTS(COUNT_COLUMN)
    /* clang-format on */
    {"events", TF_COLUMN_I64, NULL, event_kinds, .doc_of = events_doc, .fill = fill_events,
     .describe = describe_events},
    {"twofold_visits", TF_COLUMN_I64, "arrivals at the nondeterministic two-fold", if_visits,
     .fill = fill_visits},
    {"final_mode", TF_COLUMN_I64, NULL, if_mode, .doc_of = mode_doc, .fill = fill_mode,
     .describe = describe_mode},
    {"exits", TF_COLUMN_F64, "exit choices, slots of (t, u, side, state) (attribute fields)",
     exit_slots, .buffer = exits_buffer, .describe = describe_exits},
    {"event_log", TF_COLUMN_F64, "first events, slots of (t, kind, from, to, state)", event_slots,
     .buffer = event_log_buffer, .describe = describe_event_log},
    {"trajectory", TF_COLUMN_F64, "state at equally spaced times (samples x dim per member)",
     samples, .buffer = samples_buffer, .describe = describe_samples},
    {"impacts", TF_COLUMN_I64,
     "impacts, chattering episodes completed, releases from sticking, section crossings",
     impact_counts, .fill = fill_impacts},
    {"stick_time", TF_COLUMN_F64, "time spent sticking on a constraint", if_impacts,
     .fill = fill_stick},
    {"poincare", TF_COLUMN_F64, "state at the recorded events: slots of (t, state), NaN-padded",
     poincare_slots, .fill = fill_poincare},
    {"poincare_recorded", TF_COLUMN_I64, "slots filled by events", if_poincare,
     .fill = fill_recorded},
    {"poincare_period", TF_COLUMN_I64,
     "period of the recorded values at the early stop (0: none); the slots after "
     "poincare_recorded continue that period",
     if_poincare, .fill = fill_period},
    {"poincare_mode", TF_COLUMN_F64, NULL, poincare_modes, .doc_of = poincare_mode_doc,
     .fill = fill_poincare_mode, .describe = describe_mode},
};

static const tf_member_column *column_named(const char *name) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, name) == 0) return &table[i];
  return NULL;
}

/* Appends column def to c if engine e produces it. */
static int add_column(tf_member_columns *c, const tf_member_engine *e,
                      const tf_member_column *def) {
  if (!def || c->n == TF_MEMBER_COLUMNS_MAX) return -1;
  const uint64_t width = def->width(&e->layout);
  if (width == 0) return 0;
  const char *doc = def->doc ? def->doc : def->doc_of(&e->layout);
  c->def[c->n] = def;
  c->cols[c->n++] = (tf_column){def->name, def->type, width, doc};
  return 0;
}

int tf_member_columns_pick(tf_member_columns *c, const tf_member_engine *e,
                           const char *const *names) {
  c->n = 0;
  for (; *names; names++)
    if (add_column(c, e, column_named(*names))) return -1;
  return 0;
}

int tf_member_columns_pick_all(tf_member_columns *c, const tf_member_engine *e, bool with_opt_in) {
  c->n = 0;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if ((with_opt_in || !table[i].opt_in) && add_column(c, e, &table[i])) return -1;
  return 0;
}

const char *tf_member_column_name(size_t i) {
  return i < sizeof table / sizeof table[0] ? table[i].name : NULL;
}

int tf_member_columns_find(const tf_member_columns *c, const char *name) {
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->def[i]->name, name) == 0) return (int)i;
  return -1;
}

void tf_member_columns_bind(const tf_member_columns *c, void *const *row, tf_member_buffers *b) {
  for (size_t i = 0; i < c->n; i++)
    if (c->def[i]->buffer) *c->def[i]->buffer(b) = row[i];
}

/* The value of count column def in r (its field of r->work). */
static int64_t count_of(const tf_member_column *def, const tf_member_result *r) {
  long v;
  memcpy(&v, (const char *)&r->work + (def->count - 1), sizeof v);
  return v;
}

void tf_member_columns_fill(const tf_member_columns *c, const tf_member_layout *l,
                            const tf_member_result *r, void *const *row) {
  for (size_t i = 0; i < c->n; i++) {
    const tf_member_column *def = c->def[i];
    if (def->count) *(int64_t *)row[i] = count_of(def, r);
    if (def->fill) def->fill(l, r, row[i]);
  }
}

void tf_member_columns_describe(const tf_member_columns *c, const tf_member_engine *e, hid_t file,
                                const char *group) {
  for (size_t i = 0; i < c->n; i++) {
    if (!c->def[i]->describe) continue;
    char path[256];
    snprintf(path, sizeof path, "%s/%s", group, c->def[i]->name);
    const hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    if (d < 0) continue;
    c->def[i]->describe(e, d, file);
    H5Dclose(d);
  }
  /* the rules of the draws are the run's settings, kept where no draw can be logged */
  if (!model_draws(e->layout.kernel)) tf_member_columns_describe_draws(e, -1, file);
}

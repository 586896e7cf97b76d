/* counts.h — the work every integration counts, one struct from the stepper to the output.
 *
 * A stepper keeps its counts in a tf_counts (tf_stepper_stats, ode.h; tf_ts_stats.work, ts.h);
 * every engine result embeds one by value as `work` (event_loop.h, evolve.h, evolve2.h,
 * dual_contact.h, switches.h, impact.h, flow.h, contact_run.h, pws.h) and so does the member
 * result (member_engine.h): each level hands the counts up in one assignment.
 *
 * TF_COUNTS is the one list of the counts: it declares the fields of tf_counts, tf_counts_add
 * and the output columns of /members (member_columns.c expands it, in this order, and names no
 * count itself).  A new count is its line here and the line that counts it where it happens
 * (docs/ARCHITECTURE.md, "Adding a per-member output field").  A line is
 *   X(field, column, doc, width, opt_in)
 * field: the member of tf_counts (long); column: its /members table (int64); doc: the table's
 * doc attribute; width: the function of the layout in member_columns.c that gives the column's
 * width (one: always; if_rhs, if_jacobians: only for routes that count those); opt_in: written
 * only where output.columns names it, so that the files of configs that do not ask for it stay
 * as they were. */
#ifndef TF_COUNTS_H
#define TF_COUNTS_H

/* steps: a stepper's accepted ones; an engine's own count where it keeps one (an event loop
 * counts the attempt that ended a run, a fixed-step scheme its grid steps, a map its
 * iterations).  rejected: attempts rejected and retried smaller (fixed steps: none).
 * jacobian_evals: PETSc TS's, the linearly implicit stepper types'. */
#define TF_COUNTS(X)                                                                             \
  X(steps, "steps", "integrator steps taken", one, false)                                        \
  X(rejected, "rejected_steps",                                                                  \
    "step attempts the error control (or a refusal by the model) rejected and retried smaller; " \
    "0 with fixed steps",                                                                        \
    one, true)                                                                                   \
  X(jacobian_evals, "jacobian_evals",                                                            \
    "Jacobian evaluations (PETSc TS; with integrator.ts.batch > 1 the counts, like steps, are "  \
    "those of the member's batch)",                                                              \
    if_jacobians, false)                                                                         \
  X(rhs_evals, "rhs_evals", "right-hand side evaluations", if_rhs, false)

#define TF_COUNTS_FIELD(field, column, doc, width, opt_in) long field;
typedef struct tf_counts {
  TF_COUNTS(TF_COUNTS_FIELD)
} tf_counts;
#undef TF_COUNTS_FIELD

/* Adds the counts of b to a (a stepper restarted from scratch keeps those of before). */
static inline void tf_counts_add(tf_counts *a, const tf_counts *b) {
#define TF_COUNTS_ADD(field, column, doc, width, opt_in) a->field += b->field;
  TF_COUNTS(TF_COUNTS_ADD)
#undef TF_COUNTS_ADD
}

#endif

/* counts.h — the work every integration counts, one struct from the stepper to the output.
 *
 * A stepper keeps its counts in a tf_counts (tf_stepper_stats, ode.h; tf_ts_stats.work, ts.h);
 * every engine result embeds one by value as `work` (event_loop.h, evolve.h, evolve2.h,
 * dual_contact.h, switches.h, impact.h, flow.h, contact_run.h, pws.h) and so does the member
 * result (member_engine.h): each level hands the counts up in one assignment, and the output
 * columns read them by field (member_columns.c, COUNT).
 * A new count is a field here (and its line in tf_counts_add), the line that counts it where
 * it happens, and its row in member_columns.c (docs/ARCHITECTURE.md, "Adding a per-member
 * output field"). */
#ifndef TF_COUNTS_H
#define TF_COUNTS_H

typedef struct tf_counts {
  /* steps taken: a stepper's accepted ones; an engine's own count where it keeps one (an
   * event loop counts the attempt that ended a run, a fixed-step scheme its grid steps) */
  long steps;
  long rejected;       /* step attempts rejected and retried smaller (fixed steps: none) */
  long rhs_evals;      /* evaluations of the right-hand side */
  long jacobian_evals; /* Jacobians: PETSc TS's, the linearly implicit stepper types' */
} tf_counts;

/* Adds the counts of b to a (a stepper restarted from scratch keeps those of before). */
static inline void tf_counts_add(tf_counts *a, const tf_counts *b) {
  a->steps += b->steps, a->rejected += b->rejected;
  a->rhs_evals += b->rhs_evals, a->jacobian_evals += b->jacobian_evals;
}

#endif

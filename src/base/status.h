/* status.h — why a member stopped.  Stored per member in /members/status as an HDF5 enum
 * (h5dump shows the names); the numeric values are part of the file format. */
#ifndef TF_STATUS_H
#define TF_STATUS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum tf_member_status {
  TF_MEMBER_PENDING = 0,        /* not computed yet (interrupted run) */
  TF_MEMBER_OK = 1,             /* reached the end time */
  TF_MEMBER_NONFINITE = 2,      /* state became NaN or Inf */
  TF_MEMBER_MAX_STEPS = 3,      /* integrator step budget exhausted */
  TF_MEMBER_STEP_UNDERFLOW = 4, /* step size collapsed (stiffness or a singularity) */
  TF_MEMBER_ZENO = 5,           /* event storm: too many events per unit time */
  TF_MEMBER_FAILED = 6,         /* any other failure */
  TF_MEMBER_CODIM2 = 7,         /* stopped at a codimension-2 point (where two switching
                                   surfaces meet) whose continuation the model leaves undefined;
                                   the event log holds the state and the verdict */
  TF_MEMBER_ILL_POSED = 8,      /* no Filippov solution continues: the model's sticking law
                                   contradicts its own slip limits at the state reached (e.g. the
                                   wheel's printed M = kappa F where it rolls backwards) */
  TF_MEMBER_STATUS_COUNT
} tf_member_status;

const char *tf_member_status_name(int status);

/* True for a member the engine could not carry to the end its model defines: nonfinite,
 * max_steps, step_underflow, zeno (a budget of events ran out, like max_steps) and failed.
 * A member that reached the end time did not fail, nor one stopped at codim2 or ill_posed:
 * there the model itself defines no continuation (the end of what it describes), and the
 * engine located that state; such a stop is an answer about the model, not a breakdown. */
bool tf_member_status_failed(int status);

/* Members counted as "failed" in summaries (tf_member_status_failed). */
long long tf_member_failures(const long long counts[TF_MEMBER_STATUS_COUNT]);

#endif

/* status.h — why a member stopped.  Stored per member in /members/status as an HDF5 enum
 * (h5dump shows the names); the numeric values are part of the file format. */
#ifndef TF_STATUS_H
#define TF_STATUS_H

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

/* Members counted as "failed" in summaries: stopped by a numerical or model failure.  A member
 * that reached the end time, or the codim2 state (the end of what its model describes), did
 * not fail. */
long long tf_member_failures(const long long counts[TF_MEMBER_STATUS_COUNT]);

#endif

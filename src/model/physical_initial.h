/* physical_initial.h — physical initial conditions (tf_model_def.initial_params, e.g. a ball's
 * speed and direction) read as initial.<name> keys instead of initial.state.
 *
 * Why here: every job that starts a member from initial.* (trajectory, scan) must accept the
 * same keys and refuse the same mixture of both forms, with the same message. */
#ifndef TF_PHYSICAL_INITIAL_H
#define TF_PHYSICAL_INITIAL_H

#include <stdbool.h>

#include "config.h"
#include "kernel.h"

/* If any initial.<name> of the kernel is given, reads them all (defaults, bounds) and
 * overwrites x0 with the kernel's initial_state(ip, params); an error if initial.state was
 * given as well (`state_given`: tf_config_has before initial.state was read).  Otherwise
 * leaves x0 alone.  Returns 0 or -1 with err naming file, line and key. */
int tf_physical_initial_from_config(tf_config *cfg, const tf_kernel *k, const double *params,
                                    bool state_given, double *x0, tf_error *err);

#endif

/* devs_job.h — the `lyapunov` and `scan` jobs when the model is a DEVS kernel.
 *
 * A DEVS is one big state (up to 1e7 elements split over ranks), not a small map, so the
 * two jobs hand DEVS models to these functions instead of their map paths: the DEVS keys
 * differ (steps and transient are model parameters; devs.seed keys the streams) and so
 * does the output (the signal X_i, lambda_1 of the full state and Wolf's estimate from X_i).
 *
 * lyapunov: all ranks share one ensemble.  Keys: model, devs.seed, devs.path
 *   (auto | generic), lyapunov.blocks, lyapunov.series.samples, lyapunov.embedding.*,
 *   lyapunov.wolf.*, output.  Output /devs/X (the last steps of X_i), /lyapunov/{blocks,
 *   running} and attributes; JSON lambda1, lambda1_error, lambda1_elements, lambda1_series,
 *   element_updates_per_second(_per_rank).
 * scan: one ensemble per grid point (one rank each, through the scheduler), the same random
 *   streams at every point.  Keys: model, devs.*, scan.quantity, scan.x/y, scan.series,
 *   lyapunov.series.samples, lyapunov.embedding.*, lyapunov.wolf.*, ensemble.chunk,
 *   output.  Output /members/{grid, lambda1, lambda1_elements, lambda1_series, X_mean,
 *   valid}. */
#ifndef TF_DEVS_JOB_H
#define TF_DEVS_JOB_H

#include <stdbool.h>

#include "job.h"

/* True if the config's model.name names a DEVS kernel (false for anything else, errors
 * included: the job's own path reports them). */
bool tf_devs_job_wanted(tf_run *run);

int tf_devs_lyapunov_setup(tf_run *run, tf_error *err);
int tf_devs_lyapunov_execute(tf_run *run, tf_error *err);
int tf_devs_scan_setup(tf_run *run, tf_error *err);
int tf_devs_scan_execute(tf_run *run, tf_error *err);
void tf_devs_job_destroy(tf_run *run);

#endif

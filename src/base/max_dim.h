/* max_dim.h — the engines' limits on a model: its state dimension and its event functions.
 *
 * The engines keep a member's work arrays (Jacobians, tangent frames, QR factors, geometry at
 * Sigma, event values) on the stack with these sizes, so that a member allocates nothing while
 * it runs.  One number for all of them lets a model be checked once, when it is loaded (model.c,
 * model_def.c, equations.c), instead of by whichever engine happens to meet it first; so they
 * sit here, below the model loader, and not in the engines that use them. */
#ifndef TF_MAX_DIM_H
#define TF_MAX_DIM_H

enum { TF_MAX_DIM = 16 };
enum { TF_EVENT_LOOP_MAX_FUNCTIONS = 4 }; /* event functions per mode (event_loop.h) */

#endif

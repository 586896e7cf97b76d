/* max_dim.h — the one limit on a model's state dimension.
 *
 * The engines keep a member's work arrays (Jacobians, tangent frames, QR factors, geometry at
 * Sigma) on the stack with this size, so that a member allocates nothing while it runs.  One
 * number for all of them lets a model be checked once, when it is loaded (model.c, model_def.c,
 * equations.c), instead of by whichever engine happens to meet it first. */
#ifndef TF_MAX_DIM_H
#define TF_MAX_DIM_H

enum { TF_MAX_DIM = 16 };

#endif

/* member_reduce.h — values a user computes from each member's end (output.reduce).
 *
 * A study of a huge ensemble rarely needs every member's whole row: often one number per
 * member does (an energy, a distance, a phase).  `output.reduce` names such numbers, each an
 * expression of the final state (by state name), the model's named outputs, its parameters
 * (the member's own, drawn ones included) and t (the time reached), parsed by the same
 * expression language as model.equations.  Each becomes a float64 column /members/<name>,
 * and with `output.columns` the tables a study does not need are not written at all.  The
 * values are a pure function of the member's result: the same on any number of ranks and
 * after --resume. */
#ifndef TF_MEMBER_REDUCE_H
#define TF_MEMBER_REDUCE_H

#include <stddef.h>

#include "config.h"
#include "error.h"
#include "kernel.h"

typedef struct tf_member_reduce tf_member_reduce;

/* Reads output.reduce for model k.  `taken` (NULL-terminated) are names a reduction may not
 * have (the job's columns and bookkeeping tables).  *out is NULL if the key is absent.  Errors
 * name file, line and key. */
int tf_member_reduce_from_config(tf_config *cfg, const tf_kernel *k, const char *const *taken,
                                 tf_member_reduce **out, tf_error *err);

/* Reductions, in the config's order; their names and docs ("output.reduce: x^2 + y^2"). */
size_t tf_member_reduce_count(const tf_member_reduce *r);
const char *tf_member_reduce_name(const tf_member_reduce *r, size_t i);
const char *tf_member_reduce_doc(const tf_member_reduce *r, size_t i);

/* Every reduction of final state x (the model's dim), time t and parameters p into
 * out[count]. */
void tf_member_reduce_eval(tf_member_reduce *r, const double *x, double t, const double *p,
                           double *out);

void tf_member_reduce_destroy(tf_member_reduce *r);

#endif

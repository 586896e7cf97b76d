/* physical_initial.c — see physical_initial.h. */
#include "physical_initial.h"

#include <stdio.h>

int tf_physical_initial_from_config(tf_config *cfg, const tf_kernel *k, const double *params,
                                    bool state_given, double *x0, tf_error *err) {
  bool any = false;
  char path[256], where[256];
  for (size_t i = 0; i < k->ninitial; i++) {
    snprintf(path, sizeof path, "initial.%s", k->initial_params[i].name);
    any = any || tf_config_has(cfg, path);
  }
  if (!any) return 0;
  if (state_given)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key 'initial.state': give either initial.state or the physical "
                        "initial conditions of model '%s', not both",
                        tf_config_where(cfg, "initial.state", where, sizeof where), k->name);
  double ip[16];
  for (size_t i = 0; i < k->ninitial && i < 16; i++) {
    const tf_param *q = &k->initial_params[i];
    snprintf(path, sizeof path, "initial.%s", q->name);
    if (tf_config_get_double(cfg, path, &q->def, q->min, q->max, &ip[i], err)) return -1;
  }
  k->initial_state(ip, params, x0);
  return 0;
}

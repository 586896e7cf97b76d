/* integrator_settings.h — the `integrator:` section: one table of its keys (default, bounds,
 * meaning), which the reader below, docs/CONFIG.md (tests/unit/test_integrator_settings.c
 * compares them) and the messages of `twofold check` (the config reader names the key and its
 * bounds) all follow, and the settings object it is read into once per job. */
#ifndef TF_INTEGRATOR_SETTINGS_H
#define TF_INTEGRATOR_SETTINGS_H

#include <stdbool.h>

#include "config.h"
#include "ode.h"
#include "ts.h"

typedef enum tf_setting_kind {
  TF_SETTING_DOUBLE,
  TF_SETTING_INT,
  TF_SETTING_BOOL,
  TF_SETTING_STRING
} tf_setting_kind;

/* One key of integrator:.  Numbers: def (NAN: required), bounds [lo, hi]; integers ilo..ihi;
 * strings: text (the default) and choices (NULL: any; the method's come from the registry). */
typedef struct tf_integrator_key {
  const char *path;
  tf_setting_kind kind;
  double def, lo, hi;
  long long ilo, ihi;
  const char *text;
  const char *const *choices;
  const char *doc;
} tf_integrator_key;

/* The table, ended by a row whose path is NULL; the row of a path, or NULL. */
extern const tf_integrator_key tf_integrator_keys[];
const tf_integrator_key *tf_integrator_key_find(const char *path);

/* A key read with the table's default and bounds (the row must exist and be of that kind). */
int tf_integrator_get_double(tf_config *cfg, const char *path, double *out, tf_error *err);
int tf_integrator_get_int(tf_config *cfg, const char *path, long long *out, tf_error *err);
int tf_integrator_get_bool(tf_config *cfg, const char *path, bool *out, tf_error *err);
int tf_integrator_get_string(tf_config *cfg, const char *path, const char **out, tf_error *err);

/* integrator.ts.jacobian: auto (the model's, else finite differences), analytic or fd. */
typedef enum tf_ts_jacobian {
  TF_TS_JACOBIAN_AUTO,
  TF_TS_JACOBIAN_ANALYTIC,
  TF_TS_JACOBIAN_FD
} tf_ts_jacobian;

/* The methods a flow may name besides the stepper types. */
#define TF_FLOW_ONLY_METHODS "euler-maruyama", "milstein", "drift-implicit", "petsc-ts"

typedef struct tf_integrator_settings {
  const char *method; /* as written: auto, a stepper type's name or (flows) a flow method */
  tf_ode_options ode; /* ode.type: the stepper type method names (NULL, DOPRI5, otherwise) */
  double t_end;
  int lanes; /* integrator.lanes: 0 auto, 1 member by member, or 4, 8, 16 side by side */
  /* flows only: dt is read with the rest; theta, milstein and fast_normals by the readers below,
   * once the flow knows its method */
  double dt;         /* integrator.dt: the SDE step */
  double theta;      /* integrator.theta: drift-implicit's weight of the implicit drift */
  bool milstein;     /* integrator.milstein: drift-implicit's Milstein correction */
  bool fast_normals; /* integrator.normals: fast */
  /* flows on petsc-ts only, read by tf_integrator_ts_read: ts.type, ts.options and
   * ts.jacobian_lag (fd_jacobian and ode are the flow's: they depend on its model and run) */
  tf_ts_settings ts;
  tf_ts_jacobian ts_jacobian; /* integrator.ts.jacobian */
  long ts_batch;              /* integrator.ts.batch: members per TS solve */
} tf_integrator_settings;

/* integrator.method (auto, a registered stepper type, and for flows TF_FLOW_ONLY_METHODS),
 * rtol, atol, h0, hmax, max_steps, step and, if with_t_end, t_end (required, after t0); and
 * lanes, read only where the config gives it (it never changes a result, so the config as run
 * does not list its default); for flows (flow_methods) then dt. */
int tf_integrator_settings_read(tf_config *cfg, double t0, bool with_t_end, bool flow_methods,
                                tf_integrator_settings *s, tf_error *err);

/* A flow's keys that only some methods take, read into s where the flow has resolved its method
 * (the config as run then lists only the defaults that applied): integrator.rosenbrock, the
 * Rosenbrock type auto takes for a smoothed member (s->ode.type); drift-implicit's theta and
 * milstein; integrator.normals, read only where given (the config as run then lists it). */
int tf_integrator_auto_rosenbrock_read(tf_config *cfg, tf_integrator_settings *s, tf_error *err);
int tf_integrator_drift_implicit_read(tf_config *cfg, tf_integrator_settings *s, tf_error *err);
int tf_integrator_normals_read(tf_config *cfg, tf_integrator_settings *s, tf_error *err);

/* integrator.ts.type, ts.options, ts.jacobian, ts.batch and ts.jacobian_lag, in that order (a
 * type or options longer than tf_ts_settings holds is refused), where a flow runs petsc-ts. */
int tf_integrator_ts_read(tf_config *cfg, tf_integrator_settings *s, tf_error *err);
/* The TS type and options PETSc runs with (the command line's over the config's) written into
 * the config where they differ from what it gave, so that the config as run and its
 * fingerprint record them; s->ts then holds them.  Options holding a double quote stay as
 * given (they cannot be written back as one quoted value). */
int tf_integrator_ts_record(tf_config *cfg, tf_integrator_settings *s, const char *type,
                            const char *options, tf_error *err);

/* A map's integrator.t_end: required, a whole number of iterations after first. */
int tf_integrator_iterations_read(tf_config *cfg, long long first, long long *last, tf_error *err);

/* s's ode options into *ode, keeping ode->stop: where the run stops is the run's, not the
 * config's. */
void tf_integrator_take_ode(const tf_integrator_settings *s, tf_ode_options *ode);
/* For jobs and engines that run only the stepper types: the settings' ode options (and t_end,
 * if t_end is not NULL); ode->stop, the run's stop token, is kept as the caller set it.  They
 * refuse integrator.landing dense, which only the impact engine's event runs take. */
int tf_integrator_ode_from_config(tf_config *cfg, double t0, double *t_end, tf_ode_options *ode,
                                  tf_error *err);

#endif

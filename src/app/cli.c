/* cli.c — argument parsing and the commands run, check, models, model check/build, info, slurm,
 * merge.
 *
 * `run` is the only command that needs MPI and PETSc: options that look like PETSc's
 * (a single dash, e.g. `-ts_type rosw`) are handed to PETSc's options database, everything
 * else is ours.  Config errors are found before the output file is touched, so bad input
 * never damages existing results. */
#include "cli.h"

#include <dirent.h>
#include <gsl/gsl_errno.h>
#include <hdf5.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "config.h"
#include "ensemble.h"
#include "equations.h"
#include "failures.h"
#include "flow.h"
#include "guard.h"
#include "h5io.h"
#include "install_dirs.h"
#include "job.h"
#include "kernel.h"
#include "kinds.h"
#include "launcher.h"
#include "merge.h"
#include "model.h"
#include "model_check.h"
#include "model_def.h"
#include "mpi_start.h"
#include "petsc_start.h"
#include "physical_initial.h"
#include "plugin.h"
#include "slurm.h"
#include "status.h"
#include "version.h"

static const char usage[] =
    "usage: twofold COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  run CONFIG [options]   run the job described by CONFIG (YAML); under mpiexec for many "
    "ranks\n"
    "  check CONFIG... [--set K=V]... [--print] [--json]\n"
    "                         validate CONFIG (and print it as it would run, with defaults);\n"
    "                         several CONFIGs are checked one by one in one process (--json:\n"
    "                         a line {config, status, error} each); exit 2 if any is bad\n"
    "  models [--model-library LIB]  list the models (built-in, or those of plugin LIB) with\n"
    "                         their parameters, defaults and docs\n"
    "  model check CONFIG [--set K=V]...  evaluate CONFIG's model (built-in or plugin) at its\n"
    "                         initial state: finite values, derivatives against central\n"
    "                         differences; exit 1 if a check fails\n"
    "  model show CONFIG [--set K=V]...  say what CONFIG's model is without compiling or\n"
    "                         loading anything: a built-in's description, or for\n"
    "                         model.equations the C that check and run would compile\n"
    "                         (check, run and model check compile model.equations and\n"
    "                         model.source, and load model.library: that code runs as you)\n"
    "  model build SOURCE.c -o LIBRARY.so  compile a model source as model.source would\n"
    "                         (same compiler, flags and headers) into a library for\n"
    "                         model.library; checked to load before it replaces LIBRARY.so\n"
    "  mpirun [MPIEXEC OPTIONS] -- COMMAND [ARGS]  run 'mpiexec ... twofold COMMAND ARGS' so\n"
    "                         that Ctrl-C and SIGTERM checkpoint the ranks and exit 3, as on\n"
    "                         one process (plain mpiexec kills the job and exits 1)\n"
    "  jobs                   list the job types\n"
    "  configs                list the ready configs installed with twofold; run, check and\n"
    "                         slurm take one by name (twofold run smoke) when no such file\n"
    "  info FILE.h5 [--config] summarize a results file (and print its stored config)\n"
    "  slurm CONFIG [options]  write sbatch scripts for CONFIG and submit them (see below)\n"
    "  merge OUT.h5 PART.h5... combine the part files of a split run (--part, SLURM array)\n"
    "                         (or merge -o OUT.h5 PART.h5...)\n"
    "                         into one file with the same data as a single run; refuses,\n"
    "                         naming the failed tasks, if parts are missing or inconsistent\n"
    "                         (--overwrite replaces an existing OUT.h5; --json)\n"
    "  --help, --version\n"
    "\n"
    "run options:\n"
    "  -o FILE.h5             output file (default: output.file, else CONFIG's name with .h5)\n"
    "  --set PATH=VALUE       override a config key, e.g. --set ensemble.members=100 (repeatable)\n"
    "  --json                 print a one-line JSON summary as the last line of stdout\n"
    "  --quiet                no progress output (as --progress none), nor the warning that\n"
    "                         names failed members when they do not fail the run\n"
    "  --progress MODE        bar (redrawn in place), log (a line every 5 s) or none; default:\n"
    "                         bar if stderr is a terminal, else log (under mpiexec: log)\n"
    "  --resume               complete an interrupted run in FILE (starts afresh if it is "
    "missing)\n"
    "  --overwrite            replace an existing output file\n"
    "  --time-limit SECONDS   checkpoint and exit (status 3) after this much wall time\n"
    "  --stop-after N         checkpoint and exit (status 3) once N units (members, points,\n"
    "                         Lyapunov blocks, samples...: docs/CONFIG.md) are done in this run\n"
    "  --pause-after N        then wait for a signal or the --time-limit and stop as it says\n"
    "                         (says 'paused' on stderr): interruption tests that cannot race\n"
    "  --isolate              compute members in a worker process (as run.isolate: true): a\n"
    "                         member whose model crashes, calls exit or passes\n"
    "                         run.member_time_limit ends 'crashed' or 'timeout', the rest go on\n"
    "  --part K/N             run only block K (0-based) of N equal blocks of the members\n"
    "                         (SLURM array tasks; combine the part files with twofold merge)\n"
    "  -petsc_option [value]  any PETSc option (e.g. -ts_type rosw) goes to PETSc\n"
    "\n"
    "\n"
    "slurm options (scripts go to --dir, default slurm-<config stem>/, logs to OUT.logs/;\n"
    "docs/CLUSTER.md):\n"
    "  --array N              N array tasks (--part K/N each) and a merge job after them\n"
    "  --ntasks N             MPI ranks per job or task (default 1); --nodes N, --cpus-per-task N\n"
    "  --time T               SLURM time limit (MINUTES, HH:MM:SS, D-HH:MM:SS)\n"
    "  --merge-time T         the merge job's time limit (default 00:30:00)\n"
    "  --requeue              after a checkpoint the job requeues itself until done\n"
    "  --signal-lead S        warning signal S seconds before the time limit (default 300)\n"
    "  --launcher L           srun (srun --mpi=pmix, default) or mpiexec\n"
    "  --merge-after any|ok   merge after every task ended (default; it names failed tasks)\n"
    "                         or only if all succeeded (SLURM cancels it otherwise)\n"
    "  --partition P, --account A, --qos Q, --mem M, --module M (module load M), --sbatch OPT\n"
    "  --dry-run              print the scripts and the sbatch commands; write and submit nothing\n"
    "  -o, --set and PETSc options are passed on to the runs, and --pause-after N (the run\n"
    "                         holds at N members until the warning signal: for tests).\n"
    "\n"
    "exit status: 0 done, 1 runtime error, 2 bad usage/config/input, 3 interrupted (resume it),\n"
    "4 complete but every member failed, or more than run.max_failed_fraction of them;\n"
    "SIGTERM, SIGUSR1 and SIGINT checkpoint like --time-limit.\n";

typedef struct cli_args {
  const char *command, *config, *output;
  const char **sets;
  int nsets;
  bool json, quiet, resume, overwrite, print, show_config, isolate;
  const char *progress;
  double time_limit;
  long long stop_after, pause_after;
  int part, parts;
  char **petsc_argv;
  int petsc_argc;
  const char **files; /* merge: part files */
  const char *model_library;
  char *config_found; /* CONFIG resolved to an installed config (owned) */
  int nfiles;
  tf_slurm_options slurm;
  int slurm_rc;
  tf_error slurm_err;
} cli_args;

static bool is_petsc_option(const char *a) {
  return a[0] == '-' && a[1] != '-' && a[1] != '\0' && strcmp(a, "-o") != 0 && strcmp(a, "-h") != 0;
}

static bool looks_like_value(const char *a) {
  if (a[0] != '-') return true;
  char *end;
  strtod(a, &end);
  return *end == '\0'; /* a negative number */
}

/* A positive whole number of members (or steps) for option `opt`. */
static int positive_count(const char *opt, const char *text, long long *out, tf_error *err) {
  char *end;
  *out = strtoll(text, &end, 10);
  if (*end || end == text || *out <= 0)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "twofold: %s: expected a positive whole number, got '%s'", opt, text);
  return 0;
}

/* The installed configs: share/twofold/configs relative to the executable, else (in the
 * build tree) the source tree's configs/.  False if neither exists. */
static bool configs_dir(char *out, size_t n) {
  char exe[PATH_MAX];
  struct stat st;
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash = len > 0 ? (exe[len] = '\0', strrchr(exe, '/')) : NULL;
  if (slash) {
    *slash = '\0';
    if ((size_t)snprintf(out, n, "%s/%s/configs", exe, TF_DATA_FROM_BINDIR) < n &&
        stat(out, &st) == 0 && S_ISDIR(st.st_mode))
      return true;
  }
  return (size_t)snprintf(out, n, "%s/configs", TF_SOURCE_DATA_DIR) < n && stat(out, &st) == 0 &&
         S_ISDIR(st.st_mode);
}

/* CONFIG given as a bare name that is no file (`twofold run smoke`): the installed
 * configs/NAME.yaml or configs/NAME, malloc'd; NULL to use CONFIG as given. */
static char *installed_config(const char *name) {
  char dir[PATH_MAX], path[PATH_MAX + 300];
  if (strchr(name, '/') || access(name, F_OK) == 0 || !configs_dir(dir, sizeof dir)) return NULL;
  const char *const suffixes[] = {".yaml", ""};
  for (int i = 0; i < 2; i++) {
    if ((size_t)snprintf(path, sizeof path, "%s/%s%s", dir, name, suffixes[i]) < sizeof path &&
        access(path, R_OK) == 0)
      return strdup(path);
  }
  return NULL;
}

/* `twofold configs`: each installed config with the first line of its leading comment. */
static int cmd_configs(void) {
  char dir[PATH_MAX];
  struct dirent **entries = NULL;
  const int n = configs_dir(dir, sizeof dir) ? scandir(dir, &entries, NULL, alphasort) : -1;
  if (n < 0) {
    fprintf(stderr, "twofold: error: no installed configs (looked in '%s')\n", dir);
    return TF_EXIT_ERROR;
  }
  char shown[PATH_MAX];
  printf("configs in %s (twofold run NAME):\n", realpath(dir, shown) ? shown : dir);
  for (int i = 0; i < n; i++) {
    const char *file = entries[i]->d_name;
    const size_t len = strlen(file);
    char path[PATH_MAX + 300], line[512] = "";
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = len > 5 && strcmp(file + len - 5, ".yaml") == 0 ? fopen(path, "r") : NULL;
    if (f && fgets(line, sizeof line, f) && line[0] == '#') {
      line[strcspn(line, "\n")] = '\0';
      printf("  %-28.*s %s\n", (int)(len - 5), file, line + 1 + (line[1] == ' '));
    } else if (f)
      printf("  %.*s\n", (int)(len - 5), file);
    if (f) fclose(f);
    free(entries[i]);
  }
  free(entries);
  return TF_EXIT_OK;
}

/* Errors go to err as the whole line the command prints (the library entry point returns
 * them instead). */
static int parse_args(int argc, char **argv, cli_args *a, tf_error *err) {
  memset(a, 0, sizeof *a);
  a->sets = calloc((size_t)argc, sizeof *a->sets);
  a->petsc_argv = calloc((size_t)argc + 2, sizeof *a->petsc_argv);
  a->petsc_argv[a->petsc_argc++] = argv[0];
  a->files = calloc((size_t)argc, sizeof *a->files);
  tf_slurm_defaults(&a->slurm);
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const bool has_next = i + 1 < argc;
    const int slurm_arity =
        a->command && strcmp(a->command, "slurm") == 0 ? tf_slurm_option_arity(arg) : -1;
    if (slurm_arity == 1 && !has_next) {
      return tf_fail_code(err, TF_ERR_CONFIG, "twofold slurm: %s needs a value", arg);
    } else if (slurm_arity >= 0) {
      if (tf_slurm_set_option(&a->slurm, arg, slurm_arity ? argv[++i] : NULL, &a->slurm_err))
        return tf_fail_code(err, TF_ERR_CONFIG, "twofold slurm: %s", a->slurm_err.msg);
    } else if (strcmp(arg, "--set") == 0 && has_next)
      a->sets[a->nsets++] = argv[++i];
    else if (strncmp(arg, "--set=", 6) == 0)
      a->sets[a->nsets++] = arg + 6;
    else if (strcmp(arg, "-o") == 0 && has_next)
      a->output = argv[++i];
    else if (strcmp(arg, "--json") == 0)
      a->json = true;
    else if (strcmp(arg, "--quiet") == 0)
      a->quiet = true;
    else if (strcmp(arg, "--progress") == 0 && has_next) {
      a->progress = argv[++i];
      if (strcmp(a->progress, "bar") && strcmp(a->progress, "log") && strcmp(a->progress, "none"))
        return tf_fail_code(err, TF_ERR_CONFIG,
                            "twofold: --progress: expected bar, log or none, got '%s'",
                            a->progress);
    } else if (strcmp(arg, "--resume") == 0)
      a->resume = true;
    else if (strcmp(arg, "--isolate") == 0)
      a->isolate = true;
    else if (strcmp(arg, "--overwrite") == 0)
      a->overwrite = true;
    else if (strcmp(arg, "--model-library") == 0 && has_next)
      a->model_library = argv[++i];
    else if (strcmp(arg, "--print") == 0)
      a->print = true;
    else if (strcmp(arg, "--config") == 0)
      a->show_config = true;
    else if (strcmp(arg, "--time-limit") == 0 && has_next) {
      char *end;
      a->time_limit = strtod(argv[++i], &end);
      if (*end || !(a->time_limit > 0))
        return tf_fail_code(
            err, TF_ERR_CONFIG,
            "twofold: --time-limit: expected a positive number of seconds, got '%s'", argv[i]);
    } else if (strcmp(arg, "--stop-after") == 0 && has_next) {
      if (positive_count(arg, argv[++i], &a->stop_after, err)) return -1;
    } else if (strcmp(arg, "--pause-after") == 0 && has_next) {
      if (positive_count(arg, argv[++i], &a->pause_after, err)) return -1;
    } else if (strcmp(arg, "--part") == 0 && has_next) {
      char *end;
      const char *text = argv[++i];
      a->part = (int)strtol(text, &end, 10);
      a->parts = *end == '/' ? (int)strtol(end + 1, &end, 10) : 0;
      if (*end || a->parts < 1 || a->part < 0 || a->part >= a->parts)
        return tf_fail_code(err, TF_ERR_CONFIG,
                            "twofold: --part: expected K/N with 0 <= K < N, got '%s'", text);
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
      a->command = "help";
    else if (strcmp(arg, "--version") == 0)
      a->command = "version";
    else if (is_petsc_option(arg)) {
      a->petsc_argv[a->petsc_argc++] = argv[i];
      if (has_next && looks_like_value(argv[i + 1])) a->petsc_argv[a->petsc_argc++] = argv[++i];
    } else if (arg[0] == '-' && arg[1] == '-') {
      return tf_fail_code(err, TF_ERR_CONFIG, "twofold: unknown option '%s' (see twofold --help)",
                          arg);
    } else if (!a->command)
      a->command = arg;
    else if (!a->config)
      a->config = arg;
    else if (strcmp(a->command, "merge") == 0 || strcmp(a->command, "check") == 0 ||
             strcmp(a->command, "model") == 0)
      a->files[a->nfiles++] = arg;
    else
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "twofold: unexpected argument '%s' (see twofold --help)", arg);
  }
  if (!a->command) a->command = "help";
  return 0;
}

/* The executable's run, check and slurm take an installed config by name (not the library:
 * its executable is the caller's). */
static void find_installed_config(cli_args *a) {
  if (a->config && (strcmp(a->command, "run") == 0 || strcmp(a->command, "check") == 0 ||
                    strcmp(a->command, "slurm") == 0)) {
    a->config_found = installed_config(a->config);
    if (a->config_found) a->config = a->config_found;
  }
}

static void print_model(const tf_kernel *k) {
  char names[512];
  tf_join_state_names(k, names, sizeof names);
  char jobs[512] = "";
  size_t len = 0;
  for (size_t i = 0; i < tf_job_count() && len < sizeof jobs; i++)
    if (tf_job_at(i)->kinds & TF_KIND_BIT(k->kind))
      len += (size_t)snprintf(jobs + len, sizeof jobs - len, "%s%s", len ? ", " : "",
                              tf_job_at(i)->name);
  printf("%s — %s\n  kind: %s; jobs: %s\n  state (%zu): %s\n", k->name, k->doc ? k->doc : "",
         tf_model_description(k), jobs, k->dim, names);
  for (size_t p = 0; p < k->nparams; p++) {
    const tf_param *q = &k->params[p];
    printf("  %-12s default %-10.6g range [%g, %g]  %s\n", q->name, q->def, q->min, q->max,
           q->doc ? q->doc : "");
  }
  printf("\n");
}

static int cmd_models(const cli_args *a) {
  if (!a->model_library) {
    for (size_t i = 0; i < tf_kernel_count(); i++) print_model(tf_kernel_at(i));
    return TF_EXIT_OK;
  }
  const tf_kernel **ks;
  size_t n;
  tf_error err;
  if (tf_plugin_library_models(a->model_library, &ks, &n, &err)) {
    fprintf(stderr, "twofold: error: %s\n", err.msg);
    return TF_EXIT_USAGE;
  }
  for (size_t i = 0; i < n; i++) print_model(ks[i]);
  free(ks);
  return TF_EXIT_OK;
}

/* `twofold model show CONFIG`: what a config someone sent would run, read without running
 * any of it — equations are generated but not compiled, sources and libraries only named. */
static int model_show(const cli_args *a) {
  tf_error err;
  tf_config *cfg = tf_config_load(a->files[0], &err);
  int rc = cfg ? 0 : -1;
  for (int i = 0; !rc && i < a->nsets; i++) rc = tf_config_set(cfg, a->sets[i], &err);
  const char *path = NULL, *name = NULL;
  char *source = NULL;
  if (!rc && tf_equations_present(cfg)) {
    rc = tf_equations_source(cfg, &source, &name, &err);
    if (!rc) {
      fprintf(stderr,
              "model.equations '%s': the C below is what check and run would compile and load "
              "(nothing was compiled)\n",
              name);
      fputs(source, stdout);
    }
  } else if (!rc && (tf_config_has(cfg, "model.source") || tf_config_has(cfg, "model.library"))) {
    const char *key = tf_config_has(cfg, "model.source") ? "model.source" : "model.library";
    rc = tf_config_get_string(cfg, key, NULL, NULL, &path, &err);
    if (!rc)
      printf(
          "%s: '%s' (relative to the config's directory): code that check, run and model "
          "check %s, and which then runs as you; read it before you run the config\n",
          key, path, strcmp(key, "model.source") == 0 ? "compile and load" : "load");
  } else if (!rc) {
    const tf_kernel *k = NULL;
    rc = tf_model_kernel(cfg, MPI_COMM_SELF, &k, &err); /* no MPI here: this process alone */
    if (!rc) print_model(k);
  }
  if (rc) fprintf(stderr, "twofold: error: %s\n", err.msg);
  free(source);
  tf_config_free(cfg);
  return rc ? TF_EXIT_USAGE : TF_EXIT_OK;
}

/* What reads correctly but is probably not meant (equations.h), one line each. */
static void warn_equations(tf_config *cfg) {
  char text[4096];
  if (!tf_equations_present(cfg) || !tf_equations_warnings(cfg, text, sizeof text)) return;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
    fprintf(stderr, "twofold: warning: %s\n", line);
}

/* `twofold model check CONFIG`: the model section and the initial state only, so any job's
 * config (or a config written just for the check) will do. */
static int cmd_model(const cli_args *a) {
  if (a->config && strcmp(a->config, "build") == 0 && a->nfiles == 1 && a->output) {
    char names[512];
    tf_error err;
    if (tf_plugin_build(a->files[0], a->output, names, sizeof names, &err)) {
      fprintf(stderr, "twofold: error: %s\n", err.msg);
      return TF_EXIT_USAGE;
    }
    printf("built %s from %s: %s\n", a->output, a->files[0], names);
    return TF_EXIT_OK;
  }
  if (a->config && strcmp(a->config, "show") == 0 && a->nfiles == 1) return model_show(a);
  if (!a->config || strcmp(a->config, "check") != 0 || a->nfiles != 1) {
    fprintf(stderr,
            "twofold: error: usage: twofold model check CONFIG [--set K=V]... | twofold model "
            "show CONFIG [--set K=V]... | twofold model build SOURCE.c -o LIBRARY.so\n");
    return TF_EXIT_USAGE;
  }
  tf_error err;
  tf_config *cfg = tf_config_load(a->files[0], &err);
  tf_model model = {0};
  const tf_kernel *k = NULL;
  double x0[TF_MAX_DIM], spread, t0;
  int rc = cfg ? 0 : -1;
  for (int i = 0; !rc && i < a->nsets; i++) rc = tf_config_set(cfg, a->sets[i], &err);
  const bool state_given = cfg && tf_config_has(cfg, "initial.state");
  /* no MPI in `model check`: the model is loaded by this process alone */
  if (rc || tf_model_kernel(cfg, MPI_COMM_SELF, &k, &err) ||
      tf_model_from_config(&model, cfg, MPI_COMM_SELF, TF_KINDS_ALL, "model check", &err) ||
      tf_initial_from_config(cfg, k, x0, &spread, &t0, &err) ||
      tf_physical_initial_from_config(cfg, k, model.params, state_given, x0, &err)) {
    fprintf(stderr, "twofold: error: %s\n", err.msg);
    rc = TF_EXIT_USAGE;
  } else {
    warn_equations(cfg);
    rc = tf_model_check(k, tf_plugin_origin(k), model.params, t0, x0, stdout) ? TF_EXIT_ERROR
                                                                              : TF_EXIT_OK;
  }
  tf_model_destroy(&model);
  tf_config_free(cfg);
  return rc;
}

static int cmd_jobs(void) {
  for (size_t i = 0; i < tf_job_count(); i++)
    printf("%-16s %s\n", tf_job_at(i)->name, tf_job_at(i)->doc);
  return TF_EXIT_OK;
}

/* Loads CONFIG, applies --set, runs the job's setup and rejects unread keys. */
static int setup_job(tf_run *run, const tf_job **job, tf_error *err);

/* Whatever stops a job's setup is a fault of its input (job.h: setup reads and checks the
 * config and the model it names), so a runtime error there gets TF_ERR_CONFIG; a model that
 * cannot be set up, an output that cannot be written and an internal error keep their codes. */
static int input_failure(tf_error *err) {
  const tf_error_code code = tf_error_code_of(err);
  return tf_error_mark(err, code == TF_ERR_RUNTIME ? TF_ERR_CONFIG : code);
}

static int load_and_setup(const cli_args *a, tf_run *run, const tf_job **job, tf_error *err) {
  if (!a->config) return tf_fail_code(err, TF_ERR_CONFIG, "missing CONFIG (see twofold --help)");
  run->config_path = a->config;
  run->cfg = tf_config_load(a->config, err);
  if (!run->cfg && !strchr(a->config, '/') && tf_error_code_of(err) == TF_ERR_INPUT_FILE) {
    const size_t len = strlen(err->msg);
    snprintf(err->msg + len, sizeof err->msg - len,
             " (nor is it an installed config: twofold configs lists them)");
  }
  if (!run->cfg) return -1;
  for (int i = 0; i < a->nsets; i++)
    if (tf_config_set(run->cfg, a->sets[i], err)) return -1;
  if (setup_job(run, job, err)) return -1;
  if (run->rank == 0) warn_equations(run->cfg);
  return 0;
}

static int prepare(const cli_args *a, tf_run *run, const tf_job **job, tf_error *err) {
  return load_and_setup(a, run, job, err) ? input_failure(err) : 0;
}

int tf_exit_status(int rc, const tf_error *err, tf_run_outcome outcome) {
  if (rc) {
    const tf_error_code code = tf_error_code_of(err);
    return tf_error_is_input(code)   ? TF_EXIT_USAGE
           : code == TF_ERR_MODEL    ? TF_EXIT_MODEL
           : code == TF_ERR_IO       ? TF_EXIT_IO
           : code == TF_ERR_INTERNAL ? TF_EXIT_INTERNAL
                                     : TF_EXIT_ERROR;
  }
  return outcome == TF_RUN_INTERRUPTED      ? TF_EXIT_INTERRUPTED
         : outcome == TF_RUN_MEMBERS_FAILED ? TF_EXIT_MEMBERS_FAILED
                                            : TF_EXIT_OK;
}

/* run.isolate and run.member_time_limit (src/isolate.h), read only where written, so the
 * config a results file stores is unchanged for runs that do not use them. */
static int read_isolation(tf_run *run, bool splittable, const char *job, tf_error *err) {
  const bool no = false;
  const double none = 0;
  bool isolate = false;
  if (tf_config_has(run->cfg, "run.isolate") &&
      tf_config_get_bool(run->cfg, "run.isolate", &no, &isolate, err))
    return -1;
  run->isolate = run->isolate || isolate;
  if (tf_config_has(run->cfg, "run.member_time_limit") &&
      tf_config_get_double(run->cfg, "run.member_time_limit", &none, 0.0, 1e9,
                           &run->member_time_limit, err))
    return -1;
  if (run->isolate && !splittable)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "--isolate (run.isolate): job '%s' is one computation, not members; run it "
                        "without",
                        job);
  char where[512];
  if (run->member_time_limit > 0 && !run->isolate)
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: run.member_time_limit needs isolated members (a member that never "
        "returns can be stopped only in a worker process): add run.isolate: true or "
        "--isolate",
        tf_config_where(run->cfg, "run.member_time_limit", where, sizeof where));
  return 0;
}

/* Runs the setup of the job named in run->cfg and rejects unread keys. */
static int setup_job(tf_run *run, const tf_job **job, tf_error *err) {
  const char *names[64];
  size_t n = 0;
  for (; n < tf_job_count() && n < 63; n++) names[n] = tf_job_at(n)->name;
  names[n] = NULL;
  const char *job_name;
  if (tf_config_get_string(run->cfg, "job", NULL, names, &job_name, err)) return -1;
  *job = tf_job_find(job_name);
  if ((*job)->setup(run, err)) {
    /* A missing key is often a misspelt one: point at the first key nobody read. */
    tf_error unused;
    if (tf_error_code_of(err) == TF_ERR_CONFIG_MISSING_KEY &&
        tf_config_check_unused(run->cfg, &unused)) {
      const size_t len = strlen(err->msg);
      snprintf(err->msg + len, sizeof err->msg - len, "\n  note: %s", unused.msg);
    }
    return -1;
  }
  /* jobs whose members run through the scheduler: how many may fail (src/run/failures.h) */
  const double all = 1.0;
  if ((*job)->splittable && tf_config_get_double(run->cfg, "run.max_failed_fraction", &all, 0.0,
                                                 1.0, &run->max_failed_fraction, err))
    return -1;
  if (read_isolation(run, (*job)->splittable, (*job)->name, err)) return -1;
  return tf_config_check_unused(run->cfg, err);
}

/* One config of `twofold check`; several are checked in one process, so a corpus of configs
 * costs one MPI and PETSc start-up, not one each. */
static int check_one(const cli_args *a, const char *config) {
  tf_run run = {.comm = MPI_COMM_SELF, .size = 1, .summary = tf_json_create()};
  const tf_job *job = NULL;
  tf_error err;
  cli_args one = *a;
  one.config = config;
  int rc = prepare(&one, &run, &job, &err);
  if (a->json) {
    tf_json *j = tf_json_create();
    tf_json_string(j, "config", config);
    tf_json_string(j, "status", rc ? "error" : "ok");
    if (rc) tf_json_string(j, "error", err.msg);
    if (!rc) tf_json_string(j, "job", job->name);
    printf("%s\n", tf_json_text(j));
    fflush(stdout);
    tf_json_destroy(j);
  } else if (rc)
    fprintf(stderr, "twofold: error: %s\n", err.msg);
  else {
    printf("%s: ok (job %s)\n", config, job->name);
    if (a->print) {
      char *dump = tf_config_dump(run.cfg);
      if (dump)
        printf("%s", dump);
      else
        fprintf(stderr, "twofold: error: %s: out of memory while printing the config\n", config);
      rc = !dump;
      free(dump);
    }
  }
  if (job && job->destroy) job->destroy(&run);
  tf_config_free(run.cfg);
  tf_json_destroy(run.summary);
  return rc ? TF_EXIT_USAGE : TF_EXIT_OK;
}

static int cmd_check(const cli_args *a) {
  if (!a->config) {
    fprintf(stderr, "twofold: error: missing CONFIG (see twofold --help)\n");
    return TF_EXIT_USAGE;
  }
  int rc = check_one(a, a->config);
  for (int i = 0; i < a->nfiles; i++)
    if (check_one(a, a->files[i]) != TF_EXIT_OK) rc = TF_EXIT_USAGE;
  return rc;
}

static void print_dataset(hid_t file, const char *path) {
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0) return;
  hid_t s = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  const int nd = H5Sget_simple_extent_ndims(s);
  H5Sget_simple_extent_dims(s, dims, NULL);
  if (nd == 2)
    printf("  /%-28s %llu x %llu\n", path, (unsigned long long)dims[0],
           (unsigned long long)dims[1]);
  else
    printf("  /%-28s %llu\n", path, (unsigned long long)dims[0]);
  H5Sclose(s);
  H5Dclose(d);
}

static herr_t visit(hid_t obj, const char *name, const H5O_info_t *info, void *data) {
  (void)data;
  if (info->type == H5O_TYPE_DATASET) print_dataset(obj, name);
  return 0;
}

static void print_status_counts(const tf_failures *f) {
  long long n = 0;
  for (int k = 0; k < TF_MEMBER_STATUS_COUNT; k++) n += f->counts[k];
  printf("members: %lld; by status:", n);
  for (int k = 0; k < TF_MEMBER_STATUS_COUNT; k++)
    if (f->counts[k]) printf(" %s %lld", tf_member_status_name(k), f->counts[k]);
  printf("\n");
}

/* "(200 of 200 members finished; 199 failed: nonfinite 199 (first: 0, 1, ...))": complete
 * means finished, which is not succeeded. */
static void print_finished(const tf_failures *f) {
  long long n = 0;
  for (int k = 0; k < TF_MEMBER_STATUS_COUNT; k++) n += f->counts[k];
  const long long done = tf_failures_done(f), failed = tf_failures_failed(f);
  printf(" (%lld of %lld members finished; ", done, n);
  if (failed) {
    char list[768];
    tf_failures_describe(f, list, sizeof list);
    printf("%lld failed: %s)", failed, list);
  } else {
    printf("none failed)");
  }
}

/* What an isolated run recorded about its first crashed and timed-out members. */
static void print_failure_texts(hid_t file, const tf_failures *f) {
  const int kinds[] = {TF_MEMBER_CRASHED, TF_MEMBER_TIMEOUT};
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds && f->have_ids; k++) {
    const long long shown = f->counts[kinds[k]] < 3 ? f->counts[kinds[k]] : 3;
    for (long long i = 0; i < shown; i++) {
      const uint64_t member = f->first[kinds[k]][i];
      char why[TF_COLUMN_TEXT_BYTES];
      if (tf_failures_text(file, member, why, sizeof why) == 0 && *why)
        printf("member %llu, %s: %s\n", (unsigned long long)member, tf_member_status_name(kinds[k]),
               why);
    }
  }
}

static void print_summary(hid_t file) {
  if (H5Lexists(file, "summary", H5P_DEFAULT) <= 0) return;
  static const char *const names[] = {"final_state_mean", "final_state_std", NULL};
  for (const char *const *nm = names; *nm; nm++) {
    char path[128];
    snprintf(path, sizeof path, "summary/%s", *nm);
    hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    if (d < 0) continue;
    double v[64];
    hid_t s = H5Dget_space(d);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(s, &n, NULL);
    if (n <= 64 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0) {
      printf("%s:", *nm);
      for (hsize_t i = 0; i < n; i++) printf(" %.10g", v[i]);
      printf("\n");
    }
    H5Sclose(s);
    H5Dclose(d);
  }
}

static int cmd_info(const cli_args *a) {
  tf_error err;
  if (!a->config) {
    fprintf(stderr, "twofold: error: info needs a FILE.h5\n");
    return TF_EXIT_USAGE;
  }
  tf_h5_quiet();
  hid_t f = tf_h5_open_serial(a->config, &err);
  if (f >= 0 && tf_h5_check_strings(f, a->config, &err)) {
    H5Fclose(f);
    f = -1;
  }
  if (f < 0) {
    fprintf(stderr, "twofold: error: %s\n", err.msg);
    return TF_EXIT_USAGE;
  }
  static const char *const attrs[] = {"twofold_version", "created",      "config_source",
                                      "model",           "model_plugin", "model_plugin_code",
                                      "state_names",     "merged_from",  NULL};
  char *version = tf_h5_attr_read_string(f, "twofold_version");
  if (!version) {
    fprintf(stderr, "twofold: error: '%s' is an HDF5 file but not a twofold results file\n",
            a->config);
    H5Fclose(f);
    return TF_EXIT_USAGE;
  }
  free(version);
  printf("file: %s\n", a->config);
  for (const char *const *at = attrs; *at; at++) {
    const bool list = strcmp(*at, "state_names") == 0 || strcmp(*at, "merged_from") == 0;
    char *v = list ? tf_h5_attr_read_names(f, *at) : tf_h5_attr_read_string(f, *at);
    /* a list is printed joined with ',', an older file's newline-joined parts alike */
    for (char *c = v; list && c && *c; c++)
      if (*c == '\n') *c = ',';
    if (v) printf("%s: %s\n", *at, v);
    free(v);
  }
  long long complete = 0, ranks = 0;
  tf_h5_attr_read_int(f, "complete", &complete);
  tf_h5_attr_read_int(f, "ranks", &ranks);
  long long part = 0, parts = 0;
  uint64_t block = 0, block_done = 0;
  const int split = tf_merge_part_progress(f, &part, &parts, &block, &block_done);
  tf_failures failures;
  const bool members = tf_failures_read(f, &failures) == 0;
  if (split == 1) /* `complete` speaks of the whole ensemble, which a part never holds */
    printf("complete: %s (part %lld/%lld: %llu of its %llu members done%s)",
           block_done == block ? "yes" : "no", part, parts, (unsigned long long)block_done,
           (unsigned long long)block,
           block_done == block ? "; twofold merge joins the parts" : "; resume with --resume");
  else
    printf("complete: %s", complete ? "yes" : "no (resume with --resume)");
  if (members) print_finished(&failures);
  printf("\nranks (first run): %lld\n", ranks);
  if (members) print_status_counts(&failures), print_failure_texts(f, &failures);
  print_summary(f);
  printf("datasets:\n");
  H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_INC, visit, NULL, H5O_INFO_BASIC);
  if (a->show_config) {
    char *cfg = tf_h5_attr_read_string(f, "config");
    printf("config as run:\n%s", cfg ? cfg : "(none)\n");
    free(cfg);
  }
  H5Fclose(f);
  return TF_EXIT_OK;
}

/* Rank 0 prints its error; other ranks print theirs only if it says something else. */
static void report_error(const tf_run *run, const tf_error *err) {
  tf_error first = *err;
  MPI_Bcast(&first, sizeof first, MPI_BYTE, 0, run->comm);
  if (run->rank == 0)
    fprintf(stderr, "twofold: error: %s\n", err->msg);
  else if (!tf_error_same(&first, err))
    fprintf(stderr, "twofold: error (rank %d): %s\n", run->rank, err->msg);
}

/* Seconds since the process started (the kernel's start time, so loading the shared
 * libraries, MPI_Init and PETSc are counted), or since `fallback` where /proc is missing. */
static double process_seconds(double fallback) {
  FILE *f = fopen("/proc/self/stat", "r");
  unsigned long long start_ticks = 0;
  int ok = 0;
  if (f) {
    char buf[4096];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    for (int field = 2; p && field < 22; field++) p = strchr(p + 1, ' ');
    ok = p && sscanf(p + 1, "%llu", &start_ticks) == 1;
  }
  struct timespec now;
  const long hz = sysconf(_SC_CLK_TCK);
  if (!ok || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &now)) return MPI_Wtime() - fallback;
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec - (double)start_ticks / (double)hz;
}

/* The model as messages name it: the built-in's name, the equations' name, or the file. */
static const char *model_label(tf_config *cfg) {
  static const char *const keys[] = {"model.name", "model.equations.name", "model.source",
                                     "model.library"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    const char *v = NULL;
    tf_error ignored;
    if (tf_config_has(cfg, keys[i]) &&
        !tf_config_get_string(cfg, keys[i], NULL, NULL, &v, &ignored) && v)
      return v;
  }
  return tf_config_has(cfg, "model.equations") ? "equations" : "?";
}

/* Failed members are said even under --quiet when they fail the run (the reason for its exit
 * status); otherwise --quiet (not --progress none) keeps the count to the JSON summary and the
 * file. */
static void report_failures(const tf_run *run, bool quiet, int exit_code, const tf_error *err) {
  if (exit_code == TF_EXIT_MEMBERS_FAILED)
    fprintf(stderr, "twofold: error: %s\n", err->msg);
  else if (run->failures[0] && !quiet)
    fprintf(stderr, "twofold: warning: %s (results in '%s'; twofold info shows them)\n",
            run->failures, run->output_path);
}

/* `twofold run` on comm.  Embedded (the library entry point): errors are left in err for the
 * caller instead of printed.  *file_broken: the job found its results file broken (tf_run). */
static int cmd_run(const cli_args *a, MPI_Comm comm, bool embedded, bool *file_broken,
                   tf_error *err_out) {
  tf_run run = {.comm = comm,
                .output_override = a->output,
                .resume = a->resume,
                .overwrite = a->overwrite,
                .json = a->json,
                .quiet = a->quiet || (a->progress && strcmp(a->progress, "none") == 0),
                .progress_mode = a->progress,
                .time_limit = a->time_limit,
                .stop_after = a->stop_after,
                .pause_after = a->pause_after,
                .isolate = a->isolate,
                .part = a->part,
                .parts = a->parts,
                .summary = tf_json_create()};
  MPI_Comm_rank(run.comm, &run.rank);
  MPI_Comm_size(run.comm, &run.size);
  run.start_time = MPI_Wtime();
  tf_h5_quiet();
  const tf_job *job = NULL;
  tf_error err = {0};
  const int unprepared = prepare(a, &run, &job, &err);
  if (!unprepared && !embedded) /* the host program of the library owns its signals */
    tf_guard_install(model_label(run.cfg), run.rank, run.time_limit,
                     run.time_limit - (MPI_Wtime() - run.start_time));
  int rc = unprepared;
  if (!rc && run.parts > 0 && !job->splittable)
    rc = tf_fail_code(&err, TF_ERR_CONFIG,
                      "--part: job '%s' is one computation and cannot be split", job->name);
  else if (!rc)
    rc = job->execute(&run, &err);
  const int exit_code = tf_exit_status(rc, &err, run.outcome);
  *file_broken = run.file_broken; /* then the error alone is said */
  if (rc && !embedded) report_error(&run, &err);
  if (exit_code == TF_EXIT_MEMBERS_FAILED)
    tf_fail(&err, "%s; the results are complete in '%s' (exit status 4)", run.failures,
            run.output_path);
  if (run.rank == 0 && !embedded) report_failures(&run, a->quiet, exit_code, &err);
  if (run.rank == 0 && !*file_broken) {
    if (exit_code == TF_EXIT_INTERRUPTED && !a->quiet && run.restarts)
      fprintf(stderr,
              "twofold: %s: what was done is in '%s' (incomplete); job '%s' is one "
              "computation, so --resume starts it again from the beginning\n",
              tf_checkpoint_signal() ? "interrupted by a signal"
              : a->stop_after        ? "stopped by --stop-after"
                                     : "time limit reached",
              run.output_path, job->name);
    else if (exit_code == TF_EXIT_INTERRUPTED && !a->quiet)
      fprintf(stderr,
              "twofold: %s: results so far are in '%s'; run again with --resume to finish\n",
              tf_checkpoint_signal() ? "interrupted by a signal"
              : a->stop_after        ? "stopped by --stop-after"
                                     : "time limit reached",
              run.output_path);
    if (a->json) {
      tf_json *head = tf_json_create();
      tf_json_string(head, "job", job ? job->name : "");
      tf_json_string(head, "status",
                     exit_code == TF_EXIT_OK               ? "complete"
                     : exit_code == TF_EXIT_INTERRUPTED    ? "interrupted"
                     : exit_code == TF_EXIT_MEMBERS_FAILED ? "members_failed"
                                                           : "error");
      if (rc) tf_json_string(head, "error", err.msg);
      if (run.failures[0]) tf_json_string(head, "failures", run.failures);
      tf_json_string(head, "output", run.output_path);
      tf_json_integer(head, "ranks", run.size);
      tf_json_number(head, "wall_seconds", MPI_Wtime() - run.start_time);
      tf_json_number(head, "process_seconds", process_seconds(run.start_time));
      tf_json_string(head, "version", TF_VERSION_STRING);
      const char *body = tf_json_text(run.summary);
      const char *top = tf_json_text(head);
      /* Splice the job's fields after the common ones. */
      if (strlen(body) > 2)
        printf("%.*s, %s\n", (int)strlen(top) - 1, top, body + 1);
      else
        printf("%s\n", top);
      fflush(stdout);
      tf_json_destroy(head);
    }
  }
  if (job && job->destroy) job->destroy(&run);
  tf_config_free(run.cfg);
  tf_json_destroy(run.summary);
  *err_out = err;
  return exit_code;
}

/* `twofold slurm`: the config is validated like `twofold check` (with the same --set and -o)
 * before any script is written. */
static int cmd_slurm(const cli_args *a) {
  tf_run run = {
      .comm = MPI_COMM_SELF, .size = 1, .output_override = a->output, .summary = tf_json_create()};
  const tf_job *job = NULL;
  tf_error err;
  int rc = prepare(a, &run, &job, &err) ? TF_EXIT_USAGE : TF_EXIT_OK;
  if (rc == TF_EXIT_OK) {
    const tf_slurm_job sj = {.config = a->config,
                             .output = run.output_path,
                             .job = job->name,
                             .splittable = job->splittable,
                             .sets = a->sets,
                             .nsets = a->nsets,
                             .petsc = (const char **)a->petsc_argv + 1,
                             .npetsc = a->petsc_argc - 2}; /* not -no_signal_handler */
    if (tf_slurm_check(&a->slurm, &sj, &err))
      rc = TF_EXIT_USAGE;
    else if (tf_slurm_run(&a->slurm, &sj, &err))
      rc = tf_exit_status(-1, &err, TF_RUN_COMPLETE); /* a path refused 2, a file unwritten 6 */
  }
  if (rc) fprintf(stderr, "twofold: error: %s\n", err.msg);
  if (job && job->destroy) job->destroy(&run);
  tf_config_free(run.cfg);
  tf_json_destroy(run.summary);
  return rc;
}

/* Finishes a merged file as a resumed run with every member done: the job writes its
 * summary from the file and marks it complete, exactly as at the end of a single run.  ctx is
 * a bool set when the file broke (run.file_broken: reported, removed, not to be closed). */
static int finish_merged(const char *path, const char *config_text, const char *source, void *ctx,
                         tf_error *err) {
  tf_run run = {.comm = MPI_COMM_SELF,
                .size = 1,
                .output_override = path,
                .resume = true,
                .discard_if_broken = true,
                .quiet = true,
                .progress_mode = "none",
                .config_path = source,
                .summary = tf_json_create()};
  run.start_time = MPI_Wtime();
  const tf_job *job = NULL;
  run.cfg = tf_config_parse_string(config_text, source, err);
  /* relative plugin paths in the stored config are relative to the original config file */
  hid_t f = run.cfg ? tf_h5_open_serial(path, err) : -1;
  char *original = f >= 0 ? tf_h5_attr_read_string(f, "config_source") : NULL;
  if (f >= 0) H5Fclose(f);
  char *slash = original ? strrchr(original, '/') : NULL;
  if (slash) *slash = '\0';
  int rc = run.cfg ? tf_config_set_dir(run.cfg, slash ? original : ".", err) : -1;
  free(original);
  if (!rc) rc = setup_job(&run, &job, err);
  if (!rc && !job->splittable)
    rc = tf_fail_code(err, TF_ERR_CONFIG, "merge: job '%s' cannot be split", job->name);
  if (!rc) rc = job->execute(&run, err);
  *(bool *)ctx = run.file_broken;
  /* failed members are the parts' verdict (each part's run said so); the merged file is whole */
  if (!rc && run.outcome == TF_RUN_INTERRUPTED)
    rc = tf_fail(err, "merge: finishing '%s' was interrupted", path);
  if (job && job->destroy) job->destroy(&run);
  tf_config_free(run.cfg);
  tf_json_destroy(run.summary);
  return rc;
}

/* `twofold merge OUT.h5 PART.h5...`, or `twofold merge -o OUT.h5 PART.h5...`. */
static int cmd_merge(const cli_args *a, bool *file_broken) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1) {
    fprintf(stderr, "twofold: error: merge runs on one process (not under mpiexec -n %d)\n", size);
    return TF_EXIT_USAGE;
  }
  const char *out = a->output ? a->output : a->config;
  const char **files = a->files;
  int nfiles = a->nfiles;
  if (a->output && a->config) { /* every positional argument is a part */
    memmove(a->files + 1, a->files, (size_t)a->nfiles * sizeof *a->files);
    a->files[0] = a->config;
    nfiles++;
  }
  if (!out || nfiles < 1) {
    fprintf(stderr, "twofold: error: usage: twofold merge OUT.h5 PART.h5... (see --help)\n");
    return TF_EXIT_USAGE;
  }
  tf_h5_quiet();
  tf_merge_stats st;
  tf_error err;
  const tf_merge_end rc =
      tf_merge(out, files, nfiles, a->overwrite, finish_merged, file_broken, &st, &err);
  if (rc) fprintf(stderr, "twofold: error: %s\n", err.msg);
  if (a->json) {
    tf_json *j = tf_json_create();
    tf_json_string(j, "job", "merge");
    tf_json_string(j, "status", rc ? "error" : "complete");
    if (rc) tf_json_string(j, "error", err.msg);
    tf_json_string(j, "output", out);
    tf_json_integer(j, "files", nfiles);
    tf_json_integer(j, "parts", st.parts);
    tf_json_integer(j, "members", (long long)st.members);
    tf_json_integer(j, "rows_copied", (long long)st.rows_copied);
    tf_json_number(j, "copy_seconds", st.copy_seconds);
    tf_json_number(j, "wall_seconds", st.seconds);
    printf("%s\n", tf_json_text(j));
    tf_json_destroy(j);
  } else if (!rc && !a->quiet) {
    printf("merged %d file%s (%llu members) into %s in %.2f s\n", nfiles, nfiles > 1 ? "s" : "",
           (unsigned long long)st.members, out, st.seconds);
  }
  /* refusals (bad input) are usage errors; failures while writing are runtime errors */
  return rc == TF_MERGE_DONE ? TF_EXIT_OK : rc == TF_MERGE_REFUSED ? TF_EXIT_USAGE : TF_EXIT_ERROR;
}

/* A results file HDF5 failed to write is left open: closing it, or PETSc or MPI, could hang
 * or crash on ranks whose HDF5 states differ.  Every rank learnt it in the same collective
 * round, so the executable (only it: the library returns the status) ends each one here
 * without finalising, as a crash would end it; --resume verifies and repairs the file. */
static _Noreturn void end_with_broken_file(int rc) {
  fflush(stdout), fflush(stderr);
  _exit(rc);
}

static void free_args(cli_args *a) {
  free(a->sets);
  free(a->petsc_argv);
  free(a->files);
  free(a->config_found);
}

int tf_cli_main(int argc, char **argv) {
  /* GSL's default handler aborts the process on bad input such as a non-finite function
   * value; every call site checks the status GSL returns instead */
  gsl_set_error_handler_off();
  /* past a file-size limit (ulimit -f) a write must fail like a full disk, with a message and
   * the flushed rows kept, not kill the process by SIGXFSZ's default action */
  signal(SIGXFSZ, SIG_IGN);
  if (argc > 1 && strcmp(argv[1], "mpirun") == 0) return tf_launcher_main(argc, argv);
  tf_h5_guard_writes(MPI_COMM_WORLD);
  if (argc > 1 && strcmp(argv[1], "slurm") == 0) tf_slurm_remember_environment();
  cli_args a;
  tf_error err;
  if (parse_args(argc, argv, &a, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    free_args(&a);
    return TF_EXIT_USAGE;
  }
  find_installed_config(&a);
  int rc = TF_EXIT_USAGE;
  if (strcmp(a.command, "help") == 0) {
    fputs(usage, stdout);
    rc = TF_EXIT_OK;
  } else if (strcmp(a.command, "version") == 0) {
    printf("%s\n", TF_VERSION_STRING);
    rc = TF_EXIT_OK;
  } else if (strcmp(a.command, "models") == 0) {
    rc = cmd_models(&a);
  } else if (strcmp(a.command, "model") == 0) {
    rc = cmd_model(&a);
  } else if (strcmp(a.command, "jobs") == 0) {
    rc = cmd_jobs();
  } else if (strcmp(a.command, "configs") == 0) {
    rc = cmd_configs();
  } else if (strcmp(a.command, "info") == 0) {
    rc = cmd_info(&a);
  } else if (strcmp(a.command, "check") == 0 || strcmp(a.command, "run") == 0 ||
             strcmp(a.command, "slurm") == 0 || strcmp(a.command, "merge") == 0) {
    tf_mpi_singleton_defaults();
    /* Before MPI_Init, which takes seconds under a loaded srun: a checkpoint request arriving
     * then must be a request, not SIGUSR1's default action (the process dies). */
    tf_checkpoint_install_handlers();
    MPI_Init(&argc, &argv);
    a.petsc_argv[a.petsc_argc++] = "-no_signal_handler";
    a.petsc_argv[a.petsc_argc] = NULL;
    tf_petsc_remember_options(a.petsc_argc, a.petsc_argv);
    bool file_broken = false;
    rc = strcmp(a.command, "run") == 0     ? cmd_run(&a, MPI_COMM_WORLD, false, &file_broken, &err)
         : strcmp(a.command, "slurm") == 0 ? cmd_slurm(&a)
         : strcmp(a.command, "merge") == 0 ? cmd_merge(&a, &file_broken)
                                           : cmd_check(&a);
    if (file_broken) end_with_broken_file(rc);
    tf_petsc_finish(MPI_COMM_WORLD,
                    strcmp(a.command, "run") == 0 || strcmp(a.command, "check") == 0);
    MPI_Finalize();
    tf_mpi_singleton_cleanup();
  } else {
    fprintf(stderr, "twofold: unknown command '%s' (see twofold --help)\n", a.command);
  }
  free_args(&a);
  return rc;
}

/* The library's `twofold run` (include/twofold/twofold.h): the caller owns MPI, and whatever
 * the CLI sets process-wide for itself (PETSc, the GSL error handler, HDF5's error printing)
 * is set for this call only.  PETSc is started on comm, as by the CLI, when the run needs it
 * and nobody has started it, without its signal handlers (the process's are the caller's), and
 * ended after the call; when the caller already has PETSc, the command line's PETSc options go
 * to an options database pushed for this call. */
int tf_cli_run_embedded(MPI_Comm comm, int argc, char **argv, tf_error *err) {
  cli_args a;
  if (parse_args(argc, argv, &a, err)) {
    free_args(&a);
    return TF_EXIT_USAGE;
  }
  if (strcmp(a.command, "run") != 0) {
    tf_fail_code(err, TF_ERR_CONFIG,
                 "expected the arguments of 'twofold run', got the command '%s'", a.command);
    free_args(&a);
    return TF_EXIT_USAGE;
  }
  gsl_error_handler_t *gsl_handler = gsl_set_error_handler_off();
  H5E_auto2_t h5_func = NULL;
  void *h5_data = NULL;
  H5Eget_auto2(H5E_DEFAULT, &h5_func, &h5_data);
  const bool callers_petsc = tf_petsc_caller_runs_it();
  bool pushed = false;
  int rc = TF_EXIT_OK;
  if (!callers_petsc) {
    a.petsc_argv[a.petsc_argc++] = "-no_signal_handler";
    a.petsc_argv[a.petsc_argc] = NULL;
    tf_petsc_remember_options(a.petsc_argc, a.petsc_argv);
  } else if (a.petsc_argc > 1) {
    pushed = tf_petsc_push_options(a.petsc_argc, a.petsc_argv, err) == 0;
    if (!pushed) rc = TF_EXIT_USAGE;
  }
  if (rc == TF_EXIT_OK) {
    tf_h5_guard_writes(comm);
    bool file_broken = false; /* the status says so; the caller owns its process */
    rc = cmd_run(&a, comm, true, &file_broken, err);
    tf_h5_guard_writes(MPI_COMM_NULL);
  }
  if (!callers_petsc) tf_petsc_finish(comm, false);
  if (pushed) tf_petsc_pop_options();
  H5Eset_auto2(H5E_DEFAULT, h5_func, h5_data);
  gsl_set_error_handler(gsl_handler);
  free_args(&a);
  return rc;
}

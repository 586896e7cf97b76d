/* slurm.c — see slurm.h.  The shell in the scripts is kept the same as in the cluster/ templates.
 */
#include "slurm.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "version.h"

extern char **environ;
static char **saved_environment;

void tf_slurm_remember_environment(void) {
  size_t n = 0;
  while (environ[n]) n++;
  saved_environment = calloc(n + 1, sizeof *saved_environment);
  for (size_t i = 0; saved_environment && i < n; i++) saved_environment[i] = strdup(environ[i]);
}

void tf_slurm_defaults(tf_slurm_options *o) {
  memset(o, 0, sizeof *o);
  o->ntasks = 1;
  o->launcher = "srun";
  o->merge_after = "any";
  o->signal_lead = 300;
  o->merge_time = "00:30:00";
}

static const struct {
  const char *name;
  int arity;
} slurm_options[] = {
    {"--array", 1},       {"--ntasks", 1},      {"--nodes", 1},      {"--cpus-per-task", 1},
    {"--time", 1},        {"--partition", 1},   {"--account", 1},    {"--qos", 1},
    {"--mem", 1},         {"--dir", 1},         {"--launcher", 1},   {"--merge-after", 1},
    {"--signal-lead", 1}, {"--module", 1},      {"--sbatch", 1},     {"--requeue", 0},
    {"--dry-run", 0},     {"--pause-after", 1}, {"--merge-time", 1},
};

int tf_slurm_option_arity(const char *opt) {
  for (size_t i = 0; i < sizeof slurm_options / sizeof *slurm_options; i++)
    if (strcmp(opt, slurm_options[i].name) == 0) return slurm_options[i].arity;
  return -1;
}

static int positive(const char *opt, const char *value, int *out, tf_error *err) {
  char *end;
  const long v = strtol(value, &end, 10);
  if (*end || end == value || v < 1 || v > 1000000)
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: expected a positive integer, got '%s'", opt,
                        value);
  *out = (int)v;
  return 0;
}

/* SLURM time formats: MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; seconds, or -1. */
static long slurm_seconds(const char *t) {
  long days = 0, f[3];
  int n = 0;
  const char *c = t;
  char *end;
  const char *dash = strchr(t, '-');
  if (dash) {
    days = strtol(t, &end, 10);
    if (end != dash || end == t) return -1;
    c = dash + 1;
  }
  for (;;) {
    if (n == 3 || *c < '0' || *c > '9') return -1;
    f[n++] = strtol(c, &end, 10);
    if (*end == '\0') break;
    if (*end != ':') return -1;
    c = end + 1;
  }
  if (dash) /* D-HH[:MM[:SS]] */
    return days * 86400 + f[0] * 3600 + (n > 1 ? f[1] * 60 : 0) + (n > 2 ? f[2] : 0);
  if (n == 1) return f[0] * 60;
  if (n == 2) return f[0] * 60 + f[1];
  return f[0] * 3600 + f[1] * 60 + f[2];
}

static bool safe_word(const char *s) {
  for (; *s; s++)
    if (*s == '\n' || *s == '\'' || (unsigned char)*s < 0x20 || *s == 0x7f) return false;
  return true;
}

/* A value on an #SBATCH line: sbatch reads it up to white space and expands % patterns in
 * file names, and a line break would end the directives and start shell code. */
static bool directive_word(const char *s) {
  if (!safe_word(s)) return false;
  for (; *s; s++)
    if (*s == ' ' || *s == '\t' || *s == '%') return false;
  return true;
}

int tf_slurm_set_option(tf_slurm_options *o, const char *opt, const char *value, tf_error *err) {
  if (value && !safe_word(value))
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: newlines and single quotes are not allowed", opt);
  if (strcmp(opt, "--array") == 0) return positive(opt, value, &o->array, err);
  if (strcmp(opt, "--ntasks") == 0) return positive(opt, value, &o->ntasks, err);
  if (strcmp(opt, "--pause-after") == 0) return positive(opt, value, &o->pause_after, err);
  if (strcmp(opt, "--nodes") == 0) return positive(opt, value, &o->nodes, err);
  if (strcmp(opt, "--cpus-per-task") == 0) return positive(opt, value, &o->cpus_per_task, err);
  if (strcmp(opt, "--signal-lead") == 0) {
    if (positive(opt, value, &o->signal_lead, err)) return -1;
    if (o->signal_lead > 65535)
      return tf_fail_code(err, TF_ERR_CONFIG, "--signal-lead: at most 65535 seconds");
    return 0;
  }
  if (strcmp(opt, "--time") == 0 || strcmp(opt, "--merge-time") == 0) {
    if (slurm_seconds(value) <= 0)
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "%s: expected a SLURM time (MINUTES, HH:MM:SS or "
                          "D-HH:MM:SS), got '%s'",
                          opt, value);
    *(strcmp(opt, "--time") == 0 ? &o->time : &o->merge_time) = value;
  } else if (strcmp(opt, "--partition") == 0)
    o->partition = value;
  else if (strcmp(opt, "--account") == 0)
    o->account = value;
  else if (strcmp(opt, "--qos") == 0)
    o->qos = value;
  else if (strcmp(opt, "--mem") == 0)
    o->mem = value;
  else if (strcmp(opt, "--dir") == 0)
    o->dir = value;
  else if (strcmp(opt, "--launcher") == 0) {
    if (strcmp(value, "srun") && strcmp(value, "mpiexec"))
      return tf_fail_code(err, TF_ERR_CONFIG, "--launcher: expected srun or mpiexec, got '%s'",
                          value);
    o->launcher = value;
  } else if (strcmp(opt, "--merge-after") == 0) {
    if (strcmp(value, "any") && strcmp(value, "ok"))
      return tf_fail_code(err, TF_ERR_CONFIG, "--merge-after: expected any or ok, got '%s'", value);
    o->merge_after = value;
  } else if (strcmp(opt, "--module") == 0) {
    if (o->nmodules == 16) return tf_fail_code(err, TF_ERR_CONFIG, "at most 16 --module options");
    o->modules[o->nmodules++] = value;
  } else if (strcmp(opt, "--sbatch") == 0) {
    if (o->nextra == 16) return tf_fail_code(err, TF_ERR_CONFIG, "at most 16 --sbatch options");
    o->sbatch_extra[o->nextra++] = value;
  } else if (strcmp(opt, "--requeue") == 0)
    o->requeue = true;
  else if (strcmp(opt, "--dry-run") == 0)
    o->dry_run = true;
  else
    return tf_fail_code(err, TF_ERR_CONFIG, "unknown option '%s'", opt);
  return 0;
}

/* A growing text buffer. */
typedef struct text {
  char *s;
  size_t len, cap;
  bool oom;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || t->oom) return;
  if (t->len + (size_t)n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + (size_t)n + 1) cap *= 2;
    char *s = realloc(t->s, cap);
    if (!s) {
      t->oom = true;
      return;
    }
    t->s = s, t->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

/* Appends `s` as one single-quoted shell word. */
static void add_quoted(text *t, const char *s) {
  add(t, "'");
  for (; *s; s++) {
    if (*s == '\'')
      add(t, "'\\''");
    else
      add(t, "%c", *s);
  }
  add(t, "'");
}

/* The script's settings as shell variables, after the #SBATCH lines. */
typedef struct plan {
  const tf_slurm_options *o;
  const tf_slurm_job *job;
  char exe[PATH_MAX], config[PATH_MAX], cwd[PATH_MAX], dir[PATH_MAX];
  char stem[256], name[300], parts_dir[PATH_MAX + 16], logs_dir[PATH_MAX + 16];
} plan;

static void sbatch_common(text *t, const plan *p, int ntasks, bool array, bool merge) {
  const tf_slurm_options *o = p->o;
  add(t, "#SBATCH --job-name=%s%s\n", p->name, merge ? "-merge" : "");
  add(t, "#SBATCH --ntasks=%d\n", ntasks);
  if (o->nodes && !merge) add(t, "#SBATCH --nodes=%d\n", o->nodes);
  if (o->cpus_per_task && !merge) add(t, "#SBATCH --cpus-per-task=%d\n", o->cpus_per_task);
  /* the merge only copies part files: its own short limit, not the array's */
  const char *time = merge ? o->merge_time : o->time;
  if (time) add(t, "#SBATCH --time=%s\n", time);
  if (o->partition) add(t, "#SBATCH --partition=%s\n", o->partition);
  if (o->account) add(t, "#SBATCH --account=%s\n", o->account);
  if (o->qos) add(t, "#SBATCH --qos=%s\n", o->qos);
  if (o->mem) add(t, "#SBATCH --mem=%s\n", o->mem);
  add(t, "#SBATCH --chdir=%s\n", p->cwd);
  add(t, "#SBATCH --output=%s/%s%s-%s.log\n", p->logs_dir, p->stem,
      merge   ? "-merge"
      : array ? "-task"
              : "",
      array ? "%A_%a" : "%j");
  add(t, "#SBATCH --open-mode=append\n");
  if (!merge) {
    add(t, "#SBATCH --signal=B:USR1@%d\n", o->signal_lead);
    add(t, "#SBATCH %s\n", o->requeue ? "--requeue" : "--no-requeue");
  }
  for (int i = 0; i < o->nextra; i++) add(t, "#SBATCH %s\n", o->sbatch_extra[i]);
  /* site module scripts read unset variables: they run before set -u */
  for (int i = 0; i < o->nmodules; i++) {
    add(t, "module load ");
    add_quoted(t, o->modules[i]);
    add(t, "\n");
  }
  add(t, "set -u\n");
  add(t, "TWOFOLD=");
  add_quoted(t, p->exe);
  add(t, "\nCONFIG=");
  add_quoted(t, p->config);
  add(t, "\nOUT=");
  add_quoted(t, p->job->output);
  add(t, "\nmkdir -p \"$(dirname \"$OUT\")\"\n");
}

/* The engine's command line after `run "$CONFIG"`: overrides and PETSc options. */
static void engine_options(text *t, const plan *p) {
  if (p->o->pause_after > 0) add(t, " --pause-after %d", p->o->pause_after);
  for (int i = 0; i < p->job->nsets; i++) {
    add(t, " --set ");
    add_quoted(t, p->job->sets[i]);
  }
  for (int i = 0; i < p->job->npetsc; i++) {
    add(t, " ");
    add_quoted(t, p->job->petsc[i]);
  }
}

/* Runs the engine in the background so the batch shell can take the warning signal, passes
 * it on, waits for the engine's real exit status and requeues after a checkpoint. */
static void run_engine(text *t, const plan *p, const char *out_var, const char *part) {
  const tf_slurm_options *o = p->o;
  add(t,
      "# The warning signal (--signal=B:USR1) reaches this shell only: pass it on to the\n"
      "# engine, which finishes its current members, flushes them and exits with status 3.\n"
      "# One that arrives before the launch is passed on once the engine is up.\n"
      "engine= asked=\n"
      "checkpoint() {\n"
      "  echo \"twofold-slurm: $1 at $(date -u +%%FT%%TZ): asking the engine to checkpoint\" "
      ">&2\n"
      "  asked=1\n"
      "  [ -n \"$engine\" ] && kill -USR1 \"$engine\" 2>/dev/null\n"
      "}\n"
      "trap 'checkpoint USR1' USR1\n"
      "trap 'checkpoint TERM' TERM\n"
      "# A launch whose ranks died by a signal without being asked to stop (a rank killed at\n"
      "# start-up, e.g. inside MPI_Init) runs again from its file, at most TWOFOLD_RELAUNCHES\n"
      "# times (default 2).  Nothing is lost: the file holds whole flushed members only.\n"
      "# srun ends the other ranks TWOFOLD_SRUN_WAIT seconds (default 60) after one has ended:\n"
      "# ranks end together (MPI_Finalize is a barrier), and those waiting for a dead peer\n"
      "# never would.\n"
      "for v in TWOFOLD_RELAUNCHES TWOFOLD_SRUN_WAIT; do # whole numbers, or srun and test fail "
      "late\n"
      "  case \"${!v:-0}\" in *[!0-9]*) echo \"twofold-slurm: $v must be a whole number, got "
      "'${!v}'\" >&2; exit 2 ;; esac\n"
      "done\n"
      "relaunches=${TWOFOLD_RELAUNCHES:-2}\n"
      "while :; do\n"
      "  ");
  if (strcmp(o->launcher, "srun") == 0)
    add(t, "srun --mpi=pmix --wait=\"${TWOFOLD_SRUN_WAIT:-60}\"");
  else
    add(t, "mpiexec -n \"$SLURM_NTASKS\"");
  add(t, " \"$TWOFOLD\" run \"$CONFIG\" -o \"$%s\"%s --resume --progress log", out_var, part);
  engine_options(t, p);
  add(t,
      " &\n"
      "  engine=$!\n"
      "  # a signal that came before the launch\n"
      "  [ -n \"$asked\" ] && kill -USR1 \"$engine\" 2>/dev/null\n"
      "  while :; do\n"
      "    wait \"$engine\"; rc=$?\n"
      "    if [ \"$rc\" -gt 128 ]; then # interrupted by a trapped signal, or the engine's own\n"
      "      kill -0 \"$engine\" 2>/dev/null && continue\n"
      "      wait \"$engine\" 2>/dev/null; r=$?; [ \"$r\" -ne 127 ] && rc=$r\n"
      "    fi\n"
      "    break\n"
      "  done\n"
      "  [ \"$rc\" -gt 128 ] && [ -z \"$asked\" ] && [ \"$relaunches\" -gt 0 ] || break\n"
      "  relaunches=$((relaunches - 1))\n"
      "  echo \"twofold-slurm: the launcher ended with status $rc (a rank died by signal "
      "$((rc - 128))); launching again from '$%s' ($relaunches more allowed)\" >&2\n"
      "done\n"
      "# A rank killed by the checkpoint signal itself got it before its handler existed\n"
      "# (while its libraries were loading) and has written nothing: a checkpoint like any other.\n"
      "if [ -n \"$asked\" ] && { [ \"$rc\" = 138 ] || [ \"$rc\" = 143 ]; }; then\n"
      "  echo \"twofold-slurm: a rank was killed by the checkpoint signal before the engine had "
      "started; nothing was lost: status 3\" >&2\n"
      "  rc=3\n"
      "fi\n"
      "echo \"twofold-slurm: engine exit status $rc (job ${SLURM_JOB_ID:-?}, restart "
      "${SLURM_RESTART_COUNT:-0})\" >&2\n",
      out_var);
  add(t,
      "# srun has exited 0 without launching the engine (a step whose PMIx set-up failed):\n"
      "# success is the engine's file saying so\n");
  add(t,
      "if [ \"$rc\" = 0 ] && ! \"$TWOFOLD\" info \"$%s\" 2>/dev/null | grep -q '^complete: yes'; "
      "then\n"
      "  echo \"twofold-slurm: the launcher exited 0 but '$%s' is not complete: the engine did "
      "not run to its end (see the launcher's messages above)\" >&2\n"
      "  rc=1\n"
      "fi\n",
      out_var, out_var);
  if (o->requeue)
    add(t,
        "if [ \"$rc\" = 3 ]; then # checkpointed: run again from the file\n"
        "  echo \"twofold-slurm: requeueing job $SLURM_JOB_ID to resume\" >&2\n"
        "  scontrol requeue \"$SLURM_JOB_ID\" && exit 0\n"
        "fi\n");
  else
    add(t, "# status 3: checkpointed; submit this script again to resume.\n");
  add(t, "exit \"$rc\"\n");
}

/* A login shell (-l) when modules are loaded: `module` is defined by the login profile. */
static void header(text *t, const plan *p, const char *what) {
  add(t, "#!/bin/bash%s\n# %s\n", p->o->nmodules ? " -l" : "", what);
  add(t, "# Generated by `twofold slurm` (%s) for %s; submit with sbatch.\n", TF_VERSION_STRING,
      p->config);
}

static void single_script(text *t, const plan *p) {
  header(t, p, "One allocation running the whole job, resumable.");
  sbatch_common(t, p, p->o->ntasks, false, false);
  run_engine(t, p, "OUT", "");
}

static void part_name_function(text *t, const plan *p) {
  const int digits = snprintf(NULL, 0, "%d", p->o->array);
  add(t, "PARTS=");
  add_quoted(t, p->parts_dir);
  add(t, "\nN=%d\npart_file() { printf '%%s/part-%%0%dd-of-%%d.h5' \"$PARTS\" \"$1\" \"$N\"; }\n",
      p->o->array, digits);
}

static void array_script(text *t, const plan *p) {
  header(t, p, "Array task K of N: members of block K into its own part file, resumable.");
  add(t, "#SBATCH --array=0-%d\n", p->o->array - 1);
  sbatch_common(t, p, p->o->ntasks, true, false);
  part_name_function(t, p);
  add(t,
      "K=${SLURM_ARRAY_TASK_ID:?this script runs as a job array task}\n"
      "PART=$(part_file \"$K\")\n"
      "mkdir -p \"$PARTS\"\n");
  run_engine(t, p, "PART", " --part \"$K/$N\"");
}

static void merge_script(text *t, const plan *p) {
  header(t, p,
         "Merge of the array's part files into one results file (after every task has "
         "ended; it names any task that failed).");
  sbatch_common(t, p, 1, false, true);
  part_name_function(t, p);
  add(t,
      "files=()\n"
      "for ((k = 0; k < N; k++)); do files+=(\"$(part_file \"$k\")\"); done\n"
      "\"$TWOFOLD\" merge \"$OUT\" \"${files[@]}\" --json\n");
}

static int write_file(const char *path, const text *t, tf_error *err) {
  FILE *f = fopen(path, "w");
  if (!f) return tf_fail_code(err, TF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
  const bool ok = fwrite(t->s, 1, t->len, f) == t->len;
  if (fclose(f) != 0 || !ok)
    return tf_fail_code(err, TF_ERR_IO, "writing '%s' failed: %s", path, strerror(errno));
  chmod(path, 0755);
  return 0;
}

static int make_dirs(const char *path, tf_error *err) {
  char buf[PATH_MAX];
  if ((size_t)snprintf(buf, sizeof buf, "%s", path) >= sizeof buf)
    return tf_fail_code(err, TF_ERR_CONFIG, "path too long");
  for (char *c = buf + 1;; c++) {
    const char saved = *c;
    if (saved == '/' || saved == '\0') {
      *c = '\0';
      if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return tf_fail_code(err, TF_ERR_IO, "cannot create '%s': %s", buf, strerror(errno));
      *c = saved;
    }
    if (!saved) break;
  }
  return 0;
}

/* Runs sbatch with the arguments and reads the job id it prints (--parsable). */
static int sbatch(const char *const *argv, const char *script, char *id, size_t n, tf_error *err) {
  int fds[2];
  if (pipe(fds)) return tf_fail(err, "pipe: %s", strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) return tf_fail(err, "fork: %s", strerror(errno));
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]), close(fds[1]);
    /* sbatch exports its environment to the job: give it the user's, not the one MPI_Init
     * added (PMIX_*, OMPI_MCA_ess=singleton... make mpiexec in the job fail). */
    if (saved_environment) environ = saved_environment;
    execvp("sbatch", (char *const *)argv);
    fprintf(stderr, "cannot run sbatch: %s (is SLURM installed?)\n", strerror(errno));
    _exit(127); /* the forked child only: the parent reads its status */
  }
  close(fds[1]);
  size_t len = 0;
  ssize_t got;
  while (len + 1 < n && (got = read(fds[0], id + len, n - 1 - len)) > 0) len += (size_t)got;
  id[len] = '\0';
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  id[strcspn(id, ";\n")] = '\0'; /* "id;cluster" */
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !id[0])
    return tf_fail(err, "sbatch %s failed (its message is above)", script);
  return 0;
}

/* `prefix/path` (or `path` for an empty prefix) without a final ".h5"; nonzero if too long. */
static int without_h5(const char *path, const char *prefix, char *out, size_t n) {
  if ((size_t)snprintf(out, n, "%s%s%s", prefix, *prefix ? "/" : "", path) >= n) return -1;
  const size_t len = strlen(out);
  if (len > 3 && strcmp(out + len - 3, ".h5") == 0) out[len - 3] = '\0';
  return 0;
}

static int plan_paths(plan *p, tf_error *err) {
  const ssize_t n = readlink("/proc/self/exe", p->exe, sizeof p->exe - 1);
  if (n <= 0) return tf_fail(err, "cannot find the twofold executable");
  p->exe[n] = '\0';
  if (!realpath(p->job->config, p->config))
    return tf_fail_code(err, TF_ERR_INPUT_FILE, "'%s': %s", p->job->config, strerror(errno));
  if (!getcwd(p->cwd, sizeof p->cwd)) return tf_fail(err, "cannot read the current directory");
  const char *base = strrchr(p->config, '/');
  if ((size_t)snprintf(p->stem, sizeof p->stem, "%s", base ? base + 1 : p->config) >=
      sizeof p->stem)
    return tf_fail_code(err, TF_ERR_CONFIG, "config file name too long");
  char *dot = strrchr(p->stem, '.');
  if (dot && dot != p->stem) *dot = '\0';
  snprintf(p->name, sizeof p->name, "tf-%s", p->stem);
  char dir[PATH_MAX];
  if (p->o->dir)
    snprintf(dir, sizeof dir, "%s", p->o->dir);
  else
    snprintf(dir, sizeof dir, "slurm-%s", p->stem);
  if (dir[0] == '/')
    snprintf(p->dir, sizeof p->dir, "%s", dir);
  else if ((size_t)snprintf(p->dir, sizeof p->dir, "%s/%s", p->cwd, dir) >= sizeof p->dir)
    return tf_fail_code(err, TF_ERR_CONFIG, "path too long");
  /* Part files next to the output: OUT.h5 -> OUT.parts/; logs too, OUT.logs/ (absolute:
   * sbatch opens the log before the script runs, and the logs belong with the data) */
  char out[PATH_MAX];
  if (without_h5(p->job->output, "", out, sizeof out) ||
      (size_t)snprintf(p->parts_dir, sizeof p->parts_dir, "%s.parts", out) >= sizeof p->parts_dir)
    return tf_fail_code(err, TF_ERR_CONFIG, "path too long");
  if (without_h5(p->job->output, p->job->output[0] == '/' ? "" : p->cwd, out, sizeof out) ||
      (size_t)snprintf(p->logs_dir, sizeof p->logs_dir, "%s.logs", out) >= sizeof p->logs_dir)
    return tf_fail_code(err, TF_ERR_CONFIG, "path too long");
  return 0;
}

/* Every value that reaches a script must stay one word there (bad input: refused up front). */
static int validate_plan(const plan *p, tf_error *err) {
  const struct {
    const char *what, *value;
    bool directive;
  } words[] = {{"the config file's name", p->stem, true},
               {"the working directory", p->cwd, true},
               {"the script directory (--dir)", p->dir, true},
               {"the log directory (next to the output)", p->logs_dir, true},
               {"the config file", p->config, false},
               {"the output file", p->job->output, false}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (!(words[i].directive ? directive_word(words[i].value) : safe_word(words[i].value)))
      return tf_fail_code(
          err, TF_ERR_CONFIG, "%s '%s' cannot go into a batch script: %s are not allowed there",
          words[i].what, words[i].value,
          words[i].directive ? "white space, '%', single quotes and control characters"
                             : "single quotes and control characters");
  const char *const directives[] = {p->o->time, p->o->partition, p->o->account, p->o->qos,
                                    p->o->mem};
  for (size_t i = 0; i < sizeof directives / sizeof directives[0]; i++)
    if (directives[i] && !directive_word(directives[i]))
      return tf_fail_code(
          err, TF_ERR_CONFIG,
          "'%s' cannot go on an #SBATCH line (white space, '%%' or control characters)",
          directives[i]);
  return 0;
}

int tf_slurm_check(const tf_slurm_options *o, const tf_slurm_job *job, tf_error *err) {
  if (o->time && slurm_seconds(o->time) <= o->signal_lead)
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "--time %s is not longer than --signal-lead %d s: the job would be asked to "
        "checkpoint as soon as it starts",
        o->time, o->signal_lead);
  if (o->array > 0 && !job->splittable)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "--array: job '%s' is one computation and cannot be split; "
                        "submit it as one job (without --array)",
                        job->job);
  plan p = {.o = o, .job = job};
  return plan_paths(&p, err) || validate_plan(&p, err) ? -1 : 0;
}

/* --dry-run: the scripts and the commands that would submit them; nothing is written. */
static void print_dry_run(const plan *p, const char *main_path, const text *main_script,
                          const char *merge_path, const text *merge) {
  printf("# ---- %s\n%s", main_path, main_script->s);
  if (p->o->array > 0) printf("# ---- %s\n%s", merge_path, merge->s);
  printf(
      "# ---- dry run: nothing written or submitted; without --dry-run the scripts above are\n"
      "# written to %s/ and submitted as:\n#   mkdir -p %s\n",
      p->dir, p->logs_dir);
  if (p->o->array > 0)
    printf("#   id=$(sbatch --parsable %s)\n#   sbatch --dependency=after%s:$id %s\n", main_path,
           p->o->merge_after, merge_path);
  else
    printf("#   sbatch %s\n", main_path);
}

/* Submits the written scripts (the merge after the array) and prints the job ids. */
static int submit(const plan *p, const char *main_path, const char *merge_path, tf_error *err) {
  const tf_slurm_options *o = p->o;
  char id[128], merge_id[128], dep[200];
  const char *argv[] = {"sbatch", "--parsable", main_path, NULL};
  if (sbatch(argv, main_path, id, sizeof id, err)) return -1;
  if (o->array == 0) {
    printf("submitted job %s -> %s\nlogs: %s/\n", id, p->job->output, p->logs_dir);
    return 0;
  }
  snprintf(dep, sizeof dep, "--dependency=after%s:%s", o->merge_after, id);
  const char *margv[] = {"sbatch", "--parsable", dep, merge_path, NULL};
  if (sbatch(margv, merge_path, merge_id, sizeof merge_id, err)) {
    fprintf(stderr,
            "the array job %s is queued but its merge is not; submit it "
            "with: sbatch %s %s (or cancel: scancel %s)\n",
            id, dep, merge_path, id);
    return -1;
  }
  printf("submitted array job %s (%d tasks) and merge job %s -> %s\n", id, o->array, merge_id,
         p->job->output);
  printf("logs: %s/\n", p->logs_dir);
  return 0;
}

int tf_slurm_run(const tf_slurm_options *o, const tf_slurm_job *job, tf_error *err) {
  if (tf_slurm_check(o, job, err)) return -1;
  plan p = {.o = o, .job = job};
  if (plan_paths(&p, err)) return -1;
  text main_script = {0}, merge = {0};
  char main_path[PATH_MAX + 320], merge_path[PATH_MAX + 320];
  if (o->array > 0) {
    array_script(&main_script, &p);
    merge_script(&merge, &p);
    snprintf(main_path, sizeof main_path, "%s/%s.array.sbatch", p.dir, p.stem);
    snprintf(merge_path, sizeof merge_path, "%s/%s.merge.sbatch", p.dir, p.stem);
  } else {
    single_script(&main_script, &p);
    snprintf(main_path, sizeof main_path, "%s/%s.sbatch", p.dir, p.stem);
  }
  int rc = main_script.oom || merge.oom ? tf_fail(err, "out of memory") : 0;
  if (!rc && o->dry_run) {
    print_dry_run(&p, main_path, &main_script, merge_path, &merge);
  } else if (!rc) {
    rc = make_dirs(p.dir, err) || make_dirs(p.logs_dir, err) ||
                 write_file(main_path, &main_script, err) ||
                 (o->array > 0 && write_file(merge_path, &merge, err)) ||
                 submit(&p, main_path, merge_path, err)
             ? -1
             : 0;
  }
  free(main_script.s);
  free(merge.s);
  return rc;
}

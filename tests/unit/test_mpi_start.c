/* test_mpi_start.c — a process no launcher started gets the isolated-singleton settings, a
 * user's own OMPI_MCA_ settings stay, and a launched process is left alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "mpi_start.h"

static const char *const launch_marks[] = {
    "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_FD", "OMPI_MCA_orte_hnp_uri", NULL};
static const char *const settings[] = {"OMPI_MCA_ess_singleton_isolated",
                                       "OMPI_MCA_pml",
                                       "OMPI_MCA_btl",
                                       "OMPI_MCA_mtl",
                                       "OMPI_MCA_osc",
                                       "OMPI_MCA_coll",
                                       "OMPI_MCA_io",
                                       "OMPI_MCA_fcoll",
                                       "OMPI_MCA_sharedfp",
                                       "HWLOC_PLUGINS_BLACKLIST",
                                       "HWLOC_COMPONENTS",
                                       NULL};

static void clean(void) {
  for (int i = 0; launch_marks[i]; i++) unsetenv(launch_marks[i]);
  for (int i = 0; settings[i]; i++) unsetenv(settings[i]);
  unsetenv("TWOFOLD_MPI_FULL_SINGLETON");
}

static bool exists(const char *dir, const char *name) {
  char path[4096];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return stat(path, &st) == 0;
}

/* The base of a run that was killed is removed by the next run; a live run's stays. */
static void stale_bases(void) {
  char tmp[] = "/tmp/test_mpi_start.XXXXXX";
  CHECK(mkdtemp(tmp) != NULL, "temporary directory");
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, NULL, 0); /* its pid is now free: the run that "was killed" */
  char dead[64], alive[64], path[4096];
  snprintf(dead, sizeof dead, "twofold-mpi.%ld.abcdef", (long)child);
  snprintf(alive, sizeof alive, "twofold-mpi.%ld.ghijkl", (long)getppid());
  const char *other = "twofold-mpi.unrelated";
  const char *names[] = {dead, alive, other};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", tmp, names[i]);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/%s/jf.0", tmp, names[i]);
    mkdir(path, 0700);
  }
  clean();
  setenv("TMPDIR", tmp, 1);
  unsetenv("OMPI_MCA_orte_tmpdir_base");
  tf_mpi_singleton_defaults();
  CHECK(!exists(tmp, dead), "the base of a dead run (%s) removed", dead);
  CHECK(exists(tmp, alive), "the base of a live run (%s) kept", alive);
  CHECK(exists(tmp, other), "a directory not named by twofold kept");
  const char *base = getenv("OMPI_MCA_orte_tmpdir_base");
  char mine[64];
  snprintf(mine, sizeof mine, "/twofold-mpi.%ld.", (long)getpid());
  CHECK(base && strstr(base, mine), "own base names this process: %s", base ? base : "(unset)");
  tf_mpi_singleton_cleanup();
  unsetenv("TMPDIR");
  unsetenv("OMPI_MCA_orte_tmpdir_base");
  snprintf(path, sizeof path, "rm -rf '%s'", tmp);
  CHECK(system(path) == 0, "remove %s", tmp);
}

int main(void) {
  stale_bases();
  clean();
  CHECK(!tf_mpi_launched(), "no launcher variable set");
  tf_mpi_singleton_defaults();
  const char *iso = getenv("OMPI_MCA_ess_singleton_isolated"), *btl = getenv("OMPI_MCA_btl");
  CHECK(iso && strcmp(iso, "1") == 0, "isolated singleton: %s", iso ? iso : "(unset)");
  CHECK(btl && strcmp(btl, "self") == 0, "btl self: %s", btl ? btl : "(unset)");
  for (int i = 0; settings[i]; i++) CHECK(getenv(settings[i]), "%s set", settings[i]);
  /* a session base of its own (isolated singletons share job family 0), removed afterwards */
  const char *base = getenv("OMPI_MCA_orte_tmpdir_base");
  struct stat st;
  CHECK(base && strstr(base, "/twofold-mpi.") && stat(base, &st) == 0 && S_ISDIR(st.st_mode),
        "own session base: %s", base ? base : "(unset)");
  char copy[4096];
  snprintf(copy, sizeof copy, "%s/jf.0", base ? base : "/nonexistent");
  mkdir(copy, 0700); /* what Open MPI leaves there */
  snprintf(copy, sizeof copy, "%s", base ? base : "/nonexistent");
  tf_mpi_singleton_cleanup();
  CHECK(stat(copy, &st) != 0, "session base %s removed after the run", copy);

  clean(); /* the user's choice wins */
  setenv("OMPI_MCA_btl", "self,vader", 1);
  tf_mpi_singleton_defaults();
  CHECK(strcmp(getenv("OMPI_MCA_btl"), "self,vader") == 0, "user's btl kept: %s",
        getenv("OMPI_MCA_btl"));

  for (int i = 0; launch_marks[i]; i++) { /* launched: nothing set */
    clean();
    setenv(launch_marks[i], "0", 1);
    CHECK(tf_mpi_launched(), "%s marks a launched process", launch_marks[i]);
    tf_mpi_singleton_defaults();
    for (int j = 0; settings[j]; j++)
      CHECK(!getenv(settings[j]), "%s set under %s", settings[j], launch_marks[i]);
  }
  clean(); /* the escape hatch */
  setenv("TWOFOLD_MPI_FULL_SINGLETON", "1", 1);
  tf_mpi_singleton_defaults();
  CHECK(!getenv("OMPI_MCA_pml"), "TWOFOLD_MPI_FULL_SINGLETON keeps Open MPI's defaults");
  return check_report("test_mpi_start");
}

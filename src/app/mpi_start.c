/* mpi_start.c — Open MPI singleton defaults (see mpi_start.h). */
#include "mpi_start.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char session_base[4096]; /* made by this process, or empty */

bool tf_mpi_launched(void) {
  static const char *const marks[] = {"OMPI_COMM_WORLD_SIZE",  "PMIX_RANK", "PMI_RANK", "PMI_FD",
                                      "OMPI_MCA_orte_hnp_uri", NULL};
  for (int i = 0; marks[i]; i++)
    if (getenv(marks[i])) return true;
  return false;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

/* A run killed before MPI_Finalize (SIGKILL, a crash) leaves its session base behind; the
 * next run removes those of ours whose process is gone.  The base's name carries the pid. */
static void remove_stale_bases(const char *tmp) {
  DIR *dir = opendir(tmp);
  if (!dir) return;
  struct dirent *e;
  while ((e = readdir(dir))) {
    long pid = 0;
    char rest[8], path[4096];
    struct stat st;
    if (sscanf(e->d_name, "twofold-mpi.%ld.%7s", &pid, rest) != 2 || pid <= 0 ||
        strlen(rest) != 6 || pid == (long)getpid())
      continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
    snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid())
      nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  }
  closedir(dir);
}

void tf_mpi_singleton_defaults(void) {
  if (tf_mpi_launched() || getenv("TWOFOLD_MPI_FULL_SINGLETON")) return;
  /* overwrite = 0: a user's own choice stays */
  setenv("OMPI_MCA_ess_singleton_isolated", "1", 0); /* no daemon forked */
  setenv("OMPI_MCA_pml", "ob1", 0);                  /* not UCX */
  setenv("OMPI_MCA_btl", "self", 0);                 /* one process */
  setenv("OMPI_MCA_mtl", "^ofi,psm,psm2", 0);
  setenv("OMPI_MCA_osc", "^ucx", 0);
  /* Of the components Open MPI would open, try and close again, only those it selects for
   * one process: fewer libraries mapped and unmapped, the same modules in use. */
  setenv("OMPI_MCA_coll", "self,basic,libnbc", 0);
  setenv("OMPI_MCA_io", "ompio", 0);
  setenv("OMPI_MCA_fcoll", "individual", 0);
  setenv("OMPI_MCA_sharedfp", "sm", 0);
  /* hwloc finds PCI devices, GPUs and displays, which one process using only the self
   * transport never asks about: the plugins' loading (libxml2, ICU, X11, OpenCL) and the
   * PCI scan in sysfs cost more than the rest of the topology ("-linuxio" keeps the Linux
   * component to its CPU and memory phases). */
  setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml", 0);
  setenv("HWLOC_COMPONENTS", "-linuxio", 0);
  if (getenv("OMPI_MCA_orte_tmpdir_base")) return;
  const char *tmp = getenv("TMPDIR");
  tmp = tmp && *tmp ? tmp : "/tmp";
  remove_stale_bases(tmp);
  snprintf(session_base, sizeof session_base, "%s/twofold-mpi.%ld.XXXXXX", tmp, (long)getpid());
  if (mkdtemp(session_base))
    setenv("OMPI_MCA_orte_tmpdir_base", session_base, 1);
  else
    session_base[0] = '\0'; /* Open MPI's own base then */
}

void tf_mpi_singleton_cleanup(void) {
  if (!session_base[0]) return;
  nftw(session_base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  session_base[0] = '\0';
}

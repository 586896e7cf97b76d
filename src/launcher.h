/* launcher.h — `twofold mpirun`: mpiexec with the signals of a single process.
 *
 * On one process, Ctrl-C and SIGTERM make twofold checkpoint and exit 3.  Under Open MPI's
 * mpiexec they do not: mpiexec answers SIGINT and SIGTERM by killing the job and exits 1
 * (the ranks' checkpoint may or may not finish first), and the status says nothing.  Open MPI
 * does forward SIGUSR1 to the ranks, which twofold takes as the same stop request.  So the
 * launcher runs mpiexec in a process group of its own (the terminal's Ctrl-C reaches only
 * the launcher), turns the first SIGINT, SIGTERM or SIGHUP into SIGUSR1 for mpiexec, and
 * exits with mpiexec's status: 3 after a checkpoint, as documented.  A second request kills
 * the job at once.  It also lets Open MPI start as root and with more ranks than cores
 * (OMPI_ALLOW_RUN_AS_ROOT, OMPI_MCA_rmaps_base_oversubscribe, unless already set), so the
 * documented commands run verbatim in a root container and on a 2-core machine. */
#ifndef TF_LAUNCHER_H
#define TF_LAUNCHER_H

/* `twofold mpirun [MPIEXEC OPTIONS] -- COMMAND [ARGS]`: argv as given to main. */
int tf_launcher_main(int argc, char **argv);

#endif

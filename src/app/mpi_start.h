/* mpi_start.h — a one-process run that no launcher started pays only for what it uses.
 *
 * Started without mpiexec or srun, Open MPI becomes a singleton: by default it forks a
 * daemon to act as its launcher and initialises every transport it finds (UCX and OFI probe
 * the network hardware), 0.3–0.4 s of a trivial run's 0.4 s here, although one process
 * talks to nobody.  Before MPI_Init, such a run asks for an isolated singleton with only the
 * self transport, only the collective and MPI-IO components Open MPI selects for one
 * process, and no hwloc discovery of PCI devices, GPUs or displays.  Settings the user made
 * (environment or MCA files' OMPI_MCA_ variables) win; launched runs are untouched.
 *
 * Isolated singletons all get job family 0, so concurrent ones would share (and remove
 * under each other) Open MPI's session directory /tmp/ompi.HOST.UID/jf.0: each run gets a
 * session base of its own, ${TMPDIR:-/tmp}/twofold-mpi.PID.XXXXXX (mkdtemp), removed after
 * MPI_Finalize; bases of runs that were killed (their PID gone) are removed by the next run. */
#ifndef TF_MPI_START_H
#define TF_MPI_START_H

#include <stdbool.h>

/* True if a launcher (mpiexec/mpirun, srun with PMI or PMIx) started this process. */
bool tf_mpi_launched(void);

/* Sets the singleton defaults (see above) unless launched; call before MPI_Init. */
void tf_mpi_singleton_defaults(void);

/* Removes the run's own session base, if it made one; call after MPI_Finalize. */
void tf_mpi_singleton_cleanup(void);

#endif

/* launcher.c — see launcher.h. */
#define _GNU_SOURCE /* setpgid, kill */
#include "launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

static volatile sig_atomic_t requests;

static void on_request(int sig) {
  (void)sig;
  requests++;
}

static void usage(void) {
  fprintf(stderr,
          "twofold: error: usage: twofold mpirun [MPIEXEC OPTIONS] -- COMMAND [ARGS]\n"
          "  e.g. twofold mpirun -n 4 -- run configs/wheel-fig5.yaml -o fig5.h5\n"
          "  runs 'mpiexec [MPIEXEC OPTIONS] twofold COMMAND [ARGS]' ($MPIEXEC, else mpiexec);\n"
          "  Ctrl-C or SIGTERM checkpoint the ranks and exit 3, as on one process\n");
}

/* The child: its own process group, so that the terminal's Ctrl-C reaches the launcher only
 * (Open MPI's launcher kills the job on SIGINT); stdin from /dev/null when it is a terminal,
 * since a background process group reading the terminal would be stopped.  A forked child
 * whose exec failed has no caller to return to: it ends with _exit (the parent sees its
 * status), the launcher being the executable's own `twofold mpirun`. */
static void exec_child(char **argv) {
  setpgid(0, 0);
  if (isatty(STDIN_FILENO)) {
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO), close(null);
  }
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
  execvp(argv[0], argv);
  fprintf(stderr, "twofold: error: cannot run '%s': %s (set MPIEXEC)\n", argv[0], strerror(errno));
  _exit(TF_EXIT_USAGE);
}

/* Open MPI refuses to start as root, and refuses more ranks than cores, unless told; a user
 * who typed `twofold mpirun -n 4` on a 2-core machine, or as root in a container, asked for
 * exactly that, so the launcher tells it (the environment's own settings win). */
static void allow_what_was_asked(void) {
  if (geteuid() == 0) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
}

int tf_launcher_main(int argc, char **argv) {
  int dashes = -1;
  for (int i = 2; i < argc && dashes < 0; i++)
    if (strcmp(argv[i], "--") == 0) dashes = i;
  if (dashes < 0 || dashes + 1 >= argc) return usage(), TF_EXIT_USAGE;
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0)
    return fprintf(stderr, "twofold: error: cannot find this executable\n"), TF_EXIT_ERROR;
  self[len] = '\0';
  const char *mpiexec = getenv("MPIEXEC") && *getenv("MPIEXEC") ? getenv("MPIEXEC") : "mpiexec";
  /* mpiexec OPTIONS twofold ARGS */
  char **child = calloc((size_t)argc + 2, sizeof *child);
  if (!child) return TF_EXIT_ERROR;
  size_t n = 0;
  child[n++] = (char *)mpiexec;
  for (int i = 2; i < dashes; i++) child[n++] = argv[i];
  child[n++] = self;
  for (int i = dashes + 1; i < argc; i++) child[n++] = argv[i];
  child[n] = NULL;

  struct sigaction sa = {0};
  sa.sa_handler = on_request;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  fflush(NULL);
  allow_what_was_asked();
  const pid_t pid = fork();
  if (pid < 0) return free(child), perror("twofold: fork"), TF_EXIT_ERROR;
  if (pid == 0) exec_child(child);
  free(child);
  setpgid(pid, pid); /* also here: no window in which a signal reaches the old group */
  int status = 0, forwarded = 0;
  for (;;) {
    const pid_t got = waitpid(pid, &status, 0);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) return perror("twofold: waitpid"), TF_EXIT_ERROR;
    /* the first request asks the ranks to checkpoint (mpiexec forwards SIGUSR1 to them);
     * a second one stops the job at once */
    for (; forwarded < requests; forwarded++) {
      if (forwarded == 0) {
        fprintf(stderr,
                "twofold: interrupted: the ranks checkpoint and stop (a second Ctrl-C stops the "
                "job at once, unsaved)\n");
        kill(pid, SIGUSR1);
      } else {
        kill(-pid, SIGKILL);
      }
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

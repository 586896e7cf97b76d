/* twofold.c — the library entry point (include/twofold/twofold.h): a config run from another
 * MPI program through the same code path as `twofold run` (cli.c), so the two cannot drift
 * apart.  Here only what the CLI gets for free is checked: MPI is up and comm is usable.  The
 * run gets its own duplicate of comm, so its messages never match the caller's. */
#include "twofold/twofold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error.h"

/* the public statuses are the executable's exit codes */
_Static_assert((int)TWOFOLD_MEMBERS_FAILED == (int)TF_EXIT_MEMBERS_FAILED &&
                   (int)TWOFOLD_INTERRUPTED == (int)TF_EXIT_INTERRUPTED &&
                   (int)TWOFOLD_MODEL == (int)TF_EXIT_MODEL && (int)TWOFOLD_IO == (int)TF_EXIT_IO &&
                   (int)TWOFOLD_INTERNAL == (int)TF_EXIT_INTERNAL,
               "twofold.h and error.h disagree on exit statuses");

const char *twofold_version(void) {
  return TWOFOLD_VERSION_STRING;
}

static int give_back(int rc, const tf_error *err, char *errbuf, size_t errlen) {
  if (errbuf && errlen) snprintf(errbuf, errlen, "%s", rc == TWOFOLD_OK ? "" : err->msg);
  return rc;
}

int twofold_run_args(MPI_Comm comm, int argc, const char *const *argv, char *errbuf,
                     size_t errlen) {
  tf_error err = {0};
  int up = 0, down = 0, inter = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (!up || down) {
    tf_fail_code(&err, TF_ERR_CONFIG,
                 "twofold_run: MPI is %s: call it between MPI_Init and MPI_Finalize",
                 down ? "finalized" : "not initialised");
    return give_back(TWOFOLD_USAGE, &err, errbuf, errlen);
  }
  if (comm == MPI_COMM_NULL) {
    tf_fail_code(&err, TF_ERR_CONFIG, "twofold_run: the communicator is MPI_COMM_NULL");
    return give_back(TWOFOLD_USAGE, &err, errbuf, errlen);
  }
  MPI_Comm_test_inter(comm, &inter);
  if (inter) {
    tf_fail_code(&err, TF_ERR_CONFIG,
                 "twofold_run: an intercommunicator was given; twofold runs on an "
                 "intracommunicator");
    return give_back(TWOFOLD_USAGE, &err, errbuf, errlen);
  }
  if (argc < 0 || (argc > 0 && !argv)) {
    tf_fail_code(&err, TF_ERR_CONFIG, "twofold_run: argc = %d with argv %s", argc,
                 argv ? "given" : "NULL");
    return give_back(TWOFOLD_USAGE, &err, errbuf, errlen);
  }
  /* the command line parser wants {"twofold", "run", args..., NULL}, writable */
  char **line = calloc((size_t)argc + 3, sizeof *line);
  if (!line) {
    tf_fail(&err, "twofold_run: out of memory");
    return give_back(TWOFOLD_ERROR, &err, errbuf, errlen);
  }
  line[0] = "twofold";
  line[1] = "run";
  for (int i = 0; i < argc; i++) {
    if (!argv[i]) {
      free(line);
      tf_fail_code(&err, TF_ERR_CONFIG, "twofold_run: argv[%d] is NULL", i);
      return give_back(TWOFOLD_USAGE, &err, errbuf, errlen);
    }
    line[i + 2] = (char *)argv[i];
  }
  MPI_Comm own;
  MPI_Comm_dup(comm, &own);
  const int rc = tf_cli_run_embedded(own, argc + 2, line, &err);
  MPI_Comm_free(&own);
  free(line);
  return give_back(rc, &err, errbuf, errlen);
}

int twofold_run_config(MPI_Comm comm, const char *config_path, const char *output_path,
                       const char *const *overrides, char *errbuf, size_t errlen) {
  if (!config_path) {
    tf_error err;
    tf_fail_code(&err, TF_ERR_CONFIG, "twofold_run_config: config_path is NULL");
    return give_back(TWOFOLD_USAGE, &err, errbuf, errlen);
  }
  size_t n = 0;
  while (overrides && overrides[n]) n++;
  const char **args = calloc(2 * n + 5, sizeof *args);
  if (!args) {
    tf_error err;
    tf_fail(&err, "twofold_run_config: out of memory");
    return give_back(TWOFOLD_ERROR, &err, errbuf, errlen);
  }
  int argc = 0;
  args[argc++] = config_path;
  if (output_path) {
    args[argc++] = "-o";
    args[argc++] = output_path;
  }
  for (size_t i = 0; i < n; i++) {
    args[argc++] = "--set";
    args[argc++] = overrides[i];
  }
  args[argc++] = "--quiet";
  const int rc = twofold_run_args(comm, argc, args, errbuf, errlen);
  free(args);
  return rc;
}

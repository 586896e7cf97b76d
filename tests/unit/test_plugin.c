/* test_plugin.c — plugin.c without MPI: the cache of compiled sources and the per-process
 * memory of loads.
 *
 * Code generated from equations is written to one path again and again; a process asked for
 * it again must compile the new text, not return the model it loaded before, and asking
 * for unchanged text must neither compile nor load anything new. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "decay_source.h"
#include "plugin.h"

static void write_model(const char *path, double rate) {
  write_decay_source(path, "generated", rate);
}

/* The compiled objects in dir (each has its manifest beside it). */
static int files_in(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    const size_t len = strlen(e->d_name);
    n += e->d_name[0] != '.' && len > 3 && strcmp(e->d_name + len - 3, ".so") == 0;
  }
  if (d) closedir(d);
  return n;
}

int main(void) {
  char dir[] = "/tmp/twofold-test-plugin-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char cache[256], src[256];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  snprintf(src, sizeof src, "%s/generated.c", dir);
  setenv("TWOFOLD_CACHE", cache, 1);

  tf_error err;
  const tf_kernel *a = NULL, *b = NULL, *c = NULL;
  write_model(src, 1.5);
  CHECK(tf_plugin_open_source(src, NULL, MPI_COMM_SELF, &a, &err) == 0 && a, "first source: %s",
        err.msg);
  CHECK(a && a->params[0].def == 1.5, "the first text's default");
  CHECK(tf_plugin_open_source(src, "generated", MPI_COMM_SELF, &b, &err) == 0 && b, "by name: %s",
        err.msg);
  CHECK(tf_plugin_open_source(src, NULL, MPI_COMM_SELF, &c, &err) == 0 && c == a,
        "unchanged text asked again: the same kernel");
  CHECK(files_in(cache) == 1, "one library in the cache, got %d", files_in(cache));
  CHECK(tf_plugin_origin(a) && strstr(tf_plugin_origin(a), "generated.c"), "origin names the file");
  CHECK(tf_plugin_digest(a) && strstr(tf_plugin_digest(a), "source compiled as generated-"),
        "digest names the cache entry: %s", tf_plugin_digest(a) ? tf_plugin_digest(a) : "NULL");

  write_model(src, 22.25); /* other text (and size) at the same path */
  CHECK(tf_plugin_open_source(src, NULL, MPI_COMM_SELF, &b, &err) == 0 && b && b != a,
        "rewritten: %s", err.msg);
  CHECK(b && b->params[0].def == 22.25, "the rewritten text's default");
  CHECK(a->params[0].def == 1.5, "the first model is still loaded and unchanged");
  CHECK(files_in(cache) == 2, "two libraries in the cache, got %d", files_in(cache));
  CHECK(strcmp(tf_plugin_digest(a), tf_plugin_digest(b)) != 0, "different code, different digest");

  CHECK(tf_plugin_open_source(dir, NULL, MPI_COMM_SELF, &c, &err) != 0 &&
            strstr(err.msg, "is a directory"),
        "a directory: %s", err.msg);
  snprintf(src, sizeof src, "%s/missing.c", dir);
  CHECK(tf_plugin_open_source(src, NULL, MPI_COMM_SELF, &c, &err) != 0 &&
            strstr(err.msg, "missing.c"),
        "a missing file: %s", err.msg);

  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return check_report("test_plugin");
}

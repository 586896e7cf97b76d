/* test_code_cache.c — compiled model code is loaded only from a cache of the user's own.
 *
 * Each case plants what another local user could: an object under the name the next compile
 * will look for (without a manifest, with a manifest that matches it, with one that does not),
 * a link instead of the object, a cache directory writable by others, one owned by someone
 * else, a link as the cache.  The planted object carries a constructor that writes a marker
 * file: the one thing that must never happen is that marker appearing. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "code_cache.h"
#include "decay_source.h"
#include "plugin.h"
#include "plugin_build.h"

static char dir[] = "/tmp/twofold-test-cache-XXXXXX";
static char marker[300], cache[300];

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static void write_model(const char *path, double rate) {
  write_decay_source(path, "own", rate);
}

/* A library that does what a planted object would: run code as soon as it is loaded. */
static int build_planted(const char *out) {
  char src[400], cmd[2048];
  snprintf(src, sizeof src, "%s/planted.c", dir);
  FILE *f = fopen(src, "w");
  if (!f) return -1;
  fprintf(f,
          "#include <stdio.h>\n"
          "__attribute__((constructor)) static void planted(void) {\n"
          "  FILE *f = fopen(\"%s\", \"w\"); if (f) fclose(f);\n}\n"
          "const int twofold_model_abi = -1;\n",
          marker);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s -shared -fPIC -o '%s' '%s'", TF_PLUGIN_CC, out, src);
  return system(cmd);
}

static bool planted_ran(void) {
  return access(marker, F_OK) == 0;
}

/* The cache object the next load of src looks for (the one it loaded last). */
static void object_of(const tf_kernel *k, char *so, size_t n) {
  const char *d = tf_plugin_digest(k), *name = d ? strrchr(d, ' ') + 1 : "";
  snprintf(so, n, "%s/%s", cache, name);
}

/* A process of its own, as the next run would be (a process remembers what it loaded):
 * exit 0 when it loaded the model with the given rate, else its message in err. */
static int load_in_new_process(const char *src, double rate, tf_error *err) {
  char cmd[1024], out[300];
  snprintf(out, sizeof out, "%s/child.out", dir);
  snprintf(cmd, sizeof cmd, "/proc/%ld/exe --load '%s' %.17g >'%s' 2>&1", (long)getpid(), src, rate,
           out);
  const int rc = system(cmd);
  FILE *f = fopen(out, "r");
  err->msg[0] = '\0';
  if (f) {
    if (!fgets(err->msg, sizeof err->msg, f)) err->msg[0] = '\0';
    fclose(f);
  }
  return rc;
}

static int child_load(const char *src, double rate) {
  tf_error err;
  const tf_kernel *k = NULL;
  if (tf_plugin_open_source(src, NULL, MPI_COMM_SELF, &k, &err)) return printf("%s\n", err.msg), 2;
  if (k->params[0].def != rate)
    return printf("loaded rate %g, not %g\n", k->params[0].def, rate), 3;
  return printf("ok\n"), 0;
}

static const tf_kernel *load_fresh(const char *src, double rate, tf_error *err) {
  write_model(src, rate);
  const tf_kernel *k = NULL;
  return tf_plugin_open_source(src, NULL, MPI_COMM_SELF, &k, err) == 0 ? k : NULL;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--load") == 0) return child_load(argv[2], atof(argv[3]));
  if (!mkdtemp(dir)) return 1;
  snprintf(marker, sizeof marker, "%s/PLANTED-CODE-RAN", dir);
  snprintf(cache, sizeof cache, "%s/cache", dir);
  setenv("TWOFOLD_CACHE", cache, 1);
  unsetenv("TWOFOLD_CACHE_SHARED");
  char src[400], so[700], planted[400], manifest[800], cmd[2048];
  snprintf(src, sizeof src, "%s/own.c", dir);
  snprintf(planted, sizeof planted, "%s/planted.so", dir);
  CHECK(build_planted(planted) == 0, "the planted library builds");
  tf_error err;

  /* a genuine compile: the object and its manifest, the directory private */
  const tf_kernel *k = load_fresh(src, 1.0, &err);
  CHECK(k, "own model: %s", err.msg);
  if (!k) return check_report("test_code_cache");
  object_of(k, so, sizeof so);
  snprintf(manifest, sizeof manifest, "%s.sha256", so);
  struct stat st;
  CHECK(stat(cache, &st) == 0 && (st.st_mode & 0077) == 0, "a new cache is private (mode %o)",
        (unsigned)(st.st_mode & 07777));
  CHECK(access(manifest, R_OK) == 0, "the compile wrote a manifest %s", manifest);

  /* planted object with no manifest of its own (the genuine manifest stays): recompiled */
  double rate = 2.0;
  for (int plant = 0; plant < 4; plant++, rate += 1.0) {
    write_model(src, rate); /* the name the next load will use */
    const tf_kernel *probe = NULL;
    CHECK(tf_plugin_open_source(src, NULL, MPI_COMM_SELF, &probe, &err) == 0, "probe: %s", err.msg);
    object_of(probe, so, sizeof so);
    snprintf(manifest, sizeof manifest, "%s.sha256", so);
    unlink(so);
    const char *what[] = {"no manifest", "a manifest of another object",
                          "a matching manifest, object writable by others", "a link"};
    if (plant == 3) {
      CHECK(symlink(planted, so) == 0, "plant a link");
    } else {
      snprintf(cmd, sizeof cmd, "cp '%s' '%s'", planted, so);
      CHECK(system(cmd) == 0, "plant");
    }
    if (plant == 0) unlink(manifest);
    if (plant == 2) {
      int fd = open(so, O_RDONLY);
      char hex[65] = "", line[80];
      CHECK(fd >= 0 && tf_sha256_fd(fd, hex) == 0, "hash the planted object");
      if (fd >= 0) close(fd);
      snprintf(line, sizeof line, "%s\n", hex);
      write_text(manifest, line);
      chmod(so, 0666);
    }
    /* the next run meets the planted file */
    struct stat ss;
    const int rc = load_in_new_process(src, rate, &err);
    CHECK(rc == 0, "%s: a new process loads our own model: %s", what[plant], err.msg);
    CHECK(!planted_ran(), "%s: the planted constructor never runs", what[plant]);
    CHECK(lstat(so, &ss) == 0 && S_ISREG(ss.st_mode) && (ss.st_mode & 022) == 0,
          "%s: the planted file was replaced by a fresh compile", what[plant]);
  }

  /* a cache writable by others is refused with the fix, and nothing is loaded from it */
  chmod(cache, 0777);
  const tf_kernel *bad = load_fresh(src, 10.0, &err);
  CHECK(!bad && strstr(err.msg, "may be written by others") && strstr(err.msg, "chmod go-w"),
        "world-writable cache: %s", err.msg);
  chmod(cache, 0770);
  bad = load_fresh(src, 11.0, &err);
  CHECK(!bad && strstr(err.msg, "may be written by others"), "group-writable cache: %s", err.msg);
  /* the documented opt-in: sticky and shared, objects per user */
  chmod(cache, 01777);
  setenv("TWOFOLD_CACHE_SHARED", "1", 1);
  const tf_kernel *sh = load_fresh(src, 12.0, &err);
  CHECK(sh && sh->params[0].def == 12.0, "shared sticky cache with the opt-in: %s", err.msg);
  char user_tag[32];
  snprintf(user_tag, sizeof user_tag, ".u%ld.so", (long)geteuid());
  snprintf(cmd, sizeof cmd, "ls '%s' | grep -q -- '%s$'", cache, user_tag);
  CHECK(system(cmd) == 0, "a shared cache names objects per user (%s)", user_tag);
  chmod(cache, 0777);
  bad = load_fresh(src, 13.0, &err);
  CHECK(!bad && strstr(err.msg, "sticky"), "shared without the sticky bit: %s", err.msg);
  unsetenv("TWOFOLD_CACHE_SHARED");
  chmod(cache, 0700);

  /* a link as the cache directory */
  char link[400];
  snprintf(link, sizeof link, "%s/link-cache", dir);
  CHECK(symlink(cache, link) == 0, "make a linked cache");
  setenv("TWOFOLD_CACHE", link, 1);
  bad = load_fresh(src, 14.0, &err);
  CHECK(!bad && strstr(err.msg, "symbolic link"), "linked cache: %s", err.msg);
  setenv("TWOFOLD_CACHE", cache, 1);

  /* a cache owned by someone else (only root can make one here) */
  if (geteuid() == 0) {
    CHECK(chown(cache, 65534, 65534) == 0, "give the cache away");
    bad = load_fresh(src, 15.0, &err);
    CHECK(!bad && strstr(err.msg, "belongs to another user"), "foreign cache: %s", err.msg);
    CHECK(chown(cache, 0, 0) == 0, "take it back");
    /* an object of someone else's, with a manifest that matches it */
    const tf_kernel *probe = load_fresh(src, 16.0, &err);
    CHECK(probe, "probe: %s", err.msg);
    if (probe) {
      object_of(probe, so, sizeof so);
      CHECK(chown(so, 65534, 65534) == 0, "give the object away");
      CHECK(load_in_new_process(src, 16.0, &err) == 0, "foreign object recompiled: %s", err.msg);
      CHECK(lstat(so, &st) == 0 && st.st_uid == 0, "the object is ours again");
    }
  } else {
    printf("test_code_cache: not root: the foreign-owner cases need chown and were not run\n");
  }
  CHECK(!planted_ran(), "the planted constructor never ran");

  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return check_report("test_code_cache");
}

/* plugin.c — see plugin.h. */
#define _GNU_SOURCE /* dladdr */
#include "plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "code_cache.h"
#include "model_def.h"
#include "plugin_build.h"

static const char *include_dir(void);

extern char **environ;

enum { MAX_MODELS_PER_LIBRARY = 1000 };

/* What the process has loaded or failed to load: a second request gives the same answer
 * without touching the file system (or, for sources, MPI) again. */
typedef struct loaded {
  char *key;
  const tf_kernel *kernel; /* NULL: failed with `error` */
  char *origin;
  char *digest; /* what --resume compares: the library's bytes, or the source's cache key */
  char *error;
  tf_error_code code; /* the failure's */
} loaded;
static loaded *memo;
static size_t nmemo;

static char *dup_key(char tag, const char *a, const char *b) {
  const size_t la = strlen(a), lb = b ? strlen(b) : 0;
  char *k = malloc(la + lb + 3);
  if (!k) return NULL;
  k[0] = tag;
  memcpy(k + 1, a, la);
  k[1 + la] = '\x1f';
  memcpy(k + 2 + la, b ? b : "", lb);
  k[2 + la + lb] = '\0';
  return k;
}

static const loaded *memo_find(const char *key) {
  for (size_t i = 0; i < nmemo; i++)
    if (strcmp(memo[i].key, key) == 0) return &memo[i];
  return NULL;
}

/* Takes ownership of key. */
static void memo_add(char *key, const tf_kernel *k, const char *origin, const char *digest,
                     const tf_error *err) {
  loaded *grown = realloc(memo, (nmemo + 1) * sizeof *memo);
  if (!grown || !key) return free(key); /* not remembered: the next request repeats the work */
  memo = grown;
  memo[nmemo++] = (loaded){key,
                           k,
                           origin ? strdup(origin) : NULL,
                           digest ? strdup(digest) : NULL,
                           k ? NULL : strdup(err ? err->msg : "failed"),
                           err ? tf_error_code_of(err) : TF_ERR_RUNTIME};
}

static int memo_answer(const loaded *m, const tf_kernel **k, tf_error *err) {
  *k = m->kernel;
  return m->kernel ? 0 : tf_fail_code(err, m->code, "%s", m->error ? m->error : "failed");
}

const char *tf_plugin_origin(const tf_kernel *k) {
  for (size_t i = 0; i < nmemo; i++)
    if (memo[i].kernel == k) return memo[i].origin;
  return NULL;
}

const char *tf_plugin_digest(const tf_kernel *k) {
  for (size_t i = 0; i < nmemo; i++)
    if (memo[i].kernel == k && memo[i].digest) return memo[i].digest;
  return NULL;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

static char *read_all(const char *path, size_t *n, const char *what, tf_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return tf_fail_code(err, TF_ERR_CONFIG, "%s '%s': %s", what, path, strerror(errno)), NULL;
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + len, 1, cap - len, f)) > 0;) {
    len += got;
    if (len == cap) {
      char *grown = realloc(buf, cap *= 2);
      if (!grown) free(buf);
      buf = grown;
    }
  }
  const bool bad = ferror(f);
  fclose(f);
  if (!buf || bad)
    return free(buf), tf_fail_code(err, TF_ERR_CONFIG, "%s '%s': cannot be read", what, path), NULL;
  *n = len;
  return buf;
}

/* A regular file, or an error saying what the path is instead. */
static int regular_file(const char *path, const char *what, tf_error *err) {
  struct stat st;
  if (stat(path, &st) != 0)
    return tf_fail_code(err, TF_ERR_CONFIG, "%s '%s': %s", what, path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return tf_fail_code(err, TF_ERR_CONFIG, "%s '%s' is a directory, not a file", what, path);
  if (!S_ISREG(st.st_mode))
    return tf_fail_code(err, TF_ERR_CONFIG, "%s '%s' is not a regular file", what, path);
  if (access(path, R_OK) != 0)
    return tf_fail_code(err, TF_ERR_CONFIG, "%s '%s': %s", what, path, strerror(errno));
  return 0;
}

/* The definitions a library exports, after the ABI check. */
static int library_defs(const char *path, int fd, const char *origin,
                        const tf_model_def *const **list, size_t *n, tf_error *err) {
  if (fd < 0 && regular_file(path, "model library", err)) return -1;
  char local[PATH_MAX + 3];
  /* without a slash dlopen would search the library path instead of opening this file; a
   * verified cache object is loaded through the descriptor that was verified, not its name */
  if (fd >= 0)
    snprintf(local, sizeof local, "/proc/self/fd/%d", fd);
  else
    snprintf(local, sizeof local, "%s%s", strchr(path, '/') ? "" : "./", path);
  dlerror();
  void *h = dlopen(local, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    return tf_fail_code(err, TF_ERR_MODEL, "%s: cannot be loaded: %s", origin,
                        why ? why : "dlopen failed");
  }
  const int *abi = dlsym(h, "twofold_model_abi");
  if (!abi)
    return tf_fail_code(
        err, TF_ERR_MODEL,
        "%s: does not export 'twofold_model_abi', so it is not a twofold model plugin "
        "(list its models with TWOFOLD_MODELS(...) from include/twofold/model.h)",
        origin);
  if (*abi != TWOFOLD_MODEL_ABI)
    return tf_fail_code(
        err, TF_ERR_MODEL,
        "%s: built for model ABI %d, but this twofold loads model ABI %d (the tables "
        "now begin with a size, and field callbacks return int: see "
        "docs/YOUR_MODEL.md); rebuild it from its source with 'twofold model build "
        "SOURCE.c -o LIBRARY.so', or recompile it against %s/twofold/model.h",
        origin, *abi, TWOFOLD_MODEL_ABI, include_dir());
  const tf_model_def *const *l = dlsym(h, "twofold_model_list");
  if (!l)
    return tf_fail_code(err, TF_ERR_MODEL,
                        "%s: exports 'twofold_model_abi' but not 'twofold_model_list' (declare the "
                        "models with TWOFOLD_MODELS(...))",
                        origin);
  size_t count = 0;
  while (count < MAX_MODELS_PER_LIBRARY && l[count]) count++;
  if (count == 0) return tf_fail_code(err, TF_ERR_MODEL, "%s: twofold_model_list is empty", origin);
  if (count == MAX_MODELS_PER_LIBRARY)
    return tf_fail_code(err, TF_ERR_MODEL,
                        "%s: twofold_model_list has no NULL end within %d entries", origin,
                        MAX_MODELS_PER_LIBRARY);
  for (size_t i = 0; i < count; i++)
    for (size_t j = 0; j < i; j++)
      if (l[i]->name && l[j]->name && strcmp(l[i]->name, l[j]->name) == 0)
        return tf_fail_code(err, TF_ERR_MODEL,
                            "%s: two models are named '%s' (entries %zu and %zu of TWOFOLD_MODELS)",
                            origin, l[i]->name, j, i);
  *list = l;
  *n = count;
  return 0;
}

static void list_names(const tf_model_def *const *l, size_t n, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
                            l[i]->name ? l[i]->name : "(unnamed)");
}

/* What identifies the code a library holds: a hash of its bytes (the path alone would let a
 * rebuilt library continue another one's results). */
static void library_digest(const char *path, char *out, size_t n) {
  size_t len;
  tf_error ignored;
  char *bytes = read_all(path, &len, "model library", &ignored);
  if (bytes)
    snprintf(out, n, "library bytes fnv1a-64 %016llx",
             (unsigned long long)fnv1a(0xcbf29ce484222325ULL, bytes, len));
  else
    snprintf(out, n, "library (unreadable)");
  free(bytes);
}

/* Loads `name` from the library at path (through fd when it is a verified cache object, else
 * -1); error messages start with `origin`; `digest` (NULL: the library's bytes) is what
 * --resume compares. */
static int load(const char *path, int fd, const char *name, const char *origin, const char *digest,
                const tf_kernel **k, tf_error *err) {
  *k = NULL;
  if (!name) name = "";
  char *key = dup_key('L', path, name);
  const loaded *m = key ? memo_find(key) : NULL;
  if (m) return free(key), memo_answer(m, k, err);
  const tf_model_def *const *l;
  size_t n;
  int rc = library_defs(path, fd, origin, &l, &n, err);
  if (!rc) {
    char names[1024];
    list_names(l, n, names, sizeof names);
    const tf_model_def *def = NULL;
    if (!*name && n > 1)
      rc = tf_fail_code(err, TF_ERR_CONFIG, "%s: has %zu models (%s); choose one with model.name",
                        origin, n, names);
    else if (!*name)
      def = l[0];
    for (size_t i = 0; !rc && *name && i < n && !def; i++)
      if (l[i]->name && strcmp(l[i]->name, name) == 0) def = l[i];
    if (!rc && !def)
      rc = tf_fail_code(err, TF_ERR_CONFIG, "%s: has no model '%s' (it has: %s)", origin, name,
                        names);
    if (!rc) rc = tf_model_def_adopt(def, origin, &def, err);
    if (!rc) rc = tf_model_def_check(def, origin, err);
    if (!rc) *k = def;
  }
  char own[96];
  if (!rc && !digest) library_digest(path, own, sizeof own);
  memo_add(key, *k, origin, rc ? NULL : digest ? digest : own, err);
  return rc;
}

int tf_plugin_open_library(const char *path, const char *name, const tf_kernel **k, tf_error *err) {
  char origin[PATH_MAX + 32];
  snprintf(origin, sizeof origin, "model library '%s'", path);
  return load(path, -1, name, origin, NULL, k, err);
}

int tf_plugin_library_models(const char *path, const tf_kernel ***ks, size_t *n, tf_error *err) {
  char origin[PATH_MAX + 32];
  snprintf(origin, sizeof origin, "model library '%s'", path);
  const tf_model_def *const *l;
  *ks = NULL;
  *n = 0;
  size_t count;
  if (library_defs(path, -1, origin, &l, &count, err)) return -1;
  const tf_kernel **out = calloc(count, sizeof *out);
  if (!out) return tf_fail(err, "out of memory");
  for (size_t i = 0; i < count; i++)
    if (load(path, -1, l[i]->name ? l[i]->name : "?", origin, NULL, &out[i], err))
      return free(out), -1;
  *ks = out;
  *n = count;
  return 0;
}

/* --- the cache of compiled sources ------------------------------------------------------ */

/* The public headers a model source is compiled against: those installed next to the code
 * that is running (PREFIX/include beside PREFIX/bin/twofold or PREFIX/lib/libtwofold.so),
 * else the source tree's, where an uninstalled build finds them. */
static const char *include_dir(void) {
  static char dir[PATH_MAX + 16];
  if (dir[0]) return dir;
  snprintf(dir, sizeof dir, "%s", TF_PLUGIN_INCLUDE);
  char self[PATH_MAX] = "";
  if (readlink("/proc/self/exe", self, sizeof self - 1) < 0) self[0] = '\0';
  Dl_info code;
  const char *candidates[2] = {
      self, dladdr((void *)&include_dir, &code) && code.dli_fname ? code.dli_fname : NULL};
  for (int c = 0; c < 2; c++) {
    char path[PATH_MAX], *slash;
    if (!candidates[c] || !candidates[c][0]) continue;
    snprintf(path, sizeof path, "%s", candidates[c]);
    for (int up = 0; up < 2 && (slash = strrchr(path, '/')); up++) *slash = '\0';
    char header[PATH_MAX + 32];
    snprintf(header, sizeof header, "%s/include/twofold/model.h", path);
    struct stat st;
    if (stat(header, &st) == 0) {
      snprintf(dir, sizeof dir, "%s/include", path);
      break;
    }
  }
  return dir;
}

/* Splits the recorded flags at blanks into argv (they are CMake's, without quoting). */
static size_t split_flags(char *flags, char **argv, size_t max) {
  size_t n = 0;
  for (char *save = NULL, *tok = strtok_r(flags, " \t", &save); tok && n < max;
       tok = strtok_r(NULL, " \t", &save))
    argv[n++] = tok;
  return n;
}

/* Runs the compiler: its diagnostics go straight to our stderr, naming the file as given. */
static int compile(const char *src, const char *out, const char *origin, tf_error *err) {
  char flags[] = TF_PLUGIN_CFLAGS;
  char *argv[96];
  size_t n = 0;
  argv[n++] = (char *)TF_PLUGIN_CC;
  n += split_flags(flags, argv + n, 64);
  const char *const fixed[] = {"-std=c17", "-Wall", "-fPIC", "-shared", "-I", include_dir()};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) argv[n++] = (char *)fixed[i];
  argv[n++] = "-o";
  argv[n++] = (char *)out;
  argv[n++] = (char *)src;
  argv[n++] = "-lm";
  argv[n] = NULL;
  fflush(stdout);
  fflush(stderr);
  pid_t pid;
  const int rc = posix_spawn(&pid, TF_PLUGIN_CC, NULL, NULL, argv, environ);
  if (rc != 0)
    return tf_fail_code(err, TF_ERR_MODEL, "%s: cannot run the compiler '%s': %s", origin,
                        TF_PLUGIN_CC, strerror(rc));
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return tf_fail_code(err, TF_ERR_MODEL, "%s: waiting for the compiler failed", origin);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    unlink(out);
    return tf_fail_code(err, TF_ERR_MODEL,
                        "%s: does not compile (the compiler's messages are above; compiler %s)",
                        origin, TF_PLUGIN_CC);
  }
  return 0;
}

/* The cached library for a source: its name (so), its digest (what --resume compares: the
 * name it has in a private cache) and an open descriptor of the verified object, compiled
 * first unless a trusted one is already there. */
static int cached_library(const char *src, const char *origin, char *so, size_t so_size,
                          char *digest, size_t digest_size, int *fd, tf_error *err) {
  *fd = -1;
  if (regular_file(src, "model source", err)) return -1;
  char dir[PATH_MAX];
  if (tf_cache_dir(dir, sizeof dir, err)) return -1;
  size_t len;
  char *text = read_all(src, &len, "model source", err);
  if (!text) return -1;
  char abi[32];
  snprintf(abi, sizeof abi, "%d", TWOFOLD_MODEL_ABI);
  uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv1a(h, text, len);
  h = fnv1a(h, "", 1);
  h = fnv1a(h, TF_PLUGIN_CC, sizeof TF_PLUGIN_CC);
  h = fnv1a(h, TF_PLUGIN_CFLAGS, sizeof TF_PLUGIN_CFLAGS);
  h = fnv1a(h, abi, strlen(abi) + 1);
  free(text);
  /* the stem keeps the cache readable; the hash finds the entry, the manifest trusts it */
  char stem[64];
  const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
  size_t s = 0;
  for (; base[s] && base[s] != '.' && s < sizeof stem - 1; s++)
    stem[s] = (base[s] >= 'a' && base[s] <= 'z') || (base[s] >= 'A' && base[s] <= 'Z') ||
                      (base[s] >= '0' && base[s] <= '9') || base[s] == '_' || base[s] == '-'
                  ? base[s]
                  : '_';
  stem[s] = '\0';
  snprintf(digest, digest_size, "source compiled as %s-%016llx.so", stem, (unsigned long long)h);
  /* in a shared directory each user has objects of their own: another's is never loaded */
  char owner[32] = "";
  if (tf_cache_shared()) snprintf(owner, sizeof owner, ".u%ld", (long)geteuid());
  if (snprintf(so, so_size, "%s/%s-%016llx%s.so", dir, stem, (unsigned long long)h, owner) >=
      (int)so_size)
    return tf_fail_code(err, TF_ERR_CONFIG, "cache path too long in '%s'", dir);
  char why[256];
  if (tf_cache_open(so, fd, why, sizeof why) == 0) return 0;
  char tmp[PATH_MAX + 96];
  if (tf_cache_temp(so, tmp, sizeof tmp, err)) return -1;
  if (compile(src, tmp, origin, err) || tf_cache_seal(tmp, so, fd, err)) return unlink(tmp), -1;
  return 0;
}

int tf_plugin_build(const char *src, const char *out, char *names, size_t names_size,
                    tf_error *err) {
  char origin[PATH_MAX + 32];
  snprintf(origin, sizeof origin, "model source '%s'", src);
  if (regular_file(src, "model source", err)) return -1;
  char tmp[PATH_MAX + 64];
  if (tf_cache_temp(out, tmp, sizeof tmp, err)) return -1;
  if (compile(src, tmp, origin, err)) return unlink(tmp), -1;
  const tf_model_def *const *l;
  size_t count;
  if (library_defs(tmp, -1, origin, &l, &count, err)) return unlink(tmp), -1;
  list_names(l, count, names, names_size);
  if (rename(tmp, out) != 0) {
    const int e = errno;
    unlink(tmp);
    return tf_fail_code(err, TF_ERR_MODEL, "%s: cannot place the library at '%s': %s", origin, out,
                        strerror(e));
  }
  return 0;
}

static bool mpi_running(void) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

int tf_plugin_open_source(const char *path, const char *name, MPI_Comm comm, const tf_kernel **k,
                          tf_error *err) {
  *k = NULL;
  char origin[PATH_MAX + 32];
  snprintf(origin, sizeof origin, "model source '%s'", path);
  /* remembered by path and modification: a file written again at the same path (generated
   * code) is compiled again, and asking twice for an unchanged one costs no communication */
  struct stat st = {0};
  stat(path, &st);
  const size_t vn = (name ? strlen(name) : 0) + 80;
  char *version = malloc(vn);
  if (!version) return tf_fail(err, "out of memory");
  snprintf(version, vn, "%s\x1f%lld.%09ld:%lld", name ? name : "", (long long)st.st_mtim.tv_sec,
           (long)st.st_mtim.tv_nsec, (long long)st.st_size);
  char *key = dup_key('S', path, version);
  free(version);
  const loaded *m = key ? memo_find(key) : NULL;
  if (m) return free(key), memo_answer(m, k, err);
  /* rank 0 compiles; everyone gets its status and message, then verifies the object itself
   * (a node-local cache lacks rank 0's file, and nothing is loaded unverified) */
  struct {
    int rc;
    tf_error error;
  } shared = {0};
  char so[PATH_MAX], digest[PATH_MAX + 32];
  int rank = 0, fd = -1;
  const bool mpi = mpi_running();
  if (mpi) MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    shared.rc = cached_library(path, origin, so, sizeof so, digest, sizeof digest, &fd, err);
    if (shared.rc) shared.error = *err;
  }
  if (mpi) MPI_Bcast(&shared, (int)sizeof shared, MPI_BYTE, 0, comm);
  int rc = shared.rc ? (*err = shared.error, -1) : 0;
  if (!rc && rank != 0)
    rc = cached_library(path, origin, so, sizeof so, digest, sizeof digest, &fd, err);
  if (!rc) rc = load(so, fd, name, origin, digest, k, err);
  /* fd stays open for the process: the loader knows the object by the name
   * /proc/self/fd/N, and a reused number would make dlopen answer with the old object */
  memo_add(key, *k, origin, rc ? NULL : digest, err);
  return rc;
}

/* code_cache.c — see code_cache.h. */
#define _GNU_SOURCE /* O_NOFOLLOW, mkstemps */
#include "code_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool tf_cache_shared(void) {
  const char *s = getenv("TWOFOLD_CACHE_SHARED");
  return s && strcmp(s, "1") == 0;
}

static int make_private_dirs(const char *dir, tf_error *err) {
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
    return tf_fail_code(err, TF_ERR_CONFIG, "cache directory name too long: '%s'", dir);
  for (char *p = buf + 1;; p++) {
    const bool end = *p == '\0';
    if (*p == '/' || end) {
      *p = '\0';
      if (mkdir(buf, 0700) != 0 && errno != EEXIST)
        return tf_fail_code(
            err, TF_ERR_CONFIG,
            "cannot create the model cache directory '%s': %s (set TWOFOLD_CACHE to a "
            "directory of your own)",
            buf, strerror(errno));
      if (end) break;
      *p = '/';
    }
  }
  return 0;
}

/* A directory above the cache: someone who can rename entries in it can swap the cache. */
static int check_ancestor(const char *path, tf_error *err) {
  struct stat st;
  if (stat(path, &st) != 0)
    return tf_fail_code(err, TF_ERR_CONFIG, "cannot inspect '%s': %s", path, strerror(errno));
  const uid_t me = geteuid();
  if (st.st_uid != 0 && st.st_uid != me)
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "the model cache lies under '%s', which belongs to another user (uid %ld), who "
        "could replace the compiled code twofold runs; set TWOFOLD_CACHE to a "
        "directory of your own",
        path, (long)st.st_uid);
  const bool sticky = st.st_mode & S_ISVTX;
  if (!sticky && ((st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && st.st_gid != getegid())))
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "the model cache lies under '%s', which others may write to (mode %04o), so "
        "they could replace the compiled code twofold runs; run 'chmod go-w %s' or "
        "set TWOFOLD_CACHE to a directory of your own",
        path, (unsigned)(st.st_mode & 07777), path);
  return 0;
}

int tf_cache_check_dir(const char *dir, bool shared, tf_error *err) {
  struct stat st;
  if (lstat(dir, &st) != 0)
    return tf_fail_code(err, TF_ERR_CONFIG, "cannot inspect the model cache '%s': %s", dir,
                        strerror(errno));
  if (S_ISLNK(st.st_mode))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "the model cache '%s' is a symbolic link; twofold loads compiled code only "
                        "from a real directory of your own (set TWOFOLD_CACHE to the directory "
                        "itself)",
                        dir);
  if (!S_ISDIR(st.st_mode))
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "the model cache '%s' is not a directory (set TWOFOLD_CACHE)", dir);
  const unsigned mode = st.st_mode & 07777;
  if (!shared && st.st_uid != geteuid())
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "the model cache '%s' belongs to another user (uid %ld), who could plant code "
        "that twofold would run as you; set TWOFOLD_CACHE to a directory of your own",
        dir, (long)st.st_uid);
  if (!shared && (mode & (S_IWGRP | S_IWOTH)))
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "the model cache '%s' may be written by others (mode %04o), who could plant "
        "code that twofold would run as you; run 'chmod go-w %s', or set "
        "TWOFOLD_CACHE to a directory of your own (a shared cache needs "
        "TWOFOLD_CACHE_SHARED=1 and the sticky bit, see docs/SECURITY.md)",
        dir, mode, dir);
  if (shared && (mode & (S_IWGRP | S_IWOTH)) && !(mode & S_ISVTX))
    return tf_fail_code(
        err, TF_ERR_CONFIG,
        "the shared model cache '%s' may be written by others (mode %04o) but has no "
        "sticky bit, so they could replace your compiled code; run 'chmod +t %s'",
        dir, mode, dir);
  char real[PATH_MAX];
  if (!realpath(dir, real))
    return tf_fail_code(err, TF_ERR_CONFIG, "cannot resolve the model cache '%s': %s", dir,
                        strerror(errno));
  for (char *slash = strrchr(real, '/'); slash; slash = strrchr(real, '/')) {
    *slash = '\0';
    if (check_ancestor(real[0] ? real : "/", err)) return -1;
    if (!real[0]) break;
  }
  return 0;
}

int tf_cache_dir(char *buf, size_t n, tf_error *err) {
  const char *env = getenv("TWOFOLD_CACHE"), *xdg = getenv("XDG_CACHE_HOME"),
             *home = getenv("HOME");
  int len;
  if (env && *env)
    len = snprintf(buf, n, "%s", env);
  else if (xdg && *xdg)
    len = snprintf(buf, n, "%s/twofold", xdg);
  else if (home && *home)
    len = snprintf(buf, n, "%s/.cache/twofold", home);
  else
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "no directory for compiled models: set TWOFOLD_CACHE (or XDG_CACHE_HOME or "
                        "HOME)");
  if (len < 0 || (size_t)len >= n)
    return tf_fail_code(err, TF_ERR_CONFIG, "cache directory name too long");
  while (len > 1 && buf[len - 1] == '/') buf[--len] = '\0';
  if (make_private_dirs(buf, err)) return -1;
  return tf_cache_check_dir(buf, tf_cache_shared(), err);
}

int tf_cache_temp(const char *final, char *tmp, size_t n, tf_error *err) {
  if (snprintf(tmp, n, "%s.tmp.XXXXXX", final) >= (int)n)
    return tf_fail_code(err, TF_ERR_CONFIG, "path too long: '%s'", final);
  const int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0)
    return tf_fail_code(err, TF_ERR_MODEL, "cannot create a temporary file '%s': %s", tmp,
                        strerror(errno));
  close(fd);
  return 0;
}

static int write_fd(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    const ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

int tf_cache_write(const char *final, const void *data, size_t len, tf_error *err) {
  char tmp[PATH_MAX + 32];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", final) >= (int)sizeof tmp)
    return tf_fail_code(err, TF_ERR_CONFIG, "path too long: '%s'", final);
  const int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0)
    return tf_fail_code(err, TF_ERR_MODEL, "cannot create a temporary file '%s': %s", tmp,
                        strerror(errno));
  const bool ok = write_fd(fd, data, len) == 0;
  if (close(fd) != 0 || !ok || rename(tmp, final) != 0) {
    const int e = errno;
    unlink(tmp);
    return tf_fail_code(err, TF_ERR_MODEL, "cannot write '%s': %s", final, strerror(e));
  }
  return 0;
}

int tf_sha256_fd(int fd, char hex[65]) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) return EVP_MD_CTX_free(ctx), -1;
  unsigned char buf[1 << 16];
  int rc = lseek(fd, 0, SEEK_SET) == 0 ? 0 : -1;
  for (ssize_t got; !rc && (got = read(fd, buf, sizeof buf)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 || EVP_DigestUpdate(ctx, buf, (size_t)got) != 1) rc = -1;
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned mdlen = 0;
  if (!rc && (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32)) rc = -1;
  EVP_MD_CTX_free(ctx);
  for (unsigned i = 0; !rc && i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
  return rc;
}

int tf_cache_seal(const char *tmp, const char *final, int *fd, tf_error *err) {
  *fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  char hex[65], manifest[PATH_MAX + 16], line[80];
  if (*fd < 0)
    return tf_fail_code(err, TF_ERR_MODEL, "cannot read the compiled model '%s': %s", tmp,
                        strerror(errno));
  int rc = tf_sha256_fd(*fd, hex)
               ? tf_fail_code(err, TF_ERR_MODEL, "cannot hash the compiled model '%s'", tmp)
               : 0;
  if (!rc && snprintf(manifest, sizeof manifest, "%s.sha256", final) >= (int)sizeof manifest)
    rc = tf_fail_code(err, TF_ERR_CONFIG, "path too long: '%s'", final);
  const int len = snprintf(line, sizeof line, "%s\n", hex);
  if (!rc) rc = tf_cache_write(manifest, line, (size_t)len, err);
  if (!rc && rename(tmp, final) != 0)
    rc = tf_fail_code(err, TF_ERR_MODEL, "cannot place the compiled model at '%s': %s", final,
                      strerror(errno));
  if (rc) close(*fd), *fd = -1;
  return rc;
}

/* Opens path without following a link and checks it is a regular file of ours that nobody
 * else may write: the descriptor, not the name, is what is then read or loaded. */
static int open_own(const char *path, const char *what, char *why, size_t n) {
  const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, n, "%s: %s", what, errno == ELOOP ? "a symbolic link" : strerror(errno));
    return -1;
  }
  struct stat st;
  const char *bad = fstat(fd, &st) != 0      ? "cannot be inspected"
                    : !S_ISREG(st.st_mode)   ? "not a regular file"
                    : st.st_uid != geteuid() ? "owned by another user"
                    : st.st_mode & 022       ? "writable by others"
                    : st.st_nlink != 1       ? "has other hard links"
                                             : NULL;
  if (bad) {
    snprintf(why, n, "%s: %s", what, bad);
    close(fd);
    return -1;
  }
  return fd;
}

int tf_cache_open(const char *final, int *fd, char *why, size_t why_size) {
  *fd = -1;
  char manifest[PATH_MAX + 16], want[80] = "", have[65];
  snprintf(manifest, sizeof manifest, "%s.sha256", final);
  const int obj = open_own(final, "object", why, why_size);
  if (obj < 0) return 1;
  const int man = open_own(manifest, "manifest", why, why_size);
  if (man < 0) return close(obj), 1;
  const ssize_t got = read(man, want, sizeof want - 1);
  close(man);
  if (got != 65 || want[64] != '\n') {
    snprintf(why, why_size, "manifest: not a SHA-256 line");
    return close(obj), 1;
  }
  want[64] = '\0';
  if (tf_sha256_fd(obj, have) || strcmp(have, want) != 0) {
    snprintf(why, why_size, "object: its SHA-256 differs from the manifest");
    return close(obj), 1;
  }
  *fd = obj;
  return 0;
}

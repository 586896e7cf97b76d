/* config.h — YAML job configs: source positions, typed getters, overrides, strict keys.
 *
 * A config is parsed (libyaml) into a tree that remembers where every node came from
 * (file and line, or the --set argument).  Jobs read it only through the typed getters
 * below; each getter marks the node it reads as used and, when the key is absent and a
 * default exists, inserts the default so that tf_config_dump() shows the config exactly as
 * run.  After a job has read everything it needs, tf_config_check_unused() rejects keys
 * nobody read (misspellings get a "did you mean").  So the schema is what the job asks for,
 * and it cannot drift from the code.
 *
 * Paths are dot-separated mapping keys: "model.params.sigma".
 * Every error message starts with the origin of the offending node:
 *   "smoke.yaml:12: key 'integrator.rtol': expected a number > 0, got 'abc'"
 *   "--set integrator.rtol=abc: key 'integrator.rtol': expected a number, got 'abc'"
 * or, for an absent required key, with the file name and the line of the enclosing mapping. */
#ifndef TF_CONFIG_H
#define TF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

typedef struct tf_config tf_config;

/* Parse a YAML file.  NULL on failure: missing/unreadable file, YAML syntax error (with
 * line and column), a document that is not a mapping, duplicate keys, anchors/aliases/tags
 * (not supported), empty file.
 *
 * When memory runs out, the functions below that fail with err (returning -1 or NULL) fail
 * with "<file or --set argument>: out of memory while handling the config" and leave the
 * config's keys and values as they were; none ends the process. */
tf_config *tf_config_load(const char *path, tf_error *err);

/* Same from a string; `name` stands in for the file name in messages. */
tf_config *tf_config_parse_string(const char *text, const char *name, tf_error *err);

void tf_config_free(tf_config *cfg);

/* Apply one override "a.b.c=VALUE".  VALUE is parsed as a YAML flow node, so "12",
 * "1e-9", "true", "[1, 2, 3]" and "lorenz" all work.  Missing intermediate mappings are
 * created; descending into a scalar or sequence is an error.  Types are checked when a
 * getter reads the key (so an override of a number with "abc" fails there, naming --set). */
int tf_config_set(tf_config *cfg, const char *assignment, tf_error *err);

/* Typed getters.  `def` NULL means the key is required.  Range bounds are inclusive; pass
 * -INFINITY/INFINITY (or LLONG_MIN/LLONG_MAX) for none.  Non-finite numbers (.nan, .inf)
 * are rejected unless the bounds are infinite and the value equals the bound.  Return 0, or
 * -1 with err filled. */
int tf_config_get_double(tf_config *cfg, const char *path, const double *def, double min,
                         double max, double *out, tf_error *err);
/* Integers accept "1000", "1e6" (if integral) and reject "3.5", "abc". */
int tf_config_get_int(tf_config *cfg, const char *path, const long long *def, long long min,
                      long long max, long long *out, tf_error *err);
/* true/false/yes/no/on/off (case-insensitive). */
int tf_config_get_bool(tf_config *cfg, const char *path, const bool *def, bool *out, tf_error *err);
/* `choices`, if not NULL, is a NULL-terminated list of allowed values (the error lists them
 * and suggests the closest).  The returned pointer stays valid until the config is freed. */
int tf_config_get_string(tf_config *cfg, const char *path, const char *def,
                         const char *const *choices, const char **out, tf_error *err);
/* A sequence of numbers.  `n_expected` 0 accepts any length in [1, cap]; otherwise the
 * length must equal n_expected.  A default of NULL with `def_n` 0 means required. */
int tf_config_get_double_array(tf_config *cfg, const char *path, const double *def, size_t def_n,
                               size_t n_expected, double *out, size_t cap, size_t *n_out,
                               tf_error *err);

/* A sequence of strings (names, expressions), 1 to cap of them; required.  The pointers stay
 * valid until the config is freed. */
int tf_config_get_string_array(tf_config *cfg, const char *path, const char **out, size_t cap,
                               size_t *n_out, tf_error *err);

/* Every key of the mapping at `path`, in file order, up to cap of them (for sections whose keys
 * are names the user chooses, e.g. a model's parameters); marks the mapping itself used, each
 * key is marked when its value is read.  An absent key gives 0 keys; a value that is not a
 * mapping is an error naming the key. */
int tf_config_keys(tf_config *cfg, const char *path, const char **names, size_t cap, size_t *n_out,
                   tf_error *err);

/* True if the key exists and holds a mapping. */
bool tf_config_is_mapping(const tf_config *cfg, const char *path);

/* True if the key exists (does not mark it used). */
bool tf_config_has(const tf_config *cfg, const char *path);

/* Mark a whole subtree as used (for sections a job copies verbatim). */
void tf_config_mark_used(tf_config *cfg, const char *path);

/* "smoke.yaml:12" or "--set model.params.rho=3" for the node at path (or, if absent, the
 * deepest existing ancestor); for messages about cross-key constraints.  Writes to buf. */
const char *tf_config_where(const tf_config *cfg, const char *path, char *buf, size_t n);

/* Fails with "<where>: key '<path>': <what>" (what printf-style, where as tf_config_where);
 * returns -1. */
int tf_config_fail_key(const tf_config *cfg, const char *path, tf_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Fails on the first key (depth-first, in file order) that no getter has read:
 *   "smoke.yaml:7: unknown key 'model.params.sigam' (did you mean 'sigma'?)"
 *   "smoke.yaml:9: unknown key 'integrator.foo' (known here: method, t_end, dt, rtol, atol)"
 * Suggestions come from the sibling keys that were read (Levenshtein distance <= 2, or <=
 * a third of the length for long keys). */
int tf_config_check_unused(const tf_config *cfg, tf_error *err);

/* YAML text of the whole config as run (overrides applied, defaults inserted), in file
 * order with inserted keys appended to their mapping.  malloc'd; caller frees.  NULL if
 * memory runs out. */
char *tf_config_dump(const tf_config *cfg);

/* YAML text of the subtree at path, or NULL if absent or if memory runs out (tf_config_has
 * tells which).  malloc'd.  Used to fingerprint the parts of a config that determine results
 * (checked on --resume). */
char *tf_config_dump_path(const tf_config *cfg, const char *path);

/* The keys of the mapping at `path` (NULL: the top level) of which something was read, in
 * file order, up to max of them. */
size_t tf_config_used_keys(const tf_config *cfg, const char *path, const char **names, size_t max);

/* Compares the subtrees at `path` of two configs by value, not spelling: scalars that both
 * read as numbers are equal when the numbers are (1 and 1.0), booleans likewise (true and
 * yes), mappings key by key in any order.  A key that only b has and that b took as its
 * default is no difference: a written config lists every setting its run read, so a key
 * missing from a is one added since a was written, whose default keeps what a's run did (the
 * rule for every added setting and model parameter).  Returns true if they differ, with the
 * first differing key's dotted path in `key`. */
bool tf_config_differs(const tf_config *a, const tf_config *b, const char *path, char *key,
                       size_t n);

/* Name used in messages (the file path, or the `name` given to parse_string). */
const char *tf_config_source(const tf_config *cfg);

/* The directory that relative file names in the config (model.library, model.source) are
 * relative to, when it is not the config file's own: a config re-read from a results file
 * (twofold merge) is given its original file's.  NULL if not set.  Setting it returns 0, or -1
 * with err filled if memory runs out (the directory is then unchanged). */
int tf_config_set_dir(tf_config *cfg, const char *dir, tf_error *err);
const char *tf_config_dir(const tf_config *cfg);

/* A file name the config gives at `key` as the user meant it: relative to the config file's
 * directory (or tf_config_dir), except in a --set override, which is relative to where the
 * command runs.  Writes to out. */
void tf_config_resolve_path(const tf_config *cfg, const char *key, const char *path, char *out,
                            size_t n);

#endif

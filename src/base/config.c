/* config.c — YAML configs as a position-aware tree, read through typed getters.
 *
 * Why a tree of our own rather than libyaml's document API: every node needs a mutable `used`
 * flag, a parent link (reading a leaf marks its ancestors), origins that are not file positions
 * (--set arguments, inserted defaults) and in-place replacement and insertion; libyaml's
 * documents offer none of that.  So the event parser builds the tree directly, and libyaml's
 * emitter writes it back, which keeps the quoting rules libyaml's own and the dump re-parsable.
 *
 * Scalars stay untyped text until a getter reads them: YAML's implicit typing ("no" is false,
 * "1e3" is a string in YAML 1.1) would otherwise decide for the job what a value means.
 *
 * Running out of memory is an error like any other: a tree operation that cannot allocate
 * frees what it was given, leaves the tree as it was and returns NULL or -1, and the entry
 * point that called it says "out of memory" through its tf_error. */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

enum {
  WHERE_MAX = 1024,    /* origin prefix of a message ("file:line" or the --set text) */
  PATH_MAX_LEN = 1024, /* dotted key path rebuilt for a message */
  MAX_DEPTH = 100,     /* nesting limit: guards the recursive builder against hostile input */
  MAX_WORD = 256       /* longest word the did-you-mean search compares */
};

typedef enum { NODE_SCALAR, NODE_SEQUENCE, NODE_MAPPING } node_kind;
typedef enum { FROM_FILE, FROM_SET, FROM_DEFAULT } origin_kind;

typedef struct origin {
  origin_kind kind;
  const char *set_text; /* "--set a.b=v", owned by the config; FROM_SET only */
  int line;             /* 1-based line of the value; FROM_FILE only */
  int key_line;         /* line of the key naming the value (== line outside mappings) */
} origin;

typedef struct node node;

typedef struct entry {
  char *key;
  node *value;
} entry;

struct node {
  node_kind kind;
  origin from;
  bool used;
  node *parent;
  char *text; /* scalar */
  bool plain; /* scalar written without quotes: only those can be null */
  size_t count, cap;
  entry *entries; /* mapping, in file order */
  node **items;   /* sequence */
};

struct tf_config {
  char *name;
  node *root;
  char **set_texts; /* kept alive because origins point into them */
  size_t n_set_texts;
  char *dir; /* base of relative file names, if not the file's own directory */
};

/* ---- running out of memory, and small string helpers ------------------------------------- */

static const char out_of_memory[] = "out of memory while handling the config";

/* `where` names the config (its file name) or the --set argument being applied. */
static int fail_memory(tf_error *err, const char *where) {
  return tf_fail(err, "%s: %s", where, out_of_memory);
}

/* Appends printf-style text to a fixed buffer, silently truncating: messages only. */
static void append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...) {
  const size_t len = strlen(buf);
  if (len + 1 >= size) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, size - len, fmt, ap);
  va_end(ap);
}

/* ---- the tree ---------------------------------------------------------------------------- */

/* The constructors return NULL when memory runs out. */
static node *node_new(node_kind kind, origin from) {
  node *n = calloc(1, sizeof *n);
  if (!n) return NULL;
  n->kind = kind;
  n->from = from;
  return n;
}

static node *scalar_new(const char *text, bool plain, origin from) {
  node *n = node_new(NODE_SCALAR, from);
  char *copy = n ? strdup(text) : NULL;
  if (!copy) {
    free(n);
    return NULL;
  }
  n->text = copy;
  n->plain = plain;
  return n;
}

static void node_free(node *n) {
  if (!n) return;
  for (size_t i = 0; i < n->count; i++) {
    if (n->kind == NODE_MAPPING) {
      free(n->entries[i].key);
      node_free(n->entries[i].value);
    } else {
      node_free(n->items[i]);
    }
  }
  free(n->entries);
  free(n->items);
  free(n->text);
  free(n);
}

/* Room for one more entry or item; -1 (n unchanged) if memory runs out. */
static int grow(node *n) {
  if (n->count < n->cap) return 0;
  const size_t cap = n->cap ? 2 * n->cap : 4;
  if (n->kind == NODE_MAPPING) {
    entry *entries = realloc(n->entries, cap * sizeof *entries);
    if (!entries) return -1;
    n->entries = entries;
  } else {
    node **items = realloc(n->items, cap * sizeof *items);
    if (!items) return -1;
    n->items = items;
  }
  n->cap = cap;
  return 0;
}

/* Takes ownership of key and value, also when it fails: -1 if memory runs out, or if key or
 * value is NULL (a copy or a node that could not be made), so callers need not check those. */
static int mapping_append(node *map, char *key, node *value) {
  if (!key || !value || grow(map)) {
    free(key);
    node_free(value);
    return -1;
  }
  map->entries[map->count++] = (entry){key, value};
  value->parent = map;
  return 0;
}

static int sequence_append(node *seq, node *item) {
  if (!item || grow(seq)) {
    node_free(item);
    return -1;
  }
  seq->items[seq->count++] = item;
  item->parent = seq;
  return 0;
}

static entry *mapping_find(const node *map, const char *key, size_t len) {
  for (size_t i = 0; i < map->count; i++) {
    const char *k = map->entries[i].key;
    if (strncmp(k, key, len) == 0 && k[len] == '\0') return &map->entries[i];
  }
  return NULL;
}

/* The entry of `n` in its parent mapping, or NULL for the root and sequence items. */
static entry *entry_of(const node *n) {
  if (!n->parent || n->parent->kind != NODE_MAPPING) return NULL;
  for (size_t i = 0; i < n->parent->count; i++)
    if (n->parent->entries[i].value == n) return &n->parent->entries[i];
  return NULL;
}

static void replace_node(node *old, node *replacement) {
  entry *e = entry_of(old);
  e->value = replacement;
  replacement->parent = old->parent;
  node_free(old);
}

static void mark_upward(node *n) {
  for (; n; n = n->parent) n->used = true;
}

static void mark_subtree(node *n) {
  n->used = true;
  for (size_t i = 0; i < n->count; i++)
    mark_subtree(n->kind == NODE_MAPPING ? n->entries[i].value : n->items[i]);
}

static bool is_null(const node *n) {
  if (n->kind != NODE_SCALAR || !n->plain) return false;
  const char *t = n->text;
  return !*t || !strcmp(t, "~") || !strcmp(t, "null") || !strcmp(t, "Null") || !strcmp(t, "NULL");
}

/* ---- paths ------------------------------------------------------------------------------- */

static bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

/* Getters accept any non-empty components; --set, typed by people, only identifiers. */
static bool path_is_valid(const char *path, bool identifiers_only) {
  size_t component = 0;
  for (const char *p = path;; p++) {
    if (*p == '.' || *p == '\0') {
      if (component == 0) return false;
      if (*p == '\0') return true;
      component = 0;
    } else if (identifiers_only && !is_name_char(*p)) {
      return false;
    } else {
      component++;
    }
  }
}

/* Follows `path` as far as it exists; *rest is the part not found ("" if all was). */
static node *walk(node *root, const char *path, const char **rest) {
  node *at = root;
  const char *p = path;
  while (*p && at->kind == NODE_MAPPING) {
    const size_t len = strcspn(p, ".");
    const entry *e = mapping_find(at, p, len);
    if (!e) break;
    at = e->value;
    p += len + (p[len] == '.');
  }
  *rest = p;
  return at;
}

/* Creates the missing tail `rest` below mapping `at` as mappings and puts `leaf` (taken over)
 * at its end.  The tail is built apart and attached last, so when memory runs out (-1) `at` is
 * left as it was. */
static int graft(node *at, const char *rest, node *leaf, origin from) {
  const size_t len = strcspn(rest, ".");
  if (rest[len] == '.') {
    node *map = node_new(NODE_MAPPING, from);
    if (!map) {
      node_free(leaf);
      return -1;
    }
    if (graft(map, rest + len + 1, leaf, from)) {
      node_free(map);
      return -1;
    }
    leaf = map;
  }
  return mapping_append(at, strndup(rest, len), leaf);
}

/* Dotted path of `n`; only mappings lead to nodes that messages name. */
static void node_path(const node *n, char *buf, size_t size) {
  const entry *e = entry_of(n);
  if (!e) {
    buf[0] = '\0';
    return;
  }
  node_path(n->parent, buf, size);
  append(buf, size, "%s%s", buf[0] ? "." : "", e->key);
}

/* ---- messages ---------------------------------------------------------------------------- */

/* The prefix every message starts with: "file:line", "--set a.b=v" or "file (default)".
 * Containers are named by their key's line; scalars by their own line. */
static const char *origin_text(const tf_config *cfg, const node *n, char *buf, size_t size) {
  if (n == cfg->root) {
    snprintf(buf, size, "%s", cfg->name);
  } else if (n->from.kind == FROM_SET) {
    snprintf(buf, size, "%s", n->from.set_text);
  } else if (n->from.kind == FROM_DEFAULT) {
    snprintf(buf, size, "%s (default)", cfg->name);
  } else {
    const int line = n->kind == NODE_SCALAR ? n->from.line : n->from.key_line;
    snprintf(buf, size, "%s:%d", cfg->name, line);
  }
  return buf;
}

static int fail_key(const tf_config *cfg, const node *n, const char *path, tf_error *err,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail_key(const tf_config *cfg, const node *n, const char *path, tf_error *err,
                    const char *fmt, ...) {
  char where[WHERE_MAX], detail[TF_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': %s",
                      origin_text(cfg, n, where, sizeof where), path, detail);
}

/* What a node is, for "got ..." in type errors. */
static const char *describe(const node *n, char *buf, size_t size) {
  if (n->kind == NODE_MAPPING) return "a mapping";
  if (n->kind == NODE_SEQUENCE) return "a sequence";
  if (is_null(n) && !n->text[0]) return "an empty value";
  snprintf(buf, size, "'%s'", n->text);
  return buf;
}

static int fail_type(const tf_config *cfg, const node *n, const char *path, const char *expected,
                     tf_error *err) {
  char got[WHERE_MAX];
  return fail_key(cfg, n, path, err, "expected %s, got %s", expected, describe(n, got, sizeof got));
}

/* ---- did you mean ------------------------------------------------------------------------ */

static size_t edit_distance(const char *a, const char *b) {
  const size_t la = strlen(a), lb = strlen(b);
  if (la > MAX_WORD || lb > MAX_WORD) return SIZE_MAX;
  size_t row[MAX_WORD + 1];
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      const size_t above = row[j];
      const size_t substitute = diagonal + (a[i - 1] != b[j - 1]);
      const size_t shorter = (above < row[j - 1] ? above : row[j - 1]) + 1;
      row[j] = substitute < shorter ? substitute : shorter;
      diagonal = above;
    }
  }
  return row[lb];
}

typedef struct suggestion {
  const char *word;
  const char *best;
  size_t best_distance;
} suggestion;

/* Close means a typo, not a different word: within 2 edits (a third of the length for long
 * words), and never a complete rewrite of a short word. */
static void consider(suggestion *s, const char *candidate) {
  const size_t d = edit_distance(s->word, candidate);
  const size_t len = strlen(s->word);
  const bool close = (d <= 2 || d <= len / 3) && d < len;
  if (close && d > 0 && (!s->best || d < s->best_distance)) {
    s->best = candidate;
    s->best_distance = d;
  }
}

/* ---- parsing (libyaml events -> tree) ---------------------------------------------------- */

typedef struct builder {
  yaml_parser_t parser;
  const tf_config *cfg;
  const char *text;     /* the input, to place encoding errors that come as byte offsets */
  const char *set_text; /* non-NULL while parsing a --set value */
  tf_error *err;
  int depth;
  bool root_is_block; /* --set values must be flow nodes */
} builder;

static int build_fail(const builder *b, yaml_mark_t mark, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int build_fail(const builder *b, yaml_mark_t mark, const char *fmt, ...) {
  char detail[TF_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  if (b->set_text) return tf_fail_code(b->err, TF_ERR_CONFIG, "%s: %s", b->set_text, detail);
  return tf_fail_code(b->err, TF_ERR_CONFIG, "%s:%zu: %s", b->cfg->name, mark.line + 1, detail);
}

/* Encoding errors come as a byte offset only; messages want a line and column. */
static yaml_mark_t mark_of_offset(const char *text, size_t offset) {
  yaml_mark_t mark = {0, 0, 0};
  for (size_t i = 0; i < offset && text[i]; i++) {
    mark.line += text[i] == '\n';
    mark.column = text[i] == '\n' ? 0 : mark.column + 1;
  }
  return mark;
}

static int build_out_of_memory(const builder *b) {
  return fail_memory(b->err, b->set_text ? b->set_text : b->cfg->name);
}

static int syntax_fail(const builder *b) {
  const yaml_parser_t *p = &b->parser;
  const char *problem = p->problem ? p->problem : "unknown problem";
  if (p->error == YAML_MEMORY_ERROR) return build_out_of_memory(b);
  if (b->set_text)
    return tf_fail_code(b->err, TF_ERR_CONFIG,
                        "%s: YAML syntax error in the value: %s (column %zu)", b->set_text, problem,
                        p->problem_mark.column + 1);
  const yaml_mark_t mark =
      p->error == YAML_READER_ERROR ? mark_of_offset(b->text, p->problem_offset) : p->problem_mark;
  return tf_fail_code(b->err, TF_ERR_CONFIG, "%s:%zu:%zu: YAML syntax error: %s", b->cfg->name,
                      mark.line + 1, mark.column + 1, problem);
}

static int next_event(builder *b, yaml_event_t *ev) {
  return yaml_parser_parse(&b->parser, ev) ? 0 : syntax_fail(b);
}

static origin origin_at(const builder *b, yaml_mark_t mark, int key_line) {
  if (b->set_text) return (origin){FROM_SET, b->set_text, 0, 0};
  return (origin){FROM_FILE, NULL, (int)mark.line + 1, key_line};
}

/* Anchors, aliases and tags would make the tree a graph or typed; neither is worth it. */
static int check_supported(const builder *b, const yaml_event_t *ev) {
  const yaml_char_t *anchor = NULL, *tag = NULL;
  if (ev->type == YAML_ALIAS_EVENT)
    return build_fail(b, ev->start_mark, "aliases (*%s) are not supported; write the value out",
                      (const char *)ev->data.alias.anchor);
  if (ev->type == YAML_SCALAR_EVENT) {
    anchor = ev->data.scalar.anchor;
    tag = ev->data.scalar.tag;
  } else if (ev->type == YAML_SEQUENCE_START_EVENT) {
    anchor = ev->data.sequence_start.anchor;
    tag = ev->data.sequence_start.tag;
  } else if (ev->type == YAML_MAPPING_START_EVENT) {
    anchor = ev->data.mapping_start.anchor;
    tag = ev->data.mapping_start.tag;
  }
  if (anchor)
    return build_fail(b, ev->start_mark, "anchors (&%s) are not supported; write the value out",
                      (const char *)anchor);
  if (tag)
    return build_fail(b, ev->start_mark, "tags (%s) are not supported; remove the tag",
                      (const char *)tag);
  return 0;
}

static node *build_node(builder *b, yaml_event_t *ev, int key_line);

static node *build_scalar(builder *b, const yaml_event_t *ev, int key_line) {
  const char *text = (const char *)ev->data.scalar.value;
  if (memchr(text, '\0', ev->data.scalar.length)) {
    build_fail(b, ev->start_mark, "scalar contains a NUL character");
    return NULL;
  }
  const bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  node *n = scalar_new(text, plain, origin_at(b, ev->start_mark, key_line));
  if (!n) build_out_of_memory(b);
  return n;
}

static node *build_sequence(builder *b, const yaml_event_t *start, int key_line) {
  node *seq = node_new(NODE_SEQUENCE, origin_at(b, start->start_mark, key_line));
  if (!seq) {
    build_out_of_memory(b);
    return NULL;
  }
  for (;;) {
    yaml_event_t ev;
    if (next_event(b, &ev)) break;
    if (ev.type == YAML_SEQUENCE_END_EVENT) {
      yaml_event_delete(&ev);
      return seq;
    }
    node *item = build_node(b, &ev, (int)ev.start_mark.line + 1);
    if (!item) break;
    if (sequence_append(seq, item)) {
      build_out_of_memory(b);
      break;
    }
  }
  node_free(seq);
  return NULL;
}

/* Reads the key event of a mapping entry (consumed); keys must be scalars, and unique. */
static char *build_key(builder *b, const node *map, yaml_event_t *ev, int *line) {
  char *key = NULL;
  *line = (int)ev->start_mark.line + 1;
  if (check_supported(b, ev)) {
    /* message set */
  } else if (ev->type != YAML_SCALAR_EVENT) {
    build_fail(b, ev->start_mark, "mapping keys must be scalars");
  } else if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length)) {
    build_fail(b, ev->start_mark, "key contains a NUL character");
  } else {
    const entry *twin =
        mapping_find(map, (const char *)ev->data.scalar.value, ev->data.scalar.length);
    if (!twin) {
      key = strdup((const char *)ev->data.scalar.value);
      if (!key) build_out_of_memory(b);
    } else if (b->set_text)
      build_fail(b, ev->start_mark, "duplicate key '%s'", twin->key);
    else
      build_fail(b, ev->start_mark, "duplicate key '%s' (already defined at line %d)", twin->key,
                 twin->value->from.key_line);
  }
  yaml_event_delete(ev);
  return key;
}

static node *build_mapping(builder *b, const yaml_event_t *start, int key_line) {
  node *map = node_new(NODE_MAPPING, origin_at(b, start->start_mark, key_line));
  if (!map) {
    build_out_of_memory(b);
    return NULL;
  }
  for (;;) {
    yaml_event_t ev;
    if (next_event(b, &ev)) break;
    if (ev.type == YAML_MAPPING_END_EVENT) {
      yaml_event_delete(&ev);
      return map;
    }
    int line;
    char *key = build_key(b, map, &ev, &line);
    if (!key) break;
    node *value = next_event(b, &ev) ? NULL : build_node(b, &ev, line);
    if (!value) {
      free(key);
      break;
    }
    if (mapping_append(map, key, value)) {
      build_out_of_memory(b);
      break;
    }
  }
  node_free(map);
  return NULL;
}

/* Consumes `ev`. */
static node *build_node(builder *b, yaml_event_t *ev, int key_line) {
  node *n = NULL;
  if (check_supported(b, ev)) {
    /* message set */
  } else if (b->depth >= MAX_DEPTH) {
    build_fail(b, ev->start_mark, "nesting deeper than %d levels", MAX_DEPTH);
  } else {
    b->depth++;
    if (ev->type == YAML_SCALAR_EVENT)
      n = build_scalar(b, ev, key_line);
    else if (ev->type == YAML_SEQUENCE_START_EVENT)
      n = build_sequence(b, ev, key_line);
    else if (ev->type == YAML_MAPPING_START_EVENT)
      n = build_mapping(b, ev, key_line);
    else
      build_fail(b, ev->start_mark, "unexpected YAML event");
    b->depth--;
  }
  yaml_event_delete(ev);
  return n;
}

static int expect_event(builder *b, yaml_event_type_t type, const char *what) {
  yaml_event_t ev;
  if (next_event(b, &ev)) return -1;
  const bool ok = ev.type == type;
  const int rc = ok ? 0 : build_fail(b, ev.start_mark, "%s", what);
  yaml_event_delete(&ev);
  return rc;
}

static bool is_block_container(const yaml_event_t *ev) {
  return (ev->type == YAML_MAPPING_START_EVENT &&
          ev->data.mapping_start.style == YAML_BLOCK_MAPPING_STYLE) ||
         (ev->type == YAML_SEQUENCE_START_EVENT &&
          ev->data.sequence_start.style == YAML_BLOCK_SEQUENCE_STYLE);
}

/* Reads the single document of the stream.  Returns 0 with *root NULL for an empty stream. */
static int parse_stream(builder *b, node **root) {
  *root = NULL;
  yaml_event_t ev;
  if (expect_event(b, YAML_STREAM_START_EVENT, "expected the start of a YAML stream") ||
      next_event(b, &ev))
    return -1;
  const bool empty = ev.type == YAML_STREAM_END_EVENT;
  yaml_event_delete(&ev);
  if (empty) return 0;
  if (next_event(b, &ev)) return -1;
  b->root_is_block = is_block_container(&ev);
  *root = build_node(b, &ev, (int)ev.start_mark.line + 1);
  if (*root && !expect_event(b, YAML_DOCUMENT_END_EVENT, "expected the end of the document") &&
      !expect_event(b, YAML_STREAM_END_EVENT, "only one YAML document is allowed"))
    return 0;
  node_free(*root);
  *root = NULL;
  return -1;
}

static int parse_text(builder *b, const char *text, node **root) {
  if (!yaml_parser_initialize(&b->parser)) return build_out_of_memory(b);
  b->text = text;
  yaml_parser_set_input_string(&b->parser, (const unsigned char *)text, strlen(text));
  const int rc = parse_stream(b, root);
  yaml_parser_delete(&b->parser);
  return rc;
}

/* ---- loading ----------------------------------------------------------------------------- */

static int check_root(const tf_config *cfg, const node *root, tf_error *err) {
  char got[WHERE_MAX];
  if (!root || is_null(root))
    return tf_fail_code(err, TF_ERR_CONFIG, "%s: the config is empty", cfg->name);
  if (root->kind != NODE_MAPPING)
    return tf_fail_code(err, TF_ERR_CONFIG, "%s:%d: the config must be a mapping of keys, got %s",
                        cfg->name, root->from.line, describe(root, got, sizeof got));
  return 0;
}

tf_config *tf_config_parse_string(const char *text, const char *name, tf_error *err) {
  if (!name) name = "<string>";
  tf_config *cfg = calloc(1, sizeof *cfg);
  if (!cfg || !(cfg->name = strdup(name))) {
    free(cfg);
    fail_memory(err, name);
    return NULL;
  }
  builder b = {.cfg = cfg, .err = err};
  if (parse_text(&b, text, &cfg->root) || check_root(cfg, cfg->root, err)) {
    tf_config_free(cfg);
    return NULL;
  }
  return cfg;
}

/* The whole file as a string; NULL with errno set on failure (ENOMEM: out of memory). */
static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096;
  char *text = malloc(cap);
  bool no_memory = !text;
  *len = 0;
  for (size_t got; !no_memory && (got = fread(text + *len, 1, cap - *len - 1, f)) > 0;) {
    *len += got;
    char *grown = cap - *len - 1 == 0 ? realloc(text, cap *= 2) : text;
    no_memory = !grown;
    if (grown) text = grown;
  }
  const int saved = no_memory ? ENOMEM : ferror(f) ? (errno ? errno : EIO) : 0;
  fclose(f);
  if (saved) {
    free(text);
    errno = saved;
    return NULL;
  }
  text[*len] = '\0';
  return text;
}

tf_config *tf_config_load(const char *path, tf_error *err) {
  size_t len;
  errno = 0;
  char *text = read_file(path, &len);
  if (!text) {
    if (errno == ENOMEM)
      fail_memory(err, path);
    else
      tf_fail_code(err, TF_ERR_INPUT_FILE, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  tf_config *cfg = NULL;
  /* The parser takes a C string; a NUL inside would silently cut the file short. */
  if (strlen(text) != len) {
    const yaml_mark_t mark = mark_of_offset(text, strlen(text));
    tf_fail_code(err, TF_ERR_CONFIG, "%s:%zu:%zu: YAML syntax error: NUL byte in the file", path,
                 mark.line + 1, mark.column + 1);
  } else {
    cfg = tf_config_parse_string(text, path, err);
  }
  free(text);
  return cfg;
}

void tf_config_free(tf_config *cfg) {
  if (!cfg) return;
  node_free(cfg->root);
  for (size_t i = 0; i < cfg->n_set_texts; i++) free(cfg->set_texts[i]);
  free(cfg->set_texts);
  free(cfg->name);
  free(cfg->dir);
  free(cfg);
}

/* ---- overrides --------------------------------------------------------------------------- */

/* NULL if memory runs out. */
static const char *keep_set_text(tf_config *cfg, const char *assignment) {
  char **grown = realloc(cfg->set_texts, (cfg->n_set_texts + 1) * sizeof *grown);
  if (!grown) return NULL;
  cfg->set_texts = grown;
  char *text = malloc(strlen(assignment) + sizeof "--set ");
  if (!text) return NULL;
  sprintf(text, "--set %s", assignment);
  cfg->set_texts[cfg->n_set_texts++] = text;
  return text;
}

/* VALUE as a YAML flow node; an empty VALUE is an empty (null) scalar. */
static node *parse_set_value(tf_config *cfg, const char *value, const char *set_text,
                             tf_error *err) {
  builder b = {.cfg = cfg, .set_text = set_text, .err = err};
  node *n = NULL;
  if (parse_text(&b, value, &n)) return NULL;
  if (!n) {
    n = scalar_new("", true, (origin){FROM_SET, set_text, 0, 0});
    if (!n) fail_memory(err, set_text);
    return n;
  }
  if (b.root_is_block) {
    node_free(n);
    tf_fail_code(err, TF_ERR_CONFIG,
                 "%s: the value must be a single YAML flow value such as 3, abc, [1, 2] or "
                 "{a: 1}; quote it to pass text",
                 set_text);
    return NULL;
  }
  return n;
}

/* Puts `value` at `key`, replacing what is there or creating the missing mappings. */
static int place_override(tf_config *cfg, const char *key, node *value, tf_error *err) {
  const char *rest;
  node *at = walk(cfg->root, key, &rest);
  if (!*rest) {
    replace_node(at, value);
    return 0;
  }
  if (at->kind != NODE_MAPPING) {
    char where[WHERE_MAX], path[PATH_MAX_LEN], got[WHERE_MAX];
    node_path(at, path, sizeof path);
    const int rc =
        tf_fail_code(err, TF_ERR_CONFIG, "%s: cannot set '%s': key '%s' (%s) is %s, not a mapping",
                     value->from.set_text, key, path, origin_text(cfg, at, where, sizeof where),
                     describe(at, got, sizeof got));
    node_free(value);
    return rc;
  }
  const char *set_text = value->from.set_text; /* value is gone if grafting fails */
  return graft(at, rest, value, value->from) ? fail_memory(err, set_text) : 0;
}

int tf_config_set(tf_config *cfg, const char *assignment, tf_error *err) {
  const char *set_text = keep_set_text(cfg, assignment);
  if (!set_text) return tf_fail(err, "--set %s: %s", assignment, out_of_memory);
  const char *eq = strchr(assignment, '=');
  if (!eq) return tf_fail_code(err, TF_ERR_CONFIG, "%s: expected KEY=VALUE", set_text);
  char *key = strndup(assignment, (size_t)(eq - assignment));
  int rc = -1;
  if (!key) {
    fail_memory(err, set_text);
  } else if (!path_is_valid(key, true)) {
    tf_fail_code(
        err, TF_ERR_CONFIG,
        "%s: invalid key '%s' (expected dot-separated names of letters, digits, '_' and '-')",
        set_text, key);
  } else {
    node *value = parse_set_value(cfg, eq + 1, set_text, err);
    rc = value ? place_override(cfg, key, value, err) : -1;
  }
  free(key);
  return rc;
}

/* ---- finding what a getter reads --------------------------------------------------------- */

static int fail_missing(const tf_config *cfg, const node *at, const char *path, tf_error *err) {
  char where[WHERE_MAX];
  /* Only a real enclosing section has a line worth pointing at. */
  if (at == cfg->root || at->from.kind == FROM_DEFAULT)
    return tf_fail_code(err, TF_ERR_CONFIG_MISSING_KEY, "%s: missing required key '%s'", cfg->name,
                        path);
  return tf_fail_code(err, TF_ERR_CONFIG_MISSING_KEY, "%s: missing required key '%s'",
                      origin_text(cfg, at, where, sizeof where), path);
}

static int fail_not_mapping(const tf_config *cfg, const node *at, const char *path,
                            const char *rest, tf_error *err) {
  char prefix[PATH_MAX_LEN];
  snprintf(prefix, sizeof prefix, "%.*s", (int)(rest - path - 1), path);
  char expected[PATH_MAX_LEN + 64];
  snprintf(expected, sizeof expected, "a mapping holding '%s'", rest);
  return fail_type(cfg, at, prefix, expected, err);
}

/* The node at `path`, marked used with its ancestors.  When absent, the default `def` (taken
 * over) is inserted with any missing mappings above it.  `defaulted` false means the key is
 * required; true with `def` NULL, that making the default ran out of memory. */
static node *resolve(tf_config *cfg, const char *path, bool defaulted, node *def, tf_error *err) {
  if (defaulted && !def) {
    fail_memory(err, cfg->name);
    return NULL;
  }
  if (!path_is_valid(path, false)) {
    node_free(def);
    tf_fail_code(err, TF_ERR_CONFIG, "%s: invalid key path '%s'", cfg->name, path);
    return NULL;
  }
  const char *rest;
  node *at = walk(cfg->root, path, &rest);
  if (!*rest) {
    node_free(def);
    mark_upward(at);
    return at;
  }
  if (at->kind != NODE_MAPPING) {
    node_free(def);
    fail_not_mapping(cfg, at, path, rest, err);
    return NULL;
  }
  if (!def) {
    fail_missing(cfg, at, path, err);
    return NULL;
  }
  if (graft(at, rest, def, def->from)) {
    fail_memory(err, cfg->name);
    return NULL;
  }
  mark_upward(def);
  return def;
}

static const origin default_origin = {FROM_DEFAULT, NULL, 0, 0};

/* ---- numbers ----------------------------------------------------------------------------- */

static const char *const digits = "0123456789";

/* YAML 1.2 core-schema float syntax; strtod alone would also take "0x1p3", "nan", "infinity". */
static bool is_decimal_syntax(const char *s) {
  s += (*s == '+' || *s == '-');
  const size_t whole = strspn(s, digits);
  s += whole;
  size_t fraction = 0;
  if (*s == '.') {
    fraction = strspn(++s, digits);
    s += fraction;
  }
  if (whole + fraction == 0) return false;
  if (*s == 'e' || *s == 'E') {
    s += 1 + (s[1] == '+' || s[1] == '-');
    const size_t exponent = strspn(s, digits);
    if (exponent == 0) return false;
    s += exponent;
  }
  return *s == '\0';
}

static bool is_one_of(const char *s, const char *a, const char *b, const char *c) {
  return !strcmp(s, a) || !strcmp(s, b) || !strcmp(s, c);
}

/* Overflowing literals ("1e999") become infinities and are then judged as such. */
static bool parse_number(const char *s, double *out) {
  const bool negative = *s == '-';
  const char *unsigned_part = s + (*s == '+' || *s == '-');
  if (is_one_of(unsigned_part, ".inf", ".Inf", ".INF")) {
    *out = negative ? -INFINITY : INFINITY;
    return true;
  }
  if (is_one_of(s, ".nan", ".NaN", ".NAN")) {
    *out = NAN;
    return true;
  }
  if (!is_decimal_syntax(s)) return false;
  *out = strtod(s, NULL);
  return true;
}

/* Shortest text that reads back as the same double (0.1, not 0.10000000000000001). */
static void format_double(double v, char *buf, size_t size) {
  if (isnan(v)) {
    snprintf(buf, size, ".nan");
  } else if (isinf(v)) {
    snprintf(buf, size, "%s", v < 0 ? "-.inf" : ".inf");
  } else {
    for (int precision = 1; precision <= 17; precision++) {
      snprintf(buf, size, "%.*g", precision, v);
      if (strtod(buf, NULL) == v) return;
    }
  }
}

static void double_range_phrase(double min, double max, char *buf, size_t size) {
  char lo[32], hi[32];
  format_double(min, lo, sizeof lo);
  format_double(max, hi, sizeof hi);
  if (isinf(min) && min < 0 && isinf(max) && max > 0)
    buf[0] = '\0';
  else if (isinf(max) && max > 0)
    snprintf(buf, size, " >= %s", lo);
  else if (isinf(min) && min < 0)
    snprintf(buf, size, " <= %s", hi);
  else
    snprintf(buf, size, " in [%s, %s]", lo, hi);
}

static node *double_node(double v, origin from) {
  char text[32];
  format_double(v, text, sizeof text);
  return scalar_new(text, true, from);
}

/* Non-finite values pass only as an infinite bound itself, per the header. */
static int check_double(const tf_config *cfg, const node *n, const char *path, double v, double min,
                        double max, tf_error *err) {
  char range[96];
  double_range_phrase(min, max, range, sizeof range);
  if (isnan(v) || (isinf(v) && v != min && v != max))
    return fail_key(cfg, n, path, err, "expected a finite number%s, got %s", range, n->text);
  if (v < min || v > max)
    return fail_key(cfg, n, path, err, "expected a number%s, got %s", range, n->text);
  return 0;
}

int tf_config_get_double(tf_config *cfg, const char *path, const double *def, double min,
                         double max, double *out, tf_error *err) {
  node *n = resolve(cfg, path, def != NULL, def ? double_node(*def, default_origin) : NULL, err);
  if (!n) return -1;
  double v;
  if (n->kind != NODE_SCALAR || !parse_number(n->text, &v))
    return fail_type(cfg, n, path, "a number", err);
  /* 1e400 is no number a double holds (strtod makes it infinite); .inf is written as such */
  if (isinf(v) && is_decimal_syntax(n->text))
    return fail_key(cfg, n, path, err, "%s is beyond the range of double precision (%g)", n->text,
                    DBL_MAX);
  if (check_double(cfg, n, path, v, min, max, err)) return -1;
  *out = v;
  return 0;
}

/* 0 for an integer, 1 for an integral value outside long long, -1 for anything else. */
static int parse_integer(const char *s, long long *out) {
  const char *body = s + (*s == '+' || *s == '-');
  if (*body && strspn(body, digits) == strlen(body)) {
    errno = 0;
    *out = strtoll(s, NULL, 10);
    return errno == ERANGE ? 1 : 0;
  }
  double v;
  if (!parse_number(s, &v) || !isfinite(v) || v != trunc(v)) return -1;
  if (v < -0x1p63 || v >= 0x1p63) return 1; /* (double)LLONG_MAX rounds up to 2^63 */
  *out = (long long)v;
  return 0;
}

static void int_range_phrase(long long min, long long max, char *buf, size_t size) {
  if (min == LLONG_MIN && max == LLONG_MAX)
    snprintf(buf, size, " that fits in 64 bits");
  else if (max == LLONG_MAX)
    snprintf(buf, size, " >= %lld", min);
  else if (min == LLONG_MIN)
    snprintf(buf, size, " <= %lld", max);
  else
    snprintf(buf, size, " in [%lld, %lld]", min, max);
}

int tf_config_get_int(tf_config *cfg, const char *path, const long long *def, long long min,
                      long long max, long long *out, tf_error *err) {
  char text[32];
  if (def) snprintf(text, sizeof text, "%lld", *def);
  node *n =
      resolve(cfg, path, def != NULL, def ? scalar_new(text, true, default_origin) : NULL, err);
  if (!n) return -1;
  long long v = 0;
  const int parsed = n->kind == NODE_SCALAR ? parse_integer(n->text, &v) : -1;
  if (parsed < 0) return fail_type(cfg, n, path, "an integer", err);
  if (parsed > 0 || v < min || v > max) {
    char range[96];
    int_range_phrase(min, max, range, sizeof range);
    return fail_key(cfg, n, path, err, "expected an integer%s, got %s", range, n->text);
  }
  *out = v;
  return 0;
}

/* ---- booleans and strings ---------------------------------------------------------------- */

static bool parse_bool(const char *s, bool *out) {
  const bool yes = !strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on");
  const bool no = !strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off");
  if (yes || no) *out = yes;
  return yes || no;
}

int tf_config_get_bool(tf_config *cfg, const char *path, const bool *def, bool *out,
                       tf_error *err) {
  node *n = resolve(cfg, path, def != NULL,
                    def ? scalar_new(*def ? "true" : "false", true, default_origin) : NULL, err);
  if (!n) return -1;
  if (n->kind != NODE_SCALAR || !parse_bool(n->text, out))
    return fail_type(cfg, n, path, "true or false", err);
  return 0;
}

static int fail_choice(const tf_config *cfg, const node *n, const char *path,
                       const char *const *choices, tf_error *err) {
  char list[TF_ERROR_MAX / 2] = "";
  suggestion s = {.word = n->text};
  for (const char *const *c = choices; *c; c++) {
    append(list, sizeof list, "%s%s", c == choices ? "" : ", ", *c);
    consider(&s, *c);
  }
  char hint[MAX_WORD + 32] = "";
  if (s.best) snprintf(hint, sizeof hint, " (did you mean '%s'?)", s.best);
  return fail_key(cfg, n, path, err, "expected one of %s, got '%s'%s", list, n->text, hint);
}

int tf_config_get_string(tf_config *cfg, const char *path, const char *def,
                         const char *const *choices, const char **out, tf_error *err) {
  /* A default that reads as null ("", "~") must be quoted to stay a string. */
  node *dflt = def ? scalar_new(def, true, default_origin) : NULL;
  if (dflt) dflt->plain = !is_null(dflt);
  node *n = resolve(cfg, path, def != NULL, dflt, err);
  if (!n) return -1;
  if (n->kind != NODE_SCALAR || is_null(n)) return fail_type(cfg, n, path, "a string", err);
  bool allowed = !choices;
  for (const char *const *c = choices; c && *c && !allowed; c++) allowed = !strcmp(*c, n->text);
  if (!allowed) return fail_choice(cfg, n, path, choices, err);
  *out = n->text;
  return 0;
}

/* ---- arrays ------------------------------------------------------------------------------ */

static node *double_sequence(const double *values, size_t n) {
  node *seq = node_new(NODE_SEQUENCE, default_origin);
  for (size_t i = 0; seq && i < n; i++)
    if (sequence_append(seq, double_node(values[i], default_origin))) {
      node_free(seq);
      seq = NULL;
    }
  return seq;
}

static int read_element(const tf_config *cfg, const node *item, const char *path, size_t index,
                        double *out, tf_error *err) {
  char got[WHERE_MAX];
  if (item->kind == NODE_SCALAR && parse_number(item->text, out) && isfinite(*out)) return 0;
  return fail_key(cfg, item, path, err, "element %zu: expected a finite number, got %s", index + 1,
                  describe(item, got, sizeof got));
}

static int check_length(const tf_config *cfg, const node *n, const char *path, size_t count,
                        size_t n_expected, size_t cap, tf_error *err) {
  if (n_expected && count != n_expected)
    return fail_key(cfg, n, path, err, "expected %zu number%s, got %zu", n_expected,
                    n_expected == 1 ? "" : "s", count);
  if (count < 1 || count > cap)
    return fail_key(cfg, n, path, err, "expected 1 to %zu numbers, got %zu", cap, count);
  return 0;
}

int tf_config_get_double_array(tf_config *cfg, const char *path, const double *def, size_t def_n,
                               size_t n_expected, double *out, size_t cap, size_t *n_out,
                               tf_error *err) {
  node *n = resolve(cfg, path, def != NULL, def ? double_sequence(def, def_n) : NULL, err);
  if (!n) return -1;
  if (n->kind == NODE_SCALAR && n_expected == 1) {
    if (check_length(cfg, n, path, 1, n_expected, cap, err) ||
        read_element(cfg, n, path, 0, &out[0], err))
      return -1;
    *n_out = 1;
    return 0;
  }
  if (n->kind != NODE_SEQUENCE) return fail_type(cfg, n, path, "a sequence of numbers", err);
  if (check_length(cfg, n, path, n->count, n_expected, cap, err)) return -1;
  for (size_t i = 0; i < n->count; i++)
    if (read_element(cfg, n->items[i], path, i, &out[i], err)) return -1;
  *n_out = n->count;
  return 0;
}

static node *find(const tf_config *cfg, const char *path);

/* ---- strings and keys ----------------------------------------------------------------------- */

int tf_config_get_string_array(tf_config *cfg, const char *path, const char **out, size_t cap,
                               size_t *n_out, tf_error *err) {
  node *n = resolve(cfg, path, false, NULL, err);
  if (!n) return -1;
  if (n->kind != NODE_SEQUENCE) return fail_type(cfg, n, path, "a sequence of names", err);
  if (n->count < 1 || n->count > cap)
    return fail_key(cfg, n, path, err, "expected 1 to %zu names, got %zu", cap, n->count);
  for (size_t i = 0; i < n->count; i++) {
    const node *item = n->items[i];
    char got[WHERE_MAX];
    if (item->kind != NODE_SCALAR || is_null(item))
      return fail_key(cfg, item, path, err, "element %zu: expected a name, got %s", i + 1,
                      describe(item, got, sizeof got));
    out[i] = item->text;
  }
  *n_out = n->count;
  return 0;
}

int tf_config_keys(tf_config *cfg, const char *path, const char **names, size_t cap, size_t *n_out,
                   tf_error *err) {
  *n_out = 0;
  if (!tf_config_has(cfg, path)) return 0;
  node *n = resolve(cfg, path, false, NULL, err);
  if (!n) return -1;
  if (n->kind != NODE_MAPPING) return fail_type(cfg, n, path, "a mapping", err);
  if (n->count > cap)
    return fail_key(cfg, n, path, err, "at most %zu entries, got %zu", cap, n->count);
  for (size_t i = 0; i < n->count; i++) names[i] = n->entries[i].key;
  *n_out = n->count;
  return 0;
}

bool tf_config_is_mapping(const tf_config *cfg, const char *path) {
  const node *n = path_is_valid(path, false) ? find(cfg, path) : NULL;
  return n && n->kind == NODE_MAPPING;
}

/* ---- queries ----------------------------------------------------------------------------- */

static node *find(const tf_config *cfg, const char *path) {
  const char *rest;
  node *n = walk(cfg->root, path, &rest);
  return *rest ? NULL : n;
}

bool tf_config_has(const tf_config *cfg, const char *path) {
  return path_is_valid(path, false) && find(cfg, path);
}

void tf_config_mark_used(tf_config *cfg, const char *path) {
  node *n = path_is_valid(path, false) ? find(cfg, path) : NULL;
  if (!n) return;
  mark_subtree(n);
  mark_upward(n);
}

const char *tf_config_where(const tf_config *cfg, const char *path, char *buf, size_t n) {
  const char *rest;
  const node *at = walk(cfg->root, path, &rest);
  return origin_text(cfg, at, buf, n);
}

int tf_config_fail_key(const tf_config *cfg, const char *path, tf_error *err, const char *fmt,
                       ...) {
  char where[512], what[TF_ERROR_MAX - 600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': %s",
                      tf_config_where(cfg, path, where, sizeof where), path, what);
}

const char *tf_config_source(const tf_config *cfg) {
  return cfg->name;
}

int tf_config_set_dir(tf_config *cfg, const char *dir, tf_error *err) {
  char *copy = NULL;
  if (dir && !(copy = strdup(dir))) return fail_memory(err, cfg->name);
  free(cfg->dir);
  cfg->dir = copy;
  return 0;
}

const char *tf_config_dir(const tf_config *cfg) {
  return cfg->dir;
}

/* ---- unused keys ------------------------------------------------------------------------- */

/* Depth-first in file order.  An unread mapping is reported itself, not its first child. */
static const entry *first_unused(const node *map, const node **owner) {
  for (size_t i = 0; i < map->count; i++) {
    const entry *e = &map->entries[i];
    if (!e->value->used) {
      *owner = map;
      return e;
    }
    if (e->value->kind == NODE_MAPPING) {
      const entry *hit = first_unused(e->value, owner);
      if (hit) return hit;
    }
  }
  return NULL;
}

static void unknown_key_hint(const node *map, const char *key, char *buf, size_t size) {
  suggestion s = {.word = key};
  char known[TF_ERROR_MAX / 2] = "";
  for (size_t i = 0; i < map->count; i++) {
    if (!map->entries[i].value->used) continue;
    consider(&s, map->entries[i].key);
    append(known, sizeof known, "%s%s", known[0] ? ", " : "", map->entries[i].key);
  }
  if (s.best)
    snprintf(buf, size, "did you mean '%s'?", s.best);
  else if (known[0])
    snprintf(buf, size, "known here: %s", known);
  else
    snprintf(buf, size, "this section is not used by the job");
}

int tf_config_check_unused(const tf_config *cfg, tf_error *err) {
  const node *owner = NULL;
  const entry *e = first_unused(cfg->root, &owner);
  if (!e) return 0;
  char where[WHERE_MAX], path[PATH_MAX_LEN], hint[TF_ERROR_MAX / 2];
  node_path(e->value, path, sizeof path);
  unknown_key_hint(owner, e->key, hint, sizeof hint);
  /* An unknown key is named by its own line even when its value is a block below it. */
  const origin *from = &e->value->from;
  if (from->kind == FROM_FILE)
    snprintf(where, sizeof where, "%s:%d", cfg->name, from->key_line);
  else
    origin_text(cfg, e->value, where, sizeof where);
  return tf_fail_code(err, TF_ERR_CONFIG, "%s: unknown key '%s' (%s)", where, path, hint);
}

/* ---- dumping (tree -> libyaml emitter) --------------------------------------------------- */

typedef struct text_buffer {
  char *data;
  size_t len, cap;
} text_buffer;

static int write_to_buffer(void *data, unsigned char *bytes, size_t size) {
  text_buffer *out = data;
  if (out->len + size + 1 > out->cap) {
    const size_t cap = 2 * (out->len + size + 1);
    char *grown = realloc(out->data, cap);
    if (!grown) return 0; /* the emitter fails with a write error */
    out->data = grown;
    out->cap = cap;
  }
  memcpy(out->data + out->len, bytes, size);
  out->len += size;
  out->data[out->len] = '\0';
  return 1;
}

/* Takes the result of the event's initializer, so building and emitting read as one step. */
static int emit(yaml_emitter_t *em, yaml_event_t *ev, int event_ok) {
  return event_ok && yaml_emitter_emit(em, ev) ? 0 : -1;
}

/* Plain scalars stay plain where libyaml allows; quoted ones stay quoted, so "123" stays text
 * and an empty string does not turn into null.  libyaml falls back to a safe style whenever
 * the one asked for cannot hold the text. */
static int emit_scalar(yaml_emitter_t *em, const char *text, bool plain) {
  yaml_event_t ev;
  yaml_scalar_style_t style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
  if (plain)
    style = YAML_PLAIN_SCALAR_STYLE;
  else if (strchr(text, '\n'))
    style = YAML_LITERAL_SCALAR_STYLE;
  return emit(em, &ev,
              yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text),
                                           1, 1, style));
}

static bool all_scalars(const node *seq) {
  for (size_t i = 0; i < seq->count; i++)
    if (seq->items[i]->kind != NODE_SCALAR) return false;
  return true;
}

static int emit_node(yaml_emitter_t *em, const node *n);

static int emit_sequence(yaml_emitter_t *em, const node *n) {
  yaml_event_t ev;
  /* Vectors of numbers read best on one line: "state: [1, 0, 0]". */
  const yaml_sequence_style_t style =
      n->count && all_scalars(n) ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE;
  if (emit(em, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, style))) return -1;
  for (size_t i = 0; i < n->count; i++)
    if (emit_node(em, n->items[i])) return -1;
  return emit(em, &ev, yaml_sequence_end_event_initialize(&ev));
}

static int emit_mapping(yaml_emitter_t *em, const node *n) {
  yaml_event_t ev;
  if (emit(em, &ev,
           yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE)))
    return -1;
  for (size_t i = 0; i < n->count; i++)
    if (emit_scalar(em, n->entries[i].key, true) || emit_node(em, n->entries[i].value)) return -1;
  return emit(em, &ev, yaml_mapping_end_event_initialize(&ev));
}

static int emit_node(yaml_emitter_t *em, const node *n) {
  if (n->kind == NODE_SCALAR) return emit_scalar(em, n->text, n->plain);
  if (n->kind == NODE_SEQUENCE) return emit_sequence(em, n);
  return emit_mapping(em, n);
}

static int emit_document(yaml_emitter_t *em, const node *n) {
  yaml_event_t ev;
  if (emit(em, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING)) ||
      emit(em, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1)) ||
      emit_node(em, n) || emit(em, &ev, yaml_document_end_event_initialize(&ev, 1)) ||
      emit(em, &ev, yaml_stream_end_event_initialize(&ev)))
    return -1;
  return yaml_emitter_flush(em) ? 0 : -1;
}

static char *dump_node(const node *n) {
  yaml_emitter_t em;
  if (!yaml_emitter_initialize(&em)) return NULL;
  text_buffer out = {0};
  yaml_emitter_set_output(&em, write_to_buffer, &out);
  yaml_emitter_set_unicode(&em, 1);
  yaml_emitter_set_indent(&em, 2);
  yaml_emitter_set_width(&em, -1); /* never fold long strings */
  const int rc = emit_document(&em, n);
  yaml_emitter_delete(&em);
  if (rc) {
    free(out.data);
    return NULL;
  }
  return out.data ? out.data : strdup("");
}

char *tf_config_dump(const tf_config *cfg) {
  return dump_node(cfg->root);
}

char *tf_config_dump_path(const tf_config *cfg, const char *path) {
  const node *n = path_is_valid(path, false) ? find(cfg, path) : NULL;
  return n ? dump_node(n) : NULL;
}

/* ---- comparing configs by value (resume) ------------------------------------------------ */

size_t tf_config_used_keys(const tf_config *cfg, const char *path, const char **names, size_t max) {
  const node *map = !path ? cfg->root : path_is_valid(path, false) ? find(cfg, path) : NULL;
  size_t k = 0;
  if (!map || map->kind != NODE_MAPPING) return 0;
  for (size_t i = 0; i < map->count && k < max; i++)
    if (map->entries[i].value->used) names[k++] = map->entries[i].key;
  return k;
}

static int bool_of(const char *text) {
  static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                   "NO",    "off",   "Off",   "OFF"};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
    if (strcmp(text, yes[i]) == 0) return 1;
    if (strcmp(text, no[i]) == 0) return 0;
  }
  return -1;
}

static bool scalars_equal(const node *a, const node *b) {
  if (strcmp(a->text, b->text) == 0) return true;
  double x, y;
  if (parse_number(a->text, &x) && parse_number(b->text, &y)) return x == y || (x != x && y != y);
  const int p = bool_of(a->text), q = bool_of(b->text);
  return p >= 0 && p == q;
}

static void append_key(char *key, size_t n, const char *part) {
  const size_t len = strlen(key);
  snprintf(key + len, n > len ? n - len : 0, "%s%s", len ? "." : "", part);
}

static bool nodes_differ(const node *a, const node *b, char *key, size_t n) {
  if (!a || !b) return a != b;
  if (a->kind != b->kind) return true;
  if (a->kind == NODE_SCALAR) return !scalars_equal(a, b);
  if (a->kind == NODE_SEQUENCE) {
    if (a->count != b->count) return true;
    for (size_t i = 0; i < a->count; i++) {
      char index[32];
      snprintf(index, sizeof index, "%zu", i);
      const size_t len = strlen(key);
      append_key(key, n, index);
      if (nodes_differ(a->items[i], b->items[i], key, n)) return true;
      key[len] = '\0';
    }
    return false;
  }
  for (int pass = 0; pass < 2; pass++) { /* keys of a, then keys only b has */
    const node *x = pass ? b : a, *y = pass ? a : b;
    for (size_t i = 0; i < x->count; i++) {
      const node *other = NULL;
      for (size_t j = 0; j < y->count && !other; j++)
        if (strcmp(x->entries[i].key, y->entries[j].key) == 0) other = y->entries[j].value;
      if (pass && other) continue;
      /* a key only b has, at its default: a setting added since a was written (tf_config_differs)
       */
      if (pass && x->entries[i].value->from.kind == FROM_DEFAULT) continue;
      const size_t len = strlen(key);
      append_key(key, n, x->entries[i].key);
      if (nodes_differ(x->entries[i].value, other, key, n)) return true;
      key[len] = '\0';
    }
  }
  return false;
}

bool tf_config_differs(const tf_config *a, const tf_config *b, const char *path, char *key,
                       size_t n) {
  if (n) snprintf(key, n, "%s", path);
  const bool valid = path_is_valid(path, false);
  return nodes_differ(valid ? find(a, path) : NULL, valid ? find(b, path) : NULL, key, n);
}

void tf_config_resolve_path(const tf_config *cfg, const char *key, const char *path, char *out,
                            size_t n) {
  char where[256];
  tf_config_where(cfg, key, where, sizeof where);
  const char *dir = tf_config_dir(cfg), *source = tf_config_source(cfg);
  const char *slash = source ? strrchr(source, '/') : NULL;
  if (path[0] == '/' || strncmp(where, "--set", 5) == 0)
    snprintf(out, n, "%s", path);
  else if (dir)
    snprintf(out, n, "%s/%s", dir, path);
  else if (slash)
    snprintf(out, n, "%.*s/%s", (int)(slash - source), source, path);
  else
    snprintf(out, n, "%s", path);
}

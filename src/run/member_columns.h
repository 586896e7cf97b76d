/* member_columns.h — the per-member output columns, picked by name.
 *
 * One table (member_columns.c) says, for every value a job may write per member, its name,
 * type, width and doc for an engine's layout, how it is filled from the member result (or
 * which buffer the engine fills in place) and the attributes that describe it.  A job lists
 * the names it writes, or takes the table's (every column, or every one that is not opt-in);
 * the columns the engine does not produce (width 0) drop out.  A new output field of a value
 * the result carries is one row here; a new count is a line of counts.h's list (TF_COUNTS),
 * counted where it happens and carried whole by every engine; another value the result does
 * not carry yet is a field of tf_member_result and the lines of each adapter that fill it. */
#ifndef TF_MEMBER_COLUMNS_H
#define TF_MEMBER_COLUMNS_H

#include <hdf5.h>

#include "ensemble.h"
#include "member_engine.h"

enum { TF_MEMBER_COLUMNS_MAX = 32 };

typedef struct tf_member_column tf_member_column;

typedef struct tf_member_columns {
  size_t n;
  tf_column cols[TF_MEMBER_COLUMNS_MAX]; /* for the scheduler (ensemble.h) */
  const tf_member_column *def[TF_MEMBER_COLUMNS_MAX];
} tf_member_columns;

/* The columns of `names` (NULL-terminated, known to the table) that engine e produces, in that
 * order.  An unknown name is a programming error: -1. */
int tf_member_columns_pick(tf_member_columns *c, const tf_member_engine *e,
                           const char *const *names);

/* Every column of the table engine e produces, in the table's order (the file order); the
 * opt-in ones (written only where a config names them) too if `with_opt_in`. */
int tf_member_columns_pick_all(tf_member_columns *c, const tf_member_engine *e, bool with_opt_in);
/* The name of the table's column i (NULL past the last). */
const char *tf_member_column_name(size_t i);

/* Index of column `name` among the picked ones, -1 if absent. */
int tf_member_columns_find(const tf_member_columns *c, const char *name);

/* Points b's buffers at the row's slots of the columns the engine fills in place. */
void tf_member_columns_bind(const tf_member_columns *c, void *const *row, tf_member_buffers *b);
/* Writes the other columns of the row from the member's result. */
void tf_member_columns_fill(const tf_member_columns *c, const tf_member_layout *l,
                            const tf_member_result *r, void *const *row);
/* The attributes naming the rules behind the draws log `log`, on it and on `where` (the
 * route's describe_draws; nothing if it has none); log -1: those of `where` only. */
void tf_member_columns_describe_draws(const tf_member_engine *e, hid_t log, hid_t where);
/* Attributes of the columns' datasets `<group>/<name>` in file (kinds, fields, slot widths). */
void tf_member_columns_describe(const tf_member_columns *c, const tf_member_engine *e, hid_t file,
                                const char *group);

#endif

/* JSON documents: what every strata document (report, compare, sweep,
 * validate, plan) shares, to write one and to read one back.
 *
 * Writing: numbers whose non-finite values become null, members added with
 * one failure check at the end, and the whole document printed and written
 * whole or not at all. Reading: the text parsed with line:column errors,
 * and values checked against field tables that say, once per field, its
 * name, type, where it lives in a struct, whether it must be there and its
 * range; the same tables write the fields, so a field is named once.
 *
 * JSON numbers are doubles (cJSON stores nothing else): whole numbers are
 * exact up to 2^53 (JSON_WHOLE_MAX), which is enough for bytes and steps. */
#ifndef STRATA_JSON_DOC_H
#define STRATA_JSON_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define JSON_WHOLE_MAX ((int64_t)1 << 53)
/* Byte counts (JSON_BYTES) go further: a one-device baseline of a model
 * of Llama 3's size estimates tens of PB of activations, past 2^53; read
 * back, such a count is the double's nearest, as the estimate it is. */
#define JSON_BYTES_MAX ((int64_t)1 << 62)

/* cJSON spends a 64-byte node on a value that may take 2 bytes of text
 * ("0,"), so a document costs up to 32 times its size in memory. 256 MiB
 * holds a loss curve of millions of points and keeps that under 8 GiB. */
#define JSON_DOC_MAX_BYTES ((size_t)256 << 20)

/* --- Writing ---------------------------------------------------------------- */

/* x as a number, or null when it is not finite (JSON has no NaN or inf). */
cJSON *json_num(double x);

/* Adds item to parent under key (an object), or at its end (key NULL: an
 * array). On a NULL item or parent, or a failed add, deletes item, clears
 * *ok and returns NULL: builders check *ok once at the end. */
cJSON *json_add(cJSON *parent, const char *key, cJSON *item, bool *ok);

/* Prints doc (taking ownership; NULL means building it ran out of memory)
 * formatted, with a newline at the end, to path whole or not at all. */
int json_write_atomic(cJSON *doc, const char *path, struct err *e);

/* The same in a chosen layout: JSON_COMPACT (one line, no indentation) for
 * documents too big to read by eye, such as a trace of millions of events. */
enum json_layout { JSON_PRETTY, JSON_COMPACT };
int json_write_atomic_as(cJSON *doc, enum json_layout layout, const char *path,
                         struct err *e);

/* --- Where a reader is --------------------------------------------------------
 * A chain of frames on the stack, one per object member or array element,
 * turned into text only when a message needs it: reading a long array
 * formats nothing. Messages name the file and the path as jq would find it:
 * r.json: "reports[1].staleness.histogram[3]" is -2, not ... */
struct json_at {
    const struct json_at *up;   /* NULL: the document itself */
    const char *key;            /* member name; NULL: array element `index` */
    int index;
    const char *file;
    struct err *e;
};

struct json_at json_key(const struct json_at *up, const char *key);
struct json_at json_index(const struct json_at *up, int index);

/* The path ("reports[1].staleness") into buf[0..n); returns the length it
 * wanted, as snprintf does. */
size_t json_path(const struct json_at *at, char *buf, size_t n);

/* ERR_INPUT: `file: "path" what`, or `file: the document what` at the top. */
__attribute__((format(printf, 2, 3)))
int json_bad(const struct json_at *at, const char *fmt, ...);

/* "a number", "an object", ...: what v is, for messages. */
const char *json_type_name(const cJSON *v);

/* parent's member at->key, or NULL after saying it is missing. */
const cJSON *json_need(const cJSON *parent, const struct json_at *at);

/* As json_need, when the member's cJSON type is `type` (cJSON_Object or
 * cJSON_Array); else NULL after saying what it is instead. */
const cJSON *json_need_as(const cJSON *parent, const struct json_at *at, int type);

/* A real number; null is the writers' spelling of a non-finite one (NaN). A
 * number that overflowed to ±inf in parsing (1e999) is no writer's output. */
int json_as_real(const cJSON *v, const struct json_at *at, double *out);

/* A whole number in [0, max]. */
int json_as_whole(const cJSON *v, const struct json_at *at, int64_t max, int64_t *out);

/* v is the number `version` (the one naming a kind and its format). */
int json_as_version(const cJSON *v, const struct json_at *at, int64_t version);

/* parent's member key is there and the number `version`. */
int json_read_version(const cJSON *parent, const struct json_at *at, const char *key,
                      int64_t version);

/* --- Field tables -------------------------------------------------------------
 * A struct's fields as a JSON object (members by name), a tuple (an array
 * of fixed length, by position) or a lone value. One table reads and writes
 * them, in its order: the writer's order is the reader's, so the first
 * complaint is about the first bad field of the text. */

enum json_kind {
    JSON_REAL,      /* double; null reads as NaN, non-finite writes as null */
    JSON_WHOLE,     /* int64_t in [min, max or JSON_WHOLE_MAX] */
    JSON_BYTES,     /* int64_t in [min, max or JSON_BYTES_MAX]: exact up to 2^53 */
    JSON_INT,       /* int in [min, max or INT_MAX] */
    JSON_BOOL,      /* bool */
    JSON_VERSION,   /* the number `max`, written and required as it is */
    JSON_OBJECT,    /* members `sub`, at offsets from the same base */
    JSON_ARRAY,     /* items `sub` of a T *at offset, int count at count_offset */
    JSON_CUSTOM,    /* read and write below */
};

enum json_shape {
    JSON_SHAPE_OBJECT,   /* {"key": value, ...} */
    JSON_SHAPE_TUPLE,    /* [value, value, ...], exactly n, keys name them in messages */
    JSON_SHAPE_VALUE,    /* one value: the table's one field, at offset 0 */
};

struct json_field;

struct json_table {
    const struct json_field *fields;
    size_t n;
    enum json_shape shape;
    size_t item_size;   /* for JSON_ARRAY items: sizeof the item struct */
};

enum {
    JSON_OPTIONAL = 1u << 0,   /* may be absent, and is then left as it is */
    JSON_NULLABLE = 1u << 1,   /* null or the value; the bool at flag_offset says which */
    JSON_OMIT_ABSENT = 1u << 2, /* with JSON_NULLABLE: written only when present (no null);
                                 * for fields only some documents have (a real run's hosts) */
};

struct json_field {
    const char *key;
    enum json_kind kind;
    size_t offset;               /* of the value from the base (JSON_OBJECT: unused) */
    unsigned flags;              /* JSON_OPTIONAL, JSON_NULLABLE, JSON_OMIT_ABSENT */
    size_t flag_offset;          /* JSON_NULLABLE: bool present; JSON_ARRAY: int count */
    int64_t min, max;            /* whole numbers' range (max 0: the type's); JSON_VERSION: max */
    const char *why;             /* said of a whole number below min */
    const struct json_table *sub;   /* JSON_OBJECT: members; JSON_ARRAY: one item */
    /* JSON_CUSTOM: v is the member (never NULL); ctx is json_read_fields's */
    int (*read)(const cJSON *v, const struct json_at *at, void *base, void *ctx);
    cJSON *(*write)(const void *base);
};

/* A row for member of struct type: the one spelling of key, kind and offset
 * every table uses; more designators (.flags, .min, ...) may follow. */
#define JSON_FIELD(k, kind_, type, member, ...) \
    {.key = (k), .kind = (kind_), .offset = offsetof(type, member), __VA_ARGS__}
#define JSON_TABLE(shape, fields) \
    {(fields), sizeof(fields) / sizeof *(fields), (shape), 0}
#define JSON_ITEMS(shape, fields, type) \
    {(fields), sizeof(fields) / sizeof *(fields), (shape), sizeof(type)}

/* Reads t's fields of obj (an object, a tuple or a value as t->shape says)
 * into base. ctx goes to custom readers. Arrays are allocated at their JSON
 * length, and their count set, before their items are read: on a failure
 * part-way the caller frees what base owns as usual. */
int json_read_fields(const cJSON *obj, const struct json_at *at, void *base,
                     const struct json_table *t, void *ctx);

/* t's fields of base as a new JSON object, tuple or value (NULL on out of
 * memory). */
cJSON *json_write_fields(const void *base, const struct json_table *t);

/* --- Text and files ------------------------------------------------------------ */

/* Parses text[0..len) (no NUL needed) as one JSON document; name is the
 * file as messages should call it. ERR_INPUT for empty text, bad syntax
 * (name:line:col) or text after the document. Caller deletes *out. */
int json_parse(const char *text, size_t len, const char *name, cJSON **out, struct err *e);

/* Reads the whole file (at most JSON_DOC_MAX_BYTES) into a new buffer the
 * caller frees. ERR_INPUT for a missing file, a directory or one too large;
 * ERR_IO or ERR_NOMEM otherwise. */
int json_slurp(const char *path, char **text, size_t *len, struct err *e);

/* json_slurp, then json_parse naming the document by its path: the one way
 * the readers of saved documents (reports, traces) open a file. Caller
 * deletes *out. */
int json_parse_file(const char *path, cJSON **out, struct err *e);

#endif

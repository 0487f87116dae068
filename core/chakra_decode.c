/* Chakra .et files into struct chakra_file: see core/chakra.h. Field
 * numbers are the schema's (third_party/chakra/et_def.proto); fields strata does
 * not read (inputs, outputs, start_time_micros, doc_string) are skipped, as
 * protobuf skips unknown fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra.h"
#include "pb_wire.h"

/* The errors' "what": the file, and the message in it. */
#define WHAT_BYTES 512

#define NAME_AT_VALUE(name, value) [value] = #name,
static const char *const node_type_names[] = {CHAKRA_NODE_TYPES(NAME_AT_VALUE)};
static const char *const coll_type_names[] = {CHAKRA_COLL_TYPES(NAME_AT_VALUE)};
#undef NAME_AT_VALUE

const char *chakra_node_type_name(uint64_t type)
{
    return type < sizeof node_type_names / sizeof *node_type_names ? node_type_names[type] : NULL;
}

const char *chakra_coll_type_name(int64_t type)
{
    return type >= 0 && (size_t)type < sizeof coll_type_names / sizeof *coll_type_names
               ? coll_type_names[type]
               : NULL;
}

const struct chakra_attr *chakra_attr_find(const chakra_attrs *attrs, const char *name)
{
    for (size_t i = 0; i < attrs->len; i++)
        if (!strcmp(attrs->items[i].name, name)) return &attrs->items[i];
    return NULL;
}

int64_t chakra_attr_int(const chakra_attrs *attrs, const char *name, int64_t def)
{
    const struct chakra_attr *a = chakra_attr_find(attrs, name);
    return a && a->kind == CHAKRA_ATTR_INT ? a->i : def;
}

static int copy_string(const struct pb_field *f, char **out, struct err *e)
{
    char *s = malloc(f->len + 1);
    if (!s) return err_set(e, ERR_NOMEM, "out of memory reading a Chakra trace");
    if (f->len) memcpy(s, f->data, f->len);
    s[f->len] = '\0';
    free(*out);   /* a repeated field: the last one wins, as in protobuf */
    *out = s;
    return 0;
}

static int expect_wire(const struct pb_field *f, enum pb_wire_type t, const char *what,
                       struct err *e)
{
    if (f->wire_type == t) return 0;
    return err_set(e, ERR_INPUT, "%s: field %u has wire type %d where the schema says %d", what,
                   f->number, (int)f->wire_type, (int)t);
}

/* A length-delimited field's contents, to read as a nested message or a
 * packed list. */
static int open_len(const struct pb_field *f, const char *what, struct pb_reader *r,
                    struct err *e)
{
    TRY(expect_wire(f, PB_LEN, what, e));
    *r = pb_reader_of(f->data, f->len);
    return 0;
}

static int push_int(int64_t **items, size_t *len, size_t *cap, uint64_t v, struct err *e)
{
    if (vec_reserve_((void **)items, cap, *len + 1, sizeof **items) < 0)
        return err_set(e, ERR_NOMEM, "out of memory reading a Chakra trace");
    (*items)[(*len)++] = (int64_t)v;
    return 0;
}

/* Repeated integers: packed (one PB_LEN field) or one field each. */
static int read_ints(const struct pb_field *f, int64_t **items, size_t *len, size_t *cap,
                     const char *what, struct err *e)
{
    if (f->wire_type == PB_VARINT) return push_int(items, len, cap, f->value, e);
    struct pb_reader r;
    TRY(open_len(f, what, &r, e));
    uint64_t v;
    int rc;
    while ((rc = pb_next_packed_varint(&r, &v, what, e)) == 1) TRY(push_int(items, len, cap, v, e));
    return rc;
}

/* XxxList { repeated xxx values = 1; } with integer values. */
static int read_int_list(const struct pb_field *f, struct chakra_attr *a, const char *what,
                         struct err *e)
{
    struct pb_reader r;
    TRY(open_len(f, what, &r, e));
    struct pb_field g;
    int rc;
    a->kind = CHAKRA_ATTR_INT_LIST;
    while ((rc = pb_next_field(&r, &g, what, e)) == 1)
        if (g.number == 1)
            TRY(read_ints(&g, &a->list.items, &a->list.len, &a->list.cap, what, e));
    return rc;
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static int read_attr(const struct pb_field *outer, struct chakra_attr *a, const char *what,
                     struct err *e)
{
    struct pb_reader r;
    TRY(open_len(outer, what, &r, e));
    struct pb_field f;
    int rc;
    while ((rc = pb_next_field(&r, &f, what, e)) == 1) {
        switch (f.number) {
        case 1: TRY(expect_wire(&f, PB_LEN, what, e)); TRY(copy_string(&f, &a->name, e)); break;
        case 3: case 21: case 25:   /* double, fixed64, sfixed64 */
            TRY(expect_wire(&f, PB_I64, what, e));
            a->kind = f.number == 3 ? CHAKRA_ATTR_DOUBLE : CHAKRA_ATTR_INT;
            a->d = pb_bits_to_double(f.value);
            a->i = (int64_t)f.value;
            break;
        case 5: {                   /* float */
            TRY(expect_wire(&f, PB_I32, what, e));
            uint32_t bits = (uint32_t)f.value;
            float x;
            memcpy(&x, &bits, sizeof x);
            a->kind = CHAKRA_ATTR_DOUBLE;
            a->d = x;
            break;
        }
        case 19: case 23:           /* fixed32, sfixed32 */
            TRY(expect_wire(&f, PB_I32, what, e));
            a->kind = CHAKRA_ATTR_INT;
            a->i = f.number == 19 ? (int64_t)(uint32_t)f.value : (int64_t)(int32_t)(uint32_t)f.value;
            break;
        case 7: case 9: case 11: case 13: case 27:   /* int32, int64, uint32, uint64, bool */
            TRY(expect_wire(&f, PB_VARINT, what, e));
            a->kind = CHAKRA_ATTR_INT;
            a->i = f.number == 7 ? (int64_t)(int32_t)(uint32_t)f.value : (int64_t)f.value;
            break;
        case 15: case 17:           /* sint32, sint64: zigzag */
            TRY(expect_wire(&f, PB_VARINT, what, e));
            a->kind = CHAKRA_ATTR_INT;
            a->i = unzigzag(f.value);
            break;
        case 29: case 31:           /* string, bytes */
            TRY(expect_wire(&f, PB_LEN, what, e));
            a->kind = CHAKRA_ATTR_STRING;
            TRY(copy_string(&f, &a->s, e));
            break;
        case 8: case 10: case 12: case 14:   /* int32, int64, uint32, uint64 lists */
            TRY(read_int_list(&f, a, what, e));
            break;
        default:                    /* doc_string, float/string lists: kept unread */
            break;
        }
    }
    if (rc < 0) return rc;
    if (!a->name) return copy_string(&(struct pb_field){.len = 0}, &a->name, e);
    return 0;
}

static void attr_release(struct chakra_attr *a)
{
    free(a->name);
    free(a->s);
    vec_free(&a->list);
}

static void attrs_release(chakra_attrs *attrs)
{
    for (size_t i = 0; i < attrs->len; i++) attr_release(&attrs->items[i]);
    vec_free(attrs);
}

static int push_attr(chakra_attrs *attrs, const struct pb_field *f, const char *what,
                     struct err *e)
{
    struct chakra_attr a = {0};
    if (read_attr(f, &a, what, e) < 0 || vec_push(attrs, a) < 0) {
        attr_release(&a);
        return e->code ? e->code : err_set(e, ERR_NOMEM, "out of memory reading a Chakra trace");
    }
    return 0;
}

static int read_metadata(struct pb_reader *msg, struct chakra_file *out, const char *what,
                         struct err *e)
{
    struct pb_field f;
    int rc;
    while ((rc = pb_next_field(msg, &f, what, e)) == 1) {
        if (f.number == 1) {
            TRY(expect_wire(&f, PB_LEN, what, e));
            TRY(copy_string(&f, &out->version, e));
        } else if (f.number == 2) {
            TRY(push_attr(&out->attrs, &f, what, e));
        }
    }
    return rc;
}

static void node_release(struct chakra_node *n)
{
    free(n->name);
    vec_free(&n->ctrl_deps);
    vec_free(&n->data_deps);
    attrs_release(&n->attrs);
}

static int read_node(struct pb_reader *msg, struct chakra_node *n, const char *what,
                     struct err *e)
{
    struct pb_field f;
    int rc;
    while ((rc = pb_next_field(msg, &f, what, e)) == 1) {
        switch (f.number) {
        case 1: TRY(expect_wire(&f, PB_VARINT, what, e)); n->id = f.value; break;
        case 2: TRY(expect_wire(&f, PB_LEN, what, e)); TRY(copy_string(&f, &n->name, e)); break;
        case 3: TRY(expect_wire(&f, PB_VARINT, what, e)); n->type = f.value; break;
        case 4:
            TRY(read_ints(&f, &n->ctrl_deps.items, &n->ctrl_deps.len,
                          &n->ctrl_deps.cap, what, e));
            break;
        case 5:
            TRY(read_ints(&f, &n->data_deps.items, &n->data_deps.len,
                          &n->data_deps.cap, what, e));
            break;
        case 7: TRY(expect_wire(&f, PB_VARINT, what, e)); n->duration_micros = f.value; break;
        case 10: TRY(push_attr(&n->attrs, &f, what, e)); break;
        default: break;   /* start_time_micros, inputs, outputs: not read */
        }
    }
    if (rc < 0) return rc;
    if (!n->name) return copy_string(&(struct pb_field){.len = 0}, &n->name, e);
    return 0;
}

void chakra_file_release(struct chakra_file *f)
{
    if (!f) return;
    free(f->version);
    attrs_release(&f->attrs);
    for (size_t i = 0; i < f->nodes.len; i++) node_release(&f->nodes.items[i]);
    vec_free(&f->nodes);
    *f = (struct chakra_file){0};
}

int chakra_decode(const void *data, size_t n, const char *path, struct chakra_file *out,
                  struct err *e)
{
    *out = (struct chakra_file){0};
    struct pb_reader stream = pb_reader_of(data, n), msg;
    char what[WHAT_BYTES];
    snprintf(what, sizeof what, "%s: the global metadata", path);
    int rc = pb_next_delimited(&stream, &msg, what, e);
    if (rc == 0)
        rc = err_set(e, ERR_INPUT, "%s: empty: a Chakra trace starts with its global metadata "
                     "(is this an .et file?)", path);
    if (rc > 0) rc = read_metadata(&msg, out, what, e);
    while (rc >= 0) {
        snprintf(what, sizeof what, "%s: node %zu (message %zu)", path, out->nodes.len,
                 out->nodes.len + 2);
        rc = pb_next_delimited(&stream, &msg, what, e);
        if (rc <= 0) break;
        struct chakra_node node = {0};
        if (read_node(&msg, &node, what, e) < 0 || vec_push(&out->nodes, node) < 0) {
            node_release(&node);
            rc = e->code ? e->code : err_set(e, ERR_NOMEM, "out of memory reading %s", path);
        }
    }
    if (rc < 0) chakra_file_release(out);
    return rc < 0 ? rc : 0;
}

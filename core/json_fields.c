/* Field tables: one description of a struct's JSON fields, read and written
 * by the loops below (see json_doc.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_doc.h"

static void *at_offset(void *base, size_t offset)
{
    return (char *)base + offset;
}

static const void *at_offset_const(const void *base, size_t offset)
{
    return (const char *)base + offset;
}

/* --- Reading ----------------------------------------------------------------- */

static int read_item(const cJSON *v, const struct json_at *at, void *base,
                     const struct json_table *t, void *ctx);

/* A whole number within the field's range: the type's [0, max] first (the
 * message names it), then the field's own lower bound, with its reason. */
static int read_whole(const cJSON *v, const struct json_at *at, const struct json_field *fd,
                      int64_t type_max, int64_t *out)
{
    int64_t max = fd->max > 0 && fd->max < type_max ? fd->max : type_max;
    TRY(json_as_whole(v, at, max, out));
    if (*out >= fd->min) return 0;
    if (fd->why) return json_bad(at, "is %lld: %s", (long long)*out, fd->why);
    return json_bad(at, "is %lld, not a whole number from %lld to %lld", (long long)*out,
                    (long long)fd->min, (long long)max);
}

/* An array of items, allocated at its JSON length with its count set
 * before the items are read. */
static int read_array(const cJSON *v, const struct json_at *at, void *base,
                      const struct json_field *fd, void *ctx)
{
    if (!cJSON_IsArray(v)) return json_bad(at, "is %s, not an array", json_type_name(v));
    int n = cJSON_GetArraySize(v);
    const struct json_table *t = fd->sub;
    void *items = NULL;
    if (n > 0 && !(items = XCALLOC(at->e, (size_t)n, t->item_size))) return ERR_NOMEM;
    *(void **)at_offset(base, fd->offset) = items;
    *(int *)at_offset(base, fd->flag_offset) = n;
    int i = 0;
    for (const cJSON *item = v->child; item; item = item->next, i++) {
        struct json_at fi = json_index(at, i);
        TRY(read_item(item, &fi, (char *)items + (size_t)i * t->item_size, t, ctx));
    }
    return 0;
}

/* v (present, not a null standing for an absent nullable) as fd says. */
static int read_value(const cJSON *v, const struct json_at *at, void *base,
                      const struct json_field *fd, void *ctx)
{
    void *p = at_offset(base, fd->offset);
    int64_t whole = 0;
    switch (fd->kind) {
    case JSON_REAL: return json_as_real(v, at, p);
    case JSON_WHOLE: return read_whole(v, at, fd, JSON_WHOLE_MAX, p);
    case JSON_BYTES: return read_whole(v, at, fd, JSON_BYTES_MAX, p);
    case JSON_INT:
        TRY(read_whole(v, at, fd, INT_MAX, &whole));
        *(int *)p = (int)whole;
        return 0;
    case JSON_BOOL:
        if (!cJSON_IsBool(v)) return json_bad(at, "is %s, not true or false", json_type_name(v));
        *(bool *)p = cJSON_IsTrue(v);
        return 0;
    case JSON_VERSION: return json_as_version(v, at, fd->max);
    case JSON_OBJECT:
        if (!cJSON_IsObject(v))
            return json_bad(at, "is %s, not an object%s", json_type_name(v),
                            fd->flags & JSON_NULLABLE ? " or null" : "");
        return json_read_fields(v, at, base, fd->sub, ctx);
    case JSON_ARRAY: return read_array(v, at, base, fd, ctx);
    case JSON_CUSTOM: return fd->read(v, at, base, ctx);
    }
    return err_set(at->e, ERR_RUN, "json_read_fields: field kind %d unknown", (int)fd->kind);
}

static int read_members(const cJSON *obj, const struct json_at *at, void *base,
                        const struct json_table *t, void *ctx)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct json_field *fd = &t->fields[i];
        struct json_at f = json_key(at, fd->key);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, fd->key);
        if (!v && fd->flags & JSON_OPTIONAL) continue;   /* absent: left as the caller set it */
        if (!v) return json_bad(&f, "is missing (not a strata report?)");
        if (fd->flags & JSON_NULLABLE) {
            bool *present = at_offset(base, fd->flag_offset);
            *present = !cJSON_IsNull(v);
            if (!*present) continue;
        }
        TRY(read_value(v, &f, base, fd, ctx));
    }
    return 0;
}

/* "[step, time_s, loss] triple": what a tuple of t should look like. */
static void tuple_shape(const struct json_table *t, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (size_t i = 0; i < t->n && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", t->fields[i].key);
    if (k < n)
        snprintf(buf + k, n - k, "] %s", t->n == 2 ? "pair" : t->n == 3 ? "triple" : "tuple");
}

static int read_tuple(const cJSON *v, const struct json_at *at, void *base,
                      const struct json_table *t, void *ctx)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != (int)t->n) {
        char shape[128];
        tuple_shape(t, shape, sizeof shape);
        return json_bad(at, "is not a %s", shape);
    }
    const cJSON *item = v->child;
    for (size_t i = 0; i < t->n; i++, item = item->next) {
        struct json_at fi = json_index(at, (int)i);
        TRY(read_value(item, &fi, base, &t->fields[i], ctx));
    }
    return 0;
}

static int read_item(const cJSON *v, const struct json_at *at, void *base,
                     const struct json_table *t, void *ctx)
{
    switch (t->shape) {
    case JSON_SHAPE_OBJECT:
        if (!cJSON_IsObject(v)) return json_bad(at, "is %s, not an object", json_type_name(v));
        return read_members(v, at, base, t, ctx);
    case JSON_SHAPE_TUPLE: return read_tuple(v, at, base, t, ctx);
    case JSON_SHAPE_VALUE: return read_value(v, at, base, &t->fields[0], ctx);
    }
    return err_set(at->e, ERR_RUN, "json_read_fields: table shape %d unknown", (int)t->shape);
}

int json_read_fields(const cJSON *obj, const struct json_at *at, void *base,
                     const struct json_table *t, void *ctx)
{
    return read_item(obj, at, base, t, ctx);
}

/* --- Writing ------------------------------------------------------------------------ */

static cJSON *write_array(const void *base, const struct json_field *fd)
{
    const struct json_table *t = fd->sub;
    const char *items = *(const char *const *)at_offset_const(base, fd->offset);
    int n = *(const int *)at_offset_const(base, fd->flag_offset);
    bool ok = true;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && ok && i < n; i++)
        json_add(a, NULL, json_write_fields(items + (size_t)i * t->item_size, t), &ok);
    if (ok) return a;
    cJSON_Delete(a);
    return NULL;
}

/* Whole numbers go out as doubles, exact below 2^53 (json_doc.h). */
static cJSON *write_value(const void *base, const struct json_field *fd)
{
    if (fd->flags & JSON_NULLABLE && !*(const bool *)at_offset_const(base, fd->flag_offset))
        return cJSON_CreateNull();
    const void *p = at_offset_const(base, fd->offset);
    switch (fd->kind) {
    case JSON_REAL: return json_num(*(const double *)p);
    case JSON_WHOLE:
    case JSON_BYTES: return json_num((double)*(const int64_t *)p);
    case JSON_INT: return cJSON_CreateNumber(*(const int *)p);
    case JSON_BOOL: return cJSON_CreateBool(*(const bool *)p);
    case JSON_VERSION: return cJSON_CreateNumber((double)fd->max);
    case JSON_OBJECT: return json_write_fields(base, fd->sub);
    case JSON_ARRAY: return write_array(base, fd);
    case JSON_CUSTOM: return fd->write(base);
    }
    return NULL;
}

cJSON *json_write_fields(const void *base, const struct json_table *t)
{
    if (t->shape == JSON_SHAPE_VALUE) return write_value(base, &t->fields[0]);
    bool ok = true;
    bool is_object = t->shape == JSON_SHAPE_OBJECT;
    cJSON *o = is_object ? cJSON_CreateObject() : cJSON_CreateArray();
    for (size_t i = 0; o && ok && i < t->n; i++) {
        const struct json_field *fd = &t->fields[i];
        if (is_object && fd->flags & JSON_OMIT_ABSENT &&
            !*(const bool *)at_offset_const(base, fd->flag_offset))
            continue;
        json_add(o, is_object ? fd->key : NULL, write_value(base, fd), &ok);
    }
    if (ok) return o;
    cJSON_Delete(o);
    return NULL;
}

/* JSON documents: writing whole files, where a reader is, values checked,
 * and the text of a file parsed. Field tables are in json_fields.c. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "json_doc.h"
#include "vec.h"

/* --- Writing ---------------------------------------------------------------- */

cJSON *json_num(double x)
{
    return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
}

cJSON *json_add(cJSON *parent, const char *key, cJSON *item, bool *ok)
{
    bool added = parent && item && (key ? cJSON_AddItemToObject(parent, key, item)
                                        : cJSON_AddItemToArray(parent, item));
    if (!added) {
        cJSON_Delete(item);
        *ok = false;
        return NULL;
    }
    return item;
}

int json_write_atomic(cJSON *doc, const char *path, struct err *e)
{
    return json_write_atomic_as(doc, JSON_PRETTY, path, e);
}

int json_write_atomic_as(cJSON *doc, enum json_layout layout, const char *path,
                         struct err *e)
{
    char *text = !doc                    ? NULL
                 : layout == JSON_PRETTY ? cJSON_Print(doc)
                                         : cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!text)
        return err_set(e, ERR_NOMEM, "cannot write '%s': out of memory building the JSON",
                       path);
    /* cJSON's text has no room for the newline a text file ends with, and
     * its allocator is its own: copy rather than realloc. */
    size_t n = strlen(text);
    char *buf = malloc(n + 1);
    if (!buf) {
        cJSON_free(text);
        return err_set(e, ERR_NOMEM, "cannot write '%s': out of memory", path);
    }
    memcpy(buf, text, n);
    buf[n] = '\n';
    cJSON_free(text);
    int rc = file_write_atomic(path, buf, n + 1, e);
    free(buf);
    return rc;
}

/* --- Where a reader is -------------------------------------------------------- */

struct json_at json_key(const struct json_at *up, const char *key)
{
    return (struct json_at){.up = up, .key = key, .file = up->file, .e = up->e};
}

struct json_at json_index(const struct json_at *up, int index)
{
    return (struct json_at){.up = up, .index = index, .file = up->file, .e = up->e};
}

size_t json_path(const struct json_at *at, char *buf, size_t n)
{
    if (!at->up) {
        buf[0] = '\0';
        return 0;
    }
    size_t k = json_path(at->up, buf, n);
    if (k >= n) return k;
    int w = at->key ? snprintf(buf + k, n - k, "%s%s", k ? "." : "", at->key)
                    : snprintf(buf + k, n - k, "[%d]", at->index);
    return k + (w > 0 ? (size_t)w : 0);
}

int json_bad(const struct json_at *at, const char *fmt, ...)
{
    char path[256], what[512];
    json_path(at, path, sizeof path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!path[0]) return err_set(at->e, ERR_INPUT, "%s: the document %s", at->file, what);
    return err_set(at->e, ERR_INPUT, "%s: \"%s\" %s", at->file, path, what);
}

const char *json_type_name(const cJSON *v)
{
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "not a JSON value";
}

/* --- Values ------------------------------------------------------------------ */

const cJSON *json_need(const cJSON *parent, const struct json_at *at)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(parent, at->key);
    if (!v) json_bad(at, "is missing (not a strata report?)");
    return v;
}

const cJSON *json_need_as(const cJSON *parent, const struct json_at *at, int type)
{
    const cJSON *v = json_need(parent, at);
    if (v && (v->type & 0xFF) != type) {
        json_bad(at, "is %s, not %s", json_type_name(v),
                 type == cJSON_Object ? "an object" : "an array");
        return NULL;
    }
    return v;
}

int json_as_real(const cJSON *v, const struct json_at *at, double *out)
{
    if (cJSON_IsNull(v)) {
        *out = NAN;
        return 0;
    }
    if (!cJSON_IsNumber(v)) return json_bad(at, "is %s, not a number", json_type_name(v));
    if (!isfinite(v->valuedouble))
        return json_bad(at, "is not finite (too large for a double)");
    *out = v->valuedouble;
    return 0;
}

int json_as_whole(const cJSON *v, const struct json_at *at, int64_t max, int64_t *out)
{
    if (!cJSON_IsNumber(v)) return json_bad(at, "is %s, not a number", json_type_name(v));
    double x = v->valuedouble;
    if (!(x >= 0 && x <= (double)max && x == floor(x)))
        return json_bad(at, "is %.15g, not a whole number from 0 to %lld", x, (long long)max);
    *out = (int64_t)x;
    return 0;
}

int json_as_version(const cJSON *v, const struct json_at *at, int64_t version)
{
    if (!cJSON_IsNumber(v)) return json_bad(at, "is %s, not a version number", json_type_name(v));
    double x = v->valuedouble;
    if (x == (double)version) return 0;
    /* versions count up from 1: past this one a newer strata wrote it, a
     * whole one below an older strata, anything else no strata */
    const char *who = x > (double)version        ? "a newer strata wrote it?"
                      : x >= 1 && x == floor(x) ? "an older strata wrote it: make it again with "
                                                  "this one"
                                                : "no strata writes that version";
    return json_bad(at, "is %.15g: this strata reads version %lld (%s)", x, (long long)version,
                    who);
}

int json_read_version(const cJSON *parent, const struct json_at *at, const char *key,
                      int64_t version)
{
    struct json_at f = json_key(at, key);
    const cJSON *v = json_need(parent, &f);
    return v ? json_as_version(v, &f, version) : ERR_INPUT;
}

/* --- Text ------------------------------------------------------------------------ */

/* Line and column (from 1) of p in text, for syntax errors. */
static void line_col(const char *text, const char *p, size_t *line, size_t *col)
{
    *line = 1;
    const char *start = text;
    for (const char *q = text; q < p; q++)
        if (*q == '\n') (*line)++, start = q + 1;
    *col = (size_t)(p - start) + 1;
}

/* The first byte of [p, end) that is not JSON whitespace, or end. */
static const char *skip_blank(const char *p, const char *end)
{
    while (p < end && *p && strchr(" \t\r\n", *p)) p++;
    return p;
}

/* cJSON returns NULL for out of memory as for bad syntax and cannot say
 * which; the message assumes the likelier. */
int json_parse(const char *text, size_t len, const char *name, cJSON **out, struct err *e)
{
    *out = NULL;
    if (!text || skip_blank(text, text + len) == text + len)
        return err_set(e, ERR_INPUT, "%s: the document is empty (not a strata report?)", name);
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts(text, len, &end, false);
    size_t line, col;
    if (!*out) {
        line_col(text, end ? end : text, &line, &col);
        return err_set(e, ERR_INPUT, "%s:%zu:%zu: not valid JSON (a truncated file?)", name,
                       line, col);
    }
    const char *rest = skip_blank(end, text + len);
    if (rest < text + len) {
        line_col(text, rest, &line, &col);
        cJSON_Delete(*out);
        *out = NULL;
        return err_set(e, ERR_INPUT, "%s:%zu:%zu: text after the JSON document", name, line,
                       col);
    }
    return 0;
}

/* --- Files ------------------------------------------------------------------------ */

/* A missing file is the user's typo; anything else is the system's. */
static int open_error(const char *path, struct err *e)
{
    int code = errno == ENOENT || errno == ENOTDIR ? ERR_INPUT : ERR_IO;
    return err_set(e, code, "cannot read '%s': %s", path, strerror(errno));
}

/* What to reserve before reading f: its size when it is a regular file (a
 * pipe, as from <(...), says nothing and grows as read). */
static int size_hint(FILE *f, const char *path, size_t *hint, struct err *e)
{
    struct stat st;
    *hint = 1 << 16;
    if (fstat(fileno(f), &st) != 0) return 0;
    if (S_ISDIR(st.st_mode))
        return err_set(e, ERR_INPUT, "cannot read '%s': it is a directory, not a report", path);
    if (!S_ISREG(st.st_mode)) return 0;
    if ((unsigned long long)st.st_size > JSON_DOC_MAX_BYTES)
        return err_set(e, ERR_INPUT,
                       "cannot read '%s': it is %lld bytes, over the %zu MiB a report may be "
                       "(not a strata report?)",
                       path, (long long)st.st_size, JSON_DOC_MAX_BYTES >> 20);
    *hint = (size_t)st.st_size + 1;  /* + 1: the read that sees the end */
    return 0;
}

int json_slurp(const char *path, char **text, size_t *len, struct err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) return open_error(path, e);
    VEC(char) buf = {0};
    size_t hint;
    int rc = size_hint(f, path, &hint, e);
    if (rc == 0 && vec_reserve(&buf, hint) < 0) rc = ERR_NOMEM;
    while (rc == 0) {
        size_t room = buf.cap - buf.len;
        size_t got = fread(buf.items + buf.len, 1, room, f);
        buf.len += got;
        if (buf.len > JSON_DOC_MAX_BYTES)
            rc = err_set(e, ERR_INPUT, "cannot read '%s': it is over the %zu MiB a report may be",
                         path, JSON_DOC_MAX_BYTES >> 20);
        else if (got < room) break;  /* the end, or an error ferror tells */
        else if (vec_reserve(&buf, buf.cap + 1) < 0) rc = ERR_NOMEM;
    }
    if (rc == ERR_NOMEM) err_set(e, rc, "cannot read '%s': out of memory", path);
    if (rc == 0 && ferror(f)) rc = err_set(e, ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    fclose(f);
    if (rc < 0) {
        vec_free(&buf);
        return rc;
    }
    *text = buf.items;
    *len = buf.len;
    return 0;
}

int json_parse_file(const char *path, cJSON **out, struct err *e)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    TRY(json_slurp(path, &text, &len, e));
    int rc = json_parse(text, len, path, out, e);
    free(text);
    return rc;
}

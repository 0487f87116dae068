/* Reports read back: the inverse of report.c's writer, for commands that
 * consume reports (compare --mode real, plot, validate).
 *
 * report.c is the truth for what a report holds. The reader accepts what it
 * writes and nothing looser: every field present and typed, counts whole
 * and non-negative, numbers finite; where the writer would print nonsense it
 * was handed (no devices, a strategy name of control characters) the reader
 * is a little stricter. The writer forces one allowance: it writes a
 * non-finite double as null, so null in a real field reads back as NaN (NaN
 * and ±inf are folded together, in the file and so in the round trip).
 *
 * Every message names the file and the field as a path a person can find
 * with jq: r.json: "reports[1].staleness.histogram[3]" is -2, not ... */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report.h"
#include "vec.h"

/* cJSON spends a 64-byte node on a value that may take 2 bytes of text
 * ("0,"), so a document costs up to 32 times its size in memory. 256 MiB
 * holds a loss curve of millions of points and keeps that under 8 GiB. */
#define REPORT_MAX_BYTES ((size_t)256 << 20)

/* Whole numbers travel as doubles (report.c says so): exact up to 2^53. */
#define WHOLE_MAX ((int64_t)1 << 53)

/* config_set with every group: a report's config may hold any option. */
#define ALL_GROUPS (~0u)

#define N_OF(a) (sizeof (a) / sizeof *(a))

/* --- Where the reader is ---------------------------------------------------
 * A chain of frames on the stack, one per object member or array element,
 * turned into text only when a message needs it: reading a long loss curve
 * formats nothing. */

struct at {
    const struct at *up;   /* NULL: the document itself */
    const char *key;       /* member name; NULL: array element `index` */
    int index;
    const char *file;
    struct err *e;
};

static struct at key_of(const struct at *up, const char *key)
{
    return (struct at){.up = up, .key = key, .file = up->file, .e = up->e};
}

static struct at index_of(const struct at *up, int index)
{
    return (struct at){.up = up, .index = index, .file = up->file, .e = up->e};
}

/* Writes the path ("reports[1].staleness") into buf[0..n); returns the
 * length it wanted, as snprintf does. */
static size_t path_of(const struct at *at, char *buf, size_t n)
{
    if (!at->up) {
        buf[0] = '\0';
        return 0;
    }
    size_t k = path_of(at->up, buf, n);
    if (k >= n) return k;
    int w = at->key ? snprintf(buf + k, n - k, "%s%s", k ? "." : "", at->key)
                    : snprintf(buf + k, n - k, "[%d]", at->index);
    return k + (w > 0 ? (size_t)w : 0);
}

/* ERR_INPUT: `file: "path" what`, or `file: the document what` at the top. */
__attribute__((format(printf, 2, 3)))
static int bad(const struct at *at, const char *fmt, ...)
{
    char path[256], what[512];
    path_of(at, path, sizeof path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!path[0]) return err_set(at->e, ERR_INPUT, "%s: the document %s", at->file, what);
    return err_set(at->e, ERR_INPUT, "%s: \"%s\" %s", at->file, path, what);
}

static const char *type_name(const cJSON *v)
{
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "not a JSON value";
}

/* --- Values ---------------------------------------------------------------- */

/* parent's member at->key, or NULL after saying it is missing. */
static const cJSON *need(const cJSON *parent, const struct at *at)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(parent, at->key);
    if (!v) bad(at, "is missing (not a strata report?)");
    return v;
}

/* parent's member at->key when its cJSON type is `type` (cJSON_Object or
 * cJSON_Array), or NULL after saying what it is instead. */
static const cJSON *need_as(const cJSON *parent, const struct at *at, int type)
{
    const cJSON *v = need(parent, at);
    if (v && (v->type & 0xFF) != type) {
        bad(at, "is %s, not %s", type_name(v), type == cJSON_Object ? "an object" : "an array");
        return NULL;
    }
    return v;
}

/* A real number; null is the writer's spelling of a non-finite one. A
 * number that overflowed to ±inf in parsing (1e999) is no writer's output. */
static int as_real(const cJSON *v, const struct at *at, double *out)
{
    if (cJSON_IsNull(v)) {
        *out = NAN;
        return 0;
    }
    if (!cJSON_IsNumber(v)) return bad(at, "is %s, not a number", type_name(v));
    if (!isfinite(v->valuedouble)) return bad(at, "is not finite (too large for a double)");
    *out = v->valuedouble;
    return 0;
}

/* A whole number in [0, max]: counts, sizes, ranks, steps. */
static int as_whole(const cJSON *v, const struct at *at, int64_t max, int64_t *out)
{
    if (!cJSON_IsNumber(v)) return bad(at, "is %s, not a number", type_name(v));
    double x = v->valuedouble;
    if (!(x >= 0 && x <= (double)max && x == floor(x)))
        return bad(at, "is %.15g, not a whole number from 0 to %lld", x, (long long)max);
    *out = (int64_t)x;
    return 0;
}

/* --- Fields by table --------------------------------------------------------
 * The numeric fields of an object, described once as the writer writes
 * them, and read by one loop. */

enum kind {
    K_REAL,   /* double */
    K_WHOLE,  /* int64_t in [0, 2^53] */
    K_INT,    /* int in [0, INT_MAX] */
};

struct field {
    const char *key;
    enum kind kind;
    size_t offset;   /* in the struct that `base` points to */
};

#define RF(key, kind, member) {key, kind, offsetof(struct report, member)}

static const struct field devices_field = RF("devices", K_INT, devices);
static const struct field throughput_field =
    RF("throughput_samples_per_s", K_REAL, throughput_samples_per_s);
static const struct field bubble_field = RF("bubble_fraction", K_REAL, bubble_fraction);
static const struct field step_time_fields[] = {
    RF("mean", K_REAL, step_time_s.mean),
    RF("p50", K_REAL, step_time_s.p50),
    RF("p99", K_REAL, step_time_s.p99),
};
static const struct field breakdown_fields[] = {
    RF("compute", K_REAL, breakdown.compute),
    RF("comm", K_REAL, breakdown.comm),
    RF("idle", K_REAL, breakdown.idle),
};
static const struct field breakdown_later_fields[] = {
    RF("down", K_REAL, breakdown.down),
};
static const struct field report_later_fields[] = {
    RF("samples_applied", K_WHOLE, samples_applied),
};
static const struct field staleness_fields[] = {
    RF("mean", K_REAL, staleness.mean),
    RF("max", K_WHOLE, staleness.max),
};
static const struct field memory_fields[] = {
    RF("params", K_WHOLE, memory_bytes_per_device.params),
    RF("grads", K_WHOLE, memory_bytes_per_device.grads),
    RF("optimizer", K_WHOLE, memory_bytes_per_device.optimizer),
    RF("activations", K_WHOLE, memory_bytes_per_device.activations),
    RF("peak", K_WHOLE, memory_bytes_per_device.peak),
};
static const struct field final_fields[] = {
    RF("loss", K_REAL, final.loss),
    RF("test_accuracy", K_REAL, final.test_accuracy),
};
static const struct field failure_fields[] = {
    RF("rank", K_INT, failure.rank),
    RF("time_s", K_REAL, failure.time_s),
    RF("lost_s", K_REAL, failure.lost_s),
    RF("steps_redone", K_INT, failure.steps_redone),
};
static const struct field rank_time_fields[] = {
    {"rank", K_INT, offsetof(struct rank_time, rank)},
    {"compute_s", K_REAL, offsetof(struct rank_time, compute_s)},
    {"comm_s", K_REAL, offsetof(struct rank_time, comm_s)},
    {"idle_s", K_REAL, offsetof(struct rank_time, idle_s)},
};
static const struct field rank_time_later_fields[] = {
    {"down_s", K_REAL, offsetof(struct rank_time, down_s)},
};

#define TABLE(t) t, N_OF(t)

static int read_field(const cJSON *obj, const struct at *at, void *base,
                      const struct field *fd)
{
    struct at f = key_of(at, fd->key);
    const cJSON *v = need(obj, &f);
    if (!v) return ERR_INPUT;
    char *p = (char *)base + fd->offset;
    int64_t whole = 0;
    switch (fd->kind) {
    case K_REAL: return as_real(v, &f, (double *)p);
    case K_WHOLE: return as_whole(v, &f, WHOLE_MAX, (int64_t *)p);
    case K_INT:
        TRY(as_whole(v, &f, INT_MAX, &whole));
        *(int *)p = (int)whole;
        return 0;
    }
    return err_set(f.e, ERR_RUN, "report_read: field kind %d unknown", (int)fd->kind);
}

/* Fields added after version 1 of the format: absent in older files, where
 * they read as 0 (no down time, nothing known of samples). */
static int read_fields_if_present(const cJSON *obj, const struct at *at, void *base,
                                  const struct field *fs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cJSON_GetObjectItemCaseSensitive(obj, fs[i].key)) TRY(read_field(obj, at, base, &fs[i]));
    return 0;
}

static int read_fields(const cJSON *obj, const struct at *at, void *base,
                       const struct field *fs, size_t n)
{
    for (size_t i = 0; i < n; i++) TRY(read_field(obj, at, base, &fs[i]));
    return 0;
}

static int read_object(const cJSON *j, const struct at *at, const char *key, void *base,
                       const struct field *fs, size_t n)
{
    struct at f = key_of(at, key);
    const cJSON *v = need_as(j, &f, cJSON_Object);
    if (!v) return ERR_INPUT;
    return read_fields(v, &f, base, fs, n);
}

/* "breakdown": compute, comm and idle, and down when present. */
static int read_breakdown(const cJSON *j, const struct at *at, struct report *r)
{
    TRY(read_object(j, at, "breakdown", r, TABLE(breakdown_fields)));
    struct at f = key_of(at, "breakdown");
    return read_fields_if_present(cJSON_GetObjectItemCaseSensitive(j, "breakdown"), &f, r,
                                  TABLE(breakdown_later_fields));
}

/* "final" and "failure": null, or an object of table fields. */
static int read_optional(const cJSON *j, const struct at *at, const char *key, void *base,
                         const struct field *fs, size_t n, bool *present)
{
    struct at f = key_of(at, key);
    const cJSON *v = need(j, &f);
    if (!v) return ERR_INPUT;
    *present = !cJSON_IsNull(v);
    if (!*present) return 0;
    if (!cJSON_IsObject(v)) return bad(&f, "is %s, not an object or null", type_name(v));
    return read_fields(v, &f, base, fs, n);
}

/* --- A report ---------------------------------------------------------------- */

/* The number that names a document's kind, and its format version. */
static int read_version(const cJSON *j, const struct at *at, const char *key, int version)
{
    struct at f = key_of(at, key);
    const cJSON *v = need(j, &f);
    if (!v) return ERR_INPUT;
    if (!cJSON_IsNumber(v)) return bad(&f, "is %s, not a version number", type_name(v));
    if (v->valuedouble != version)
        return bad(&f, "is %.15g: this strata reads version %d (a newer strata wrote it?)",
                   v->valuedouble, version);
    return 0;
}

static int read_mode(const cJSON *j, const struct at *at, struct report *r)
{
    struct at f = key_of(at, "mode");
    const cJSON *v = need(j, &f);
    if (!v) return ERR_INPUT;
    if (!cJSON_IsString(v)) return bad(&f, "is %s, not \"sim\" or \"real\"", type_name(v));
    if (!strcmp(v->valuestring, "sim")) r->mode = "sim";
    else if (!strcmp(v->valuestring, "real")) r->mode = "real";
    else return bad(&f, "is \"%.40s\", not \"sim\" or \"real\"", v->valuestring);
    return 0;
}

/* Registry names use letters, digits and '-' ('_' and '.' are as harmless).
 * Holding names read back to that keeps report_write_csv's promise that
 * nothing needs quoting, and control characters off the terminal. */
static int read_strategy(const cJSON *j, const struct at *at, struct report *r)
{
    struct at f = key_of(at, "strategy");
    const cJSON *v = need(j, &f);
    if (!v) return ERR_INPUT;
    if (!cJSON_IsString(v)) return bad(&f, "is %s, not a string", type_name(v));
    const char *s = v->valuestring;
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof r->strategy)
        return bad(&f, "has %zu characters, not 1 to %zu", n, sizeof r->strategy - 1);
    static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.";
    if (strspn(s, ok) != n)
        return bad(&f, "is \"%s\": a strategy name has only letters, digits, '-', '_' and '.'",
                   s);
    memcpy(r->strategy, s, n + 1);
    return 0;
}

/* An option's value as config_set's text. report.c writes numbers from
 * config_format's text, so whole numbers print whole (OPT_INT parses them)
 * and others with %.17g, which reads back as the same double. */
static const char *option_text(const cJSON *v, char *buf, size_t n)
{
    if (cJSON_IsString(v)) return v->valuestring;
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v) ? "true" : "false";
    if (!cJSON_IsNumber(v)) return NULL;
    double x = v->valuedouble;
    if (x == floor(x) && fabs(x) <= (double)WHOLE_MAX) snprintf(buf, n, "%.0f", x);
    else snprintf(buf, n, "%.17g", x);
    return buf;
}

static int read_option(const cJSON *item, const struct at *cfg_at, struct config *c,
                       unsigned *groups)
{
    struct at f = key_of(cfg_at, item->string);
    char buf[64];
    const char *text = option_text(item, buf, sizeof buf);
    if (!text) return bad(&f, "is %s, not a number, string or boolean", type_name(item));
    if (config_set(c, item->string, text, ALL_GROUPS, f.e) < 0) {
        char path[256];
        path_of(&f, path, sizeof path);
        return err_prefix(f.e, "%s: \"%s\"", f.file, path);
    }
    *groups |= config_find(item->string)->groups;
    return 0;
}

static int read_config(const cJSON *j, const struct at *at, struct report *r,
                       struct config *c)
{
    config_init(c);
    r->config = c;
    struct at f = key_of(at, "config");
    const cJSON *cfg = need_as(j, &f, cJSON_Object);
    if (!cfg) return ERR_INPUT;
    for (const cJSON *item = cfg->child; item; item = item->next)
        TRY(read_option(item, &f, c, &r->config_groups));
    return 0;
}

/* Each array is allocated at its JSON length, and its count set, before
 * its elements are read: a failure part-way leaves it to report_release. */

static int read_histogram(const cJSON *j, const struct at *at, struct report *r)
{
    struct at fs = key_of(at, "staleness");
    struct at f = key_of(&fs, "histogram");
    const cJSON *h = need_as(cJSON_GetObjectItemCaseSensitive(j, "staleness"), &f, cJSON_Array);
    if (!h) return ERR_INPUT;
    int n = cJSON_GetArraySize(h);
    if (n > 0 && !(r->staleness.histogram = XCALLOC(at->e, (size_t)n, sizeof(int64_t))))
        return ERR_NOMEM;
    r->staleness.n_histogram = n;
    int i = 0;
    for (const cJSON *v = h->child; v; v = v->next, i++) {
        struct at fi = index_of(&f, i);
        TRY(as_whole(v, &fi, WHOLE_MAX, &r->staleness.histogram[i]));
    }
    return 0;
}

static int read_loss_point(const cJSON *v, const struct at *at, struct loss_point *p)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 3)
        return bad(at, "is not a [step, time_s, loss] triple");
    const cJSON *step = v->child, *time_s = step->next, *loss = time_s->next;
    struct at f0 = index_of(at, 0), f1 = index_of(at, 1), f2 = index_of(at, 2);
    TRY(as_whole(step, &f0, WHOLE_MAX, &p->step));
    TRY(as_real(time_s, &f1, &p->time_s));
    return as_real(loss, &f2, &p->loss);
}

/* Optional: reports from before it existed have none. */
static int read_accuracy_curve(const cJSON *j, const struct at *at, struct report *r)
{
    const cJSON *ac = cJSON_GetObjectItemCaseSensitive(j, "accuracy_curve");
    if (!ac) return 0;
    struct at f = key_of(at, "accuracy_curve");
    if (!cJSON_IsArray(ac)) return bad(&f, "is not an array");
    int n = cJSON_GetArraySize(ac);
    if (n > 0 && !(r->accuracy_curve = XCALLOC(at->e, (size_t)n, sizeof *r->accuracy_curve)))
        return ERR_NOMEM;
    r->n_accuracy_curve = n;
    int i = 0;
    for (const cJSON *v = ac->child; v; v = v->next, i++) {
        struct at fi = index_of(&f, i);
        struct loss_point p;
        TRY(read_loss_point(v, &fi, &p));
        r->accuracy_curve[i] = (struct accuracy_point){p.step, p.time_s, p.loss};
    }
    return 0;
}

static int read_loss_curve(const cJSON *j, const struct at *at, struct report *r)
{
    struct at f = key_of(at, "loss_curve");
    const cJSON *lc = need_as(j, &f, cJSON_Array);
    if (!lc) return ERR_INPUT;
    int n = cJSON_GetArraySize(lc);
    if (n > 0 && !(r->loss_curve = XCALLOC(at->e, (size_t)n, sizeof *r->loss_curve)))
        return ERR_NOMEM;
    r->n_loss_curve = n;
    int i = 0;
    for (const cJSON *v = lc->child; v; v = v->next, i++) {
        struct at fi = index_of(&f, i);
        TRY(read_loss_point(v, &fi, &r->loss_curve[i]));
    }
    return 0;
}

/* "steps_per_worker" (optional: later than version 1): one whole number per
 * entry of per_rank, read before it into per_rank[i].steps. */
static int read_steps_per_worker(const cJSON *j, const struct at *at, struct report *r)
{
    const cJSON *spw = cJSON_GetObjectItemCaseSensitive(j, "steps_per_worker");
    if (!spw) return 0;
    struct at f = key_of(at, "steps_per_worker");
    if (!cJSON_IsArray(spw)) return bad(&f, "is %s, not an array", type_name(spw));
    if (cJSON_GetArraySize(spw) != r->n_per_rank)
        return bad(&f, "has %d entries, per_rank %d: one a worker", cJSON_GetArraySize(spw),
                   r->n_per_rank);
    int i = 0;
    for (const cJSON *v = spw->child; v; v = v->next, i++) {
        struct at fi = index_of(&f, i);
        TRY(as_whole(v, &fi, WHOLE_MAX, &r->per_rank[i].steps));
    }
    return 0;
}

static int read_per_rank(const cJSON *j, const struct at *at, struct report *r)
{
    struct at f = key_of(at, "per_rank");
    const cJSON *pr = need_as(j, &f, cJSON_Array);
    if (!pr) return ERR_INPUT;
    int n = cJSON_GetArraySize(pr);
    if (n > 0 && !(r->per_rank = XCALLOC(at->e, (size_t)n, sizeof *r->per_rank)))
        return ERR_NOMEM;
    r->n_per_rank = n;
    int i = 0;
    for (const cJSON *v = pr->child; v; v = v->next, i++) {
        struct at fi = index_of(&f, i);
        if (!cJSON_IsObject(v)) return bad(&fi, "is %s, not an object", type_name(v));
        TRY(read_fields(v, &fi, &r->per_rank[i], TABLE(rank_time_fields)));
        TRY(read_fields_if_present(v, &fi, &r->per_rank[i], TABLE(rank_time_later_fields)));
    }
    return read_steps_per_worker(j, at, r);
}

/* null, or a number: a non-finite time written as null reads back as
 * "never reached", which is what a consumer would make of it anyway. */
static int read_time_to_accuracy(const cJSON *j, const struct at *at, struct report *r)
{
    struct at f = key_of(at, "time_to_accuracy_s");
    const cJSON *v = need(j, &f);
    if (!v) return ERR_INPUT;
    r->has_time_to_accuracy = !cJSON_IsNull(v);
    return r->has_time_to_accuracy ? as_real(v, &f, &r->time_to_accuracy_s) : 0;
}

/* Fields in report_to_json's order, so the first complaint is about the
 * first bad field of the text. */
static int read_report(const cJSON *j, const struct at *at, struct report *r,
                       struct config *c)
{
    if (!cJSON_IsObject(j)) return bad(at, "is %s, not a report (an object)", type_name(j));
    TRY(read_version(j, at, "strata_report", REPORT_FORMAT_VERSION));
    TRY(read_mode(j, at, r));
    TRY(read_strategy(j, at, r));
    TRY(read_field(j, at, r, &devices_field));
    if (r->devices < 1) {
        struct at f = key_of(at, "devices");
        return bad(&f, "is 0: a run has at least one device");
    }
    TRY(read_config(j, at, r, c));
    TRY(read_object(j, at, "step_time_s", r, TABLE(step_time_fields)));
    TRY(read_field(j, at, r, &throughput_field));
    TRY(read_fields_if_present(j, at, r, TABLE(report_later_fields)));
    TRY(read_breakdown(j, at, r));
    TRY(read_field(j, at, r, &bubble_field));
    TRY(read_object(j, at, "staleness", r, TABLE(staleness_fields)));
    TRY(read_histogram(j, at, r));
    TRY(read_object(j, at, "memory_bytes_per_device", r, TABLE(memory_fields)));
    TRY(read_loss_curve(j, at, r));
    TRY(read_accuracy_curve(j, at, r));
    TRY(read_optional(j, at, "final", r, TABLE(final_fields), &r->has_final));
    TRY(read_time_to_accuracy(j, at, r));
    TRY(read_per_rank(j, at, r));
    return read_optional(j, at, "failure", r, TABLE(failure_fields), &r->failure.happened);
}

/* --- Documents ----------------------------------------------------------------
 * ARCHITECTURE.md, Reports: a report, or a list of entries that are reports
 * or hold them under fixed keys. */

static const struct doc_kind {
    const char *tag;          /* the version field that names the kind */
    int version;              /* its value */
    const char *outer;        /* a list whose entries hold the list below; NULL: none */
    const char *list;         /* the entries; NULL: the document is one report */
    const char *member[2];    /* an entry's reports; {NULL}: the entry is one */
    int per_entry;
} doc_kinds[] = {
    {"strata_report", 1, NULL, NULL, {NULL}, 1},
    {"strata_compare", 1, NULL, "reports", {NULL}, 1},
    {"strata_sweep", 1, NULL, "points", {"report"}, 1},
    {"strata_validate", 1, NULL, "rows", {"predicted", "measured"}, 2},
    /* version 2: a matrix, cells[].rows[] (bench/validate.h) */
    {"strata_validate", 2, "cells", "rows", {"predicted", "measured"}, 2},
};

/* The kind of root: by its tag, and among a tag's versions the one root
 * has (else the newest, whose read_version then names what was found). */
static int find_kind(const cJSON *root, const struct at *top, const struct doc_kind **out)
{
    *out = NULL;
    for (size_t i = 0; i < N_OF(doc_kinds); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, doc_kinds[i].tag);
        if (!v) continue;
        if (*out && strcmp((*out)->tag, doc_kinds[i].tag))
            return bad(top, "has both \"%s\" and \"%s\": which kind is it?", (*out)->tag,
                       doc_kinds[i].tag);
        if (!*out || !(cJSON_IsNumber(v) && v->valuedouble == (*out)->version))
            *out = &doc_kinds[i];
    }
    if (!*out)
        return bad(top, "has no \"strata_report\", \"strata_compare\", \"strata_sweep\" or "
                        "\"strata_validate\" field (not a strata report?)");
    return 0;
}

static int alloc_doc(struct report_doc *d, int n, struct err *e)
{
    if (n == 0) return 0;
    d->reports = XCALLOC(e, (size_t)n, sizeof *d->reports);
    d->configs = XCALLOC(e, (size_t)n, sizeof *d->configs);
    if (!d->reports || !d->configs) return ERR_NOMEM;
    d->n = n;
    return 0;
}

static int read_entry(const cJSON *entry, const struct at *at, const struct doc_kind *k,
                      struct report_doc *d, int first)
{
    if (!k->member[0]) return read_report(entry, at, &d->reports[first], &d->configs[first]);
    if (!cJSON_IsObject(entry)) return bad(at, "is %s, not an object", type_name(entry));
    for (int m = 0; m < k->per_entry; m++) {
        struct at f = key_of(at, k->member[m]);
        const cJSON *v = need(entry, &f);
        if (!v) return ERR_INPUT;
        TRY(read_report(v, &f, &d->reports[first + m], &d->configs[first + m]));
    }
    return 0;
}

/* outer[i].list[j]: the entries, in order. Two passes: count, then read. */
static int read_nested(const cJSON *root, const struct at *top, const struct doc_kind *k,
                       struct report_doc *d)
{
    struct at fo = key_of(top, k->outer);
    const cJSON *outer = need_as(root, &fo, cJSON_Array);
    if (!outer) return ERR_INPUT;
    int n = 0, i = 0;
    for (const cJSON *o = outer->child; o; o = o->next, i++) {
        struct at foi = index_of(&fo, i);
        if (!cJSON_IsObject(o)) return bad(&foi, "is %s, not an object", type_name(o));
        struct at fl = key_of(&foi, k->list);
        const cJSON *list = need_as(o, &fl, cJSON_Array);
        if (!list) return ERR_INPUT;
        n += cJSON_GetArraySize(list);
    }
    TRY(alloc_doc(d, n * k->per_entry, top->e));
    int at = 0;
    i = 0;
    for (const cJSON *o = outer->child; o; o = o->next, i++) {
        struct at foi = index_of(&fo, i), fl = key_of(&foi, k->list);
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, k->list);
        int j = 0;
        for (const cJSON *entry = list->child; entry; entry = entry->next, j++, at++) {
            struct at fj = index_of(&fl, j);
            TRY(read_entry(entry, &fj, k, d, at * k->per_entry));
        }
    }
    return 0;
}

static int read_doc(const cJSON *root, const struct at *top, struct report_doc *d)
{
    if (!cJSON_IsObject(root))
        return bad(top, "is %s, not an object (not a strata report?)", type_name(root));
    const struct doc_kind *k;
    TRY(find_kind(root, top, &k));
    if (!k->list) {
        TRY(alloc_doc(d, 1, top->e));
        return read_report(root, top, &d->reports[0], &d->configs[0]);
    }
    TRY(read_version(root, top, k->tag, k->version));
    if (k->outer) return read_nested(root, top, k, d);
    struct at f = key_of(top, k->list);
    const cJSON *list = need_as(root, &f, cJSON_Array);
    if (!list) return ERR_INPUT;
    TRY(alloc_doc(d, cJSON_GetArraySize(list) * k->per_entry, top->e));
    int i = 0;
    for (const cJSON *entry = list->child; entry; entry = entry->next, i++) {
        struct at fi = index_of(&f, i);
        TRY(read_entry(entry, &fi, k, d, i * k->per_entry));
    }
    return 0;
}

/* --- Text and files ------------------------------------------------------------ */

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
static int parse_json(const char *text, size_t len, const char *name, cJSON **out,
                      struct err *e)
{
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

int report_doc_parse(const char *text, size_t len, const char *name, struct report_doc *out,
                     struct err *e)
{
    memset(out, 0, sizeof *out);
    if (!name) name = "report";
    cJSON *root = NULL;
    TRY(parse_json(text, len, name, &root, e));
    struct report_doc d = {0};
    struct at top = {.file = name, .e = e};
    int rc = read_doc(root, &top, &d);
    cJSON_Delete(root);
    if (rc < 0) report_doc_release(&d);
    else *out = d;
    return rc;
}

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
    if ((unsigned long long)st.st_size > REPORT_MAX_BYTES)
        return err_set(e, ERR_INPUT,
                       "cannot read '%s': it is %lld bytes, over the %zu MiB a report may be "
                       "(not a strata report?)",
                       path, (long long)st.st_size, REPORT_MAX_BYTES >> 20);
    *hint = (size_t)st.st_size + 1;  /* + 1: the read that sees the end */
    return 0;
}

/* The whole file, at most REPORT_MAX_BYTES; caller frees *text. */
static int slurp(const char *path, char **text, size_t *len, struct err *e)
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
        if (buf.len > REPORT_MAX_BYTES)
            rc = err_set(e, ERR_INPUT, "cannot read '%s': it is over the %zu MiB a report may be",
                         path, REPORT_MAX_BYTES >> 20);
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

int report_doc_read(const char *path, struct report_doc *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    TRY(slurp(path, &text, &len, e));
    int rc = report_doc_parse(text, len, path, out, e);
    free(text);
    return rc;
}

void report_doc_release(struct report_doc *d)
{
    if (!d) return;
    for (int i = 0; i < d->n; i++) {
        if (d->reports) report_release(&d->reports[i]);
        if (d->configs) config_release(&d->configs[i]);
    }
    free(d->reports);
    free(d->configs);
    memset(d, 0, sizeof *d);
}

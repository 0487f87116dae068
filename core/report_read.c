/* Documents of reports read back, for commands that consume them (compare
 * --mode real, plot, validate): which kind a document is, where its reports
 * are, and what its entries say beside them. One report is read by
 * report_json.c's table; the text and the file by json_doc.c.
 *
 * Every message names the file and the field as a path a person can find
 * with jq: r.json: "reports[1].staleness.histogram[3]" is -2, not ... */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "json_doc.h"
#include "report.h"

#define N_OF(a) (sizeof (a) / sizeof *(a))

/* What an entry says beside its reports: optional, NaN when absent. */
#define ENTRY(k, member) \
    {.key = (k), .kind = JSON_REAL, .offset = offsetof(struct report_doc_entry, member), \
     .flags = JSON_OPTIONAL}

static const struct json_field sweep_point_fields[] = {
    ENTRY("devices", devices),
    ENTRY("speedup", speedup),
    ENTRY("efficiency", efficiency),
};
static const struct json_field validate_row_fields[] = {
    ENTRY("predicted_step_s", predicted_step_s),
    ENTRY("measured_step_s", measured_step_s),
};
static const struct json_table sweep_point = JSON_TABLE(JSON_SHAPE_OBJECT, sweep_point_fields);
static const struct json_table validate_row = JSON_TABLE(JSON_SHAPE_OBJECT, validate_row_fields);

/* ARCHITECTURE.md, Reports: a report, or a list of entries that are reports
 * or hold them under fixed keys. */
static const struct doc_kind {
    const char *tag;          /* the version field that names the kind */
    int version;              /* its value */
    const char *outer;        /* a list whose entries hold the list below; NULL: none */
    const char *list;         /* the entries; NULL: the document is one report */
    const char *member[2];    /* an entry's reports; {NULL}: the entry is one */
    int per_entry;
    const struct json_table *entry;   /* what an entry says beside; NULL: nothing */
} doc_kinds[] = {
    {"strata_report", 1, NULL, NULL, {NULL}, 1, NULL},
    {"strata_compare", 1, NULL, "reports", {NULL}, 1, NULL},
    {"strata_sweep", 1, NULL, "points", {"report"}, 1, &sweep_point},
    {"strata_validate", 1, NULL, "rows", {"predicted", "measured"}, 2, &validate_row},
    /* version 2: a matrix, cells[].rows[] (bench/validate.h) */
    {"strata_validate", 2, "cells", "rows", {"predicted", "measured"}, 2, &validate_row},
};

/* The kind of root: by its tag, and among a tag's versions the one root
 * has (else the newest, whose version check then names what was found). */
static int find_kind(const cJSON *root, const struct json_at *top,
                     const struct doc_kind **out)
{
    *out = NULL;
    for (size_t i = 0; i < N_OF(doc_kinds); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, doc_kinds[i].tag);
        if (!v) continue;
        if (*out && strcmp((*out)->tag, doc_kinds[i].tag))
            return json_bad(top, "has both \"%s\" and \"%s\": which kind is it?", (*out)->tag,
                            doc_kinds[i].tag);
        if (!*out || !(cJSON_IsNumber(v) && v->valuedouble == (*out)->version))
            *out = &doc_kinds[i];
    }
    if (!*out)
        return json_bad(top, "has no \"strata_report\", \"strata_compare\", \"strata_sweep\" "
                             "or \"strata_validate\" field (not a strata report?)");
    return 0;
}

/* Room for n_entries entries of kind k and their reports. */
static int alloc_doc(struct report_doc *d, const struct doc_kind *k, int n_entries,
                     struct err *e)
{
    d->kind = k->tag;
    int n = n_entries * k->per_entry;
    if (n == 0) return 0;
    d->reports = XCALLOC(e, (size_t)n, sizeof *d->reports);
    d->configs = XCALLOC(e, (size_t)n, sizeof *d->configs);
    if (!d->reports || !d->configs) return ERR_NOMEM;
    d->n = n;
    if (!k->entry) return 0;
    if (!(d->entries = XCALLOC(e, (size_t)n_entries, sizeof *d->entries))) return ERR_NOMEM;
    d->n_entries = n_entries;
    return 0;
}

/* Entry i: its reports first (a file that is no report at all is told so
 * before anything else), then what it says beside them. */
static int read_entry(const cJSON *entry, const struct json_at *at, const struct doc_kind *k,
                      struct report_doc *d, int i)
{
    int first = i * k->per_entry;
    if (!k->member[0]) return report_from_json(entry, at, &d->reports[first], &d->configs[first]);
    if (!cJSON_IsObject(entry)) return json_bad(at, "is %s, not an object", json_type_name(entry));
    for (int m = 0; m < k->per_entry; m++) {
        struct json_at f = json_key(at, k->member[m]);
        const cJSON *v = json_need(entry, &f);
        if (!v) return ERR_INPUT;
        TRY(report_from_json(v, &f, &d->reports[first + m], &d->configs[first + m]));
    }
    if (!k->entry) return 0;
    struct report_doc_entry *x = &d->entries[i];
    *x = (struct report_doc_entry){first, NAN, NAN, NAN, NAN, NAN};
    return json_read_fields(entry, at, x, k->entry, NULL);
}

/* The entries' lists: root's k->list, or each outer[i]'s. */
static int for_each_list(const cJSON *root, const struct json_at *top,
                         const struct doc_kind *k, int *n_entries,
                         int (*visit)(const cJSON *list, const struct json_at *at,
                                      const struct doc_kind *k, struct report_doc *d,
                                      int *next),
                         struct report_doc *d)
{
    if (!k->outer) {
        struct json_at f = json_key(top, k->list);
        const cJSON *list = json_need_as(root, &f, cJSON_Array);
        return list ? visit(list, &f, k, d, n_entries) : ERR_INPUT;
    }
    struct json_at fo = json_key(top, k->outer);
    const cJSON *outer = json_need_as(root, &fo, cJSON_Array);
    if (!outer) return ERR_INPUT;
    int i = 0;
    for (const cJSON *o = outer->child; o; o = o->next, i++) {
        struct json_at foi = json_index(&fo, i);
        if (!cJSON_IsObject(o)) return json_bad(&foi, "is %s, not an object", json_type_name(o));
        struct json_at fl = json_key(&foi, k->list);
        const cJSON *list = json_need_as(o, &fl, cJSON_Array);
        if (!list) return ERR_INPUT;
        TRY(visit(list, &fl, k, d, n_entries));
    }
    return 0;
}

static int count_list(const cJSON *list, const struct json_at *at, const struct doc_kind *k,
                      struct report_doc *d, int *n)
{
    (void)at, (void)k, (void)d;
    *n += cJSON_GetArraySize(list);
    return 0;
}

static int read_list(const cJSON *list, const struct json_at *at, const struct doc_kind *k,
                     struct report_doc *d, int *next)
{
    int j = 0;
    for (const cJSON *entry = list->child; entry; entry = entry->next, j++, (*next)++) {
        struct json_at fj = json_index(at, j);
        TRY(read_entry(entry, &fj, k, d, *next));
    }
    return 0;
}

/* Two passes over the lists: count, allocate, read. */
static int read_doc(const cJSON *root, const struct json_at *top, struct report_doc *d)
{
    if (!cJSON_IsObject(root))
        return json_bad(top, "is %s, not an object (not a strata report?)", json_type_name(root));
    const struct doc_kind *k;
    TRY(find_kind(root, top, &k));
    if (!k->list) {
        TRY(alloc_doc(d, k, 1, top->e));
        return report_from_json(root, top, &d->reports[0], &d->configs[0]);
    }
    TRY(json_read_version(root, top, k->tag, k->version));
    int n = 0, next = 0;
    TRY(for_each_list(root, top, k, &n, count_list, d));
    TRY(alloc_doc(d, k, n, top->e));
    return for_each_list(root, top, k, &next, read_list, d);
}

int report_doc_parse(const char *text, size_t len, const char *name, struct report_doc *out,
                     struct err *e)
{
    memset(out, 0, sizeof *out);
    if (!name) name = "report";
    cJSON *root = NULL;
    TRY(json_parse(text, len, name, &root, e));
    struct report_doc d = {0};
    struct json_at top = {.file = name, .e = e};
    int rc = read_doc(root, &top, &d);
    cJSON_Delete(root);
    if (rc < 0) report_doc_release(&d);
    else *out = d;
    return rc;
}

int report_doc_read(const char *path, struct report_doc *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    TRY(json_slurp(path, &text, &len, e));
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
    free(d->entries);
    memset(d, 0, sizeof *d);
}

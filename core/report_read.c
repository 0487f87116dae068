/* Documents of reports read back, for commands that consume them (compare
 * --mode real, plot, validate): which kind a document is, where its reports
 * are, and what its entries say beside them. One report is read by
 * report_json.c's table; the text and the file by json_doc.c.
 *
 * Every message names the file and the field as a path a person can find
 * with jq: r.json: "reports[1].staleness.histogram[3]" is -2, not ... */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_doc.h"
#include "report.h"

#define N_OF(a) (sizeof (a) / sizeof *(a))

/* What an entry says beside its reports: optional, NaN when absent. */
#define ENTRY(k, member) \
    JSON_FIELD(k, JSON_REAL, struct report_doc_entry, member, .flags = JSON_OPTIONAL)

static const struct json_field sweep_point_fields[] = {
    ENTRY("devices", devices),
    ENTRY("speedup", speedup),
    ENTRY("efficiency", efficiency),
};
static const struct json_field validate_row_fields[] = {
    ENTRY("predicted_step_s", predicted_step_s),
    ENTRY("measured_step_s", measured_step_s),
};
/* A compare document's entry is its report, which carries its speedup
 * (absent in documents written before it did). */
static const struct json_field compare_entry_fields[] = {
    ENTRY("speedup", speedup),
};
static const struct json_table sweep_point = JSON_TABLE(JSON_SHAPE_OBJECT, sweep_point_fields);
static const struct json_table compare_entry =
    JSON_TABLE(JSON_SHAPE_OBJECT, compare_entry_fields);
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
    const struct json_table *entry;   /* what an entry says beside its reports (an entry
                                       * that is a report: among its fields); NULL: nothing */
} doc_kinds[] = {
    {"strata_report", 1, NULL, NULL, {NULL}, 1, NULL},
    {"strata_compare", 1, NULL, "reports", {NULL}, 1, &compare_entry},
    {"strata_sweep", 1, NULL, "points", {"report"}, 1, &sweep_point},
    {"strata_validate", 1, NULL, "rows", {"predicted", "measured"}, 2, &validate_row},
    /* version 2: a matrix, cells[].rows[] (bench/validate.h) */
    {"strata_validate", 2, "cells", "rows", {"predicted", "measured"}, 2, &validate_row},
    /* strata replay (bench/replay.h): one entry, the document itself; its
     * what-if report (null when none was asked) is not read, its "whatif"
     * figures are (read_replay_whatif) */
    {"strata_replay", 1, NULL, NULL, {"measured", "replayed"}, 2, NULL},
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
        return json_bad(top, "has no \"strata_report\", \"strata_compare\", \"strata_sweep\", "
                             "\"strata_validate\" or \"strata_replay\" field (not a strata "
                             "report?)");
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

/* --- Ranges -------------------------------------------------------------------
 * The field table checks types; these are the values a run can give. A
 * report with accuracy -1e308 or a negative time is no run's: plots and
 * tables would draw it (gnuplot failed on one). Null (NaN: not known) is
 * left alone. Times computed as differences may round a hair below 0, so
 * they get 1 us of slack and fractions 1e-9. */

#define TIME_SLACK_S 1e-6
#define FRACTION_SLACK 1e-9

/* at's value x within [lo - slack, hi + slack], or NaN. */
static int check_value(const struct json_at *at, double x, double lo, double hi, double slack)
{
    if (isnan(x) || (x >= lo - slack && x <= hi + slack)) return 0;
    if (isinf(hi)) return json_bad(at, "is %g, not a number >= %g", x, lo);
    return json_bad(at, "is %g, not in [%g, %g]", x, lo, hi);
}

static int check_time(const struct json_at *at, double x)
{
    return check_value(at, x, 0, INFINITY, TIME_SLACK_S);
}

static int check_share(const struct json_at *at, double x)
{
    return check_value(at, x, 0, 1, FRACTION_SLACK);
}

/* up.key.sub (sub NULL: up.key) as a time or a share. */
static int time_at(const struct json_at *up, const char *key, const char *sub, double x)
{
    struct json_at k = json_key(up, key);
    struct json_at f = sub ? json_key(&k, sub) : k;
    return check_time(&f, x);
}

static int share_at(const struct json_at *up, const char *key, const char *sub, double x)
{
    struct json_at k = json_key(up, key);
    struct json_at f = sub ? json_key(&k, sub) : k;
    return check_share(&f, x);
}

/* How long the run took, as its report says it: the longest rank's
 * compute + comm + idle + down (each rank's time to its end, core/
 * analysis.c), or its mean step time over the steps its curves reach,
 * whichever is more (a report need not have both). No curve point is
 * measured after the run's end. NaN when a null among them leaves it
 * unknown (the larger could be the null). */
static double run_length_s(const struct report *r)
{
    double length_s = 0;
    for (int i = 0; i < r->n_per_rank; i++) {
        const struct rank_time *t = &r->per_rank[i];
        double rank_s = t->compute_s + t->comm_s + t->idle_s + t->down_s;
        if (isnan(rank_s)) return NAN;
        if (rank_s > length_s) length_s = rank_s;
    }
    int64_t steps = 0;
    for (int i = 0; i < r->n_loss_curve; i++)
        if (r->loss_curve[i].step + 1 > steps) steps = r->loss_curve[i].step + 1;
    for (int i = 0; i < r->n_accuracy_curve; i++)
        if (r->accuracy_curve[i].step + 1 > steps) steps = r->accuracy_curve[i].step + 1;
    double by_steps_s = steps ? r->step_time_s.mean * (double)steps : 0;
    if (isnan(by_steps_s)) return NAN;
    /* a resumed run's curves go on from the run's clock at its resume */
    double resumed_s = r->has_time_resumed ? r->time_resumed_s : 0;
    return resumed_s + (by_steps_s > length_s ? by_steps_s : length_s);
}

/* A curve point may come this far past run_length_s: a real rank notes its
 * loss just after its step's last span (microseconds later), and a report
 * edited by hand rounds; a time beyond it (1e308 s) is no run's, and
 * gnuplot drew it. An accuracy point is bounded so only when a later step
 * trained after it: a real run's final evaluation comes after its last
 * span, and no figure of the report says how long it took. */
#define CURVE_END_SLACK_S 1.0
#define CURVE_END_SLACK_FRACTION 0.01

/* A curve's [step, time_s, value] triples: time known, >= 0 and, for a
 * step before before_step, within the run (run_s, with the slack above,
 * when known); value a loss (>= 0) or an accuracy ([0, 1]), or null. */
struct curve_layout {
    size_t point_bytes, step_offset, time_offset, value_offset;
};
#define CURVE_LAYOUT(type, value)                                                         \
    ((struct curve_layout){sizeof(type), offsetof(type, step), offsetof(type, time_s),    \
                           offsetof(type, value)})

static int check_curve(const struct json_at *at, const char *key, int n, const void *points,
                       struct curve_layout l, bool is_share, double run_s, int64_t before_step)
{
    double last_s = run_s * (1 + CURVE_END_SLACK_FRACTION) + CURVE_END_SLACK_S;
    struct json_at c = json_key(at, key);
    for (int i = 0; i < n; i++) {
        const char *p = (const char *)points + (size_t)i * l.point_bytes;
        double time_s, value;
        int64_t step;
        memcpy(&step, p + l.step_offset, sizeof step);
        memcpy(&time_s, p + l.time_offset, sizeof time_s);
        memcpy(&value, p + l.value_offset, sizeof value);
        struct json_at ci = json_index(&c, i);
        struct json_at ft = json_index(&ci, 1), fv = json_index(&ci, 2);
        /* a point's value may be unknown (a loss gone NaN), its time never:
         * every run writes when it measured; a null time reached gnuplot,
         * which failed ("x range is invalid") */
        if (isnan(time_s)) return json_bad(&ft, "is null: a curve point's time is always known");
        TRY(check_time(&ft, time_s));
        if (step < before_step && time_s > last_s)   /* false when last_s is NaN: unknown */
            return json_bad(&ft, "is %g s, after the run's end (%g s, by its per_rank times "
                            "and step time): a curve point's time is when the run measured it",
                            time_s, run_s);
        TRY(is_share ? check_share(&fv, value) : check_time(&fv, value));
    }
    return 0;
}

static int check_ranges(const struct report *r, const struct json_at *at)
{
    TRY(time_at(at, "step_time_s", "mean", r->step_time_s.mean));
    TRY(time_at(at, "step_time_s", "p50", r->step_time_s.p50));
    TRY(time_at(at, "step_time_s", "p99", r->step_time_s.p99));
    TRY(time_at(at, "throughput_samples_per_s", NULL, r->throughput_samples_per_s));
    TRY(share_at(at, "breakdown", "compute", r->breakdown.compute));
    TRY(share_at(at, "breakdown", "comm", r->breakdown.comm));
    TRY(share_at(at, "breakdown", "idle", r->breakdown.idle));
    TRY(share_at(at, "breakdown", "down", r->breakdown.down));
    TRY(share_at(at, "bubble_fraction", NULL, r->bubble_fraction));
    TRY(time_at(at, "staleness", "mean", r->staleness.mean));
    if (r->has_time_resumed) TRY(time_at(at, "final", "time_resumed_s", r->time_resumed_s));
    double run_s = run_length_s(r);
    int64_t last_loss_step = -1;
    for (int i = 0; i < r->n_loss_curve; i++)
        if (r->loss_curve[i].step > last_loss_step) last_loss_step = r->loss_curve[i].step;
    TRY(check_curve(at, "loss_curve", r->n_loss_curve, r->loss_curve,
                    CURVE_LAYOUT(struct loss_point, loss), false, run_s, INT64_MAX));
    /* an evaluation after step s (its step: s + 1 steps done) came before
     * step s + 1 trained when a loss point of a later step exists */
    TRY(check_curve(at, "accuracy_curve", r->n_accuracy_curve, r->accuracy_curve,
                    CURVE_LAYOUT(struct accuracy_point, accuracy), true, run_s,
                    last_loss_step + 1));
    if (r->has_final) {
        TRY(time_at(at, "final", "loss", r->final.loss));
        TRY(share_at(at, "final", "test_accuracy", r->final.test_accuracy));
    }
    if (r->has_time_to_accuracy)
        TRY(time_at(at, "time_to_accuracy_s", NULL, r->time_to_accuracy_s));
    struct json_at pr = json_key(at, "per_rank");
    for (int i = 0; i < r->n_per_rank; i++) {
        const struct rank_time *t = &r->per_rank[i];
        struct json_at ri = json_index(&pr, i);
        TRY(time_at(&ri, "compute_s", NULL, t->compute_s));
        TRY(time_at(&ri, "comm_s", NULL, t->comm_s));
        TRY(time_at(&ri, "idle_s", NULL, t->idle_s));
        TRY(time_at(&ri, "down_s", NULL, t->down_s));
    }
    if (r->failure.happened) {
        TRY(time_at(at, "failure", "time_s", r->failure.time_s));
        TRY(time_at(at, "failure", "lost_s", r->failure.lost_s));
        TRY(time_at(at, "failure", "detect_s", r->failure.detect_s));
        TRY(time_at(at, "failure", "relaunch_s", r->failure.relaunch_s));
        TRY(time_at(at, "failure", "redone_s", r->failure.redone_s));
        TRY(time_at(at, "failure", "checkpoint_s", r->failure.checkpoint_s));
    }
    return 0;
}

/* One report and its ranges. */
static int read_report(const cJSON *v, const struct json_at *at, struct report *r,
                       struct config *c)
{
    TRY(report_from_json(v, at, r, c));
    return check_ranges(r, at);
}

/* Entry i: its reports first (a file that is no report at all is told so
 * before anything else), then what it says beside them. */
static int read_entry(const cJSON *entry, const struct json_at *at, const struct doc_kind *k,
                      struct report_doc *d, int i)
{
    int first = i * k->per_entry;
    if (!k->member[0])
        TRY(read_report(entry, at, &d->reports[first], &d->configs[first]));
    else if (!cJSON_IsObject(entry))
        return json_bad(at, "is %s, not an object", json_type_name(entry));
    for (int m = 0; k->member[0] && m < k->per_entry; m++) {
        struct json_at f = json_key(at, k->member[m]);
        const cJSON *v = json_need(entry, &f);
        if (!v) return ERR_INPUT;
        TRY(read_report(v, &f, &d->reports[first + m], &d->configs[first + m]));
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

/* A sweep document's axis, from its optional "option", "scaling" and
 * "mode" strings (documents written before them have none: has_axis stays
 * false); one of another type is ERR_INPUT naming it. */
static int read_sweep_axis(const cJSON *root, const struct json_at *top, struct report_doc *d)
{
    static const char *const keys[] = {"option", "scaling", "mode"};
    const char *values[N_OF(keys)] = {NULL};
    for (size_t i = 0; i < N_OF(keys); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, keys[i]);
        if (!v) continue;
        struct json_at f = json_key(top, keys[i]);
        if (!cJSON_IsString(v)) return json_bad(&f, "is %s, not a string", json_type_name(v));
        values[i] = v->valuestring;
    }
    if (!values[0]) return 0;
    if (strlen(values[0]) >= sizeof d->sweep.option) {
        struct json_at f = json_key(top, keys[0]);
        return json_bad(&f, "is %zu characters long, not an option's name", strlen(values[0]));
    }
    snprintf(d->sweep.option, sizeof d->sweep.option, "%s", values[0]);
    d->sweep.has_axis = true;
    d->sweep.is_weak = values[1] && !strcmp(values[1], "weak");
    d->sweep.is_real = values[2] && !strcmp(values[2], "real");
    return 0;
}

/* A replay document's what-if, from its "whatif" object (null when none
 * was asked): the third bar `strata replay --plot` draws, which strata plot
 * draws again; one of another shape is ERR_INPUT naming it. */
static int read_replay_whatif(const cJSON *root, const struct json_at *top, struct report_doc *d)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "whatif");
    if (!w || cJSON_IsNull(w)) return 0;
    struct json_at at = json_key(top, "whatif");
    if (!cJSON_IsObject(w)) return json_bad(&at, "is %s, not an object or null", json_type_name(w));
    struct json_at at_what = json_key(&at, "what"), at_step = json_key(&at, "step_s");
    const cJSON *what = json_need(w, &at_what), *step = json_need(w, &at_step);
    if (!what || !step) return ERR_INPUT;
    if (!cJSON_IsString(what))
        return json_bad(&at_what, "is %s, not a string", json_type_name(what));
    TRY(json_as_real(step, &at_step, &d->replay.step_s));
    snprintf(d->replay.what, sizeof d->replay.what, "%s", what->valuestring);
    d->replay.has_whatif = true;
    return 0;
}

/* Two passes over the lists: count, allocate, read. */
static int read_doc(const cJSON *root, const struct json_at *top, struct report_doc *d)
{
    if (!cJSON_IsObject(root))
        return json_bad(top, "is %s, not an object (not a strata report?)", json_type_name(root));
    const struct doc_kind *k;
    TRY(find_kind(root, top, &k));
    if (!k->list && !k->member[0]) {
        TRY(alloc_doc(d, k, 1, top->e));
        return read_report(root, top, &d->reports[0], &d->configs[0]);
    }
    if (!k->list) {   /* the document is its one entry */
        TRY(json_read_version(root, top, k->tag, k->version));
        TRY(alloc_doc(d, k, 1, top->e));
        TRY(read_entry(root, top, k, d, 0));
        return strcmp(k->tag, "strata_replay") ? 0 : read_replay_whatif(root, top, d);
    }
    TRY(json_read_version(root, top, k->tag, k->version));
    int n = 0, next = 0;
    TRY(for_each_list(root, top, k, &n, count_list, d));
    TRY(alloc_doc(d, k, n, top->e));
    TRY(for_each_list(root, top, k, &next, read_list, d));
    return strcmp(k->tag, "strata_sweep") ? 0 : read_sweep_axis(root, top, d);
}

/* The documents of root (named name in messages) into *out, which stays
 * empty on a failure; deletes root. */
static int doc_of(cJSON *root, const char *name, struct report_doc *out, struct err *e)
{
    struct report_doc d = {0};
    struct json_at top = {.file = name, .e = e};
    int rc = read_doc(root, &top, &d);
    cJSON_Delete(root);
    if (rc < 0) report_doc_release(&d);
    else *out = d;
    return rc;
}

int report_doc_parse(const char *text, size_t len, const char *name, struct report_doc *out,
                     struct err *e)
{
    memset(out, 0, sizeof *out);
    if (!name) name = "report";
    cJSON *root = NULL;
    TRY(json_parse(text, len, name, &root, e));
    return doc_of(root, name, out, e);
}

int report_doc_read(const char *path, struct report_doc *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    cJSON *root = NULL;
    TRY(json_parse_file(path, &root, e));
    return doc_of(root, path, out, e);
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

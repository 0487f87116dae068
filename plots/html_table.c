/* The report page's tables: every report of the page's JSON documents, a
 * row each, read from the JSON itself (html_page.h says why), and a
 * replay's per-rank table; each with the legend of the columns it shows. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/json_doc.h"
#include "../core/vec.h"
#include "html_page.h"

#define PATH_BYTES 256
#define CELL_PATH_BYTES (PATH_BYTES + 80)   /* a row's path and a column's key */

/* How a column's numbers are shown. */
enum col_kind {
    COL_TEXT,    /* a string, as it is */
    COL_NUM,     /* %.4g */
    COL_COUNT,   /* %.7g: samples per second, devices: whole digits */
    COL_TIME,    /* seconds, shown in s, ms or µs as the column's largest value suits */
    COL_SHARE,   /* a fraction, shown in % to 0.01 points (the terminal shows 0.1):
                  * a difference of two equal times, 2.2e-16, shows as 0 */
    COL_MIB,     /* bytes, shown in MiB */
    COL_AXIS,    /* a sweep point's value of its varied option: text as it is, a
                  * number as a count; headed by the option's name */
};

/* When a column is shown. */
enum col_show {
    SHOW_ALWAYS,
    SHOW_IF_ANY,       /* when some row has a number there */
    SHOW_IF_NONZERO,   /* when some row's number there is not 0, as the terminal shows it
                        * (a field every report writes) */
};

struct column {
    const char *key;       /* path inside the report (or its parent, is_parent) */
    const char *head;
    enum col_kind kind;
    enum col_show show;
    bool is_parent;        /* a field of the object holding the report: a sweep
                            * point's speedup, a validation row's error, a what-if's
                            * change; of the report itself where nothing holds it (a
                            * compare document's reports carry their speedup) */
    const char *legend;
};

/* The columns, in the terminal table's order (core/report.c), and what each
 * means (docs/metrics.md defines them at length). */
static const struct column columns[] = {
    {"strategy", "strategy", COL_TEXT, SHOW_ALWAYS, false,
     "the strategy; (predicted) and (measured) mark a validation's two reports, (baseline) "
     "the run speedups are measured against, (measured), (replayed) and (what-if) a replay's"},
    {"mode", "mode", COL_TEXT, SHOW_ALWAYS, false, "sim: simulated; real: measured on MPI ranks"},
    {"value", "value", COL_AXIS, SHOW_IF_ANY, true,
     "a sweep point's value of the option it varies (the column is headed by that option; "
     "not shown when it varies devices or batch, whose own columns say it)"},
    {"devices", "devices", COL_COUNT, SHOW_ALWAYS, false,
     "devices that compute (servers are extra)"},
    {"batch", "batch", COL_COUNT, SHOW_IF_ANY, true,
     "the global batch of a step, as a sweep point (or a replay's what-if) ran it"},
    {"step_time_s.mean", "step mean", COL_TIME, SHOW_ALWAYS, false, "mean time of a training step"},
    {"step_time_s.p99", "step p99", COL_TIME, SHOW_ALWAYS, false,
     "99th percentile of the step time"},
    {"throughput_samples_per_s", "samples/s", COL_COUNT, SHOW_ALWAYS, false,
     "samples whose gradient took effect, per second"},
    {"speedup", "speedup", COL_NUM, SHOW_IF_ANY, true,
     "throughput over the baseline's: compare's and sim's, mirrored on one device; a sweep "
     "point's, one device or the first value"},
    {"efficiency", "efficiency", COL_SHARE, SHOW_IF_ANY, true,
     "speedup over the ideal speedup (the devices); a sweep of another value's, samples/s over "
     "devices x one device's"},
    {"breakdown.compute", "compute", COL_SHARE, SHOW_ALWAYS, false,
     "share of device time computing"},
    {"breakdown.comm", "comm", COL_SHARE, SHOW_ALWAYS, false,
     "share of device time in exposed communication"},
    /* without it, a run with dead workers showed shares that sum to less than 100% */
    {"breakdown.down", "down", COL_SHARE, SHOW_IF_NONZERO, false,
     "share of device time after a worker died (continue) or left the job (shrink): compute + "
     "comm + down + idle = 100%"},
    {"breakdown.idle", "idle", COL_SHARE, SHOW_ALWAYS, false, "share of device time waiting"},
    {"bubble_fraction", "bubble", COL_SHARE, SHOW_ALWAYS, false,
     "share of pipeline and model ranks' time not computing (1 - compute / T, so idle and "
     "comm both count): (p-1)/(m+p-1) for GPipe and 1F1B on equal stages"},
    {"staleness.mean", "staleness", COL_NUM, SHOW_ALWAYS, false,
     "mean updates by others between a worker's pull and its push (pipelined-steps: between "
     "a gradient's parameters and its own)"},
    {"staleness.max", "max stale", COL_NUM, SHOW_ALWAYS, false, "the largest staleness seen"},
    {"memory_bytes_per_device.peak", "peak mem", COL_MIB, SHOW_ALWAYS, false,
     "peak memory of a device: parameters, gradients, optimizer, activations"},
    {"final.loss", "loss", COL_NUM, SHOW_IF_ANY, false, "loss on the test set after the last step"},
    {"final.test_accuracy", "accuracy", COL_SHARE, SHOW_IF_ANY, false,
     "accuracy on the test set after the last step"},
    {"time_to_accuracy_s", "to target", COL_TIME, SHOW_IF_ANY, false,
     "time to reach the target accuracy"},
    {"failure.lost_s", "time lost", COL_TIME, SHOW_IF_ANY, false,
     "time the run's failures cost: detection, restart, work redone"},
    {"failure.goodput", "goodput", COL_SHARE, SHOW_IF_ANY, false,
     "share of the run's time spent on work that survived failures"},
    {"predicted_step_s", "predicted", COL_TIME, SHOW_IF_ANY, true,
     "a validation row's simulated step time"},
    {"measured_step_s", "measured", COL_TIME, SHOW_IF_ANY, true,
     "a validation row's measured step time"},
    {"error", "error", COL_SHARE, SHOW_IF_ANY, true,
     "predicted / measured - 1 (a replay's: replayed / measured - 1)"},
    {"staleness.tvd", "staleness TVD", COL_NUM, SHOW_IF_ANY, true,
     "a validation row's total variation distance of the predicted and measured staleness "
     "histograms (0 = the same, 1 = disjoint); ps-async and ps-ssp rows"},
    {"change", "change", COL_SHARE, SHOW_IF_ANY, true,
     "a replay's what-if: its step time / the measured step time - 1"},
};
enum { N_COLUMNS = sizeof columns / sizeof columns[0] };

/* A replay's per-rank table (its document's "per_rank", bench/replay.h),
 * the terminal's columns in its order (cli/replay.c). */
static const struct column rank_columns[] = {
    {"rank", "rank", COL_COUNT, SHOW_ALWAYS, false, "a worker"},
    {"measured_end_s", "end measured", COL_TIME, SHOW_ALWAYS, false,
     "when the rank's last op ended in the trace"},
    {"replayed_end_s", "end replayed", COL_TIME, SHOW_ALWAYS, false,
     "when the rank's last op ended in the replay"},
    {"error", "error", COL_SHARE, SHOW_ALWAYS, false, "end replayed / end measured - 1"},
    {"measured_compute_s", "compute meas.", COL_TIME, SHOW_ALWAYS, false,
     "the rank's time computing in the trace"},
    {"replayed_compute_s", "compute repl.", COL_TIME, SHOW_ALWAYS, false,
     "the rank's time computing in the replay, with any delay it took before an op (so it may "
     "exceed compute meas.)"},
    {"straggler_share", "straggler cost", COL_SHARE, SHOW_IF_ANY, false,
     "--without-stragglers: how much shorter the replay is with this rank alone at typical op "
     "times (1 - that replay's step time / the replay's)"},
};

/* A table: its element id and its columns. */
struct table_spec {
    const char *id;
    const struct column *cols;
    int n_cols;
};
static const struct table_spec report_table = {"strata-table", columns, N_COLUMNS};
static const struct table_spec rank_table = {"strata-ranks", rank_columns,
                                             sizeof rank_columns / sizeof rank_columns[0]};
/* write_table's arrays are sized for the widest table, the reports' */
_Static_assert(sizeof rank_columns / sizeof rank_columns[0] <= N_COLUMNS,
               "the per-rank table is wider than write_table's arrays");

/* One report found in a document. */
struct row {
    int doc;
    const cJSON *report;
    const cJSON *parent;            /* the object holding it as a member (or the one its
                                     * role names); NULL */
    const char *role;               /* "predicted", "measured", "baseline" or NULL (label_of) */
    const char *what;               /* the role's words ("without stragglers"); NULL */
    char path[PATH_BYTES];          /* the report's path in its document; "" = the root */
    char parent_path[PATH_BYTES];
};
typedef VEC(struct row) row_vec;

static bool is_report(const cJSON *j)
{
    return cJSON_IsObject(j) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "strategy")) &&
           cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "step_time_s"));
}

/* The members whose reports the table marks, and how: a validation row's
 * two reports, a sweep's baselines, a replay's three. A replay's what-if
 * report is held, for the table, by its "whatif" sibling, which says what
 * it asked ("what") and what came of it ("change"), not by the document,
 * whose error is the replay's. */
static const struct label {
    const char *member, *label;
    const char *holder;   /* the sibling that holds such a report; NULL: its object */
} labels[] = {
    {"predicted", "predicted", NULL}, {"measured", "measured", NULL},
    {"baselines", "baseline", NULL}, {"replayed", "replayed", NULL},
    {"whatif_report", "what-if", "whatif"},
};

static const struct label *label_of(const char *member)
{
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        if (!strcmp(member, labels[i].member)) return &labels[i];
    return NULL;
}

/* Depth first, in document order: the order the writers put reports in.
 * role: the label of label_of the walk went through last, or NULL;
 * holder: the object j is a member of. */
static int find_reports(int doc, const cJSON *j, const cJSON *holder, const char *holder_path,
                        const char *path, const char *role, row_vec *rows)
{
    if (is_report(j)) {
        const cJSON *what = holder ? cJSON_GetObjectItemCaseSensitive(holder, "what") : NULL;
        struct row r = {.doc = doc, .report = j, .parent = holder, .role = role,
                        .what = cJSON_IsString(what) ? what->valuestring : NULL};
        snprintf(r.path, sizeof r.path, "%s", path);
        snprintf(r.parent_path, sizeof r.parent_path, "%s", holder_path);
        return vec_push(rows, r);
    }
    int i = 0;
    for (const cJSON *c = j ? j->child : NULL; c; c = c->next, i++) {
        char sub[PATH_BYTES], sub_holder[PATH_BYTES];
        if (!cJSON_IsObject(j)) {   /* an array's item: held by no object */
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
            TRY(find_reports(doc, c, NULL, path, sub, role, rows));
            continue;
        }
        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", c->string);
        const struct label *l = label_of(c->string);
        const cJSON *by = j;
        snprintf(sub_holder, sizeof sub_holder, "%s", path);
        if (l && l->holder && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, l->holder))) {
            by = cJSON_GetObjectItemCaseSensitive(j, l->holder);
            snprintf(sub_holder, sizeof sub_holder, "%.*s%s%s", PATH_BYTES / 2, path,
                     *path ? "." : "", l->holder);
        }
        TRY(find_reports(doc, c, by, sub_holder, sub, l ? l->label : role, rows));
    }
    return 0;
}

/* The value at a dotted key ("step_time_s.mean") under obj, or NULL. */
static const cJSON *at_key(const cJSON *obj, const char *key)
{
    char part[64];
    while (obj && *key) {
        size_t n = strcspn(key, ".");
        snprintf(part, sizeof part, "%.*s", (int)n, key);
        obj = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, part) : NULL;
        key += n + (key[n] == '.');
    }
    return obj;
}

static const cJSON *cell_of(const struct row *r, const struct column *c, char *path, size_t n)
{
    bool is_held = c->is_parent && r->parent;
    const cJSON *base = is_held ? r->parent : r->report;
    const char *base_path = is_held ? r->parent_path : r->path;
    snprintf(path, n, "%.*s%s%s", PATH_BYTES, base_path, *base_path ? "." : "", c->key);
    return base ? at_key(base, c->key) : NULL;
}

/* The multiplier a column's numbers are shown with, and its unit. */
static double scale_of(const struct column *c, const row_vec *rows, const char **unit)
{
    *unit = "";
    switch (c->kind) {
    case COL_SHARE: *unit = "%"; return 100;
    case COL_MIB: *unit = "MiB"; return 1.0 / 1048576;
    case COL_TIME: {
        double max = 0;
        char path[CELL_PATH_BYTES];
        for (size_t i = 0; i < rows->len; i++) {
            const cJSON *v = cell_of(&rows->items[i], c, path, sizeof path);
            if (cJSON_IsNumber(v) && fabs(v->valuedouble) > max) max = fabs(v->valuedouble);
        }
        if (max >= 1 || max == 0) { *unit = "s"; return 1; }
        if (max >= 1e-3) { *unit = "ms"; return 1e3; }
        *unit = "µs";
        return 1e6;
    }
    default: return 1;
    }
}

/* The option a sweep point varied ("straggler"), when r is one and its
 * value is not already a column of its own (devices, batch: the terminal's
 * table leaves its value column out then, as it would repeat them). */
static const char *axis_of(const struct row *r)
{
    const cJSON *option = r->parent ? cJSON_GetObjectItemCaseSensitive(r->parent, "option") : NULL;
    if (!cJSON_IsString(option) || !cJSON_GetObjectItemCaseSensitive(r->parent, "value"))
        return NULL;
    const char *name = option->valuestring;
    return strcmp(name, "devices") && strcmp(name, "batch") ? name : NULL;
}

static bool is_shown(const struct column *c, const row_vec *rows)
{
    if (c->show == SHOW_ALWAYS) return true;
    char path[CELL_PATH_BYTES];
    for (size_t i = 0; i < rows->len; i++) {
        if (c->kind == COL_AXIS) {
            if (axis_of(&rows->items[i])) return true;
            continue;
        }
        const cJSON *v = cell_of(&rows->items[i], c, path, sizeof path);
        if (cJSON_IsNumber(v) && (c->show == SHOW_IF_ANY || v->valuedouble != 0)) return true;
    }
    return false;
}

/* A column's heading: its own, or for the axis column the option the
 * points varied (the terminal's heading), "value" when documents differ. */
static const char *head_of(const struct column *c, const row_vec *rows)
{
    if (c->kind != COL_AXIS) return c->head;
    const char *name = NULL;
    for (size_t i = 0; i < rows->len; i++) {
        const char *a = axis_of(&rows->items[i]);
        if (a && name && strcmp(a, name)) return c->head;
        if (a) name = a;
    }
    return name ? name : c->head;
}

static void write_cell(FILE *out, const struct row *r, const struct column *c, double scale)
{
    char path[CELL_PATH_BYTES];
    const cJSON *v = cell_of(r, c, path, sizeof path);
    if (c->kind == COL_AXIS && !axis_of(r)) {   /* a row of a devices sweep, a baseline */
        fputs("<td></td>", out);
        return;
    }
    if (c->kind == COL_AXIS && cJSON_IsString(v)) {   /* --straggler exp:0.2, a choice */
        fputs("<td>", out);
        html_escape(out, v->valuestring);
        fputs("</td>", out);
        return;
    }
    if (c->kind == COL_TEXT) {
        fputs("<td>", out);
        html_escape(out, cJSON_IsString(v) ? v->valuestring : "");
        /* what the report is, where the document says more than "a report":
         * a validation's (predicted) and (measured), a sweep's (baseline) */
        if (!strcmp(c->key, "strategy") && r->role) {
            fprintf(out, " (%s", r->role);
            if (r->what) {   /* a what-if's question: "without stragglers, as 1f1b" */
                fputs(": ", out);
                html_escape(out, r->what);
            }
            fputc(')', out);
        }
        fputs("</td>", out);
        return;
    }
    if (!cJSON_IsNumber(v)) {   /* null (not measured) or absent */
        fputs(v ? "<td class=\"num\">–</td>" : "<td class=\"num\"></td>", out);
        return;
    }
    fprintf(out, "<td class=\"num\" data-doc=\"%d\" data-json=\"", r->doc);
    html_escape(out, path);
    fprintf(out, "\" data-scale=\"%.17g\">", scale);
    double x = v->valuedouble * scale;
    if (c->kind == COL_SHARE) x = round(x * 100) / 100 + 0.0;   /* + 0.0: no "-0" */
    /* a count of 10^7 or more in whole digits, as the terminal shows it:
     * %.7g gave 1.25434e+07 for 12543402 samples/s */
    bool is_count = c->kind == COL_COUNT || c->kind == COL_AXIS;
    fprintf(out, !is_count ? "%.4g" : fabs(x) >= 1e7 ? "%.0f" : "%.7g", x);
    fputs("</td>", out);
}

static void write_rows(FILE *out, const row_vec *rows, const struct table_spec *t,
                       const bool *shown, const double *scales)
{
    for (size_t i = 0; i < rows->len; i++) {
        fputs("<tr>", out);
        for (int k = 0; k < t->n_cols; k++)
            if (shown[k]) write_cell(out, &rows->items[i], &t->cols[k], scales[k]);
        fputs("</tr>\n", out);
    }
}

static void write_table(FILE *out, const row_vec *rows, const struct table_spec *t)
{
    bool shown[N_COLUMNS];
    double scales[N_COLUMNS];
    const char *units[N_COLUMNS];
    for (int k = 0; k < t->n_cols; k++) {
        shown[k] = is_shown(&t->cols[k], rows);
        scales[k] = scale_of(&t->cols[k], rows, &units[k]);
    }
    fprintf(out, "<div class=\"scroll\"><table id=\"%s\">\n<thead><tr>", t->id);
    for (int k = 0; k < t->n_cols; k++)
        if (shown[k]) {
            fprintf(out, "<th%s>", t->cols[k].kind == COL_TEXT ? "" : " class=\"num\"");
            html_escape(out, head_of(&t->cols[k], rows));   /* an option's name, from a document */
            fprintf(out, "%s%s%s</th>", *units[k] ? " (" : "", units[k], *units[k] ? ")" : "");
        }
    fputs("</tr></thead>\n<tbody>\n", out);
    write_rows(out, rows, t, shown, scales);
    fputs("</tbody></table></div>\n<dl class=\"legend\">\n", out);
    for (int k = 0; k < t->n_cols; k++)
        if (shown[k]) {
            fputs("<div><dt>", out);
            html_escape(out, head_of(&t->cols[k], rows));
            fprintf(out, "</dt><dd>%s</dd></div>\n", t->cols[k].legend);
        }
    fputs("</dl>\n", out);
}

/* The rows of a replay document's per-rank table (its root's "per_rank",
 * whose items say when each rank ended: a report's own per_rank, deeper
 * down, says only where its time went). */
static int find_ranks(int doc, const cJSON *root, row_vec *rows)
{
    const cJSON *ranks = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "per_rank")
                                              : NULL;
    int i = 0;
    for (const cJSON *c = cJSON_IsArray(ranks) ? ranks->child : NULL; c; c = c->next, i++) {
        if (!cJSON_GetObjectItemCaseSensitive(c, "measured_end_s")) continue;
        struct row r = {.doc = doc, .report = c};
        snprintf(r.path, sizeof r.path, "per_rank[%d]", i);
        TRY(vec_push(rows, r));
    }
    return 0;
}

int html_table_write(FILE *out, const struct html_doc *docs, int n_docs, struct err *e)
{
    row_vec rows = {0}, ranks = {0};
    cJSON **parsed = XCALLOC(e, (size_t)n_docs + 1, sizeof *parsed);
    if (!parsed) return ERR_NOMEM;
    int rc = 0;
    for (int i = 0; rc == 0 && i < n_docs; i++) {
        rc = json_parse(docs[i].json, docs[i].json_len, docs[i].source, &parsed[i], e);
        if (rc == 0 && (find_reports(i, parsed[i], NULL, "", "", NULL, &rows) < 0 ||
                        find_ranks(i, parsed[i], &ranks) < 0))
            rc = err_set(e, ERR_NOMEM, "out of memory listing the reports of %s", docs[i].source);
    }
    if (rc == 0 && rows.len == 0)
        fputs("<p>These documents hold no report.</p>\n", out);
    else if (rc == 0)
        write_table(out, &rows, &report_table);
    if (rc == 0 && ranks.len) {
        fputs("<h3>Per rank</h3>\n", out);
        write_table(out, &ranks, &rank_table);
    }
    vec_free(&rows);
    vec_free(&ranks);
    for (int i = 0; i < n_docs; i++) cJSON_Delete(parsed[i]);
    free(parsed);
    return rc;
}

/* The strata_validate document, version 2 (see validate.h). */
#include <math.h>
#include <stddef.h>

#include "../core/json_doc.h"
#include "validate.h"

#define SHARE(k, member) JSON_FIELD(k, JSON_REAL, struct report, member)

/* A row's breakdown, predicted or measured: the shares of its report. */
static const struct json_field share_fields[] = {
    SHARE("compute", breakdown.compute),
    SHARE("comm", breakdown.comm),
    SHARE("idle", breakdown.idle),
};
static const struct json_table shares = JSON_TABLE(JSON_SHAPE_OBJECT, share_fields);

#define LOAD(k, kind_, member) JSON_FIELD(k, kind_, struct validate_load, member)

static const struct json_field load_fields[] = {
    LOAD("cores", JSON_INT, cores),
    LOAD("before_1min", JSON_REAL, before_1min),
    LOAD("after_1min", JSON_REAL, after_1min),
    LOAD("own_ranks", JSON_INT, own_ranks),
    LOAD("threshold_per_core", JSON_REAL, threshold_per_core),
    LOAD("quiet", JSON_BOOL, is_quiet),
};
static const struct json_table load = JSON_TABLE(JSON_SHAPE_OBJECT, load_fields);

/* A report's staleness histogram, as the report itself writes it. */
static cJSON *histogram(const struct report *r)
{
    bool ok = true;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; ok && i < r->staleness.n_histogram; i++)
        json_add(a, NULL, json_num((double)r->staleness.histogram[i]), &ok);
    if (ok) return a;
    cJSON_Delete(a);
    return NULL;
}

/* Every figure of a validate_lost is a double, as every share is above. */
#define LOST(k, member) JSON_FIELD(k, JSON_REAL, struct validate_lost, member)

/* What a failure cost, predicted or measured. */
static const struct json_field lost_fields[] = {
    LOST("lost_s", lost_s),
    LOST("detect_s", detect_s),
    LOST("relaunch_s", relaunch_s),
    LOST("redone_s", redone_s),
    LOST("steps_redone", steps_redone),
};
static const struct json_table lost = JSON_TABLE(JSON_SHAPE_OBJECT, lost_fields);

/* A row's "failure": null without --fail. */
static void add_failure(cJSON *row, const struct validate_failure *f, bool *ok)
{
    if (!f) {
        json_add(row, "failure", cJSON_CreateNull(), ok);
        return;
    }
    cJSON *o = json_add(row, "failure", cJSON_CreateObject(), ok);
    if (!o) return;
    json_add(o, "policy", cJSON_CreateString(failure_policy_names[f->policy]), ok);
    json_add(o, "predicted", json_write_fields(&f->predicted, &lost), ok);
    json_add(o, "measured", json_write_fields(&f->measured, &lost), ok);
    cJSON *runs = json_add(o, "measured_runs_lost_s", cJSON_CreateArray(), ok);
    for (int k = 0; runs && k < f->n_measured_runs; k++)
        json_add(runs, NULL, json_num(f->measured_runs_lost_s[k]), ok);
    json_add(o, "error", json_num(f->error), ok);
}

static void add_row(cJSON *arr, const struct validate_row *r, bool *ok)
{
    cJSON *o = json_add(arr, NULL, cJSON_CreateObject(), ok);
    if (!o) return;
    json_add(o, "strategy", cJSON_CreateString(r->strategy), ok);
    json_add(o, "predicted_step_s", json_num(r->predicted_step_s), ok);
    json_add(o, "measured_step_s", json_num(r->measured_step_s), ok);
    cJSON *runs = json_add(o, "measured_runs_step_s", cJSON_CreateArray(), ok);
    for (int k = 0; runs && k < r->n_measured_runs; k++)
        json_add(runs, NULL,
                 json_num(r->measured_runs_s ? r->measured_runs_s[k] : r->measured_step_s), ok);
    json_add(o, "error", json_num(r->error), ok);
    cJSON *b = json_add(o, "breakdown", cJSON_CreateObject(), ok);
    if (b) {
        json_add(b, "predicted", json_write_fields(r->predicted, &shares), ok);
        json_add(b, "measured", json_write_fields(r->measured, &shares), ok);
    }
    if (isnan(r->staleness_tvd) && !r->predicted->staleness.n_histogram) {
        json_add(o, "staleness", cJSON_CreateNull(), ok);
    } else {
        cJSON *s = json_add(o, "staleness", cJSON_CreateObject(), ok);
        if (s) {
            json_add(s, "predicted", histogram(r->predicted), ok);
            json_add(s, "measured", histogram(r->measured), ok);
            json_add(s, "tvd", json_num(r->staleness_tvd), ok);
        }
    }
    add_failure(o, r->failure, ok);
    json_add(o, "predicted", report_to_json(r->predicted), ok);
    json_add(o, "measured", report_to_json(r->measured), ok);
}

static void add_summary(cJSON *doc, const struct validate_matrix *m, bool *ok)
{
    const struct validate_summary *s = &m->summary;
    cJSON *o = json_add(doc, "summary", cJSON_CreateObject(), ok);
    if (!o) return;
    json_add(o, "rows", cJSON_CreateNumber(s->n_rows), ok);
    json_add(o, "median_abs_error", json_num(s->median_abs_error), ok);
    json_add(o, "p90_abs_error", json_num(s->p90_abs_error), ok);
    json_add(o, "kendall_tau", cJSON_CreateString("tau-b"), ok);
    json_add(o, "kendall_tau_mean", json_num(s->kendall_tau_mean), ok);
    json_add(o, "ranked_cells", cJSON_CreateNumber(s->n_ranked_cells), ok);
    json_add(o, "staleness_tvd_max", json_num(s->staleness_tvd_max), ok);
    json_add(o, "staleness_rows", cJSON_CreateNumber(s->n_staleness), ok);
    bool has_failure = false;
    for (int i = 0; i < m->n_rows; i++) has_failure |= m->rows[i].failure != NULL;
    if (has_failure) {
        cJSON *f = json_add(o, "failure", cJSON_CreateObject(), ok);
        if (f) {
            json_add(f, "rows", cJSON_CreateNumber(s->n_failure), ok);
            json_add(f, "median_abs_error", json_num(s->failure_median_abs_error), ok);
            json_add(f, "max_abs_error", json_num(s->failure_max_abs_error), ok);
        }
    } else {
        json_add(o, "failure", cJSON_CreateNull(), ok);
    }
    if (!s->has_inflation) {   /* no undisturbed cell to compare with: n/a */
        json_add(o, "inflation", cJSON_CreateNull(), ok);
        return;
    }
    cJSON *f = json_add(o, "inflation", cJSON_CreateObject(), ok);
    if (!f) return;
    json_add(f, "median_abs_error", json_num(s->inflation_median_abs_error), ok);
    json_add(f, "max_abs_error", json_num(s->inflation_max_abs_error), ok);
    cJSON *arr = json_add(f, "entries", cJSON_CreateArray(), ok);
    for (int i = 0; arr && i < s->n_inflation; i++) {
        const struct validate_inflation *x = &s->inflation[i];
        const struct validate_cell *c = &m->cells[x->cell_disturbed];
        cJSON *e = json_add(arr, NULL, cJSON_CreateObject(), ok);
        if (!e) break;
        json_add(e, "model", cJSON_CreateString(c->model), ok);
        json_add(e, "np", cJSON_CreateNumber(c->np), ok);
        json_add(e, "strategy", cJSON_CreateString(x->strategy), ok);
        json_add(e, "straggler", cJSON_CreateString(c->straggler), ok);
        json_add(e, "predicted_ratio", json_num(x->predicted_ratio), ok);
        json_add(e, "measured_ratio", json_num(x->measured_ratio), ok);
        json_add(e, "error", json_num(x->error), ok);
    }
}

cJSON *validate_to_json(const struct validate_matrix *m)
{
    bool ok = true;
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return NULL;
    json_add(doc, "strata_validate", cJSON_CreateNumber(2), &ok);
    json_add(doc, "load", json_write_fields(&m->load, &load), &ok);
    json_add(doc, "repeat", cJSON_CreateNumber(m->repeat), &ok);
    cJSON *cells = json_add(doc, "cells", cJSON_CreateArray(), &ok);
    for (int ci = 0; cells && ci < m->n_cells; ci++) {
        const struct validate_cell *c = &m->cells[ci];
        cJSON *o = json_add(cells, NULL, cJSON_CreateObject(), &ok);
        if (!o) break;
        json_add(o, "model", cJSON_CreateString(c->model), &ok);
        json_add(o, "np", cJSON_CreateNumber(c->np), &ok);
        /* only under --hostfile, so documents without it stay as they were */
        if (m->has_hostfile) json_add(o, "across_hosts", cJSON_CreateBool(c->is_across_hosts), &ok);
        json_add(o, "straggler", cJSON_CreateString(c->straggler), &ok);
        json_add(o, "kendall_tau", json_num(c->kendall_tau), &ok);
        cJSON *rows = json_add(o, "rows", cJSON_CreateArray(), &ok);
        for (int i = 0; rows && i < c->n_rows; i++) add_row(rows, &m->rows[c->first_row + i], &ok);
    }
    add_summary(doc, m, &ok);
    if (ok) return doc;
    cJSON_Delete(doc);
    return NULL;
}

int validate_write_json(const struct validate_matrix *m, const char *path, struct err *e)
{
    return json_write_atomic(validate_to_json(m), path, e);
}

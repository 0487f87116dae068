/* The strata_validate document, version 2 (see validate.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileio.h"
#include "validate.h"

/* report.c's rule: what is not a finite number is null. */
static cJSON *number(double x)
{
    return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
}

/* Adds item to parent (under key when parent is an object); *ok goes false
 * on a NULL item, which is then not added. */
static cJSON *add(cJSON *parent, const char *key, cJSON *item, bool *ok)
{
    if (!item) {
        *ok = false;
        return NULL;
    }
    if (key) cJSON_AddItemToObject(parent, key, item);
    else cJSON_AddItemToArray(parent, item);
    return item;
}

static cJSON *shares(const struct report *r, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    add(o, "compute", number(r->breakdown.compute), ok);
    add(o, "comm", number(r->breakdown.comm), ok);
    add(o, "idle", number(r->breakdown.idle), ok);
    return o;
}

static cJSON *histogram(const struct report *r)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < r->staleness.n_histogram; i++) {
        cJSON *v = cJSON_CreateNumber((double)r->staleness.histogram[i]);
        if (!v) {
            cJSON_Delete(a);
            return NULL;
        }
        cJSON_AddItemToArray(a, v);
    }
    return a;
}

static void add_row(cJSON *arr, const struct validate_row *r, bool *ok)
{
    cJSON *o = add(arr, NULL, cJSON_CreateObject(), ok);
    if (!o) return;
    add(o, "strategy", cJSON_CreateString(r->strategy), ok);
    add(o, "predicted_step_s", number(r->predicted_step_s), ok);
    add(o, "measured_step_s", number(r->measured_step_s), ok);
    cJSON *runs = add(o, "measured_runs_step_s", cJSON_CreateArray(), ok);
    for (int k = 0; runs && k < r->n_measured_runs; k++)
        add(runs, NULL, number(r->measured_runs_s ? r->measured_runs_s[k] : r->measured_step_s),
            ok);
    add(o, "error", number(r->error), ok);
    cJSON *b = add(o, "breakdown", cJSON_CreateObject(), ok);
    if (b) {
        add(b, "predicted", shares(r->predicted, ok), ok);
        add(b, "measured", shares(r->measured, ok), ok);
    }
    if (isnan(r->staleness_tvd) && !r->predicted->staleness.n_histogram) {
        add(o, "staleness", cJSON_CreateNull(), ok);
    } else {
        cJSON *s = add(o, "staleness", cJSON_CreateObject(), ok);
        if (s) {
            add(s, "predicted", histogram(r->predicted), ok);
            add(s, "measured", histogram(r->measured), ok);
            add(s, "tvd", number(r->staleness_tvd), ok);
        }
    }
    add(o, "predicted", report_to_json(r->predicted), ok);
    add(o, "measured", report_to_json(r->measured), ok);
}

static void add_load(cJSON *doc, const struct validate_load *l, bool *ok)
{
    cJSON *o = add(doc, "load", cJSON_CreateObject(), ok);
    if (!o) return;
    add(o, "cores", cJSON_CreateNumber(l->cores), ok);
    add(o, "before_1min", number(l->before_1min), ok);
    add(o, "after_1min", number(l->after_1min), ok);
    add(o, "own_ranks", cJSON_CreateNumber(l->own_ranks), ok);
    add(o, "threshold_per_core", number(l->threshold_per_core), ok);
    add(o, "quiet", cJSON_CreateBool(l->is_quiet), ok);
}

static void add_summary(cJSON *doc, const struct validate_matrix *m, bool *ok)
{
    const struct validate_summary *s = &m->summary;
    cJSON *o = add(doc, "summary", cJSON_CreateObject(), ok);
    if (!o) return;
    add(o, "rows", cJSON_CreateNumber(s->n_rows), ok);
    add(o, "median_abs_error", number(s->median_abs_error), ok);
    add(o, "p90_abs_error", number(s->p90_abs_error), ok);
    add(o, "kendall_tau", cJSON_CreateString("tau-b"), ok);
    add(o, "kendall_tau_mean", number(s->kendall_tau_mean), ok);
    add(o, "ranked_cells", cJSON_CreateNumber(s->n_ranked_cells), ok);
    add(o, "staleness_tvd_max", number(s->staleness_tvd_max), ok);
    add(o, "staleness_rows", cJSON_CreateNumber(s->n_staleness), ok);
    if (!s->has_inflation) {   /* no undisturbed cell to compare with: n/a */
        add(o, "inflation", cJSON_CreateNull(), ok);
        return;
    }
    cJSON *f = add(o, "inflation", cJSON_CreateObject(), ok);
    if (!f) return;
    add(f, "median_abs_error", number(s->inflation_median_abs_error), ok);
    add(f, "max_abs_error", number(s->inflation_max_abs_error), ok);
    cJSON *arr = add(f, "entries", cJSON_CreateArray(), ok);
    for (int i = 0; arr && i < s->n_inflation; i++) {
        const struct validate_inflation *x = &s->inflation[i];
        const struct validate_cell *c = &m->cells[x->cell_disturbed];
        cJSON *e = add(arr, NULL, cJSON_CreateObject(), ok);
        if (!e) break;
        add(e, "model", cJSON_CreateString(c->model), ok);
        add(e, "np", cJSON_CreateNumber(c->np), ok);
        add(e, "strategy", cJSON_CreateString(x->strategy), ok);
        add(e, "straggler", cJSON_CreateString(c->straggler), ok);
        add(e, "predicted_ratio", number(x->predicted_ratio), ok);
        add(e, "measured_ratio", number(x->measured_ratio), ok);
        add(e, "error", number(x->error), ok);
    }
}

cJSON *validate_to_json(const struct validate_matrix *m)
{
    bool ok = true;
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return NULL;
    add(doc, "strata_validate", cJSON_CreateNumber(2), &ok);
    add_load(doc, &m->load, &ok);
    add(doc, "repeat", cJSON_CreateNumber(m->repeat), &ok);
    cJSON *cells = add(doc, "cells", cJSON_CreateArray(), &ok);
    for (int ci = 0; cells && ci < m->n_cells; ci++) {
        const struct validate_cell *c = &m->cells[ci];
        cJSON *o = add(cells, NULL, cJSON_CreateObject(), &ok);
        if (!o) break;
        add(o, "model", cJSON_CreateString(c->model), &ok);
        add(o, "np", cJSON_CreateNumber(c->np), &ok);
        add(o, "straggler", cJSON_CreateString(c->straggler), &ok);
        add(o, "kendall_tau", number(c->kendall_tau), &ok);
        cJSON *rows = add(o, "rows", cJSON_CreateArray(), &ok);
        for (int i = 0; rows && i < c->n_rows; i++) add_row(rows, &m->rows[c->first_row + i], &ok);
    }
    add_summary(doc, m, &ok);
    if (ok) return doc;
    cJSON_Delete(doc);
    return NULL;
}

int validate_write_json(const struct validate_matrix *m, const char *path, struct err *e)
{
    cJSON *doc = validate_to_json(m);
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text)
        return err_set(e, ERR_NOMEM, "cannot write '%s': out of memory building the JSON", path);
    size_t len = strlen(text);
    /* a newline at the end, as report.c's documents have */
    char *buf = malloc(len + 2);
    if (!buf) {
        cJSON_free(text);
        return err_set(e, ERR_NOMEM, "cannot write '%s': out of memory", path);
    }
    memcpy(buf, text, len);
    buf[len] = '\n';
    cJSON_free(text);
    int rc = file_write_atomic(path, buf, len + 1, e);
    free(buf);
    return rc;
}

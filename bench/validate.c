/* Predicted against measured (see validate.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileio.h"
#include "real_job.h"
#include "validate.h"

static bool is_step(double s)
{
    return isfinite(s) && s > 0;
}

int validate_row(const struct report *predicted, const struct report *measured,
                 struct validate_row *row, struct err *e)
{
    memset(row, 0, sizeof *row);
    if (strcmp(predicted->strategy, measured->strategy))
        return err_set(e, ERR_INPUT, "validate: the prediction is of %s, the measurement of %s",
                       predicted->strategy, measured->strategy);
    if (predicted->devices != measured->devices)
        return err_set(e, ERR_INPUT, "validate: %s predicted on %d devices, measured on %d",
                       predicted->strategy, predicted->devices, measured->devices);
    double p = predicted->step_time_s.p50, m = measured->step_time_s.p50;
    if (!is_step(p) || !is_step(m))
        return err_set(e, ERR_INPUT, "validate: %s: a step time of %g s predicted and %g s "
                       "measured; both must be > 0 for an error", predicted->strategy, p, m);
    snprintf(row->strategy, sizeof row->strategy, "%s", predicted->strategy);
    row->predicted_step_s = p;
    row->measured_step_s = m;
    row->error = p / m - 1;
    row->predicted = predicted;
    row->measured = measured;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double validate_median_abs_error(const struct validate_row *rows, int n)
{
    if (n <= 0) return NAN;
    double *abs_err = malloc((size_t)n * sizeof *abs_err);
    if (!abs_err) return NAN;
    for (int i = 0; i < n; i++) abs_err[i] = fabs(rows[i].error);
    qsort(abs_err, (size_t)n, sizeof *abs_err, cmp_double);
    double m = n % 2 ? abs_err[n / 2] : 0.5 * (abs_err[n / 2 - 1] + abs_err[n / 2]);
    free(abs_err);
    return m;
}

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

cJSON *validate_to_json(const struct validate_row *rows, int n)
{
    bool ok = true;
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return NULL;
    add(doc, "strata_validate", cJSON_CreateNumber(1), &ok);
    cJSON *arr = add(doc, "rows", cJSON_CreateArray(), &ok);
    for (int i = 0; arr && i < n; i++) {
        const struct validate_row *r = &rows[i];
        cJSON *o = add(arr, NULL, cJSON_CreateObject(), &ok);
        if (!o) break;
        add(o, "strategy", cJSON_CreateString(r->strategy), &ok);
        add(o, "predicted_step_s", number(r->predicted_step_s), &ok);
        add(o, "measured_step_s", number(r->measured_step_s), &ok);
        add(o, "error", number(r->error), &ok);
        add(o, "predicted", report_to_json(r->predicted), &ok);
        add(o, "measured", report_to_json(r->measured), &ok);
    }
    if (ok) return doc;
    cJSON_Delete(doc);
    return NULL;
}

int validate_write_json(const struct validate_row *rows, int n, const char *path,
                        struct err *e)
{
    cJSON *doc = validate_to_json(rows, n);
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

int validate_strategy(const struct config *cfg, const struct workload *wl,
                      const struct strategy *st, int np, const char *strata_bin,
                      struct validate_run *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    struct config sim_cfg = *cfg;
    sim_cfg.devices = np;   /* the simulated workers are the real run's ranks */
    /* the simulation first: cheap, and it rejects what does not fit */
    TRY(run_simulate(&sim_cfg, st, wl, 0, &out->sim, e));
    TRY(real_job_run(cfg, wl, st->name, np, strata_bin, &out->real, e));
    TRY_CTX(e, validate_row(&out->sim.report, &out->real.reports[0], &out->row, e), "%s",
            st->name);
    return 0;
}

void validate_run_release(struct validate_run *v)
{
    run_release(&v->sim);
    report_doc_release(&v->real);
    memset(&v->row, 0, sizeof v->row);
}

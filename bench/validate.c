/* Predicted against measured, cell by cell (see validate.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "real_job.h"
#include "validate.h"

static bool is_step(double s)
{
    return isfinite(s) && s > 0;
}

/* Strategies whose staleness emerges from timing, so the simulator has to
 * predict its distribution. */
static bool has_emergent_staleness(const char *strategy)
{
    const struct strategy *st = strategy_find(strategy, NULL);
    return st && policy_is_async(st->policy);
}

int validate_row(const struct report *predicted, const struct report *measured,
                 struct validate_row *row, struct err *e)
{
    memset(row, 0, sizeof *row);
    if (strcmp(predicted->strategy, measured->strategy))
        return err_set(e, ERR_INPUT, "validate: the prediction is of %s, the measurement of %s",
                       predicted->strategy, measured->strategy);
    /* shrink and continue end with fewer workers than they started with */
    bool has_shrunk = measured->failure.happened && measured->failure.policy &&
                      strcmp(measured->failure.policy, "restart");
    if (predicted->devices != measured->devices && !has_shrunk)
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
    row->staleness_tvd = NAN;
    if (has_emergent_staleness(row->strategy))
        row->staleness_tvd = validate_tvd(predicted->staleness.histogram,
                                          predicted->staleness.n_histogram,
                                          measured->staleness.histogram,
                                          measured->staleness.n_histogram);
    row->n_measured_runs = 1;
    row->predicted = predicted;
    row->measured = measured;
    return 0;
}

double validate_median_abs_error(const struct validate_row *rows, int n)
{
    if (n <= 0) return NAN;
    double *abs_err = malloc((size_t)n * sizeof *abs_err);
    if (!abs_err) return NAN;
    for (int i = 0; i < n; i++) abs_err[i] = fabs(rows[i].error);
    double m = validate_quantile(abs_err, n, 0.5);
    free(abs_err);
    return m;
}

/* ---- the summary ------------------------------------------------------------ */

static void cell_tau(const struct validate_matrix *m, struct validate_cell *c, double *pred,
                     double *meas)
{
    for (int i = 0; i < c->n_rows; i++) {
        pred[i] = m->rows[c->first_row + i].predicted_step_s;
        meas[i] = m->rows[c->first_row + i].measured_step_s;
    }
    c->kendall_tau = validate_kendall_tau(pred, meas, c->n_rows);
}

/* The undisturbed cell of c's model and np, or -1. */
static int undisturbed_of(const struct validate_matrix *m, const struct validate_cell *c)
{
    for (int i = 0; i < m->n_cells; i++) {
        const struct validate_cell *u = &m->cells[i];
        if (u->is_undisturbed && u->np == c->np && u->is_across_hosts == c->is_across_hosts &&
            !strcmp(u->model, c->model))
            return i;
    }
    return -1;
}

static const struct validate_row *row_of(const struct validate_matrix *m, int cell,
                                         const char *strategy)
{
    const struct validate_cell *c = &m->cells[cell];
    for (int i = 0; i < c->n_rows; i++)
        if (!strcmp(m->rows[c->first_row + i].strategy, strategy))
            return &m->rows[c->first_row + i];
    return NULL;
}

/* Every (disturbed cell, strategy) with a row in the undisturbed partner. */
static int inflations(const struct validate_matrix *m, struct validate_summary *s, struct err *e)
{
    /* at most one entry per row */
    s->inflation = m->n_rows ? XCALLOC(e, (size_t)m->n_rows, sizeof *s->inflation) : NULL;
    if (m->n_rows && !s->inflation) return ERR_NOMEM;
    for (int ci = 0; ci < m->n_cells; ci++) {
        const struct validate_cell *c = &m->cells[ci];
        int u = c->is_undisturbed ? -1 : undisturbed_of(m, c);
        if (u < 0) continue;
        s->has_inflation = true;
        for (int i = 0; i < c->n_rows; i++) {
            const struct validate_row *d = &m->rows[c->first_row + i];
            const struct validate_row *n = row_of(m, u, d->strategy);
            if (!n) continue;
            struct validate_inflation *f = &s->inflation[s->n_inflation++];
            f->cell_undisturbed = u;
            f->cell_disturbed = ci;
            snprintf(f->strategy, sizeof f->strategy, "%s", d->strategy);
            f->predicted_ratio = d->predicted_step_s / n->predicted_step_s;
            f->measured_ratio = d->measured_step_s / n->measured_step_s;
            f->error = validate_inflation_error(n->predicted_step_s, n->measured_step_s,
                                                d->predicted_step_s, d->measured_step_s);
        }
    }
    return 0;
}

int validate_summarize(struct validate_matrix *m, struct err *e)
{
    struct validate_summary *s = &m->summary;
    validate_summary_release(s);
    memset(s, 0, sizeof *s);
    int n = m->n_rows;
    double *a = XCALLOC(e, (size_t)(n > 0 ? n : 1), sizeof *a);
    double *b = XCALLOC(e, (size_t)(n > 0 ? n : 1), sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return ERR_NOMEM;
    }
    s->n_rows = n;
    for (int i = 0; i < n; i++) a[i] = fabs(m->rows[i].error);
    s->median_abs_error = validate_quantile(a, n, 0.5);
    s->p90_abs_error = validate_quantile(a, n, 0.9);

    double tau_sum = 0;
    for (int ci = 0; ci < m->n_cells; ci++) {
        cell_tau(m, &m->cells[ci], a, b);
        if (isnan(m->cells[ci].kendall_tau)) continue;
        tau_sum += m->cells[ci].kendall_tau;
        s->n_ranked_cells++;
    }
    s->kendall_tau_mean = s->n_ranked_cells ? tau_sum / s->n_ranked_cells : NAN;

    s->staleness_tvd_max = NAN;
    for (int i = 0; i < n; i++) {
        double t = m->rows[i].staleness_tvd;
        if (isnan(t)) continue;
        s->n_staleness++;
        if (!(t <= s->staleness_tvd_max)) s->staleness_tvd_max = t;   /* NaN at first */
    }

    /* the time lost to failures, over the rows that measured some */
    for (int i = 0; i < n; i++) {
        const struct validate_failure *f = m->rows[i].failure;
        if (f && isfinite(f->error)) b[s->n_failure++] = fabs(f->error);
    }
    s->failure_median_abs_error = validate_quantile(b, s->n_failure, 0.5);
    s->failure_max_abs_error = validate_quantile(b, s->n_failure, 1);

    int rc = inflations(m, s, e);
    s->inflation_median_abs_error = s->inflation_max_abs_error = NAN;
    if (rc == 0 && s->n_inflation > 0) {
        for (int i = 0; i < s->n_inflation; i++) a[i] = fabs(s->inflation[i].error);
        s->inflation_median_abs_error = validate_quantile(a, s->n_inflation, 0.5);
        s->inflation_max_abs_error = validate_quantile(a, s->n_inflation, 1);
    }
    free(a);
    free(b);
    return rc;
}

void validate_summary_release(struct validate_summary *s)
{
    free(s->inflation);
    s->inflation = NULL;
    s->n_inflation = 0;
}

/* ---- running one strategy ---------------------------------------------------- */

int validate_strategy(const struct config *cfg, const struct workload *wl,
                      const struct strategy *st, int np, int repeat, const char *strata_bin,
                      struct validate_run *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    if (repeat < 1) repeat = 1;
    struct config sim_cfg = *cfg;
    sim_cfg.devices = np;   /* the simulated workers are the real run's ranks */
    /* the simulation first: cheap, and it rejects what does not fit */
    TRY(validate_failure_simulate(&sim_cfg, st, wl, &out->sim, e));
    out->real = XCALLOC(e, (size_t)repeat, sizeof *out->real);
    out->real_step_s = XCALLOC(e, (size_t)repeat, sizeof *out->real_step_s);
    if (!out->real || !out->real_step_s) return ERR_NOMEM;
    for (int k = 0; k < repeat; k++) {
        TRY(real_job_run(cfg, wl, st->name, np, strata_bin, &out->real[k], e));
        out->n_real++;
        out->real_step_s[k] = out->real[k].reports[0].step_time_s.p50;
    }
    /* the run at the (lower) median, the smallest step with at least half
     * the runs at or below it: its report is the row's measurement */
    int at = -1, need = (repeat + 1) / 2;
    for (int k = 0; k < repeat; k++) {
        int at_or_below = 0;
        for (int j = 0; j < repeat; j++) at_or_below += out->real_step_s[j] <= out->real_step_s[k];
        if (at_or_below >= need && (at < 0 || out->real_step_s[k] < out->real_step_s[at])) at = k;
    }
    if (at < 0) at = 0;   /* NaN steps: validate_row refuses them below */
    TRY_CTX(e, validate_row(&out->sim.report, &out->real[at].reports[0], &out->row, e), "%s",
            st->name);
    double median = validate_quantile(out->real_step_s, repeat, 0.5);
    if (is_step(median)) {
        out->row.measured_step_s = median;
        out->row.error = out->row.predicted_step_s / median - 1;
    }
    out->row.measured_runs_s = out->real_step_s;
    out->row.n_measured_runs = repeat;
    if (!cfg->fail[0]) return 0;
    /* the step the real report counts: its last job's (validate_failure.h) */
    double predicted = validate_failure_step_s(&out->sim);
    if (is_step(predicted)) {
        out->row.predicted_step_s = predicted;
        out->row.error = predicted / out->row.measured_step_s - 1;
    }
    const struct report **measured = XCALLOC(e, (size_t)repeat, sizeof *measured);
    if (!measured) return ERR_NOMEM;
    for (int k = 0; k < repeat; k++) measured[k] = &out->real[k].reports[0];
    int rc = validate_failure_compare(&out->sim.report, measured, repeat, &out->failure, e);
    free(measured);
    TRY_CTX(e, rc, "%s", st->name);
    out->row.failure = &out->failure;
    return 0;
}

void validate_run_release(struct validate_run *v)
{
    run_release(&v->sim);
    for (int k = 0; k < v->n_real; k++) report_doc_release(&v->real[k]);
    free(v->real);
    free(v->real_step_s);
    validate_failure_release(&v->failure);
    memset(v, 0, sizeof *v);
}

/* Validation figures (see validate_metrics.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate_metrics.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double validate_quantile(const double *x, int n, double q)
{
    if (n <= 0 || !(q >= 0 && q <= 1)) return NAN;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) return NAN;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) s[m++] = x[i];
    double v = NAN;
    if (m > 0) {
        qsort(s, (size_t)m, sizeof *s, cmp_double);
        /* type 7: h = q (m - 1); between s[floor h] and s[floor h + 1] */
        double h = q * (m - 1);
        int lo = (int)floor(h);
        int hi = lo + 1 < m ? lo + 1 : lo;
        v = s[lo] + (h - lo) * (s[hi] - s[lo]);
    }
    free(s);
    return v;
}

/* The sum of h[0..n); -1 when a count is negative. */
static double total(const int64_t *h, int n)
{
    double t = 0;
    for (int i = 0; i < n; i++) {
        if (h[i] < 0) return -1;
        t += (double)h[i];
    }
    return t;
}

double validate_tvd(const int64_t *p, int n_p, const int64_t *q, int n_q)
{
    double tp = total(p, n_p), tq = total(q, n_q);
    if (!(tp > 0) || !(tq > 0)) return NAN;
    int n = n_p > n_q ? n_p : n_q;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double a = i < n_p ? (double)p[i] / tp : 0;
        double b = i < n_q ? (double)q[i] / tq : 0;
        sum += fabs(a - b);
    }
    return 0.5 * sum;
}

static int sign(double d)
{
    return (d > 0) - (d < 0);
}

double validate_kendall_tau(const double *x, const double *y, int n)
{
    if (n < 2) return NAN;
    /* every pair once: concordant when both orders agree, discordant when
     * they differ, neither when tied on a side (counted in t_x, t_y) */
    double concordant = 0, discordant = 0, t_x = 0, t_y = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            int sx = sign(x[j] - x[i]), sy = sign(y[j] - y[i]);
            if (sx == 0) t_x++;
            if (sy == 0) t_y++;
            if (sx * sy > 0) concordant++;
            else if (sx * sy < 0) discordant++;
        }
    double n0 = 0.5 * n * (n - 1);
    double denom = sqrt((n0 - t_x) * (n0 - t_y));
    if (!(denom > 0)) return NAN;
    return (concordant - discordant) / denom;
}

static bool is_step(double s)
{
    return isfinite(s) && s > 0;
}

double validate_inflation_error(double pred_none_s, double meas_none_s, double pred_disturbed_s,
                                double meas_disturbed_s)
{
    if (!is_step(pred_none_s) || !is_step(meas_none_s) || !is_step(pred_disturbed_s) ||
        !is_step(meas_disturbed_s))
        return NAN;
    double predicted_ratio = pred_disturbed_s / pred_none_s;
    double measured_ratio = meas_disturbed_s / meas_none_s;
    return predicted_ratio / measured_ratio - 1;
}

int validate_load_parse(const char *text, double *load_1min, struct err *e)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno == ERANGE || !isfinite(v) || v < 0)
        return err_set(e, ERR_INPUT, "/proc/loadavg: '%.40s' does not start with a load "
                       "average (a number >= 0)", text);
    *load_1min = v;
    return 0;
}

int validate_load_read(double *load_1min, struct err *e)
{
    *load_1min = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return err_set(e, ERR_IO, "/proc/loadavg: cannot open: %s (the load is unknown)",
                       strerror(errno));
    char buf[128] = "";
    bool got = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    if (!got) return err_set(e, ERR_IO, "/proc/loadavg: empty (the load is unknown)");
    return validate_load_parse(buf, load_1min, e);
}

void validate_load_judge(struct validate_load *l)
{
    l->threshold_per_core = VALIDATE_QUIET_LOAD_PER_CORE;
    double allowed = l->threshold_per_core * (l->cores > 0 ? l->cores : 1);
    /* a comparison with NaN is false: an unknown figure is never quiet */
    l->is_quiet = l->cores > 0 && l->before_1min <= allowed &&
                  l->after_1min <= allowed + (l->own_ranks > 0 ? l->own_ranks : 0);
}

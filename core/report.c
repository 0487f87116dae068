/* Reports: the structure, the terminal table and CSV rows. The JSON of a
 * report, both ways, is report_json.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "report.h"

void report_init(struct report *r)
{
    memset(r, 0, sizeof *r);
}

/* Frees an array member and zeroes its count: a released report reads as
 * an empty one. */
#define DROP_ARRAY(items, n) (free(items), (items) = NULL, (n) = 0)

void report_release(struct report *r)
{
    if (!r) return;
    DROP_ARRAY(r->staleness.histogram, r->staleness.n_histogram);
    DROP_ARRAY(r->loss_curve, r->n_loss_curve);
    DROP_ARRAY(r->accuracy_curve, r->n_accuracy_curve);
    DROP_ARRAY(r->per_rank, r->n_per_rank);
    DROP_ARRAY(r->paces, r->n_paces);
    DROP_ARRAY(r->rank_hosts, r->n_rank_hosts);
    r->has_hosts = false;
}

/* --- Table ---------------------------------------------------------------
 * Cells are formatted twice: once to measure column widths, once to print.
 * Formatting is deterministic, so both passes agree, and nothing is
 * allocated. */

enum col {
    COL_STRATEGY, COL_DEVICES, COL_STEP, COL_THROUGHPUT, COL_SPEEDUP,
    COL_COMPUTE, COL_COMM, COL_DOWN, COL_IDLE, COL_BUBBLE, COL_STALENESS, COL_PEAK,
    COL_FAILURES, COL_LOST, COL_GOODPUT,
    COL_UPDATES, COL_LOSS, COL_ACCURACY, COL_TIME_TO_ACCURACY,
    N_COLS
};

static const char *const col_title[N_COLS] = {
    "strategy", "devices", "step time", "samples/s", "speedup",
    "compute", "comm", "down", "idle", "bubble", "staleness", "peak mem",
    "failures", "time lost", "goodput",
    "updates", "loss", "accuracy", "time to acc",
};

#define CELL_BYTES 96
#define TIMES "\xc3\x97"  /* "×" in UTF-8, spelled out so the source charset does not matter */

/* Seconds with the unit that keeps the number between 1 and 1000. The
 * thresholds sit half a printed digit below the boundary so that 0.9999999 s
 * prints as "1.000 s", not "1000.000 ms". */
void report_fmt_seconds(char *buf, size_t size, double s)
{
    if (!isfinite(s)) snprintf(buf, size, "-");
    else if (s == 0) snprintf(buf, size, "0 s");
    else if (fabs(s) >= 1 - 0.5e-3) snprintf(buf, size, "%.3f s", s);
    else if (fabs(s) >= 1e-3 - 0.5e-6) snprintf(buf, size, "%.3f ms", s * 1e3);
    else snprintf(buf, size, "%.3f us", s * 1e6);
}

static void fmt_seconds(char *buf, double s)
{
    report_fmt_seconds(buf, CELL_BYTES, s);
}

/* Bytes in binary units, one decimal ("1.5 GiB"). */
static void fmt_bytes(char *buf, int64_t b)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (b < 1024) {
        snprintf(buf, CELL_BYTES, "%lld B", (long long)b);
        return;
    }
    double v = (double)b / 1024;
    int u = 0;
    while (v >= 1024 - 0.05 && u < (int)(sizeof unit / sizeof *unit) - 1) {
        v /= 1024;
        u++;
    }
    snprintf(buf, CELL_BYTES, "%.1f %s", v, unit[u]);
}

static void fmt_percent(char *buf, double f)
{
    if (isfinite(f)) snprintf(buf, CELL_BYTES, "%.1f%%", 100 * f);
    else snprintf(buf, CELL_BYTES, "-");
}

void report_fmt_number(char *buf, size_t size, const char *fmt, double x)
{
    if (isfinite(x)) snprintf(buf, size, fmt, x);
    else snprintf(buf, size, "-");
}

static void fmt_real(char *buf, const char *fmt, double x)
{
    report_fmt_number(buf, CELL_BYTES, fmt, x);
}

static void fmt_cell(char *buf, const struct report *r, enum col c, const double *speedup)
{
    switch (c) {
    case COL_STRATEGY:
        snprintf(buf, CELL_BYTES, "%.*s", (int)sizeof r->strategy, r->strategy);
        break;
    case COL_DEVICES: snprintf(buf, CELL_BYTES, "%d", r->devices); break;
    case COL_STEP: fmt_seconds(buf, r->step_time_s.mean); break;
    case COL_THROUGHPUT: fmt_real(buf, "%.1f", r->throughput_samples_per_s); break;
    case COL_SPEEDUP:
        if (speedup && isfinite(*speedup)) snprintf(buf, CELL_BYTES, "%.2f" TIMES, *speedup);
        else snprintf(buf, CELL_BYTES, "-");
        break;
    case COL_COMPUTE: fmt_percent(buf, r->breakdown.compute); break;
    case COL_COMM: fmt_percent(buf, r->breakdown.comm); break;
    case COL_DOWN: fmt_percent(buf, r->breakdown.down); break;
    case COL_IDLE: fmt_percent(buf, r->breakdown.idle); break;
    case COL_BUBBLE: fmt_percent(buf, r->bubble_fraction); break;
    case COL_STALENESS:
        if (isfinite(r->staleness.mean))
            snprintf(buf, CELL_BYTES, "%.2f/%lld", r->staleness.mean,
                     (long long)r->staleness.max);
        else
            snprintf(buf, CELL_BYTES, "-/%lld", (long long)r->staleness.max);
        break;
    case COL_PEAK: fmt_bytes(buf, r->memory_bytes_per_device.peak); break;
    case COL_FAILURES:
        if (r->failure.happened) snprintf(buf, CELL_BYTES, "%d", r->failure.n_failures);
        else snprintf(buf, CELL_BYTES, "0");
        break;
    case COL_LOST:
        if (r->failure.happened) fmt_seconds(buf, r->failure.lost_s);
        else snprintf(buf, CELL_BYTES, "-");
        break;
    case COL_GOODPUT:
        if (r->failure.happened) fmt_percent(buf, r->failure.goodput);
        else snprintf(buf, CELL_BYTES, "-");
        break;
    case COL_UPDATES:   /* 0 in a report read back from JSON, which does not hold it */
        if (r->has_final && r->updates > 0) snprintf(buf, CELL_BYTES, "%lld", (long long)r->updates);
        else snprintf(buf, CELL_BYTES, "-");
        break;
    case COL_LOSS:
        if (r->has_final) fmt_real(buf, "%.4f", r->final.loss);
        else snprintf(buf, CELL_BYTES, "-");
        break;
    case COL_ACCURACY:
        if (r->has_final) fmt_percent(buf, r->final.test_accuracy);
        else snprintf(buf, CELL_BYTES, "-");
        break;
    case COL_TIME_TO_ACCURACY:
        if (r->has_time_to_accuracy) fmt_seconds(buf, r->time_to_accuracy_s);
        else snprintf(buf, CELL_BYTES, "not reached");
        break;
    case N_COLS: buf[0] = '\0'; break;
    }
}

/* A --target-accuracy was asked for: its column is shown, reached or not. */
static bool has_target(const struct report *r)
{
    return r->has_time_to_accuracy || (r->config && r->config->target_accuracy > 0);
}

/* Terminal columns of UTF-8 text: one per code point ("×" is two bytes). */
static int display_width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) w++;
    return w;
}

static void put_cell(FILE *out, const char *text, int width, bool left, bool first)
{
    int pad = width - display_width(text);
    if (!first) fputs("  ", out);
    if (!left) fprintf(out, "%*s", pad, "");
    fputs(text, out);
    if (left) fprintf(out, "%*s", pad, "");
}

void report_print_table(FILE *out, const struct report *const *rs, int n,
                        const double *speedup)
{
    bool any_final = false, any_target = false, any_failure = false, any_down = false;
    for (int i = 0; i < n; i++) {
        any_final |= rs[i]->has_final;
        any_target |= has_target(rs[i]);
        any_failure |= rs[i]->failure.happened;
        any_down |= rs[i]->breakdown.down > 0;
    }
    /* The columns of what a run may not have (dead workers' down time,
     * failures, numerics, a target accuracy) only when some run has it. */
    bool shown[N_COLS];
    for (int c = 0; c < N_COLS; c++)
        shown[c] = (c < COL_FAILURES && (c != COL_DOWN || any_down)) ||
                   (c >= COL_FAILURES && c < COL_UPDATES && any_failure) ||
                   (c >= COL_UPDATES && any_final && (c != COL_TIME_TO_ACCURACY || any_target));

    int width[N_COLS];
    char cell[CELL_BYTES];
    for (int c = 0; c < N_COLS; c++) {
        width[c] = display_width(col_title[c]);
        for (int i = 0; i < n; i++) {
            fmt_cell(cell, rs[i], (enum col)c, speedup ? &speedup[i] : NULL);
            int w = display_width(cell);
            if (w > width[c]) width[c] = w;
        }
    }

    /* The strategy column is left-aligned and padded; every other column is
     * right-aligned, so no line ends in spaces. */
    int total = 0;
    for (int c = 0; c < N_COLS; c++) {
        if (!shown[c]) continue;
        put_cell(out, col_title[c], width[c], c == COL_STRATEGY, c == 0);
        total += width[c] + (c ? 2 : 0);
    }
    fputc('\n', out);
    for (int k = 0; k < total; k++) fputc('-', out);
    fputc('\n', out);

    for (int i = 0; i < n; i++) {
        for (int c = 0; c < N_COLS; c++) {
            if (!shown[c]) continue;
            fmt_cell(cell, rs[i], (enum col)c, speedup ? &speedup[i] : NULL);
            put_cell(out, cell, width[c], c == COL_STRATEGY, c == 0);
        }
        fputc('\n', out);
    }
}

/* CSV fields are numbers and strategy names (letters, digits, '-'): nothing
 * needs quoting. Numbers use %.17g so that they read back exactly. */
int report_write_csv(const struct report *const *rs, int n, const double *speedup,
                     const char *path, struct err *e)
{
    bool any_failure = false, any_updates = false;
    for (int i = 0; i < n; i++) {
        any_failure |= rs[i]->failure.happened;
        any_updates |= rs[i]->has_final && rs[i]->updates > 0;   /* the table's column */
    }
    struct file_stream out;
    TRY(file_stream_open(&out, path, e));
    FILE *f = out.f;
    fputs("strategy,devices,step_time_mean_s,step_time_p50_s,step_time_p99_s,"
          "throughput_samples_per_s,speedup,compute,comm,idle,bubble_fraction,"
          "staleness_mean,staleness_max,peak_bytes,final_loss,test_accuracy", f);
    if (any_failure)
        fputs(",failure_policy,n_failures,lost_s,detect_s,relaunch_s,redone_s,steps_redone,"
              "checkpoint_s,goodput,down", f);
    if (any_updates) fputs(",updates", f);   /* last: the columns before keep their places */
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        const struct report *r = rs[i];
        fprintf(f, "%s,%d,%.17g,%.17g,%.17g,%.17g,", r->strategy, r->devices,
                r->step_time_s.mean, r->step_time_s.p50, r->step_time_s.p99,
                r->throughput_samples_per_s);
        if (speedup) fprintf(f, "%.17g", speedup[i]);
        fprintf(f, ",%.17g,%.17g,%.17g,%.17g,%.17g,%lld,%lld,", r->breakdown.compute,
                r->breakdown.comm, r->breakdown.idle, r->bubble_fraction, r->staleness.mean,
                (long long)r->staleness.max, (long long)r->memory_bytes_per_device.peak);
        if (r->has_final) fprintf(f, "%.17g,%.17g", r->final.loss, r->final.test_accuracy);
        else fputs(",", f);
        if (r->failure.happened)
            fprintf(f, ",%s,%d,%.17g,%.17g,%.17g,%.17g,%d,%.17g,%.17g,%.17g",
                    r->failure.policy ? r->failure.policy : "", r->failure.n_failures,
                    r->failure.lost_s, r->failure.detect_s, r->failure.relaunch_s,
                    r->failure.redone_s, r->failure.steps_redone, r->failure.checkpoint_s,
                    r->failure.goodput, r->breakdown.down);
        else if (any_failure)
            fputs(",,,,,,,,,,", f);
        if (any_updates) fputc(',', f);
        if (any_updates && r->has_final && r->updates > 0) fprintf(f, "%lld", (long long)r->updates);
        fputc('\n', f);
    }
    return file_stream_commit(&out, path, e);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void report_set_time_to_accuracy(struct report *r, double target)
{
    r->has_time_to_accuracy = false;
    if (!(target > 0)) return;
    for (int i = 0; i < r->n_accuracy_curve; i++)
        if (r->accuracy_curve[i].accuracy >= target) {
            r->has_time_to_accuracy = true;
            r->time_to_accuracy_s = r->accuracy_curve[i].time_s;
            return;
        }
}

int report_set_loss_curve(struct report *r, const struct step_loss *losses, size_t n,
                          int64_t steps, struct err *e)
{
    if (steps <= 0 || n == 0) return 0;
    struct loss_point *pts = XCALLOC(e, (size_t)steps, sizeof *pts);
    int64_t *samples = XCALLOC(e, (size_t)steps, sizeof *samples);
    size_t *entries = XCALLOC(e, (size_t)steps, sizeof *entries);
    double *ends = XCALLOC(e, n, sizeof *ends);
    if (!pts || !samples || !entries || !ends) {
        free(pts);
        free(samples);
        free(entries);
        free(ends);
        return ERR_NOMEM;
    }
    size_t n_ends = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t s = losses[i].step;
        if (s < 0 || s >= steps) continue;
        pts[s].step = s;
        pts[s].loss += losses[i].loss_sum;
        samples[s] += losses[i].n_samples;
        entries[s]++;
        ends[n_ends++] = losses[i].end_s;
    }
    /* Step s ends with the c-th worker step to end, c those of steps 0..s
     * (docs/metrics.md: an asynchronous step s ends with the (s+1)N-th). A
     * synchronous step's entries all end before the next step's, so that is
     * its last one; an asynchronous step's last one can end after the
     * next steps' (a slow worker's item), and the curve went back in time. */
    qsort(ends, n_ends, sizeof *ends, by_double);
    size_t ended = 0;
    for (int64_t s = 0; s < steps; s++) {
        ended += entries[s];
        if (entries[s] > 0) pts[s].time_s = ends[ended - 1];
    }
    free(entries);
    free(ends);
    int kept = 0;
    for (int64_t s = 0; s < steps; s++)
        if (samples[s] > 0) {
            pts[kept] = pts[s];
            pts[kept++].loss /= (double)samples[s];
        }
    free(samples);
    free(r->loss_curve);
    r->loss_curve = pts;
    r->n_loss_curve = kept;
    return 0;
}

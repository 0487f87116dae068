/* Sweeps: the axis (--vary, --scaling) read and checked, the grid run, and
 * its CSV and JSON. Definitions of speedup and efficiency: sweep.h. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../core/budget.h"
#include "../core/fileio.h"
#include "../core/json_doc.h"
#include "../core/straggler.h"
#include "run_numerics.h"
#include "real_job.h"
#include "sweep.h"
#include "sweep_tasks.h"

/* Options that shape a simulated run and a real one (bench/run.h's
 * RUN_CONFIG_GROUPS and bench/real_job.c's JOB_GROUPS, less the strategy,
 * which the sweep sets itself). A simulation with numerics also reads the
 * training options (--lr, ...). */
#define SIM_GROUPS (OPTG_SCENARIO | OPTG_RUN | OPTG_SIM | OPTG_DISTURB)
#define REAL_GROUPS (OPTG_SCENARIO | OPTG_RUN | OPTG_TRAIN | OPTG_EXEC | OPTG_DISTURB)

static unsigned mode_groups(const struct sweep_axis *ax)
{
    return ax->is_real ? REAL_GROUPS : SIM_GROUPS | (ax->has_numerics ? OPTG_TRAIN : 0u);
}

/* Numbers and choices can be varied, and --straggler (its models are the
 * values a stragglers study compares). Other text options (--model, --data,
 * --cluster) are left out: a model change is another workload, not a point. */
static bool is_variable(const struct opt_spec *o, unsigned groups)
{
    if (!(o->groups & groups)) return false;
    if (!strcmp(o->name, "straggler")) return true;
    return o->type == OPT_INT || o->type == OPT_REAL || o->type == OPT_CHOICE;
}

/* "devices, servers, batch, ..." */
static void list_variable(unsigned groups, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < config_n_options && at < n; i++)
        if (is_variable(&config_options[i], groups))
            at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? ", " : "",
                                   config_options[i].name);
}

bool sweep_is_numeric(const struct sweep_axis *ax)
{
    return ax->opt->type == OPT_INT || ax->opt->type == OPT_REAL;
}

/* Appends one value (text[0..len), blanks around it dropped). */
static int add_value(struct sweep_axis *ax, const char *vary, const char *text, size_t len,
                     struct err *e)
{
    while (len && isspace((unsigned char)*text)) text++, len--;
    while (len && isspace((unsigned char)text[len - 1])) len--;
    if (!len)
        return err_set(e, ERR_INPUT, "--vary %.80s: an empty value (write --vary %s=V1,V2,..., "
                       "e.g. --vary devices=1,2,4)", vary, ax->opt->name);
    if (ax->n_values == SWEEP_MAX_VALUES)
        return err_set(e, ERR_INPUT, "--vary %.80s...: more than %d values", vary,
                       SWEEP_MAX_VALUES);
    if (len >= SWEEP_VALUE_BYTES)
        return err_set(e, ERR_INPUT, "--vary: the value '%.40s...' is too long (at most %d "
                       "characters)", text, SWEEP_VALUE_BYTES - 1);
    memcpy(ax->values[ax->n_values], text, len);
    ax->values[ax->n_values++][len] = '\0';
    return 0;
}

/* Splits list at commas. A --straggler value holds commas of its own
 * (slow:0=2,1=3): there a piece that starts with a digit is a further slow
 * rank of the value before it, not a value. */
static int split_values(struct sweep_axis *ax, const char *vary, const char *list, struct err *e)
{
    bool is_straggler = !strcmp(ax->opt->name, "straggler");
    const char *start = list;
    for (const char *p = list;; p++) {
        if (*p && *p != ',') continue;
        if (*p == ',' && is_straggler && isdigit((unsigned char)p[1])) continue;
        TRY(add_value(ax, vary, start, (size_t)(p - start), e));
        if (!*p) return 0;
        start = p + 1;
    }
}

/* No --vary: devices 1, 2, 4, ... and --devices itself last. */
static void default_devices(struct sweep_axis *ax, long long devices)
{
    ax->opt = config_find("devices");
    ax->is_devices = true;
    for (long long d = 1; d < devices && ax->n_values < SWEEP_MAX_VALUES - 1; d *= 2)
        snprintf(ax->values[ax->n_values++], SWEEP_VALUE_BYTES, "%lld", d);
    snprintf(ax->values[ax->n_values++], SWEEP_VALUE_BYTES, "%lld", devices);
}

/* Checks every value as the option itself does, and a weak sweep's
 * batches; no value twice. */
static int check_values(const struct sweep_axis *ax, const struct config *cfg, struct err *e)
{
    char seen[SWEEP_MAX_VALUES][SWEEP_VALUE_BYTES];   /* whole values: no two alike by a prefix */
    for (int i = 0; i < ax->n_values; i++) {
        struct config scratch = *cfg;
        const char *v = ax->values[i];
        TRY_CTX(e, config_set(&scratch, ax->opt->name, v, mode_groups(ax), e),
                "--vary %s=%.60s", ax->opt->name, v);
        if (!strcmp(ax->opt->name, "straggler")) {
            struct straggler_spec spec;
            TRY_CTX(e, straggler_parse(v, &spec, e), "--vary straggler=%.60s", v);
        }
        config_format(&scratch, ax->opt, seen[i], sizeof seen[i]);
        for (int j = 0; j < i; j++)
            if (!strcmp(seen[i], seen[j]))
                return err_set(e, ERR_INPUT, "--vary %s: the value %.60s is given twice",
                               ax->opt->name, v);
        if (ax->is_weak) {
            char batch[32];
            snprintf(batch, sizeof batch, "%lld", ax->batch_per_device * scratch.devices);
            TRY_CTX(e, config_set(&scratch, "batch", batch, mode_groups(ax), e),
                    "--scaling weak: at --vary devices=%s the batch is %lld x %lld", v,
                    ax->batch_per_device, scratch.devices);
        }
    }
    return 0;
}

int sweep_axis_parse(const struct config *cfg, struct sweep_axis *ax, struct err *e)
{
    memset(ax, 0, sizeof *ax);
    ax->is_real = !strcmp(cfg->mode, "real");
    ax->is_weak = !strcmp(cfg->scaling, "weak");
    ax->has_numerics = !ax->is_real && run_wants_numerics(cfg);
    unsigned groups = mode_groups(ax);
    const char *vary = cfg->vary;
    if (!vary[0]) {
        default_devices(ax, cfg->devices);
    } else {
        const char *eq = strchr(vary, '=');
        if (!eq || eq == vary)   /* no '=', or no name before it */
            return err_set(e, ERR_INPUT, "--vary '%.80s': expected OPTION=V1,V2,... (e.g. "
                           "--vary batch=64,128,256, or --devices 1,2,4)", vary);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - vary < 63 ? eq - vary : 63), vary);
        ax->opt = config_find(name);
        if (!ax->opt) {
            struct config scratch = *cfg;   /* only for its "did you mean" message */
            config_set(&scratch, name, eq + 1, groups, e);
            return err_prefix(e, "--vary %.80s", vary);
        }
        if (!is_variable(ax->opt, groups)) {
            char names[1024];
            list_variable(groups, names, sizeof names);
            unsigned other = ax->is_real ? SIM_GROUPS : REAL_GROUPS;
            if (is_variable(ax->opt, other))
                return err_set(e, ERR_INPUT, "--vary %.80s: %s shapes only %s runs (%s); a %s "
                               "sweep varies one of: %s", vary, name,
                               ax->is_real ? "simulated" : "real or numerics",
                               ax->is_real ? "leave out --mode real" : "--mode real or --numerics",
                               ax->is_real ? "real" : "simulated", names);
            return err_set(e, ERR_INPUT, "--vary %.80s: %s cannot be varied (a %s sweep varies "
                           "one of: %s)", vary, name, ax->is_real ? "real" : "simulated", names);
        }
        ax->is_devices = !strcmp(name, "devices");
        TRY(split_values(ax, vary, eq + 1, e));
    }
    if (ax->is_weak && !ax->is_devices)
        return err_set(e, ERR_INPUT, "--scaling weak: needs a devices sweep (--devices 1,2,4 or "
                       "--vary devices=...); a sweep of %s keeps the devices", ax->opt->name);
    if (ax->is_real && ax->is_devices && config_is_set(cfg, "np"))
        return err_set(e, ERR_INPUT, "--np: a devices sweep gives each point its ranks; leave "
                       "--np out");
    if (ax->is_weak) {
        struct config first = *cfg;
        TRY_CTX(e, config_set(&first, "devices", ax->values[0], groups, e), "--vary devices=%s",
                ax->values[0]);
        if (cfg->batch % first.devices)
            return err_set(e, ERR_INPUT, "--scaling weak: --batch %lld does not split into whole "
                           "per-device batches over the first %lld devices (use a multiple of "
                           "%lld)", cfg->batch, first.devices, first.devices);
        ax->batch_per_device = cfg->batch / first.devices;
    }
    return check_values(ax, cfg, e);
}

int sweep_point_config(const struct sweep_axis *ax, const struct config *base, int i,
                       struct config *out, struct err *e)
{
    *out = *base;
    out->positional = NULL;   /* borrowed from argv; the copy must not free it */
    out->n_positional = 0;
    TRY(config_set(out, ax->opt->name, ax->values[i], ~0u, e));
    if (ax->is_weak) {
        char batch[32];
        snprintf(batch, sizeof batch, "%lld", ax->batch_per_device * out->devices);
        TRY(config_set(out, "batch", batch, ~0u, e));
    }
    return 0;
}

/* Does the one-device baseline depend on this option? Options of the
 * scenario that mirrored does not read (servers, microbatches, staleness,
 * ...) leave it as it is, so one baseline serves every value: a real sweep
 * runs one job, not one a value. Nor do training options (--lr) in a
 * simulation: a simulated baseline is timed without numerics, which leave
 * the virtual times as they are. */
static bool shapes_baseline(const struct opt_spec *o, const struct sweep_axis *ax)
{
    if (!ax->is_real && o->groups == OPTG_TRAIN) return false;   /* baselines: no numerics */
    if (!(o->groups & OPTG_SCENARIO) || !strcmp(o->name, "batch") || !strcmp(o->name, "model"))
        return true;
    return strategy_reads(strategy_baseline(), o->name);
}

int sweep_baseline_of(const struct sweep *s, int v)
{
    return s->n_baselines == 1 ? 0 : v;
}

/* Runs st (NULL: the one-device baseline) on cfg into r. Only running out of
 * memory fails here; other failures are the run's rc and note. */
static int run_one(const struct config *cfg, const struct workload *wl,
                   const struct strategy *st, const struct sweep_axis *ax,
                   struct run_numerics *numerics, struct sweep_run *r, struct err *e)
{
    struct err one = {0};
    int rc;
    r->batch = cfg->batch;
    if (ax->is_real) {
        /* the baseline runs one rank; a point its devices, or --np when
         * given (not in a devices sweep: sweep_axis_parse refuses it) */
        int np = (int)(cfg->np ? cfg->np : cfg->devices);
        if (!st) np = 1;
        r->devices = np;
        struct config base;
        rc = st ? 0 : run_baseline_config(cfg, &base, &one);
        if (rc == 0)
            rc = real_job_run(st ? cfg : &base, wl, st ? st->name : strategy_baseline()->name, np,
                              NULL, &r->real, &one);
        /* a baseline's note says what failed, as run_baseline's does */
        if (rc < 0 && !st) err_prefix(&one, "the one-device baseline");
        if (rc == 0) r->report = &r->real.reports[0];
    } else {
        r->devices = st ? cfg->devices : 1;
        if (!(r->sim = XCALLOC(e, 1, sizeof *r->sim))) return ERR_NOMEM;
        rc = st ? run_simulate(cfg, st, wl, 0, numerics, r->sim, &one)
                : run_baseline(cfg, wl, numerics, r->sim, &one);
        if (rc == 0) {
            r->report = &r->sim->report;
            r->exceeds_memory = run_exceeds_memory(r->sim);
            snprintf(r->plan_note, sizeof r->plan_note, "%s", r->sim->plan->note);
            /* The report is all a sweep keeps: plans go at once, so memory
             * grows with the points' reports, not their plans. */
            plan_free(r->sim->plan);
            r->sim->plan = NULL;
        } else {
            run_release(r->sim);
            free(r->sim);
            r->sim = NULL;
        }
    }
    if (rc == ERR_NOMEM) return err_set(e, ERR_NOMEM, "%s", one.msg);
    /* the scenario file's line, as a run's own errors and compare's notes;
     * here, in the task, so a note made in a job process carries it too */
    if (rc) config_err_locate(cfg, &one);
    r->rc = rc;
    if (rc) snprintf(r->note, sizeof r->note, "%s", one.msg);
    else r->devices = r->report->devices;
    return 0;
}

static void run_free(struct sweep_run *r)
{
    if (r->sim) run_release(r->sim);
    free(r->sim);
    report_doc_release(&r->real);
    memset(r, 0, sizeof *r);
}

/* a / b, NaN when either is unknown or b is not positive. */
static double ratio(double a, double b)
{
    return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN;
}

static void fill_ratios(struct sweep *s)
{
    const struct sweep_axis *ax = &s->axis;
    for (int i = 0; i < s->n_points; i++) {
        struct sweep_point *p = &s->points[i];
        p->speedup = p->efficiency = NAN;
        const struct report *r = p->run.report;
        const struct report *base = s->baselines[sweep_baseline_of(s, p->value)].report;
        if (!r) continue;
        double n = r->devices;
        if (ax->is_devices) {
            if (!base) continue;
            p->speedup = ratio(r->throughput_samples_per_s, base->throughput_samples_per_s);
            p->efficiency = ax->is_weak ? ratio(base->step_time_s.mean, r->step_time_s.mean)
                                        : ratio(p->speedup, n);
        } else {
            const struct report *first = s->points[i - p->value].run.report;
            if (first)
                p->speedup = ratio(r->throughput_samples_per_s, first->throughput_samples_per_s);
            if (base)
                p->efficiency = ratio(r->throughput_samples_per_s,
                                      n * base->throughput_samples_per_s);
        }
    }
}

int sweep_n_tasks(const struct sweep *s)
{
    return s->n_baselines + s->n_points;
}

int sweep_task_point(const struct sweep *s, int t)
{
    int k = t - s->n_baselines, n = s->n_strategies;
    return (k % n) * s->axis.n_values + k / n;
}

struct sweep_run *sweep_task_slot(struct sweep *s, int t)
{
    return t < s->n_baselines ? &s->baselines[t] : &s->points[sweep_task_point(s, t)].run;
}

void sweep_task_name(const struct sweep *s, int t, const char **strategy, const char **value)
{
    if (t < s->n_baselines) {
        *strategy = NULL;
        *value = s->n_baselines > 1 ? s->axis.values[t] : NULL;
        return;
    }
    const struct sweep_point *p = &s->points[sweep_task_point(s, t)];
    *strategy = p->strategy->name;
    *value = s->axis.values[p->value];
}

int sweep_task_run(struct sweep *s, const struct config *cfg, const struct workload *wl,
                   struct run_numerics *numerics, int t, struct err *e)
{
    const struct sweep_axis *ax = &s->axis;
    struct config c;
    if (t >= s->n_baselines) {
        struct sweep_point *p = &s->points[sweep_task_point(s, t)];
        TRY(sweep_point_config(ax, cfg, p->value, &c, e));
        return run_one(&c, wl, p->strategy, ax, numerics, &p->run, e);
    }
    TRY(sweep_point_config(ax, cfg, t, &c, e));
    /* A devices sweep's baseline: one device with the global batch
     * (strong) or one device's share of it (weak). Set as options, so
     * that a real job is given them too (config_to_args). */
    if (ax->is_devices) {
        char batch[32];
        snprintf(batch, sizeof batch, "%lld", ax->is_weak ? ax->batch_per_device : cfg->batch);
        TRY(config_set(&c, "devices", "1", ~0u, e));
        TRY(config_set(&c, "batch", batch, ~0u, e));
    }
    /* A baseline gives a speed: a simulated one skips the arithmetic. */
    if (!ax->is_real) {
        c.numerics = false;
        c.target_accuracy = 0;
    }
    return run_one(&c, wl, NULL, ax, numerics, &s->baselines[t], e);
}

int sweep_check_baseline(const struct sweep *s, struct err *e)
{
    if (s->axis.is_devices && s->baselines[0].rc)
        return err_set(e, s->baselines[0].rc, "%s", s->baselines[0].note);   /* it names the baseline */
    return 0;
}

int sweep_default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > SWEEP_MAX_JOBS ? SWEEP_MAX_JOBS : (int)n;
}

/* The grid's slots, every point's strategy and value set, nothing run. */
static int sweep_alloc(struct sweep *out, const struct sweep_axis *ax,
                       const struct strategy *const *list, int n, struct err *e)
{
    memset(out, 0, sizeof *out);
    out->axis = *ax;
    if (n > 0 && !(out->strategies = XCALLOC(e, (size_t)n, sizeof *out->strategies)))
        return ERR_NOMEM;
    out->n_strategies = n;
    for (int i = 0; i < n; i++) out->strategies[i] = list[i];
    bool one_base = ax->is_devices || !shapes_baseline(ax->opt, ax);
    out->n_baselines = one_base ? 1 : ax->n_values;
    out->n_points = n * ax->n_values;
    out->baselines = XCALLOC(e, (size_t)out->n_baselines, sizeof *out->baselines);
    out->points = XCALLOC(e, (size_t)out->n_points, sizeof *out->points);
    if (!out->baselines || !out->points) return ERR_NOMEM;
    for (int i = 0; i < n; i++)
        for (int v = 0; v < ax->n_values; v++) {
            out->points[i * ax->n_values + v].strategy = list[i];
            out->points[i * ax->n_values + v].value = v;
        }
    return 0;
}

/* Every task, here in print order or in n_jobs workers. */
static int run_here(struct sweep *s, const struct config *cfg, const struct workload *wl,
                    struct run_numerics *numerics, int n_jobs, sweep_progress_fn progress,
                    void *ctx, struct err *e)
{
    int total = sweep_n_tasks(s);
    /* Workers pay for themselves from two tasks after the first on. */
    if (n_jobs > 1 && !s->axis.is_real && total > 2)
        return sweep_jobs_run(s, cfg, wl, numerics, n_jobs, progress, ctx, e);
    for (int t = 0; t < total; t++) {
        const char *strategy, *value;
        sweep_task_name(s, t, &strategy, &value);
        if (progress) progress(ctx, strategy, value, t, total);
        TRY(sweep_task_run(s, cfg, wl, numerics, t, e));
        if (t == 0) TRY(sweep_check_baseline(s, e));
    }
    return 0;
}

/* Bounds before work: every value's run must fit --max-memory
 * (core/budget.h), checked before the first point runs, not when the
 * largest one would exhaust the machine. */
static int check_budgets(const struct config *cfg, const struct workload *wl,
                         const struct sweep_axis *ax, const struct strategy *const *list, int n,
                         struct err *e)
{
    for (int v = 0; v < ax->n_values; v++) {
        struct config c;
        TRY(sweep_point_config(ax, cfg, v, &c, e));
        unsigned groups = ax->is_real ? OPTG_LAUNCH : OPTG_COMPARE;   /* real ranks, or plans */
        struct budget_plan plan;   /* the largest of the value's runs */
        strategy_plan_size_max(list, (size_t)n, &c, wl, &plan);
        TRY_CTX(e, budget_check(&c, wl, groups, &plan, e), "--vary %s=%.60s", ax->opt->name,
                ax->values[v]);
    }
    return 0;
}

int sweep_run_spread(const struct config *cfg, const struct workload *wl,
                     const struct sweep_axis *ax, const struct strategy *const *list, int n,
                     struct run_numerics *numerics, const struct sweep_spread *sp,
                     sweep_progress_fn progress, void *ctx, struct sweep *out, struct err *e)
{
    TRY(sweep_alloc(out, ax, list, n, e));
    TRY(check_budgets(cfg, wl, ax, list, n, e));
    if (sp->n_ranks > 1)
        TRY(sweep_mpi_run(out, cfg, wl, numerics, sp->rank, sp->n_ranks, progress, ctx, e));
    else
        TRY(run_here(out, cfg, wl, numerics, sp->n_jobs, progress, ctx, e));
    fill_ratios(out);
    return 0;
}

int sweep_run(const struct config *cfg, const struct workload *wl, const struct sweep_axis *ax,
              const struct strategy *const *list, int n, struct run_numerics *numerics,
              sweep_progress_fn progress, void *ctx, struct sweep *out, struct err *e)
{
    const struct sweep_spread here = {.n_jobs = 1, .rank = 0, .n_ranks = 1};
    return sweep_run_spread(cfg, wl, ax, list, n, numerics, &here, progress, ctx, out, e);
}

void sweep_release(struct sweep *s)
{
    for (int i = 0; s->points && i < s->n_points; i++) run_free(&s->points[i].run);
    for (int i = 0; s->baselines && i < s->n_baselines; i++) run_free(&s->baselines[i]);
    free(s->points);
    free(s->baselines);
    free(s->strategies);
    s->points = NULL;
    s->baselines = NULL;
    s->strategies = NULL;
    s->n_points = s->n_baselines = s->n_strategies = 0;
}

double sweep_x(const struct sweep_axis *ax, int i)
{
    return sweep_is_numeric(ax) ? strtod(ax->values[i], NULL) : i + 1;
}

int sweep_xy(const struct sweep *s, struct sweep_xy *out)
{
    int k = 0;
    for (int i = 0; i < s->n_points; i++) {
        const struct sweep_point *p = &s->points[i];
        /* one that did not run stays, its speedup NaN: the plot breaks the
         * strategy's line there rather than draw it across */
        bool has_run = p->run.report && isfinite(p->speedup);
        out[k++] = (struct sweep_xy){p->strategy->name, sweep_x(&s->axis, p->value),
                                     has_run ? p->speedup : NAN, has_run ? p->efficiency : NAN};
    }
    return k;
}

/* --- CSV ------------------------------------------------------------------- */

/* A field quoted as RFC 4180 says when it holds a comma, a quote or a line
 * break (straggler values, notes); others as they are. */
static void csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* ",x" with x exact (%.17g reads back), "," when unknown. */
static void csv_num(FILE *f, double x)
{
    if (isfinite(x)) fprintf(f, ",%.17g", x);
    else fputc(',', f);
}

int sweep_write_csv(const struct sweep *s, const char *path, struct err *e)
{
    bool any_failure = false;
    for (int i = 0; i < s->n_points; i++)
        any_failure |= s->points[i].run.report && s->points[i].run.report->failure.happened;
    struct file_stream out;
    TRY(file_stream_open(&out, path, e));
    FILE *f = out.f;
    fprintf(f, "strategy,option,value,devices,batch,step_time_s,throughput_samples_per_s,speedup,"
            "efficiency,%snote\n", any_failure ? "lost_s,goodput," : "");
    for (int i = 0; i < s->n_points; i++) {
        const struct sweep_point *p = &s->points[i];
        const struct report *r = p->run.report;
        fprintf(f, "%s,%s,", p->strategy->name, s->axis.opt->name);
        csv_text(f, s->axis.values[p->value]);
        fprintf(f, ",%lld,%lld", p->run.devices, p->run.batch);
        csv_num(f, r ? r->step_time_s.mean : NAN);
        csv_num(f, r ? r->throughput_samples_per_s : NAN);
        csv_num(f, p->speedup);
        csv_num(f, p->efficiency);
        if (any_failure) {
            bool failed = r && r->failure.happened;
            csv_num(f, failed ? r->failure.lost_s : NAN);
            csv_num(f, failed ? r->failure.goodput : NAN);
        }
        fputc(',', f);
        csv_text(f, p->run.note);
        fputc('\n', f);
    }
    return file_stream_commit(&out, path, e);
}

/* --- JSON ------------------------------------------------------------------ */

/* A value typed as its option: a number, or text (--straggler, choices). */
static cJSON *value_json(const struct sweep_axis *ax, int i)
{
    return sweep_is_numeric(ax) ? json_num(strtod(ax->values[i], NULL))
                                : cJSON_CreateString(ax->values[i]);
}

/* The fields every entry starts with. */
static cJSON *entry(const struct sweep *s, const struct strategy *st, int v,
                    const struct sweep_run *r, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    if (st) json_add(o, "strategy", cJSON_CreateString(st->name), ok);
    if (v >= 0) {
        json_add(o, "option", cJSON_CreateString(s->axis.opt->name), ok);
        json_add(o, "value", value_json(&s->axis, v), ok);
    }
    json_add(o, "devices", cJSON_CreateNumber((double)r->devices), ok);
    json_add(o, "batch", cJSON_CreateNumber((double)r->batch), ok);
    return o;
}

static cJSON *sweep_json(const struct sweep *s)
{
    bool ok = true;
    const struct sweep_axis *ax = &s->axis;
    cJSON *doc = cJSON_CreateObject();
    json_add(doc, "strata_sweep", cJSON_CreateNumber(1), &ok);
    json_add(doc, "mode", cJSON_CreateString(ax->is_real ? "real" : "sim"), &ok);
    json_add(doc, "option", cJSON_CreateString(ax->opt->name), &ok);
    json_add(doc, "scaling", cJSON_CreateString(ax->is_weak ? "weak" : "strong"), &ok);
    cJSON *values = json_add(doc, "values", cJSON_CreateArray(), &ok);
    for (int v = 0; v < ax->n_values; v++) json_add(values, NULL, value_json(ax, v), &ok);
    cJSON *points = json_add(doc, "points", cJSON_CreateArray(), &ok);
    cJSON *not_run = json_add(doc, "not_run", cJSON_CreateArray(), &ok);
    for (int i = 0; i < s->n_points; i++) {
        const struct sweep_point *p = &s->points[i];
        cJSON *o = entry(s, p->strategy, p->value, &p->run, &ok);
        if (p->run.report) {
            json_add(o, "speedup", json_num(p->speedup), &ok);
            json_add(o, "efficiency", json_num(p->efficiency), &ok);
            json_add(o, "report", report_to_json(p->run.report), &ok);
            json_add(points, NULL, o, &ok);
        } else {
            json_add(o, "reason", cJSON_CreateString(p->run.note), &ok);
            json_add(not_run, NULL, o, &ok);
        }
    }
    cJSON *bases = json_add(doc, "baselines", cJSON_CreateArray(), &ok);
    for (int b = 0; b < s->n_baselines; b++) {
        const struct sweep_run *r = &s->baselines[b];
        cJSON *o = entry(s, NULL, s->n_baselines > 1 ? b : -1, r, &ok);
        if (r->report) json_add(o, "report", report_to_json(r->report), &ok);
        else json_add(o, "reason", cJSON_CreateString(r->note), &ok);
        json_add(bases, NULL, o, &ok);
    }
    if (!ok) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

int sweep_write_json(const struct sweep *s, const char *path, struct err *e)
{
    return json_write_atomic(sweep_json(s), path, e);
}

/* strata validate: every strategy predicted by the simulator on a cluster
 * profile and measured for real on MPI ranks; one row each with the error
 * of the prediction, and the median absolute error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/validate.h"
#include "../sim/cluster.h"
#include "scenario.h"

#if __has_include("../plots/plots.h")
#include "../plots/plots.h"
#define HAVE_PLOTS 1
#else
#define HAVE_PLOTS 0
#endif

#define MAX_ROWS 64

/* What can be refused before anything runs. */
static int check_options(const struct config *cfg, struct err *e)
{
    if (!config_is_set(cfg, "cluster"))
        return err_set(e, ERR_INPUT, "--cluster: validate predicts on a profile of this machine; "
                       "make one with `strata calibrate -o local.profile` and pass "
                       "--cluster local.profile");
    struct cluster c;
    TRY(cluster_load(cfg->cluster, &c, e));
    if (cfg->epochs > 0)
        return err_set(e, ERR_INPUT, "--epochs: validate runs --steps steps both ways (the "
                       "simulator has no data set to count epochs of)");
    if (config_is_set(cfg, "mode"))
        return err_set(e, ERR_INPUT, "--mode: validate runs every strategy both ways; leave "
                       "--mode out");
    if (cfg->trace_path[0] || cfg->timeline)
        return err_set(e, ERR_INPUT, "--trace and --timeline show one run: use `strata real` "
                       "or `strata sim --strategy S` for them");
    if (cfg->csv_path[0])
        return err_set(e, ERR_INPUT, "--csv: validate writes --json only");
    if (!HAVE_PLOTS && (cfg->plot_dir[0] || cfg->plot_terminal))
        return err_set(e, ERR_INPUT, "--plot: this build of strata has no plots module");
    return 0;
}

static void percent(double f, char *buf, size_t n)
{
    if (isfinite(f)) snprintf(buf, n, "%.1f%%", f * 100);
    else snprintf(buf, n, "-");
}

static void print_rows(const struct validate_row *rows, int n)
{
    printf("%-16s %11s %11s %8s | %-16s | %-16s\n", "", "step time", "", "", "predicted",
           "measured");
    printf("%-16s %11s %11s %8s | %7s %8s | %7s %8s\n", "strategy", "predicted", "measured",
           "error", "compute", "comm", "compute", "comm");
    for (int i = 0; i < 16 + 12 + 12 + 9 + 19 + 19; i++) putchar('-');
    putchar('\n');
    for (int i = 0; i < n; i++) {
        const struct validate_row *r = &rows[i];
        char err[32], pc[16], pm[16], mc[16], mm[16];
        snprintf(err, sizeof err, "%+.1f%%", r->error * 100);
        percent(r->predicted->breakdown.compute, pc, sizeof pc);
        percent(r->predicted->breakdown.comm, pm, sizeof pm);
        percent(r->measured->breakdown.compute, mc, sizeof mc);
        percent(r->measured->breakdown.comm, mm, sizeof mm);
        printf("%-16s %8.3f ms %8.3f ms %8s | %7s %8s | %7s %8s\n", r->strategy,
               r->predicted_step_s * 1e3, r->measured_step_s * 1e3, err, pc, pm, mc, mm);
    }
}

#if HAVE_PLOTS
static int plot(const struct config *cfg, const struct validate_row *rows, int n, struct err *e)
{
    struct validation_point pts[MAX_ROWS];
    for (int i = 0; i < n; i++)
        pts[i] = (struct validation_point){rows[i].strategy, rows[i].predicted_step_s,
                                           rows[i].measured_step_s};
    char title[CONFIG_PATH_BYTES + 64];
    snprintf(title, sizeof title, "predicted vs measured step time (%s)", cfg->cluster);
    struct plot_opts o = {.dir = cfg->plot_dir[0] ? cfg->plot_dir : NULL,
                          .terminal = cfg->plot_terminal, .title = title};
    TRY_CTX(e, plot_validation(pts, n, &o, e), "--plot");
    return 0;
}
#endif

int cmd_validate(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct scenario s;
    int status = 0, n_rows = 0, n_notes = 0, n_unfit = 0;
    struct validate_run *runs = NULL;   /* each holds a config: too large for the stack */
    struct validate_row rows[MAX_ROWS];
    char notes[MAX_ROWS][ERR_MSG_BYTES + 64];
    const struct strategy *list[MAX_ROWS];
    size_t n = 0;

    int rc = scenario_load(&s, self, argc, argv, &e);
    if (rc == 0) rc = check_options(&s.cfg, &e);
    if (rc == 0) rc = strategy_parse_list(s.cfg.strategies, list, &n, &e);
    if (rc == 0 && !(runs = XCALLOC(&e, MAX_ROWS, sizeof *runs))) rc = e.code;
    if (rc != 0) {
        status = rc == CONFIG_HELP ? 0 : scenario_fail(self, &e);
        scenario_release(&s);
        return status;
    }
    const struct config *cfg = &s.cfg;
    int np = (int)(config_is_set(cfg, "np") && cfg->np > 0 ? cfg->np : cfg->devices);
    bool progress = isatty(STDERR_FILENO);
    for (size_t i = 0; i < n && i < MAX_ROWS; i++) {
        if (progress)
            fprintf(stderr, "%s: simulating, then running on %d ranks (%zu of %zu)\n",
                    list[i]->name, np, i + 1, n);
        struct err one = {0};
        struct validate_run *v = &runs[n_rows];
        rc = validate_strategy(cfg, s.wl, list[i], np, NULL, v, &one);
        if (rc == 0) {
            rows[n_rows++] = v->row;
            continue;
        }
        validate_run_release(v);
        snprintf(notes[n_notes++], sizeof notes[0], "%s: %s", list[i]->name, one.msg);
        if (rc == ERR_INPUT) n_unfit++;
        else status = 1;
    }

    char desc[512];
    workload_describe(s.wl, desc, sizeof desc);
    printf("predicted on %s, measured on %d MPI ranks of this machine; batch %lld, %lld steps, "
           "data %s, stragglers %s\n%s\n\n", cfg->cluster, np, cfg->batch, cfg->steps, cfg->data,
           cfg->straggler, desc);
    print_rows(rows, n_rows);
    double med = validate_median_abs_error(rows, n_rows);
    if (n_rows > 0)
        printf("\nmedian |error| over %d strateg%s: %.1f%%\n", n_rows, n_rows == 1 ? "y" : "ies",
               med * 100);
    printf("step time: each report's median step; error = predicted / measured - 1; compute "
           "and comm:\nshares of the workers' time (exposed communication only).\n");
    for (int i = 0; i < n_notes; i++) printf("  not run: %s\n", notes[i]);
    if (cfg->json_path[0] && validate_write_json(rows, n_rows, cfg->json_path, &e) < 0) {
        err_prefix(&e, "--json");
        status = scenario_fail(self, &e);
    }
#if HAVE_PLOTS
    if (status == 0 && n_rows > 0 && (cfg->plot_dir[0] || cfg->plot_terminal) &&
        plot(cfg, rows, n_rows, &e) < 0)
        status = scenario_fail(self, &e);
#endif
    if (status == 0 && n_rows == 0 && n_unfit > 0) status = 2;
    for (int i = 0; i < n_rows; i++) validate_run_release(&runs[i]);
    free(runs);
    scenario_release(&s);
    return status;
}

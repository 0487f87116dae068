/* strata validate: a matrix of cells (model x ranks x straggler model), in
 * each every strategy predicted by the simulator on a cluster profile and
 * measured for real on MPI ranks; a row each with the prediction's error,
 * then the summary (bench/validate.h, bench/validate_metrics.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/validate.h"
#include "../bench/validate_axes.h"
#include "../nn/data.h"
#include "../nn/device.h"
#include "../real/real.h"
#include "../plots/plots.h"
#include "../sim/cluster.h"
#include "html.h"
#include "notes.h"
#include "plot.h"
#include "scenario.h"

/* --- The command line --------------------------------------------------------
 * `--np 2,3,4` (or --np=2,3,4) is `--np-list 2,3,4`; a plain `--np 2` stays
 * the option. Rewritten before config parsing, as sweep does with --devices,
 * so messages and scenario files see one --np-list. */

struct words {
    char **argv;    /* argc words; at most one of them made here, `owned` */
    char *owned;
};

static int rewrite_np(int argc, char **argv, struct words *w, struct err *e)
{
    memset(w, 0, sizeof *w);
    w->argv = XCALLOC(e, (size_t)argc + 1, sizeof *w->argv);
    if (!w->argv) return ERR_NOMEM;
    bool ended = false, has_list = false;
    for (int i = 0; i < argc; i++) {
        w->argv[i] = argv[i];
        if (ended || !strcmp(argv[i], "--")) {
            ended = true;
            continue;
        }
        bool is_split = !strcmp(argv[i], "--np") && i + 1 < argc && strchr(argv[i + 1], ',');
        bool is_joined = !strncmp(argv[i], "--np=", 5) && strchr(argv[i], ',');
        if ((is_split || is_joined) && has_list)
            return err_set(e, ERR_INPUT, "--np: given as a list twice; give one list (--np 2,4)");
        if (is_split) {
            w->argv[i] = (char *)"--np-list";
            i++;
            w->argv[i] = argv[i];
        } else if (is_joined) {
            size_t n = strlen(argv[i]) + 6;
            if (!(w->owned = XCALLOC(e, n, 1))) return ERR_NOMEM;
            snprintf(w->owned, n, "--np-list=%s", argv[i] + 5);
            w->argv[i] = w->owned;
        }
        has_list |= is_split || is_joined;
    }
    return 0;
}

static void words_free(struct words *w)
{
    free(w->owned);
    free(w->argv);
}

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
    /* --mode, --csv, --trace, --timeline: refused with the options
     * (validate_refused, cli/main.c) */
    return 0;
}

/* What every real job would refuse alike, said once before any cell runs
 * (each cell and strategy said it as "not run", after its simulation):
 * the device (a GPU this machine lacks too), a launch option alone, and
 * the data set with each model of the matrix. */
static int check_jobs_inputs(const struct config *cfg, const struct validate_axes *ax,
                             struct err *e)
{
    TRY(device_check(cfg->device, e));
    TRY(real_check_launch_pairs(cfg, e));
    struct data d = {0};
    int rc = data_load(cfg->data, (uint64_t)cfg->seed, &d, e);
    for (int i = 0; rc == 0 && i < ax->n_models; i++) {
        const struct workload *wl = ax->workloads[i];
        if (!wl->is_mlp) continue;   /* refused by its jobs, with their reason */
        rc = data_check_model(&d, wl->layers[0].in, (int)wl->n_classes, e);
        if (rc < 0 && ax->n_models > 1) err_prefix(e, "--models %s", ax->models[i]);
    }
    data_release(&d);
    return rc;
}

/* --- Output -------------------------------------------------------------------- */

static void percent(double f, char *buf, size_t n)
{
    if (isfinite(f)) snprintf(buf, n, "%.0f%%", f * 100);
    else snprintf(buf, n, "-");
}

/* "61/30/9": compute, comm and idle shares in percent */
static void shares(const struct report *r, char *buf, size_t n)
{
    char c[16], m[16], i[16];
    percent(r->breakdown.compute, c, sizeof c);
    percent(r->breakdown.comm, m, sizeof m);
    percent(r->breakdown.idle, i, sizeof i);
    snprintf(buf, n, "%s/%s/%s", c, m, i);
}

/* The cell's failures (--fail): the time lost, predicted and measured,
 * with its parts (detection / relaunch / redone work). */
static void print_failures(const struct validate_matrix *m, int ci)
{
    const struct validate_cell *c = &m->cells[ci];
    bool any = false;
    for (int i = 0; i < c->n_rows; i++) any |= m->rows[c->first_row + i].failure != NULL;
    if (!any) return;
    printf("\ntime lost to the failure, predicted | measured (seconds: total = detection + "
           "relaunch + redone work, steps redone)\n");
    printf("%-16s %-8s | %8s %7s %7s %7s %5s | %8s %7s %7s %7s %5s | %7s\n", "strategy",
           "policy", "lost", "detect", "relnch", "redone", "steps", "lost", "detect", "relnch",
           "redone", "steps", "error");
    for (int i = 0; i < 16 + 9 + 2 * 43 + 10; i++) putchar('-');
    putchar('\n');
    for (int i = 0; i < c->n_rows; i++) {
        const struct validate_row *r = &m->rows[c->first_row + i];
        const struct validate_failure *f = r->failure;
        if (!f) continue;
        char err[32] = "-";
        if (isfinite(f->error)) snprintf(err, sizeof err, "%+.1f%%", f->error * 100);
        const struct validate_lost *p = &f->predicted, *q = &f->measured;
        printf("%-16s %-8s | %8.3f %7.3f %7.3f %7.3f %5.3g | %8.3f %7.3f %7.3f %7.3f %5.3g | "
               "%7s\n", r->strategy, failure_policy_names[f->policy], p->lost_s, p->detect_s,
               p->relaunch_s, p->redone_s, p->steps_redone, q->lost_s, q->detect_s,
               q->relaunch_s, q->redone_s, q->steps_redone, err);
    }
}

/* A cell's heading line (its model, ranks, straggler, ranking agreement),
 * on out: the terminal's, and the page's notes. */
static void print_cell_heading(FILE *out, const struct validate_matrix *m, int ci)
{
    const struct validate_cell *c = &m->cells[ci];
    fprintf(out, "\ncell %d of %d: model %s, %d ranks%s, straggler %s", ci + 1, m->n_cells,
            c->model, c->np,
            !m->has_hostfile ? "" : c->is_across_hosts ? " across the hostfile's hosts"
                                                       : " on this machine (one node)",
            c->straggler);
    if (isfinite(c->kendall_tau)) fprintf(out, ", Kendall tau-b %.2f", c->kendall_tau);
    fputc('\n', out);
}

/* A cell's table, on the terminal (the page's is built from the document). */
static void print_cell(const struct validate_matrix *m, int ci)
{
    const struct validate_cell *c = &m->cells[ci];
    printf("%-16s %11s %11s %8s | %-14s %-14s | %s\n", "strategy", "predicted", "measured",
           "error", "pred c/m/i", "meas c/m/i", "staleness TVD");
    for (int i = 0; i < 16 + 12 + 12 + 9 + 34 + 16; i++) putchar('-');
    putchar('\n');
    for (int i = 0; i < c->n_rows; i++) {
        const struct validate_row *r = &m->rows[c->first_row + i];
        char err[32], ps[48], ms[48], tvd[32] = "";
        snprintf(err, sizeof err, "%+.1f%%", r->error * 100);
        shares(r->predicted, ps, sizeof ps);
        shares(r->measured, ms, sizeof ms);
        if (isfinite(r->staleness_tvd)) snprintf(tvd, sizeof tvd, "%.3f", r->staleness_tvd);
        printf("%-16s %8.3f ms %8.3f ms %8s | %-14s %-14s | %s\n", r->strategy,
               r->predicted_step_s * 1e3, r->measured_step_s * 1e3, err, ps, ms, tvd);
    }
    print_failures(m, ci);
}

static void print_load(FILE *out, const struct validate_load *l)
{
    char before[32] = "unknown", after[32] = "unknown";
    if (isfinite(l->before_1min)) snprintf(before, sizeof before, "%.2f", l->before_1min);
    if (isfinite(l->after_1min)) snprintf(after, sizeof after, "%.2f", l->after_1min);
    fprintf(out, "load (1-minute average, %d cores): %s before, %s after (the runs' own %d ranks "
           "allowed for after): %s\n", l->cores, before, after, l->own_ranks,
           l->is_quiet ? "quiet"
                       : "machine was loaded: figures may be off (quiet is at most 0.5 a core)");
}

/* --hostfile: the median |error| of the rows of one placement, by the
 * links their traffic crossed: intra-node only (this machine), or intra and
 * inter (across hosts). */
static void print_link_classes(FILE *out, const struct validate_matrix *m, const char *in)
{
    if (!m->has_hostfile) return;
    static const char *const what[] = {"on this machine (intra-node links)",
                                       "across hosts (inter-node links too)"};
    struct validate_row *part = calloc((size_t)m->n_rows + 1, sizeof *part);
    if (!part) return;
    for (int across = 0; across < 2; across++) {
        int n = 0;
        for (int i = 0; i < m->n_rows; i++)
            if (m->cells[m->rows[i].cell].is_across_hosts == (across == 1)) part[n++] = m->rows[i];
        double med = validate_median_abs_error(part, n);
        if (n > 0 && isfinite(med))
            fprintf(out, "%s|step-time error| %s: median %.1f%% over %d row%s\n", in, what[across],
                   med * 100, n, n == 1 ? "" : "s");
        else
            fprintf(out, "%s|step-time error| %s: n/a (no row)\n", in, what[across]);
    }
    free(part);
}

/* in: the indent of the summary's items ("  " on the terminal; "" for the
 * page, where each is a note of its own); eol: what ends each line of the
 * explanations wrapped at column 0 ("\n"; " " for the page, where each is
 * one note). */
static void print_summary(FILE *out, const struct validate_matrix *m, const char *in,
                          const char *eol)
{
    const struct validate_summary *s = &m->summary;
    fprintf(out, "\nsummary over %d row%s in %d cell%s (measured: median of %d run%s a row)\n",
           s->n_rows, s->n_rows == 1 ? "" : "s", m->n_cells, m->n_cells == 1 ? "" : "s",
           m->repeat, m->repeat == 1 ? "" : "s");
    if (s->n_rows > 0)
        fprintf(out, "%s|step-time error|: median %.1f%%, p90 %.1f%%\n", in,
                s->median_abs_error * 100, s->p90_abs_error * 100);
    print_link_classes(out, m, in);
    if (s->n_inflation > 0)
        fprintf(out, "%sstraggler inflation error: median |e| %.1f%%, max |e| %.1f%% over %d "
               "strategy-straggler pair%s\n", in, s->inflation_median_abs_error * 100,
               s->inflation_max_abs_error * 100, s->n_inflation, s->n_inflation == 1 ? "" : "s");
    else
        fprintf(out, "%sstraggler inflation error: n/a (%s)\n", in,
               s->has_inflation ? "no strategy ran in both cells"
                                : "needs 'none' and a disturbed model in --stragglers");
    for (int i = 0; i < s->n_inflation; i++) {
        const struct validate_inflation *f = &s->inflation[i];
        const struct validate_cell *c = &m->cells[f->cell_disturbed];
        fprintf(out, "%s  %-16s %s, %d ranks, %s: predicted x%.3f, measured x%.3f, error %+.1f%%\n",
                in, f->strategy, c->model, c->np, c->straggler, f->predicted_ratio,
               f->measured_ratio, f->error * 100);
    }
    if (s->n_ranked_cells > 0)
        fprintf(out, "%sranking agreement (Kendall tau-b, ties neither agree nor disagree): mean %.2f "
               "over %d cell%s\n", in, s->kendall_tau_mean, s->n_ranked_cells,
               s->n_ranked_cells == 1 ? "" : "s");
    else
        fprintf(out, "%sranking agreement: n/a (needs 2 strategies with distinct step times in a "
               "cell)\n", in);
    if (s->n_staleness > 0)
        fprintf(out, "%sstaleness TVD (ps-async, ps-ssp): max %.3f over %d row%s\n", in,
               s->staleness_tvd_max, s->n_staleness, s->n_staleness == 1 ? "" : "s");
    else
        fprintf(out, "%sstaleness TVD: n/a (no ps-async or ps-ssp row with pushes both ways)\n",
                in);
    if (s->n_failure > 0)
        fprintf(out, "%stime lost to the failure: median |error| %.1f%%, max %.1f%% over %d row%s\n",
                in, s->failure_median_abs_error * 100, s->failure_max_abs_error * 100, s->n_failure,
               s->n_failure == 1 ? "" : "s");
    fprintf(out, "step time: each report's median step; error = predicted / measured - 1; c/m/i: "
           "compute,%scomm and idle shares of the workers' time (exposed communication only); "
           "staleness TVD: total%svariation distance of the predicted and measured staleness "
           "histograms (0 = the same, 1 = disjoint).\n", eol, eol);
    if (s->n_failure > 0)
        fprintf(out, "with --fail, step time on both sides: the median step of the job that finished "
               "the run (the one%srelaunched after the failure; after shrink or continue on the "
               "survivors), the checkpoints%sand commits written between its steps included; "
               "the failure's own cost is the time-lost table.\n", eol, eol);
}

static int plot(const struct config *cfg, const struct validate_matrix *m, struct err *e)
{
    struct validation_point *pts = XCALLOC(e, (size_t)m->n_rows, sizeof *pts);
    if (!pts) return ERR_NOMEM;
    for (int i = 0; i < m->n_rows; i++)
        pts[i] = (struct validation_point){m->rows[i].strategy, m->rows[i].predicted_step_s,
                                           m->rows[i].measured_step_s};
    char title[CONFIG_PATH_BYTES + 64];
    snprintf(title, sizeof title, "predicted on %s, %d cell%s", cfg->cluster, m->n_cells,
             m->n_cells == 1 ? "" : "s");
    struct plot_opts o = {.dir = cfg->plot_dir[0] ? cfg->plot_dir : NULL,
                          .terminal = cfg->plot_terminal, .title = title};
    int rc = plot_validation(pts, m->n_rows, &o, e);
    free(pts);
    if (rc < 0) return err_prefix(e, "--plot");
    plot_say_where(&o, "validation");
    return 0;
}

/* --- Running the matrix --------------------------------------------------------- */

struct matrix_run {
    struct validate_matrix m;
    struct validate_run *runs;       /* [capacity] one per row; each holds configs */
    struct config *cell_cfg;         /* scratch: too large for the stack */
    char (*notes)[ERR_MSG_BYTES + 128];
    int n_notes, n_unfit, n_failed;
};

/* The scenario of one cell: cfg with its model and straggler set (as given
 * options, so the real jobs are passed them too). */
static int cell_config(const struct config *cfg, const struct validate_axes *ax, int mi, int si,
                       const struct validate_cell *c, struct config *out, struct err *e)
{
    *out = *cfg;
    out->positional = NULL;
    out->n_positional = 0;
    out->first_after_dashes = 0;
    TRY(config_set(out, "model", ax->models[mi], ~0u, e));
    if (cfg->hostfile[0] && !c->is_across_hosts) {
        /* the one-host half of a --hostfile pair: this machine, one node */
        char np[32];
        snprintf(np, sizeof np, "%d", c->np);
        TRY(config_set(out, "hostfile", "", ~0u, e));
        TRY(config_set(out, "devices-per-node", np, ~0u, e));
    }
    return config_set(out, "straggler", ax->stragglers[si], ~0u, e);
}

/* A strategy (and policy) of a cell that did not fit or failed. */
static void note(struct matrix_run *mr, int ci, const char *strategy,
                 const enum failure_policy *policy, const struct err *one)
{
    snprintf(mr->notes[mr->n_notes++], sizeof mr->notes[0], "cell %d, %s%s%s: %s", ci + 1,
             strategy, policy ? ", --on-failure " : "", policy ? failure_policy_names[*policy] : "",
             one->msg);
    if (one->code == ERR_INPUT) mr->n_unfit++;
    else mr->n_failed++;
}

/* One row of cell ci: strategy st both ways, under policy when not NULL.
 * A failure is a note (above). */
static void run_row(struct matrix_run *mr, const struct validate_axes *ax,
                    const struct strategy *st, int ci, int mi, int n_cells,
                    const enum failure_policy *policy, const struct config *cfg)
{
    struct validate_matrix *m = &mr->m;
    struct validate_cell *c = &m->cells[ci];
    struct err one = {0};
    fprintf(stderr, "cell %d of %d (%s, %d ranks, straggler %s): %s%s%s, simulated then run %d "
            "time%s\n", ci + 1, n_cells, c->model, c->np, c->straggler, st->name,
            policy ? ", --on-failure " : "", policy ? failure_policy_names[*policy] : "",
            ax->repeat, ax->repeat == 1 ? "" : "s");
    int rc = 0;
    if (policy) rc = config_set(mr->cell_cfg, "on-failure", failure_policy_names[*policy], ~0u,
                                &one);
    struct validate_run *v = &mr->runs[m->n_rows];
    if (rc == 0)
        rc = validate_strategy(mr->cell_cfg, ax->workloads[mi], st, c->np, ax->repeat, NULL, v,
                               &one);
    /* the largest job: its ranks still weigh in the load after the runs */
    int servers = strategy_has_servers(st) ? (int)cfg->servers : 0;
    if (c->np + servers > m->load.own_ranks) m->load.own_ranks = c->np + servers;
    if (rc == 0) {
        m->rows[m->n_rows] = v->row;
        m->rows[m->n_rows++].cell = ci;
        c->n_rows++;
        return;
    }
    validate_run_release(v);
    note(mr, ci, st->name, policy, &one);
}

/* Cell (mi, ni, si) of the matrix: every strategy both ways; a strategy
 * that does not fit or fails is a note, not the end of the matrix. Fails
 * only when the cell's scenario cannot be made. */
static int run_cell(struct matrix_run *mr, const struct validate_axes *ax,
                    const struct strategy *const *list, size_t n_strategies, int mi, int ni,
                    int si, bool is_across_hosts, const struct config *cfg, int n_cells,
                    struct err *e)
{
    struct validate_matrix *m = &mr->m;
    int ci = m->n_cells++;
    struct validate_cell *c = &m->cells[ci];
    c->is_across_hosts = is_across_hosts;
    snprintf(c->model, sizeof c->model, "%s", ax->models[mi]);
    snprintf(c->straggler, sizeof c->straggler, "%s", ax->stragglers[si]);
    c->np = ax->np[ni];
    c->is_undisturbed = ax->straggler_specs[si].kind == STRAG_NONE;
    c->first_row = m->n_rows;
    c->kendall_tau = NAN;
    TRY(cell_config(cfg, ax, mi, si, c, mr->cell_cfg, e));
    for (size_t j = 0; j < n_strategies; j++) {
        /* with --fail, a row per policy that applies (validate_failure.h);
         * decided on the user's options, before the cell's are changed */
        enum failure_policy policies[3];
        int n_policies = 1;
        struct err one = {0};
        if (cfg->fail[0] && validate_failure_policies(cfg, ax->workloads[mi], list[j], c->np,
                                                      policies, &n_policies, &one) < 0) {
            note(mr, ci, list[j]->name, NULL, &one);
            continue;
        }
        if (n_policies == 0) {
            note(mr, ci, list[j]->name, NULL,
                 &(struct err){ERR_INPUT, "no --on-failure policy applies to it"});
            continue;
        }
        for (int k = 0; k < n_policies; k++)
            run_row(mr, ax, list[j], ci, mi, n_cells, cfg->fail[0] ? &policies[k] : NULL, cfg);
    }
    return 0;
}

static int write_json(const void *m, const char *path, struct err *e)
{
    return validate_write_json(m, path, e);
}

/* --html: the rows' predicted and measured reports, side by side. */
static int write_page(const struct config *cfg, const struct validate_matrix *m,
                      const char *notes, struct err *e)
{
    char scenario[CONFIG_PATH_BYTES + 256];
    snprintf(scenario, sizeof scenario, "%d cell%s, simulated on %s and measured on this "
             "machine (--repeat %d), batch %lld, %lld steps", m->n_cells,
             m->n_cells == 1 ? "" : "s", cfg->cluster, m->repeat, cfg->batch, cfg->steps);
    struct html_run page = {.command = "validate", .scenario = scenario, .notes_text = notes,
                            .write_json = write_json, .json_ctx = m};
    return html_write(cfg, &page, e);
}

int cmd_validate(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct scenario s;
    struct words w;
    struct validate_axes ax;
    memset(&ax, 0, sizeof ax);
    struct matrix_run mr;
    memset(&mr, 0, sizeof mr);
    struct notes notes = {0};   /* the lines around the cells' tables, for --html too */
    const struct strategy **list = NULL;   /* room for every strategy */
    size_t n = 0;
    int status = 0;

    int rc = rewrite_np(argc, argv, &w, &e);
    if (rc == 0) rc = scenario_load(&s, self, argc, w.argv, &e);
    else memset(&s, 0, sizeof s);
    if (rc == 0) rc = check_options(&s.cfg, &e);
    if (rc == 0) rc = validate_axes_parse(&s.cfg, &ax, &e);
    if (rc == 0) rc = check_jobs_inputs(&s.cfg, &ax, &e);
    if (rc == 0 && !(list = XCALLOC(&e, strategy_count, sizeof *list))) rc = ERR_NOMEM;
    if (rc == 0) rc = strategy_parse_list(s.cfg.strategies, list, &n, &e);
    /* with --fail, up to a row per policy (restart, shrink, continue) */
    int n_placements = rc == 0 && s.cfg.hostfile[0] ? 2 : 1;   /* --hostfile: one host, across */
    size_t n_cells = (size_t)ax.n_models * ax.n_np * ax.n_stragglers * n_placements,
           cap = n_cells * n * (rc == 0 && s.cfg.fail[0] ? 3 : 1);
    if (rc == 0 && (!(mr.m.cells = XCALLOC(&e, n_cells, sizeof *mr.m.cells)) ||
                    !(mr.m.rows = XCALLOC(&e, cap, sizeof *mr.m.rows)) ||
                    !(mr.runs = XCALLOC(&e, cap, sizeof *mr.runs)) ||
                    !(mr.notes = XCALLOC(&e, cap, sizeof *mr.notes)) ||
                    !(mr.cell_cfg = XCALLOC(&e, 1, sizeof *mr.cell_cfg))))
        rc = e.code;
    if (rc != 0) {
        status = rc == CONFIG_HELP ? 0 : scenario_fail_in(self, &s, &e);
        goto out;
    }

    const struct config *cfg = &s.cfg;
    struct validate_matrix *m = &mr.m;
    m->repeat = ax.repeat;
    m->has_hostfile = n_placements > 1;
    m->load.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    struct err load_err = {0};
    if (validate_load_read(&m->load.before_1min, &load_err) < 0)
        fprintf(stderr, "strata validate: %s\n", load_err.msg);

    /* cells in the order models, ranks, stragglers: a straggler's cell runs
     * beside its undisturbed partner, under the same load */
    for (int mi = 0; mi < ax.n_models; mi++)
        for (int ni = 0; ni < ax.n_np; ni++)
            for (int pi = 0; pi < n_placements; pi++)
                for (int si = 0; si < ax.n_stragglers; si++)
                    if (run_cell(&mr, &ax, list, n, mi, ni, si, pi == 1, cfg, (int)n_cells,
                                 &e) < 0) {
                        status = scenario_fail_in(self, &s, &e);
                        goto out;
                    }
    if (validate_load_read(&m->load.after_1min, &load_err) < 0)
        fprintf(stderr, "strata validate: %s\n", load_err.msg);
    validate_load_judge(&m->load);
    if (validate_summarize(m, &e) < 0) {
        status = scenario_fail_in(self, &s, &e);
        goto out;
    }

    /* the lines around the tables go to the page's notes too */
    notes_begin(&notes);
    fprintf(notes.f, "predicted on %s, measured on MPI ranks of %s; batch %lld, %lld steps, "
                     "data %s\n", cfg->cluster,
            cfg->hostfile[0] ? "this machine and --hostfile's hosts" : "this machine",
            cfg->batch, cfg->steps, cfg->data);
    print_load(notes.f, &m->load);
    scenario_note_tf32_unread(notes.f, cfg, "note:", "");
    notes_end(&notes);
    for (int ci = 0; ci < m->n_cells; ci++) {
        notes_begin(&notes);
        print_cell_heading(notes.f, m, ci);
        notes_end(&notes);
        print_cell(m, ci);
    }
    /* The summary's page form: its items as notes of their own, its
     * explanations unwrapped (the page's splitter would join the indented
     * items into one note and part a paragraph wrapped at column 0). */
    char *page_summary = NULL;
    size_t page_len = 0;
    FILE *page_f = open_memstream(&page_summary, &page_len);
    if (page_f) {
        print_summary(page_f, m, "", " ");
        for (int i = 0; i < mr.n_notes; i++) fprintf(page_f, "  not run: %s\n", mr.notes[i]);
        if (fclose(page_f) != 0) {   /* the page then has the terminal's form */
            free(page_summary);
            page_summary = NULL;
        }
    }
    notes_begin(&notes);
    print_summary(notes.f, m, "  ", "\n");
    for (int i = 0; i < mr.n_notes; i++) fprintf(notes.f, "  not run: %s\n", mr.notes[i]);
    notes_end_page(&notes, page_summary);
    free(page_summary);
    if (mr.n_failed > 0) status = 1;
    else if (m->n_rows == 0 && mr.n_unfit > 0) status = 2;
    /* A failed or refused validation writes no file (as compare and
     * sweep), and says why on stderr. */
    if (status != 0) {
        fprintf(stderr, "strata %s: %s; no file written:\n", self->name,
                status == 1 ? "a run failed" : "nothing ran");
        for (int i = 0; i < mr.n_notes; i++) fprintf(stderr, "  not run: %s\n", mr.notes[i]);
        goto out;
    }
    if (cfg->json_path[0] && validate_write_json(m, cfg->json_path, &e) < 0) {
        err_prefix(&e, "--json");
        status = scenario_fail_in(self, &s, &e);
    }
    if (status == 0 && m->n_rows > 0 && (cfg->plot_dir[0] || cfg->plot_terminal) &&
        plot(cfg, m, &e) < 0)
        status = scenario_fail_in(self, &s, &e);
    if (status == 0 && write_page(cfg, m, notes.text, &e) < 0) status = scenario_fail(self, &e);

out:
    for (int i = 0; i < mr.m.n_rows; i++) validate_run_release(&mr.runs[i]);
    validate_summary_release(&mr.m.summary);
    free(mr.m.cells);
    free(mr.m.rows);
    free(mr.runs);
    free(mr.notes);
    notes_release(&notes);
    free(mr.cell_cfg);
    free(list);
    validate_axes_release(&ax);
    scenario_release(&s);
    words_free(&w);
    return status;
}

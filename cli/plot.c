/* strata plot: the figures of saved reports; and the --plot of compare. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/text_append.h"
#include "../plots/plots.h"
#include "html.h"
#include "outputs.h"
#include "plot.h"
#include "scenario.h"

/* `strata plot` alone writes here. */
#define PLOT_DEFAULT_DIR "plots"

bool plot_wanted(const struct config *cfg)
{
    return cfg->plot_dir[0] || cfg->plot_terminal;
}

void plot_say_where(const struct plot_opts *o, const char *names)
{
    if (o->dir && o->dir[0])
        printf("plots in %s/: %s (each NAME.png and NAME.svg, drawn by gnuplot from NAME.gp "
               "and NAME.dat: `gnuplot NAME.gp` there draws it again)\n", o->dir, names);
}

static void append(char *buf, size_t n, const char *name)
{
    size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s%s", len ? ", " : "", name);
}

/* Convergence and staleness of rs, and what was left out and why (on
 * notes; NULL: not said). The convergence figure without a loss curve is
 * drawn empty unless o->is_sparing. */
static int plot_report_set(const struct plot_opts *o, const struct report *const *rs, int n,
                           char *names, size_t n_names, FILE *notes, struct err *e)
{
    bool has_loss = false, has_staleness = false;
    for (int i = 0; i < n; i++) {
        if (rs[i]->n_loss_curve > 0 || rs[i]->n_accuracy_curve > 0) has_loss = true;
        for (int k = 0; k < rs[i]->staleness.n_histogram; k++)
            if (rs[i]->staleness.histogram[k] > 0) has_staleness = true;
    }
    if (has_loss || !o->is_sparing) {
        TRY(plot_convergence(rs, n, o, e));
        append(names, n_names, "convergence");
    }
    if (!has_loss && notes && o->is_sparing)
        fprintf(notes, "  note: no convergence plot: no loss curve in these reports: simulate "
                "with --numerics, or run for real\n");
    else if (!has_loss && notes)
        fprintf(notes, "  note: no loss curve in these reports, so the convergence plot is empty: "
               "simulate with --numerics, or run for real\n");
    if (has_staleness) {
        TRY(plot_staleness(rs, n, o, e));
        append(names, n_names, "staleness");
    } else if (notes) {
        fprintf(notes, "  note: no staleness plot: no run counts staleness (only parameter "
                       "servers and pipelined-steps do)\n");
    }
    return 0;
}

static void opts_of(const struct config *cfg, const char *title, struct plot_opts *o)
{
    *o = (struct plot_opts){cfg->plot_dir[0] ? cfg->plot_dir : NULL, cfg->plot_terminal, title,
                            false};
}

int plot_run_timelines(const struct plot_opts *o, struct sim_run *const *runs, int n,
                       int64_t step_a, int64_t step_b, char *names, size_t n_names,
                       struct err *e)
{
    for (int i = 0; i < n; i++) {
        size_t n_spans;
        const struct span *spans = run_drawn_spans(runs[i], &n_spans);
        double t_begin, t_end;
        outputs_window_of(runs[i], step_a, step_b, &t_begin, &t_end);
        if (t_end <= t_begin) continue;   /* nothing took time: nothing to draw */
        /* failures (any policy's) drawn from the run's marks */
        TRY(plot_timeline_marked(spans, n_spans, runs[i]->plan->n_ranks,
                                 runs[i]->report.strategy, t_begin, t_end, &runs[i]->marks, o,
                                 e));
        char name[96];
        snprintf(name, sizeof name, "timeline-%s", runs[i]->report.strategy);
        append(names, n_names, name);
    }
    return 0;
}

int plot_sim_runs(const struct config *cfg, struct sim_run *const *runs, int n, struct err *e)
{
    if (n == 0) return 0;
    const struct sim_run *first = runs[0];
    char title[512], names[1024] = "";
    snprintf(title, sizeof title,
             "%lld device%s of %.120s%s, batch %lld, %.120s, stragglers %.120s",
             cfg->devices, cfg->devices == 1 ? "" : "s", first->cluster.name,
             first->cluster.is_ideal ? " (times in cost units)" : "", cfg->batch, cfg->model,
             cfg->straggler);
    struct plot_opts o;
    opts_of(cfg, title, &o);
    const struct report **rs = XCALLOC(e, (size_t)n, sizeof *rs);
    if (!rs) return err_prefix(e, "--plot");
    for (int i = 0; i < n; i++) rs[i] = &runs[i]->report;
    int rc = plot_report_set(&o, rs, n, names, sizeof names, stdout, e);
    free(rs);
    TRY_CTX(e, rc, "--plot");

    char tl_title[600];
    int64_t step_a, step_b;
    TRY_CTX(e, outputs_timeline_steps(cfg, &step_a, &step_b, e), "--plot");
    if (cfg->timeline_steps[0])
        snprintf(tl_title, sizeof tl_title, "steps %lld to %lld; %s", (long long)step_a,
                 (long long)step_b, title);
    else
        snprintf(tl_title, sizeof tl_title, "first %d steps; %s", OUTPUTS_TIMELINE_STEPS, title);
    o.title = tl_title;
    TRY_CTX(e, plot_run_timelines(&o, runs, n, step_a, step_b, names, sizeof names, e), "--plot");
    plot_say_where(&o, names);
    return 0;
}

int plot_real_reports(const struct config *cfg, const struct report *const *rs, int n,
                      const char *title, struct err *e)
{
    if (n == 0) return 0;
    struct plot_opts o;
    char names[256] = "";
    opts_of(cfg, title, &o);
    TRY_CTX(e, plot_report_set(&o, rs, n, names, sizeof names, stdout, e), "--plot");
    printf("  note: no timeline plots for real runs: their jobs do not send spans back "
           "(`strata compare --plot DIR` draws the simulated ones)\n");
    plot_say_where(&o, names);
    return 0;
}

/* --- strata plot --------------------------------------------------------- */

/* The scenario the reports share: what they all say alike, as the first
 * states it; what differs is left out, and the title says they differ. */
static void title_of(const struct report *const *rs, int n, char *buf, size_t size)
{
    bool same_devices = true, same_mode = true, same_cluster = true, same_batch = true,
         same_model = true;
    const struct config *c = rs[0]->config;
    for (int i = 1; i < n; i++) {
        const struct config *ci = rs[i]->config;
        if (rs[i]->devices != rs[0]->devices) same_devices = false;
        if (strcmp(rs[i]->mode, rs[0]->mode)) same_mode = false;
        if (!c || !ci) continue;
        same_cluster &= !strcmp(ci->cluster, c->cluster);
        same_batch &= ci->batch == c->batch;
        same_model &= !strcmp(ci->model, c->model);
    }
    bool is_real = same_mode && !strcmp(rs[0]->mode, "real");
    size_t used = 0;
    buf[0] = '\0';
    if (same_devices)
        text_appendf(buf, size, &used, "%d %s%s, ", rs[0]->devices, is_real ? "rank" : "device",
                     rs[0]->devices == 1 ? "" : "s");
    if (!c) {
        text_appendf(buf, size, &used, "%s", is_real ? "measured" : "simulated");
        return;
    }
    const char *sep = "";
    if (same_mode && !is_real && same_cluster) {
        text_appendf(buf, size, &used, "%.120s", c->cluster);
        sep = ", ";
    }
    if (same_batch) {
        text_appendf(buf, size, &used, "%sbatch %lld", sep, c->batch);
        sep = ", ";
    }
    if (same_model) {
        text_appendf(buf, size, &used, "%s%.120s", sep, c->model);
        sep = ", ";
    }
    if (!same_mode || is_real)
        text_appendf(buf, size, &used, "%s%s", sep, is_real ? "measured" : "simulated and measured");
    if (!(same_devices && same_cluster && same_batch && same_model))
        text_appendf(buf, size, &used, " (reports of different scenarios)");
}

void plot_sweep_title(const struct sweep_scenario *s, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    text_appendf(buf, n, &at, "over %s, %s on %s; %s", s->option,
                 s->is_real ? "measured" : "simulated", s->is_real ? "this machine" : s->cluster,
                 s->model);
    /* a weak sweep's batch grows, its batch per device stays */
    if (s->is_weak)
        text_appendf(buf, n, &at, ", %lld samples per device (weak scaling)",
                     s->batch_per_device);
    else if (strcmp(s->option, "batch"))
        text_appendf(buf, n, &at, ", batch %lld (%s scaling)", s->batch, s->scaling);
    if (strcmp(s->option, "straggler")) text_appendf(buf, n, &at, ", stragglers %s", s->straggler);
}

/* A one-document title that says what the document is, as the command that
 * wrote it titled its figures: a sweep's axis and scenario (its points
 * differ in the option it varied, by design), a validation's cluster and
 * cells (its predicted and measured reports differ in mode and cluster).
 * False: not such a document, or one written before a sweep said its axis;
 * title_of's then. */
static bool document_title(const struct report_doc *d, char *buf, size_t size)
{
    if (d->n < 1 || !d->configs) return false;
    const struct config *c = &d->configs[0];
    if (!strcmp(d->kind, "strata_sweep") && d->sweep.has_axis) {
        const struct report *r = &d->reports[0];
        const struct sweep_scenario sc = {
            .option = d->sweep.option, .is_real = d->sweep.is_real,
            .is_weak = d->sweep.is_weak && !strcmp(d->sweep.option, "devices"),
            .cluster = c->cluster, .model = c->model,
            .scaling = d->sweep.is_weak ? "weak" : "strong",
            .straggler = c->straggler, .batch = c->batch,
            .batch_per_device = r->devices > 0 ? c->batch / r->devices : c->batch};
        plot_sweep_title(&sc, buf, size);
        return true;
    }
    if (strcmp(d->kind, "strata_validate")) return false;
    /* a cell: a model, a number of ranks and a straggler model; each row's
     * first report is its prediction */
    int n_cells = 0;
    for (int i = 0; i < d->n_entries; i++) {
        const struct config *ci = &d->configs[d->entries[i].first_report];
        bool is_new = true;
        for (int j = 0; j < i && is_new; j++) {
            const struct config *cj = &d->configs[d->entries[j].first_report];
            is_new = strcmp(ci->model, cj->model) || ci->devices != cj->devices ||
                     strcmp(ci->straggler, cj->straggler);
        }
        n_cells += is_new;
    }
    snprintf(buf, size, "predicted on %s, %d cell%s", c->cluster, n_cells, n_cells == 1 ? "" : "s");
    return true;
}

/* What a sweep's points and a validation's rows say beside their reports,
 * as the plots take it; the strategy names are the reports', so they live
 * as long as the documents. */
struct extras {
    struct speedup_point *speedup;        /* [n_speedup], owned */
    int n_speedup;
    struct validation_point *validation;  /* [n_validation], owned */
    int n_validation;
    int n_other_sweeps;                   /* sweep documents of another option than devices */
};

/* Did the sweep document d vary the devices (two points at two counts)?
 * Another option's points are over its first value, at one device count. */
static bool sweep_varies_devices(const struct report_doc *d)
{
    for (int j = 1; j < d->n_entries; j++)
        if (d->entries[j].devices != d->entries[0].devices) return true;
    return false;
}

static int collect_extras(const struct report_doc *docs, int n_docs, struct extras *x,
                          struct err *e)
{
    size_t n = 1;   /* never 0, so that NULL means out of memory */
    for (int i = 0; i < n_docs; i++) n += (size_t)docs[i].n_entries;
    x->speedup = XCALLOC(e, n, sizeof *x->speedup);
    x->validation = XCALLOC(e, n, sizeof *x->validation);
    if (!x->speedup || !x->validation) return ERR_NOMEM;
    for (int i = 0; i < n_docs; i++) {
        const struct report_doc *d = &docs[i];
        bool is_sweep = !strcmp(d->kind, "strata_sweep");
        if (!is_sweep && strcmp(d->kind, "strata_validate")) continue;   /* compare's speedups */
        /* a speedup over another value's first is no speedup over one
         * device: it would join the devices figure at its one count */
        if (is_sweep && !sweep_varies_devices(d)) {
            x->n_other_sweeps++;
            continue;
        }
        for (int j = 0; j < d->n_entries; j++) {
            const struct report_doc_entry *en = &d->entries[j];
            const char *strategy = d->reports[en->first_report].strategy;
            if (is_sweep)
                x->speedup[x->n_speedup++] = (struct speedup_point){
                    strategy, en->devices, en->speedup, en->efficiency};
            else
                x->validation[x->n_validation++] = (struct validation_point){
                    strategy, en->predicted_step_s, en->measured_step_s};
        }
    }
    return 0;
}

/* A speedup plot is worth drawing when a strategy comes at two device counts. */
static bool varies_devices(const struct extras *x)
{
    for (int i = 0; i < x->n_speedup; i++)
        for (int j = i + 1; j < x->n_speedup; j++)
            if (!strcmp(x->speedup[i].strategy, x->speedup[j].strategy) &&
                x->speedup[i].x != x->speedup[j].x)
                return true;
    return false;
}

/* A goodput plot is worth drawing when a strategy's runs failed at two
 * checkpoint intervals (a sweep of --checkpoint-every, say). */
static bool varies_checkpoint_interval(const struct report *const *rs, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const struct report *a = rs[i], *b = rs[j];
            if (a->failure.happened && b->failure.happened && a->config && b->config &&
                !strcmp(a->strategy, b->strategy) &&
                a->config->checkpoint_every != b->config->checkpoint_every)
                return true;
        }
    return false;
}

int plot_documents(const struct plot_opts *o, const struct report_doc *docs, int n_docs,
                   char *names, size_t n_names, FILE *notes, struct err *e)
{
    struct extras x = {0};
    int n = 0;
    for (int i = 0; i < n_docs; i++) n += docs[i].n;
    const struct report **rs = XCALLOC(e, (size_t)n + 1, sizeof *rs);
    int rc = rs ? collect_extras(docs, n_docs, &x, e) : ERR_NOMEM;
    for (int i = 0, k = 0; rc == 0 && i < n_docs; i++)
        for (int j = 0; j < docs[i].n; j++) rs[k++] = &docs[i].reports[j];
    if (rc == 0) rc = plot_report_set(o, rs, n, names, n_names, notes, e);
    if (rc == 0 && varies_devices(&x)) {
        const struct speedup_axes axes = {.x_label = "devices", .speedup_over = "one device",
                                          .ideal_line = true};
        rc = plot_speedup(x.speedup, x.n_speedup, &axes, o, e);
        if (rc == 0) append(names, n_names, "speedup, efficiency");
    }
    if (rc == 0 && x.n_other_sweeps > 0)
        fprintf(notes, "  note: no speedup plot of the sweep%s of another option than the "
                "devices (speedups over its first value, not one device): `strata sweep --vary "
                "... --plot DIR` draws %s\n", x.n_other_sweeps == 1 ? "" : "s",
                x.n_other_sweeps == 1 ? "it" : "them");
    if (rc == 0 && varies_checkpoint_interval(rs, n)) {
        rc = plot_goodput(rs, n, o, e);
        if (rc == 0) append(names, n_names, "goodput");
    }
    if (rc == 0 && x.n_validation > 0) {
        rc = plot_validation(x.validation, x.n_validation, o, e);
        if (rc == 0) append(names, n_names, "validation");
    }
    /* a replay's step times as bars, as `strata replay --plot` draws them
     * (the first replay document's: the figure has one name) */
    for (int i = 0; rc == 0 && i < n_docs; i++)
        if (!strcmp(docs[i].kind, "strata_replay") && docs[i].n >= 2) {
            char whatif[sizeof docs[i].replay.what + 16];
            snprintf(whatif, sizeof whatif, "what-if: %s", docs[i].replay.what);
            const struct replay_bar bars[] = {
                {"measured", docs[i].reports[0].step_time_s.mean},
                {"replayed", docs[i].reports[1].step_time_s.mean},
                {whatif, docs[i].replay.step_s}};
            rc = plot_replay(bars, docs[i].replay.has_whatif ? 3 : 2, o, e);
            if (rc == 0) append(names, n_names, "replay");
            break;
        }
    free(x.speedup);
    free(x.validation);
    free(rs);
    return rc;
}

int cmd_plot(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct config cfg;
    config_init(&cfg);
    struct report_doc *docs = NULL;
    const struct report **rs = NULL;
    int n_docs = 0, n = 0, status = 0;
    int rc = config_parse_args(&cfg, argc, argv, self->groups, &e);
    if (rc == CONFIG_HELP) {
        command_print_help(self, stdout);
        goto out;
    }
    if (rc == 0 && cfg.n_positional == 0)
        rc = err_set(&e, ERR_INPUT, "give the report files to plot (`strata sim`, `compare`, "
                     "`sweep` and `validate` write them with --json FILE)");
    /* Plain `strata plot FILE` has to put its figures somewhere: plots/,
     * or only the page when --html is all that was asked. */
    if (rc == 0 && !config_is_set(&cfg, "plot") && !config_is_set(&cfg, "plot-terminal") &&
        !cfg.html_path[0])
        snprintf(cfg.plot_dir, sizeof cfg.plot_dir, "%s", PLOT_DEFAULT_DIR);
    if (rc == 0) rc = outputs_check(&cfg, &e);
    if (rc == 0 && !(docs = XCALLOC(&e, (size_t)cfg.n_positional, sizeof *docs)))
        rc = ERR_NOMEM;
    for (int i = 0; rc == 0 && i < cfg.n_positional; i++) {
        rc = report_doc_read(cfg.positional[i], &docs[i], &e);
        if (rc == 0) {
            n_docs++;
            n += docs[i].n;
        }
        /* A document may list no reports (a compare or sweep that ran
         * nothing): it has nothing to draw, and the title needs a report. */
        if (rc == 0 && docs[i].n == 0)
            rc = err_set(&e, ERR_INPUT, "%s: the %s document holds no reports: nothing to plot",
                         cfg.positional[i], docs[i].kind);
    }
    if (rc == 0 && !(rs = XCALLOC(&e, (size_t)n + 1, sizeof *rs))) rc = ERR_NOMEM;
    if (rc < 0) {
        status = scenario_fail(self, &e);
        goto out;
    }
    for (int i = 0, k = 0; i < n_docs; i++)
        for (int j = 0; j < docs[i].n; j++) rs[k++] = &docs[i].reports[j];

    char title[CONFIG_PATH_BYTES + 1024], names[256] = "";
    if (n_docs != 1 || !document_title(&docs[0], title, sizeof title))
        title_of(rs, n, title, sizeof title);
    struct plot_opts o;
    opts_of(&cfg, title, &o);
    /* --html alone draws its figures only for the page, which leaves an
     * empty convergence figure out: the terminal's note says so too */
    o.is_sparing = !o.dir && !o.terminal;
    rc = plot_documents(&o, docs, n_docs, names, sizeof names, stdout, &e);
    if (rc == 0 && cfg.html_path[0]) rc = html_write_files(&cfg, "plot", title, &e);
    if (rc < 0) status = scenario_fail(self, &e);
    else plot_say_where(&o, names);
out:
    free(rs);
    for (int i = 0; i < n_docs; i++) report_doc_release(&docs[i]);
    free(docs);
    config_release(&cfg);
    return status;
}

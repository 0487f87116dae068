/* strata replay TRACE: a run's trace replayed in the simulator with its
 * measured compute times, and what-if questions on it (bench/replay.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/replay.h"
#include "../core/trace_read.h"
#include "../plots/plots.h"
#include "commands.h"
#include "html.h"
#include "notes.h"
#include "outputs.h"
#include "plot.h"
#include "scenario.h"

/* Options of the groups replay takes that it has no use for: the trace's
 * scenario says them, or replay draws nothing they shape (its timelines
 * show every step; its compute is measured, not computed). */
const struct refusal replay_refused[] = {
    {(const char *const[]){"steps", "straggler", "mtbf", "nodes", "devices-per-node", "allreduce",
                           "jitter", "numerics", "csv", "trace", "timeline", "timeline-steps",
                           NULL},
     "replay takes it from the trace's scenario, or has no use for it"},
    {NULL, NULL},
};

static int check_options(const struct command *self, const struct config *cfg, struct err *e)
{
    TRY(command_refuse_options(self, cfg, e));
    /* the one random draw of a replay is --scale's (bench/replay.h): a
     * --seed without it would change nothing, and say nothing */
    if (config_is_set(cfg, "seed") && cfg->scale_devices == 0)
        return err_set(e, ERR_INPUT, "--seed %lld: replay draws at random only for --scale N's "
                       "what-if, and --scale is not given; without --scale it has no use for it "
                       "(see strata %s --help)", cfg->seed, self->name);
    if (cfg->n_positional != 1)
        return err_set(e, ERR_INPUT, "replay takes one trace file (strata replay TRACE.json), "
                       "not %d; write one with `strata real --trace FILE`", cfg->n_positional);
    return outputs_check(cfg, e);
}

static void print_ms(double s)
{
    printf("%12.4g ms", s * 1e3);
}

/* The home replay's network, in the header, on out: what it timed.
 * is_cluster_given: --cluster was, which for a real trace names that
 * network. */
static void print_network(FILE *out, const struct replay_result *r, bool is_cluster_given)
{
    const bool is_real = !strcmp(r->mode, "real");
    const char *unknown = is_real && !strcmp(r->home_cluster, "cpu-loopback")
                              ? " (a real run's network is unknown: --cluster PROFILE replays on "
                                "a calibrated one)"
                              : "";
    if (!r->is_measured_comm) {
        fprintf(out, "replayed on %s%s: each compute op as long as it took in the trace, with any "
                     "delay its rank took before starting it (so compute repl. may exceed "
                     "compute meas.), communication from the network model\n",
                r->home_cluster, unknown);
        return;
    }
    fprintf(out, "replayed on %s: each compute op as long as it took in the trace, with any delay "
                 "its rank took before starting it (so compute repl. may exceed compute meas.), "
                 "and communication too (--measured-comm): the error is the schedule's%s\n",
            r->home_cluster, r->has_comm_modelled ? " and, for that communication, the network "
                                                    "model's"
                                                  : " alone");
    if (r->has_comm_modelled)
        fprintf(out, "communication the trace holds no time for from the network model of %s%s\n",
                r->home_cluster, unknown);
    else if (is_real && is_cluster_given && !r->is_whatif_comm_modelled)
        fprintf(out, "--cluster %s: no use here: every communication op took its measured time "
                     "(--measured-comm), and no what-if replanned the run's messages\n",
                r->home_cluster);
}

/* The lines above the tables (what was replayed, how, and what the run's
 * clocks and cores were like), on out: the terminal's, and the page's
 * notes. */
static void print_header(FILE *out, const char *name, const struct replay_result *r,
                         bool is_cluster_given)
{
    fprintf(out, "replay of %s: %s on %lld devices, %lld steps, a %s run\n", name, r->cfg.strategy,
            r->cfg.devices, r->cfg.steps,
            !strcmp(r->mode, "real") ? "measured (real)" : "simulated");
    print_network(out, r, is_cluster_given);
    if (r->has_server_updates)
        fprintf(out, "the parameter servers' updates as long as they took in the trace\n");
    if (r->clock_error_s >= 0)
        fprintf(out, "the ranks' clocks agreed with rank 0's to within %.1f us (ping-pong at the "
                     "start)\n", 1e6 * r->clock_error_s);
    if (r->is_oversubscribed)
        fprintf(out, "oversubscribed: %d processes on %d cores: ranks waiting in MPI (and servers "
                     "polling for messages) took cores from compute, and messages waited for "
                     "their receivers to be scheduled; the replay does not model that, so it runs "
                     "faster than the measured run\n", r->processes, r->cores);
}

/* The step-time and per-rank tables, on the terminal (the page builds its
 * own from the document, plots/html_table.c). */
static void print_tables(const struct replay_result *r)
{
    putchar('\n');
    printf("%-22s %15s %15s %8s\n", "", "measured", "replayed", "error");
    printf("%-22s", "step time (mean)");
    print_ms(r->measured.step_time_s.mean);
    print_ms(r->replayed.step_time_s.mean);
    printf(" %+7.1f%%\n\n", 100 * r->error);

    bool has_share = false;
    for (int i = 0; i < r->n_ranks; i++) has_share |= isfinite(r->ranks[i].straggler_share);
    printf("%-6s %15s %15s %8s %15s %15s%s\n", "rank", "end measured", "end replayed", "error",
           "compute meas.", "compute repl.", has_share ? "  straggler cost" : "");
    for (int i = 0; i < r->n_ranks; i++) {
        const struct replay_rank *x = &r->ranks[i];
        printf("%-6d", x->rank);
        print_ms(x->measured_end_s);
        print_ms(x->replayed_end_s);
        printf(" %+7.1f%%", 100 * (x->replayed_end_s / x->measured_end_s - 1));
        print_ms(x->measured_compute_s);
        print_ms(x->replayed_compute_s);
        if (has_share) printf("  %13.1f%%", 100 * x->straggler_share);
        putchar('\n');
    }
}

/* The lines under the per-rank table (the what-if and the straggler
 * costs), on out: the terminal's, and the page's notes. */
static void print_after_table(FILE *out, const struct replay_result *r)
{
    if (r->replayed_ops_from_rates)
        fprintf(out, "note: the replay ran %lld compute ops of steps the trace does not hold (its "
                     "asynchronous workers shared the steps out otherwise); they took the run's "
                     "measured time per FLOP\n", (long long)r->replayed_ops_from_rates);
    if (!r->has_whatif) return;
    fprintf(out, "\nwhat-if (%s): %.4g ms a step, %+.1f%% against the measured run (%+.1f%% "
           "against the replay)\n", r->whatif_what, 1e3 * r->whatif.step_time_s.mean, 100 * r->whatif_change,
           100 * (r->whatif.step_time_s.mean / r->replayed.step_time_s.mean - 1));
    if (r->is_whatif_comm_modelled)
        fprintf(out, "its communication from the network model of %s: the what-if's messages were "
                     "never measured (--measured-comm)\n", r->whatif_cfg.cluster);
    if (r->whatif_ops_from_rates)
        fprintf(out, "note: the what-if ran %lld compute ops of steps the trace does not hold (its "
                     "asynchronous workers shared the steps out otherwise); they took the run's "
                     "measured time per FLOP\n", (long long)r->whatif_ops_from_rates);
    if (r->is_share_skipped)
        fprintf(out, "no straggler cost per rank: each takes a replay of the whole run, done "
                     "for up to %d workers, and this run has %d\n", REPLAY_MAX_SHARE_RANKS,
                r->n_ranks);
    for (int i = 0; i < r->n_ranks; i++)
        if (isfinite(r->ranks[i].straggler_share) && r->ranks[i].straggler_share >= 0.005)
            fprintf(out, "rank %d cost this job %.0f%% of its time (the replay with rank %d alone at "
                   "typical op times is that much shorter)\n",
                         r->ranks[i].rank, 100 * r->ranks[i].straggler_share, r->ranks[i].rank);
}

/* The measured and the replayed timeline on one time axis, and the step
 * times as bars, into o. */
static int draw_replay(const struct trace_doc *doc, const struct replay_result *r,
                       const struct plot_opts *o, struct err *e)
{
    double t_end_s = fmax(r->measured.step_time_s.mean, r->replayed.step_time_s.mean) *
                     (double)r->cfg.steps;
    TRY(plot_replay_timelines(doc->trace.spans.items, doc->trace.spans.len,
                              r->replayed_trace.spans.items, r->replayed_trace.spans.len,
                              r->n_plan_ranks, t_end_s, o, e));
    char whatif[300];
    snprintf(whatif, sizeof whatif, "what-if: %s", r->whatif_what);
    struct replay_bar bars[3] = {{"measured", r->measured.step_time_s.mean},
                                 {"replayed", r->replayed.step_time_s.mean},
                                 {whatif, r->whatif.step_time_s.mean}};
    return plot_replay(bars, r->has_whatif ? 3 : 2, o, e);
}

static void title_of(const struct replay_result *r, char *buf, size_t n)
{
    snprintf(buf, n, "replay of a %s run: %s, %lld devices, %lld steps", r->mode, r->cfg.strategy,
             r->cfg.devices, r->cfg.steps);
}

static int write_plots(const struct config *cfg, const struct trace_doc *doc,
                       const struct replay_result *r, struct err *e)
{
    char title[256];
    title_of(r, title, sizeof title);
    struct plot_opts o = {cfg->plot_dir[0] ? cfg->plot_dir : NULL, cfg->plot_terminal, title,
                          false};
    TRY_CTX(e, draw_replay(doc, r, &o, e), "--plot");
    if (o.dir) printf("\n");
    plot_say_where(&o, "replay-timelines, replay");
    return 0;
}

/* --html: the page of the replay document, with the replay's figures. */
struct replay_page {
    const struct trace_doc *doc;
    const struct replay_result *res;
    const char *trace_name;
};

static int page_json(const void *ctx, const char *path, struct err *e)
{
    const struct replay_page *p = ctx;
    return replay_write_json(p->res, p->trace_name, path, e);
}

static int page_draw(const void *ctx, const struct plot_opts *o, struct err *e)
{
    const struct replay_page *p = ctx;
    return draw_replay(p->doc, p->res, o, e);
}

static int write_page(const struct config *cfg, const struct trace_doc *doc,
                      const struct replay_result *r, const char *trace_name, const char *notes,
                      struct err *e)
{
    char title[256];
    title_of(r, title, sizeof title);
    const struct replay_page page = {doc, r, trace_name};
    const struct html_run run = {.command = "replay", .scenario = title, .notes_text = notes,
                                 .write_json = page_json,
                                 .json_ctx = &page, .draw = page_draw, .draw_ctx = &page};
    return html_write(cfg, &run, e);
}

int cmd_replay(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct config cfg;
    config_init(&cfg);
    struct trace_doc doc = {0};
    struct replay_result res = {0};
    struct notes notes = {0};   /* the lines above and under the tables, for --html too */
    int status = 0;
    int rc = config_parse_args(&cfg, argc, argv, self->groups, &e);
    if (rc == CONFIG_HELP) {
        command_print_help(self, stdout);
        goto done;
    }
    if (rc == 0) rc = check_options(self, &cfg, &e);
    const char *name = rc == 0 ? cfg.positional[0] : "";
    if (rc == 0) rc = trace_doc_read(name, &doc, &e);
    const struct replay_opts o = {
        .cluster = config_is_set(&cfg, "cluster") ? cfg.cluster : NULL,
        .strategy = config_is_set(&cfg, "strategy") ? cfg.strategy : NULL,
        .scale_devices = cfg.scale_devices,
        .without_stragglers = cfg.without_stragglers,
        .measured_comm = cfg.measured_comm,
        .seed = (uint64_t)cfg.seed,
    };
    if (rc == 0) rc = replay_run(&doc, name, &o, &res, &e);
    if (rc == 0) {
        notes_begin(&notes);
        print_header(notes.f, name, &res, config_is_set(&cfg, "cluster"));
        notes_end(&notes);
        print_tables(&res);
        notes_begin(&notes);
        print_after_table(notes.f, &res);
        notes_end(&notes);
    }
    if (rc == 0 && cfg.json_path[0] && (rc = replay_write_json(&res, name, cfg.json_path, &e)) < 0)
        err_prefix(&e, "--json");
    if (rc == 0 && (cfg.plot_dir[0] || cfg.plot_terminal)) rc = write_plots(&cfg, &doc, &res, &e);
    if (rc == 0) rc = write_page(&cfg, &doc, &res, name, notes.text, &e);
    if (rc < 0) status = scenario_fail(self, &e);
done:
    notes_release(&notes);
    replay_result_release(&res);
    trace_doc_release(&doc);
    config_release(&cfg);
    return status;
}

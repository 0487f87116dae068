/* strata sim: one strategy, simulated. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../bench/chakra_source.h"
#include "../core/budget.h"
#include "../bench/run.h"
#include "../bench/run_numerics.h"
#include "../core/table_notes.h"
#include "html.h"
#include "notes.h"
#include "outputs.h"
#include "scenario.h"

/* The failure section in words (docs/metrics.md, "Failures"). */
static void print_failures(FILE *f, const struct sim_run *run)
{
    const struct report *r = &run->report;
    const struct config *c = &run->cfg;
    if (!r->failure.happened) return;
    fprintf(f, "\nfailures (--on-failure %s", r->failure.policy);
    if (c->mtbf_hours > 0)
        fprintf(f, ", --mtbf %.6g h a device: %.4g h for the job's %d", c->mtbf_hours,
                   c->mtbf_hours / run->plan->n_workers, run->plan->n_workers);
    fprintf(f, "): %d", r->failure.n_failures);
    if (r->failure.n_failures > 0)
        fprintf(f, ", the first of rank %d at %.4g s", r->failure.rank, r->failure.time_s);
    fprintf(f, ".\n");
    if (!strcmp(r->failure.policy, "continue")) {
        if (r->failure.n_failures > 0)
            fprintf(f, "The other workers carried on, and the servers kept every update they had "
                       "accepted.\n");
        return;
    }
    if (r->failure.n_failures > 0)
        fprintf(f, "%s\n", !strcmp(r->failure.policy, "shrink")
                               ? "The survivors went back to their last commit and went on "
                                 "without the dead worker."
                               : "Every rank went back to the last checkpoint, the dead one "
                                 "replaced.");
    fprintf(f, "Time lost %.4g s: detection %.4g s, relaunch and loading %.4g s, redone work "
               "%.4g s (%d step%s); checkpoints%s %.4g s. Goodput %.2f%%.\n",
               r->failure.lost_s, r->failure.detect_s, r->failure.relaunch_s, r->failure.redone_s,
               r->failure.steps_redone, r->failure.steps_redone == 1 ? "" : "s",
               !strcmp(r->failure.policy, "shrink") ? " and commits" : "", r->failure.checkpoint_s,
               100 * r->failure.goodput);
}

/* Where the run's time went, beyond the table's one line. */
static void print_details(FILE *f, const struct sim_run *run)
{
    const struct report *r = &run->report;
    char peak[32], params[32], grads[32], optimizer[32], acts[32];
    format_bytes((double)r->memory_bytes_per_device.peak, peak, sizeof peak);
    format_bytes((double)r->memory_bytes_per_device.params, params, sizeof params);
    format_bytes((double)r->memory_bytes_per_device.grads, grads, sizeof grads);
    format_bytes((double)r->memory_bytes_per_device.optimizer, optimizer, sizeof optimizer);
    format_bytes((double)r->memory_bytes_per_device.activations, acts, sizeof acts);
    /* the plan's memory model (core/plan_memory.h), term by term: where
     * ZeRO-1's sharded momentum or a pipeline's activations show */
    fprintf(f, "\n%d step%s in %.4g s simulated (%llu events). Memory per device: %s at peak "
               "(parameters %s, gradients %s, optimizer %s, activations %s).\n",
               (int)run->cfg.steps, run->cfg.steps == 1 ? "" : "s",
               r->step_time_s.mean * (double)run->cfg.steps,
               (unsigned long long)run->result.n_events, peak, params, grads, optimizer, acts);
    if (run_exceeds_memory(run)) outputs_warn_memory(f, "", &run->report, &run->cluster);
    if (r->staleness.n_histogram > 0) {
        fprintf(f, "%s", run->plan->n_servers
                             ? "staleness of applied pushes (updates by others between pull "
                               "and push):\n"
                             : "staleness of applied updates (updates between the parameters "
                               "a gradient was computed on and its own):\n");
        int64_t total = 0;
        for (int i = 0; i < r->staleness.n_histogram; i++) total += r->staleness.histogram[i];
        for (int i = 0; i < r->staleness.n_histogram && i < 32; i++)
            if (r->staleness.histogram[i])
                fprintf(f, "  %3d: %6.2f%%\n", i,
                        100.0 * (double)r->staleness.histogram[i] / (double)total);
    }
    print_failures(f, run);
}

/* The progress line on stderr (a terminal only) of a run long enough to
 * wonder about: from its first second on, at most five times a second. */
struct sim_progress {
    const char *strategy;
    double start_s, last_s;
    bool is_shown;
};

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void show_step(void *ctx, int steps_done, int steps)
{
    struct sim_progress *p = ctx;
    const double now_s = monotonic_s();
    if (now_s - p->start_s < 1.0 || now_s - p->last_s < 0.2) return;
    p->last_s = now_s;
    p->is_shown = true;
    fprintf(stderr, "\rsimulating %s: step %d of %d (%.0f s)", p->strategy, steps_done, steps,
            now_s - p->start_s);
}

static void clear_progress(const struct sim_progress *p)
{
    if (p->is_shown) fprintf(stderr, "\r%100s\r", "");
}

int cmd_sim(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct scenario s;
    struct sim_run run = {0}, base = {0};
    struct run_numerics *numerics = NULL;   /* the run and its baseline share it */
    struct chakra_source traced = {0};
    struct notes notes = {0};   /* those around the table, for --html too */
    int status = 0;

    if (scenario_start(&s, self, argc, argv, &status) < 0) goto out;
    const struct strategy *st = s.strategy;
    /* --workload chakra:DIR: the traces' plan instead of --strategy's */
    if (s.cfg.workload[0]) {
        if (chakra_source_open(&s.cfg, &s.wl, &traced, &e) < 0) {
            status = scenario_fail_in(self, &s, &e);
            goto out;
        }
        st = &traced.strategy;
        chakra_source_print_left_out(stderr, "strata sim: ", &traced);
        /* the budget again, now for the traces' scenario rather than --model's */
        struct budget_plan plan;
        strategy_plan_size(st, &s.cfg, s.wl, &plan);
        if (budget_check(&s.cfg, s.wl, self->groups, &plan, &e) < 0) {
            status = scenario_fail_in(self, &s, &e);
            goto out;
        }
    }
    /* Another tool's trace has no one-device form to measure speedup by. */
    bool has_baseline = !s.cfg.workload[0] || traced.is_strata;
    struct sim_progress progress = {.strategy = st->name, .start_s = monotonic_s()};
    const struct run_watch watch = {isatty(STDERR_FILENO) ? show_step : NULL, &progress};
    int rc = -1;
    if ((numerics = run_numerics_create(&e)) &&
        run_simulate_watched(&s.cfg, st, s.wl, outputs_keep_steps(&s.cfg), numerics, watch, &run,
                             &e) == 0 &&
        (!has_baseline || run_baseline(&s.cfg, s.wl, numerics, &base, &e) == 0))
        rc = 0;
    clear_progress(&progress);
    if (rc < 0) {
        status = scenario_fail_in(self, &s, &e);
        goto out;
    }
    char desc[512], scenario[1024];
    if (traced.strategy.name && !traced.is_strata)   /* no layers to describe */
        snprintf(desc, sizeof desc, "%.300s: another tool's traces, %d ranks, %lld ops a step "
                 "(their own FLOPs, bytes and times)", s.cfg.workload, run.plan->n_ranks,
                 (long long)plan_n_ops(run.plan));
    else
        workload_describe(s.wl, desc, sizeof desc);
    /* Ranks fill nodes in order (sim/cluster.h): --nodes beyond what they
     * fill adds machines that hold none, which the header must not hide. */
    const int dpn = run.cluster.devices_per_node;
    const int filled = (run.plan->n_ranks + dpn - 1) / dpn;
    char unused[160] = "", on[32] = "node 0";
    if (filled > 1) snprintf(on, sizeof on, "nodes 0 to %d", filled - 1);
    if (filled < run.cluster.nodes)
        snprintf(unused, sizeof unused, "; the %d ranks on %s, --devices-per-node spreads them",
                 run.plan->n_ranks, on);
    snprintf(scenario, sizeof scenario, "%s on %d device%s of %s (%d node%s x %d%s), batch %lld, "
             "%lld step%s", st->name, run.plan->n_workers, run.plan->n_workers == 1 ? "" : "s",
             run.cluster.name, run.cluster.nodes, run.cluster.nodes == 1 ? "" : "s", dpn, unused,
             s.cfg.batch, s.cfg.steps, s.cfg.steps == 1 ? "" : "s");
    printf("%s\n%s\n\n", scenario, desc);
    notes_begin(&notes);
    scenario_print_notes(notes.f, st, &s.cfg, run.plan, "\n");
    scenario_note_failure_options(notes.f, &s.cfg, run.plan, true, "\n");
    scenario_note_training_unread(notes.f, &s.cfg, "note:", "\n");
    if (s.cfg.checkpoint_every > 0) {
        char given[64];
        snprintf(given, sizeof given, "--checkpoint-every %lld", s.cfg.checkpoint_every);
        scenario_note_free_checkpoints(notes.f, &s.cfg, &run.cluster, given, "note:", "\n");
    }
    notes_end(&notes);
    double speedup = has_baseline ? run_speedup(&run, &base) : NAN;
    const struct report *rows[] = {&run.report};
    report_print_table(stdout, rows, 1, &speedup);
    table_legend_print(stdout, rows, 1);   /* the page has its own legend */
    notes_begin(&notes);
    /* the speedup column's reference, as compare names it under its table */
    if (has_baseline) run_print_baseline_note(notes.f, &s.cfg, base.report.step_time_s.mean, false);
    table_notes_print(notes.f, rows, 1, &speedup, has_baseline ? &base.report : NULL);
    notes_end(&notes);
    notes_begin(&notes);
    /* the run's details, a warning and its failures too: the page says
     * all the terminal says */
    print_details(notes.f, &run);
    outputs_note_ideal(notes.f, &run);
    notes_end(&notes);
    if (s.cfg.timeline) outputs_timeline(&run);
    struct sim_run *runs[] = {&run};
    const struct html_run page = {
        .command = "sim", .scenario = scenario, .description = desc,
        .notes_text = notes.text, .runs = runs, .n_runs = 1,
        .notes = (const char *const *)traced.notes.items, .n_notes = (int)traced.notes.len};
    if (outputs_write(&s.cfg, runs, 1, 1, &speedup, &e) < 0 ||
        html_write_reports(&s.cfg, page, rows, 1, &speedup, &e) < 0)
        status = scenario_fail_in(self, &s, &e);
out:
    notes_release(&notes);
    run_release(&run);
    run_release(&base);
    run_numerics_free(numerics);
    chakra_source_release(&traced);
    scenario_release(&s);
    return status;
}

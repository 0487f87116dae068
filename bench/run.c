#include <string.h>

#include "../core/analysis.h"
#include "../core/failure_policy.h"
#include "../core/straggler.h"
#include "../core/text_append.h"
#include "run.h"
#include "run_failures.h"
#include "run_numerics.h"

/* Spans kept at most, whatever keep_steps says: a bound on memory (80 bytes a
 * span: 1e6 spans are 80 MB). */
#define RUN_MAX_KEPT_SPANS 1000000

/* The charts' failures: continue's death from the event loop (its trace is
 * the run's), and restart's and shrink's spans laid over their time line. */
static int lay_marks(struct sim_run *run, struct err *e)
{
    struct timeline_marks *m = &run->marks;
    if (run->result.failed)
        TRY(timeline_marks_add_death(m, run->result.failed_rank, run->result.failure_time_s,
                                     true, e));
    if (!timeline_marks_has_runs(m)) return 0;
    return timeline_marks_lay(m, run->trace.spans.items, run->trace.spans.len, e);
}

int run_simulate(const struct config *cfg, const struct strategy *st, const struct workload *wl,
                 int keep_steps, struct run_numerics *numerics, struct sim_run *run,
                 struct err *e)
{
    return run_simulate_watched(cfg, st, wl, keep_steps, numerics, (struct run_watch){0}, run,
                                e);
}

int run_simulate_watched(const struct config *cfg, const struct strategy *st,
                         const struct workload *wl, int keep_steps,
                         struct run_numerics *numerics, struct run_watch watch,
                         struct sim_run *run, struct err *e)
{
    memset(run, 0, sizeof *run);
    run->cfg = *cfg;
    run->cfg.positional = NULL;   /* borrowed from argv; the copy must not free it */
    run->cfg.n_positional = 0;
    snprintf(run->cfg.strategy, sizeof run->cfg.strategy, "%s", st->name);
    report_init(&run->report);
    trace_init(&run->trace, keep_steps, keep_steps ? RUN_MAX_KEPT_SPANS : 0);

    struct straggler_spec strag;
    struct failure_spec fail;
    struct sim_setup setup = {.cluster = &run->cluster, .steps = (int)cfg->steps,
                              .seed = (uint64_t)cfg->seed, .straggler = &strag,
                              .on_step = watch.on_step, .on_step_ctx = watch.ctx};
    TRY(straggler_parse(cfg->straggler, &strag, e));
    TRY(failure_parse(cfg->fail, &fail, e));
    TRY(cluster_load(cfg->cluster, &run->cluster, e));
    TRY(cluster_set_jitter(&run->cluster, cfg->jitter, e));
    /* the report says what ran: auto becomes on or off */
    snprintf(run->cfg.jitter, sizeof run->cfg.jitter, "%s",
             jitter_is_set(&run->cluster.jitter) ? "on" : "off");
    TRY(strategy_build(st, &run->cfg, wl, &run->plan, e));
    /* ... and the chunks it ran with, where the builder lowered the default */
    if (run->plan->lowered_chunks > 0) run->cfg.chunks = run->plan->lowered_chunks;
    TRY(cluster_layout(&run->cluster, run->plan->n_ranks, cfg->nodes, cfg->devices_per_node,
                       cfg->allreduce, e));
    char ranks[32];
    if (fail.is_set && fail.rank >= run->plan->n_ranks)
        return err_set(e, ERR_INPUT, "--fail: rank %d does not exist (the plan has %s)",
                       fail.rank, text_ranks_upto(ranks, sizeof ranks, run->plan->n_ranks - 1));
    TRY(failure_check_steps(&fail, cfg->steps, e));
    setup.plan = run->plan;
    struct run_failures rf;
    int rc = run_failures_prepare(cfg, &setup, &rf, e);
    if (keep_steps) rf.marks = &run->marks;   /* a chart will be drawn */
    struct analysis *a = rc == 0 ? analysis_create(run->plan, setup.steps, e) : NULL;
    if (rc == 0 && !a) rc = e->code;
    if (rc == 0)
        rc = run_wants_numerics(cfg)
                 ? run_simulate_numerics(numerics, cfg, wl, &setup, a, &run->trace,
                                         &run->result, &run->report, e)
                 : simulate(&setup, a, &run->trace, &run->result, e);
    /* restart and shrink: the run ends when the timeline says, its lost
     * time and checkpoints in the step time (idle in the breakdown) */
    if (rc == 0) rc = run_failures_replay(&rf, cfg, st, wl, &setup, &run->result, a, e);
    if (rc == 0) rc = analysis_finish(a, run_failures_end_s(&rf, &run->result), &run->report, e);
    analysis_free(a);
    if (rc == 0) run_failures_report(&rf, &run->result, cfg, &run->report);
    if (rc == 0) {
        run_failures_take_final_steps(&rf, &run->final_step_s, &run->n_final_steps);
        run->final_first_step = rf.outcome.final_first_step;
        run->final_n_workers = rf.outcome.n_workers_end;
    }
    run_failures_release(&rf);
    if (rc == 0 && keep_steps) rc = lay_marks(run, e);
    TRY(rc);

    struct report *r = &run->report;
    r->mode = "sim";
    snprintf(r->strategy, sizeof r->strategy, "%s", st->name);
    r->devices = run->plan->n_workers;
    r->config = &run->cfg;
    r->config_groups = RUN_CONFIG_GROUPS | (run_wants_numerics(cfg) ? OPTG_TRAIN : 0u);
    r->has_step_lead = run->result.max_step_lead >= 0;
    r->max_step_lead = run->result.max_step_lead;
    return 0;
}

void run_release(struct sim_run *run)
{
    report_release(&run->report);
    trace_release(&run->trace);
    timeline_marks_release(&run->marks);
    plan_free(run->plan);
    run->plan = NULL;
    free(run->final_step_s);
    run->final_step_s = NULL;
    run->n_final_steps = 0;
}

int run_baseline_config(const struct config *cfg, struct config *one, struct err *e)
{
    *one = *cfg;
    one->devices = 1;
    one->np = 1;
    one->nodes = 0;
    /* one device has no replicas of stages (and strategy_build refuses
     * --dp for mirrored) */
    one->dp = 1;
    /* The baseline has only rank 0: a failure of another rank does not
     * happen there, and of the slow ranks only rank 0 stays slow. */
    one->fail[0] = '\0';
    one->mtbf_hours = 0;
    snprintf(one->on_failure, sizeof one->on_failure, "auto");
    struct straggler_spec strag;
    TRY(straggler_parse(cfg->straggler, &strag, e));
    if (strag.kind == STRAG_SLOW) {
        int kept = 0;
        for (int i = 0; i < strag.n_slow; i++)
            if (strag.slow_rank[i] == 0) {
                strag.slow_rank[kept] = 0;
                strag.slow_factor[kept++] = strag.slow_factor[i];
            }
        strag.n_slow = kept;
        if (!kept) strag.kind = STRAG_NONE;
        straggler_format(&strag, one->straggler, sizeof one->straggler);
    }
    snprintf(one->strategy, sizeof one->strategy, "%s", strategy_baseline()->name);
    return 0;
}

int run_baseline(const struct config *cfg, const struct workload *wl,
                 struct run_numerics *numerics, struct sim_run *run, struct err *e)
{
    struct config one;
    TRY(run_baseline_config(cfg, &one, e));
    TRY_CTX(e, run_simulate(&one, strategy_baseline(), wl, 0, numerics, run, e),
            "the one-device baseline");
    return 0;
}

void run_print_baseline_note(FILE *out, const struct config *cfg, double step_s,
                             bool is_measured)
{
    struct config one;
    struct err e = {0};
    bool has_strag = run_baseline_config(cfg, &one, &e) == 0;
    fprintf(out, "\nspeedup: samples applied per second over the baseline (%s): %s on one device, "
            "no servers,\n  the same model, batch and cluster, stragglers %s: %.4g s a step. "
            "`strata help metrics` defines each column.\n",
            is_measured ? "measured" : "simulated", strategy_baseline()->name,
            has_strag && one.straggler[0] && strcmp(one.straggler, "none") ? one.straggler
                                                                           : "none",
            step_s);
}

double run_speedup(const struct sim_run *run, const struct sim_run *baseline)
{
    double base = baseline->report.throughput_samples_per_s;
    return base > 0 ? run->report.throughput_samples_per_s / base : 0;
}

bool run_exceeds_memory(const struct sim_run *run)
{
    int64_t cap = run->cluster.device.mem_bytes;
    return cap > 0 && run->report.memory_bytes_per_device.peak > cap;
}

const struct span *run_drawn_spans(const struct sim_run *run, size_t *n)
{
    if (timeline_marks_has_runs(&run->marks)) {
        *n = run->marks.laid.len;
        return run->marks.laid.items;
    }
    *n = run->trace.spans.len;
    return run->trace.spans.items;
}

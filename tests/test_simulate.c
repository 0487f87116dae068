/* Tests of sim/simulate.c: the executor in virtual time against closed
 * forms worked out by hand: pipeline bubbles, the single-device step, the
 * ring all-reduce's alpha-beta time, the expected maximum of exponential
 * stragglers, parameter-server staleness under async, ssp and backup,
 * failures with and without checkpoints, and bit-identical reruns. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/analysis.h"
#include "../core/config.h"
#include "../core/straggler.h"
#include "../core/trace.h"
#include "../sim/cluster.h"
#include "../sim/cost.h"
#include "../sim/simulate.h"
#include "../strategies/strategy.h"

#define UNIFORM_4 "mlp:512-512-512-512-512"                    /* 4 equal layers */
#define UNIFORM_8 "mlp:256-256-256-256-256-256-256-256-256"    /* 8 equal layers */

/* ---- helpers ---------------------------------------------------------- */

/* Profiles written for a test go in its test_tmp_dir. */
TEST_SUITE_WITH_TMP_DIR(simulate);

/* The defaults of the option table, then the scenario. */
static struct config scenario(const char *model, int devices, int batch, int microbatches)
{
    struct config c;
    config_init(&c);
    snprintf(c.model, sizeof c.model, "%s", model);
    c.devices = devices;
    c.batch = batch;
    c.microbatches = microbatches;
    return c;
}

static struct plan *build(const char *name, const struct config *c, const struct workload *wl)
{
    struct err e = {0};
    const struct strategy *s = strategy_find(name, &e);
    cr_assert_not_null(s, "%s", e.msg);
    struct plan *p = NULL;
    cr_assert_eq(strategy_build(s, c, wl, &p, &e), 0, "%s: %s", name, e.msg);
    return p;
}

/* A cluster preset or profile file laid out for the plan's ranks. */
static struct cluster laid_out(const char *name, const struct plan *p, int devices_per_node)
{
    struct err e = {0};
    struct cluster c;
    cr_assert_eq(cluster_load(name, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(cluster_layout(&c, p->n_ranks, 0, devices_per_node, "ring", &e), 0, "%s",
                 e.msg);
    return c;
}

/* A strategy's plan for a scenario (its model parsed), on a cluster laid out
 * for it: what most tests set up. */
struct job {
    struct workload *wl;
    struct config cfg;
    struct plan *p;
    struct cluster c;
};

static struct job job_open(const char *strategy, struct config cfg, const char *cluster,
                           int devices_per_node)
{
    struct job j = {.wl = test_workload(cfg.model), .cfg = cfg};
    j.p = build(strategy, &j.cfg, j.wl);
    j.c = laid_out(cluster, j.p, devices_per_node);
    return j;
}

static void job_close(struct job *j)
{
    plan_free(j->p);
    workload_free(j->wl);
}

/* One simulated run and its analysis; the trace (when t) keeps every span. */
struct sim_run {
    struct sim_result res;
    struct report report;
};

struct opts {
    const char *straggler;   /* NULL = none */
    const char *fail;        /* NULL = none */
    double mtbf_s;           /* per worker; 0 = none */
    uint64_t seed;
    double *step_end_s;      /* [steps] or NULL: when every rank had ended each step */
    void (*on_step)(void *ctx, int steps_done, int steps);   /* NULL = none */
    void *on_step_ctx;
};

static int try_run(const struct plan *p, const struct cluster *c, int steps, struct opts o,
                   struct trace *t, struct sim_run *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    report_init(&out->report);
    out->report.mode = "sim";
    struct straggler_spec strag;
    struct sim_setup s = {.plan = p, .cluster = c, .steps = steps, .seed = o.seed,
                          .mtbf_s = o.mtbf_s, .step_end_s = o.step_end_s,
                          .on_step = o.on_step, .on_step_ctx = o.on_step_ctx};
    if (o.straggler) {
        TRY(straggler_parse(o.straggler, &strag, e));
        s.straggler = &strag;
    }
    TRY(failure_parse(o.fail ? o.fail : "", &s.failure, e));
    struct analysis *a = analysis_create(p, steps, e);
    if (!a) return e->code;
    int rc = simulate(&s, a, t, &out->res, e);
    if (rc == 0) rc = analysis_finish(a, out->res.makespan_s, &out->report, e);
    analysis_free(a);
    return rc;
}

static struct sim_run run(const struct plan *p, const struct cluster *c, int steps, struct opts o,
                      struct trace *t)
{
    struct err e = {0};
    struct sim_run r;
    int rc = try_run(p, c, steps, o, t, &r, &e);
    cr_assert_eq(rc, 0, "%s, %d steps: %s", p->strategy, steps, e.msg);
    return r;
}

static void run_release(struct sim_run *r)
{
    report_release(&r->report);
}

/* Releases a run with its trace (unless NULL) and its plan. */
static void run_release_with(struct sim_run *r, struct trace *t, struct plan *p)
{
    run_release(r);
    if (t) trace_release(t);
    plan_free(p);
}

/* End of rank r's last op of each step: ends[0 .. steps). */
static void step_ends(const struct trace *t, int rank, int steps, double *ends)
{
    for (int s = 0; s < steps; s++) ends[s] = -1;
    for (size_t k = 0; k < t->spans.len; k++) {
        const struct span *sp = &t->spans.items[k];
        if (sp->rank == rank && sp->step < steps && sp->end_s > ends[sp->step])
            ends[sp->step] = sp->end_s;
    }
}

static double harmonic(int n)
{
    double h = 0;
    for (int k = 1; k <= n; k++) h += 1.0 / k;
    return h;
}

/* ---- pipelines and the single device, on the ideal cluster ------------ */

/* GPipe and 1F1B with p equal stages and m microbatches leave (p-1)/(m+p-1)
 * of the step idle (ARCHITECTURE.md, Reports); on the ideal cluster (unit
 * costs, free messages) the simulator must hit it exactly, for one step and
 * for three, since each step repeats the first. */
static void check_bubble(const char *strategy, const char *model, int p, int m)
{
    struct workload *wl = test_workload(model);
    struct config cfg = scenario(model, p, 4 * m, m);
    struct plan *plan = build(strategy, &cfg, wl);
    struct cluster c = laid_out("ideal", plan, 0);
    double want = (double)(p - 1) / (m + p - 1);
    for (int steps = 1; steps <= 3; steps += 2) {
        struct sim_run r = run(plan, &c, steps, (struct opts){0}, NULL);
        cr_assert(fabs(r.report.bubble_fraction - want) < 1e-9,
                  "%s p=%d m=%d, %d steps: bubble %.12f, closed form (p-1)/(m+p-1) = %.12f",
                  strategy, p, m, steps, r.report.bubble_fraction, want);
        /* per microbatch a stage computes 3 units a layer; a step lasts
         * m + p - 1 such slots */
        double slot = 3.0 * wl->n_layers / p;
        cr_assert(fabs(r.res.makespan_s - steps * (m + p - 1) * slot) < 1e-9,
                  "%s p=%d m=%d: makespan %g, want %g", strategy, p, m, r.res.makespan_s,
                  steps * (m + p - 1) * slot);
        run_release(&r);
    }
    plan_free(plan);
    workload_free(wl);
}

Test(simulate, pipeline_gpipe_bubble_matches_closed_form)
{
    check_bubble("pipeline-gpipe", UNIFORM_4, 4, 8);
    check_bubble("pipeline-gpipe", UNIFORM_4, 2, 4);
    check_bubble("pipeline-gpipe", UNIFORM_8, 8, 16);
}

Test(simulate, pipeline_1f1b_bubble_matches_closed_form)
{
    check_bubble("pipeline-1f1b", UNIFORM_4, 4, 8);
    check_bubble("pipeline-1f1b", UNIFORM_4, 2, 4);
    check_bubble("pipeline-1f1b", UNIFORM_8, 8, 16);
}

/* One device, ideal: forward 1 unit a layer, backward 2, update free, so a
 * step is 3 x layers. */
Test(simulate, single_device_step_is_three_units_a_layer)
{
    struct job j = job_open("mirrored", scenario(UNIFORM_4, 1, 32, 1), "ideal", 0);
    struct trace t;
    trace_init(&t, -1, 1000);
    struct sim_run r = run(j.p, &j.c, 5, (struct opts){0}, &t);
    double ends[5];
    step_ends(&t, 0, 5, ends);
    for (int s = 0; s < 5; s++)
        cr_assert(fabs(ends[s] - 12.0 * (s + 1)) < 1e-12, "step %d ends at %g, want %g", s,
                  ends[s], 12.0 * (s + 1));
    cr_assert_float_eq(r.res.makespan_s, 60.0, 1e-12);
    cr_assert_eq(r.report.bubble_fraction, 0);
    run_release(&r);
    trace_release(&t);
    job_close(&j);
}

/* The progress watcher is told each step once, in order, when every rank
 * has ended it, and watching changes nothing of the run. */
struct steps_seen {
    int n_calls, last_done, steps;
    bool is_in_order;
};

static void see_step(void *ctx, int steps_done, int steps)
{
    struct steps_seen *s = ctx;
    s->is_in_order &= steps_done == s->last_done + 1;
    s->last_done = steps_done;
    s->steps = steps;
    s->n_calls++;
}

Test(simulate, the_step_watcher_hears_each_step_once_in_order)
{
    static const char *const strategies[] = {"mirrored", "ps-async", "pipeline-1f1b"};
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        struct job j = job_open(strategies[i], scenario(UNIFORM_4, 4, 32, 4), "ideal", 0);
        struct steps_seen seen = {.is_in_order = true};
        struct sim_run plain = run(j.p, &j.c, 7, (struct opts){.seed = 3}, NULL);
        struct sim_run watched = run(j.p, &j.c, 7,
                                     (struct opts){.seed = 3, .on_step = see_step,
                                                   .on_step_ctx = &seen},
                                     NULL);
        cr_expect_eq(seen.n_calls, 7, "%s: %d calls", strategies[i], seen.n_calls);
        cr_expect(seen.is_in_order && seen.last_done == 7 && seen.steps == 7, "%s",
                  strategies[i]);
        cr_expect_eq(plain.res.makespan_s, watched.res.makespan_s, "%s", strategies[i]);
        cr_expect_eq(plain.res.n_events, watched.res.n_events, "%s", strategies[i]);
        run_release(&plain);
        run_release(&watched);
        job_close(&j);
    }
}

/* pause:1:5 stalls every rank 5 s at the start of every step (probability
 * 1): the single-device step becomes 12 + 5. */
Test(simulate, pause_stalls_each_step_start)
{
    struct job j = job_open("mirrored", scenario(UNIFORM_4, 1, 32, 1), "ideal", 0);
    struct sim_run r = run(j.p, &j.c, 4, (struct opts){.straggler = "pause:1:5"}, NULL);
    cr_assert_float_eq(r.res.makespan_s, 4 * 17.0, 1e-12, "makespan %g", r.res.makespan_s);
    run_release(&r);
    job_close(&j);
}

/* ---- collectives --------------------------------------------------------- */

/* A profile with round numbers, written for the test, laid out for p's
 * ranks (devices_per_node of them a node). */
static struct cluster round_numbers_for(const struct plan *p, int devices_per_node)
{
    char text[512];
    snprintf(text, sizeof text,
             "name = round-numbers\nideal = false\nflops_per_s = 1e12\n"
             "mem_bw_bytes_per_s = 1e11\nop_overhead_s = 0\nmem_bytes = 10000000000\n"
             "devices_per_node = %d\nintra_latency_s = 2e-6\nintra_bw_bytes_per_s = 1e10\n"
             "inter_latency_s = 1e-5\ninter_bw_bytes_per_s = 1e9\n",
             devices_per_node);
    return laid_out(test_tmp_file("round-numbers.profile", text), p, 0);
}

/* One group of RING_RANKS ranks, each given its collectives by add, run on
 * the round numbers laid out devices_per_node a node; the caller releases
 * it (run_release_with). */
enum { RING_RANKS = 4 };
struct ring_run {
    struct plan *plan;
    struct trace t;
    struct sim_run r;
    double n_bytes;            /* rank 0's first op: the whole model's gradients */
    double alpha_s;            /* the link the flat ring runs at: inside a node, */
    double beta_bytes_per_s;   /* or across nodes with one rank a node */
};

static void ring_run(struct ring_run *k, const char *name, const struct workload *wl,
                     int devices_per_node, void (*add)(struct plan *, int rank, int group, int hi))
{
    struct err e = {0};
    k->plan = plan_create(name, wl, RING_RANKS, 0, 32, 1, &e);
    cr_assert_not_null(k->plan, "%s", e.msg);
    int group = plan_add_group(k->plan, (const int[]){0, 1, 2, 3}, RING_RANKS);
    for (int r = 0; r < RING_RANKS; r++) add(k->plan, r, group, wl->n_layers);
    cr_assert_eq(plan_build_status(k->plan, &e), 0, "%s", e.msg);
    struct cluster c = round_numbers_for(k->plan, devices_per_node);
    trace_init(&k->t, -1, 100);
    k->r = run(k->plan, &c, 1, (struct opts){0}, &k->t);
    k->n_bytes = (double)k->plan->ranks[0].ops.items[0].bytes;
    k->alpha_s = devices_per_node > 1 ? 2e-6 : 1e-5;
    k->beta_bytes_per_s = devices_per_node > 1 ? 1e10 : 1e9;
}

/* ring_run on one node, then one rank a node, of UNIFORM_4; each run has
 * spans_per_rank spans a rank, and check holds of each of them. half is
 * half the ring all-reduce, (p-1)(alpha + n/(p beta)) at the link the
 * ring runs at: a reduce-scatter's or an all-gather's time. */
static void expect_ring_spans(const char *name,
                              void (*add)(struct plan *, int rank, int group, int hi),
                              int spans_per_rank,
                              void (*check)(const struct span *sp, double half, int dpn))
{
    struct workload *wl = test_workload(UNIFORM_4);
    const int p = RING_RANKS;
    for (int dpn = 8; dpn >= 1; dpn /= 8) {   /* one node, then one rank a node */
        struct ring_run k;
        ring_run(&k, name, wl, dpn, add);
        double half = (p - 1) * (k.alpha_s + k.n_bytes / (p * k.beta_bytes_per_s));
        cr_assert_eq(k.t.spans.len, (size_t)(spans_per_rank * p));
        for (size_t i = 0; i < k.t.spans.len; i++) check(&k.t.spans.items[i], half, dpn);
        run_release_with(&k.r, &k.t, k.plan);
    }
    workload_free(wl);
}

static void add_allreduce(struct plan *plan, int rank, int group, int hi)
{
    plan_allreduce(plan, rank, group, 0, hi, NO_DEPS);
}

/* An all-reduce from 0 to 2(p-1)(alpha + n/(p beta)), two halves. */
static void check_allreduce_span(const struct span *sp, double half, int dpn)
{
    double want = 2.0 * half;
    cr_assert_eq(sp->kind, OP_ALLREDUCE);
    cr_assert_float_eq(sp->start_s, 0.0, 1e-15);
    cr_assert(fabs(sp->end_s - want) <= 1e-12 * want,
              "%d devices a node: span %g s, 2(p-1)(alpha + n/(p beta)) = %g s", dpn,
              sp->end_s - sp->start_s, want);
}

/* Ring all-reduce (Patarasuk & Yuan, 2009): 2(p-1) steps, each alpha plus
 * n/p bytes at beta. A hand-made plan of one all-reduce per rank; the span
 * of every member shows that time, inside a node and across nodes (where
 * the flat ring runs at the inter-node link). */
Test(simulate, ring_allreduce_span_is_alpha_beta_closed_form)
{
    expect_ring_spans("ring", add_allreduce, 1, check_allreduce_span);
}

static void add_reduce_scatter_then_all_gather(struct plan *plan, int rank, int group, int hi)
{
    plan_reduce_scatter(plan, rank, group, 0, hi, NO_DEPS);
    plan_all_gather(plan, rank, group, 0, hi, NO_DEPS);
}

/* A reduce-scatter from 0 to half, or an all-gather from half to 2 half. */
static void check_half_ring_span(const struct span *sp, double half, int dpn)
{
    double start = sp->kind == OP_REDUCE_SCATTER ? 0 : half;
    cr_assert(sp->kind == OP_REDUCE_SCATTER || sp->kind == OP_ALL_GATHER);
    cr_assert(fabs(sp->start_s - start) <= 1e-12 * half && fabs(sp->end_s - start - half) <=
              1e-12 * half, "%s, %d devices a node: [%g, %g] s, want [%g, %g]",
              op_infos[sp->kind].name, dpn, sp->start_s, sp->end_s, start, start + half);
}

/* ZeRO-1's collectives: a reduce-scatter then an all-gather of the whole
 * model on 4 ranks, each half of the ring all-reduce, (p-1)(alpha + n/(p
 * beta)) (the profile has no gamma); the all-gather starts where the
 * reduce-scatter ends, on the same comm stream. */
Test(simulate, reduce_scatter_and_all_gather_spans_are_the_ring_closed_form)
{
    expect_ring_spans("zero1-collectives", add_reduce_scatter_then_all_gather, 2,
                      check_half_ring_span);
}

/* Hybrid data x pipeline on the ideal cluster: D replicas of p stages run
 * side by side (their all-reduces free), so the bubble is the pipeline's,
 * (p-1)/(m+p-1), and the step its m + p - 1 slots. */
Test(simulate, hybrid_bubble_is_its_pipelines_closed_form)
{
    const struct { const char *strategy, *model; int p, m, dp; } cases[] = {
        {"pipeline-1f1b", UNIFORM_4, 4, 8, 2}, {"pipeline-gpipe", UNIFORM_4, 2, 4, 4},
        {"pipeline-1f1b", UNIFORM_8, 8, 16, 2}, {"pipeline-gpipe", UNIFORM_8, 4, 8, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int p = cases[k].p, m = cases[k].m, dp = cases[k].dp;
        struct workload *wl = test_workload(cases[k].model);
        struct config cfg = scenario(cases[k].model, p * dp, 4 * m * dp, m);
        cfg.dp = dp;
        struct plan *plan = build(cases[k].strategy, &cfg, wl);
        struct cluster c = laid_out("ideal", plan, 0);
        struct sim_run r = run(plan, &c, 2, (struct opts){0}, NULL);
        double want = (double)(p - 1) / (m + p - 1), slot = 3.0 * wl->n_layers / p;
        cr_assert(fabs(r.report.bubble_fraction - want) < 1e-9,
                  "%s p=%d m=%d dp=%d: bubble %.12f, (p-1)/(m+p-1) = %.12f", cases[k].strategy,
                  p, m, dp, r.report.bubble_fraction, want);
        cr_assert(fabs(r.res.makespan_s - 2 * (m + p - 1) * slot) < 1e-9, "makespan %g",
                  r.res.makespan_s);
        run_release(&r);
        plan_free(plan);
        workload_free(wl);
    }
}

/* ---- stragglers ------------------------------------------------------------ */

/* p ranks each compute T then meet in an all-reduce (free on the ideal
 * cluster): the step lasts T plus the largest of p Exponential delays of
 * mean F T, whose mean is F T H_p (H_p the harmonic number), so the mean
 * step is T (1 + F H_p). Its standard deviation is F T sqrt(sum 1/k^2),
 * about 1.24 F T for p = 8: over 2000 steps the mean is within 0.03 F T,
 * under 1% of the step, so 3% is four standard errors. */
Test(simulate, exponential_stragglers_stretch_a_barrier_by_the_harmonic_number)
{
    struct workload *wl = test_workload(UNIFORM_4);
    const int p = 8, steps = 2000;
    const double F = 0.5, T = wl->n_layers;   /* a forward of every layer: T units */
    struct err e = {0};
    struct plan *plan = plan_create("barrier", wl, p, 0, 64, 1, &e);
    cr_assert_not_null(plan, "%s", e.msg);
    int all[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int group = plan_add_group(plan, all, p);
    for (int r = 0; r < p; r++) {
        int fwd = plan_forward(plan, r, 0, wl->n_layers, 0, 8, NO_DEPS);
        plan_allreduce(plan, r, group, 0, wl->n_layers, DEPS(fwd));
    }
    cr_assert_eq(plan_build_status(plan, &e), 0, "%s", e.msg);
    struct cluster c = laid_out("ideal", plan, 0);
    struct sim_run r = run(plan, &c, steps, (struct opts){.straggler = "exp:0.5", .seed = 42}, NULL);
    double mean = r.res.makespan_s / steps, want = T * (1 + F * harmonic(p));
    fprintf(stderr, "exp:%g stragglers, p = %d, %d steps: mean step %.4f, T(1 + F H_p) = %.4f "
            "(%+.2f%%, tolerance 3%%)\n", F, p, steps, mean, want, 100 * (mean / want - 1));
    cr_assert(fabs(mean / want - 1) < 0.03, "mean step %g, T(1 + F H_p) = %g (%.2f%% off)", mean,
              want, 100 * (mean / want - 1));
    run_release_with(&r, NULL, plan);
    workload_free(wl);
}

/* ---- parameter servers --------------------------------------------------- */

/* ps-async, N identical workers, one server, ideal cluster. Step 0: the N
 * pushes arrive together; worker w's is applied at version w, computed from
 * version 0, and its pull reads w + 1. From then on worker w reads w + 1 +
 * (s-1)N and is applied at w + sN: staleness N - 1. Mean over S steps:
 * ((N-1)/2 + (S-1)(N-1)) / S, exactly. */
Test(simulate, ps_async_identical_workers_have_staleness_n_minus_1)
{
    const int N = 8, S = 50;
    struct job j = job_open("ps-async", scenario(UNIFORM_4, N, 64, 1), "ideal", 0);
    struct sim_run r = run(j.p, &j.c, S, (struct opts){0}, NULL);
    double want = ((N - 1) / 2.0 + (S - 1) * (N - 1.0)) / S;
    cr_assert(fabs(r.report.staleness.mean - want) < 1e-9, "mean staleness %g, want %g",
              r.report.staleness.mean, want);
    cr_assert_eq(r.report.staleness.max, N - 1);
    run_release(&r);

    /* With noise the workers drift apart, but each push still sees on
     * average the N - 1 others' pushes of one step: within 5% over 400
     * steps (the first step's (N-1)/2 alone is 0.1% off). */
    r = run(j.p, &j.c, 400, (struct opts){.straggler = "exp:0.5", .seed = 3}, NULL);
    fprintf(stderr, "ps-async N = %d with exp:0.5: mean staleness %.4f, N - 1 = %d (%+.2f%%, "
            "tolerance 5%%)\n", N, r.report.staleness.mean, N - 1,
            100 * (r.report.staleness.mean / (N - 1) - 1));
    cr_assert(fabs(r.report.staleness.mean / (N - 1) - 1) < 0.05,
              "with exp:0.5 noise: mean staleness %g, N - 1 = %d", r.report.staleness.mean,
              N - 1);
    run_release(&r);
    job_close(&j);
}

/* ps-ssp:K. The policy's promise: worker w's pull that ends its step s is
 * answered only once every worker has pushed step s - K, or is done (the
 * job's work shared out, nothing was left for it). Checked on the spans:
 * every PULL of step s starts no earlier than every worker's PUSH of step
 * s - K ends, or than that worker's last op ends when it never ran step
 * s - K.
 *
 * Staleness bound. w's push of step s was computed from the version of its
 * pull ending step s - 1, answered at t1, when every worker v had pushed
 * step s - 1 - K. v's later pushes before w's lands are of steps s - K and
 * up; v pushes step s' only after its pull ending s' - 1 was answered, which
 * needs w to have pushed s' - 1 - K, and w has pushed only up to s - 1:
 * s' <= s + K. So at most 2K + 1 pushes of each of the N - 1 others fall in
 * between: staleness <= (2K + 1)(N - 1). */
Test(simulate, ps_ssp_never_answers_a_pull_more_than_k_steps_ahead)
{
    const int N = 4, S = 60, K = 2;
    struct config cfg = scenario(UNIFORM_4, N, 64, 1);
    cfg.staleness = K;
    struct job j = job_open("ps-ssp", cfg, "ideal", 0);
    struct trace t;
    trace_init(&t, -1, 1000000);
    /* noise of mean 1 x the compute: workers drift apart and the bound bites */
    struct sim_run r = run(j.p, &j.c, S, (struct opts){.straggler = "exp:1", .seed = 11}, &t);
    enum { MAX_STEPS = 4 * 60 };
    static double push_end[4][MAX_STEPS], pull_start[4][MAX_STEPS];
    double last_end[4] = {0};
    int n_steps[4] = {0}, n_total = 0;
    for (int w = 0; w < N; w++)
        for (int s = 0; s < MAX_STEPS; s++) push_end[w][s] = pull_start[w][s] = NAN;
    for (size_t k = 0; k < t.spans.len; k++) {
        const struct span *sp = &t.spans.items[k];
        cr_assert_lt(sp->step, MAX_STEPS);
        if (sp->kind == OP_PUSH) push_end[sp->rank][sp->step] = sp->end_s;
        if (sp->kind == OP_PULL) pull_start[sp->rank][sp->step] = sp->start_s;
        if (sp->end_s > last_end[sp->rank]) last_end[sp->rank] = sp->end_s;
        if (sp->step + 1 > n_steps[sp->rank]) n_steps[sp->rank] = sp->step + 1;
    }
    for (int w = 0; w < N; w++) {
        n_total += n_steps[w];
        cr_assert_eq(r.report.per_rank[w].steps, n_steps[w], "worker %d", w);
    }
    cr_assert_eq(n_total, N * S, "the job's work: S steps of N pushes, however shared out");
    int n_blocked = 0;
    for (int w = 0; w < N; w++)
        for (int s = K; s < n_steps[w]; s++)
            for (int v = 0; v < N; v++) {
                cr_assert(!isnan(pull_start[w][s]), "worker %d step %d has no pull", w, s);
                double held_until = s - K < n_steps[v] ? push_end[v][s - K] : last_end[v];
                cr_assert(held_until <= pull_start[w][s],
                          "worker %d's pull of step %d answered at %g, before worker %d pushed "
                          "step %d or was done (at %g)", w, s, pull_start[w][s], v, s - K,
                          held_until);
                n_blocked += held_until == pull_start[w][s];
            }
    fprintf(stderr, "ps-ssp:%d, N = %d: %d pulls answered the instant the bound let them; max "
            "staleness %lld, bound (2K+1)(N-1) = %d\n", K, N, n_blocked,
            (long long)r.report.staleness.max, (2 * K + 1) * (N - 1));
    cr_assert_gt(n_blocked, 0, "no pull ever waited: the test does not exercise the bound");
    run_release(&r);

    /* A dead worker's clock stops; ssp must not wait for it forever. */
    r = run(j.p, &j.c, S, (struct opts){.straggler = "exp:1", .seed = 11, .fail = "1@40s"}, NULL);
    cr_assert(r.res.failed);
    cr_assert_gt(r.res.makespan_s, 40);
    cr_assert_leq(r.report.staleness.max, (2 * K + 1) * (N - 1), "max staleness %lld",
                  (long long)r.report.staleness.max);
    run_release(&r);
    trace_release(&t);
    job_close(&j);
}

/* The server's NIC is the bottleneck: N identical workers push the same
 * bytes n at the same instant through the server's inbound link, which
 * shares its bandwidth among them (processor sharing), so every push takes
 * alpha + N n / beta instead of alpha + n / beta. The server then works
 * through the N pushes one update u at a time (an UPDATE of the model on
 * its rank), as a real server rank does, and the k-th answer leaves when the
 * first k updates are done: the pulls start at the pushes' end + u, 2u, ...
 * Nu. */
Test(simulate, concurrent_pushes_share_the_servers_link_and_the_server_updates_in_turn)
{
    struct workload *wl = test_workload(UNIFORM_4);
    const int N = 4;
    struct config cfg = scenario(UNIFORM_4, N, 64, 1);
    struct plan *p = build("ps-async", &cfg, wl);
    struct cluster c = round_numbers_for(p, 8);   /* one node */
    struct op update = plan_update_op(wl, 0, wl->n_layers);
    double u = cost_compute_s(&c, &update);
    cr_assert_gt(u, 0);
    struct trace t;
    trace_init(&t, -1, 1000);
    struct sim_run r = run(p, &c, 1, (struct opts){0}, &t);
    int n_push = 0, n_pull = 0;
    double push_end = NAN, pull_start[8];
    for (size_t k = 0; k < t.spans.len; k++) {
        const struct span *sp = &t.spans.items[k];
        if (sp->kind == OP_PULL) pull_start[n_pull++] = sp->start_s;
        if (sp->kind != OP_PUSH) continue;
        double want = 2e-6 + N * (double)sp->bytes / 1e10;
        cr_assert(fabs((sp->end_s - sp->start_s) / want - 1) < 1e-9,
                  "PUSH of rank %d took %g s; alpha + N n / beta = %g s", sp->rank,
                  sp->end_s - sp->start_s, want);
        if (n_push++ == 0) push_end = sp->end_s;
        cr_assert_float_eq(sp->end_s, push_end, 1e-15, "the pushes land together");
    }
    cr_assert_eq(n_push, N);
    cr_assert_eq(n_pull, N);
    for (int k = 0; k < N; k++) {
        bool found = false;
        for (int i = 0; i < N && !found; i++)
            found = fabs(pull_start[i] - (push_end + (k + 1) * u)) < 1e-12;
        cr_assert(found, "no pull leaves at the pushes' end + %d updates of %g s", k + 1, u);
    }
    run_release_with(&r, &t, p);
    workload_free(wl);
}

/* ps-sync on 2 servers: a worker's push to server 0 (layers [0,2)) leaves
 * as soon as the backward of those layers ends, while its push to server 1
 * is still crossing that server's link, as a real run issues them
 * (real/worker.c OPS_ISSUED). Each push waited for the one before it: with
 * 16 workers of gpt2-small and 25 GB/s links, 2 servers gave the 209 ms of
 * pushing one server did, 2 x 104 ms. By hand here: a push moves 4 pushes
 * of 2 layers over 1e10 B/s, ~0.84 ms; a backward of 2 layers ~0.05 ms. */
Test(simulate, pushes_to_different_servers_cross_their_links_at_once)
{
    struct workload *wl = test_workload(UNIFORM_4);
    const int N = 4;
    struct config cfg = scenario(UNIFORM_4, N, 64, 1);
    cfg.servers = 2;
    struct plan *p = build("ps-sync", &cfg, wl);
    struct cluster c = round_numbers_for(p, 8);   /* one node */
    struct trace t;
    trace_init(&t, -1, 1000);
    struct sim_run r = run(p, &c, 1, (struct opts){0}, &t);
    double backward_end[8] = {0}, push_start[8][2] = {{0}}, push_end[8][2] = {{0}};
    int n_push = 0;
    for (size_t k = 0; k < t.spans.len; k++) {
        const struct span *sp = &t.spans.items[k];
        cr_assert_lt(sp->rank, 8);
        if (sp->kind == OP_BACKWARD && sp->lo == 0) backward_end[sp->rank] = sp->end_s;
        if (sp->kind != OP_PUSH) continue;
        int srv = sp->lo == 0 ? 0 : 1;
        push_start[sp->rank][srv] = sp->start_s;
        push_end[sp->rank][srv] = sp->end_s;
        n_push++;
    }
    cr_assert_eq(n_push, 2 * N);
    for (int w = 0; w < N; w++) {
        cr_expect_float_eq(push_start[w][0], backward_end[w], 1e-12,
                           "worker %d: its push to server 0 left at %g s, its backward of "
                           "[0,2) ended at %g s", w, push_start[w][0], backward_end[w]);
        cr_expect_lt(push_start[w][0], push_end[w][1],
                     "worker %d: the pushes to the two servers overlap", w);
    }
    run_release_with(&r, &t, p);
    workload_free(wl);
}

/* ps-sync with --backup-workers 1 and one worker twice as slow: each round
 * closes with the N - 1 fast pushes, so the fast workers keep the fast step
 * (3 units a layer on the ideal cluster) and the slow one's pushes are
 * dropped. Without backup every step waits for the slow worker. */
Test(simulate, ps_sync_backup_never_waits_for_the_slowest)
{
    struct workload *wl = test_workload(UNIFORM_4);
    const int N = 4, S = 10;
    const double fast = 12, slow = 24;   /* 3 x 4 layers; x 2 */
    for (int backup = 0; backup <= 1; backup++) {
        struct config cfg = scenario(UNIFORM_4, N, 64, 1);
        cfg.backup_workers = backup;
        struct plan *p = build("ps-sync", &cfg, wl);
        struct cluster c = laid_out("ideal", p, 0);
        struct trace t;
        trace_init(&t, -1, 100000);
        struct sim_run r = run(p, &c, S, (struct opts){.straggler = "slow:3=2"}, &t);
        double ends[10];
        step_ends(&t, 0, S, ends);
        double want = backup ? fast : slow;
        for (int s = 0; s < S; s++)
            cr_assert(fabs(ends[s] - want * (s + 1)) < 1e-9,
                      "backup %d: fast worker 0 ends step %d at %g, want %g", backup, s, ends[s],
                      want * (s + 1));
        int dropped = 0;
        for (size_t k = 0; k < t.spans.len; k++) {
            const struct span *sp = &t.spans.items[k];
            if (sp->kind != OP_PUSH) continue;
            dropped += sp->version_applied < 0;
            if (sp->version_applied >= 0)
                cr_assert_eq(sp->version_applied, sp->version_read, "sync: staleness 0");
            if (backup) cr_assert_eq(sp->version_applied < 0, sp->rank == 3);
        }
        cr_assert_eq(dropped, backup ? S : 0);
        run_release_with(&r, &t, p);
    }
    workload_free(wl);
}

/* ---- failures --------------------------------------------------------------- */

/* ps-async, worker 2 dies at 100 units: the others do the rest of the
 * job's work (its unfinished step included), the server keeps every push it
 * applied (the versions applied are exactly 0 .. n-1 for n applied pushes:
 * none lost, none counted twice), and the dead worker leaves no span after
 * its death. Its time from then on is down, not idle, and only complete
 * steps count as samples applied. */
Test(simulate, ps_async_failure_keeps_accepted_pushes_and_survivors_finish)
{
    const int N = 4, S = 20;
    struct job j = job_open("ps-async", scenario(UNIFORM_4, N, 64, 1), "ideal", 0);
    struct trace t;
    trace_init(&t, -1, 100000);
    struct sim_run r = run(j.p, &j.c, S, (struct opts){.fail = "2@100s", .straggler = "exp:0.2",
                                               .seed = 5}, &t);
    cr_assert(r.res.failed);
    cr_assert_eq(r.res.failed_rank, 2);
    cr_assert_float_eq(r.res.failure_time_s, 100, 1e-12);
    int last_step[4] = {-1, -1, -1, -1}, n_push = 0;
    int64_t max_applied = -1;
    bool seen[1000] = {false};
    for (size_t k = 0; k < t.spans.len; k++) {
        const struct span *sp = &t.spans.items[k];
        if (sp->rank < N && sp->step > last_step[sp->rank]) last_step[sp->rank] = sp->step;
        if (sp->rank == 2) cr_assert_leq(sp->end_s, 100.0, "the dead rank worked after death");
        if (sp->kind != OP_PUSH) continue;
        /* a PUSH span is recorded when the server took it; async drops none */
        n_push++;
        cr_assert_geq(sp->version_applied, 0);
        cr_assert_lt(sp->version_applied, 1000);
        cr_assert(!seen[sp->version_applied], "version %lld applied twice",
                  (long long)sp->version_applied);
        seen[sp->version_applied] = true;
        if (sp->version_applied > max_applied) max_applied = sp->version_applied;
    }
    cr_assert_eq(max_applied + 1, n_push, "versions 0..n-1 for n applied pushes");
    int64_t steps_done = 0;
    for (int w = 0; w < N; w++) steps_done += r.report.per_rank[w].steps;
    cr_assert_eq(steps_done, N * S, "the job's work is done: %lld worker steps of %d",
                 (long long)steps_done, N * S);
    cr_assert_eq(r.report.samples_applied, (int64_t)S * 64);
    /* the dead worker's step cut short is not among its complete steps */
    cr_assert_eq(r.report.per_rank[2].steps, last_step[2], "dead worker: %lld steps, last %d",
                 (long long)r.report.per_rank[2].steps, last_step[2]);
    for (int w = 0; w < N; w++)
        if (w != 2) cr_assert_gt(r.report.per_rank[w].steps, S, "survivor %d took more", w);
    double down = r.res.makespan_s - 100;
    cr_assert_float_eq(r.report.per_rank[2].down_s, down, 1e-9);
    /* each worker's time is compute + comm + idle + down (survivors: to
     * when they were done); the down share is the dead one's of their sum */
    double device_s = 0;
    for (int w = 0; w < N; w++) {
        const struct rank_time *rt = &r.report.per_rank[w];
        device_s += rt->compute_s + rt->comm_s + rt->idle_s + rt->down_s;
    }
    cr_assert_float_eq(r.report.breakdown.down, down / device_s, 1e-12, "down share %g",
                       r.report.breakdown.down);
    cr_assert_float_eq(r.report.breakdown.compute + r.report.breakdown.comm +
                       r.report.breakdown.idle + r.report.breakdown.down, 1, 1e-12);
    run_release(&r);
    trace_release(&t);

    /* A server cannot be replaced by carrying on: the event loop refuses
     * it (restart, sim/failures.h, replays it) and says why. */
    struct err e = {0};
    cr_assert_eq(try_run(j.p, &j.c, S, (struct opts){.fail = "4@30s"}, NULL, &r, &e), ERR_INPUT);
    cr_assert(strstr(e.msg, "parameter server") && strstr(e.msg, "restart"), "%s", e.msg);
    run_release(&r);

    /* R@STEP: worker 1 dies as it starts its own step 3 (0-based), so it
     * completes exactly 3 steps and the others do the rest. */
    r = run(j.p, &j.c, S, (struct opts){.fail = "1@3", .straggler = "exp:0.2", .seed = 5}, NULL);
    cr_assert(r.res.failed);
    cr_assert_eq(r.res.failed_rank, 1);
    cr_assert_eq(r.report.per_rank[1].steps, 3, "the dead worker completed %lld steps",
                 (long long)r.report.per_rank[1].steps);
    cr_assert_eq(r.report.samples_applied, (int64_t)S * N * 64 / N, "every sample applied");
    run_release(&r);
    job_close(&j);
}

/* --mtbf under continue: workers die one after another at exponential
 * times (mean mtbf / live workers) until the work is done; the same seed
 * gives the same deaths, and when every worker dies the run says so. */
Test(simulate, ps_async_mtbf_kills_workers_reproducibly)
{
    const int N = 4, S = 40;
    struct job j = job_open("ps-async", scenario(UNIFORM_4, N, 64, 1), "ideal", 0);
    /* a worker step is 12 units: S x N of them on N workers take 480 units
     * without a failure; a per-worker mean of 500 kills some of them */
    struct sim_run a = run(j.p, &j.c, S, (struct opts){.mtbf_s = 500, .seed = 3}, NULL);
    struct sim_run b = run(j.p, &j.c, S, (struct opts){.mtbf_s = 500, .seed = 3}, NULL);
    cr_assert(a.res.n_failures >= 1 && a.res.n_failures < N, "%d failures", a.res.n_failures);
    cr_assert_eq(a.res.n_failures, b.res.n_failures);
    cr_assert_eq(a.res.failed_rank, b.res.failed_rank);
    cr_assert(a.res.failure_time_s == b.res.failure_time_s && a.res.makespan_s == b.res.makespan_s,
              "same seed, same run");
    cr_assert_gt(a.res.makespan_s, 480, "fewer workers take longer: %g", a.res.makespan_s);
    run_release(&a);
    run_release(&b);
    struct err e = {0};
    cr_assert_eq(try_run(j.p, &j.c, S, (struct opts){.mtbf_s = 1, .seed = 3}, NULL, &a, &e),
                 ERR_RUN);
    cr_assert(strstr(e.msg, "every one of the 4 workers failed"), "%s", e.msg);
    run_release(&a);
    job_close(&j);
}

/* A synchronous plan's failure stops every rank: restart and shrink are
 * sim/failures.h's (tests/test_sim_failures.c), and the event loop refuses
 * it rather than carry on without a member of an all-reduce. */
Test(simulate, refuses_a_synchronous_failure_in_the_event_loop)
{
    struct job j = job_open("mirrored", scenario(UNIFORM_4, 4, 64, 1), "ideal", 0);
    struct sim_run r;
    struct err e = {0};
    cr_assert_eq(try_run(j.p, &j.c, 10, (struct opts){.fail = "1@40s"}, NULL, &r, &e), ERR_INPUT);
    cr_assert(strstr(e.msg, "synchronous") && strstr(e.msg, "sim/failures.h"), "%s", e.msg);
    run_release(&r);
    cr_assert_eq(try_run(j.p, &j.c, 10, (struct opts){.mtbf_s = 100}, NULL, &r, &e), ERR_INPUT);
    run_release(&r);
    job_close(&j);
}

/* ---- determinism and input errors -------------------------------------- */

/* A time that is not a number (here a profile value past what the loader
 * accepts, set directly) stops the run with a message, not a silent
 * ERR_RUN (issue 15, finding 3). */
Test(simulate, a_time_that_is_not_a_number_stops_the_run_with_a_message)
{
    struct job j = job_open("mirrored", scenario(UNIFORM_4, 4, 64, 1), "h100-nvlink-ib", 0);
    j.c.device.op_overhead_s = NAN;   /* every compute op's end NaN */
    struct sim_run r;
    struct err e = {0};
    int rc = try_run(j.p, &j.c, 3, (struct opts){0}, NULL, &r, &e);
    cr_assert_lt(rc, 0, "a NaN time was accepted");
    cr_assert(e.msg[0] != '\0', "no message (code %d)", rc);
    cr_assert(strstr(e.msg, "not a finite time") || strstr(e.msg, "NaN") ||
                  strstr(e.msg, "finite"), "%s", e.msg);
    run_release(&r);
    job_close(&j);
}


static void kept_spans(const char *strategy, uint64_t seed, struct trace *t)
{
    struct job j = job_open(strategy, scenario(UNIFORM_4, 4, 64, 4), "h100-nvlink-ib", 2);
    trace_init(t, -1, 1000000);
    struct sim_run r = run(j.p, &j.c, 20, (struct opts){.straggler = "exp:0.3", .seed = seed}, t);
    run_release(&r);
    job_close(&j);
}

Test(simulate, same_setup_gives_bit_identical_spans_and_another_seed_does_not)
{
    const char *names[] = {"mirrored", "ps-async", "pipeline-1f1b"};
    for (size_t k = 0; k < 3; k++) {
        struct trace a, b, c;
        kept_spans(names[k], 7, &a);
        kept_spans(names[k], 7, &b);
        kept_spans(names[k], 8, &c);
        cr_assert_gt(a.spans.len, 0);
        cr_assert_eq(a.spans.len, b.spans.len, "%s", names[k]);
        cr_assert_eq(memcmp(a.spans.items, b.spans.items, a.spans.len * sizeof *a.spans.items),
                     0, "%s: two runs of one setup differ", names[k]);
        cr_assert(c.spans.len != a.spans.len ||
                      memcmp(a.spans.items, c.spans.items,
                             a.spans.len * sizeof *a.spans.items) != 0,
                  "%s: seeds 7 and 8 gave the same spans", names[k]);
        trace_release(&a);
        trace_release(&b);
        trace_release(&c);
    }
}

Test(simulate, refuses_a_failure_of_a_rank_the_plan_lacks_and_zero_steps)
{
    struct job j = job_open("mirrored", scenario(UNIFORM_4, 2, 64, 1), "ideal", 0);
    struct err e = {0};
    struct sim_run r;
    cr_assert_eq(try_run(j.p, &j.c, 3, (struct opts){.fail = "5@1s"}, NULL, &r, &e), ERR_INPUT);
    cr_assert(strstr(e.msg, "--fail") && strstr(e.msg, "5"), "%s", e.msg);
    run_release(&r);
    cr_assert_eq(try_run(j.p, &j.c, 0, (struct opts){0}, NULL, &r, &e), ERR_INPUT);
    cr_assert(strstr(e.msg, "--steps"), "%s", e.msg);
    run_release(&r);
    job_close(&j);
}

/* ---- the job's accounting (docs/metrics.md) ------------------------------------ */

/* On the ideal cluster a layer's forward of a microbatch costs 1 unit and
 * its backward 2, communication nothing: with p equal one-layer stages and m
 * microbatches every GPipe and 1F1B step is (m + p - 1)(F + B) = 3(m + p - 1)
 * units, and model parallelism (m = 1) p(F + B). Every step, the first
 * included, and the report's mean, p50 and p99 all equal it. */
Test(simulate, ideal_pipeline_and_model_steps_equal_the_closed_form_every_step)
{
    struct workload *wl = test_workload(UNIFORM_4);
    const int S = 5, P = 4;
    const struct { const char *name; int m; } cases[] = {
        {"pipeline-gpipe", 8}, {"pipeline-1f1b", 8}, {"pipeline-1f1b", 2}, {"model", 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        struct config cfg = scenario(UNIFORM_4, P, 64, cases[k].m);
        struct plan *p = build(cases[k].name, &cfg, wl);
        struct cluster c = laid_out("ideal", p, 0);
        double ends[5];
        struct sim_run run_ = run(p, &c, S, (struct opts){.step_end_s = ends}, NULL);
        const struct report *rp = &run_.report;
        double want = 3.0 * (cases[k].m + P - 1);
        for (int st = 0; st < S; st++) {
            double got = ends[st] - (st ? ends[st - 1] : 0);
            cr_assert_float_eq(got, want, 1e-9, "%s m=%d: step %d took %g, closed form %g",
                               cases[k].name, cases[k].m, st, got, want);
        }
        cr_assert_float_eq(rp->step_time_s.mean, want, 1e-9, "%s mean", cases[k].name);
        cr_assert_float_eq(rp->step_time_s.p50, want, 1e-9, "%s p50", cases[k].name);
        cr_assert_float_eq(rp->step_time_s.p99, want, 1e-9, "%s p99", cases[k].name);
        cr_assert_float_eq(rp->throughput_samples_per_s, 64 / want, 1e-9, "%s", cases[k].name);
        run_release_with(&run_, NULL, p);
    }
    workload_free(wl);
}

/* ps-async, one worker 10x slower on the ideal cluster (a step 12 units,
 * the slow one's 120): the job's 4 x 40 worker steps are shared out, so the
 * slow worker runs about a tenth of a fast one's, and the job ends near
 * 160 / 3.1 fast steps (plus a slow step's tail), not 40 slow ones. Every worker step's samples count. */
Test(simulate, a_slow_async_worker_does_fewer_steps_and_the_job_ends_sooner)
{
    const int N = 4, S = 40;
    struct job j = job_open("ps-async", scenario(UNIFORM_4, N, 64, 1), "ideal", 0);
    struct sim_run r = run(j.p, &j.c, S, (struct opts){.straggler = "slow:3=10"}, NULL);
    int64_t total = 0;
    for (int w = 0; w < N; w++) total += r.report.per_rank[w].steps;
    cr_assert_eq(total, N * S);
    for (int w = 0; w < 3; w++)
        cr_assert_gt(r.report.per_rank[w].steps, 8 * r.report.per_rank[3].steps,
                     "fast worker %d: %lld steps, slow: %lld", w,
                     (long long)r.report.per_rank[w].steps,
                     (long long)r.report.per_rank[3].steps);
    /* the work at the four workers' pace, plus at most one slow step begun
     * just before the work ran out */
    double fast_s = 12, want_s = fast_s * N * S / (3 + 0.1);
    cr_assert_leq(r.res.makespan_s, want_s + 10 * fast_s, "job %g units, want %g + one slow "
                  "step at most", r.res.makespan_s, want_s);
    cr_assert_lt(r.res.makespan_s, 0.4 * S * 10 * fast_s);
    cr_assert_eq(r.report.samples_applied, (int64_t)S * 64);
    cr_assert_float_eq(r.report.step_time_s.mean, r.res.makespan_s / S, 1e-12);
    /* done workers are not idle: the shares are over each worker's time */
    cr_assert_lt(r.report.breakdown.idle, 0.2, "idle %g", r.report.breakdown.idle);
    run_release(&r);
    job_close(&j);
}

/* ---- op-time jitter (core/jitter.h, a calibrated profile's spread) ------ */

#define JIT_BINS 16

/* From the kept spans of a run: the staleness histogram of applied PUSHes
 * (bins[k] = pushes of staleness k, the last bin holding the rest) and the
 * mean duration of a compute op. */
static void jitter_figures(const struct trace *t, int64_t bins[JIT_BINS], int64_t *n_push,
                           double *mean_compute_s)
{
    memset(bins, 0, JIT_BINS * sizeof *bins);
    *n_push = 0;
    double sum_s = 0;
    int64_t n_compute = 0;
    for (size_t i = 0; i < t->spans.len; i++) {
        const struct span *sp = &t->spans.items[i];
        if (sp->kind == OP_PUSH && sp->version_applied >= 0) {
            int64_t k = sp->version_applied - sp->version_read;
            bins[k < JIT_BINS - 1 ? k : JIT_BINS - 1]++;
            (*n_push)++;
        }
        if (op_infos[sp->kind].cls == OPC_COMPUTE) {
            sum_s += sp->end_s - sp->start_s;
            n_compute++;
        }
    }
    *mean_compute_s = n_compute ? sum_s / (double)n_compute : 0;
}

/* ps-async with 3 workers, as the run of issue 11 that gave the staleness
 * histogram [32, 206, 348, 10, 4] measured and [1, 1, 598] simulated
 * lock-step: cpu-loopback, 200 steps. sigma: the jitter of all kinds. */
static void async_with_jitter(double sigma, uint64_t seed, struct trace *t)
{
    struct job j =
        job_open("ps-async", scenario("mlp:784-256-256-256-10", 3, 96, 1), "cpu-loopback", 0);
    /* links fast beside the compute, as on the calibrated machine of the
     * issue: without jitter the workers then run lock-step */
    j.c.intra = j.c.inter = (struct link_profile){.latency_s = 1e-6, .bw_bytes_per_s = 1e11};
    /* and the server's updates (memory-bound) cheap beside them: a server
     * busy with updates serves the workers round-robin, whatever the
     * jitter, and the test is about the workers' clocks */
    j.c.device.mem_bw_bytes_per_s *= 100;
    j.c.jitter = (struct jitter_spec){sigma, sigma, sigma};
    trace_init(t, -1, 1000000);
    struct sim_run r = run(j.p, &j.c, 200, (struct opts){.seed = seed}, t);
    run_release(&r);
    job_close(&j);
}

static void print_bins(const char *what, const int64_t bins[JIT_BINS])
{
    fprintf(stderr, "%s: [", what);
    int last = JIT_BINS - 1;
    while (last > 0 && !bins[last]) last--;
    for (int k = 0; k <= last; k++) fprintf(stderr, "%s%lld", k ? ", " : "", (long long)bins[k]);
    fprintf(stderr, "]\n");
}

/* Without jitter the three workers run lock-step and nearly every push
 * has staleness N - 1 = 2. With a 10% spread (a log-normal sigma of 0.1)
 * they drift: the histogram spreads over several values, as the measured
 * one does. The ratio's mean is 1 (LogNormal(-s^2/2, s)), so the mean
 * compute op stays the no-jitter one: over the ~1,200 ops of a run its
 * standard error is about 0.1 / sqrt(1200) = 0.3%; tolerance 2%. */
Test(simulate, jitter_spreads_ps_async_staleness_and_keeps_the_mean_compute_time)
{
    struct trace flat, a, b, other;
    int64_t bins0[JIT_BINS], bins[JIT_BINS], bins_b[JIT_BINS], bins_o[JIT_BINS], n0, n, nb, no;
    double mean0, mean, mean_b, mean_o;
    async_with_jitter(0, 5, &flat);
    async_with_jitter(0.1, 5, &a);
    async_with_jitter(0.1, 5, &b);
    async_with_jitter(0.1, 6, &other);
    jitter_figures(&flat, bins0, &n0, &mean0);
    jitter_figures(&a, bins, &n, &mean);
    jitter_figures(&b, bins_b, &nb, &mean_b);
    jitter_figures(&other, bins_o, &no, &mean_o);
    print_bins("ps-async, 3 workers, 200 steps, no jitter", bins0);
    print_bins("ps-async, 3 workers, 200 steps, jitter sigma 0.1", bins);
    fprintf(stderr, "mean compute op: %.6g s without jitter, %.6g s with (%+.2f%%, tolerance "
            "2%%)\n", mean0, mean, 100 * (mean / mean0 - 1));

    cr_assert_eq(n0, 600);
    /* 95%: the first steps and the server's link order a few pushes otherwise */
    cr_expect_geq(bins0[2], 570, "lock-step: staleness 2 for nearly every push (%lld)",
                  (long long)bins0[2]);
    cr_assert_eq(n, 600);
    int spread = 0;
    int64_t most = 0;
    for (int k = 0; k < JIT_BINS; k++) {
        spread += bins[k] >= 12;   /* 2% of the pushes */
        if (bins[k] > most) most = bins[k];
    }
    cr_expect_geq(spread, 3, "jitter: at least 3 staleness values with 2%% of pushes each");
    cr_expect_leq(most, 540, "jitter: no value holds 90%% of the pushes (%lld do)", (long long)most);
    cr_expect(fabs(mean / mean0 - 1) < 0.02, "mean compute %g vs %g without jitter", mean, mean0);

    /* deterministic: the same seed gives the same spans, bit for bit; another, others */
    cr_assert_eq(a.spans.len, b.spans.len);
    cr_expect_eq(memcmp(a.spans.items, b.spans.items, a.spans.len * sizeof *a.spans.items), 0,
                 "two runs of seed 5 differ");
    cr_expect(other.spans.len != a.spans.len ||
                  memcmp(a.spans.items, other.spans.items, a.spans.len * sizeof *a.spans.items),
              "seeds 5 and 6 gave the same spans");
    trace_release(&flat);
    trace_release(&a);
    trace_release(&b);
    trace_release(&other);
}

/* The machine's spread and the user's --straggler compose: the jitter
 * streams are not the straggler's, so adding a straggler model leaves the
 * jitter draws as they were (a pause model draws only at step starts: the
 * compute spans' durations are unchanged). */
Test(simulate, jitter_composes_with_a_straggler_model_on_separate_streams)
{
    struct job j = job_open("mirrored", scenario(UNIFORM_4, 2, 64, 1), "cpu-loopback", 0);
    j.c.jitter = (struct jitter_spec){0.2, 0.2, 0.2};
    struct trace plain, paused;
    trace_init(&plain, -1, 100000);
    trace_init(&paused, -1, 100000);
    struct sim_run r = run(j.p, &j.c, 10, (struct opts){.seed = 9}, &plain);
    run_release(&r);
    r = run(j.p, &j.c, 10, (struct opts){.seed = 9, .straggler = "pause:0.5:0.001"}, &paused);
    run_release(&r);
    cr_assert_eq(plain.spans.len, paused.spans.len);
    int n_compute = 0;
    for (size_t i = 0; i < plain.spans.len; i++) {
        const struct span *x = &plain.spans.items[i], *y = NULL;
        if (op_infos[x->kind].cls != OPC_COMPUTE) continue;
        n_compute++;
        /* the same op of the same step (spans are kept in the order they
         * end, which the pauses change); O(n^2) over ~200 spans */
        for (size_t q = 0; q < paused.spans.len && !y; q++) {
            const struct span *z = &paused.spans.items[q];
            if (z->rank == x->rank && z->step == x->step && z->op == x->op) y = z;
        }
        cr_assert_not_null(y, "span %zu has no twin", i);
        /* equal but for the rounding of end - start at other times */
        double dx = x->end_s - x->start_s, dy = y->end_s - y->start_s;
        cr_assert(fabs(dx - dy) <= 1e-12 * dx, "compute span %zu: %.17g s, %.17g s with pauses",
                  i, dx, dy);
    }
    cr_expect_gt(n_compute, 0);
    trace_release(&plain);
    trace_release(&paused);
    job_close(&j);
}

/* Time-sharing as it happens (a profile's timeshare_slowdown): a compute
 * op takes the slowdown of the ranks computing on its node when it starts.
 * Model parallelism on 4 ranks of a 2-core node computes one rank at a
 * time, so its ops run at the table's k = 1 entry, not at the 4-rank
 * stretch; mirrored's 4 replicas all compute at once and take k = 4's. */
Test(simulate, time_sharing_slows_only_the_ranks_computing_at_once)
{
    struct workload *wl = test_workload(UNIFORM_4);
    const char *path = test_tmp_file(
        "shared.profile",
        "name = shared\nideal = false\nflops_per_s = 1e10\nmem_bw_bytes_per_s = 1e12\n"
        "op_overhead_s = 0\nmem_bytes = 10000000000\ndevices_per_node = 8\n"
        "intra_latency_s = 0\nintra_bw_bytes_per_s = inf\ninter_latency_s = 0\n"
        "inter_bw_bytes_per_s = inf\ncores_per_node = 2\ntimeshare_slowdown = 1,1,1.5,2\n");
    struct config cfg = scenario(UNIFORM_4, 4, 64, 1);
    struct plan *model = build("model", &cfg, wl), *mirrored = build("mirrored", &cfg, wl);
    struct cluster cm = laid_out(path, model, 0), cd = laid_out(path, mirrored, 0);
    cr_assert_float_eq(cm.time_share_stretch, 2, 1e-12, "4 ranks on the node: the k = 4 entry");
    struct trace tm, td;
    trace_init(&tm, -1, 10000);
    trace_init(&td, -1, 10000);
    struct sim_run rm = run(model, &cm, 2, (struct opts){0}, &tm);
    struct sim_run rd = run(mirrored, &cd, 2, (struct opts){0}, &td);
    /* each compute span against its op's cost without time-sharing */
    const struct { struct trace *t; double want; const char *what; } cases[] = {
        {&tm, 1.0, "model (one rank computes at a time)"},
        {&td, 2.0, "mirrored (four compute at once)"},
    };
    for (int k = 0; k < 2; k++) {
        int n = 0;
        for (size_t i = 0; i < cases[k].t->spans.len; i++) {
            const struct span *sp = &cases[k].t->spans.items[i];
            if (sp->kind != OP_FORWARD && sp->kind != OP_BACKWARD) continue;
            double alone_s = sp->flops / 1e10;
            cr_assert_float_eq((sp->end_s - sp->start_s) / alone_s, cases[k].want, 1e-9,
                               "%s: a %s of rank %d took %g x its cost", cases[k].what,
                               op_infos[sp->kind].name, sp->rank,
                               (sp->end_s - sp->start_s) / alone_s);
            n++;
        }
        cr_assert_gt(n, 0);
    }
    run_release(&rm);
    run_release(&rd);
    trace_release(&tm);
    trace_release(&td);
    plan_free(model);
    plan_free(mirrored);
    workload_free(wl);
}

/* Given durations (a replay's) near the largest double: two ops in a row
 * end past it. */
static double huge_compute_s(void *ctx, int rank, int64_t step, int op)
{
    (void)ctx, (void)rank, (void)step, (void)op;
    return 1e308;
}

Test(simulate, an_op_ending_past_the_largest_time_is_named_not_silent)
{
    /* The second op of rank 0 ended at inf; the analysis refused its span
     * with a bare code and the run failed "without saying why" (cli). */
    struct job j = job_open("mirrored", scenario(UNIFORM_4, 1, 32, 1), "ideal", 0);
    struct sim_durations given = {.compute_s = huge_compute_s};
    struct sim_setup s = {.plan = j.p, .cluster = &j.c, .steps = 2, .seed = 1,
                          .durations = &given};
    struct err e = {0};
    cr_assert_eq(failure_parse("", &s.failure, &e), 0, "%s", e.msg);
    struct analysis *a = analysis_create(j.p, 2, &e);
    cr_assert(a, "%s", e.msg);
    struct sim_result res;
    cr_expect_eq(simulate(&s, a, NULL, &res, &e), ERR_RUN);
    cr_expect(strstr(e.msg, "rank 0's op 1 (") && strstr(e.msg, "step 0") &&
                  strstr(e.msg, "would end at inf s") && strstr(e.msg, "1e+308 s"),
              "names the rank, op, step and time: %s", e.msg);
    analysis_free(a);
    job_close(&j);
}

/* Tests for core/analysis.c: hand-made span sequences whose step times,
 * breakdown, bubble and staleness are worked out by hand in the comments,
 * and unit-cost runs of real pipeline plans against the closed form. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <math.h>
#include <string.h>

#include "../core/analysis.h"
#include "../core/plan_check.h"
#include "../core/plan_memory.h"
#include "../strategies/strategy.h"

/* Sums of a few binary fractions and thirds: 1e-12 is far above their
 * rounding and far below any wrong answer here. */
#define TOL 1e-12

static struct workload *wl;

static void setup(void)
{
    wl = test_workload("mlp:64-64-64-64-64");
}

static void teardown(void)
{
    workload_free(wl);
}

TestSuite(analysis, .init = setup, .fini = teardown);

/* A plan with no ops: the analysis needs only its ranks and batch. */
static struct plan *bare_plan(int workers, int servers, int batch)
{
    struct err e = {0};
    struct plan *p = plan_create("test", wl, workers, servers, batch, 1, &e);
    cr_assert_not_null(p, "%s", e.msg);
    return p;
}

static struct span span(int rank, int stream, int kind, int step, double start_s, double end_s)
{
    return (struct span){
        .rank = rank, .stream = (int16_t)stream, .kind = (int16_t)kind, .step = step,
        .mb = -1, .peer = -1, .start_s = start_s, .end_s = end_s,
        .version_read = -1, .version_applied = -1,
    };
}

static struct span fwd(int rank, int step, double start_s, double end_s)
{
    return span(rank, STREAM_COMPUTE, OP_FORWARD, step, start_s, end_s);
}

static struct span comm(int rank, int step, double start_s, double end_s)
{
    return span(rank, STREAM_COMM, OP_ALLREDUCE, step, start_s, end_s);
}

static struct span push(int rank, int step, int64_t read, int64_t applied)
{
    struct span s = span(rank, STREAM_COMM, OP_PUSH, step, step, step + 0.5);
    s.version_read = read;
    s.version_applied = applied;
    return s;
}

/* Feeds spans[0..n) to a new analysis of p and finishes it at makespan_s. */
static void analyse(const struct plan *p, int steps, const struct span *spans, size_t n,
                    double makespan_s, struct report *r)
{
    struct err e = {0};
    struct analysis *a = analysis_create(p, steps, &e);
    cr_assert_not_null(a, "%s", e.msg);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(analysis_add(a, &spans[i]), 0, "span %zu", i);
    report_init(r);
    r->mode = "sim";
    cr_assert_eq(analysis_finish(a, makespan_s, r, &e), 0, "%s", e.msg);
    analysis_free(a);
}

static void assert_near(double got, double want, const char *what)
{
    cr_assert(fabs(got - want) <= TOL, "%s: got %.17g, want %.17g (diff %.3g, tolerance %.0e)",
              what, got, want, fabs(got - want), TOL);
}

Test(analysis, overlapping_comm_is_hidden_under_compute)
{
    /* compute 0-2, comm 1-3: compute busy 2; comm ∪ compute = 0-3 = 3, so
     * exposed comm 3 - 2 = 1; idle T - 3 = 2 with T = 5 */
    struct plan *p = bare_plan(1, 0, 8);
    struct span s[] = {fwd(0, 0, 0, 2), comm(0, 0, 1, 3)};
    struct report r;
    analyse(p, 1, s, 2, 5, &r);

    cr_assert_eq(r.n_per_rank, 1);
    cr_assert_eq(r.per_rank[0].rank, 0);
    assert_near(r.per_rank[0].compute_s, 2, "compute_s");
    assert_near(r.per_rank[0].comm_s, 1, "comm_s");
    assert_near(r.per_rank[0].idle_s, 2, "idle_s");
    assert_near(r.breakdown.compute, 2.0 / 5, "breakdown.compute");
    assert_near(r.breakdown.comm, 1.0 / 5, "breakdown.comm");
    assert_near(r.breakdown.idle, 2.0 / 5, "breakdown.idle");
    /* The bare plan's rank holds no stage (it runs no FORWARD of part of the
     * model), so its idle time is waiting, not a pipeline bubble. */
    assert_near(r.bubble_fraction, 0, "bubble");
    /* one step: the job's step time is T / S = 5 / 1, the last step ending
     * when the job does */
    assert_near(r.step_time_s.mean, 5, "mean");
    assert_near(r.step_time_s.p50, 5, "p50");
    assert_near(r.step_time_s.p99, 5, "p99");
    assert_near(r.throughput_samples_per_s, 1 * 8 / 5.0, "throughput");   /* steps x batch / T */
    report_release(&r);
    plan_free(p);
}

/* Worker 0's program has one op, a FORWARD: its span lists hold one compute
 * span in place (analysis.c's arena) and no comm span. A recorded trace may
 * give a step more (here three compute spans out of order and two comm
 * spans); the lists then move to blocks of their own and must give the
 * same sums as in place, in that step and the next. Step 0: compute 0-1,
 * 2-3 and 1.5-2.5 (union 0-1 + 1.5-3 = 2.5); comm 0.5-1.5 (exposed 1-1.5)
 * and 3-4 (exposed 1): comm 1.5. Step 1, back within one op a stream:
 * compute 4-5 (1), comm 4.5-6 (exposed 1). Worker 1 has the same op and
 * stays in place: compute 0-1 and 4-5. T = 6. */
Test(analysis, a_step_with_more_spans_than_ops_is_summed_the_same)
{
    struct plan *p = bare_plan(2, 0, 8);
    for (int w = 0; w < 2; w++) cr_assert_geq(plan_forward(p, w, 0, 4, -1, 4, NULL, 0), 0);
    struct span s[] = {fwd(0, 0, 0, 1),     fwd(1, 0, 0, 1),      fwd(0, 0, 2, 3),
                       comm(0, 0, 0.5, 1.5), fwd(0, 0, 1.5, 2.5), comm(0, 0, 3, 4),
                       fwd(0, 1, 4, 5),     comm(0, 1, 4.5, 6),   fwd(1, 1, 4, 5)};
    struct report r;
    analyse(p, 2, s, sizeof s / sizeof s[0], 6, &r);
    assert_near(r.per_rank[0].compute_s, 2.5 + 1, "rank 0 compute_s");
    assert_near(r.per_rank[0].comm_s, 1.5 + 1, "rank 0 comm_s");
    assert_near(r.per_rank[1].compute_s, 2, "rank 1 compute_s");
    assert_near(r.per_rank[1].comm_s, 0, "rank 1 comm_s");
    cr_assert_eq(r.per_rank[0].steps, 2);
    cr_assert_eq(r.per_rank[1].steps, 2);
    report_release(&r);
    plan_free(p);
}

Test(analysis, comm_inside_compute_and_in_gaps)
{
    /* compute 0-1 and 2-4; comm 0.5-0.75 (hidden), 1-2 (exposed 1), 3.5-5
     * (exposed 4-5 = 1): exposed 2, compute 3, idle 6 - 5 = 1 */
    struct plan *p = bare_plan(1, 0, 4);
    struct span s[] = {fwd(0, 0, 0, 1),     comm(0, 0, 0.5, 0.75), comm(0, 0, 1, 2),
                       fwd(0, 0, 2, 4),     comm(0, 0, 3.5, 5)};
    struct report r;
    analyse(p, 1, s, 5, 6, &r);
    assert_near(r.per_rank[0].compute_s, 3, "compute_s");
    assert_near(r.per_rank[0].comm_s, 2, "comm_s");
    assert_near(r.per_rank[0].idle_s, 1, "idle_s");
    report_release(&r);
    plan_free(p);
}

Test(analysis, job_step_times_and_nearest_rank_percentiles)
{
    /* worker 0 ends its steps at 1, 3, 6; worker 1 at 2, 3, 7. The job's
     * step s ends when the last worker has ended it: 2, 3, 7 (the last at
     * T = 7), so the durations are 2, 1, 4 and the mean T / S = 7/3.
     * nearest rank: p50 = x[ceil(0.50 * 3)] = x[2] = 2, p99 = x[3] = 4
     * A step's end is its latest span end, whichever span comes last. */
    struct plan *p = bare_plan(2, 0, 16);
    struct span s[] = {
        fwd(0, 0, 0, 0.5),  comm(0, 0, 0.5, 1),   /* ends 1 */
        comm(1, 0, 0, 2),   fwd(1, 0, 0, 1),      /* ends 2 (the comm, recorded first) */
        fwd(0, 1, 1, 3),                          /* ends 3 */
        fwd(1, 1, 2, 3),                          /* ends 3 */
        fwd(0, 2, 3, 6),    comm(0, 2, 3, 4),     /* ends 6 */
        fwd(1, 2, 3, 7),                          /* ends 7 */
    };
    struct report r;
    analyse(p, 3, s, sizeof s / sizeof *s, 7, &r);
    assert_near(r.step_time_s.mean, 7.0 / 3, "mean");
    assert_near(r.step_time_s.p50, 2, "p50");
    assert_near(r.step_time_s.p99, 4, "p99");
    assert_near(r.throughput_samples_per_s, 3 * 16 / 7.0, "throughput");
    report_release(&r);
    plan_free(p);
}

Test(analysis, breakdown_sums_to_one)
{
    /* uneven numbers on three workers, T = 0.7 */
    struct plan *p = bare_plan(3, 0, 3);
    struct span s[] = {
        fwd(0, 0, 0, 0.1),   comm(0, 0, 0.05, 0.3),  fwd(1, 0, 0.2, 1.0 / 3),
        comm(2, 0, 0, 0.69), fwd(2, 0, 0.01, 0.02),  fwd(0, 1, 0.4, 0.6),
        comm(1, 1, 0.5, 0.7),
    };
    struct report r;
    analyse(p, 2, s, sizeof s / sizeof *s, 0.7, &r);
    double sum = r.breakdown.compute + r.breakdown.comm + r.breakdown.idle;
    assert_near(sum, 1, "compute + comm + idle");
    /* compute: 0.1 + 0.2 (worker 0), 1/3 - 0.2 (1), 0.01 (2)
     * exposed comm: 0.2 (0), 0.2 (1), 0.69 - 0.01 (2) */
    double compute = 0.3 + (1.0 / 3 - 0.2) + 0.01, comm_s = 0.2 + 0.2 + 0.68;
    assert_near(r.breakdown.compute, compute / (3 * 0.7), "compute");
    assert_near(r.breakdown.comm, comm_s / (3 * 0.7), "comm");
    for (int w = 0; w < 3; w++) {
        const struct rank_time *rt = &r.per_rank[w];
        assert_near(rt->compute_s + rt->comm_s + rt->idle_s, 0.7, "a worker's time");
    }
    report_release(&r);
    plan_free(p);
}

Test(analysis, staleness_from_applied_pushes_only)
{
    /* pushes (read, applied): (0,0) (0,1) (1,3) (2,2) count: staleness 0 1 2 0
     * -> histogram [2, 1, 1], mean 3/4, max 2. A dropped push (applied -1)
     * and a PULL (read 5) do not count. */
    struct plan *p = bare_plan(2, 1, 2);
    struct span pull = span(0, STREAM_COMM, OP_PULL, 1, 1.5, 1.75);
    pull.version_read = 5;
    struct span s[] = {
        push(0, 0, 0, 0), push(1, 0, 0, 1), push(1, 1, 3, -1), pull,
        push(0, 1, 1, 3), push(1, 2, 2, 2),
    };
    struct report r;
    analyse(p, 3, s, sizeof s / sizeof *s, 3, &r);
    cr_assert_eq(r.staleness.n_histogram, 3);
    cr_assert_eq(r.staleness.histogram[0], 2);
    cr_assert_eq(r.staleness.histogram[1], 1);
    cr_assert_eq(r.staleness.histogram[2], 1);
    cr_assert_eq(r.staleness.max, 2);
    assert_near(r.staleness.mean, 3.0 / 4, "mean staleness");
    /* the server is no device: only the workers have rows */
    cr_assert_eq(r.n_per_rank, 2);
    report_release(&r);
    plan_free(p);
}

Test(analysis, no_pushes_no_histogram)
{
    struct plan *p = bare_plan(1, 0, 1);
    struct span s[] = {fwd(0, 0, 0, 1)};
    struct report r;
    analyse(p, 1, s, 1, 1, &r);
    cr_assert_eq(r.staleness.n_histogram, 0);
    cr_assert_null(r.staleness.histogram);
    cr_assert_eq(r.staleness.max, 0);
    cr_assert_eq(r.staleness.mean, 0);
    report_release(&r);
    plan_free(p);
}

/* GPipe at p stages and m microbatches, forward 1 and backward 1 per stage,
 * drawn by hand: stage i runs forward j at i + j; the last forward ends at
 * F = m + p - 1; stage i's k-th backward (microbatches in reverse) starts
 * at F + (p - 1 - i) + k. The run ends at 2(m + p - 1); each stage computes
 * 2m of it, so bubble = 1 - 2m / 2(m+p-1) = (p-1)/(m+p-1). */
Test(analysis, gpipe_shaped_trace_has_the_closed_form_bubble)
{
    enum { P = 4, M = 4 };
    struct plan *p = bare_plan(P, 0, 8);
    /* Stage i runs layer i: what makes its idle compute a bubble. */
    cr_assert_geq(wl->n_layers, P);
    for (int i = 0; i < P; i++) plan_forward(p, i, i, i + 1, 0, 2, NO_DEPS);
    cr_assert_eq(plan_build_status(p, NULL), 0);
    struct span s[2 * P * M];
    size_t n = 0;
    const double f_end = M + P - 1;
    for (int i = 0; i < P; i++) {
        for (int j = 0; j < M; j++) s[n++] = fwd(i, 0, i + j, i + j + 1);
        for (int k = 0; k < M; k++) {
            double t = f_end + (P - 1 - i) + k;
            s[n++] = span(i, STREAM_COMPUTE, OP_BACKWARD, 0, t, t + 1);
        }
    }
    struct report r;
    analyse(p, 1, s, n, 2.0 * (M + P - 1), &r);
    assert_near(r.bubble_fraction, (P - 1.0) / (M + P - 1.0), "bubble");
    assert_near(r.breakdown.idle, (P - 1.0) / (M + P - 1.0), "idle share");
    assert_near(r.breakdown.comm, 0, "comm");
    /* stage 0 ends last, at 2(m+p-1); stage i's last backward at 2(m+p-1) - i */
    assert_near(r.step_time_s.p99, 2.0 * (M + P - 1), "slowest step");
    report_release(&r);
    plan_free(p);
}

/* The unit-cost run of real pipeline plans, fed through the analysis, gives
 * the bubble the checker computes and the closed form (p-1)/(m+p-1): four
 * equal one-layer stages, forward 1 and backward 2 time units. */
static void unit_run_bubble(const char *strategy, int microbatches)
{
    struct err e = {0};
    struct config c;
    config_init(&c);
    c.devices = 4;
    c.batch = 32;
    c.microbatches = microbatches;
    struct plan *p = NULL;
    cr_assert_eq(strategy_build(strategy_find(strategy, &e), &c, wl, &p, &e), 0, "%s", e.msg);
    struct plan_times t;
    cr_assert_eq(plan_unit_run(p, &t, &e), 0, "%s", e.msg);

    struct analysis *a = analysis_create(p, 1, &e);
    cr_assert_not_null(a);
    /* round robin over the ranks, each in program order: ranks interleave */
    int next[4] = {0};
    for (int done = 0; !done;) {
        done = 1;
        for (int rk = 0; rk < p->n_workers; rk++) {
            if (next[rk] >= (int)p->ranks[rk].ops.len) continue;
            done = 0;
            int i = next[rk]++;
            const struct op *op = &p->ranks[rk].ops.items[i];
            struct span s = span(rk, op->stream, op->kind, 0, t.start[rk][i], t.end[rk][i]);
            cr_assert_eq(analysis_add(a, &s), 0);
        }
    }
    struct report r;
    report_init(&r);
    cr_assert_eq(analysis_finish(a, t.makespan, &r, &e), 0, "%s", e.msg);
    double closed = 3.0 / (microbatches + 3.0);
    cr_assert(fabs(r.bubble_fraction - closed) <= TOL, "%s m=%d: bubble %.17g, want %.17g",
              strategy, microbatches, r.bubble_fraction, closed);
    cr_assert(fabs(r.bubble_fraction - plan_unit_bubble(p, &t)) <= TOL);
    assert_near(t.makespan, 3.0 * (microbatches + 3), "makespan");
    report_release(&r);
    analysis_free(a);
    plan_times_release(&t);
    plan_free(p);
}

Test(analysis, unit_cost_gpipe_bubble_matches_closed_form) { unit_run_bubble("pipeline-gpipe", 8); }
Test(analysis, unit_cost_1f1b_bubble_matches_closed_form) { unit_run_bubble("pipeline-1f1b", 8); }

Test(analysis, zero_makespan_gives_zeros_not_nan)
{
    struct plan *p = bare_plan(2, 0, 8);
    struct span s[] = {fwd(0, 0, 0, 0), comm(1, 0, 0, 0)};
    struct report r;
    analyse(p, 1, s, 2, 0, &r);
    double fields[] = {r.step_time_s.mean, r.step_time_s.p50, r.step_time_s.p99,
                       r.throughput_samples_per_s, r.breakdown.compute, r.breakdown.comm,
                       r.breakdown.idle, r.bubble_fraction, r.staleness.mean};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        cr_assert_eq(fields[i], 0, "field %zu is %g", i, fields[i]);
    cr_assert_eq(r.n_per_rank, 2);
    for (int w = 0; w < 2; w++)
        cr_assert(r.per_rank[w].compute_s == 0 && r.per_rank[w].comm_s == 0 &&
                  r.per_rank[w].idle_s == 0);
    report_release(&r);
    plan_free(p);
}

Test(analysis, no_spans_at_all)
{
    struct plan *p = bare_plan(3, 0, 8);
    struct report r;
    analyse(p, 0, NULL, 0, 0, &r);
    cr_assert_eq(r.step_time_s.mean, 0);
    cr_assert_eq(r.breakdown.idle, 0);
    cr_assert_eq(r.n_per_rank, 3);
    report_release(&r);
    plan_free(p);
}

/* Interleaving ranks changes nothing: each rank's state is its own. */
Test(analysis, spans_interleaved_across_ranks)
{
    struct plan *p = bare_plan(2, 0, 4);
    /* rank-major */
    struct span a[] = {
        fwd(0, 0, 0, 1), comm(0, 0, 0.5, 1.5), fwd(0, 1, 1.5, 2.5), comm(0, 1, 2.5, 3),
        fwd(1, 0, 0, 2), comm(1, 0, 2, 2.25), fwd(1, 1, 2.25, 3.5),
    };
    /* the same spans as an executor would interleave them, by end time */
    struct span b[] = {a[0], a[1], a[4], a[5], a[2], a[3], a[6]};
    struct report ra, rb;
    analyse(p, 2, a, 7, 4, &ra);
    analyse(p, 2, b, 7, 4, &rb);
    /* rank 0: compute 1 + 1, exposed 0.5 + 0.5; steps end 1.5, 3
     * rank 1: compute 2 + 1.25, exposed 0.25;    steps end 2.25, 3.5
     * the job's steps end at 2.25 and (the last) T = 4: 2.25, 1.75 */
    const struct report *rs[] = {&ra, &rb};
    for (int k = 0; k < 2; k++) {
        const struct report *r = rs[k];
        assert_near(r->per_rank[0].compute_s, 2, "rank 0 compute");
        assert_near(r->per_rank[0].comm_s, 1, "rank 0 comm");
        assert_near(r->per_rank[1].compute_s, 3.25, "rank 1 compute");
        assert_near(r->per_rank[1].comm_s, 0.25, "rank 1 comm");
        assert_near(r->step_time_s.mean, 4.0 / 2, "mean");
        assert_near(r->step_time_s.p50, 1.75, "p50");   /* x[1] of 1.75 2.25 */
        assert_near(r->step_time_s.p99, 2.25, "p99");
    }
    cr_assert_eq(memcmp(ra.per_rank, rb.per_rank, 2 * sizeof *ra.per_rank), 0);
    report_release(&ra);
    report_release(&rb);
    plan_free(p);
}

Test(analysis, memory_comes_from_the_plan)
{
    struct err e = {0};
    struct config c;
    config_init(&c);
    c.devices = 2;
    c.batch = 8;
    struct plan *p = NULL;
    cr_assert_eq(strategy_build(strategy_find("mirrored", &e), &c, wl, &p, &e), 0, "%s", e.msg);
    struct report r;
    analyse(p, 1, NULL, 0, 1, &r);
    struct plan_memory m;
    plan_memory_max(p, &m);
    cr_assert_gt(m.peak, 0);
    cr_assert_eq(r.memory_bytes_per_device.params, m.params);
    cr_assert_eq(r.memory_bytes_per_device.grads, m.grads);
    cr_assert_eq(r.memory_bytes_per_device.optimizer, m.optimizer);
    cr_assert_eq(r.memory_bytes_per_device.activations, m.activations);
    cr_assert_eq(r.memory_bytes_per_device.peak, m.peak);
    report_release(&r);
    plan_free(p);
}

Test(analysis, refuses_bad_spans_and_late_adds)
{
    struct err e = {0};
    struct plan *p = bare_plan(2, 1, 4);
    struct analysis *a = analysis_create(p, 2, &e);
    cr_assert_not_null(a);
    struct span ok = fwd(0, 1, 0, 1);
    cr_assert_eq(analysis_add(a, &ok), 0);
    struct span back = fwd(0, 0, 1, 2);       /* step 0 after step 1 */
    cr_assert_eq(analysis_add(a, &back), ERR_INPUT);
    struct span rank = fwd(3, 0, 0, 1);        /* no rank 3 */
    cr_assert_eq(analysis_add(a, &rank), ERR_INPUT);
    struct span reversed = fwd(1, 0, 2, 1);    /* ends before it starts */
    cr_assert_eq(analysis_add(a, &reversed), ERR_INPUT);
    struct span stream = span(1, 2, OP_FORWARD, 0, 0, 1);
    cr_assert_eq(analysis_add(a, &stream), ERR_INPUT);
    struct span stale = push(1, 0, 3, 2);      /* applied before it was read */
    cr_assert_eq(analysis_add(a, &stale), ERR_INPUT);
    struct span server = fwd(2, 0, 0, 1);      /* a server's span: nobody's device time */
    cr_assert_eq(analysis_add(a, &server), 0);

    struct report r;
    report_init(&r);
    cr_assert_eq(analysis_finish(a, -1, &r, &e), ERR_INPUT);
    cr_assert(strstr(e.msg, "makespan"), "%s", e.msg);
    cr_assert_eq(analysis_finish(a, 2, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(analysis_add(a, &ok), ERR_RUN);
    cr_assert_eq(r.n_per_rank, 2);
    assert_near(r.per_rank[1].compute_s, 0, "the server's span went nowhere");
    report_release(&r);
    analysis_free(a);
    plan_free(p);
}

static int by_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

Test(analysis, percentiles_are_nearest_rank_over_many_steps)
{
    /* 1,000 steps of pseudo-random durations, many repeated (so the selection
     * meets ties): p50 and p99 must be the 500th and 990th smallest, as a
     * full sort gives them. */
    enum { STEPS = 1000 };
    struct plan *p = bare_plan(1, 0, 8);
    struct span s[STEPS];
    double dur[STEPS], t = 0;
    uint64_t x = 12345;
    for (int i = 0; i < STEPS; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        dur[i] = 1 + (double)((x >> 33) % 37);
        s[i] = fwd(0, i, t, t + dur[i]);
        t += dur[i];
    }
    struct report r;
    analyse(p, STEPS, s, STEPS, t, &r);
    qsort(dur, STEPS, sizeof *dur, by_double);
    assert_near(r.step_time_s.p50, dur[499], "p50");
    assert_near(r.step_time_s.p99, dur[989], "p99");
    assert_near(r.step_time_s.mean, t / STEPS, "mean");
    report_release(&r);
    plan_free(p);
}

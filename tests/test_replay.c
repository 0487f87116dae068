/* strata replay (bench/replay.c, core/trace_read.c, cli/replay.c): traces
 * made by hand with known durations replay to the closed form; simulated
 * traces of every classic strategy replay to their own step time; the
 * what-ifs give what their definitions say; malformed traces are refused;
 * and a real run is reproduced within a tolerance the loaded machine
 * allows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/plan.h"
#include "../core/workload.h"
#include "../strategies/strategy.h"
#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(replay, .timeout = 300);

/* The hand trace: mirrored on 2 ranks, mlp:784-32-10, 2 steps. Each rank
 * runs FORWARD (op 0), BACKWARD (1), ALLREDUCE (2), UPDATE (3) a step, for
 * the durations below (ms); the all-reduce starts when the later rank
 * arrives and takes no time (the ideal network). */
struct hand {
    double fwd_ms[3], bwd_ms[3], upd_ms[3];
    const char *cluster;     /* the scenario's */
    const char *mode;
    double lag_ms[3];        /* before each forward: the rank started it late */
    int n_ranks;             /* 2 when 0; at most 3 */
};

#define HAND_STEPS 2

static void event(struct test_trace *t, const char *name, int rank, int tid, int step, int op,
                  const char *layers, double ts_ms, double dur_ms)
{
    int mb = !strcmp(name, "FORWARD") || !strcmp(name, "BACKWARD") ? 0 : -1;
    test_trace_span(t, name, rank, tid, step, op, layers, mb, ts_ms, dur_ms, "");
}

/* Writes h as a trace file; returns its path. The measured step time is
 * then max_r(fwd + bwd) + upd (upd equal on both ranks). */
static const char *write_hand(const char *file, const struct hand *h)
{
    struct test_trace t = test_trace_begin(file);
    const int n = h->n_ranks ? h->n_ranks : 2;
    double t_ms = 0;
    for (int s = 0; s < HAND_STEPS; s++) {
        double arrive_ms = 0, upd_ms = 0;
        for (int r = 0; r < n; r++) {
            arrive_ms = fmax(arrive_ms, h->lag_ms[r] + h->fwd_ms[r] + h->bwd_ms[r]);
            upd_ms = fmax(upd_ms, h->upd_ms[r]);
        }
        for (int r = 0; r < n; r++) {
            double f_ms = t_ms + h->lag_ms[r];
            event(&t, "FORWARD", r, 0, s, 0, "[0,2)", f_ms, h->fwd_ms[r]);
            event(&t, "BACKWARD", r, 0, s, 1, "[0,2)", f_ms + h->fwd_ms[r], h->bwd_ms[r]);
            event(&t, "ALLREDUCE", r, 1, s, 2, "[0,2)", t_ms + arrive_ms, 0);
            event(&t, "UPDATE", r, 0, s, 3, "[0,2)", t_ms + arrive_ms, h->upd_ms[r]);
        }
        t_ms += arrive_ms + upd_ms;
    }
    fprintf(t.f, "],\"displayTimeUnit\":\"ms\",\"strata_trace\":1,\"mode\":\"%s\","
               "\"strategy\":\"mirrored\",\"steps\":%d,\"ranks\":%d,\"workers\":%d,"
               "\"dropped_spans\":0,\"scenario\":{\"strategy\":\"mirrored\","
               "\"model\":\"mlp:784-32-10\",\"devices\":%d,\"batch\":%d,\"steps\":%d,"
               "\"seed\":1,\"cluster\":\"%s\"}}\n",
            h->mode ? h->mode : "sim", HAND_STEPS, n, n, n, 128 * n, HAND_STEPS, h->cluster);
    fclose(t.f);
    return t.path;
}

/* strata replay args... --json OUT, which must succeed; its document. */
static cJSON *replay_json(const char *const *args)
{
    const char *out = test_tmp_path("replay.json");
    const char *argv[24] = {"replay"};
    int n = 1;
    for (; args[n - 1]; n++) argv[n] = args[n - 1];
    argv[n++] = "--json";
    argv[n++] = out;
    argv[n] = NULL;
    struct run r = run_strata(argv);
    cr_assert_eq(r.status, 0, "strata replay failed (%d): %s", r.status, r.err);
    run_free(&r);
    return read_json(out);
}

#define STR(x) #x
#define XSTR(x) STR(x)

#define REPLAY(...) replay_json((const char *const[]){__VA_ARGS__, NULL})

static void expect_near(double got, double want, double rel, const char *what)
{
    cr_log_info("%s: %.12g, closed form %.12g (relative %.3g)", what, got, want,
                fabs(got / want - 1));
    cr_expect(fabs(got - want) <= rel * fabs(want), "%s: %.12g, closed form %.12g (%.3g apart)",
              what, got, want, fabs(got / want - 1));
}

static const struct hand uneven = {{1, 1}, {2, 4}, {0.5, 0.5}, "ideal", NULL, {0, 0}, 2};

Test(replay, hand_trace_replays_to_closed_form)
{
    /* ideal network: a step is the later rank's fwd + bwd, then the update */
    cJSON *j = REPLAY(write_hand("uneven.json", &uneven));
    expect_near(num_at(j, "measured_step_s", NULL), 5.5e-3, 1e-9, "measured step");
    expect_near(num_at(j, "replayed_step_s", NULL), 5.5e-3, 1e-9, "replayed step");
    cr_expect(fabs(num_at(j, "error", NULL)) < 1e-9);
    cr_expect_eq(strcmp(str_at(j, "network"), "ideal"), 0);
    cJSON_Delete(j);
}

Test(replay, a_rank_that_starts_an_op_late_keeps_its_lag)
{
    /* rank 0 starts each forward 3 ms after it could: its own lost time
     * (host, scheduler), replayed as part of the op, so rank 0 now arrives
     * last: 3 + 1 + 2 + 0.5 a step */
    struct hand h = uneven;
    h.mode = "real";
    h.lag_ms[0] = 3;
    cJSON *j = REPLAY(write_hand("lag.json", &h), "--cluster", "ideal");
    expect_near(num_at(j, "measured_step_s", NULL), 6.5e-3, 1e-9, "measured step");
    expect_near(num_at(j, "replayed_step_s", NULL), 6.5e-3, 1e-9, "replayed step");
    cr_expect_str_eq(str_at(j, "network"), "ideal");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(j, "whatif")), "a real trace's --cluster is its "
              "network, not a what-if");
    cJSON_Delete(j);
}

Test(replay, without_stragglers_makes_the_slow_rank_typical)
{
    /* typical backward: the lower median of {2, 4} ms = 2 ms, so a step is
     * 1 + 2 + 0.5; rank 1 alone made typical gives the same, rank 0 nothing */
    cJSON *j = REPLAY(write_hand("uneven.json", &uneven), "--without-stragglers");
    const cJSON *w = cJSON_GetObjectItem(j, "whatif");
    cr_assert(cJSON_IsObject(w), "no what-if in the replay");
    expect_near(num_at(w, "step_s", NULL), 3.5e-3, 1e-9, "step without stragglers");
    const cJSON *ranks = cJSON_GetObjectItem(j, "per_rank");
    cr_assert_eq(cJSON_GetArraySize(ranks), 2);
    expect_near(num_at(cJSON_GetArrayItem(ranks, 1), "straggler_share", NULL), 1 - 3.5 / 5.5,
                1e-9, "rank 1's share");
    cr_expect(fabs(num_at(cJSON_GetArrayItem(ranks, 0), "straggler_share", NULL)) < 1e-12);
    cJSON_Delete(j);
}

Test(replay, a_consistently_slow_rank_keeps_its_own_times_over_its_pace)
{
    /* rank 1 is 3x slow (its forward 3.3x, backward 3x, update 1x: pace,
     * the median, 3): its own times over 3 (1.1, 2, 0.5/3), not rank 0's
     * (1, 2, 0.5). Without stragglers, step 0: rank 1 arrives last at 3.1,
     * rank 0 updates until 3.6, rank 1 until 3.1 + 0.5/3; step 1: rank 1
     * arrives at 3.1 + 0.5/3 + 3.1 = 6.37, rank 0 at 3.6 + 3 = 6.6, so it
     * ends at 7.1: 3.55 ms a step, against the measured 3.3 + 6 + 0.5 (and
     * 3.5 had rank 1 taken rank 0's times) */
    const struct hand slow = {{1, 3.3}, {2, 6}, {0.5, 0.5}, "ideal", NULL, {0, 0}, 2};
    cJSON *j = REPLAY(write_hand("slow.json", &slow), "--without-stragglers");
    expect_near(num_at(j, "measured_step_s", NULL), 9.8e-3, 1e-9, "measured step");
    expect_near(num_at(j, "whatif", "step_s"), 3.55e-3, 1e-9, "step without stragglers");
    const cJSON *ranks = cJSON_GetObjectItem(j, "per_rank");
    expect_near(num_at(cJSON_GetArrayItem(ranks, 1), "straggler_share", NULL), 1 - 3.55 / 9.8,
                1e-9, "rank 1's share");
    cr_expect(fabs(num_at(cJSON_GetArrayItem(ranks, 0), "straggler_share", NULL)) < 1e-12);
    cJSON_Delete(j);
}

/* Two of three ranks 2x slow: held against the lower median over all
 * three ranks (a slow one's), neither was slow, every op's typical time
 * was the slow one's, and the what-if gained nothing (7 ms, the measured
 * step). A real report holds each rank against the median of the others
 * (core/straggler_detect.h), as docs/replay.md says replay does: rank 1's
 * forward 2 ms against the median of {1, 2}, 1.5 ms, pace 4/3 in every op,
 * so both are slow and keep their own times over 4/3: 1.5 + 3 ms to the
 * all-reduce, then 0.75 ms of update, 5.25 ms a step. */
Test(replay, two_slow_ranks_of_three_are_both_found)
{
    const struct hand two_slow = {{1, 2, 2}, {2, 4, 4}, {0.5, 1, 1}, "ideal", NULL, {0, 0, 0}, 3};
    cJSON *j = REPLAY(write_hand("two-slow.json", &two_slow), "--without-stragglers");
    expect_near(num_at(j, "measured_step_s", NULL), 7e-3, 1e-9, "measured step");
    expect_near(num_at(j, "whatif", "step_s"), 5.25e-3, 1e-9, "step without stragglers");
    cJSON_Delete(j);
}

Test(replay, cluster_ideal_removes_communication)
{
    struct hand h = uneven;
    h.cluster = "cpu-loopback";
    const char *path = write_hand("loopback.json", &h);
    cJSON *j = REPLAY(path, "--cluster", "ideal");
    /* at home the all-reduce costs the loopback's time; on ideal nothing */
    cr_expect(num_at(j, "replayed_step_s", NULL) > 5.5e-3 * (1 + 1e-6),
              "replayed %.9g s: the loopback's all-reduce should cost something",
              num_at(j, "replayed_step_s", NULL));
    expect_near(num_at(j, "whatif", "step_s"), 5.5e-3, 1e-9, "step on ideal");
    cJSON_Delete(j);
}

/* The FLOPs of op `index` of `rank` in strategy's plan of the hand scenario. */
static double flops_of(const char *strategy, int rank, int index, enum op_kind kind)
{
    struct config c;
    config_init(&c);
    snprintf(c.strategy, sizeof c.strategy, "%s", strategy);
    snprintf(c.model, sizeof c.model, "mlp:784-32-10");
    c.devices = 2;
    c.batch = 256;
    struct workload *wl = test_workload(c.model);
    struct plan *p = NULL;
    struct err e = {0};
    cr_assert_eq(strategy_build(test_strategy(strategy), &c, wl, &p, &e), 0, "%s", e.msg);
    const struct op *o = &p->ranks[rank].ops.items[index];
    cr_assert_eq(o->kind, kind, "%s rank %d op %d is %s", strategy, rank, index,
                 op_infos[o->kind].name);
    double flops = o->flops;
    plan_free(p);
    workload_free(wl);
    return flops;
}

Test(replay, strategy_replans_measured_rates_per_layer)
{
    /* Both ranks alike: each layer's rate is the op's time / its FLOPs.
     * Model parallelism on 2 ranks (rank 0 layer 0, rank 1 layer 1; the
     * ideal network) runs F0, F1, B1, B0 in a chain, then rank 0's update
     * (rank 1's overlaps B0): the closed form below. */
    struct hand h = {{1, 1}, {2, 2}, {0.5, 0.5}, "ideal", NULL, {0, 0}, 2};
    cJSON *j = REPLAY(write_hand("even.json", &h), "--strategy", "model");
    double rf = 1e-3 / flops_of("mirrored", 0, 0, OP_FORWARD);
    double rb = 2e-3 / flops_of("mirrored", 0, 1, OP_BACKWARD);
    double ru = 0.5e-3 / flops_of("mirrored", 0, 3, OP_UPDATE);
    double want = rf * (flops_of("model", 0, 0, OP_FORWARD) + flops_of("model", 1, 1, OP_FORWARD)) +
                  rb * (flops_of("model", 1, 2, OP_BACKWARD) + flops_of("model", 0, 3, OP_BACKWARD)) +
                  ru * flops_of("model", 0, 4, OP_UPDATE);
    expect_near(num_at(j, "whatif", "step_s"), want, 1e-9, "model's step from mirrored's rates");
    cr_expect_eq(num_at(j, "whatif", "devices"), 2);
    cr_expect_str_eq(str_at(cJSON_GetObjectItem(j, "whatif"), "strategy"), "model");
    cJSON_Delete(j);
}

Test(replay, scale_of_a_uniform_run_keeps_its_step)
{
    /* every op of a kind took the same time, so every draw is that time and
     * weak scaling keeps each device's work: the step stays 1 + 2 + 0.5 ms */
    struct hand h = {{1, 1}, {2, 2}, {0.5, 0.5}, "ideal", NULL, {0, 0}, 2};
    cJSON *j = REPLAY(write_hand("even.json", &h), "--scale", "16", "--seed", "7");
    expect_near(num_at(j, "whatif", "step_s"), 3.5e-3, 1e-9, "step at 16 devices");
    cr_expect_eq(num_at(j, "whatif", "devices"), 16);
    cr_expect_eq(num_at(j, "whatif", "batch"), 256 * 8);
    cJSON_Delete(j);
}

/* "at 1 devices": the what-if's line counts its devices as a sentence does */
Test(replay, scale_to_one_device_says_device)
{
    struct hand h = {{1, 1}, {2, 2}, {0.5, 0.5}, "ideal", NULL, {0, 0}, 2};
    expect_ok_saying(RUN("replay", write_hand("even.json", &h), "--scale", "1"),
                     "what-if (at 1 device (batch 128)):", true);
}

/* --scale's draws are replay's only random ones: a --seed without it was
 * read by nothing and said nothing (the replay was the seed's-less one);
 * replay refuses the options it has no use for, so this one too. */
Test(replay, a_seed_without_scale_is_refused)
{
    expect_refused(RUN("replay", write_hand("uneven.json", &uneven), "--seed", "7"), "--seed",
                   "--scale");
    expect_refused(RUN("replay", write_hand("uneven.json", &uneven), "--without-stragglers",
                       "--seed", "7", "--scale", "0"),
                   "--seed", "--scale");
}

Test(replay, what_ifs_combine)
{
    /* without stragglers on ideal from the loopback trace: 1 + 2 + 0.5 */
    struct hand h = uneven;
    h.cluster = "cpu-loopback";
    cJSON *j = REPLAY(write_hand("loopback.json", &h), "--without-stragglers", "--cluster",
                      "ideal");
    expect_near(num_at(j, "whatif", "step_s"), 3.5e-3, 1e-9, "typical ops on ideal");
    cJSON_Delete(j);
}

Test(replay, plot_writes_both_timelines_and_the_bars)
{
    const char *dir = test_tmp_path("plots");
    cJSON *j = REPLAY(write_hand("uneven.json", &uneven), "--without-stragglers", "--plot", dir);
    cJSON_Delete(j);
    /* the closing line every --plot writes (replay's was its own) */
    const char *dir2 = test_tmp_path("plots2");
    struct run r0 = RUN("replay", write_hand("uneven.json", &uneven), "--plot", dir2);
    cr_assert_eq(r0.status, 0, "%s", r0.err);
    char where[300];
    snprintf(where, sizeof where, "plots in %s/: replay-timelines, replay (each NAME.png", dir2);
    cr_expect_not_null(strstr(r0.out, where), "%s", r0.out);
    run_free(&r0);
    char path[256];
    snprintf(path, sizeof path, "%s/replay.dat", dir);
    char *bars = test_slurp(path);
    /* measured, replayed and the what-if, each with its change */
    cr_expect(strstr(bars, "\"measured\" 0.0055 0") != NULL, "%s", bars);
    cr_expect(strstr(bars, "\"what-if: without stragglers\" 0.0035 -36.") != NULL, "%s", bars);
    free(bars);
    snprintf(path, sizeof path, "%s/replay-timelines.gp", dir);
    char *gp = test_slurp(path);
    cr_expect(strstr(gp, "multiplot layout 2,1") && strstr(gp, "'replayed'"), "%s", gp);
    free(gp);
    /* a simulated ps-async trace's server records no span: no empty rows
     * for it (rank 2 of 2 workers and a server) */
    const char *trace = test_tmp_path("ps-trace.json");
    struct run r = RUN("sim", "--strategy", "ps-async", "--devices", "2", "--steps", "3",
                       "--trace", trace);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    cJSON_Delete(REPLAY(trace, "--plot", dir));
    gp = test_slurp(path);
    cr_expect(strstr(gp, "'rank 1 comm'") && !strstr(gp, "'rank 2 "), "%s", gp);
    free(gp);
}

/* `strata plot` of a saved replay draws its bars too, as replay --plot does
 * (it drew only the convergence and staleness of its two reports). */
Test(replay, plot_of_a_saved_replay_draws_its_bars)
{
    const char *json = test_tmp_path("saved-replay.json"), *dir = test_tmp_path("saved-plots");
    expect_ok(RUN("replay", write_hand("uneven.json", &uneven), "--json", json), "replay");
    expect_ok(RUN("plot", json, "--plot", dir), "plot");
    char path[256];
    snprintf(path, sizeof path, "%s/replay.dat", dir);
    char *bars = test_slurp(path);
    cr_expect(strstr(bars, "\"measured\" 0.0055 0") && strstr(bars, "\"replayed\" 0.0055"),
              "%s", bars);
    cr_expect_null(strstr(bars, "what-if"), "no what-if was asked: %s", bars);
    free(bars);
    /* and its what-if's bar, which replay --plot draws: strata plot drew
     * the measured and replayed bars alone */
    const char *json2 = test_tmp_path("saved-whatif.json"), *dir2 = test_tmp_path("whatif-plots");
    expect_ok(RUN("replay", write_hand("uneven.json", &uneven), "--without-stragglers", "--json",
                  json2), "replay");
    expect_ok(RUN("plot", json2, "--plot", dir2), "plot");
    snprintf(path, sizeof path, "%s/replay.dat", dir2);
    bars = test_slurp(path);
    cr_expect(strstr(bars, "\"what-if: without stragglers\" 0.0035 -36.") != NULL, "%s", bars);
    free(bars);
}

/* A simulated trace fed back is the same schedule: the replay's step time
 * is the simulator's own, to rounding (the trace's microseconds). */
Test(replay, sim_traces_of_the_classic_strategies_replay_exactly)
{
    static const char *const strategies[] = {"mirrored", "ps-sync", "ps-async", "ps-ssp",
                                             "model", "pipeline-gpipe", "pipeline-1f1b"};
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        const char *trace = test_tmp_path("sim-trace.json");
        struct run r = RUN("sim", "--strategy", strategies[i], "--devices", "4", "--steps", "3",
                           "--cluster", "cpu-loopback", "--straggler", "exp:0.5", "--trace",
                           trace);
        cr_assert_eq(r.status, 0, "%s: %s", strategies[i], r.err);
        run_free(&r);
        cJSON *j = REPLAY(trace);
        double err = num_at(j, "error", NULL);
        cr_log_info("%s: replay error %.3g", strategies[i], err);
        cr_expect(fabs(err) <= 1e-9, "%s: replayed %.12g s, measured %.12g s", strategies[i],
                  num_at(j, "replayed_step_s", NULL), num_at(j, "measured_step_s", NULL));
        cJSON_Delete(j);
    }
}

/* The uneven hand trace with its first `was` overwritten by `now` (as long),
 * written as test_tmp_dir/file: strata replay refuses it, naming must_name. */
static void expect_edit_refused(const char *was, const char *now, const char *file,
                                const char *must_name)
{
    char *text = test_slurp(write_hand("uneven.json", &uneven));
    char *at = strstr(text, was);
    cr_assert(at, "no %s in the hand trace", was);
    cr_assert_eq(strlen(now), strlen(was), "%s replaces %s in place", now, was);
    memcpy(at, now, strlen(now));
    expect_refused(RUN("replay", test_tmp_file(file, text)), must_name, NULL);
    free(text);
}

Test(replay, malformed_traces_are_refused)
{
    expect_refused(RUN("replay", test_tmp_file("bad.json", "{\"traceEvents\": [")), "bad.json",
                   NULL);
    expect_refused(RUN("replay", test_tmp_file("plain.json", "{\"traceEvents\": []}")),
                   "strata_trace", NULL);
    expect_refused(RUN("replay", "/nonexistent/trace.json"), "/nonexistent/trace.json", NULL);
    expect_refused(RUN("replay"), "one trace file", NULL);
    expect_refused(RUN("replay", write_hand("uneven.json", &uneven), "--scale", "-1"), "--scale",
                   "-1");
    /* weak scaling past --batch's largest: refused naming both, not run */
    expect_refused(RUN("replay", write_hand("uneven.json", &uneven), "--scale", "1048576"),
                   "--scale 1048576", "--batch");
    expect_refused(RUN("replay", write_hand("uneven.json", &uneven), "--scale", "2x"), "--scale",
                   "2x");
    expect_refused(RUN("replay", write_hand("uneven.json", &uneven), "--steps", "3"), "--steps",
                   NULL);
    /* ignored before: replay computes nothing, and its timelines show every step */
    expect_refused(RUN("replay", write_hand("uneven.json", &uneven), "--numerics"), "--numerics",
                   NULL);
    expect_refused(RUN("replay", write_hand("uneven.json", &uneven), "--plot",
                       test_tmp_path("rp"), "--timeline-steps", "0:1"),
                   "--timeline-steps", NULL);
    /* and its --help offers none of what it refuses */
    struct run h = RUN("replay", "--help");
    cr_expect_eq(h.status, 0);
    const char *refused[] = {"--steps ", "--numerics", "--timeline-steps", "--mtbf", "--csv"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        cr_expect_null(strstr(h.out, refused[i]), "replay --help offers %s", refused[i]);
    cr_expect_not_null(strstr(h.out, "--without-stragglers"), "%s", h.out);
    run_free(&h);
    expect_refused(RUN("replay", write_hand("uneven.json", &uneven), "--strategy", "nope"),
                   "nope", NULL);

    /* a span that does not fit the plan of its scenario */
    expect_edit_refused("\"op\":3", "\"op\":9", "other-plan.json", "another plan");
    expect_edit_refused("\"pid\":1", "\"pid\":7", "pid.json", "pid");
    expect_edit_refused("\"name\":\"FORWARD\"", "\"name\":\"FORWARX\"", "kind.json", "FORWARX");
    /* more steps said than the spans reach: it replayed them from nothing */
    expect_edit_refused("\"steps\":" XSTR(HAND_STEPS) ",", "\"steps\":9,", "steps.json",
                        "spans end at step");
    /* spans the writer left out, and a header that is not its scenario's */
    expect_edit_refused("\"dropped_spans\":0", "\"dropped_spans\":1", "dropped.json",
                        "left out 1 span when");
    expect_edit_refused("\"strategy\":\"mirrored\"", "\"strategy\":\"mirrorex\"",
                        "header.json", "the trace is of mirrorex");
}

/* The uneven hand trace without the spans whose text holds both `a` and
 * `b`, written as test_tmp_dir/file; returns its path. */
static const char *hand_without(const char *a, const char *b, const char *file)
{
    char *text = test_slurp(write_hand("uneven.json", &uneven));
    char *out = calloc(strlen(text) + 1, 1);
    cr_assert_not_null(out);
    const char *from = text;
    int n_dropped = 0;
    for (const char *at; (at = strstr(from, "{\"name\":"));) {
        const char *end = strstr(at, "}}");
        cr_assert_not_null(end, "a span without its end in the hand trace");
        end += 2;
        size_t len = (size_t)(end - at);
        char *span = strndup(at, len);
        cr_assert_not_null(span);
        bool is_dropped = strstr(span, a) && strstr(span, b);
        free(span);
        /* a span after the first goes with the comma before it */
        cr_assert(!is_dropped || (at > text && at[-1] == ','), "the first span is kept");
        strncat(out, from, (size_t)(at - from) - is_dropped);
        if (!is_dropped) strncat(out, at, len);
        n_dropped += is_dropped;
        from = end;
    }
    strcat(out, from);
    cr_assert_gt(n_dropped, 0, "no span of the hand trace holds %s and %s", a, b);
    const char *path = test_tmp_file(file, out);
    free(out);
    free(text);
    return path;
}

/* A span missing or repeated: the writer writes each op of each step once.
 * The replay took the later of two spans, and gave a missing op (even a
 * synchronous worker's whole steps) the run's mean rate with a note about
 * asynchronous workers: a mirrored trace with a backward deleted replayed
 * at exit 0, and one with half of rank 1's steps cut at -31.8%. */
Test(replay, a_span_missing_or_repeated_is_refused)
{
    expect_refused(RUN("replay", hand_without("\"name\":\"BACKWARD\"", "\"pid\":1,", "gap.json")),
                   "gap.json: rank 1 has no span of op 1 (BACKWARD of layers [0,2)) in step 0",
                   "cut short or edited");
    expect_refused(RUN("replay", hand_without("\"pid\":1,", "\"step\":1,", "short.json")),
                   "short.json: rank 1's spans cover 1 of the run's 2 steps",
                   "mirrored's workers each run every step");
    /* rank 0's step-1 backward said to be of step 0: two spans of one op */
    expect_edit_refused("\"step\":1,\"op\":1", "\"step\":0,\"op\":1", "twice.json",
                        "(rank 0, step 0, op 1, BACKWARD): a run writes each op of a step once");
}

/* A scenario no plan can be built from is the trace's fault, not an
 * option's: the messages named neither the file nor the scenario, and
 * read as if --model or --devices had been given. */
Test(replay, a_scenario_that_builds_no_plan_names_the_trace)
{
    expect_edit_refused("\"model\":\"mlp:784-32-10\"", "\"model\":\"mlp:784-32-1x\"",
                        "model.json", "model.json: \"scenario.model\": 'mlp:784-32-1x'");
    expect_edit_refused("\"batch\":256,", "\"batch\":1,  ", "batch.json",
                        "batch.json: its \"scenario\" (the options of the traced run): ");
}

/* A what-if whose strategy or scale does not fit the trace's model: the
 * message named --devices and --model, which replay does not take
 * ("model: --devices 4 exceeds the model's 2 layers ... (use a deeper
 * --model)"); now the options asked, and the trace's model and devices. */
Test(replay, a_whatif_that_does_not_fit_names_its_options_and_the_trace)
{
    const char *trace = write_hand("uneven.json", &uneven);
    expect_refused(RUN("replay", trace, "--strategy", "model", "--scale", "4"),
                   "--strategy model with --scale 4: the what-if (as model, at 4 devices "
                   "(batch 512)) builds no plan of the trace's model mlp:784-32-10, batch 512 on "
                   "4 devices", "--scale N sets the devices");
}

/* Past REPLAY_MAX_SHARE_RANKS workers --without-stragglers replays no
 * rank's share: the straggler cost column and lines were left out without
 * a word, as if no rank had cost anything. */
Test(replay, straggler_costs_not_replayed_are_said_to_be_missing)
{
    const char *trace = test_tmp_path("wide-trace.json");
    struct run r = RUN("sim", "--strategy", "mirrored", "--devices", "257", "--batch", "2570",
                       "--model", "mlp:784-32-10", "--steps", "2", "--straggler", "slow:5=3",
                       "--trace", trace);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    expect_ok_saying(RUN("replay", trace, "--without-stragglers"),
                     "no straggler cost per rank: each takes a replay of the whole run, done for "
                     "up to 256 workers, and this run has 257", true);
    expect_ok_saying(RUN("replay", write_hand("uneven.json", &uneven), "--without-stragglers"),
                     "no straggler cost per rank", false);
}

/* The hand trace with the first value of `key` ("\"ts\":") replaced by
 * `value`, written as test_tmp_dir/file; returns its path. */
static const char *hand_with(const char *key, const char *value, const char *file)
{
    char *text = test_slurp(write_hand("uneven.json", &uneven));
    char *at = strstr(text, key);
    cr_assert(at, "no %s in the hand trace", key);
    at += strlen(key);
    size_t old_len = strcspn(at, ",}");
    size_t head = (size_t)(at - text), tail_len = strlen(at + old_len);
    char *edited = malloc(head + strlen(value) + tail_len + 1);
    cr_assert_not_null(edited);
    memcpy(edited, text, head);
    strcpy(edited + head, value);
    strcat(edited + head, at + old_len);
    const char *path = test_tmp_file(file, edited);
    free(edited);
    free(text);
    return path;
}

/* A span's time past what any run strata writes reaches: refused naming
 * the event, its value and the range. ts = dur = 1e308 us ended the span at
 * inf, and the replay failed (exit 1) "without saying why". */
Test(replay, span_times_beyond_any_run_are_refused)
{
    const char *path = hand_with("\"ts\":", "1e308", "ts.json");
    char *text = test_slurp(path);
    char *dur = strstr(text, "\"dur\":");
    cr_assert_not_null(dur);
    size_t n = strcspn(dur + 6, ",}");
    char *edited = malloc(strlen(text) + 8);
    cr_assert_not_null(edited);
    snprintf(edited, strlen(text) + 8, "%.*s1e308%s", (int)(dur + 6 - text), text,
             dur + 6 + n);
    expect_refused(RUN("replay", test_tmp_file("ts-dur.json", edited)), "ts-dur.json",
                   "\"traceEvents[0].ts\" is 1e+308, not a time of 0 to 1e300 microseconds");
    free(edited);
    free(text);
    expect_refused(RUN("replay", hand_with("\"dur\":", "2e300", "dur.json")), "dur.json",
                   ".dur\" is 2e+300, not a time of 0 to 1e300 microseconds");
}

/* An asynchronous job on another network shares its steps out otherwise:
 * a worker runs a step the trace did not measure. Its ops take the run's
 * measured rates (and say so), not the cluster's model, whose ideal
 * "seconds" are units: the what-if read +211280%. */
Test(replay, a_step_the_trace_lacks_takes_the_measured_rates)
{
    const char *trace = test_tmp_path("async-trace.json");
    struct run r = RUN("sim", "--strategy", "ps-async", "--devices", "4", "--model",
                       "mlp:784-32-10", "--straggler", "exp:0.5", "--steps", "8", "--cluster",
                       "cpu-loopback", "--trace", trace);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    expect_ok_saying(RUN("replay", trace, "--cluster", "ideal"),
                     "note: the what-if ran 2 compute ops of steps the trace does not hold", true);
    cJSON *j = REPLAY(trace, "--cluster", "ideal");
    double change = num_at(j, "whatif", "change");
    cr_expect(change < 0 && change > -0.9, "no network, measured compute: %g", change);
    cJSON_Delete(j);
}

/* --- real runs (2 MPI ranks on a machine other work shares) -----------------
 * The tolerances are wide: on this loaded 2-core machine a real step's
 * communication is mostly waiting for the CPU, which no network model
 * holds (docs/replay.md's benchmark gives the figure on a quiet machine). A
 * replay that ignored the trace (the cost model's compute) or made nothing
 * typical would still fail them. */
#define REAL_TOLERANCE 0.6

static const char *real_trace(const char *file, const char *straggler, const char *json)
{
    const char *trace = test_tmp_path(file);
    struct run r = RUN("real", "--strategy", "mirrored", "--np", "2", "--devices", "2",
                       "--steps", "5", "--data", "synthetic", "--model", "mlp:784-16-10",
                       "--batch", "8192", "--straggler", straggler, "--trace", trace, "--json",
                       json);
    cr_assert_eq(r.status, 0, "strata real: %s", r.err);
    run_free(&r);
    return trace;
}

Test(replay, real_run_is_reproduced)
{
    const char *trace = real_trace("real.json", "none", test_tmp_path("real-report.json"));
    cJSON *j = REPLAY(trace);
    double err = num_at(j, "error", NULL);
    cr_log_info("real mirrored np 2: measured %.4g s, replayed %.4g s, error %+.1f%%",
                num_at(j, "measured_step_s", NULL), num_at(j, "replayed_step_s", NULL),
                100 * err);
    cr_expect(fabs(err) <= REAL_TOLERANCE, "replay error %+.1f%%", 100 * err);
    cJSON_Delete(j);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define STRAGGLER_PAIRS 3

Test(replay, real_run_without_its_straggler_is_predicted)
{
    /* Two identical real runs here can differ 3x in step time as the other
     * work on the machine comes and goes, so runs with and without the
     * straggler alternate, STRAGGLER_PAIRS of each, and their medians are
     * compared: the what-if of the runs with it against the runs measured
     * without it, and against those runs' own replays (which share the
     * network model's error). */
    double pred_s[STRAGGLER_PAIRS], ref_s[STRAGGLER_PAIRS], ref_replayed_s[STRAGGLER_PAIRS];
    for (int i = 0; i < STRAGGLER_PAIRS; i++) {
        const char *ref_json = test_tmp_path("ref.json");
        const char *ref_trace = real_trace("ref-trace.json", "none", ref_json);
        cJSON *ref = read_json(ref_json);
        ref_s[i] = num_at(ref, "step_time_s", "mean");
        cJSON_Delete(ref);
        cJSON *ref_replay = REPLAY(ref_trace);
        ref_replayed_s[i] = num_at(ref_replay, "replayed_step_s", NULL);
        cJSON_Delete(ref_replay);

        const char *slow = real_trace("slow.json", "slow:1=3", test_tmp_path("slow-report.json"));
        cJSON *j = REPLAY(slow, "--without-stragglers");
        pred_s[i] = num_at(j, "whatif", "step_s");
        double measured_slow_s = num_at(j, "measured_step_s", NULL);
        cr_log_info("pair %d: slow:1=3 measured %.4g s, predicted without it %.4g s; the run "
                    "without it measured %.4g s, replayed %.4g s", i, measured_slow_s, pred_s[i],
                    ref_s[i], ref_replayed_s[i]);
        cr_expect(pred_s[i] < measured_slow_s * 0.8, "the straggler's cost should be gone: "
                  "%.4g s of %.4g s", pred_s[i], measured_slow_s);
        const cJSON *ranks = cJSON_GetObjectItem(j, "per_rank");
        cr_expect(num_at(cJSON_GetArrayItem(ranks, 1), "straggler_share", NULL) >
                      num_at(cJSON_GetArrayItem(ranks, 0), "straggler_share", NULL) + 0.1,
                  "rank 1, 3x slower, should cost the job more than rank 0");
        cJSON_Delete(j);
    }
    qsort(pred_s, STRAGGLER_PAIRS, sizeof *pred_s, by_double);
    qsort(ref_s, STRAGGLER_PAIRS, sizeof *ref_s, by_double);
    qsort(ref_replayed_s, STRAGGLER_PAIRS, sizeof *ref_replayed_s, by_double);
    double pred = pred_s[STRAGGLER_PAIRS / 2], ref = ref_s[STRAGGLER_PAIRS / 2],
           ref_replayed = ref_replayed_s[STRAGGLER_PAIRS / 2];
    cr_log_info("medians: predicted without the straggler %.4g s; measured without it %.4g s "
                "(%+.1f%%), replayed without it %.4g s (%+.1f%%)", pred, ref,
                100 * (pred / ref - 1), ref_replayed, 100 * (pred / ref_replayed - 1));
    cr_expect(fabs(pred / ref - 1) <= REAL_TOLERANCE,
              "predicted %.4g s without the straggler, measured %.4g s", pred, ref);
    cr_expect(fabs(pred / ref_replayed - 1) <= REAL_TOLERANCE,
              "predicted %.4g s without the straggler, the run without it replays to %.4g s",
              pred, ref_replayed);
}

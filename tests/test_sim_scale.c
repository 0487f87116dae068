/* tests for the simulator's per-event structures that keep it linear in
 * the ranks: core/min_clock.c (ssp's slowest worker in O(1)), the policy
 * bound built on it (core/ps_policy.c), and sim/held_pulls.c. Each is held
 * against the brute force it replaced, on seeded random operations. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "helpers.h"

#include "../core/min_clock.h"
#include "../core/ps_policy.h"
#include "../sim/held_pulls.h"

/* A small deterministic generator (xorshift64), so the tests need no GSL. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int64_t brute_min(const int64_t *v, const bool *is_gone, int n)
{
    int64_t m = INT64_MAX;
    for (int i = 0; i < n; i++)
        if (!is_gone[i] && v[i] < m) m = v[i];
    return m;
}

Test(min_clock, agrees_with_a_scan_under_random_ticks_and_removals)
{
    /* Where the expected value comes from: a scan of the clocks, the
     * O(n) loop ps_server_pull_ready used to run. */
    for (int n = 1; n <= 33; n += 4) {
        struct min_clock c;
        cr_assert_eq(min_clock_init(&c, n, NULL), 0);
        int64_t v[33] = {0};
        bool is_gone[33] = {false};
        uint64_t seed = 0x9E3779B97F4A7C15ull + (uint64_t)n;
        for (int k = 0; k < 5000; k++) {
            int i = (int)(next_rand(&seed) % (uint64_t)n);
            uint64_t what = next_rand(&seed) % 100;
            if (what < 2) {
                min_clock_remove(&c, i);
                is_gone[i] = true;
            } else if (what < 3) {
                int64_t to = (int64_t)(next_rand(&seed) % 50);
                min_clock_reset(&c, to);
                for (int j = 0; j < n; j++) {
                    v[j] = to;
                    is_gone[j] = false;
                }
            } else if (!is_gone[i]) {
                /* the slow ones tick more often, so values bunch and spread */
                min_clock_tick(&c, i);
                v[i]++;
            }
            cr_assert_eq(min_clock_min(&c), brute_min(v, is_gone, n),
                         "n %d, operation %d: %lld, a scan says %lld", n, k,
                         (long long)min_clock_min(&c), (long long)brute_min(v, is_gone, n));
        }
        min_clock_release(&c);
    }
}

Test(min_clock, none_live_reads_int64_max)
{
    struct min_clock c;
    cr_assert_eq(min_clock_init(&c, 2, NULL), 0);
    min_clock_tick(&c, 1);
    min_clock_remove(&c, 0);
    cr_assert_eq(min_clock_min(&c), 1);
    min_clock_remove(&c, 1);
    min_clock_remove(&c, 1);   /* twice: a no-op */
    cr_assert_eq(c.n_live, 0);
    cr_assert_eq(min_clock_min(&c), INT64_MAX);
    min_clock_release(&c);
    cr_assert_eq(min_clock_init(&c, 0, NULL), 0);
    cr_assert_eq(min_clock_min(&c), INT64_MAX);
    min_clock_release(&c);
}

/* ssp:K's bound, by the definition in ps_policy.h: a pull that ends step s
 * is ready when every live worker has pushed step s - K. */
static bool ssp_ready_by_definition(const struct ps_server *s, int64_t step)
{
    for (int v = 0; v < s->n_workers; v++)
        if (!s->is_retired[v] && s->pushed[v] < step - s->arg + 1) return false;
    return true;
}

Test(ps_policy_scale, ssp_bound_matches_the_definition_with_many_workers)
{
    enum { N = 200 };
    for (int K = 0; K <= 3; K++) {
        struct ps_server s;
        cr_assert_eq(ps_server_init(&s, POLICY_SSP, K, N, NULL), 0);
        uint64_t seed = 12345 + (uint64_t)K;
        for (int k = 0; k < 20000; k++) {
            int w = (int)(next_rand(&seed) % N);
            if (next_rand(&seed) % 1000 == 0) {
                ps_server_retire(&s, w);
            } else if (!s.is_retired[w] && ps_server_pull_ready(&s, w, s.pushed[w] - 1)) {
                /* the protocol: w pushes its next step only once its last
                 * pull was answered */
                ps_server_push(&s, w, s.pushed[w], 0);
            }
            int64_t step = (int64_t)(next_rand(&seed) % 40);
            cr_assert_eq(ps_server_pull_ready(&s, w, step), ssp_ready_by_definition(&s, step),
                         "K %d, operation %d, step %lld", K, k, (long long)step);
        }
        ps_server_rewind(&s, 7, 3);
        cr_assert_eq(s.n_live, N);
        cr_assert(ps_server_pull_ready(&s, 0, 2 + K));
        cr_assert(!ps_server_pull_ready(&s, 0, 3 + K));
        ps_server_release(&s);
    }
}

Test(held_pulls, frees_below_the_bound_in_holding_order)
{
    struct held_pulls h = {0};
    /* rounds 5, 3, 4, 3, 5, 4 held in that order as pulls 0 .. 5 */
    const int64_t rounds[] = {5, 3, 4, 3, 5, 4};
    for (int g = 0; g < 6; g++) cr_assert_eq(held_pulls_add(&h, rounds[g], g), 0);
    const struct held_pull *out;
    cr_assert_eq(held_pulls_free_below(&h, 3, &out), 0);
    size_t n = held_pulls_free_below(&h, 4, &out);   /* round 3: pulls 1 and 3 */
    cr_assert_eq(n, 2);
    cr_assert_eq(out[0].g, 1);
    cr_assert_eq(out[1].g, 3);
    n = held_pulls_free_below(&h, 100, &out);   /* rounds 4 and 5 at once: holding order */
    cr_assert_eq(n, 4);
    const int expect[] = {0, 2, 4, 5};
    for (size_t k = 0; k < n; k++) cr_assert_eq(out[k].g, expect[k], "freed %zu", k);
    cr_assert_eq(held_pulls_free_below(&h, INT64_MAX, &out), 0);
    held_pulls_release(&h);
}

Test(held_pulls, agrees_with_a_scan_of_an_arrival_list)
{
    /* the list and pass simulate.c kept before: answer, in list order,
     * every pull whose round is below the bound */
    enum { N = 3000 };
    struct held_pulls h = {0};
    int64_t list_round[N];
    int list_g[N], list_len = 0, g = 0;
    int64_t bound = 0;
    uint64_t seed = 77;
    while (g < N) {
        if (next_rand(&seed) % 3) {
            int64_t round = bound + (int64_t)(next_rand(&seed) % 6);
            cr_assert_eq(held_pulls_add(&h, round, g), 0);
            list_round[list_len] = round;
            list_g[list_len++] = g++;
        } else {
            bound += next_rand(&seed) % 4 == 0 ? 3 : 1;
            const struct held_pull *out;
            size_t n = held_pulls_free_below(&h, bound, &out);
            int keep = 0;
            size_t k = 0;
            for (int i = 0; i < list_len; i++) {
                if (list_round[i] < bound) {
                    cr_assert(k < n);
                    cr_assert_eq(out[k].g, list_g[i]);
                    k++;
                } else {
                    list_round[keep] = list_round[i];
                    list_g[keep++] = list_g[i];
                }
            }
            cr_assert_eq(k, n);
            list_len = keep;
        }
    }
    held_pulls_release(&h);
}

/* ---- the simulator's work per event does not grow with the ranks ---- */

#include "../bench/run.h"

struct work_per_event {
    double scanned, heap_moves;
    uint64_t n_events;
};

static struct work_per_event work_of(const char *strategy, const char *model, int devices,
                                     int batch, int microbatches, int steps,
                                     const char *straggler, int staleness)
{
    struct err e = {0};
    struct config cfg;
    config_init(&cfg);
    snprintf(cfg.model, sizeof cfg.model, "%s", model);
    snprintf(cfg.straggler, sizeof cfg.straggler, "%s", straggler);
    cfg.devices = devices;
    cfg.batch = batch;
    cfg.microbatches = microbatches;
    cfg.steps = steps;
    cfg.staleness = staleness;
    const struct strategy *st = test_strategy(strategy);
    struct workload *wl = test_workload(cfg.model);
    struct sim_run run;
    cr_assert_eq(run_simulate(&cfg, st, wl, 0, NULL, &run, &e), 0, "%s", e.msg);
    const struct sim_result *r = &run.result;
    struct work_per_event w = {(double)r->n_scanned / (double)r->n_events,
                               (double)r->n_heap_moves / (double)r->n_events, r->n_events};
    run_release(&run);
    workload_free(wl);
    return w;
}

#define STAGES_MODEL "transformer:layers=1600,hidden=64,seq=16,vocab=100"

struct scale_case {
    const char *strategy, *model;
    int small, large;          /* devices (stages) */
    int batch_per_device;      /* 0: 8 samples a microbatch */
    int microbatches, steps;
    const char *straggler;
    int staleness;             /* ps-ssp's K */
};

/* 1k to 16k devices; model and pipelines 100 to 1,600 stages (a layer per
 * stage, and a workload has at most 2,047 layers). Stragglers make the
 * ranks drift apart, so the queues fill and the servers hold pulls. */
static const struct scale_case scale_cases[] = {
    {"mirrored", "fmnist-small", 1024, 16384, 4, 1, 3, "none", 0},
    {"mirrored", "fmnist-small", 1024, 16384, 4, 1, 3, "exp:0.5", 0},
    {"ps-sync", "fmnist-small", 1024, 16384, 4, 1, 3, "exp:0.5", 0},
    {"ps-async", "fmnist-small", 1024, 16384, 4, 1, 3, "exp:0.5", 0},
    {"ps-ssp", "fmnist-small", 1024, 16384, 4, 1, 4, "exp:0.5", 1},
    {"ps-ssp", "fmnist-small", 1024, 16384, 4, 1, 4, "exp:0.5", 0},
    {"ps-ssp", "gpt2-small", 1024, 16384, 32, 1, 3, "none", 4},
    {"model", STAGES_MODEL, 100, 1600, 0, 1, 4, "exp:0.5", 0},
    {"pipeline-gpipe", STAGES_MODEL, 100, 1600, 0, 8, 2, "exp:0.5", 0},
    {"pipeline-1f1b", STAGES_MODEL, 100, 1600, 0, 8, 2, "none", 0},
};

/* The counters (struct sim_result) are exact, so this cannot flake. Loops
 * over ranks, ops, collective members and held pulls must cost the same per
 * event at 16x the ranks (within 10%: the edges of a run weigh a little
 * differently). Heap sifts are O(log q) per event by nature, q the events
 * pending (which grow with the ranks once stragglers spread them): they may
 * grow as log2 of the ranks, 10 -> 14 from 1k to 16k, and no faster. */
Test(sim_scale, work_per_event_does_not_grow_with_the_ranks, .timeout = 120)
{
    for (size_t i = 0; i < sizeof scale_cases / sizeof scale_cases[0]; i++) {
        const struct scale_case *c = &scale_cases[i];
        struct work_per_event w[2];
        for (int k = 0; k < 2; k++) {
            int n = k ? c->large : c->small;
            int batch = c->batch_per_device ? c->batch_per_device * n : 8 * c->microbatches;
            w[k] = work_of(c->strategy, c->model, n, batch, c->microbatches, c->steps,
                           c->straggler, c->staleness);
        }
        cr_log_info("%-15s %-8s K=%d: scanned/event %.3f -> %.3f, heap moves/event %.3f -> "
                    "%.3f (%llu -> %llu events)", c->strategy, c->straggler, c->staleness,
                    w[0].scanned, w[1].scanned, w[0].heap_moves, w[1].heap_moves,
                    (unsigned long long)w[0].n_events, (unsigned long long)w[1].n_events);
        cr_expect_leq(w[1].scanned, 1.1 * w[0].scanned + 0.01,
                      "%s, %s: %.3f items scanned per event at %d ranks, %.3f at %d",
                      c->strategy, c->straggler, w[1].scanned, c->large, w[0].scanned, c->small);
        double log_growth = log2((double)c->large) / log2((double)c->small);
        cr_expect_leq(w[1].heap_moves, 1.1 * log_growth * w[0].heap_moves + 0.1,
                      "%s, %s: %.3f heap moves per event at %d ranks, %.3f at %d (log2 "
                      "growth allows %.2fx)", c->strategy, c->straggler, w[1].heap_moves,
                      c->large, w[0].heap_moves, c->small, log_growth);
    }
}

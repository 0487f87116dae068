/* tests for sim/network.c: shared links by processor sharing. Expected times
 * are closed forms worked by hand (in each test's comment), a direct fluid
 * simulation of processor sharing, or work conservation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "helpers.h"
#include <criterion/logging.h>

#include "../sim/network.h"

enum { K_NET = 3, K_START = 4 };   /* des kinds of this test's little simulator */

struct start {
    double t_s;
    int link;
    int64_t bytes;
};

struct arrivals {
    double *arrive_s;     /* by cookie (the start's index); NAN until it arrives */
    int64_t *order;       /* cookies in arrival order */
    int n_arrived;
    uint64_t n_events;
    int n_stale_or_internal;
};

/* cr_assert only when the check fails: Criterion counts every assertion that
 * passes, which would dominate the time of a loop of a few million events. */
#define CHECK(cond, ...) do { if (!(cond)) cr_assert(cond, __VA_ARGS__); } while (0)

/* A simulator with two kinds of events: K_START starts starts[b] (cookie b),
 * K_NET goes to the network. Runs until the queue is empty. With chain > 0,
 * starts are in `chain` runs of equal length, each sorted by time, and only
 * the first of each run is queued up front; starting one queues the next, so
 * the queue holds what a simulator's would, not every start at once. */
static struct arrivals run_chained(struct network *net, const struct start *starts, int n, int chain)
{
    struct arrivals r = { .arrive_s = malloc((size_t)n * sizeof(double)),
                     .order = malloc((size_t)n * sizeof(int64_t)) };
    cr_assert(r.arrive_s && r.order);
    for (int i = 0; i < n; i++) r.arrive_s[i] = NAN;
    struct des q;
    des_init(&q);
    int run_len = chain > 0 ? n / chain : 1;
    for (int i = 0; i < n; i += run_len) cr_assert_eq(des_push(&q, starts[i].t_s, K_START, 0, i), 0);
    struct des_event ev;
    double t_prev = -INFINITY;
    while (des_pop(&q, &ev)) {
        r.n_events++;
        CHECK(ev.time_s >= t_prev, "time ran backwards: %.17g after %.17g", ev.time_s, t_prev);
        t_prev = ev.time_s;
        if (ev.kind == K_START) {
            const struct start *s = &starts[ev.b];
            int rc = network_start(net, &q, ev.time_s, s->link, s->bytes, ev.b);
            CHECK(rc == 0, "network_start: %d", rc);
            if ((ev.b + 1) % run_len != 0)
                CHECK(des_push(&q, starts[ev.b + 1].t_s, K_START, 0, ev.b + 1) == 0, "des_push");
            continue;
        }
        CHECK(ev.kind == K_NET, "kind %d", (int)ev.kind);
        int64_t cookie = -1;
        int rc = network_on_event(net, &q, &ev, &cookie);
        CHECK(rc == 0 || rc == 1, "network_on_event: %d", rc);
        if (rc == 0) {
            r.n_stale_or_internal++;
            continue;
        }
        CHECK(cookie >= 0 && cookie < n, "cookie %lld was never started", (long long)cookie);
        CHECK(isnan(r.arrive_s[cookie]), "cookie %lld arrived twice", (long long)cookie);
        r.arrive_s[cookie] = ev.time_s;
        r.order[r.n_arrived++] = cookie;
    }
    des_release(&q);
    cr_assert_eq(r.n_arrived, n, "%d of %d transfers arrived", r.n_arrived, n);
    return r;
}

static struct arrivals run_starts(struct network *net, const struct start *starts, int n)
{
    return run_chained(net, starts, n, 0);
}

static void arrivals_free(struct arrivals *r)
{
    free(r->arrive_s);
    free(r->order);
}

static struct network *make_net(int n_links, double bw, double latency_s)
{
    struct err e = {0};
    struct network *net = network_create(n_links, K_NET, &e);
    cr_assert_not_null(net, "network_create: %s", e.msg);
    for (int i = 0; i < n_links; i++) network_set_link(net, i, bw, latency_s);
    return net;
}

/* |got - want| <= rel * |want|, reporting the margin. */
static void expect_rel(double got, double want, double rel, const char *what)
{
    double d = fabs(got - want);
    cr_assert(d <= rel * fabs(want), "%s: got %.17g, want %.17g (relative error %.3g > %.0e)",
              what, got, want, d / fabs(want), rel);
}

Test(network, one_transfer_arrives_at_bytes_over_bw_plus_latency)
{
    /* Alone on the link: n / bw on the wire, then alpha. */
    const double bw = 1.25e9, alpha = 5e-6;
    const int64_t n = 1000000;
    struct network *net = make_net(1, bw, alpha);
    struct start s[] = { { 0.0, 0, n } };
    struct arrivals r = run_starts(net, s, 1);
    cr_assert_eq(r.arrive_s[0], (double)n / bw + alpha, "got %.17g, want %.17g", r.arrive_s[0],
                 (double)n / bw + alpha);
    cr_assert_eq(network_active(net, 0), 0);
    arrivals_free(&r);
    network_free(net);
}

Test(network, two_equal_transfers_started_together_share_the_link)
{
    /* Each gets bw / 2, so both need 2n / bw; the second started is handed
     * back second. */
    const double bw = 1e9, alpha = 2e-6;
    const int64_t n = 3000000;
    struct network *net = make_net(1, bw, alpha);
    struct start s[] = { { 0.5, 0, n }, { 0.5, 0, n } };
    struct arrivals r = run_starts(net, s, 2);
    double want = 0.5 + 2.0 * (double)n / bw + alpha;
    expect_rel(r.arrive_s[0], want, 1e-12, "first");
    expect_rel(r.arrive_s[1], want, 1e-12, "second");
    cr_assert_eq(r.arrive_s[0], r.arrive_s[1], "they finish in the same instant");
    cr_assert_eq(r.order[0], 0);
    cr_assert_eq(r.order[1], 1);
    arrivals_free(&r);
    network_free(net);
}

Test(network, second_transfer_starting_halfway_matches_closed_form)
{
    /* A (n bytes) starts at 0; B (n bytes) at t1 = n / (2 bw), when A has
     * n/2 left. Both then move at bw/2: A's n/2 takes n/bw, so
     *     A leaves at t1 + n/bw = 3n / (2 bw),
     * when B has received n/2 too; B's last n/2 goes alone at bw:
     *     B leaves at 3n/(2bw) + n/(2bw) = 2n / bw
     * (2n bytes in all at bw: the link never idles). Both plus alpha. A's
     * first event, timed for n/bw before B came, pops as stale. */
    const double bw = 1e10, alpha = 1e-6;
    const int64_t n = 8000000;
    struct network *net = make_net(1, bw, alpha);
    struct start s[] = { { 0.0, 0, n }, { (double)n / (2 * bw), 0, n } };
    struct arrivals r = run_starts(net, s, 2);
    expect_rel(r.arrive_s[0], 3.0 * (double)n / (2 * bw) + alpha, 1e-12, "A");
    expect_rel(r.arrive_s[1], 2.0 * (double)n / bw + alpha, 1e-12, "B");
    /* Events: 2 starts, 2 arrivals, A's finish, B's finish, 1 stale. */
    cr_assert_eq(r.n_events, 7);
    cr_assert_eq(r.n_stale_or_internal, 3);
    arrivals_free(&r);
    network_free(net);
}

Test(network, three_staggered_transfers_match_closed_form)
{
    /* bw = 1 GB/s, no latency. A 3 GB at 0, B 1 GB at 1 s, C 1 GB at 1.5 s.
     *   [0, 1): A alone, moves 1 GB (2 GB left).
     *   [1, 1.5): A and B at 0.5 GB/s: 0.25 GB each (A 1.75, B 0.75 left).
     *   from 1.5: three at 1/3 GB/s. B's 0.75 GB takes 2.25 s: B at 3.75,
     *     when C has 0.25 GB left and A 1.0 GB.
     *   from 3.75: two at 0.5 GB/s; C's 0.25 takes 0.5 s: C at 4.25,
     *     A has 0.75 left, alone: A at 5.0 (5 GB at 1 GB/s: never idle). */
    const double bw = 1e9;
    struct network *net = make_net(1, bw, 0.0);
    struct start s[] = { { 0.0, 0, 3000000000 }, { 1.0, 0, 1000000000 }, { 1.5, 0, 1000000000 } };
    struct arrivals r = run_starts(net, s, 3);
    expect_rel(r.arrive_s[0], 5.0, 1e-12, "A");
    expect_rel(r.arrive_s[1], 3.75, 1e-12, "B");
    expect_rel(r.arrive_s[2], 4.25, 1e-12, "C");
    cr_assert(r.order[0] == 1 && r.order[1] == 2 && r.order[2] == 0);
    arrivals_free(&r);
    network_free(net);
}

Test(network, n_transfers_through_one_link_all_finish_at_n_times_bytes_over_bw)
{
    /* The parameter server's NIC: N workers push n bytes at once; each gets
     * bw / N, so all arrive at N n / bw, handed back in start order. */
    enum { N = 64 };
    const double bw = 1.25e10, alpha = 3e-6;
    const int64_t n = 25000000;
    struct network *net = make_net(1, bw, alpha);
    struct start s[N];
    for (int i = 0; i < N; i++) s[i] = (struct start){ 2.0, 0, n };
    struct arrivals r = run_starts(net, s, N);
    double want = 2.0 + N * (double)n / bw + alpha, worst = 0;
    for (int i = 0; i < N; i++) {
        expect_rel(r.arrive_s[i], want, 1e-12, "a worker's push");
        worst = fmax(worst, fabs(r.arrive_s[i] - want) / want);
        cr_assert_eq(r.order[i], i, "arrival %d is cookie %lld", i, (long long)r.order[i]);
    }
    cr_log_info("N=%d on one link: largest relative error %.3g (bound 1e-12)", N, worst);
    arrivals_free(&r);
    network_free(net);
}

Test(network, transfers_finishing_together_to_rounding_leave_together_in_start_order)
{
    /* K transfers start at 0, dt, ..., dt (K-1) with sizes chosen so that
     * all finish at one instant: while j+1 share the link for dt, each gets
     * dt bw / (j+1) bytes, an integer here since dt bw = 4.2e9 = 840 * 5e6
     * and 840 = lcm(1..8). Transfer i gets those of intervals j = i .. K-2 and
     * then D bytes while all K share:
     *     T = dt (K - 1) + K D / bw.
     * In doubles (0.7 is not exact) the virtual finishing points come out a
     * few ulps apart: without network.c's tolerance transfers 3 to 7 leave
     * first, 9e-16 s before 0 to 2. They must leave together, handed back in
     * start order. */
    enum { K = 8 };
    const double dt = 0.7, bw = 6e9;
    const int64_t D = 1000003, per_interval = 4200000000;
    struct network *net = make_net(1, bw, 0.0);
    struct start s[K];
    for (int i = 0; i < K; i++) {
        int64_t bytes = D;
        for (int j = i; j <= K - 2; j++) bytes += per_interval / (j + 1);
        s[i] = (struct start){ dt * i, 0, bytes };
    }
    struct arrivals r = run_starts(net, s, K);
    double want = dt * (K - 1) + K * (double)D / bw;
    for (int i = 0; i < K; i++) {
        expect_rel(r.arrive_s[i], want, 1e-12, "finish");
        cr_assert_eq(r.arrive_s[i], r.arrive_s[0], "transfer %d left at %.17g, transfer 0 at %.17g",
                     i, r.arrive_s[i], r.arrive_s[0]);
        cr_assert_eq(r.order[i], i, "arrival %d is cookie %lld", i, (long long)r.order[i]);
    }
    arrivals_free(&r);
    network_free(net);
}

Test(network, transfers_on_different_links_do_not_interact)
{
    /* Same start, different links: each arrives as if alone (n / bw_l +
     * alpha_l); link 1 carries two, which share only with each other. */
    const int64_t n = 4000000;
    struct err e = {0};
    struct network *net = network_create(3, K_NET, &e);
    cr_assert_not_null(net);
    network_set_link(net, 0, 1e9, 1e-6);
    network_set_link(net, 1, 2e9, 2e-6);
    network_set_link(net, 2, 4e9, 0.0);
    struct start s[] = { { 0.0, 0, n }, { 0.0, 1, n }, { 0.0, 2, n }, { 0.0, 1, n } };
    struct arrivals r = run_starts(net, s, 4);
    expect_rel(r.arrive_s[0], (double)n / 1e9 + 1e-6, 1e-12, "link 0");
    expect_rel(r.arrive_s[1], 2.0 * (double)n / 2e9 + 2e-6, 1e-12, "link 1, first");
    expect_rel(r.arrive_s[3], 2.0 * (double)n / 2e9 + 2e-6, 1e-12, "link 1, second");
    expect_rel(r.arrive_s[2], (double)n / 4e9, 1e-12, "link 2");
    for (int l = 0; l < 3; l++) cr_assert_eq(network_active(net, l), 0);
    arrivals_free(&r);
    network_free(net);
}

Test(network, active_counts_the_transfers_sharing_a_link)
{
    struct network *net = make_net(2, 1e9, 0.0);
    struct des q;
    des_init(&q);
    cr_assert_eq(network_start(net, &q, 0.0, 0, 1000, 1), 0);
    cr_assert_eq(network_start(net, &q, 0.0, 0, 2000, 2), 0);
    cr_assert_eq(network_start(net, &q, 0.0, 1, 0, 3), 0);   /* free: not active */
    cr_assert_eq(network_active(net, 0), 2);
    cr_assert_eq(network_active(net, 1), 0);
    cr_assert_eq(network_active(net, 7), 0, "a link out of range has nothing on it");
    des_release(&q);
    network_free(net);
}

Test(network, infinite_bandwidth_and_zero_bytes_cost_latency_only)
{
    /* Link 0 is free (INFINITY): 10^12 bytes arrive after alpha alone.
     * Link 1 is finite; a 0-byte transfer started while a big one is on it
     * arrives after alpha and does not slow the big one (n / bw + alpha). */
    const double alpha0 = 7e-6, alpha1 = 1e-5, bw1 = 1e9;
    const int64_t n = 50000000;
    struct err e = {0};
    struct network *net = network_create(2, K_NET, &e);
    cr_assert_not_null(net);
    network_set_link(net, 0, INFINITY, alpha0);
    network_set_link(net, 1, bw1, alpha1);
    struct start s[] = { { 1.0, 0, 1000000000000 }, { 0.0, 1, n }, { 0.01, 1, 0 } };
    struct arrivals r = run_starts(net, s, 3);
    cr_assert_eq(r.arrive_s[0], 1.0 + alpha0);
    cr_assert_eq(r.arrive_s[2], 0.01 + alpha1);
    expect_rel(r.arrive_s[1], (double)n / bw1 + alpha1, 1e-12, "big transfer");
    arrivals_free(&r);
    network_free(net);
}

Test(network, new_links_are_free_until_set)
{
    struct network *net = make_net(0, 0, 0);   /* 0 links: a valid, empty network */
    network_free(net);
    struct err e = {0};
    net = network_create(1, K_NET, &e);
    cr_assert_not_null(net);
    struct start s[] = { { 3.0, 0, 123456789 } };
    struct arrivals r = run_starts(net, s, 1);
    cr_assert_eq(r.arrive_s[0], 3.0);
    arrivals_free(&r);
    network_free(net);
}

Test(network, callers_bugs_are_errors_not_corruption)
{
    struct err e = {0};
    cr_assert_null(network_create(-1, K_NET, &e));
    cr_assert_eq(e.code, ERR_RUN);
    cr_assert(strstr(e.msg, "-1 links"), "message: %s", e.msg);
    network_free(NULL);

    struct network *net = network_create(3, K_NET, &e);
    cr_assert_not_null(net);
    network_set_link(net, 0, 1e9, 0.0);
    network_set_link(net, 1, 0.0, 0.0);      /* no bandwidth */
    network_set_link(net, 2, 1e9, NAN);      /* no latency */
    network_set_link(net, 3, 1e9, 0.0);      /* out of range: ignored */
    struct des q;
    des_init(&q);
    cr_assert_eq(network_start(net, &q, 0.0, 3, 10, 0), ERR_RUN, "link out of range");
    cr_assert_eq(network_start(net, &q, 0.0, -1, 10, 0), ERR_RUN, "negative link");
    cr_assert_eq(network_start(net, &q, 0.0, 0, -10, 0), ERR_RUN, "negative bytes");
    cr_assert_eq(network_start(net, &q, NAN, 0, 10, 0), ERR_RUN, "NaN time");
    cr_assert_eq(network_start(net, &q, 0.0, 1, 10, 0), ERR_RUN, "bandwidth 0");
    cr_assert_eq(network_start(net, &q, 0.0, 2, 10, 0), ERR_RUN, "NaN latency");
    cr_assert(des_empty(&q), "a rejected start pushes nothing");
    cr_assert_eq(network_start(net, &q, 1.0, 0, 10, 0), 0);
    cr_assert_eq(network_start(net, &q, 0.5, 0, 10, 1), ERR_RUN, "time before the link's last");
    cr_assert_eq(network_active(net, 0), 1);

    int64_t cookie;
    struct des_event other = { .time_s = 1.0, .kind = K_START, .a = 0, .b = 0 };
    cr_assert_eq(network_on_event(net, &q, &other, &cookie), ERR_RUN, "not the network's kind");
    struct des_event far = { .time_s = 1.0, .kind = K_NET, .a = 3, .b = 0 };
    cr_assert_eq(network_on_event(net, &q, &far, &cookie), ERR_RUN, "link out of range");
    far.a = -1 - 3;
    cr_assert_eq(network_on_event(net, &q, &far, &cookie), ERR_RUN, "arrival on no link");
    des_release(&q);
    network_free(net);
}

static int cmp_start_time(const void *pa, const void *pb)
{
    const struct start *a = pa, *b = pb;
    return (a->t_s > b->t_s) - (a->t_s < b->t_s);
}

/* Processor sharing done the direct way, O(n^2): step from one start or
 * finish to the next, taking dt bw / n_active bytes off every active
 * transfer. starts must be sorted by time; one link; no latency. */
static void ps_reference(const struct start *s, int n, double bw, double *finish_s)
{
    double *left = malloc((size_t)n * sizeof *left);
    bool *on = calloc((size_t)n, sizeof *on);
    cr_assert(left && on);
    int next = 0, n_done = 0;
    double t = 0;
    while (n_done < n) {
        int n_on = 0, i_min = -1;
        for (int i = 0; i < next; i++)
            if (on[i]) {
                n_on++;
                if (i_min < 0 || left[i] < left[i_min]) i_min = i;
            }
        double t_start = next < n ? s[next].t_s : INFINITY;
        double t_fin = n_on ? t + left[i_min] * n_on / bw : INFINITY;
        double t_new = fmin(t_start, t_fin);
        for (int i = 0; i < next; i++)
            if (on[i]) left[i] -= (t_new - t) * bw / n_on;
        t = t_new;
        if (t_fin <= t_start) {
            double l_min = left[i_min];
            for (int i = 0; i < next; i++)
                if (on[i] && left[i] <= l_min + 1e-6) {   /* ties of the reference's own rounding */
                    on[i] = false;
                    finish_s[i] = t;
                    n_done++;
                }
        } else {
            left[next] = (double)s[next].bytes;
            on[next++] = true;
        }
    }
    free(left);
    free(on);
}

Test(network, random_starts_match_a_direct_processor_sharing_simulation)
{
    /* 300 transfers of 1 B to 10 MB in bursts on one 1 GB/s link: up to
     * dozens share at a time, the link idles between bursts. */
    enum { N = 300 };
    const double bw = 1e9;
    struct start s[N];
    uint64_t seed = 2024;
    for (int i = 0; i < N; i++) {
        double burst = (double)(i / 30) * 0.2;
        s[i] = (struct start){ burst + 0.02 * test_rng_uniform(&seed), 0,
                               1 + (int64_t)(test_rng_next(&seed) % 10000000) };
    }
    qsort(s, N, sizeof *s, cmp_start_time);
    double want[N];
    ps_reference(s, N, bw, want);

    struct network *net = make_net(1, bw, 0.0);
    struct arrivals r = run_starts(net, s, N);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double rel = fabs(r.arrive_s[i] - want[i]) / want[i];
        worst = fmax(worst, rel);
        cr_assert(rel <= 1e-9, "transfer %d: got %.17g, reference %.17g", i, r.arrive_s[i], want[i]);
    }
    cr_log_info("random PS vs direct simulation, %d transfers: largest relative difference %.3g "
                "(bound 1e-9)", N, worst);
    arrivals_free(&r);
    network_free(net);
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

Test(network, a_million_transfers_through_a_thousand_links, .timeout = 120)
{
    /* 1000 transfers per link at random times in [0, 1 s), 1 B to 1 MB, on
     * 1 GB/s links (about half loaded, so transfers overlap). Checks: each
     * arrives once; none beats bytes / bw + alpha (alone on the link); and,
     * since processor sharing never idles a link with work on it, each
     * link's last arrival is when FIFO service of the same starts would end
     * (work conservation). Speed is logged, not asserted. */
    enum { LINKS = 1000, PER_LINK = 1000, N = LINKS * PER_LINK };
    const double bw = 1e9, alpha = 1e-6;
    struct start *s = malloc(N * sizeof *s);
    cr_assert_not_null(s);
    uint64_t seed = 99;
    for (int l = 0; l < LINKS; l++) {
        struct start *run = s + (size_t)l * PER_LINK;
        for (int k = 0; k < PER_LINK; k++)
            run[k] = (struct start){ test_rng_uniform(&seed), l, 1 + (int64_t)(test_rng_next(&seed) % 1000000) };
        qsort(run, PER_LINK, sizeof *run, cmp_start_time);
    }

    struct network *net = make_net(LINKS, bw, alpha);
    double t0 = wall_s();
    struct arrivals r = run_chained(net, s, N, LINKS);
    double dt = wall_s() - t0;
    cr_log_info("%d transfers through %d links: %llu events in %.3f s, %.2f million events/s "
                "(starts, finishes, stale, arrivals)",
                N, LINKS, (unsigned long long)r.n_events, dt, (double)r.n_events / dt / 1e6);

    double worst = 0;
    for (int l = 0; l < LINKS; l++) {
        /* FIFO over the same starts: when the link's work runs out. */
        double busy_until = 0, last = 0;
        for (int k = 0; k < PER_LINK; k++) {
            int i = l * PER_LINK + k;
            double alone = s[i].t_s + (double)s[i].bytes / bw + alpha;
            CHECK(r.arrive_s[i] >= alone * (1 - 1e-12),
                      "transfer %d beat the link: %.17g < %.17g", i, r.arrive_s[i], alone);
            busy_until = fmax(busy_until, s[i].t_s) + (double)s[i].bytes / bw;
            last = fmax(last, r.arrive_s[i]);
        }
        double want = busy_until + alpha;
        worst = fmax(worst, fabs(last - want) / want);
        expect_rel(last, want, 1e-9, "a link's last arrival vs FIFO busy period");
        cr_assert_eq(network_active(net, l), 0);
    }
    cr_log_info("work conservation: largest relative difference %.3g (bound 1e-9)", worst);
    arrivals_free(&r);
    network_free(net);
    free(s);
}

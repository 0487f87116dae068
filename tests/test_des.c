/* tests for sim/des.c: the event queue pops in (time, insertion) order. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include <criterion/criterion.h>

#include "helpers.h"
#include <criterion/logging.h>

#include "../sim/des.h"

static bool ev_before(const struct des_event *x, const struct des_event *y)
{
    return x->time_s < y->time_s || (x->time_s == y->time_s && x->seq < y->seq);
}

static int cmp_ev(const void *pa, const void *pb)
{
    const struct des_event *a = pa, *b = pb;
    return ev_before(a, b) ? -1 : ev_before(b, a) ? 1 : 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

Test(des, random_pushes_pop_in_time_then_seq_order)
{
    /* Times from 1000 values, so about 100 events share each time: the
     * tie-break is exercised as much as the time order. The reference is
     * the same events sorted by (time, seq) with qsort. */
    enum { N = 100000 };
    struct des q;
    des_init(&q);
    struct des_event *ref = malloc(N * sizeof *ref);
    cr_assert_not_null(ref);
    uint64_t s = 42;
    for (int i = 0; i < N; i++) {
        double t = (double)(test_rng_next(&s) % 1000) * 0.001;
        cr_assert_eq(des_push(&q, t, 7, i % 13, i), 0);
        ref[i] = (struct des_event){ .time_s = t, .seq = (uint64_t)i, .kind = 7, .a = i % 13, .b = i };
    }
    cr_assert_eq(q.n_pushed, N);
    qsort(ref, N, sizeof *ref, cmp_ev);

    struct des_event ev;
    for (int i = 0; i < N; i++) {
        cr_assert(des_pop(&q, &ev), "queue empty after %d of %d pops", i, N);
        cr_assert(ev.time_s == ref[i].time_s && ev.seq == ref[i].seq && ev.b == ref[i].b
                      && ev.a == ref[i].a && ev.kind == 7,
                  "pop %d: got (%g, seq %llu), want (%g, seq %llu)", i, ev.time_s,
                  (unsigned long long)ev.seq, ref[i].time_s, (unsigned long long)ref[i].seq);
    }
    cr_assert_not(des_pop(&q, &ev));
    cr_assert(des_empty(&q));
    free(ref);
    des_release(&q);
}

Test(des, equal_times_pop_in_insertion_order)
{
    struct des q;
    des_init(&q);
    for (int i = 0; i < 1000; i++) cr_assert_eq(des_push(&q, 5.0, 0, 0, i), 0);
    struct des_event ev;
    for (int i = 0; i < 1000; i++) {
        cr_assert(des_pop(&q, &ev));
        cr_assert_eq(ev.b, i, "pop %d returned the event pushed %lld-th", i, (long long)ev.b);
        cr_assert_eq(ev.time_s, 5.0);
    }
    des_release(&q);
}

Test(des, interleaved_push_pop_matches_a_linear_scan)
{
    /* A hold model, as the simulator uses the queue: pop the earliest, push
     * one or two later events (sometimes at the same time), now and then
     * pop without pushing. The reference keeps the live events in an array
     * and finds the earliest by scanning it. */
    struct des q;
    des_init(&q);
    struct des_event live[4096];
    size_t n_live = 0;
    uint64_t seq = 0, s = 7;
    for (int i = 0; i < 100; i++) {
        double t = (double)(test_rng_next(&s) % 50);
        cr_assert_eq(des_push(&q, t, 1, 0, (int64_t)seq), 0);
        live[n_live++] = (struct des_event){ .time_s = t, .seq = seq++, .kind = 1, .b = 0 };
    }
    for (int step = 0; step < 20000; step++) {
        size_t best = 0;
        for (size_t k = 1; k < n_live; k++)
            if (ev_before(&live[k], &live[best])) best = k;
        struct des_event ev;
        cr_assert(des_pop(&q, &ev));
        cr_assert(ev.seq == live[best].seq && ev.time_s == live[best].time_s,
                  "step %d: got (%g, %llu), want (%g, %llu)", step, ev.time_s,
                  (unsigned long long)ev.seq, live[best].time_s,
                  (unsigned long long)live[best].seq);
        live[best] = live[--n_live];
        int pushes = (int)(test_rng_next(&s) % 3);   /* 0, 1 or 2: the queue wanders */
        if (n_live < 10) pushes = 2;
        for (int k = 0; k < pushes && n_live < 4096; k++) {
            double t = ev.time_s + (test_rng_next(&s) % 4 == 0 ? 0.0 : test_rng_uniform(&s) * 10);
            cr_assert_eq(des_push(&q, t, 1, 0, 0), 0);
            live[n_live++] = (struct des_event){ .time_s = t, .seq = seq++ };
        }
    }
    cr_assert_eq(des_len(&q), n_live);
    des_release(&q);
}

Test(des, empty_queue_pops_false)
{
    struct des q;
    des_init(&q);
    struct des_event ev = { .time_s = 123 };
    cr_assert_not(des_pop(&q, &ev));
    cr_assert(des_empty(&q));
    cr_assert_eq(des_push(&q, 1.0, 0, 0, 0), 0);
    cr_assert_not(des_empty(&q));
    cr_assert(des_pop(&q, &ev));
    cr_assert_not(des_pop(&q, &ev), "a drained queue must pop false");
    des_release(&q);
    des_release(&q);   /* twice is harmless */
}

Test(des, nan_time_is_rejected_and_leaves_the_queue_unchanged)
{
    struct des q;
    des_init(&q);
    cr_assert_eq(des_push(&q, 2.0, 0, 0, 1), 0);
    cr_assert_eq(des_push(&q, NAN, 0, 0, 2), ERR_RUN);
    cr_assert_eq(des_len(&q), 1);
    cr_assert_eq(q.n_pushed, 1);
    /* Infinity is a time ("never"), not an error: it sorts last. */
    cr_assert_eq(des_push(&q, INFINITY, 0, 0, 3), 0);
    cr_assert_eq(des_push(&q, 1.0, 0, 0, 4), 0);
    struct des_event ev;
    cr_assert(des_pop(&q, &ev));
    cr_assert_eq(ev.b, 4);
    cr_assert(des_pop(&q, &ev));
    cr_assert_eq(ev.b, 1);
    cr_assert(des_pop(&q, &ev));
    cr_assert_eq(ev.b, 3);
    cr_assert_eq(ev.seq, 1, "the rejected push took no sequence number");
    des_release(&q);
}

/* Speed, logged not asserted (machines differ; sanitizers slow it 5-10x).
 * Hold model at the simulator's scale: 10^4 pending events, each pop
 * followed by one push a random delay later. Untimed warm-up first. */
Test(des, push_pop_rate_is_logged)
{
    enum { PENDING = 10000, HOLDS = 4000000 };
    struct des q;
    des_init(&q);
    uint64_t s = 1;
    for (int i = 0; i < PENDING; i++)
        cr_assert_eq(des_push(&q, test_rng_uniform(&s), 0, 0, i), 0);
    struct des_event ev;
    uint64_t check = 0;
    for (int i = 0; i < HOLDS / 10; i++) {
        des_pop(&q, &ev);
        des_push(&q, ev.time_s + test_rng_uniform(&s), 0, 0, ev.b);
    }
    double t0 = now_s();
    for (int i = 0; i < HOLDS; i++) {
        des_pop(&q, &ev);
        check += (uint64_t)ev.b;
        des_push(&q, ev.time_s + test_rng_uniform(&s), 0, 0, ev.b);
    }
    double dt = now_s() - t0;
    cr_assert_eq(des_len(&q), PENDING);
    cr_log_info("des hold model, %d pending: %.1f million push+pop pairs/s (%d in %.3f s; check %llu)",
                PENDING, HOLDS / dt / 1e6, HOLDS, dt, (unsigned long long)(check & 0xff));

    /* Fill then drain: 10^6 pushes, then 10^6 pops. */
    des_release(&q);
    des_init(&q);
    enum { FILL = 1000000 };
    t0 = now_s();
    for (int i = 0; i < FILL; i++) des_push(&q, test_rng_uniform(&s), 0, 0, i);
    while (des_pop(&q, &ev)) check += (uint64_t)ev.b;
    dt = now_s() - t0;
    cr_log_info("des fill+drain, 10^6 events: %.1f million push+pop pairs/s (%.3f s)",
                FILL / dt / 1e6, dt);
    des_release(&q);
}

/* core/ps_policy.c: the parameter-server policies. Expected values come from
 * the definitions in core/ps_policy.h (versions, staleness, sync rounds,
 * backup quorum n - B, async staleness n - 1, the SSP bound) and, for SSP,
 * from the inequality documented in ps_server_pull_ready. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "../core/ps_policy.h"

static void init_ok(struct ps_server *s, enum server_policy p, int arg, int n)
{
    struct err e = {0};
    int rc = ps_server_init(s, p, arg, n, &e);
    cr_assert_eq(rc, 0, "ps_server_init(%s:%d, %d workers): %s", policy_infos[p].name, arg, n, e.msg);
}

/* Worker w pushes the gradient of `step` computed from version `read`; the
 * server must answer `want` (why: where the expectation comes from). */
static void expect_push(struct ps_server *s, int w, int64_t step, int64_t read,
                        enum ps_action want, const char *why)
{
    enum ps_action got = ps_server_push(s, w, step, read).action;
    cr_assert_eq(got, want, "push of worker %d, step %lld, read at %lld: action %d, want %d (%s)",
                 w, (long long)step, (long long)read, (int)got, (int)want, why);
}

/* ---- sync ------------------------------------------------------------ */

Test(ps_policy, sync_round_of_3_closes_on_third_push_with_staleness_0)
{
    struct ps_server s;
    init_ok(&s, POLICY_SYNC, 0, 3);
    for (int64_t step = 0; step < 4; step++) {
        /* Every worker read the version of the last round's update. */
        int64_t read = s.version;
        cr_assert_eq(read, step, "one update per round");
        for (int w = 0; w < 3; w++) {
            /* Nobody's pull of this step is answered before the round closes. */
            for (int v = 0; v < 3; v++)
                cr_assert(!ps_server_pull_ready(&s, v, step), "step %lld: worker %d pulled early",
                          (long long)step, v);
            struct ps_push_result r = ps_server_push(&s, w, step, read);
            cr_assert_eq(r.action, w < 2 ? PS_GATHERED : PS_ROUND, "step %lld push %d",
                         (long long)step, w);
            cr_assert_eq(r.version_applied, read, "applied at the version before the round");
            cr_assert_eq(r.version_applied - read, 0, "staleness 0");
            cr_assert_eq(s.pushed[w], step + 1);
        }
        cr_assert_eq(s.version, step + 1);
        cr_assert_eq(s.round, step + 1);
        for (int v = 0; v < 3; v++)
            cr_assert(ps_server_pull_ready(&s, v, step), "round closed: worker %d may pull", v);
        cr_assert(!ps_server_pull_ready(&s, 0, step + 1), "the next round is still open");
    }
    ps_server_release(&s);
}

Test(ps_policy, sync_arrival_order_does_not_matter)
{
    struct ps_server s;
    init_ok(&s, POLICY_SYNC, 0, 4);
    const int order[4] = {2, 0, 3, 1};
    for (int i = 0; i < 4; i++) {
        struct ps_push_result r = ps_server_push(&s, order[i], 0, 0);
        cr_assert_eq(r.action, i < 3 ? PS_GATHERED : PS_ROUND);
        cr_assert_eq(r.version_applied, 0);
    }
    cr_assert_eq(s.version, 1);
    ps_server_release(&s);
}

Test(ps_policy, one_worker_sync_closes_every_push)
{
    struct ps_server s;
    init_ok(&s, POLICY_SYNC, 0, 1);
    for (int64_t step = 0; step < 3; step++) {
        struct ps_push_result r = ps_server_push(&s, 0, step, step);
        cr_assert_eq(r.action, PS_ROUND);
        cr_assert_eq(r.version_applied, step);
    }
    ps_server_release(&s);
}

/* ---- backup ---------------------------------------------------------- */

Test(ps_policy, backup_1_of_4_closes_at_3_and_drops_the_4th)
{
    struct ps_server s;
    init_ok(&s, POLICY_BACKUP, 1, 4);
    /* Workers 3, 1, 0 arrive first; worker 2 is the straggler. */
    const int order[3] = {3, 1, 0};
    for (int i = 0; i < 3; i++) {
        cr_assert(!ps_server_pull_ready(&s, order[i], 0), "pull before the round closed");
        struct ps_push_result r = ps_server_push(&s, order[i], 0, 0);
        cr_assert_eq(r.action, i < 2 ? PS_GATHERED : PS_ROUND, "push %d", i);
        cr_assert_eq(r.version_applied, 0);
    }
    cr_assert_eq(s.version, 1);
    cr_assert_eq(s.round, 1);
    /* The round is closed: all four may pull, the straggler included, before
     * its push arrives (its pull after step 0 follows its push anyway). */
    for (int w = 0; w < 4; w++) cr_assert(ps_server_pull_ready(&s, w, 0));

    struct ps_push_result late = ps_server_push(&s, 2, 0, 0);
    cr_assert_eq(late.action, PS_DROPPED);
    cr_assert_eq(late.version_applied, -1);
    cr_assert_eq(s.version, 1, "a dropped push changes nothing");
    cr_assert_eq(s.n_in_round, 0, "a dropped push is not counted in the next round");
    cr_assert_eq(s.pushed[2], 1, "the straggler's clock still advances");

    /* Round 1: the straggler is among the first three this time. */
    const int order1[4] = {2, 0, 3, 1};
    for (int i = 0; i < 4; i++) {
        struct ps_push_result r = ps_server_push(&s, order1[i], 1, 1);
        enum ps_action want = i < 2 ? PS_GATHERED : i == 2 ? PS_ROUND : PS_DROPPED;
        cr_assert_eq(r.action, want, "round 1 push %d", i);
        cr_assert_eq(r.version_applied, want == PS_DROPPED ? -1 : 1);
    }
    cr_assert_eq(s.version, 2);
    ps_server_release(&s);
}

Test(ps_policy, backup_0_is_sync)
{
    struct ps_server s;
    init_ok(&s, POLICY_BACKUP, 0, 3);
    for (int w = 0; w < 3; w++)
        expect_push(&s, w, 0, 0, w < 2 ? PS_GATHERED : PS_ROUND, "backup:0 waits for all 3");
    ps_server_release(&s);
}

/* A straggler so slow that two rounds close without it: every push of it is
 * dropped, and its pulls are never held up. */
Test(ps_policy, backup_straggler_left_behind_two_rounds_is_dropped)
{
    struct ps_server s;
    init_ok(&s, POLICY_BACKUP, 1, 3);
    for (int64_t step = 0; step < 2; step++)
        for (int w = 0; w < 2; w++) ps_server_push(&s, w, step, step);
    cr_assert_eq(s.round, 2);
    for (int64_t step = 0; step < 2; step++) {
        expect_push(&s, 2, step, 0, PS_DROPPED, "its round closed without it");
        cr_assert(ps_server_pull_ready(&s, 2, step));
    }
    cr_assert_eq(s.version, 2);
    ps_server_release(&s);
}

/* ---- async ----------------------------------------------------------- */

/* n workers take turns: each pushes the gradient of the version it pulled,
 * then pulls. Between a worker's pull and its next push the other n - 1 push
 * once each, so every push after the first round has staleness n - 1 (the
 * header's "with n identical workers staleness -> n - 1"). In the first
 * round worker k pushes at version k, having read version 0. */
Test(ps_policy, async_round_robin_staleness_is_n_minus_1)
{
    for (int n = 1; n <= 8; n++) {
        struct ps_server s;
        init_ok(&s, POLICY_ASYNC, 0, n);
        int64_t read[8] = {0};
        for (int i = 0; i < 20 * n; i++) {
            int w = i % n;
            int64_t step = i / n;
            struct ps_push_result r = ps_server_push(&s, w, step, read[w]);
            cr_assert_eq(r.action, PS_APPLIED);
            cr_assert_eq(r.version_applied, i, "each push is its own update");
            int64_t staleness = r.version_applied - read[w];
            int64_t want = i < n ? w : n - 1;
            cr_assert_eq(staleness, want, "n=%d push %d (worker %d): staleness %lld, want %lld",
                         n, i, w, (long long)staleness, (long long)want);
            cr_assert(ps_server_pull_ready(&s, w, step), "async pulls never wait");
            read[w] = s.version;
        }
        cr_assert_eq(s.version, 20 * n);
        ps_server_release(&s);
    }
}

Test(ps_policy, async_pull_never_waits_even_far_ahead)
{
    struct ps_server s;
    init_ok(&s, POLICY_ASYNC, 0, 3);
    for (int64_t step = 0; step < 50; step++) {
        ps_server_push(&s, 0, step, s.version);
        cr_assert(ps_server_pull_ready(&s, 0, step));
    }
    ps_server_release(&s);
}

/* ---- ssp ------------------------------------------------------------- */

/* The same small generator as everywhere: SplitMix64 (Vigna), so the
 * schedules are fixed and the test needs nothing but itself. */
static uint64_t next_u64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t min_pushed(const struct ps_server *s)
{
    int64_t m = s->pushed[0];
    for (int v = 1; v < s->n_workers; v++) m = s->pushed[v] < m ? s->pushed[v] : m;
    return m;
}

/* Runs a random schedule of n workers under ssp:K. Each worker computes step
 * s (then pushes it) and waits to pull (then starts s + 1). Worker 0 is
 * picked least often, so it falls behind and the bound is what holds the
 * others back. At every pull attempt the answer is checked against the bound
 * from both sides: a pull is answered iff the worker's next step would be at
 * most K ahead of the slowest worker's clock (steps pushed). Returns the
 * largest lead seen. */
static int64_t run_ssp_schedule(int n, int K, uint64_t seed, int events)
{
    struct ps_server s;
    init_ok(&s, POLICY_SSP, K, n);
    int64_t step[16] = {0};        /* the step each worker computes or has pushed */
    bool waiting[16] = {false};    /* pushed its step, waiting to pull */
    int64_t read[16] = {0};
    int64_t max_lead = 0;
    for (int i = 0; i < events; i++) {
        /* Worker 0 gets 1 chance in 3n, the others share the rest. */
        uint64_t r = next_u64(&seed) % (uint64_t)(3 * n);
        int w = r == 0 ? 0 : 1 + (int)(r % (uint64_t)(n - 1));
        if (!waiting[w]) {
            struct ps_push_result pr = ps_server_push(&s, w, step[w], read[w]);
            cr_assert_eq(pr.action, PS_APPLIED);
            waiting[w] = true;
            continue;
        }
        int64_t lead = (step[w] + 1) - min_pushed(&s);   /* if it pulled now */
        bool ready = ps_server_pull_ready(&s, w, step[w]);
        cr_assert_eq(ready, lead <= K,
                     "ssp:%d worker %d after step %lld: lead %lld, ready=%d (i=%d)", K, w,
                     (long long)step[w], (long long)lead, ready, i);
        if (ready) {
            if (lead > max_lead) max_lead = lead;
            read[w] = s.version;
            step[w] += 1;
            waiting[w] = false;
        }
        /* The invariant, over every worker that is computing. */
        for (int v = 0; v < n; v++)
            if (!waiting[v])
                cr_assert_leq(step[v] - min_pushed(&s), K, "worker %d ran ahead", v);
    }
    /* Progress: the schedule got somewhere (no one stuck at step 0). */
    cr_assert_gt(min_pushed(&s), 10, "ssp:%d n=%d: slowest pushed only %lld steps", K, n,
                 (long long)min_pushed(&s));
    ps_server_release(&s);
    return max_lead;
}

Test(ps_policy, ssp_bound_holds_and_is_reached)
{
    const int ns[3] = {2, 4, 9};
    for (int k = 0; k <= 5; k++)
        for (int i = 0; i < 3; i++) {
            int64_t max_lead = run_ssp_schedule(ns[i], k, 1000u + (uint64_t)(10 * k + i), 20000);
            /* Not stricter than K: a worker does get K steps ahead. */
            cr_assert_eq(max_lead, k, "ssp:%d with %d workers: largest lead %lld", k, ns[i],
                         (long long)max_lead);
        }
}

Test(ps_policy, ssp_pull_waits_exactly_until_slowest_pushed_step_s_minus_K)
{
    /* ssp:2, 3 workers. Worker 0 pushes steps 0..4; workers 1 and 2 idle. */
    struct ps_server s;
    init_ok(&s, POLICY_SSP, 2, 3);
    for (int64_t step = 0; step < 5; step++) {
        ps_server_push(&s, 0, step, s.version);
        /* After step s it needs every worker to have pushed step s - 2. */
        cr_assert_eq(ps_server_pull_ready(&s, 0, step), step < 2, "step %lld", (long long)step);
    }
    /* Worker 0 waits after step 4: needs pushes of step 2 from 1 and 2. */
    for (int64_t step = 0; step < 3; step++) {
        ps_server_push(&s, 1, step, s.version);
        cr_assert(!ps_server_pull_ready(&s, 0, 4), "worker 2 has pushed nothing");
    }
    ps_server_push(&s, 2, 0, s.version);
    ps_server_push(&s, 2, 1, s.version);
    cr_assert(!ps_server_pull_ready(&s, 0, 4));
    ps_server_push(&s, 2, 2, s.version);
    cr_assert(ps_server_pull_ready(&s, 0, 4), "every worker has pushed step 4 - 2");
    ps_server_release(&s);
}

/* ssp:0 answers exactly the pulls sync answers, on the same pushes. */
Test(ps_policy, ssp_0_is_lock_step_like_sync)
{
    struct ps_server ssp, sync;
    init_ok(&ssp, POLICY_SSP, 0, 3);
    init_ok(&sync, POLICY_SYNC, 0, 3);
    uint64_t seed = 7;
    int64_t step[3] = {0};
    bool waiting[3] = {false};
    for (int i = 0; i < 3000; i++) {
        int w = (int)(next_u64(&seed) % 3);
        if (!waiting[w]) {
            ps_server_push(&ssp, w, step[w], ssp.version);
            ps_server_push(&sync, w, step[w], sync.version);
            waiting[w] = true;
        }
        for (int v = 0; v < 3; v++)
            if (waiting[v])
                cr_assert_eq(ps_server_pull_ready(&ssp, v, step[v]),
                             ps_server_pull_ready(&sync, v, step[v]), "i=%d worker %d", i, v);
        if (waiting[w] && ps_server_pull_ready(&ssp, w, step[w])) {
            step[w]++;
            waiting[w] = false;
        }
    }
    cr_assert_gt(sync.round, 100, "the schedule made progress");
    ps_server_release(&ssp);
    ps_server_release(&sync);
}

Test(ps_policy, ssp_pushes_are_applied_on_arrival)
{
    struct ps_server s;
    init_ok(&s, POLICY_SSP, 1, 2);
    struct ps_push_result a = ps_server_push(&s, 1, 0, 0);
    struct ps_push_result b = ps_server_push(&s, 0, 0, 0);
    cr_assert_eq(a.action, PS_APPLIED);
    cr_assert_eq(a.version_applied, 0);
    cr_assert_eq(b.action, PS_APPLIED);
    cr_assert_eq(b.version_applied, 1, "staleness 1: worker 1's update came in between");
    cr_assert_eq(s.version, 2);
    ps_server_release(&s);
}

/* ---- retired workers ------------------------------------------------- */

/* ssp:1, 3 workers. Worker 0 (the slowest) pushed step 0 only, worker 2
 * steps 0..2, worker 1 steps 0..3. Worker 1's pull after step 3 needs every
 * worker to have pushed step 3 - 1 (min pushed >= 3): worker 0 holds it back
 * until it retires; then the slowest live worker, 2, is what counts. */
Test(ps_policy, ssp_retired_slowest_worker_lets_the_others_pulls_through)
{
    struct ps_server s;
    init_ok(&s, POLICY_SSP, 1, 3);
    ps_server_push(&s, 0, 0, 0);
    for (int64_t step = 0; step < 3; step++) ps_server_push(&s, 2, step, s.version);
    for (int64_t step = 0; step < 4; step++) ps_server_push(&s, 1, step, s.version);
    cr_assert(!ps_server_pull_ready(&s, 1, 3), "worker 0 has pushed 1 step, 3 needed");
    cr_assert(!ps_server_pull_ready(&s, 2, 2), "worker 2 is held back too (needs 2)");
    ps_server_retire(&s, 0);
    cr_assert(ps_server_pull_ready(&s, 1, 3), "live workers' min pushed is 3");
    cr_assert(ps_server_pull_ready(&s, 2, 2));
    /* The bound still holds on the live workers: worker 1's next pull, after
     * step 4, needs worker 2 to have pushed step 3. */
    ps_server_push(&s, 1, 4, s.version);
    cr_assert(!ps_server_pull_ready(&s, 1, 4), "worker 2 has pushed 3 steps, 4 needed");
    ps_server_push(&s, 2, 3, s.version);
    cr_assert(ps_server_pull_ready(&s, 1, 4));
    /* A push of the retired worker (one on its way) is dropped. */
    int64_t version = s.version;
    expect_push(&s, 0, 1, 0, PS_DROPPED, "worker 0 is retired");
    cr_assert_eq(s.version, version);
    ps_server_release(&s);
}

/* sync, 3 workers: round 0 gathers all three; then worker 2 retires and
 * each round closes on the second push, with staleness 0 as before. */
Test(ps_policy, sync_round_of_3_with_one_retired_closes_at_2)
{
    struct ps_server s;
    init_ok(&s, POLICY_SYNC, 0, 3);
    for (int w = 0; w < 3; w++) ps_server_push(&s, w, 0, 0);
    cr_assert_eq(s.round, 1);
    ps_server_retire(&s, 2);
    cr_assert_eq(s.n_live, 2);
    cr_assert_eq(s.round, 1, "retiring between rounds closes nothing");
    for (int64_t step = 1; step < 4; step++) {
        int64_t read = s.version;
        cr_assert(!ps_server_pull_ready(&s, 0, step), "step %lld: round open", (long long)step);
        struct ps_push_result a = ps_server_push(&s, 1, step, read);
        cr_assert_eq(a.action, PS_GATHERED, "step %lld", (long long)step);
        cr_assert(!ps_server_pull_ready(&s, 1, step), "one live push of two");
        struct ps_push_result b = ps_server_push(&s, 0, step, read);
        cr_assert_eq(b.action, PS_ROUND, "step %lld: the second live push closes it",
                     (long long)step);
        cr_assert_eq(a.version_applied, read, "staleness 0");
        cr_assert_eq(b.version_applied, read, "staleness 0");
        cr_assert_eq(s.round, step + 1);
        for (int v = 0; v < 3; v++) cr_assert(ps_server_pull_ready(&s, v, step));
    }
    cr_assert_eq(s.version, 4, "one update per round");
    ps_server_release(&s);
}

/* Workers 0 and 1 pushed step 0; the round waits only for worker 2, which
 * retires: the round closes then, with no further push. */
Test(ps_policy, sync_retirement_closes_a_round_that_waited_only_for_the_retired)
{
    struct ps_server s;
    init_ok(&s, POLICY_SYNC, 0, 3);
    ps_server_push(&s, 0, 0, 0);
    ps_server_push(&s, 1, 0, 0);
    cr_assert(!ps_server_pull_ready(&s, 0, 0));
    ps_server_retire(&s, 2);
    cr_assert_eq(s.version, 1, "the round's update is applied at the retirement");
    cr_assert_eq(s.round, 1);
    cr_assert_eq(s.n_in_round, 0);
    cr_assert(ps_server_pull_ready(&s, 0, 0));
    cr_assert(ps_server_pull_ready(&s, 1, 0));
    ps_server_release(&s);
}

/* The live workers are 1 and 2 (the others retired), and every round
 * before `step` closed: they push `step`, read at version `step`; the
 * first push is gathered, the second closes the round (version step + 1). */
static void expect_live_1_and_2_close_the_round(struct ps_server *s, int64_t step,
                                                const char *why)
{
    expect_push(s, 1, step, step, PS_GATHERED, why);
    expect_push(s, 2, step, step, PS_ROUND, why);
    cr_assert_eq(s->version, step + 1, "%s: the second live push closes the round", why);
}

/* Worker 0 pushed step 0, then retires: its push counts no more, so the
 * round closes when both live workers have pushed, not at the first. */
Test(ps_policy, sync_retired_workers_push_in_the_open_round_no_longer_counts)
{
    struct ps_server s;
    init_ok(&s, POLICY_SYNC, 0, 3);
    ps_server_push(&s, 0, 0, 0);
    ps_server_retire(&s, 0);
    cr_assert_eq(s.n_in_round, 0);
    expect_live_1_and_2_close_the_round(&s, 0, "worker 0 retired");
    ps_server_release(&s);
}

/* backup:1 of 4 closes with the first min(n - B, live) live pushes: one
 * retired leaves the quorum at 3 (4 - 1, and 3 are live); two retired bring
 * it to the 2 left. */
Test(ps_policy, backup_quorum_is_n_minus_B_or_every_live_worker)
{
    struct ps_server s;
    init_ok(&s, POLICY_BACKUP, 1, 4);
    ps_server_retire(&s, 3);
    for (int w = 0; w < 3; w++)
        expect_push(&s, w, 0, 0, w < 2 ? PS_GATHERED : PS_ROUND, "one retired: closes at 3");
    ps_server_retire(&s, 0);
    expect_live_1_and_2_close_the_round(&s, 1, "two retired");
    ps_server_release(&s);
}

/* Retiring twice changes nothing more; with every worker retired no round
 * closes empty and no ssp pull is held back. */
Test(ps_policy, retire_twice_or_everyone_is_harmless)
{
    struct ps_server s;
    init_ok(&s, POLICY_SYNC, 0, 2);
    ps_server_retire(&s, 1);
    ps_server_retire(&s, 1);
    cr_assert_eq(s.n_live, 1);
    ps_server_retire(&s, 0);
    cr_assert_eq(s.n_live, 0);
    cr_assert_eq(s.version, 0, "an empty round is not an update");
    cr_assert_eq(s.round, 0);
    ps_server_release(&s);
    init_ok(&s, POLICY_SSP, 0, 2);
    ps_server_retire(&s, 0);
    ps_server_retire(&s, 1);
    cr_assert(ps_server_pull_ready(&s, 0, 5), "no live worker to wait for");
    ps_server_release(&s);
}

/* ---- arguments ------------------------------------------------------- */

static void expect_init_rejected(enum server_policy p, int arg, int n, const char *needle)
{
    struct ps_server s;
    struct err e = {0};
    int rc = ps_server_init(&s, p, arg, n, &e);
    cr_assert_eq(rc, ERR_INPUT, "policy %d arg %d n %d: rc %d", (int)p, arg, n, rc);
    cr_assert_eq(e.code, ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, needle), "message '%s' lacks '%s'", e.msg, needle);
    cr_assert_null(s.pushed, "nothing allocated on failure");
    ps_server_release(&s);   /* safe on a refused server */
}

Test(ps_policy, invalid_arguments_are_input_errors)
{
    expect_init_rejected(POLICY_SYNC, 0, 0, "0 workers");
    expect_init_rejected(POLICY_ASYNC, 0, -3, "-3 workers");
    expect_init_rejected(POLICY_BACKUP, 4, 4, "backup:4 with 4 workers");
    expect_init_rejected(POLICY_BACKUP, 9, 4, "backup:9");
    expect_init_rejected(POLICY_BACKUP, -1, 4, "backup:-1");
    expect_init_rejected(POLICY_BACKUP, 1, 1, "backup:1 with 1 workers");
    expect_init_rejected(POLICY_SSP, -1, 4, "ssp:-1");
    expect_init_rejected(POLICY_NONE, 0, 4, "not a server policy");
}

Test(ps_policy, valid_edges_are_accepted)
{
    struct ps_server s;
    init_ok(&s, POLICY_BACKUP, 3, 4);   /* one push closes a round */
    expect_push(&s, 2, 0, 0, PS_ROUND, "backup:3 of 4: the first push closes");
    expect_push(&s, 0, 0, 0, PS_DROPPED, "round 0 is closed");
    ps_server_release(&s);
    init_ok(&s, POLICY_SSP, 0, 1);
    cr_assert(ps_server_pull_ready(&s, 0, -1), "nothing pushed, nothing to wait for");
    ps_server_push(&s, 0, 0, 0);
    cr_assert(ps_server_pull_ready(&s, 0, 0));
    ps_server_release(&s);
    ps_server_release(NULL);
}

/* The policy table (PS_POLICIES): the properties the executors, the checker
 * and the commands ask, against the definitions in ps_policy.h. */
Test(ps_policy, table_names_and_properties_follow_the_definitions)
{
    cr_assert_str_eq(policy_infos[POLICY_NONE].name, "none");
    cr_assert_str_eq(policy_infos[POLICY_SYNC].name, "sync");
    cr_assert_str_eq(policy_infos[POLICY_ASYNC].name, "async");
    cr_assert_str_eq(policy_infos[POLICY_SSP].name, "ssp");
    cr_assert_str_eq(policy_infos[POLICY_BACKUP].name, "backup");
    /* async and ssp share the job's work out; sync and backup gather rounds */
    for (int p = 0; p < POLICY_N_KINDS; p++) {
        const struct policy_info *pi = &policy_infos[p];
        bool is_async = p == POLICY_ASYNC || p == POLICY_SSP;
        bool has_rounds = p == POLICY_SYNC || p == POLICY_BACKUP;
        cr_expect_eq(pi->is_async, is_async, "%s: is_async", pi->name);
        cr_expect_eq(policy_is_async((enum server_policy)p), is_async, "%s", pi->name);
        cr_expect_eq(pi->has_rounds, has_rounds, "%s: has_rounds", pi->name);
        cr_expect_eq(pi->has_servers, p != POLICY_NONE, "%s: has_servers", pi->name);
        /* only sync without drops (and no servers) applies the whole batch */
        cr_expect_eq(pi->is_exact, p == POLICY_NONE || p == POLICY_SYNC, "%s: is_exact", pi->name);
        cr_expect_eq(pi->arg != NULL, p == POLICY_SSP || p == POLICY_BACKUP, "%s: arg", pi->name);
        cr_expect(pi->meaning && pi->meaning[0], "%s: a meaning", pi->name);
        for (int q = 0; q < p; q++)
            cr_expect_str_neq(pi->name, policy_infos[q].name, "names are unique");
    }
}

Test(ps_policy, round_quorum_is_every_push_or_backups_first_n_minus_B)
{
    cr_expect_eq(policy_round_quorum(POLICY_SYNC, 0, 4), 4);
    cr_expect_eq(policy_round_quorum(POLICY_BACKUP, 1, 4), 3);
    cr_expect_eq(policy_round_quorum(POLICY_BACKUP, 0, 4), 4);   /* backup:0 is sync */
    /* the engine closes a backup:1 round of 4 at its third push, as the
     * quorum says */
    struct ps_server s;
    init_ok(&s, POLICY_BACKUP, 1, 4);
    for (int w = 0; w < 2; w++) cr_expect_eq(ps_server_push(&s, w, 0, 0).action, PS_GATHERED);
    cr_expect_eq(ps_server_push(&s, 2, 0, 0).action, PS_ROUND);
    ps_server_release(&s);
}

/* Tests for core/plan_check.c: hand-built plans with known defects, known
 * deadlocks, and unit-cost timelines worked out by hand. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <math.h>
#include <string.h>
#include <time.h>

#include "../core/plan_check.h"

/* Every test's workload: 4 dense layers. */
TEST_SUITE_WITH_WORKLOAD(check, wl, "mlp:784-256-256-256-10");

static struct plan *new_plan(int n_workers, int n_servers)
{
    struct err e = {0};
    struct plan *p = plan_create("hand", wl, n_workers, n_servers, 64, 8, &e);
    cr_assert_not_null(p, "%s", e.msg);
    return p;
}

/* One group of every worker of p (ranks 0 to n_workers - 1); its index. */
static int group_of_all(struct plan *p)
{
    int ranks[16];
    cr_assert_leq(p->n_workers, 16);
    for (int r = 0; r < p->n_workers; r++) ranks[r] = r;
    return plan_add_group(p, ranks, p->n_workers);
}

static struct plan_verdict check(const struct plan *p)
{
    struct err e = {0};
    struct plan_verdict v;
    cr_assert_eq(plan_build_status(p, &e), 0, "%s", e.msg);
    cr_assert_eq(plan_check(p, &v, &e), 0, "%s", e.msg);
    cr_assert_eq(v.is_valid, v.n_defects == 0);
    return v;
}

/* Some stored defect at (rank, op) whose message holds every string of `want`. */
static bool has_defect(const struct plan_verdict *v, int rank, int op, const char *const *want)
{
    for (int d = 0; d < v->n_defects && d < PLAN_MAX_DEFECTS; d++) {
        if (v->defects[d].rank != rank || v->defects[d].op != op) continue;
        bool all = true;
        for (const char *const *w = want; *w; w++) all = all && strstr(v->defects[d].msg, *w);
        if (all) return true;
    }
    return false;
}

#define ASSERT_DEFECT(v, rank, op, ...)                                                   \
    cr_assert(has_defect(&(v), (rank), (op), (const char *const[]){__VA_ARGS__, NULL}),   \
              "no defect at rank %d op %d with the expected text; first of %d: %s", (rank), \
              (op), (v).n_defects, (v).n_defects ? (v).defects[0].msg : "(none)")

static void print_defects(const struct plan_verdict *v)
{
    for (int d = 0; d < v->n_defects && d < PLAN_MAX_DEFECTS; d++)
        cr_log_info("defect %d: %s", d, v->defects[d].msg);
}

/* p has exactly one defect, at (rank, op), whose message holds every string
 * of `want`; frees p. */
static void expect_one_defect(struct plan *p, int rank, int op, const char *const *want)
{
    struct plan_verdict v = check(p);
    print_defects(&v);
    cr_assert_not(v.is_valid);
    cr_assert_eq(v.n_defects, 1);
    cr_assert(has_defect(&v, rank, op, want),
              "no defect at rank %d op %d with the expected text: %s", rank, op,
              v.defects[0].msg);
    plan_free(p);
}

#define ASSERT_ONE_DEFECT(p, rank, op, ...)                                               \
    expect_one_defect((p), (rank), (op), (const char *const[]){__VA_ARGS__, NULL})

/* GPipe: p stages of `per` layers each, m microbatches, all forwards then
 * all backwards; activations forward and gradients back by SEND/RECV. */
static struct plan *gpipe(int stages, int m, int per)
{
    struct plan *p = new_plan(stages, 0);
    for (int s = 0; s < stages; s++) {
        int lo = s * per, hi = lo + per;
        for (int mb = 0; mb < m; mb++) {
            int r = s ? plan_recv(p, s, s - 1, TAG_ACT, lo, mb, 8, NO_DEPS) : -1;
            int f = plan_forward(p, s, lo, hi, mb, 8, DEPS(r));
            if (s < stages - 1) plan_send(p, s, s + 1, TAG_ACT, hi, mb, 8, DEPS(f));
        }
        for (int mb = 0; mb < m; mb++) {
            int r = s < stages - 1 ? plan_recv(p, s, s + 1, TAG_GRAD, hi, mb, 8, NO_DEPS) : -1;
            int b = plan_backward(p, s, lo, hi, mb, 8, DEPS(r));
            if (s) plan_send(p, s, s - 1, TAG_GRAD, lo, mb, 8, DEPS(b));
        }
    }
    return p;
}

/* 1F1B (PipeDream-flush): stage s warms up with p-s-1 forwards, then
 * alternates one forward, one backward, then drains the backwards. */
static struct plan *one_f_one_b(int stages, int m, int per)
{
    struct plan *p = new_plan(stages, 0);
    for (int s = 0; s < stages; s++) {
        int lo = s * per, hi = lo + per;
        int warm = stages - s - 1 < m ? stages - s - 1 : m;
        int next_f = 0, next_b = 0;
        for (int k = 0; k < 2 * m; k++) {
            bool is_fwd = next_f < m && (next_f < warm || next_f == next_b + warm);
            if (is_fwd) {
                int mb = next_f++;
                int r = s ? plan_recv(p, s, s - 1, TAG_ACT, lo, mb, 8, NO_DEPS) : -1;
                int f = plan_forward(p, s, lo, hi, mb, 8, DEPS(r));
                if (s < stages - 1) plan_send(p, s, s + 1, TAG_ACT, hi, mb, 8, DEPS(f));
            } else {
                int mb = next_b++;
                int r = s < stages - 1 ? plan_recv(p, s, s + 1, TAG_GRAD, hi, mb, 8, NO_DEPS)
                                       : -1;
                int b = plan_backward(p, s, lo, hi, mb, 8, DEPS(r));
                if (s) plan_send(p, s, s - 1, TAG_GRAD, lo, mb, 8, DEPS(b));
            }
        }
    }
    return p;
}

static struct plan_times run_ok(const struct plan *p)
{
    struct err e = {0};
    struct plan_times t;
    cr_assert_eq(plan_unit_run(p, &t, &e), 0, "%s", e.msg);
    return t;
}

/* p must pass the checker (its defects logged when it does not); its
 * unit-cost timeline. */
static struct plan_times valid_run(const struct plan *p)
{
    struct plan_verdict v = check(p);
    print_defects(&v);
    cr_assert(v.is_valid);
    return run_ok(p);
}

/* p's unit-cost makespan and bubble (the bubble logged beside the closed
 * form); releases t and frees p. */
static void expect_makespan_and_bubble(struct plan *p, struct plan_times *t, int makespan,
                                       double bubble, const char *what)
{
    cr_assert_eq(t->makespan, makespan, "%s", what);
    double got = plan_unit_bubble(p, t);
    cr_log_info("%s: bubble %.15f, closed form %.15f, diff %.3g", what, got, bubble,
                fabs(got - bubble));
    cr_assert_float_eq(got, bubble, 1e-12, "%s", what);
    plan_times_release(t);
    plan_free(p);
}

/* ---- valid plans and their unit-cost timelines ---------------------------- */

Test(check, two_stage_pipeline_passes_with_hand_computed_makespan)
{
    struct plan *p = gpipe(2, 2, 2);
    struct plan_verdict v = check(p);
    print_defects(&v);
    cr_assert(v.is_valid);
    cr_assert_eq(v.n_defects, 0);
    struct plan_times t = run_ok(p);
    /* by hand, forward 2 units and backward 4 per stage:
     *   rank 0: F0 [0,2) F1 [2,4)               B0 [10,14) B1 [14,18)
     *   rank 1:          F0 [2,4) F1 [4,6) B0 [6,10) B1 [10,14)
     * = (m+p-1)(f+b) = 3 * 6 */
    cr_assert_eq(t.busy_compute[0], 12);
    cr_assert_eq(t.busy_compute[1], 12);
    /* rank 1's RECV of ACT mb 1 (op 2) ends when rank 0's SEND does: 4 */
    cr_assert_eq(p->ranks[1].ops.items[2].kind, OP_RECV);
    cr_assert_eq(t.end[1][2], 4);
    /* rank 0's first BACKWARD (op 5) waits for the gradient of rank 1's B0 */
    cr_assert_eq(p->ranks[0].ops.items[5].kind, OP_BACKWARD);
    cr_assert_eq(t.start[0][5], 10);
    expect_makespan_and_bubble(p, &t, 18, 1.0 / 3, "GPipe p=2 m=2");
}

Test(check, gpipe_p4_m8_bubble_is_3_over_11)
{
    struct plan *p = gpipe(4, 8, 1);
    struct plan_times t = valid_run(p);
    for (int r = 0; r < 4; r++) cr_assert_eq(t.busy_compute[r], 8 * 3);
    /* forwards fill in m+p-1 = 11 units, backwards drain in 2(m+p-1) = 22;
     * bubble (p-1)/(m+p-1) */
    expect_makespan_and_bubble(p, &t, 33, 3.0 / 11, "GPipe p=4 m=8");
}

Test(check, one_f_one_b_has_the_gpipe_bubble)
{
    struct plan *p = one_f_one_b(4, 8, 1);
    struct plan_times t = valid_run(p);
    expect_makespan_and_bubble(p, &t, 33, 3.0 / 11, "1F1B p=4 m=8");
}

Test(check, unit_cost_is_the_textbook_picture)
{
    struct op f = {.kind = OP_FORWARD, .lo = 1, .hi = 4};
    struct op b = {.kind = OP_BACKWARD, .lo = 1, .hi = 4};
    struct op s = {.kind = OP_SEND, .lo = 2, .hi = 2};
    struct op a = {.kind = OP_ALLREDUCE, .lo = 0, .hi = 4};
    struct op u = {.kind = OP_UPDATE, .lo = 0, .hi = 4};
    cr_assert_eq(plan_unit_cost(&f), 3);
    cr_assert_eq(plan_unit_cost(&b), 6);
    cr_assert_eq(plan_unit_cost(&s), 0);
    cr_assert_eq(plan_unit_cost(&a), 0);
    cr_assert_eq(plan_unit_cost(&u), 0);
    /* zero-bubble's halves: F = B = W, and B + W = BACKWARD */
    struct op bi = {.kind = OP_BACKWARD_INPUT, .lo = 1, .hi = 4};
    struct op bw = {.kind = OP_BACKWARD_WEIGHT, .lo = 1, .hi = 4};
    cr_assert_eq(plan_unit_cost(&bi), 3);
    cr_assert_eq(plan_unit_cost(&bw), 3);
}

/* A weight half must wait for its own input half: same microbatch and
 * layers. One that waits for another microbatch's is named. */
Test(check, weight_half_without_its_input_half_is_a_defect)
{
    struct plan *p = new_plan(1, 0);
    int f0 = plan_forward(p, 0, 0, 4, 0, 8, NO_DEPS);
    int f1 = plan_forward(p, 0, 0, 4, 1, 8, NO_DEPS);
    int b0 = plan_backward_input(p, 0, 0, 4, 0, 8, DEPS(f0));
    plan_backward_input(p, 0, 0, 4, 1, 8, DEPS(f1));
    plan_backward_weight(p, 0, 0, 4, 0, 8, DEPS(b0));   /* its own: fine */
    plan_backward_weight(p, 0, 0, 4, 1, 8, DEPS(b0));   /* mb 0's: a defect */
    ASSERT_ONE_DEFECT(p, 0, 5,
                      "rank 0 op 5 (BACKWARD_WEIGHT [0,4) mb 1) waits for no BACKWARD_INPUT of "
                      "mb 1 and layers [0,4)");
}

Test(check, allreduce_starts_when_the_last_member_arrives)
{
    /* rank 0 computes 4 units, rank 1 twelve; the bucket starts at 12 on both */
    struct plan *p = new_plan(2, 0);
    int g = group_of_all(p);
    plan_forward(p, 0, 0, 4, 0, 8, NO_DEPS);
    int a0 = plan_allreduce(p, 0, g, 0, 4, DEPS(0));
    plan_update(p, 0, 0, 4, DEPS(a0));
    plan_forward(p, 1, 0, 4, 0, 8, NO_DEPS);
    int b1 = plan_backward(p, 1, 0, 4, 0, 8, NO_DEPS);
    int a1 = plan_allreduce(p, 1, g, 0, 4, DEPS(b1));
    struct plan_times t = valid_run(p);
    cr_assert_eq(t.start[0][a0], 12);
    cr_assert_eq(t.start[1][a1], 12);
    cr_assert_eq(t.start[0][2], 12);
    cr_assert_eq(t.makespan, 12);
    /* rank 0 is busy 4 of 12, rank 1 all 12 */
    cr_assert_float_eq(plan_unit_bubble(p, &t), (8.0 / 12 + 0) / 2, 1e-12);
    plan_times_release(&t);
    plan_free(p);
}

/* Two workers and one server of all 4 layers: worker 0 computes 12 units
 * (forward 4, backward 8) before its PUSH, worker 1 sixteen. */
static struct plan *ps_plan(enum server_policy policy, int arg)
{
    struct plan *p = new_plan(2, 1);
    p->ranks[2].shard_lo = 0;
    p->ranks[2].shard_hi = 4;
    p->policy = policy;
    p->policy_arg = arg;
    for (int w = 0; w < 2; w++) {
        if (w == 1) plan_forward(p, w, 0, 4, 1, 8, NO_DEPS);
        int f = plan_forward(p, w, 0, 4, 0, 8, NO_DEPS);
        int b = plan_backward(p, w, 0, 4, 0, 8, DEPS(f));
        int push = plan_push(p, w, 2, 0, 4, DEPS(b));
        plan_pull(p, w, 2, 0, 4, DEPS(push));
    }
    return p;
}

/* ps_plan(policy, arg) is valid; its PUSHes end at 12 and 16 whatever the
 * policy, and its PULLs start at pull_start[worker]. */
static void expect_pull_starts(enum server_policy policy, int arg, const int pull_start[2])
{
    struct plan *p = ps_plan(policy, arg);
    struct plan_times t = valid_run(p);
    cr_assert_eq(t.end[0][2], 12);   /* worker 0's PUSH */
    cr_assert_eq(t.end[1][3], 16);   /* worker 1's PUSH */
    cr_assert_eq(t.start[0][3], pull_start[0]);
    cr_assert_eq(t.start[1][4], pull_start[1]);
    plan_times_release(&t);
    plan_free(p);
}

Test(check, sync_pull_waits_for_every_workers_push)
{
    /* worker 0's PULL waits for worker 1's PUSH */
    expect_pull_starts(POLICY_SYNC, 0, (const int[]){16, 16});
}

Test(check, async_pull_waits_only_for_its_own_push)
{
    expect_pull_starts(POLICY_ASYNC, 0, (const int[]){12, 16});
}

Test(check, backup_pull_waits_for_the_first_n_minus_b_pushes)
{
    /* backup:1 keeps the first 2 - 1 pushes */
    expect_pull_starts(POLICY_BACKUP, 1, (const int[]){12, 16});
}

Test(check, backup_that_drops_every_push_is_a_defect)
{
    struct plan *p = ps_plan(POLICY_BACKUP, 2);
    struct plan_verdict v = check(p);
    cr_assert_not(v.is_valid);
    ASSERT_DEFECT(v, 2, -1, "backup:2", "server 2");
    plan_free(p);
}

Test(check, sync_workers_pushing_different_ranges_is_a_defect)
{
    struct plan *p = new_plan(2, 1);
    p->ranks[2].shard_lo = 0;
    p->ranks[2].shard_hi = 4;
    p->policy = POLICY_SYNC;
    plan_push(p, 0, 2, 0, 2, NO_DEPS);
    plan_push(p, 0, 2, 2, 4, NO_DEPS);
    plan_push(p, 1, 2, 0, 4, NO_DEPS);
    plan_pull(p, 1, 2, 0, 4, NO_DEPS);
    struct plan_verdict v = check(p);
    print_defects(&v);
    cr_assert_not(v.is_valid);
    ASSERT_DEFECT(v, 1, 0, "rank 1 op 0 (PUSH to 2 [0,4)) is #1 of its pushes to server 2, but "
                  "rank 0's #1 is rank 0 op 0 (PUSH to 2 [0,2)); rank 1 makes 1 pushes to "
                  "server 2 where rank 0 makes 2", "never complete a step");
    plan_free(p);
}

Test(check, sync_pull_without_a_push_round_is_a_defect)
{
    struct plan *p = ps_plan(POLICY_SYNC, 0);
    plan_pull(p, 0, 2, 0, 4, NO_DEPS);   /* a second pull, one push a step */
    struct plan_verdict v = check(p);
    cr_assert_not(v.is_valid);
    ASSERT_DEFECT(v, 0, 4, "pull #2 of rank 0 from server 2", "no push");
    plan_free(p);
}

/* ---- p2p matching -------------------------------------------------------- */

Test(check, send_without_recv_names_the_send)
{
    struct plan *p = new_plan(2, 0);
    int f = plan_forward(p, 0, 0, 2, 3, 8, NO_DEPS);
    plan_send(p, 0, 1, TAG_ACT, 2, 3, 8, DEPS(f));
    plan_forward(p, 1, 2, 4, 3, 8, NO_DEPS);
    ASSERT_ONE_DEFECT(p, 0, 1,
                      "rank 0 op 1 (SEND to 1, ACT@2 mb 3) has no matching RECV at rank 1");
}

Test(check, recv_without_send_is_a_defect)
{
    struct plan *p = new_plan(2, 0);
    plan_recv(p, 1, 0, TAG_GRAD, 2, 0, 8, NO_DEPS);
    ASSERT_ONE_DEFECT(p, 1, 0, "rank 1 op 0 (RECV from 0, GRAD@2 mb 0) has no matching SEND");
}

/* Ranks 0 and 1 exchanging activations at boundary 2, microbatch 0: n_sends
 * SENDs of send_samples from rank 0, n_recvs RECVs of recv_samples at rank 1. */
static struct plan *act_exchange(int n_sends, int send_samples, int n_recvs, int recv_samples)
{
    struct plan *p = new_plan(2, 0);
    for (int k = 0; k < n_sends; k++) plan_send(p, 0, 1, TAG_ACT, 2, 0, send_samples, NO_DEPS);
    for (int k = 0; k < n_recvs; k++) plan_recv(p, 1, 0, TAG_ACT, 2, 0, recv_samples, NO_DEPS);
    return p;
}

Test(check, duplicate_send_is_a_defect)
{
    ASSERT_ONE_DEFECT(act_exchange(2, 8, 1, 8), 0, 1, "repeats rank 0 op 0");
}

Test(check, duplicate_recv_is_a_defect)
{
    ASSERT_ONE_DEFECT(act_exchange(1, 8, 2, 8), 1, 1, "repeats rank 1 op 0");
}

Test(check, send_and_recv_of_different_sizes_is_a_defect)
{
    /* 256 floats a sample cross boundary 2 */
    ASSERT_ONE_DEFECT(act_exchange(1, 8, 1, 4), 0, 0, "sends 8192 bytes", "expects 4096");
}

/* ---- collectives ---------------------------------------------------------- */

Test(check, member_skipping_an_allreduce_is_named)
{
    struct plan *p = new_plan(3, 0);
    int g = group_of_all(p);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < (r == 2 ? 3 : 4); k++) plan_allreduce(p, r, g, 0, 4, NO_DEPS);
    ASSERT_ONE_DEFECT(p, 2, 2, "rank 2 reaches 3 collectives on group 0 where rank 0 reaches 4");
}

Test(check, member_reducing_other_layers_is_named)
{
    struct plan *p = new_plan(3, 0);
    int g = group_of_all(p);
    for (int r = 0; r < 3; r++) {
        plan_allreduce(p, r, g, 2, 4, NO_DEPS);
        if (r == 1) plan_allreduce(p, r, g, 1, 2, NO_DEPS);
        plan_allreduce(p, r, g, 0, 2, NO_DEPS);
    }
    ASSERT_ONE_DEFECT(p, 1, 1,
                      "rank 1 op 1 (ALLREDUCE group 0 [1,2)) is #2 of its collectives on group 0, "
                      "but rank 0's #2 is rank 0 op 1 (ALLREDUCE group 0 [0,2)); rank 1 reaches 3 "
                      "collectives on group 0 where rank 0 reaches 2");
}

/* A group's collectives must agree in kind as well as layers: rank 1
 * all-gathers where the others reduce-scatter. */
Test(check, member_gathering_where_the_others_scatter_is_named)
{
    struct plan *p = new_plan(3, 0);
    int g = group_of_all(p);
    for (int r = 0; r < 3; r++) {
        if (r == 1) plan_all_gather(p, r, g, 0, 4, NO_DEPS);
        else plan_reduce_scatter(p, r, g, 0, 4, NO_DEPS);
    }
    ASSERT_ONE_DEFECT(p, 1, 0,
                      "rank 1 op 0 (ALL_GATHER group 0 [0,4)) is #1 of its collectives on group 0, "
                      "but rank 0's #1 is rank 0 op 0 (REDUCE_SCATTER group 0 [0,4))");
}

/* ZeRO-1's step passes: reduce-scatter, shard UPDATE, all-gather; a shard
 * UPDATE on a group its rank is not in does not. */
Test(check, shard_update_needs_its_ranks_group)
{
    struct plan *p = new_plan(2, 0);
    int g = group_of_all(p);
    for (int r = 0; r < 2; r++) {
        int rs = plan_reduce_scatter(p, r, g, 0, 4, NO_DEPS);
        int up = plan_update_shard(p, r, g, 0, 4, DEPS(rs));
        plan_all_gather(p, r, g, 0, 4, DEPS(up));
    }
    struct plan_verdict v = check(p);
    cr_assert(v.is_valid, "%s", v.n_defects ? v.defects[0].msg : "");
    plan_free(p);

    p = new_plan(3, 0);
    g = plan_add_group(p, (int[]){0, 1}, 2);
    struct op up = {.kind = OP_UPDATE, .stream = STREAM_COMPUTE, .lo = 0, .hi = 4, .mb = -1,
                    .peer = -1, .group = g};
    plan_add(p, 2, up, NO_DEPS);
    ASSERT_ONE_DEFECT(p, 2, 0, "is on group 0, which rank 2 is not a member of");
}

/* ---- malformed ops -------------------------------------------------------- */

Test(check, malformed_ops_are_each_reported)
{
    struct plan *p = new_plan(2, 1);
    p->policy = POLICY_ASYNC;
    p->ranks[2].shard_lo = 0;
    p->ranks[2].shard_hi = 2;
    int g = plan_add_group(p, (int[]){1}, 1);
    struct op bad = {.kind = OP_FORWARD, .stream = 0, .lo = 3, .hi = 5, .peer = -1, .group = -1};
    plan_add(p, 0, bad, NO_DEPS);                                   /* op 0: layers */
    bad.lo = 2, bad.hi = 2;
    plan_add(p, 0, bad, NO_DEPS);                                   /* op 1: empty */
    bad.lo = 0, bad.hi = 1, bad.stream = 5;
    plan_add(p, 0, bad, NO_DEPS);                                   /* op 2: stream */
    plan_send(p, 0, 0, TAG_ACT, 1, 0, 8, NO_DEPS);                  /* op 3: to itself */
    plan_send(p, 0, 2, TAG_ACT, 1, 0, 8, NO_DEPS);                  /* op 4: to a server */
    plan_push(p, 0, 1, 0, 2, NO_DEPS);                              /* op 5: to a worker */
    plan_push(p, 0, 2, 0, 4, NO_DEPS);                              /* op 6: outside shard */
    plan_allreduce(p, 0, g, 0, 4, NO_DEPS);                         /* op 7: not a member */
    plan_allreduce(p, 0, 7, 0, 4, NO_DEPS);                         /* op 8: no such group */
    plan_forward(p, 0, 0, 1, 0, 8, DEPS(0));                        /* op 9: dep broken below */
    p->ranks[0].deps.items[p->ranks[0].ops.items[9].dep_first] = 12;
    struct op rs = {.kind = OP_RECV, .stream = 1, .lo = 1, .hi = 2, .peer = 1,
                    .tag = plan_tag(TAG_ACT, 1, 0)};
    plan_add(p, 0, rs, NO_DEPS);                                    /* op 10: p2p layers */
    plan_forward(p, 2, 0, 1, 0, 8, NO_DEPS);                        /* a server with ops */
    struct plan_verdict v = check(p);
    print_defects(&v);
    cr_assert_not(v.is_valid);
    ASSERT_DEFECT(v, 0, 0, "[3,5)", "outside the model's 4");
    ASSERT_DEFECT(v, 0, 1, "[2,2)", "empty");
    ASSERT_DEFECT(v, 0, 2, "stream 5");
    ASSERT_DEFECT(v, 0, 3, "peer 0", "another worker");
    ASSERT_DEFECT(v, 0, 4, "peer 2", "another worker");
    ASSERT_DEFECT(v, 0, 5, "names server 1", "servers are ranks 2..2");
    ASSERT_DEFECT(v, 0, 6, "[0,4) but server 2 holds only [0,2)");
    ASSERT_DEFECT(v, 0, 7, "group 0, which rank 0 is not a member of");
    ASSERT_DEFECT(v, 0, 8, "names group 7");
    ASSERT_DEFECT(v, 0, 9, "depends on op 12");
    ASSERT_DEFECT(v, 0, 10, "layers [1,2) and tag boundary 1", "lo = hi = b");
    ASSERT_DEFECT(v, 2, 0, "rank 2 is a parameter server but has 1 ops");
    cr_assert_eq(v.n_defects, 12);
    plan_free(p);
}

Test(check, defects_past_the_cap_are_counted)
{
    struct plan *p = new_plan(2, 0);
    for (int mb = 0; mb < 40; mb++) plan_send(p, 0, 1, TAG_ACT, 1, mb, 8, NO_DEPS);
    struct plan_verdict v = check(p);
    cr_assert_eq(v.n_defects, 40);
    cr_assert_not(v.is_valid);
    ASSERT_DEFECT(v, 0, 15, "ACT@1 mb 15", "no matching RECV");
    plan_free(p);
}

Test(check, server_ops_without_a_policy_are_a_defect)
{
    struct plan *p = new_plan(1, 1);
    p->ranks[1].shard_hi = 4;
    plan_push(p, 0, 1, 0, 4, NO_DEPS);
    struct plan_verdict v = check(p);
    ASSERT_DEFECT(v, 0, 0, "no server policy");
    plan_free(p);
}

/* ---- deadlock ------------------------------------------------------------- */

/* rank 0: RECV from 1 then SEND to 1; rank 1: RECV from 0 then SEND to 0 */
static struct plan *recv_first_pair(void)
{
    struct plan *p = new_plan(2, 0);
    plan_recv(p, 0, 1, TAG_GRAD, 2, 0, 8, NO_DEPS);
    plan_send(p, 0, 1, TAG_ACT, 2, 0, 8, NO_DEPS);
    plan_recv(p, 1, 0, TAG_ACT, 2, 0, 8, NO_DEPS);
    plan_send(p, 1, 0, TAG_GRAD, 2, 0, 8, NO_DEPS);
    return p;
}

Test(check, two_ranks_receiving_first_deadlock)
{
    struct plan *p = recv_first_pair();
    ASSERT_ONE_DEFECT(p, 0, 0,
                      "deadlock, a cycle of 4 ops: rank 0 op 0 (RECV from 1, GRAD@2 mb 0) "
                      "waits for rank 1 op 1 (SEND to 0, GRAD@2 mb 0) which waits for rank 1 "
                      "op 0 (RECV from 0, ACT@2 mb 0) which waits for rank 0 op 1 (SEND to 1, "
                      "ACT@2 mb 0) which waits for rank 0 op 0");
}

Test(check, cycle_through_an_allreduce_deadlocks)
{
    struct plan *p = new_plan(2, 0);
    int g = group_of_all(p);
    plan_allreduce(p, 0, g, 0, 4, NO_DEPS);
    plan_send(p, 0, 1, TAG_ACT, 2, 0, 8, NO_DEPS);
    plan_recv(p, 1, 0, TAG_ACT, 2, 0, 8, NO_DEPS);
    plan_allreduce(p, 1, g, 0, 4, NO_DEPS);
    ASSERT_ONE_DEFECT(p, 0, 0, "rank 0 op 0 (ALLREDUCE group 0 [0,4)) waits for rank 1 op 1",
                      "which waits for rank 1 op 0 (RECV from 0", "which waits for rank 0 op 1",
                      "waits for rank 0 op 0");
}

Test(check, cycle_through_an_explicit_dep)
{
    /* rank 0's SEND runs on the compute stream after a FORWARD that lists
     * the RECV of rank 1's answer as its dep: the loop crosses that dep */
    struct plan *p = new_plan(2, 0);
    int r = plan_recv(p, 0, 1, TAG_GRAD, 1, 0, 8, NO_DEPS);
    int f = plan_forward(p, 0, 0, 1, 0, 8, DEPS(r));
    int s = plan_send(p, 0, 1, TAG_ACT, 1, 0, 8, NO_DEPS);
    p->ranks[0].ops.items[s].stream = STREAM_COMPUTE;
    int r1 = plan_recv(p, 1, 0, TAG_ACT, 1, 0, 8, NO_DEPS);
    plan_send(p, 1, 0, TAG_GRAD, 1, 0, 8, DEPS(r1));
    cr_assert_eq(f, 1);
    ASSERT_ONE_DEFECT(p, 0, 0, "a cycle of 5 ops: rank 0 op 0",
                      "which waits for rank 0 op 2 (SEND to 1, ACT@1 mb 0) which waits for rank 0 "
                      "op 1 (FORWARD [0,1) mb 0) which waits for rank 0 op 0");
}

Test(check, incomplete_build_is_a_defect)
{
    struct plan *p = new_plan(1, 0);
    plan_forward(p, 0, 0, 9, 0, 8, NO_DEPS);
    struct err e = {0};
    struct plan_verdict v;
    cr_assert_eq(plan_check(p, &v, &e), 0);
    cr_assert_not(v.is_valid);
    ASSERT_DEFECT(v, -1, -1, "incomplete", "[0,9) outside the model");
    plan_free(p);
}

Test(check, sync_pull_before_the_other_workers_push_deadlocks)
{
    /* worker 1 pulls before it pushes, so round 0 never completes */
    struct plan *p = new_plan(2, 1);
    p->ranks[2].shard_hi = 4;
    p->policy = POLICY_SYNC;
    int push = plan_push(p, 0, 2, 0, 4, NO_DEPS);
    plan_pull(p, 0, 2, 0, 4, DEPS(push));
    int pull = plan_pull(p, 1, 2, 0, 4, NO_DEPS);
    plan_push(p, 1, 2, 0, 4, DEPS(pull));
    struct plan_verdict v = check(p);
    print_defects(&v);
    cr_assert_eq(v.n_defects, 1);
    ASSERT_DEFECT(v, 1, 0, "rank 1 op 0 (PULL from 2 [0,4)) waits for rank 1 op 1 (PUSH to 2",
                  "which waits for rank 1 op 0");
    /* the same plan is fine when the server does not make pulls wait */
    p->policy = POLICY_ASYNC;
    cr_assert(check(p).is_valid);
    plan_free(p);
}

Test(check, unit_run_of_a_deadlock_returns_the_cycle)
{
    struct plan *p = recv_first_pair();
    struct err e = {0};
    struct plan_times t;
    cr_assert_eq(plan_unit_run(p, &t, &e), ERR_RUN);
    cr_assert_eq(e.code, ERR_RUN);
    cr_assert(strstr(e.msg, "the hand plan at unit cost: deadlock"), "%s", e.msg);
    cr_assert(strstr(e.msg, "rank 0 op 0 (RECV from 1, GRAD@2 mb 0) waits for rank 1 op 1"),
              "%s", e.msg);
    cr_assert_null(t.start);
    cr_assert_null(t.busy_compute);
    plan_times_release(&t);
    plan_free(p);
}

Test(check, unit_run_of_a_malformed_plan_refuses)
{
    struct plan *p = new_plan(2, 0);
    plan_send(p, 0, 1, TAG_ACT, 2, 0, 8, NO_DEPS);
    struct err e = {0};
    struct plan_times t;
    cr_assert_eq(plan_unit_run(p, &t, &e), ERR_RUN);
    cr_assert(strstr(e.msg, "cannot run"), "%s", e.msg);
    cr_assert(strstr(e.msg, "no matching RECV"), "%s", e.msg);
    plan_free(p);
}

Test(check, times_release_is_safe_on_a_zeroed_struct)
{
    struct plan_times t = {0};
    plan_times_release(&t);
    plan_times_release(&t);
    cr_assert_null(t.start);
}

Test(check, empty_plan_is_valid_with_zero_makespan)
{
    struct plan *p = new_plan(3, 0);
    struct plan_times t = valid_run(p);
    cr_assert_eq(t.makespan, 0);
    cr_assert_eq(plan_unit_bubble(p, &t), 0);
    plan_times_release(&t);
    plan_free(p);
}

/* ---- scale ---------------------------------------------------------------- */

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* n ranks in a ring, m microbatches: each sends mb to the next rank, then
 * receives it from the previous one and runs a forward on it. With
 * recv_first, every rank receives before it sends: one cycle of 2n ops. */
static struct plan *ring(int n, int m, bool recv_first)
{
    struct err e = {0};
    struct plan *p = plan_create("ring", wl, n, 0, n, m, &e);
    cr_assert_not_null(p, "%s", e.msg);
    for (int r = 0; r < n; r++)
        for (int mb = 0; mb < m; mb++) {
            int rv = -1;
            if (recv_first) rv = plan_recv(p, r, (r + n - 1) % n, TAG_ACT, 1, mb, 1, NO_DEPS);
            plan_send(p, r, (r + 1) % n, TAG_ACT, 1, mb, 1, NO_DEPS);
            if (!recv_first) rv = plan_recv(p, r, (r + n - 1) % n, TAG_ACT, 1, mb, 1, NO_DEPS);
            plan_forward(p, r, 0, 1, mb, 1, DEPS(rv));
        }
    return p;
}

Test(check, large_ring_checks_and_runs)
{
    struct { int n, m; } sizes[] = {{256, 8}, {1024, 64}};
    for (size_t k = 0; k < 2; k++) {
        struct plan *p = ring(sizes[k].n, sizes[k].m, false);
        double t0 = seconds();
        struct plan_verdict v = check(p);
        double t1 = seconds();
        cr_assert(v.is_valid, "%s", v.defects[0].msg);
        struct plan_times t = run_ok(p);
        double t2 = seconds();
        cr_assert_eq(t.makespan, sizes[k].m);
        cr_log_info("ring of %d ranks, %lld ops: check %.1f ms, unit run %.1f ms", sizes[k].n,
                    (long long)plan_n_ops(p), (t1 - t0) * 1e3, (t2 - t1) * 1e3);
        plan_times_release(&t);
        plan_free(p);
    }
}

Test(check, long_deadlock_cycle_is_shortened_in_the_middle)
{
    struct plan *p = ring(256, 2, true);
    struct plan_verdict v = check(p);
    cr_assert_eq(v.n_defects, 1);
    const char *msg = v.defects[0].msg;
    cr_log_info("%s", msg);
    cr_assert(strstr(msg, "deadlock, a cycle of 512 ops: rank 0 op 0 (RECV from 255"), "%s", msg);
    cr_assert(strstr(msg, "more)"), "%s", msg);
    const char *tail = " which waits for rank 0 op 0";
    cr_assert_str_eq(msg + strlen(msg) - strlen(tail), tail);
    plan_free(p);
}

Test(check, prepare_flags_a_deadlock_and_returns_no_index)
{
    struct plan *p = recv_first_pair();
    struct err e = {0};
    struct plan_verdict v;
    struct plan_index *ix = NULL;
    cr_assert_eq(plan_prepare(p, &v, &ix, &e), 0, "%s", e.msg);
    cr_assert(!v.is_valid);
    cr_assert(v.has_deadlock);
    cr_assert_null(ix);
    plan_free(p);
}

/* The times a prepared plan keeps are the unit-cost run's: GPipe 3 x 4 of
 * one layer a stage ends at (m + p - 1) * 3 units. */
Test(check, prepared_unit_times_are_the_unit_run)
{
    struct plan *p = gpipe(3, 4, 1);
    struct err e = {0};
    struct plan_verdict v;
    struct plan_index *ix = NULL;
    cr_assert_eq(plan_prepare(p, &v, &ix, &e), 0, "%s", e.msg);
    cr_assert(v.is_valid && !v.has_deadlock);
    struct plan_times a, b;
    cr_assert_eq(plan_unit_times(ix, &a, &e), 0, "%s", e.msg);
    cr_assert_eq(plan_unit_run(p, &b, &e), 0, "%s", e.msg);
    cr_assert_float_eq(a.makespan, 18.0, 1e-12);
    cr_assert_eq(a.makespan, b.makespan);
    for (int r = 0; r < p->n_ranks; r++)
        for (size_t i = 0; i < p->ranks[r].ops.len; i++)
            cr_assert_eq(a.end[r][i], b.end[r][i]);
    plan_times_release(&a);
    plan_times_release(&b);
    plan_index_free(ix);
    plan_free(p);
}

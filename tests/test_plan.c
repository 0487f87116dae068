/* Tests for core/plan.c: the builders cost ops from the workload, deps are
 * recorded as given, and a bad builder call leaves a sticky error. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <string.h>

#include "../core/plan.h"

static struct workload *wl;
static struct plan *p;

/* mlp:784-256-256-256-10: layers 784->256, 256->256, 256->256, 256->10 */
static void setup(void)
{
    wl = test_workload("mlp:784-256-256-256-10");
    struct err e = {0};
    p = plan_create("test", wl, 2, 0, 64, 2, &e);
    cr_assert_not_null(p, "%s", e.msg);
}

static void teardown(void)
{
    plan_free(p);
    workload_free(wl);
}

TestSuite(plan, .init = setup, .fini = teardown);

Test(plan, forward_costs_follow_the_dense_layer_formulas)
{
    int i = plan_forward(p, 0, 0, 2, 3, 32, NO_DEPS);
    cr_assert_eq(i, 0);
    const struct op *op = &p->ranks[0].ops.items[i];
    /* workload.c: forward = 2*in*out + out per sample, for 784->256 and 256->256 */
    double per_sample = (2.0 * 784 * 256 + 256) + (2.0 * 256 * 256 + 256);
    cr_assert_eq(op->flops, per_sample * 32);
    cr_assert_eq(op->flops, workload_fwd_flops(wl, 0, 2) * 32);
    /* weights and biases, plus the input and both outputs of each sample, 4 bytes each */
    int64_t params = (784 * 256 + 256) + (256 * 256 + 256);
    cr_assert_eq(op->bytes, params * 4 + (784 + 256 + 256) * 4 * 32);
    cr_assert_eq(op->kind, OP_FORWARD);
    cr_assert_eq(op->stream, STREAM_COMPUTE);
    cr_assert_eq(op->lo, 0);
    cr_assert_eq(op->hi, 2);
    cr_assert_eq(op->mb, 3);
    cr_assert_eq(op->n_samples, 32);
    cr_assert_eq(op->peer, -1);
    cr_assert_eq(op->group, -1);
}

Test(plan, backward_skips_the_input_gradient_of_layer_0)
{
    int i = plan_backward(p, 0, 0, 2, 0, 8, NO_DEPS);
    const struct op *op = &p->ranks[0].ops.items[i];
    /* workload.c: backward = 2*in*out + out (dW, db) + 2*in*out (dx, not for layer 0) */
    double per_sample = (2.0 * 784 * 256 + 256) + (2.0 * 256 * 256 + 256 + 2.0 * 256 * 256);
    cr_assert_eq(op->flops, per_sample * 8);
}

Test(plan, update_and_comm_ops_move_parameter_bytes)
{
    int64_t params = 256 * 10 + 10;   /* layer 3: 256->10 */
    int u = plan_update(p, 0, 3, 4, NO_DEPS);
    cr_assert_eq(p->ranks[0].ops.items[u].flops, 4.0 * params);
    cr_assert_eq(p->ranks[0].ops.items[u].bytes, 5 * params * 4);
    int g = plan_add_group(p, (int[]){1, 0}, 2);
    int a = plan_allreduce(p, 0, g, 3, 4, NO_DEPS);
    cr_assert_eq(p->ranks[0].ops.items[a].bytes, params * 4);
    cr_assert_eq(p->ranks[0].ops.items[a].group, g);
    cr_assert_eq(p->ranks[0].ops.items[a].stream, STREAM_COMM);
    /* what crosses boundary 2 is layer 1's output: 256 floats a sample */
    int s = plan_send(p, 0, 1, TAG_ACT, 2, 5, 16, NO_DEPS);
    const struct op *send = &p->ranks[0].ops.items[s];
    cr_assert_eq(send->bytes, 256 * 4 * 16);
    cr_assert_eq(send->lo, 2);
    cr_assert_eq(send->hi, 2);
    cr_assert_eq(send->peer, 1);
    cr_assert_eq(send->tag, plan_tag(TAG_ACT, 2, 5));
    cr_assert_eq(plan_n_ops(p), 3);
    cr_assert_eq(plan_comm_bytes(p), params * 4 + 256 * 4 * 16);
    cr_assert_eq(plan_build_status(p, NULL), 0);
}

Test(plan, negative_deps_are_skipped)
{
    int f = plan_forward(p, 0, 0, 1, 0, 1, NO_DEPS);
    int b = plan_backward(p, 0, 0, 1, 0, 1, DEPS(-1, f, -1));
    const struct op *op = &p->ranks[0].ops.items[b];
    cr_assert_eq(op->n_deps, 1);
    cr_assert_eq(plan_deps(p, 0, b)[0], f);
    cr_assert_eq(plan_build_status(p, NULL), 0);
}

Test(plan, a_dep_on_a_later_op_is_a_sticky_error)
{
    struct err e = {0};
    cr_assert_eq(plan_forward(p, 0, 0, 1, 0, 1, NO_DEPS), 0);
    cr_assert_eq(plan_forward(p, 0, 1, 2, 0, 1, DEPS(5)), -1);
    cr_assert_eq(plan_build_status(p, &e), ERR_RUN);
    cr_assert_eq(e.code, ERR_RUN);
    cr_assert(strstr(e.msg, "rank 0 op 1 (FORWARD) depends on op 5"), "%s", e.msg);
    cr_assert(strstr(e.msg, "building the test plan"), "%s", e.msg);
    /* sticky: later calls fail too and the first message stays */
    cr_assert_eq(plan_forward(p, 0, 0, 1, 0, 1, NO_DEPS), -1);
    cr_assert_eq(plan_add_group(p, (int[]){0}, 1), -1);
    cr_assert_eq(plan_build_status(p, &e), ERR_RUN);
    cr_assert(strstr(e.msg, "depends on op 5"), "%s", e.msg);
    cr_assert_eq(p->ranks[0].ops.len, 1);
}

Test(plan, a_dep_on_itself_is_refused)
{
    cr_assert_eq(plan_forward(p, 1, 0, 1, 0, 1, DEPS(0)), -1);
    cr_assert_eq(plan_build_status(p, NULL), ERR_RUN);
}

Test(plan, rank_and_layers_out_of_range_are_refused)
{
    struct err e = {0};
    cr_assert_eq(plan_forward(p, 2, 0, 1, 0, 1, NO_DEPS), -1);
    cr_assert_eq(plan_build_status(p, &e), ERR_RUN);
    cr_assert(strstr(e.msg, "rank 2, which is not in 0..1"), "%s", e.msg);

    struct plan *q = plan_create("q", wl, 1, 0, 1, 1, &e);
    cr_assert_eq(plan_backward(q, 0, 3, 5, 0, 1, NO_DEPS), -1);
    cr_assert_eq(plan_build_status(q, &e), ERR_RUN);
    cr_assert(strstr(e.msg, "[3,5) outside the model's 4 layers"), "%s", e.msg);
    plan_free(q);

    q = plan_create("q", wl, 2, 0, 1, 1, &e);
    cr_assert_eq(plan_send(q, 0, 1, TAG_ACT, 5, 0, 1, NO_DEPS), -1);
    cr_assert_eq(plan_build_status(q, &e), ERR_RUN);
    plan_free(q);
}

Test(plan, groups_are_sorted_and_checked)
{
    int g = plan_add_group(p, (int[]){1, 0}, 2);
    cr_assert_eq(g, 0);
    cr_assert_eq(p->groups.items[0].ranks[0], 0);
    cr_assert_eq(p->groups.items[0].ranks[1], 1);
    /* the message names the member: read before the sorted copy is freed
     * (a use-after-free that -DSTRATA_SANITIZE=address caught here) */
    struct err e = {0};
    cr_assert_eq(plan_add_group(p, (int[]){1, 1}, 2), -1);
    cr_assert_eq(plan_build_status(p, &e), ERR_RUN);
    cr_assert(strstr(e.msg, "group member 1 is out of range or repeated"), "%s", e.msg);
    cr_assert_eq(p->groups.len, 1);
}

Test(plan, create_refuses_no_workers)
{
    struct err e = {0};
    cr_assert_null(plan_create("x", wl, 0, 0, 1, 1, &e));
    cr_assert_eq(e.code, ERR_INPUT);
}

Test(plan, servers_are_the_last_ranks)
{
    struct err e = {0};
    struct plan *q = plan_create("ps", wl, 3, 2, 30, 1, &e);
    cr_assert_eq(q->n_ranks, 5);
    for (int r = 0; r < 5; r++) cr_assert_eq(q->ranks[r].is_server, r >= 3);
    plan_free(q);
}

Test(plan, tags_round_trip)
{
    struct { enum tag_kind kind; int boundary, mb; } cases[] = {
        {TAG_ACT, 0, 0}, {TAG_GRAD, 1, 3}, {TAG_ACT, PLAN_MAX_BOUNDARY, PLAN_MAX_MB},
        {TAG_GRAD, PLAN_MAX_BOUNDARY, PLAN_MAX_MB}, {TAG_GRAD, 17, 99999},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t tag = plan_tag(cases[i].kind, cases[i].boundary, cases[i].mb);
        cr_assert_eq(plan_tag_kind(tag), cases[i].kind);
        cr_assert_eq(plan_tag_boundary(tag), cases[i].boundary);
        cr_assert_eq(plan_tag_mb(tag), cases[i].mb);
    }
    cr_assert_neq(plan_tag(TAG_ACT, 1, 0), plan_tag(TAG_GRAD, 1, 0));
}

Test(plan, op_infos_match_the_enum)
{
    const char *names[OP_N_KINDS] = {"FORWARD",        "BACKWARD",        "SEND",
                                     "RECV",           "ALLREDUCE",       "PUSH",
                                     "PULL",           "UPDATE",          "BACKWARD_INPUT",
                                     "BACKWARD_WEIGHT", "REDUCE_SCATTER", "ALL_GATHER"};
    cr_assert_eq(OP_N_KINDS, 12);
    for (int k = 0; k < OP_N_KINDS; k++) {
        cr_assert_str_eq(op_infos[k].name, names[k]);
        cr_assert(op_infos[k].meaning && *op_infos[k].meaning);
    }
    cr_assert_str_eq(op_infos[OP_ALLREDUCE].name, "ALLREDUCE");
    cr_assert_eq(op_infos[OP_FORWARD].cls, OPC_COMPUTE);
    cr_assert_eq(op_infos[OP_UPDATE].stream, STREAM_COMPUTE);
    cr_assert_eq(op_infos[OP_RECV].cls, OPC_P2P);
    cr_assert_eq(op_infos[OP_PULL].cls, OPC_SERVER);
    cr_assert_eq(op_infos[OP_ALLREDUCE].cls, OPC_COLLECTIVE);
    cr_assert_eq(op_infos[OP_REDUCE_SCATTER].cls, OPC_COLLECTIVE);
    cr_assert_eq(op_infos[OP_ALL_GATHER].stream, STREAM_COMM);
    cr_assert_eq(op_infos[OP_SEND].stream, STREAM_COMM);
    cr_assert_str_eq(policy_infos[POLICY_BACKUP].name, "backup");
    cr_assert_str_eq(policy_infos[POLICY_NONE].name, "none");
}

Test(plan, free_accepts_null)
{
    plan_free(NULL);
}

/* plan_shard: equal shards of count / n, the remainder with the last
 * member, covering the block once (counted by hand: 10 over 4 is 2,2,2,4). */
Test(plan, shards_cover_the_block_once_with_the_remainder_last)
{
    int64_t lo, hi;
    const int64_t want[4][2] = {{0, 2}, {2, 4}, {4, 6}, {6, 10}};
    for (int k = 0; k < 4; k++) {
        plan_shard(10, 4, k, &lo, &hi);
        cr_assert(lo == want[k][0] && hi == want[k][1], "shard %d: [%lld,%lld)", k,
                  (long long)lo, (long long)hi);
    }
    plan_shard(3, 4, 0, &lo, &hi);
    cr_assert(lo == 0 && hi == 0, "fewer elements than members: empty shards first");
    plan_shard(3, 4, 3, &lo, &hi);
    cr_assert(lo == 0 && hi == 3);
}

/* sim/cost.c: the roofline for compute ops and the alpha-beta all-reduce
 * models. Expected values are the formulas of sim/cost.h worked by hand with
 * the numbers written in each test (or the preset figures of sim/cluster.c,
 * restated here). Tolerance: 1e-12 relative; the largest difference seen is
 * printed by the tests that sweep. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "../core/plan_check.h"
#include "../sim/cost.h"

#define REL_TOL 1e-12

static double rel_diff(double got, double want)
{
    if (got == want) return 0;
    return fabs(got - want) / fmax(fabs(want), 1e-300);
}

#define EXPECT_CLOSE(got, want, ...)                                                          \
    cr_expect_leq(rel_diff((got), (want)), REL_TOL, "got %.17g, want %.17g: " __VA_ARGS__, \
                  (got), (want))

static struct cluster preset(const char *name)
{
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(name, &c, &e), 0, "%s", e.msg);
    return c;
}

/* A device with round numbers: 1 TFLOP/s, 100 GB/s, 10 us an op. */
static struct cluster round_box(void)
{
    struct cluster c = {.name = "round"};
    c.device = (struct device_profile){.flops_per_s = 1e12, .mem_bw_bytes_per_s = 1e11,
                                       .op_overhead_s = 1e-5, .mem_bytes = 1LL << 30};
    c.intra = (struct link_profile){.latency_s = 1e-6, .bw_bytes_per_s = 1e11};
    c.inter = (struct link_profile){.latency_s = 1e-5, .bw_bytes_per_s = 1e10};
    c.devices_per_node = 4;
    c.nodes = 4;
    return c;
}

static struct op make_op(enum op_kind kind, int lo, int hi, double flops, int64_t bytes)
{
    return (struct op){.kind = kind, .stream = op_infos[kind].stream, .lo = lo, .hi = hi,
                       .mb = 0, .peer = -1, .group = -1, .bytes = bytes, .flops = flops};
}

/* ---- compute --------------------------------------------------------- */

Test(cost, compute_bound_op_takes_flops_over_rate_plus_overhead)
{
    struct cluster c = round_box();
    /* 2e9 FLOPs / 1e12 = 2 ms; 1e8 bytes / 1e11 = 1 ms; the slower is arithmetic. */
    struct op op = make_op(OP_FORWARD, 0, 2, 2e9, 100000000);
    EXPECT_CLOSE(cost_compute_s(&c, &op), 2e-3 + 1e-5);
    op.kind = OP_BACKWARD;
    EXPECT_CLOSE(cost_compute_s(&c, &op), 2e-3 + 1e-5, "the op's own FLOPs, not a 2x rule");
}

Test(cost, memory_bound_op_takes_bytes_over_bandwidth_plus_overhead)
{
    struct cluster c = round_box();
    /* 1e8 FLOPs / 1e12 = 0.1 ms; 5e8 bytes / 1e11 = 5 ms. */
    struct op op = make_op(OP_UPDATE, 0, 3, 1e8, 500000000);
    EXPECT_CLOSE(cost_compute_s(&c, &op), 5e-3 + 1e-5);
    /* The ridge point: 10 FLOPs a byte. Both sides 1 ms. */
    op = make_op(OP_FORWARD, 0, 1, 1e9, 100000000);
    EXPECT_CLOSE(cost_compute_s(&c, &op), 1e-3 + 1e-5);
}

Test(cost, empty_compute_op_costs_its_overhead)
{
    struct cluster c = round_box();
    struct op op = make_op(OP_FORWARD, 0, 1, 0, 0);
    EXPECT_CLOSE(cost_compute_s(&c, &op), 1e-5);
}

/* A small MLP layer on an H100 is all overhead: 784x256 weights, 64 samples.
 * Arithmetic: 2*64*784*256 = 25,690,112 FLOPs at 0.5 * 494.7e12 = 0.104 us.
 * Memory: 4 (784*256 + 64 (784 + 256)) = 1,069,056 bytes at 0.9 * 3.35e12
 * = 0.355 us, the bound. Beside them, 5 us of overhead. */
Test(cost, small_layer_on_h100_is_dominated_by_overhead)
{
    struct cluster c = preset("h100-nvlink-ib");
    int64_t bytes = 4 * (784 * 256 + 64 * (784 + 256));
    cr_assert_eq(bytes, 1069056);
    struct op op = make_op(OP_FORWARD, 0, 1, 2.0 * 64 * 784 * 256, bytes);
    EXPECT_CLOSE(cost_compute_s(&c, &op), 1069056 / (0.9 * 3.35e12) + 5e-6);
    cr_expect_lt(cost_compute_s(&c, &op), 1.1 * 5e-6);
}

Test(cost, communication_ops_cost_nothing_here)
{
    struct cluster c = round_box();
    enum op_kind comm[] = {OP_SEND, OP_RECV, OP_ALLREDUCE, OP_PUSH, OP_PULL};
    for (size_t i = 0; i < sizeof comm / sizeof comm[0]; i++) {
        struct op op = make_op(comm[i], 0, 4, 0, 1 << 20);
        cr_expect_eq(cost_compute_s(&c, &op), 0, "%s", op_infos[comm[i]].name);
    }
}

Test(cost, ideal_compute_is_the_unit_cost)
{
    struct cluster c = preset("ideal");
    for (int k = 0; k < OP_N_KINDS; k++) {
        struct op op = make_op((enum op_kind)k, 2, 5, 3e12, 1 << 30);
        cr_expect_eq(cost_compute_s(&c, &op), plan_unit_cost(&op), "%s", op_infos[k].name);
    }
    struct op fwd = make_op(OP_FORWARD, 2, 5, 3e12, 1 << 30);
    struct op bwd = make_op(OP_BACKWARD, 2, 5, 3e12, 1 << 30);
    cr_expect_eq(cost_compute_s(&c, &fwd), 3, "hi - lo");
    cr_expect_eq(cost_compute_s(&c, &bwd), 6, "2 (hi - lo)");
}

/* ---- links ----------------------------------------------------------- */

Test(cost, link_is_intra_on_one_node_and_inter_across)
{
    struct cluster c = round_box();   /* 4 devices a node */
    cr_expect_eq(cost_link(&c, 0, 3).bw_bytes_per_s, c.intra.bw_bytes_per_s);
    cr_expect_eq(cost_link(&c, 5, 6).latency_s, c.intra.latency_s);
    cr_expect_eq(cost_link(&c, 3, 4).bw_bytes_per_s, c.inter.bw_bytes_per_s);
    cr_expect_eq(cost_link(&c, 12, 1).latency_s, c.inter.latency_s);
}

/* ---- all-reduce ------------------------------------------------------ */

static const int64_t N_BYTES = 100000000;   /* 100 MB of gradients */

/* Ring: 2(p-1)(alpha + n/(p beta)), on one node at NVLink's 3 us and
 * 450 GB/s, across nodes at InfiniBand's 5 us and 50 GB/s. */
Test(cost, ring_matches_the_closed_form_on_one_node_and_across_nodes)
{
    struct cluster c = preset("h100-nvlink-ib");
    cr_assert_eq(c.allreduce, ALLREDUCE_RING);
    double n = (double)N_BYTES, worst = 0;
    for (int p = 2; p <= 8; p *= 2) {
        int one_node[8], spread[8];
        for (int i = 0; i < p; i++) {
            one_node[i] = i;       /* node 0 */
            spread[i] = 8 * i;     /* node i */
        }
        double want_intra = 2.0 * (p - 1) * (3e-6 + n / (p * 450e9));
        double want_inter = 2.0 * (p - 1) * (5e-6 + n / (p * 50e9));
        double got_intra = cost_allreduce_s(&c, one_node, p, N_BYTES);
        double got_inter = cost_allreduce_s(&c, spread, p, N_BYTES);
        EXPECT_CLOSE(got_intra, want_intra, "p = %d, one node", p);
        EXPECT_CLOSE(got_inter, want_inter, "p = %d, across nodes", p);
        worst = fmax(worst, fmax(rel_diff(got_intra, want_intra), rel_diff(got_inter, want_inter)));
    }
    /* p = 8 across nodes: 14 (5e-6 + 1e8 / 4e11) = 3.57 ms. */
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){0, 8, 16, 24, 32, 40, 48, 56}, 8, N_BYTES), 3.57e-3);
    cr_log_info("ring closed form: largest relative difference %.3g (tolerance %.0e)", worst,
                REL_TOL);
}

Test(cost, ring_that_touches_a_second_node_runs_at_the_inter_link)
{
    struct cluster c = preset("h100-nvlink-ib");
    double n = (double)N_BYTES;
    /* Ranks 6..9: two on node 0, two on node 1. */
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){6, 7, 8, 9}, 4, N_BYTES),
                 2.0 * 3 * (5e-6 + n / (4 * 50e9)));
}

Test(cost, one_rank_and_the_ideal_cluster_cost_nothing)
{
    struct cluster h = preset("h100-nvlink-ib"), ideal = preset("ideal");
    for (int a = 0; a < 3; a++) {
        h.allreduce = ideal.allreduce = (enum allreduce_algo)a;
        cr_expect_eq(cost_allreduce_s(&h, (int[]){5}, 1, N_BYTES), 0, "%s", allreduce_names[a]);
        cr_expect_eq(cost_allreduce_s(&ideal, (int[]){0, 1, 8, 9}, 4, N_BYTES), 0, "%s",
                     allreduce_names[a]);
    }
}

Test(cost, empty_message_costs_the_latency_of_every_step)
{
    struct cluster c = round_box();
    /* Ring over 4 ranks of node 0: 2 * 3 steps of 1 us. */
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){0, 1, 2, 3}, 4, 0), 6e-6);
}

/* Tree: 2 ceil(log2 p)(alpha + n/beta). */
Test(cost, tree_matches_its_formula_by_hand)
{
    struct cluster c = preset("h100-nvlink-ib");
    c.allreduce = ALLREDUCE_TREE;
    /* 5 ranks on 5 nodes: ceil(log2 5) = 3 levels; 6 (5e-6 + 1e8 / 5e10) = 6 * 2.005e-3. */
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){0, 8, 16, 24, 32}, 5, N_BYTES), 0.01203);
    /* 8 ranks on one node: 3 levels; 6 (3e-6 + 1e8 / 4.5e11). */
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){0, 1, 2, 3, 4, 5, 6, 7}, 8, N_BYTES),
                 6 * (3e-6 + 1e8 / 4.5e11));
    /* 2 ranks: one level each way. 4 ranks: exactly 2. */
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){0, 1}, 2, N_BYTES), 2 * (3e-6 + 1e8 / 4.5e11));
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){0, 1, 2, 3}, 4, N_BYTES), 4 * (3e-6 + 1e8 / 4.5e11));
}

/* Tree is latency-optimal, ring bandwidth-optimal: 16 ranks on 16 nodes of
 * h100-nvlink-ib. 1 KB: tree 8 (5e-6 + 2e-8) = 40.2 us, ring 30 (5e-6 +
 * 1.25e-9) = 150 us. 100 MB: tree 8 * 2.005 ms = 16.0 ms, ring 30 (5e-6 +
 * 1.25e-4) = 3.9 ms. */
Test(cost, tree_wins_small_messages_and_ring_large_ones)
{
    struct cluster c = preset("h100-nvlink-ib");
    int ranks[16];
    for (int i = 0; i < 16; i++) ranks[i] = 8 * i;
    c.allreduce = ALLREDUCE_TREE;
    double tree_small = cost_allreduce_s(&c, ranks, 16, 1000);
    double tree_large = cost_allreduce_s(&c, ranks, 16, N_BYTES);
    c.allreduce = ALLREDUCE_RING;
    double ring_small = cost_allreduce_s(&c, ranks, 16, 1000);
    double ring_large = cost_allreduce_s(&c, ranks, 16, N_BYTES);
    EXPECT_CLOSE(tree_small, 8 * (5e-6 + 1000 / 50e9));
    EXPECT_CLOSE(ring_large, 30 * (5e-6 + 1e8 / (16 * 50e9)));
    cr_expect_lt(tree_small, ring_small, "1 KB: tree %.3g s, ring %.3g s", tree_small, ring_small);
    cr_expect_lt(ring_large, tree_large, "100 MB: ring %.3g s, tree %.3g s", ring_large,
                 tree_large);
}

/* Hierarchical: 2(g-1)(alpha_i + n/(g beta_i)) + 2(k-1)(alpha_e + n/(g k beta_e)).
 * 16 ranks, 2 nodes of 8, 1 GB: intra 14 (3e-6 + 1e9 / 3.6e12) = 3.930889 ms,
 * inter 2 (5e-6 + 1e9 / 8e11) = 2.51 ms; 6.440889 ms in all. */
Test(cost, hierarchical_matches_its_formula_by_hand)
{
    struct cluster c = preset("h100-nvlink-ib");
    c.allreduce = ALLREDUCE_HIERARCHICAL;
    int ranks[16];
    for (int i = 0; i < 16; i++) ranks[i] = i;
    EXPECT_CLOSE(cost_allreduce_s(&c, ranks, 16, 1000000000), 14 * (3e-6 + 1e9 / 3.6e12) + 2.51e-3);
    EXPECT_CLOSE(cost_allreduce_s(&c, ranks, 16, 1000000000), 6.4408888888888889e-3);
    /* 4 nodes of 2 on a round box (4 a node): ranks 0,1 | 4,5 | 8,9 | 12,13.
     * 2 (1e-6 + 1e8 / 2e11) + 6 (1e-5 + 1e8 / 8e10) = 1.002 ms + 7.56 ms. */
    struct cluster r = round_box();
    r.allreduce = ALLREDUCE_HIERARCHICAL;
    EXPECT_CLOSE(cost_allreduce_s(&r, (int[]){0, 1, 4, 5, 8, 9, 12, 13}, 8, N_BYTES),
                 1.002e-3 + 7.56e-3);
}

/* Where one level of the hierarchy is trivial the hierarchical all-reduce
 * is the flat ring over the ranks, and that ring costs want_ring. */
static void expect_hierarchical_is_the_ring(const int *ranks, int n, double want_ring)
{
    struct cluster c = preset("h100-nvlink-ib");
    c.allreduce = ALLREDUCE_RING;
    double ring = cost_allreduce_s(&c, ranks, n, N_BYTES);
    c.allreduce = ALLREDUCE_HIERARCHICAL;
    EXPECT_CLOSE(cost_allreduce_s(&c, ranks, n, N_BYTES), ring);
    EXPECT_CLOSE(ring, want_ring);
}

Test(cost, hierarchical_on_one_node_is_the_intra_ring)
{
    expect_hierarchical_is_the_ring((int[]){0, 1, 2, 3, 4, 5, 6, 7}, 8,
                                    14 * (3e-6 + 1e8 / (8 * 450e9)));
}

Test(cost, hierarchical_with_one_rank_a_node_is_the_inter_ring)
{
    expect_hierarchical_is_the_ring((int[]){0, 8, 16, 24}, 4, 6 * (5e-6 + 1e8 / (4 * 50e9)));
}

/* Uneven nodes (8 ranks on node 0, 2 on node 1): the intra phases wait for
 * the fuller node (g = 8), the inter ring for the emptier one, whose two
 * devices carry shards of n/2. */
Test(cost, hierarchical_on_uneven_nodes_waits_for_the_fullest_and_the_emptiest)
{
    struct cluster c = preset("h100-nvlink-ib");
    c.allreduce = ALLREDUCE_HIERARCHICAL;
    int ranks[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    double n = (double)N_BYTES;
    double want = 14 * (3e-6 + n / (8 * 450e9)) + 2 * (5e-6 + (n / 2) / (2 * 50e9));
    EXPECT_CLOSE(cost_allreduce_s(&c, ranks, 10, N_BYTES), want);
}

Test(cost, rank_order_in_the_group_does_not_matter)
{
    struct cluster c = preset("h100-nvlink-ib");
    int sorted[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    int shuffled[10] = {9, 3, 0, 8, 5, 1, 7, 2, 6, 4};
    for (int a = 0; a < 3; a++) {
        c.allreduce = (enum allreduce_algo)a;
        cr_expect_eq(cost_allreduce_s(&c, shuffled, 10, N_BYTES),
                     cost_allreduce_s(&c, sorted, 10, N_BYTES), "%s", allreduce_names[a]);
    }
}

/* Why hierarchical exists: 16 ranks on 2 DGX H100 nodes, 1 GB of gradients.
 * Flat ring across nodes, every step at InfiniBand's 5 us and 50 GB/s:
 *   30 (5e-6 + 1e9 / 8e11) = 37.65 ms.
 * Hierarchical: 14 steps on NVLink, 2 on InfiniBand: 6.44 ms, 5.8x faster.
 * Small messages too (1 KB): ring 30 x 5 us = 150 us, hierarchical
 * 14 x 3 + 2 x 5 = 52 us. */
Test(cost, hierarchical_beats_the_flat_ring_across_h100_nodes)
{
    struct cluster c = preset("h100-nvlink-ib");
    int ranks[16];
    for (int i = 0; i < 16; i++) ranks[i] = i;
    c.allreduce = ALLREDUCE_RING;
    double ring = cost_allreduce_s(&c, ranks, 16, 1000000000);
    c.allreduce = ALLREDUCE_HIERARCHICAL;
    double hier = cost_allreduce_s(&c, ranks, 16, 1000000000);
    EXPECT_CLOSE(ring, 37.65e-3);
    EXPECT_CLOSE(hier, 6.4408888888888889e-3);
    cr_expect_gt(ring / hier, 5.8, "ring %.4g ms, hierarchical %.4g ms", 1e3 * ring, 1e3 * hier);
    cr_log_info("1 GB over 16 H100s on 2 nodes: ring %.4g ms, hierarchical %.4g ms (%.2fx)",
                1e3 * ring, 1e3 * hier, ring / hier);
}

/* ---- the reduction's gamma and shared cores ---------------------------- */

/* Ring with gamma: 2(p-1)(alpha + n/(p beta)) + (p-1)/p n gamma. */
Test(cost, ring_adds_the_reduction_at_gamma_a_byte)
{
    struct cluster c = round_box();
    c.allreduce_gamma_s_per_byte = 1e-10;
    double n = 1e6;
    /* 4 ranks of node 0: 6 (1e-6 + 1e6 / 4e11) + 0.75 * 1e6 * 1e-10 = 2.1e-5 + 7.5e-5 */
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){0, 1, 2, 3}, 4, (int64_t)n),
                 6 * (1e-6 + n / 4e11) + 0.75 * n * 1e-10);
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){0, 1, 2, 3}, 4, (int64_t)n), 9.6e-5);
}

Test(cost, tree_and_hierarchical_add_their_reductions)
{
    struct cluster c = round_box();
    c.allreduce_gamma_s_per_byte = 1e-10;
    double n = 1e6;
    c.allreduce = ALLREDUCE_TREE;
    /* 4 ranks of node 0: 2 levels; the reduce sums the whole n at each */
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){0, 1, 2, 3}, 4, (int64_t)n),
                 4 * (1e-6 + n / 1e11) + 2 * n * 1e-10);
    c.allreduce = ALLREDUCE_HIERARCHICAL;
    /* 2 nodes of 4: intra ring of 4 on n, inter ring of 2 on n/4 */
    int ranks[] = {0, 1, 2, 3, 4, 5, 6, 7};
    double intra = 6 * (1e-6 + n / 4e11) + 0.75 * n * 1e-10;
    double inter = 2 * (1e-5 + n / 4 / 2e10) + 0.5 * n / 4 * 1e-10;
    EXPECT_CLOSE(cost_allreduce_s(&c, ranks, 8, (int64_t)n), intra + inter);
}

/* Ranks that share cores: everything a rank does takes s times longer. */
Test(cost, oversubscription_stretches_compute_copies_and_reductions)
{
    struct cluster c = round_box();
    c.allreduce_gamma_s_per_byte = 1e-10;
    struct op fwd = make_op(OP_FORWARD, 0, 1, 1e9, 0);   /* 1 ms + 10 us alone */
    double alone_s = cost_compute_s(&c, &fwd);
    double ring_alone_s = cost_allreduce_s(&c, (int[]){0, 1}, 2, 1000000);
    c.oversubscription = 1.5;
    EXPECT_CLOSE(cost_compute_s(&c, &fwd), 1.5 * alone_s);
    EXPECT_CLOSE(cost_compute_s(&c, &fwd), 1.5 * (1e-3 + 1e-5));
    struct link_profile l = cost_link(&c, 0, 1);
    EXPECT_CLOSE(l.bw_bytes_per_s, 1e11 / 1.5);
    EXPECT_CLOSE(l.latency_s, 1e-6, "latency is not work: it does not stretch");
    /* 2 ranks: 2 (1e-6 + 1e6 / (2 beta')) + 0.5e6 gamma', beta' = beta/1.5, gamma' = 1.5 gamma */
    EXPECT_CLOSE(cost_allreduce_s(&c, (int[]){0, 1}, 2, 1000000),
                 2 * (1e-6 + 1e6 / (2 * 1e11 / 1.5)) + 0.5e6 * 1.5e-10);
    cr_expect_gt(cost_allreduce_s(&c, (int[]){0, 1}, 2, 1000000), ring_alone_s);
    /* 1 (or 0: a cluster not laid out) is no sharing */
    c.oversubscription = 0;
    EXPECT_CLOSE(cost_compute_s(&c, &fwd), alone_s);
}

/* A measured time-sharing factor (cluster_layout from a profile's
 * timeshare_slowdown) takes the rule's place, below 1 too: a rank alone
 * runs faster than the ranks calibrate measured together. */
Test(cost, measured_time_share_stretch_replaces_the_rule)
{
    struct cluster c = round_box();
    struct op fwd = make_op(OP_FORWARD, 0, 1, 1e9, 0);
    double alone_s = cost_compute_s(&c, &fwd);
    c.oversubscription = 1.5;
    c.time_share_stretch = 1.8;
    EXPECT_CLOSE(cost_compute_s(&c, &fwd), 1.8 * alone_s);
    EXPECT_CLOSE(cost_link(&c, 0, 1).bw_bytes_per_s, 1e11 / 1.8);
    c.time_share_stretch = 0.9;
    EXPECT_CLOSE(cost_compute_s(&c, &fwd), 0.9 * alone_s);
    c.time_share_stretch = 0;   /* none measured: the rule */
    EXPECT_CLOSE(cost_compute_s(&c, &fwd), 1.5 * alone_s);
}

/* ---- ZeRO-1's collectives ------------------------------------------------ */

/* Ring reduce-scatter and all-gather: (p-1)(alpha + n/(p beta)) each, half
 * of the ring all-reduce, on one node at NVLink's 3 us and 450 GB/s and
 * across nodes at InfiniBand's 5 us and 50 GB/s (the presets have no gamma,
 * so the reduce-scatter's sum adds nothing); whatever --allreduce says. */
Test(cost, reduce_scatter_and_all_gather_match_the_ring_closed_form)
{
    struct cluster c = preset("h100-nvlink-ib");
    cr_assert_eq(c.allreduce_gamma_s_per_byte, 0);
    double n = (double)N_BYTES, worst = 0;
    for (int a = 0; a < 3; a++) {
        c.allreduce = (enum allreduce_algo)a;
        for (int p = 2; p <= 8; p *= 2) {
            int one_node[8], spread[8];
            for (int i = 0; i < p; i++) {
                one_node[i] = i;
                spread[i] = 8 * i;
            }
            double want_intra = (p - 1) * (3e-6 + n / (p * 450e9));
            double want_inter = (p - 1) * (5e-6 + n / (p * 50e9));
            for (int k = 0; k < 2; k++) {
                enum op_kind kind = k ? OP_ALL_GATHER : OP_REDUCE_SCATTER;
                double got_intra = cost_collective_s(&c, kind, one_node, p, N_BYTES);
                double got_inter = cost_collective_s(&c, kind, spread, p, N_BYTES);
                EXPECT_CLOSE(got_intra, want_intra, "%s p = %d, one node", op_infos[kind].name, p);
                EXPECT_CLOSE(got_inter, want_inter, "%s p = %d, across nodes",
                             op_infos[kind].name, p);
                worst = fmax(worst, fmax(rel_diff(got_intra, want_intra),
                                         rel_diff(got_inter, want_inter)));
            }
        }
    }
    /* together they are the ring all-reduce: 8 ranks across nodes, 3.57 ms */
    c.allreduce = ALLREDUCE_RING;
    const int *eight = (int[]){0, 8, 16, 24, 32, 40, 48, 56};
    EXPECT_CLOSE(cost_collective_s(&c, OP_REDUCE_SCATTER, eight, 8, N_BYTES) +
                     cost_collective_s(&c, OP_ALL_GATHER, eight, 8, N_BYTES),
                 cost_collective_s(&c, OP_ALLREDUCE, eight, 8, N_BYTES));
    cr_log_info("reduce-scatter/all-gather closed form: largest relative difference %.3g", worst);
}

/* The reduce-scatter sums (p-1)/p of n bytes at gamma a byte; the all-gather
 * only copies. round_box with gamma 1 ns a byte, 4 ranks of node 0, 1 MB:
 * move 3 (1e-6 + 1e6 / 4e11) = 10.5 us, sum 3/4 1e6 1e-9 = 750 us. */
Test(cost, reduce_scatter_pays_the_sum_and_all_gather_does_not)
{
    struct cluster c = round_box();
    c.allreduce_gamma_s_per_byte = 1e-9;
    const int *four = (int[]){0, 1, 2, 3};
    EXPECT_CLOSE(cost_collective_s(&c, OP_REDUCE_SCATTER, four, 4, 1000000), 10.5e-6 + 750e-6);
    EXPECT_CLOSE(cost_collective_s(&c, OP_ALL_GATHER, four, 4, 1000000), 10.5e-6);
    struct cluster ideal = preset("ideal");
    cr_expect_eq(cost_collective_s(&ideal, OP_REDUCE_SCATTER, four, 4, 1000000), 0);
    cr_expect_eq(cost_collective_s(&c, OP_ALL_GATHER, (int[]){2}, 1, 1000000), 0);
}

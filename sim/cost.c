/* Op times on a cluster: a roofline for compute, the alpha-beta model for
 * all-reduce. Formulas and sources are in sim/cost.h. */
#include <math.h>

#include "../core/plan_check.h"
#include "cost.h"

/* How much longer a rank's work takes for sharing its node's cores
 * (cluster_layout): measured when the profile says, else ranks per core. */
static double share_of(const struct cluster *c)
{
    if (c->time_share_stretch > 0) return c->time_share_stretch;
    return c->oversubscription > 1 ? c->oversubscription : 1;
}

double cost_compute_s(const struct cluster *c, const struct op *op)
{
    if (c->is_ideal) return plan_unit_cost(op);
    if (op_infos[op->kind].cls != OPC_COMPUTE) return 0;   /* communication is timed by links */
    if (op->time_s > 0) return op->time_s;   /* measured where it ran: no roofline, no share */
    /* Roofline: bound by arithmetic or by memory traffic, whichever is slower. */
    double arith_s = op->flops / c->device.flops_per_s;
    double memory_s = (double)op->bytes / c->device.mem_bw_bytes_per_s;
    return (fmax(arith_s, memory_s) + c->device.op_overhead_s) * share_of(c);
}

/* A link as a rank that shares its core sees it: copies through shared
 * memory are that rank's own work, so they slow as its compute does. */
static struct link_profile shared(const struct cluster *c, struct link_profile l)
{
    l.bw_bytes_per_s /= share_of(c);
    return l;
}

struct link_profile cost_link(const struct cluster *c, int rank_a, int rank_b)
{
    return shared(c, cluster_node_of(c, rank_a) == cluster_node_of(c, rank_b) ? c->intra
                                                                                : c->inter);
}

/* How a group sits on nodes: k nodes, with g_max and g_min of its ranks on
 * the fullest and emptiest of them. */
struct occupancy {
    int k, g_max, g_min;
};

static void count_run(struct occupancy *o, int g)
{
    o->k++;
    if (g > o->g_max) o->g_max = g;
    if (g < o->g_min) o->g_min = g;
}

/* O(p) when the nodes come in order (plan groups hold ascending ranks, and a
 * rank's node grows with it); any other order falls back to O(p^2), fine for
 * the groups a test or a hand-made plan holds. */
static struct occupancy occupancy_of(const struct cluster *c, const int *ranks, int n)
{
    struct occupancy o = {0, 0, n};
    bool is_sorted = true;
    for (int i = 1; i < n && is_sorted; i++)
        is_sorted = cluster_node_of(c, ranks[i]) >= cluster_node_of(c, ranks[i - 1]);
    if (is_sorted) {
        int run = 1;
        for (int i = 1; i <= n; i++) {
            if (i < n && cluster_node_of(c, ranks[i]) == cluster_node_of(c, ranks[i - 1])) {
                run++;
                continue;
            }
            count_run(&o, run);
            run = 1;
        }
        return o;
    }
    for (int i = 0; i < n; i++) {
        int node = cluster_node_of(c, ranks[i]), g = 0;
        bool is_first = true;
        for (int j = 0; j < n; j++) {
            if (cluster_node_of(c, ranks[j]) != node) continue;
            if (j < i) is_first = false;
            g++;
        }
        if (is_first) count_run(&o, g);
    }
    return o;
}

static int ceil_log2(int p)
{
    int steps = 0;
    while ((1LL << steps) < p) steps++;
    return steps;
}

/* Ring all-reduce: reduce-scatter then all-gather, p-1 steps each of n/p
 * bytes (Patarasuk & Yuan, 2009); the reduce-scatter sums (p-1)/p n bytes
 * at gamma seconds a byte (Thakur, Rabenseifner & Gropp, 2005). */
static double ring_s(struct link_profile l, int p, double n, double gamma)
{
    return 2.0 * (p - 1) * (l.latency_s + n / (p * l.bw_bytes_per_s)) +
           (double)(p - 1) / p * n * gamma;
}

double cost_allreduce_s(const struct cluster *c, const int *ranks, int n_ranks, int64_t bytes)
{
    if (n_ranks <= 1 || c->is_ideal) return 0;
    int p = n_ranks;
    double n = (double)bytes;
    struct occupancy o = occupancy_of(c, ranks, p);
    struct link_profile intra = shared(c, c->intra), inter = shared(c, c->inter);
    double gamma = c->allreduce_gamma_s_per_byte * share_of(c);
    /* A flat algorithm that spans nodes runs at its slowest hop. */
    struct link_profile flat = o.k > 1 ? inter : intra;
    switch (c->allreduce) {
    case ALLREDUCE_RING:
        return ring_s(flat, p, n, gamma);
    case ALLREDUCE_TREE:
        /* Reduce up a binary tree, broadcast down: ceil(log2 p) levels each
         * way, the whole message at every level (unpipelined), summed at
         * every level of the reduce. */
        return 2.0 * ceil_log2(p) * (flat.latency_s + n / flat.bw_bytes_per_s) +
               ceil_log2(p) * n * gamma;
    case ALLREDUCE_HIERARCHICAL: {
        /* Intra-node reduce-scatter and all-gather (g devices: together an
         * intra ring of g), and between them an inter-node ring all-reduce
         * of each device's n/g shard among the k nodes:
         *   2(g-1)(alpha_i + n/(g beta_i)) + 2(k-1)(alpha_e + n/(g k beta_e)).
         * Nodes filled unevenly: the intra phases wait for the fullest node
         * (the ring time grows with g), and the inter phase for the
         * emptiest, whose devices carry the largest shards, n/g_min. Filled
         * evenly, g_max = g_min = g and this is the formula above. */
        double intra_s = ring_s(intra, o.g_max, n, gamma);
        double inter_s = ring_s(inter, o.k, n / o.g_min, gamma);
        return intra_s + inter_s;
    }
    }
    return 0;
}

double cost_collective_s(const struct cluster *c, enum op_kind kind, const int *ranks,
                         int n_ranks, int64_t bytes)
{
    if (kind == OP_ALLREDUCE) return cost_allreduce_s(c, ranks, n_ranks, bytes);
    if (n_ranks <= 1 || c->is_ideal) return 0;
    int p = n_ranks;
    double n = (double)bytes;
    struct occupancy o = occupancy_of(c, ranks, p);
    struct link_profile flat = shared(c, o.k > 1 ? c->inter : c->intra);
    double move_s = (p - 1) * (flat.latency_s + n / (p * flat.bw_bytes_per_s));
    if (kind == OP_REDUCE_SCATTER)
        return move_s + (double)(p - 1) / p * n * c->allreduce_gamma_s_per_byte * share_of(c);
    return move_s;   /* OP_ALL_GATHER: copies only */
}

/* Time of each op on a cluster: compute by a roofline, communication by the
 * alpha-beta model (a message of n bytes takes alpha + n / beta). On the
 * ideal cluster, compute takes plan_unit_cost time units and communication
 * nothing. */
#ifndef STRATA_COST_H
#define STRATA_COST_H

#include <stdint.h>

#include "../core/plan.h"
#include "cluster.h"

/* (max(flops / flops_per_s, bytes / mem_bw) + op_overhead) x s, before
 * jitter and stragglers, where s = c->time_share_stretch when the profile
 * measured time-sharing (cluster_layout), else c->oversubscription when > 1
 * (ranks time-sharing cores: each gets 1/s of one), else 1. An op with a
 * recorded time (op->time_s > 0, from a trace) takes that time instead. */
double cost_compute_s(const struct cluster *c, const struct op *op);

/* The link between two ranks: intra when they share a node, else inter;
 * its bandwidth over s (a copy through shared memory is a sharing rank's
 * own work). */
struct link_profile cost_link(const struct cluster *c, int rank_a, int rank_b);

/* An all-reduce of `bytes` over the group's ranks with c->allreduce, on the
 * links of cost_link, gamma = allreduce_gamma_s_per_byte x s:
 *   ring          2(p-1) (alpha + n / (p beta)) + (p-1)/p n gamma
 *                                                           (Patarasuk & Yuan, 2009)
 *   tree          2 ceil(log2 p) (alpha + n / beta) + ceil(log2 p) n gamma
 *                 (reduce then broadcast along a binary tree, unpipelined:
 *                 latency-optimal, bandwidth-poor)
 *   hierarchical  intra-node reduce-scatter, inter-node ring all-reduce of n/g
 *                 among the k nodes, intra-node all-gather (g devices a node):
 *                 2(g-1)(alpha_i + n/(g beta_i)) + 2(k-1)(alpha_e + n/(g k beta_e))
 *                 + (g-1)/g n gamma + (k-1)/k (n/g) gamma
 * The gamma terms are the reduction's arithmetic, the alpha-beta-gamma model
 * of Thakur, Rabenseifner & Gropp (2005); 0 on the GPU presets, whose
 * collectives reduce as they copy. A flat ring or tree that spans nodes runs
 * at the inter-node link's alpha and beta, its slowest hop. One rank: 0. */
double cost_allreduce_s(const struct cluster *c, const int *ranks, int n_ranks, int64_t bytes);

/* The time of a collective op of `kind` (ALLREDUCE, REDUCE_SCATTER,
 * ALL_GATHER) moving `bytes` (the whole buffer: a gradient or parameter
 * block) among the group's ranks. ALLREDUCE is cost_allreduce_s; the other
 * two are each half of a ring all-reduce, whatever c->allreduce (NCCL runs
 * them as rings), at the slowest hop as above:
 *   reduce-scatter  (p-1) (alpha + n / (p beta)) + (p-1)/p n gamma
 *   all-gather      (p-1) (alpha + n / (p beta))
 * (each member sends and receives (p-1)/p of n; Thakur, Rabenseifner &
 * Gropp, 2005). One rank, or the ideal cluster: 0. */
double cost_collective_s(const struct cluster *c, enum op_kind kind, const int *ranks,
                         int n_ranks, int64_t bytes);

#endif

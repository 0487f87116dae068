/* strata calibrate: this machine measured into a cluster profile that
 * `--cluster FILE` loads (sim/cluster.h).
 *
 *   compute   the executor's own FORWARD and BACKWARD of each dense layer of
 *             an mlp: model (nn/mlp: sgemm and the bias/activation pass) at
 *             the per-device batch, run on every rank at once as in a real
 *             run: flops_per_s = the plan's FLOPs of those ops / their time
 *   memory    the UPDATE of the whole model (sgd_momentum over its
 *             parameters): mem_bw_bytes_per_s = the bytes the plan counts
 *             for it (5 arrays of params floats) / its time
 *   overhead  a layer op of one sample and one feature in and out: what a
 *             compute op costs beyond its arithmetic (op_overhead_s)
 *   links     ping-pong between ranks 0 and 1 and MPI_Allreduce over all
 *             ranks at sizes from 8 B up, timed as nccl-tests times
 *             (untimed warm-up, barrier, timed calls), each the median of
 *             its calls; latency (alpha) and bandwidth (beta) fitted to the
 *             ping-pong's one-way times (calib_fit_link)
 *
 * Bandwidths are as nccl-tests defines them (doc/PERFORMANCE.md):
 * algbw = bytes / time; busbw = algbw for point-to-point and
 * algbw * 2(n-1)/n for an all-reduce of n ranks, the share of a link's
 * bandwidth a ring all-reduce needs, comparable across n.
 *
 * calib_run is collective over MPI_COMM_WORLD (2 or more ranks); the rest
 * are plain functions. */
#ifndef STRATA_BENCH_CALIBRATE_H
#define STRATA_BENCH_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/err.h"
#include "../core/workload.h"
#include "../nn/device.h"
#include "../sim/cluster.h"

#define CALIB_MAX_LAYERS 32
#define CALIB_MAX_SIZES 32

/* One layer's forward and backward on `rows` samples. */
struct calib_layer {
    int in, out;
    double fwd_flops, bwd_flops;     /* as core/plan.c counts them for these rows */
    double fwd_s, bwd_s;             /* median time of one call */
};

struct calib_compute {
    int rows;                        /* samples per op */
    int n_layers;
    struct calib_layer layers[CALIB_MAX_LAYERS];
    double flops_per_s;              /* sum of the FLOPs / sum of the times */
    int64_t update_bytes;            /* the UPDATE of every layer, as the plan counts it */
    double update_s;
    double mem_bw_bytes_per_s;       /* update_bytes / update_s */
    double op_overhead_s;            /* a layer op of 1 sample, 1 feature in and out */
};

struct calib_size {
    int64_t bytes;
    int iters;                       /* timed calls of each */
    double pingpong_s;               /* one way: half the median round trip */
    double allreduce_s;              /* the median call */
};

struct calib_comm {
    int n_ranks;                     /* in the all-reduce; ping-pong is ranks 0 and 1 */
    int n_sizes;
    struct calib_size sizes[CALIB_MAX_SIZES];
    double latency_s;                /* fitted to the ping-pong */
    double bw_bytes_per_s;
    double fit_worst;                /* largest |fit / measured - 1| over the sizes */
};

struct calib_setup {
    const struct device *dev;        /* initialised (dev->init) on every rank */
    const struct workload *wl;       /* an mlp: workload */
    int rows;                        /* the per-device batch */
    uint64_t seed;
    int64_t max_bytes;               /* largest message; sizes go 8 B, x4, ..., then max_bytes */
};

struct calib_result {
    struct calib_compute compute;    /* the mean over the ranks */
    struct calib_comm comm;
    struct cluster profile;          /* what cluster_write writes */
};

/* Measures everything; collective over MPI_COMM_WORLD, which must hold 2
 * or more ranks (ERR_INPUT otherwise). On every rank: 0, or the error that
 * every rank agrees on. out is filled on every rank. */
int calib_run(const struct calib_setup *s, struct calib_result *out, struct err *e);

/* The per-op compute figures on this process alone (no MPI). ERR_INPUT for
 * a workload that is not an mlp: or has more than CALIB_MAX_LAYERS layers,
 * or rows < 1. */
int calib_measure_compute(const struct device *dev, const struct workload *wl, int rows,
                          uint64_t seed, struct calib_compute *out, struct err *e);

/* Least squares fit of t = alpha + bytes / beta to n >= 2 points, on the
 * RELATIVE error: minimises sum ((alpha + bytes_i / beta) / t_i - 1)^2, so
 * an 8-byte latency and a 32 MiB transfer weigh the same (plain least
 * squares would fit the largest sizes and leave alpha to chance). When the
 * best alpha is negative, alpha = 0 and beta is refitted alone. ERR_INPUT
 * for n < 2, a time not > 0, or points that give no positive bandwidth. */
int calib_fit_link(const int64_t *bytes, const double *time_s, int n, double *alpha_s,
                   double *beta_bytes_per_s, struct err *e);

/* nccl-tests' bandwidths: bytes / time, and the all-reduce's bus bandwidth
 * algbw * 2(n-1)/n (n = 1: 0, nothing crosses a link). */
double calib_algbw(int64_t bytes, double time_s);
double calib_busbw_allreduce(double algbw, int n_ranks);

/* The profile of this machine: its device from c (mem_bytes_per_rank of
 * memory), both links from m's fit (one machine: ranks of any "node" talk
 * through the same shared memory), `cores` devices a node. name: for the
 * file's name key. */
void calib_profile(const struct calib_compute *c, const struct calib_comm *m, int cores,
                   int64_t mem_bytes_per_rank, const char *name, struct cluster *out);

#endif

/* strata calibrate: this machine measured into a cluster profile that
 * `--cluster FILE` loads (sim/cluster.h).
 *
 *   compute   a training step's FORWARD and BACKWARD of an mlp: model as the
 *             executor runs them (nn/mlp: sgemm, bias and activation, the
 *             loss; input rows gathered from the data set) at the
 *             per-device batch, on every rank at once as in a real run:
 *             flops_per_s = the plan's FLOPs of those ops / their time. Each
 *             layer alone is timed too, to show the GEMM efficiency by shape
 *   memory    the UPDATE of the whole model (sgd_momentum over its
 *             parameters): mem_bw_bytes_per_s = the bytes the plan counts
 *             for it (5 arrays of params floats) / its time
 *   overhead  a layer op of one sample and one feature in and out: what a
 *             compute op costs beyond its arithmetic (op_overhead_s)
 *   spread    of the step ops' times over the timed steps: a log-normal
 *             sigma of time / median for FORWARD, BACKWARD and UPDATE
 *             (calib_fit_sigma), which the simulator draws from
 *             (jitter_*_sigma, core/jitter.h)
 *   links     ping-pong between ranks 0 and 1 and an all-reduce over all
 *             ranks (MPI_Iallreduce, tested until done, as the executor
 *             runs one) at sizes from 8 B up, timed as nccl-tests times
 *             (untimed warm-up, barrier, timed calls), each the median of
 *             its calls; latency (alpha) and bandwidth (beta) fitted to the
 *             ping-pong's one-way times (calib_fit_link), and the
 *             all-reduce's gamma to its times (calib_fit_gamma)
 *   sharing   k = 1 .. cores + 2 processes (forked by rank 0 while the
 *             other ranks sleep) each running the same training steps at
 *             once, free to use every core: how much longer a step takes
 *             when k ranks share the machine (timeshare_slowdown)
 *   cores     the machine's online cores: its ranks share them
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
#include "../nn/data.h"
#include "../nn/device.h"
#include "../sim/cluster.h"

#define CALIB_MAX_LAYERS 32
#define CALIB_MAX_SIZES 32

/* One layer's forward and backward alone, repeated on `rows` samples. */
struct calib_layer {
    int in, out;
    double fwd_flops, bwd_flops;     /* as core/plan.c counts them for these rows */
    double fwd_s, bwd_s;             /* median time of one call */
};

struct calib_compute {
    int rows;                        /* samples per op: the per-device batch */
    int n_layers;
    struct calib_layer layers[CALIB_MAX_LAYERS];   /* each alone: GEMM efficiency by shape */
    /* A training step's compute ops as the executor runs them, one after
     * the other (caches as warm or cold as in a run): FORWARD of every layer
     * with its input rows gathered from the data and the loss, BACKWARD of
     * every layer, UPDATE. Each the median over the steps. */
    bool is_gathered;                /* inputs gathered from a data set (else fixed rows) */
    double fwd_flops, bwd_flops;     /* the whole model's, as the plan counts them */
    double fwd_s, bwd_s;
    double flops_per_s;              /* (fwd_flops + bwd_flops) / (fwd_s + bwd_s) */
    int64_t update_bytes;            /* the UPDATE of every layer, as the plan counts it */
    double update_s;
    double mem_bw_bytes_per_s;       /* update_bytes / update_s */
    double op_overhead_s;            /* a layer op of 1 sample, 1 feature in and out */
    /* The spread of those step ops' times over the steps: a log-normal
     * sigma of each (calib_fit_sigma), the profile's jitter_*_sigma. */
    int n_steps;                     /* steps timed */
    double fwd_sigma, bwd_sigma, update_sigma;
    /* Time-sharing (calib_run only): k = 1 .. n_timeshare processes each
     * running the same steps at once; step_s[k-1] is their mean time of a
     * step, slowdown[k-1] = step_s[k-1] / step_s[n_ranks-1] (n_ranks: the
     * ranks whose compute the figures above are): the profile's
     * timeshare_slowdown. */
    int n_timeshare;
    int timeshare_steps;             /* steps each process ran */
    double timeshare_step_s[CLUSTER_MAX_TIMESHARE];
    double timeshare_slowdown[CLUSTER_MAX_TIMESHARE];
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
    double gamma_s_per_byte;         /* the all-reduce's reduction, fitted (calib_fit_gamma) */
};

/* The job's hosts (MPI_Comm_split_type, shared memory: the ranks that can
 * share memory are one node) and, on two or more, each link class apart:
 *   intra  ping-pong between rank 0 and the next rank of its node, and an
 *          all-reduce within rank 0's node (the first phase of a
 *          hierarchical all-reduce; the other nodes' ranks sleep)
 *   inter  ping-pong between rank 0 and the lowest rank of another node,
 *          and an all-reduce over one rank a node (the leaders, its second
 *          phase) */
struct calib_nodes {
    int n_nodes;                     /* 1: one machine, nothing below is measured */
    int devices_per_node;            /* the most ranks on one node */
    int node_of_rank0_size;          /* ranks on rank 0's node */
    int intra_peer, inter_peer;      /* the world ranks rank 0 pinged; -1 = none */
    bool has_intra;                  /* rank 0's node holds 2 ranks or more */
    struct calib_comm intra, inter;
};

struct calib_setup {
    int cores;                       /* online cores: sharing is measured up to cores + 2 */
    const struct device *dev;        /* initialised (dev->init) on every rank */
    const struct workload *wl;       /* an mlp: workload */
    const struct dataset *train;     /* its inputs come from here; NULL: fixed rows */
    int rows;                        /* the per-device batch */
    uint64_t seed;
    int64_t max_bytes;               /* largest message; sizes go 8 B, x4, ..., then max_bytes */
};

struct calib_result {
    struct calib_compute compute;    /* the mean over the ranks */
    struct calib_comm comm;          /* one machine: ranks 0 and 1; several: intra (or inter) */
    struct calib_nodes nodes;
    struct cluster profile;          /* what cluster_write writes */
};

/* Measures everything; collective over MPI_COMM_WORLD, which must hold 2
 * or more ranks (ERR_INPUT otherwise). On every rank: 0, or the error that
 * every rank agrees on. out is filled on every rank. */
int calib_run(const struct calib_setup *s, struct calib_result *out, struct err *e);

/* The compute figures on this process alone (no MPI); train (may be NULL)
 * must fit the model (data_check_model). ERR_INPUT for a workload that is
 * not an mlp: or has more than CALIB_MAX_LAYERS layers, rows < 1, or rows
 * beyond the training samples. */
int calib_measure_compute(const struct device *dev, const struct workload *wl,
                          const struct dataset *train, int rows, uint64_t seed,
                          struct calib_compute *out, struct err *e);

/* Least squares fit of t = alpha + bytes / beta to n >= 2 points, on the
 * RELATIVE error: minimises sum ((alpha + bytes_i / beta) / t_i - 1)^2, so
 * an 8-byte latency and a 32 MiB transfer weigh the same (plain least
 * squares would fit the largest sizes and leave alpha to chance). When the
 * best alpha is negative, alpha = 0 and beta is refitted alone. ERR_INPUT
 * for n < 2, a time not > 0, or points that give no positive bandwidth. */
int calib_fit_link(const int64_t *bytes, const double *time_s, int n, double *alpha_s,
                   double *beta_bytes_per_s, struct err *e);

/* The simulator's ring all-reduce of bytes over n_ranks (sim/cost.h):
 * 2(p-1)(alpha + n/(p beta)) + (p-1)/p n gamma. */
double calib_ring_s(double alpha_s, double beta_bytes_per_s, double gamma_s_per_byte,
                    int n_ranks, int64_t bytes);

/* gamma >= 0 that fits the ring all-reduce to the measured all-reduce
 * times, alpha and beta held at the ping-pong's: least squares on the
 * relative error, as calib_fit_link. It takes in whatever the MPI's
 * all-reduce costs beyond a ring's transfers: the summing, and an
 * algorithm that moves more than a ring (for 2 ranks, Open MPI's
 * nonblocking all-reduce sends the whole message each way). 0 when the
 * transfers alone are as slow as measured. */
double calib_fit_gamma(const int64_t *bytes, const double *time_s, int n, int n_ranks,
                       double alpha_s, double beta_bytes_per_s);

/* The sigma of a log-normal fitted to n > 0 positive times, from their
 * interquartile range: (ln q75 - ln q25) / 1.349, the IQR of a normal being
 * 1.349 sigma. Sorts t. A quantile fit rather than the log's standard
 * deviation: a few preemptions by other load (a 10 ms stall in 1 ms ops)
 * would set the standard deviation alone, and they belong to the machine's
 * other tenants, not to the op; the body of the distribution is what makes
 * quiet ranks drift apart. 0 for n < 4 (no quartiles to speak of). */
double calib_fit_sigma(double *t, int n);

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

/* On two nodes or more, the profile's links and layout from them: intra
 * from nd->intra (from nd->inter when no node held 2 ranks), inter from
 * nd->inter, devices_per_node and nodes (measured_nodes) as found; gamma
 * from the intra all-reduce, which is where a hierarchical all-reduce sums
 * most. One node: out is left as it is. */
void calib_profile_nodes(const struct calib_nodes *nd, struct cluster *out);

/* Collective over MPI_COMM_WORLD: nd's hosts (n_nodes, devices_per_node,
 * the peers), nothing timed. */
int calib_nodes_split(struct calib_nodes *nd, struct err *e);

/* Collective: times nd's two link classes (calib_nodes_split first, with
 * n_nodes > 1) and fits each; *world gets the intra links (the inter ones
 * when there are none) for what prints one link. */
int calib_nodes_measure(struct calib_nodes *nd, int64_t max_bytes, struct calib_comm *world,
                        struct err *e);

#endif

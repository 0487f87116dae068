/* The simulated hardware: nodes x devices per node, a device profile, and
 * the links inside a node and between nodes, from a preset or a profile
 * file of `key = value` lines (what `strata calibrate` will write). */
#ifndef STRATA_CLUSTER_H
#define STRATA_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/err.h"
#include "../core/jitter.h"
#include "failures.h"

enum allreduce_algo { ALLREDUCE_RING, ALLREDUCE_TREE, ALLREDUCE_HIERARCHICAL };

/* Entries of a measured time-sharing table: k = 1 .. 128 ranks on a node. */
#define CLUSTER_MAX_TIMESHARE 128

struct device_profile {
    double flops_per_s;          /* sustained, on the model's GEMMs */
    double mem_bw_bytes_per_s;   /* sustained memory bandwidth */
    double op_overhead_s;        /* per compute op: launch and framework cost */
    int64_t mem_bytes;           /* capacity */
};

struct link_profile {
    double latency_s;            /* alpha */
    double bw_bytes_per_s;       /* beta, per direction; INFINITY = free */
};

struct cluster {
    char name[64];               /* preset name or file path as given */
    bool is_ideal;               /* unit costs: see plan_unit_cost; all communication free */
    struct device_profile device;
    struct link_profile intra;   /* between devices of one node (NVLink, PCIe, loopback) */
    struct link_profile inter;   /* between nodes (InfiniBand, Ethernet) */
    int devices_per_node;        /* ranks a node holds */
    /* Cores a node's ranks share; 0 = none shared (each device is its own,
     * as a GPU is). CPU ranks of one machine: more ranks than cores (a
     * parameter server is a rank too) time-share them; see cluster_layout. */
    int cores_per_node;
    /* All-reduce: seconds per byte reduced beyond the transfers, the gamma
     * of the alpha-beta-gamma model (Thakur, Rabenseifner & Gropp, 2005):
     * summing what arrives, which MPI on CPUs does after each transfer; 0 =
     * fused into the transfer (NCCL's kernels reduce as they copy). */
    double allreduce_gamma_s_per_byte;
    /* The spread of compute op times that calibrate measured: the sigma of
     * a mean-1 log-normal ratio per op kind (core/jitter.h); all 0 = none
     * (presets, and profiles written before calibrate measured it). */
    struct jitter_spec jitter;
    /* Time-sharing as calibrate measured it: timeshare_slowdown[k-1] is how
     * many times longer a compute op takes when k ranks compute at once on
     * a node than the device figures above say (1 at the rank count those
     * were measured with). n_timeshare = 0: not measured, the rule of
     * cluster_layout holds. */
    int n_timeshare;
    double timeshare_slowdown[CLUSTER_MAX_TIMESHARE];
    /* What failures cost (sim/failures.h), all 0 in the presets and when a
     * profile leaves them out: checkpoints and restarts free, as they were
     * before the simulator priced them. A device writes (reads back) its
     * checkpoint at ckpt_write (ckpt_read) bytes/s, 0 or inf = free;
     * restart_s starts the job's processes again (or re-forms the group
     * after a shrink), plus restart_per_rank_s for each rank started (0 in
     * profiles written before calibrate measured it at two rank counts:
     * restart_s then prices any count); detect_s passes between a death and
     * its noticing. restart_s_at_ranks, relaunches calibrate timed at 1, 2,
     * ... ranks, prices a relaunch in their place when it has points
     * (failure_relaunch_s: piecewise-linear through them). */
    double ckpt_write_bw_bytes_per_s;
    double ckpt_read_bw_bytes_per_s;
    double restart_s;
    double restart_per_rank_s;
    struct relaunch_points restart_s_at_ranks;
    double detect_s;
    /* The nodes calibrate measured (its ranks' hosts); 0 = not said (presets,
     * one machine). What a run uses is `nodes` below: this only records
     * where the intra and inter links came from. */
    int measured_nodes;
    /* Set by cluster_layout, not a key of a file: */
    int nodes;
    enum allreduce_algo allreduce;
    double oversubscription;     /* ranks per core on the fullest node when > 1 (else 1) */
    double time_share_stretch;   /* the measured factor for the fullest node; 0 = none (the
                                  * oversubscription rule applies: sim/cost.h) */
};

extern const struct cluster cluster_presets[];
extern const size_t cluster_n_presets;
extern const char *const allreduce_names[];   /* "ring", "tree", "hierarchical" */

/* A preset by name, or else a profile file. Keys of a file: name, ideal,
 * flops_per_s, mem_bw_bytes_per_s, op_overhead_s, mem_bytes, devices_per_node,
 * intra_latency_s, intra_bw_bytes_per_s, inter_latency_s, inter_bw_bytes_per_s,
 * and optional ones: cores_per_node (0 when absent), allreduce_gamma_s_per_byte
 * (0), jitter_forward_sigma, jitter_backward_sigma, jitter_update_sigma (0:
 * from 0 to JITTER_MAX_SIGMA), timeshare_slowdown (a comma list of 1 to
 * CLUSTER_MAX_TIMESHARE numbers > 0; absent: not measured),
 * ckpt_write_bw_bytes_per_s, ckpt_read_bw_bytes_per_s (0 = free: > 0 or
 * inf), restart_s, restart_per_rank_s, detect_s (0), restart_s_at_ranks
 * (RANKS:SECONDS entries, commas, ranks increasing: "1:0.65,2:0.684,3:0.91";
 * absent: the restart_s line prices), nodes (0: the nodes
 * calibrate measured the links between) ('#' comments; unknown keys, bad numbers and
 * missing keys are ERR_INPUT naming the file and line). Neither: ERR_INPUT
 * naming --cluster and the presets. */
int cluster_load(const char *name_or_path, struct cluster *c, struct err *e);

/* The keys of a profile file, required ones first, each with its meaning
 * and what it allows: the text of `strata help cluster`. */
void cluster_print_keys(FILE *out);

/* --jitter: "auto" (NULL) keeps the profile's spread, "off" clears it, "on"
 * keeps it and is ERR_INPUT naming --jitter when the profile has none. */
int cluster_set_jitter(struct cluster *c, const char *choice, struct err *e);

/* Places n_ranks ranks, rank r on node r / devices_per_node: devices_per_node
 * from the option when > 0 (else the profile's), nodes from the option when
 * > 0 (else as many as needed; too few is ERR_INPUT naming --nodes), and the
 * all-reduce algorithm by name. With cores_per_node > 0, oversubscription is
 * the ranks of the fullest node over its cores, when more than 1: the ranks
 * time-share the cores (an MPI rank polls while it waits, so a waiting rank
 * holds its share too), and every rank's compute and copies run at 1 /
 * oversubscription of their speed (sim/cost.h). A profile with a measured
 * table replaces that rule: time_share_stretch = timeshare_slowdown[k-1]
 * for k ranks on the fullest node, and beyond the table's K entries
 * slowdown[K-1] x max(1, k / max(K, cores_per_node)) (past the cores,
 * ranks share them evenly). */
int cluster_layout(struct cluster *c, int n_ranks, long long nodes, long long devices_per_node,
                   const char *allreduce, struct err *e);

/* The measured slowdown of k ranks of a node busy at once (the table,
 * extrapolated past its end as cluster_layout does); 0 when not measured. */
double cluster_timeshare_of(const struct cluster *c, int k);

static inline int cluster_node_of(const struct cluster *c, int rank)
{
    return rank / c->devices_per_node;
}

/* What recovering costs on c for a device state (parameters and optimizer)
 * of state_bytes: a checkpoint written and read at the profile's
 * bandwidths, a commit a copy in memory (read and write: 2 x state_bytes at
 * mem_bw), restart_s, restart_per_rank_s, restart_s_at_ranks and detect_s
 * as they are. */
struct failure_costs cluster_failure_costs(const struct cluster *c, int64_t state_bytes);

/* Bytes that hold any profile's text. */
#define CLUSTER_TEXT_BYTES 8192

/* c as the text of a profile file into buf (NUL-terminated when n > 0);
 * returns the length it needs, as snprintf does. */
size_t cluster_format(const struct cluster *c, char *buf, size_t n);

/* Writes c as a profile file that cluster_load reads back. Atomic. */
int cluster_write(const struct cluster *c, const char *path, struct err *e);

#endif

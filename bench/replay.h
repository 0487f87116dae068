/* Trace-driven simulation: a run's trace (core/trace_read.h) replayed in the
 * simulator with every compute op taking the time it took in the trace
 * (per rank, step and op, with the delay its rank took before starting it:
 * replay_durations.c), a real parameter server's updates the time each
 * took, and communication the network model's. What
 * separates the two errors `strata validate` sees together: the replay's
 * error is the schedule's and the network's alone, the compute model being
 * out of it.
 *
 * What-if questions, combinable, each a second replay against the measured
 * run:
 *   without_stragglers  every op at its typical duration, a consistently
 *                       slow rank's own over its pace (replay_table_typical),
 *                       the servers' updates as measured, and per worker the share of
 *                       the job's time its own slowness cost (the replay
 *                       with that worker alone made typical)
 * --measured-comm gives communication its measured times as well, in every
 * replay of the trace's own plan on its own network (the home replay, the
 * per-rank shares, a what-if without stragglers alone): its error is then
 * the schedule's alone, the network model's left out too.
 *
 *   cluster             the same compute on another network (a simulated
 *                       trace's; a real trace's --cluster is its home network)
 *   strategy            the measured seconds per FLOP of each layer,
 *                       replanned under another strategy (same model,
 *                       batch, devices)
 *   scale_devices       N devices, the global batch grown with them (the
 *                       per-device work of the run kept, weak scaling), each
 *                       op drawn from the run's measured rates of its layers
 *                       (one uniform draw per op from the seed, the same
 *                       quantile for all of its layers) */
#ifndef STRATA_BENCH_REPLAY_H
#define STRATA_BENCH_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/config.h"
#include "../core/report.h"
#include "../core/trace.h"
#include "../core/trace_read.h"

/* Workers above this get no per-rank straggler share: each is one more
 * replay of the whole run. */
#define REPLAY_MAX_SHARE_RANKS 256

struct replay_opts {
    const char *cluster;        /* a simulated trace: the what-if's network; a real one: the
                                 * home network; NULL or "" = the home network, default */
    const char *strategy;       /* the what-if's strategy; NULL or "" = the trace's */
    long long scale_devices;    /* the what-if's devices; 0 = the trace's */
    bool without_stragglers;
    bool measured_comm;         /* communication as measured too, where the plan and the
                                 * network are the trace's (--measured-comm) */
    uint64_t seed;              /* --scale's draws */
};

struct replay_rank {
    int rank;                                   /* a worker */
    double measured_end_s, replayed_end_s;      /* when its last op ended */
    double measured_compute_s, replayed_compute_s;
    double straggler_share;     /* --without-stragglers: 1 - T(it typical) / T(replayed); NaN else */
};

struct replay_result {
    /* The home replay: the trace's plan on the home network, the trace's
     * own cluster for a simulated trace, cpu-loopback for a real one (a real
     * run does not know its network: opts.cluster names it, best a
     * profile calibrated on the machine the run ran on). */
    char mode[8];                     /* the trace's: "sim" or "real" */
    char home_cluster[CONFIG_PATH_BYTES];
    struct config cfg;                /* the trace's scenario, cluster = home */
    struct report measured, replayed; /* the trace's analysis; the replay's */
    double error;                     /* replayed / measured step time - 1 */
    struct replay_rank *ranks;        /* [n_ranks]: the workers */
    int n_ranks;
    int n_plan_ranks;                 /* workers and servers, for timelines */
    bool has_server_updates;          /* the servers' updates took their measured times */
    bool is_measured_comm;            /* communication took its measured times too */
    /* --measured-comm, yet the home network's model timed some
     * communication: ops the trace holds no time for */
    bool has_comm_modelled;
    /* A real run's most crowded host (by processes per core; 0, 0 when the
     * trace does not say): more processes than cores means a rank waiting
     * in MPI, or a server polling for messages, took a core from one that
     * computed, and a message waited for its receiver to be scheduled:
     * time the network model does not hold. */
    int processes, cores;
    bool is_oversubscribed;
    double clock_error_s;             /* a real trace's clocks agree to within this; -1 unsaid */
    struct trace replayed_trace;      /* every span of the home replay */
    /* Compute ops of steps the trace does not hold (an asynchronous job's
     * steps shared out otherwise than measured), timed at the run's
     * measured rates: of the home replay, and of the what-if. */
    int64_t replayed_ops_from_rates, whatif_ops_from_rates;

    /* --without-stragglers, but more workers than REPLAY_MAX_SHARE_RANKS:
     * no rank's straggler_share was replayed */
    bool is_share_skipped;

    bool has_whatif;
    struct config whatif_cfg;         /* strategy, devices, batch, cluster of the what-if */
    struct report whatif;
    double whatif_change;             /* whatif / measured step time - 1 */
    char whatif_what[256];            /* "without stragglers, on h100-nvlink-ib" */
    /* --measured-comm, yet the what-if's communication is its network's
     * model: another plan's or another network's messages were not measured */
    bool is_whatif_comm_modelled;
};

/* Replays doc (its spans and scenario) and, when o asks, the what-if.
 * ERR_INPUT: a scenario replay cannot rebuild (a run with failures), spans
 * that do not fit its plan, a what-if the strategy refuses (the message
 * names the option). */
int replay_run(const struct trace_doc *doc, const char *name, const struct replay_opts *o,
               struct replay_result *res, struct err *e);

void replay_result_release(struct replay_result *res);

/* { "strata_replay": 1, ... } (docs/trace-format.md) to path, atomically. */
int replay_write_json(const struct replay_result *res, const char *trace_name, const char *path,
                      struct err *e);

#endif

/* strata calibrate: this machine measured into a cluster profile. Outside
 * an MPI job it relaunches itself under mpirun with 2 ranks (the links are
 * measured between two); inside one it measures on the ranks it has, and
 * rank 0 prints the measurements and the profile, and writes it with -o. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/calibrate.h"
#include "../bench/calibrate_failure.h"
#include "../nn/data.h"
#include "../real/hostfile.h"
#include "../real/job.h"
#include "../real/launch.h"
#include "../real/mpi_check.h"
#include "../real/real.h"
#include "scenario.h"

/* Ranks the relaunch starts, and the largest message timed. */
#define CALIB_RANKS 2
#define CALIB_MAX_BYTES ((int64_t)32 << 20)

/* Samples a compute op works on: the per-device batch, --batch over --np
 * (or --devices when only that is given; else the ranks calibrate runs). */
static int rows_of(const struct config *cfg)
{
    long long n = config_is_set(cfg, "np") && cfg->np > 0 ? cfg->np
                  : config_is_set(cfg, "devices")          ? cfg->devices
                                                           : CALIB_RANKS;
    long long rows = cfg->batch / n;
    return rows < 1 ? 1 : (int)rows;
}

static void print_compute(const struct calib_compute *c, const char *model, const char *data,
                          int n_ranks)
{
    printf("compute: %s, %d samples an op, on %d ranks at once (the mean of the ranks' "
           "median calls)\n", model, c->rows, n_ranks);
    printf("  each layer alone:\n  layer    in x out    forward  GFLOP/s   backward  GFLOP/s\n");
    for (int l = 0; l < c->n_layers; l++) {
        const struct calib_layer *y = &c->layers[l];
        printf("  %5d %5d x %-5d %8.4f ms %7.2f %8.4f ms %7.2f\n", l, y->in, y->out, y->fwd_s * 1e3,
               y->fwd_flops / y->fwd_s * 1e-9, y->bwd_s * 1e3, y->bwd_flops / y->bwd_s * 1e-9);
    }
    printf("  a training step's ops, as the executor runs them (inputs %s):\n",
           c->is_gathered ? data : "fixed rows");
    printf("    FORWARD  %8.4f ms %7.2f GFLOP/s  (inputs, every layer, loss)\n", c->fwd_s * 1e3,
           c->fwd_flops / c->fwd_s * 1e-9);
    printf("    BACKWARD %8.4f ms %7.2f GFLOP/s\n", c->bwd_s * 1e3, c->bwd_flops / c->bwd_s * 1e-9);
    printf("    both     %8.4f ms %7.2f GFLOP/s                  -> flops_per_s\n",
           (c->fwd_s + c->bwd_s) * 1e3, c->flops_per_s * 1e-9);
    printf("    UPDATE   %8.4f ms %7.2f GB/s of the %.3g MB the plan counts -> mem_bw_bytes_per_s\n",
           c->update_s * 1e3, c->mem_bw_bytes_per_s * 1e-9, (double)c->update_bytes * 1e-6);
    printf("  a layer op of 1 sample, 1 feature in and out: %.3f us  -> op_overhead_s\n",
           c->op_overhead_s * 1e6);
    printf("  spread over the %d steps, sigma of a log-normal fitted to each op's interquartile "
           "range:\n    FORWARD %.4f, BACKWARD %.4f, UPDATE %.4f  -> jitter_*_sigma (the "
           "simulator draws\n    each op's time from it; --jitter off ignores it)\n\n",
           c->n_steps, c->fwd_sigma, c->bwd_sigma, c->update_sigma);
    if (c->n_timeshare > 0) {
        printf("  sharing the machine: k processes each running %d such steps at once (the "
               "other ranks asleep):\n      k   step ms  slowdown\n", c->timeshare_steps);
        for (int k = 1; k <= c->n_timeshare; k++)
            printf("  %5d %9.4f %9.3f\n", k, c->timeshare_step_s[k - 1] * 1e3,
                   c->timeshare_slowdown[k - 1]);
        printf("  slowdown: relative to %d at once, as the figures above  -> timeshare_slowdown\n\n",
               n_ranks);
    }
}

/* The table and the fit of one link class. */
static void print_link_table(const struct calib_comm *m);

static void print_links(const struct calib_comm *m)
{
    printf("links: ping-pong between ranks 0 and 1 (one way: half the round trip) and "
           "MPI_Iallreduce\n(sum of floats, tested until done) over %d ranks; the median of "
           "the timed calls. "
           "GB/s = 1e9 bytes/s;\nalgbw = bytes / time, busbw = algbw (ping-pong) or algbw x "
           "2(n-1)/n (all-reduce), as nccl-tests.\n", m->n_ranks);
    print_link_table(m);
}

/* Several hosts: each link class alone, intra then inter. */
static void print_node_links(const struct calib_nodes *nd)
{
    printf("nodes: %d (ranks grouped by shared memory, MPI_Comm_split_type), at most %d ranks "
           "a node.\nEach link class timed alone; the median of the timed calls; GB/s = 1e9 "
           "bytes/s;\nalgbw = bytes / time, busbw = algbw (ping-pong) or algbw x 2(n-1)/n "
           "(all-reduce), as nccl-tests.\n\n", nd->n_nodes, nd->devices_per_node);
    if (nd->has_intra) {
        printf("intra-node links: ping-pong between ranks 0 and %d (one node), MPI_Iallreduce "
               "within rank 0's\nnode (%d ranks)  -> intra_*\n",
               nd->intra_peer, nd->intra.n_ranks);
        print_link_table(&nd->intra);
    } else {
        printf("intra-node links: not measured (no node holds 2 ranks of this job); intra_* "
               "are the inter-node figures\n\n");
    }
    printf("inter-node links: ping-pong between ranks 0 and %d (two nodes), MPI_Iallreduce "
           "over one rank\nof each node (%d ranks)  -> inter_*\n", nd->inter_peer,
           nd->inter.n_ranks);
    print_link_table(&nd->inter);
}

static void print_link_table(const struct calib_comm *m)
{
    printf("       bytes iters |  pingpong  algbw  busbw     fit |  allreduce  algbw  busbw   "
           "model\n");
    printf("                   |        us   GB/s   GB/s      us |         us   GB/s   GB/s   "
           "   us\n");
    for (int i = 0; i < m->n_sizes; i++) {
        const struct calib_size *z = &m->sizes[i];
        double pp_bw = calib_algbw(z->bytes, z->pingpong_s);
        double ar_bw = calib_algbw(z->bytes, z->allreduce_s);
        double fit_s = m->latency_s + (double)z->bytes / m->bw_bytes_per_s;
        printf("%12lld %5d | %9.2f %6.3f %6.3f %7.2f | %10.2f %6.3f %6.3f %7.2f\n",
               (long long)z->bytes, z->iters, z->pingpong_s * 1e6, pp_bw * 1e-9, pp_bw * 1e-9,
               fit_s * 1e6, z->allreduce_s * 1e6, ar_bw * 1e-9,
               calib_busbw_allreduce(ar_bw, m->n_ranks) * 1e-9,
               calib_ring_s(m->latency_s, m->bw_bytes_per_s, m->gamma_s_per_byte, m->n_ranks,
                            z->bytes) * 1e6);
    }
    printf("fit: t = alpha + bytes / beta, least squares on the relative error over the "
           "ping-pong sizes\n(each size weighs the same): alpha = %.3f us, beta = %.3f GB/s; "
           "the worst size is %.0f%% off.\nmodel: the simulator's ring all-reduce "
           "2(p-1)(alpha + n/(p beta)) + (p-1)/p n gamma, gamma fitted\nthe same way to the "
           "all-reduce times: %.4g ns a byte (the summing, and what the MPI's\nalgorithm moves "
           "beyond a ring's transfers).\n\n", m->latency_s * 1e6,
           m->bw_bytes_per_s * 1e-9, m->fit_worst * 100, m->gamma_s_per_byte * 1e9);
}

static int64_t memory_per_rank(int cores)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return (int64_t)8 << 30;
    return (int64_t)pages * page / (cores > 0 ? cores : 1);
}

/* Options of calibrate's groups that its profile does not depend on: it
 * times one training step of --model at the per-device batch, the links
 * and a failure's costs, whatever the scenario, training or resumption
 * (its relaunch timing runs 4 steps of mirrored from scratch). */
static const char *const profile_ignores[] = {
    "servers", "microbatches", "chunks", "bucket-mb", "staleness", "backup-workers", "dp",
    "inflight", "steps", "epochs", "lr", "momentum", "weight-decay", "eval-every",
    "target-accuracy", "resume", NULL};

/* One note naming those of profile_ignores that cfg sets, on stdout. */
static void note_ignored(const struct config *cfg)
{
    int n = 0;
    for (size_t i = 0; profile_ignores[i]; i++) {
        if (!config_is_set(cfg, profile_ignores[i])) continue;
        char value[CONFIG_PATH_BYTES], shown[4 * CONFIG_PATH_BYTES];
        config_format(cfg, config_find(profile_ignores[i]), value, sizeof value);
        err_escape(shown, sizeof shown, value);   /* a note never drives the terminal */
        printf("%s --%s %s", n++ ? "," : "note:", profile_ignores[i], shown);
    }
    if (n)
        printf(": calibrate's profile does not depend on %s (it times one training step of "
               "--model at the per-device batch, the links, and what a failure costs)\n\n",
               n == 1 ? "it" : "them");
}

/* Checkpoint saves and loads timed: their median is what one costs. 3: a
 * save is two files (the rank's and the MANIFEST), so 3 saves write about
 * as many files as the 5 single writes timed before, and test_faults, which
 * runs calibrate once per write it can fail, costs what it did. */
#define CALIB_CHECKPOINT_IO 3

/* Rank 0: the failure costs, the checkpoint I/O measured here and the
 * relaunch the launcher measured before the job ($STRATA_CALIB_FAILURE;
 * absent under the user's own mpirun: those keys stay 0, free). */
static int measure_failure(const struct scenario *s, struct calib_failure *f, struct err *e)
{
    memset(f, 0, sizeof *f);
    TRY(calib_measure_checkpoint_io(s->cfg.checkpoint_dir, calib_state_bytes(s->wl),
                                    CALIB_CHECKPOINT_IO, f, e));
    const char *text = getenv(CALIB_FAILURE_ENV);
    return text && *text ? calib_failure_parse(text, f, e) : 0;
}

static void print_failure(const struct calib_failure *f)
{
    printf("failure costs (what a real run's failure section measures):\n");
    printf("  a checkpoint of one rank's state, %.3g MB (parameters and momentum), in %s,\n"
           "  saved as real runs save it (built with its CRC; temporary, fsync, rename, directory "
           "fsync;\n  a MANIFEST; the older save removed) and loaded back (read, CRC checked),\n"
           "  the median of %d: write %.3f ms -> ckpt_write_bw_bytes_per_s %.4g, "
           "read %.3f ms -> ckpt_read_bw_bytes_per_s %.4g\n", (double)f->state_bytes * 1e-6,
           f->dir, f->n_io, f->write_s * 1e3, f->ckpt_write_bw_bytes_per_s, f->read_s * 1e3,
           f->ckpt_read_bw_bytes_per_s);
    if (f->n_runs > 0) {
        printf("  `strata real` supervised, 1 to %d ranks of mirrored, a rank killed (--fail 1@2, "
               "0@2 alone) and\n  every rank relaunched, %d run(s) at each count: relaunch to "
               "the job's aligned start\n ", f->relaunch.n, f->n_runs);
        for (int i = 0; i < f->relaunch.n; i++)
            printf(" %.3f s (%d rank%s)%s", f->relaunch.s[i], f->relaunch.ranks[i],
                   f->relaunch.ranks[i] == 1 ? "" : "s", i + 1 < f->relaunch.n ? "," : "");
        printf(" -> restart_s_at_ranks,\n  death to its noticing %.3f s -> detect_s\n\n",
               f->detect_s);
    } else {
        printf("  relaunch and detection: not measured under your own mpirun (`strata "
               "calibrate` alone\n  measures them before it starts its job): restart_s_at_ranks "
               "and detect_s are left out (free)\n\n");
    }
}

/* Rank 0: what was measured, the profile, and the file. */
static int report(const struct command *self, const struct scenario *s,
                  const struct calib_result *res, const struct calib_failure *failure,
                  const struct device *dev)
{
    struct err e = {0};
    char desc[160];
    dev->describe(desc, sizeof desc);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (res->nodes.n_nodes > 1)
        printf("strata calibrate: %d MPI ranks on %d hosts (%ld cores on rank 0's), %s\n\n",
               res->comm.n_ranks, res->nodes.n_nodes, cores, desc);
    else
        printf("strata calibrate: %d MPI ranks of this machine (%ld cores), %s\n\n",
               res->comm.n_ranks, cores, desc);
    /* said here under the user's own mpirun; calibrate's own relaunch said
     * it before the job (launch), which then set CALIB_FAILURE_ENV */
    if (!getenv(CALIB_FAILURE_ENV)) note_ignored(&s->cfg);
    struct cluster profile;
    char host[64] = "this machine";
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    char name[64];
    /* a profile's name holds 63 characters: a long host name is cut */
    snprintf(name, sizeof name, "calibrated-%.52s", host);
    calib_profile(&res->compute, &res->comm, (int)cores, memory_per_rank((int)cores), name,
                  &profile);
    calib_profile_nodes(&res->nodes, &profile);
    calib_failure_profile(failure, &profile);
    print_compute(&res->compute, s->wl->canonical, s->cfg.data, res->comm.n_ranks);
    if (res->nodes.n_nodes > 1) print_node_links(&res->nodes);
    else print_links(&res->comm);
    print_failure(failure);
    char text[CLUSTER_TEXT_BYTES];
    cluster_format(&profile, text, sizeof text);
    fputs(text, stdout);
    const char *path = s->cfg.output;
    if (path[0]) {
        if (cluster_write(&profile, path, &e) < 0) {
            err_prefix(&e, "-o");
            return scenario_fail(self, &e);
        }
        printf("\nwritten to %s: `--cluster %s` simulates this machine.\n", path, path);
    } else {
        printf("\nnot written: `strata calibrate -o FILE` writes it, and `--cluster FILE` "
               "loads it.\n");
    }
    return 0;
}

/* The data set a real run would read, checked against the model. */
static int load_data(const struct scenario *s, struct data *d, struct err *e)
{
    TRY(data_load(s->cfg.data, (uint64_t)s->cfg.seed, d, e));
    return data_check_model(d, s->wl->layers[0].in, (int)s->wl->n_classes, e);
}

/* Inside the MPI job: every rank measures, rank 0 reports. */
static int run_rank(const struct command *self, struct scenario *s)
{
    struct err e = {0};
    int rank = 0, n_ranks = 0;
    if (job_init(&rank, &n_ranks, &e) < 0) return scenario_fail(self, &e);
    struct data d = {0};
    struct calib_result *res = calloc(1, sizeof *res);
    const struct device *dev = device_find(s->cfg.device, &e);
    int rc = !res ? err_set(&e, ERR_NOMEM, "out of memory") : !dev ? e.code : dev->init(0, &e);
    if (rc == 0) rc = load_data(s, &d, &e);
    /* Rank 0 times the checkpoint saves first, before minutes of measuring:
     * a checkpoint directory that cannot be written is said at once, and a
     * failed write (test_faults injects one at every write) ends the job
     * early. Every rank agrees, so none is left waiting in calib_run. */
    struct calib_failure failure = {0};
    rc = mpi_check_agree(rc == 0 && rank == 0 ? measure_failure(s, &failure, &e) : rc, &e);
    if (rc == 0) {
        struct calib_setup setup = {.cores = (int)sysconf(_SC_NPROCESSORS_ONLN), .dev = dev, .wl = s->wl, .train = &d.train,
                                    .rows = rows_of(&s->cfg), .seed = (uint64_t)s->cfg.seed,
                                    .max_bytes = CALIB_MAX_BYTES};
        rc = calib_run(&setup, res, &e);
    }
    data_release(&d);
    int status = 0;
    if (rank == 0) {
        status = rc < 0 ? scenario_fail(self, &e) : report(self, s, res, &failure, dev);
        fflush(stdout);
    } else if (rc < 0) {
        status = err_exit_status(rc);
    }
    free(res);
    job_finalize();
    return status;
}

/* Outside: time a relaunch (calibrate_failure.h; an MPI rank cannot start
 * a job), then become `mpirun -np 2 strata calibrate ...`, bound as a real
 * run of as many ranks is, so the compute measured is what such a run
 * gets; the relaunch's figures go to it in $STRATA_CALIB_FAILURE. */
/* Ranks of the relaunch: CALIB_RANKS on this machine; with --hostfile,
 * --np when given, else the file's slots (one a host where it gives none),
 * so that every host it lists gets ranks and the links between them are
 * measured (bench/calibrate_nodes.c). */
static int ranks_of(const struct config *cfg, int *n_ranks, struct err *e)
{
    *n_ranks = CALIB_RANKS;
    bool has_np = config_is_set(cfg, "np") && cfg->np > 0;
    if (has_np && cfg->np < CALIB_RANKS)
        return err_set(e, ERR_INPUT, "--np %lld: calibrate times links between ranks, so it "
                       "runs %d or more", cfg->np, CALIB_RANKS);
    if (!cfg->hostfile[0]) {
        if (has_np && cfg->np != CALIB_RANKS)
            return err_set(e, ERR_INPUT, "--np %lld: on this machine calibrate runs %d ranks "
                           "(a link has two ends; how ranks share the cores is measured "
                           "apart); --np counts the ranks over a --hostfile's hosts",
                           cfg->np, CALIB_RANKS);
        return 0;
    }
    struct hostfile_summary h;
    TRY(hostfile_check(cfg->hostfile, &h, e));
    long long n = config_is_set(cfg, "np") && cfg->np > 0 ? cfg->np
                                                         : h.n_slots + h.n_without_slots;
    *n_ranks = n < CALIB_RANKS ? CALIB_RANKS : n > 65536 ? 65536 : (int)n;
    return 0;
}

static int launch(const struct command *self, const struct scenario *s, int argc, char **argv)
{
    struct err e = {0};
    int exit_code = 0, n_ranks = CALIB_RANKS;
    if (ranks_of(&s->cfg, &n_ranks, &e) < 0) return scenario_fail_in(self, s, &e);
    struct calib_failure f = {0};
    char text[256];
    note_ignored(&s->cfg);
    fflush(stdout);   /* before the job's own output */
    fprintf(stderr, "strata calibrate: timing the relaunch of supervised runs of 1 to %d ranks "
            "(%d at each count)\n", calib_relaunch_counts(sysconf(_SC_NPROCESSORS_ONLN)),
            CALIB_RELAUNCH_RUNS);
    if (calib_measure_relaunch(&s->cfg, s->wl, NULL, &f, &e) < 0 ||
        calib_failure_format(&f, text, sizeof text, &e) < 0)
        return scenario_fail(self, &e);
    if (setenv(CALIB_FAILURE_ENV, text, 1) < 0)
        return scenario_fail(self, &(struct err){ERR_NOMEM, "out of memory for the environment"});
    int rc = launch_self_as_job(self->name, argc, argv, n_ranks, s->cfg.bind, s->cfg.hostfile,
                                false, &exit_code, &e);
    unsetenv(CALIB_FAILURE_ENV);
    return rc < 0 ? scenario_fail(self, &e) : exit_code;
}

int cmd_calibrate(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct scenario s;
    int status = 0;
    int rc = scenario_load(&s, self, argc, argv, &e);
    if (rc == 0 && !s.wl->is_mlp)
        rc = err_set(&e, ERR_INPUT, "--model: calibrate runs the layers of an mlp: model, not "
                     "'%s' (e.g. --model mlp:784-256-128-10)", s.cfg.model);
    if (rc == 0 && !device_find(s.cfg.device, &e)) rc = e.code;
    /* as its relaunch timing's jobs get them (their --checkpoint-dir is
     * none: calibrate's is where it times checkpoints), which refused them
     * only after that timing */
    if (rc == 0) {
        struct config jobs = s.cfg;
        jobs.checkpoint_dir[0] = '\0';
        rc = real_check_launch_pairs(&jobs, &e);
    }
    if (rc == 0 && !launch_is_mpi_rank()) {
        /* a missing data set or a model that does not fit it says so once, here */
        struct data d = {0};
        rc = load_data(&s, &d, &e);
        data_release(&d);
    }
    if (rc != 0)
        status = rc == CONFIG_HELP ? 0 : scenario_fail_in(self, &s, &e);
    else if (launch_is_mpi_rank())
        status = run_rank(self, &s);
    else
        status = launch(self, &s, argc, argv);
    scenario_release(&s);
    return status;
}

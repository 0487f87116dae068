/* strata calibrate, the failure costs: what the simulator's profile keys
 * ckpt_write_bw_bytes_per_s, ckpt_read_bw_bytes_per_s, restart_s_at_ranks
 * and detect_s (sim/cluster.h, priced by cluster_failure_costs) hold for real
 * runs of this machine.
 *
 *   checkpoint  a rank's state (the model's parameters and momentum: what
 *               real/checkpoint saves of a replica) saved as real/checkpoint
 *               saves it, less the ranks' agreement: a step directory, the
 *               file built with its CRC (core/ckpt_file) and written with
 *               core/fileio's file_write_atomic (a temporary beside it,
 *               fsync, rename, an fsync of the directory), a MANIFEST, the
 *               save before the previous one removed; and loaded back as a
 *               resumed run loads it (read whole, CRC and records checked);
 *               in the directory real runs put checkpoints in
 *               (--checkpoint-dir, else the supervisor's, on /dev/shm when
 *               there is one); bandwidth = bytes / the median time, so the
 *               fixed costs (the CRC, fsync, rename, the MANIFEST) are in
 *               it, as in a run: quiet on 2 cores, a real save of 2.68 MB
 *               took about 8 ms where the file's write alone took 1.15 ms
 *   relaunch    `strata real` run as a user runs it, supervised
 *               (real/supervise.h), on 1, 2, ... ranks of mirrored (up to
 *               one more than the cores, at most CALIB_RELAUNCH_MAX_RANKS)
 *               with the calibrated model and data, one rank killed by
 *               --fail and every rank restarted from scratch: the
 *               supervisor measures the relaunch (mpirun start, MPI, data,
 *               to the new job's aligned start; no checkpoint is loaded, its
 *               reading is the read bandwidth's) and the detection (from
 *               the death to its noticing: the watch's poll,
 *               real/job_watch.h: detect_s) the way they are measured in
 *               every real run's failure section; CALIB_RELAUNCH_RUNS runs
 *               at each count. The medians are restart_s_at_ranks's points
 *               (sim/failures.h prices a relaunch through them). Not a
 *               line: ranks up to the core count start side by side and the
 *               next ones queue, so quiet on 2 cores 1 rank took 0.650 s, 2
 *               ranks 0.684 s and 3 ranks 0.910 s, and the line that an
 *               earlier calibrate fitted at 2 and 3 priced 1 rank at 0.46 s
 *               (docs/failures.md)

 * A rank that hangs is detected by the watchdog's --timeout, not by the
 * poll: detect_s is a death's. The relaunch runs outside the MPI job that
 * calibrates (an MPI rank cannot start another job), before it, and its
 * figures reach that job's rank 0 in $STRATA_CALIB_FAILURE. */
#ifndef STRATA_BENCH_CALIBRATE_FAILURE_H
#define STRATA_BENCH_CALIBRATE_FAILURE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/config.h"
#include "../core/err.h"
#include "../core/workload.h"
#include "../sim/cluster.h"

#define CALIB_FAILURE_ENV "STRATA_CALIB_FAILURE"
/* Supervised runs at each rank count (2 and 3) the relaunch's figures are
 * the median of: one each keeps calibrate's cost what it was with two runs
 * at one count (test_faults runs calibrate once per injected fault), at
 * the price of a line through two single runs; quiet, the relaunches of one
 * count spread by a few percent (docs/failures.md). */
#define CALIB_RELAUNCH_RUNS 1
/* Rank counts the relaunch is timed at: 1 .. min(cores + 1, this). */
#define CALIB_RELAUNCH_MAX_RANKS 4

struct calib_failure {
    /* checkpoint I/O */
    char dir[CONFIG_PATH_BYTES];     /* where it was measured */
    int64_t state_bytes;             /* one rank's checkpoint: params + momentum */
    int n_io;                        /* writes (and reads) timed */
    double write_s, read_s;          /* the median of each */
    double ckpt_write_bw_bytes_per_s, ckpt_read_bw_bytes_per_s;
    /* the relaunch (0 runs: not measured, the keys stay 0) */
    int n_runs;                      /* at each rank count */
    struct relaunch_points relaunch; /* the median relaunch at each count */
    double detect_s;                 /* median over all the runs */
};

/* The rank counts to time a relaunch at on a machine of `cores` cores
 * (< 1: not known, taken as 2): 1 .. min(cores + 1, CALIB_RELAUNCH_MAX_RANKS). */
int calib_relaunch_counts(long cores);

/* The checkpoint I/O of state_bytes in dir ("" = where the supervisor puts
 * its checkpoints), `n` times: out's checkpoint fields. ERR_IO naming the
 * file when it cannot be written or read. */
int calib_measure_checkpoint_io(const char *dir, int64_t state_bytes, int n,
                                struct calib_failure *out, struct err *e);

/* One rank's state for the model of wl: its parameters and momentum. */
int64_t calib_state_bytes(const struct workload *wl);

/* The relaunch and detection, CALIB_RELAUNCH_RUNS supervised runs of cfg's
 * model, data and batch at each count of calib_relaunch_counts (above;
 * strata_bin: the strata executable, NULL = this one): out's relaunch
 * fields. ERR_RUN when a run fails. */
int calib_measure_relaunch(const struct config *cfg, const struct workload *wl,
                           const char *strata_bin, struct calib_failure *out, struct err *e);

/* The relaunch fields as $STRATA_CALIB_FAILURE's text ("runs=1;
 * relaunch_s_at_ranks=1:0.65,2:0.68,3:0.91;detect_s=0.05") and back
 * (ERR_INPUT naming the variable). */
int calib_failure_format(const struct calib_failure *f, char *buf, size_t n, struct err *e);
int calib_failure_parse(const char *text, struct calib_failure *f, struct err *e);

/* The failure keys into profile c: the checkpoint bandwidths, detect_s and
 * restart_s_at_ranks (restart_s and restart_per_rank_s 0: the points price). */
void calib_failure_profile(const struct calib_failure *f, struct cluster *c);

#endif

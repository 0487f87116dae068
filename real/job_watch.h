/* One MPI job run and watched by the supervisor of `strata real`
 * (real/supervise.h): the launcher started as a child in a process group of
 * its own, with a death signal tied to the supervisor (so a SIGKILLed
 * strata takes its job along: the launcher dies, and the ranks, tied to
 * the launcher by real/heartbeat.h, die with it), its stderr read through
 * a pipe and passed on less Open MPI's death banners (real/job_output.h),
 * then polled every 100 ms until it ends by itself, a rank fails, or a
 * signal asks the supervisor to stop:
 *
 *   died     a rank's pid is gone (or a zombie) before it said it was done;
 *            its last words, when it wrote any (--fail), say why
 *   hung     a rank that started stepping shows no progress for the timeout
 *            (stopped, /proc state T, is said as such); one still starting
 *            gets WATCH_STARTUP_S, or the timeout when that is longer; one
 *            gathering the report (each stage is progress) waits on the
 *            slowest, so it is judged by the whole job's silence: the
 *            timeout with no progress from any rank
 *
 * The blame for a hang, once a rank is past its allowance: a stopped rank;
 * else, among the ranks past theirs or silent for CPU_IDLE_S (the peer
 * waiting on a hung rank often made its last progress first, and is past
 * its allowance a look before the hung rank is), an idle one, whose CPU time
 * (/proc/PID/stat utime + stime) has not grown for CPU_IDLE_S, before a busy
 * one: a rank waiting in MPI polls and burns CPU, while one asleep, blocked
 * in a system call or on a device does not; then the one furthest behind
 * (lowest step), then the one silent longest (when one rank stops, its
 * peers soon wait on it and fall silent too, later). Wrong only when the
 * hung rank spins (an endless loop burns CPU as MPI's polling does): then
 * the step and silence decide. A rank that said an error (real.c's
 * MPI_Abort path) ends the job itself; its peers' deaths are then no
 * failures.
 *
 * A failed or interrupted job is ended whole: SIGKILL to the launcher's
 * process group, to every rank's pid (Open MPI puts each rank in a process
 * group of its own) and to any process whose environment carries this job's
 * heartbeat directory, until none is left. Linux only (/proc). */
#ifndef STRATA_JOB_WATCH_H
#define STRATA_JOB_WATCH_H

#include <signal.h>
#include <stdint.h>

#include "../core/err.h"
#include "../core/vec.h"

/* The start-up allowance: MPI start, data and checkpoint load, before a
 * rank's first step, on a loaded machine. */
#define WATCH_STARTUP_S 60.0
/* --timeout 0: max(WATCH_MIN_TIMEOUT_S, WATCH_STEPS_TIMEOUT x the median
 * step time seen so far), as NCCL's and Gloo's collective timeouts are a
 * generous multiple of an operation's time; WATCH_STARTUP_S before any step
 * was timed. */
#define WATCH_MIN_TIMEOUT_S 10.0
#define WATCH_STEPS_TIMEOUT 20.0

struct hbnet_listener;

struct watch_job {
    char **argv;                 /* the launcher's argv (real/launch.h) */
    const char *hb_dir;          /* the ranks' heartbeats (real/heartbeat.h), already made */
    /* a multi-host job's heartbeats over the network (real/heartbeat_net.h),
     * kept in hb_dir; NULL: the ranks write hb_dir themselves. With it a
     * rank's life is its connection, not its pid: a pid of another host
     * means nothing here, so no /proc look (no stopped or idle test, no
     * kill by pid) is made for its ranks; a closed connection is a death,
     * looked at as soon as it closes */
    struct hbnet_listener *net;
    int n_ranks, n_workers;
    double timeout_s;            /* --timeout; 0 = derived */
    volatile sig_atomic_t *signalled;   /* set by a signal handler: end the job now */
};

enum watch_end { WATCH_EXITED, WATCH_FAILED, WATCH_SIGNALLED };

struct watch_sample {            /* a step a rank was seen to start, and when */
    int64_t step;
    double t_s;                  /* CLOCK_MONOTONIC */
};

typedef VEC(struct watch_sample) watch_history;

struct watch_result {
    enum watch_end end;
    int exit_code;               /* EXITED: the launcher's status (128 + signal when killed) */
    double start_s;              /* the job's aligned start (CLOCK_MONOTONIC), 0 if never */
    /* FAILED: who, when, why */
    int rank;
    int64_t step;                /* the step it had started; -1 in start-up */
    double died_s, noticed_s;    /* CLOCK_MONOTONIC: its last sign of life, our noticing */
    char cause[320];             /* "died at step 5: killed by --fail 1@5" */
    double checkpoint_s;         /* rank 0's time writing checkpoints, as its heartbeat last said */
    watch_history history;       /* the failed rank's steps, in order */
};

/* Runs and watches the job to its end (above). 0, or ERR_RUN when the
 * launcher cannot be started or waited for. */
int watch_run(const struct watch_job *j, struct watch_result *out, struct err *e);
void watch_result_release(struct watch_result *r);

/* When the failed rank started step `step` (the first sample at or after
 * it), else the job's start. */
double watch_time_at_step(const struct watch_result *r, int64_t step);

#endif

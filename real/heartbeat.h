/* A rank's heartbeat: how the supervisor of `strata real` (real/supervise.h)
 * sees each rank of its MPI job, which it cannot ask over MPI. Every rank
 * keeps one small file, $STRATA_HEARTBEAT_DIR/rank-R, holding its pid, the
 * step it last started, when it last made progress and, when it knows them,
 * its last words (an injected failure, an error). Outside a supervised job
 * (no STRATA_HEARTBEAT_DIR) nothing is written, but --fail still kills.
 *
 * The hot path is one pwrite of 20 bytes per step (state, step, time); the
 * file lives where the supervisor put it, /dev/shm when there is one. The
 * clock is CLOCK_MONOTONIC, which every process of the machine shares, so
 * the supervisor compares the times with its own.
 *
 * In a job that spans hosts (--hostfile) the supervisor's address is in
 * $STRATA_SUPERVISOR instead, and every put sends the whole record over
 * TCP (real/heartbeat_net.h), which the supervisor keeps in the same file
 * on its own host; the connection then ties the rank to the supervisor in
 * place of STRATA_SUPERVISOR_PID. */
#ifndef STRATA_HEARTBEAT_H
#define STRATA_HEARTBEAT_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/err.h"

/* The environment variable naming the directory of the heartbeats. */
#define HEARTBEAT_DIR_ENV "STRATA_HEARTBEAT_DIR"
/* The supervisor's pid. A supervised rank dies with its launcher (a death
 * signal tied to its parent: Open MPI 4's ranks outlive a SIGKILLed mpirun,
 * re-parented to init), and at start-up when the supervisor is already
 * gone (the launcher died before the rank could tie itself to it). */
#define HEARTBEAT_SUPERVISOR_ENV "STRATA_SUPERVISOR_PID"
/* For tests only: "R@STEP" makes rank R hang (sleep for ever, neither
 * stopped nor dying) as it starts step STEP; "R@STEP+SECONDS" asleep for
 * SECONDS before it says it started the step, as a rank descheduled there
 * (its peers' last progress is then that much older than its own);
 * "R@finish" as it starts gathering the report; "R@save+SECONDS" asleep
 * SECONDS in its first checkpoint write, as on a slow disk. Read by heartbeat_open;
 * ignored when malformed. */
#define HEARTBEAT_TEST_HANG_ENV "STRATA_TEST_HANG"
#define HEARTBEAT_MAGIC 0x42485453u   /* "STHB" little-endian */

enum heartbeat_state {
    HEARTBEAT_STARTING,   /* set-up: MPI, data, model; no step yet */
    HEARTBEAT_RUNNING,    /* stepping (workers) or serving (servers) */
    HEARTBEAT_FINISHING,  /* gathering the report: waits on the slowest rank,
                             so only its death counts, not its silence */
    HEARTBEAT_DONE,       /* its part is over, or it returned with an error:
                             its exit from here on is no death */
    HEARTBEAT_DYING,      /* --fail: it kills itself right after writing this */
    HEARTBEAT_SAVING,     /* writing a checkpoint (or waiting on its peers' writes):
                             silent for max(--timeout, the start-up's 60 s), since a
                             large model's file on a slow disk outlasts a step */
};

/* The file, as it lies on disk (host byte order: one machine reads it). */
struct heartbeat_record {
    uint32_t magic;
    int32_t pid;
    int32_t rank;
    int32_t state;        /* enum heartbeat_state */
    int64_t step;         /* last step started (servers: updates applied); -1 before */
    double progress_s;    /* CLOCK_MONOTONIC of the last progress */
    double start_s;       /* CLOCK_MONOTONIC of the job's aligned start; 0 before */
    double checkpoint_s;  /* spent writing checkpoints (commits) so far */
    char words[224];      /* last words, "" when none */
};

struct heartbeat;

/* Seconds of CLOCK_MONOTONIC. */
double heartbeat_clock_s(void);

/* This rank's heartbeat (state STARTING), with --fail's text (core/
 * straggler.h; "" = none) to act on. Over the network when
 * $STRATA_SUPERVISOR is set, else the file when $STRATA_HEARTBEAT_DIR is.
 * ERR_INPUT for a bad --fail, ERR_IO when the file cannot be made or the
 * supervisor cannot be reached. */
int heartbeat_open(int rank, const char *fail, struct heartbeat **out, struct err *e);

/* The job's aligned start (real_now's zero) is now. */
void heartbeat_start(struct heartbeat *hb);

/* CLOCK_MONOTONIC of the aligned start (heartbeat_start), 0 before it. */
double heartbeat_start_s(const struct heartbeat *hb);

/* Progress: this rank starts step `step` (worker) or has applied `step`
 * updates (server), now_s seconds after the aligned start. When --fail names
 * this rank and this step (or a time now_s has reached), it writes its last
 * words and dies by SIGKILL, as a crashed process would: no return. */
void heartbeat_step(struct heartbeat *hb, int64_t step, double now_s);

/* A checkpoint's save begins (state SAVING). NULL ok. */
void heartbeat_saving(struct heartbeat *hb);
/* It is over, and this rank has spent checkpoint_s writing checkpoints so
 * far: progress, state RUNNING again. NULL ok. */
void heartbeat_checkpointed(struct heartbeat *hb, double checkpoint_s);

/* Its steps are over; the report is being gathered (state FINISHING).
 * Called again at each stage of the gathering: each call is progress. */
void heartbeat_finishing(struct heartbeat *hb);

/* Progress within the current step or stage, the state kept (a long
 * evaluation beats per batch). One pwrite. */
void heartbeat_beat(struct heartbeat *hb);

/* Last words (an error message) and state DONE: what comes next is no death. */
void heartbeat_say(struct heartbeat *hb, const char *words);

/* Its part is over (state DONE); the file stays for the supervisor. NULL ok. */
void heartbeat_close(struct heartbeat *hb);

/* The supervisor's side: reads rank's record in dir. 0, or -1 when there is
 * none yet or it is incomplete. */
int heartbeat_read(const char *dir, int rank, struct heartbeat_record *out);

#endif

/* What the supervisor of `strata real` (real/supervise.h) measured about the
 * failures before the job it relaunched, handed to that job's rank 0 in the
 * environment variable STRATA_FAILURE, so that its report's failure section
 * says what happened. The text is `key=value` pairs separated by ';':
 *
 *   rank=1;time_s=0.84;policy=restart;n_failures=1;detect_s=0.06;
 *   relaunch_s=0;redone_s=0.81;steps_redone=5;relaunch_at_s=1234.5;
 *   first_start_s=1233.1;checkpoint_s=0.02
 *
 * rank and time_s: the first failure (seconds after its job's aligned
 * start); detect_s, redone_s, steps_redone: sums over the failures;
 * relaunch_s: the relaunches before the last one (the supervisor saw those
 * jobs start); relaunch_at_s: CLOCK_MONOTONIC when the last relaunch began,
 * so that rank 0 measures that one to its own aligned start; first_start_s:
 * CLOCK_MONOTONIC of the first job's aligned start, for goodput;
 * checkpoint_s: what the jobs before this one spent writing checkpoints or
 * commits (their rank 0's, from its heartbeat). Unknown keys are ignored (a
 * newer supervisor may say more).
 *
 * STRATA_USER_OPTIONS carries, to every job the supervisor launched with
 * options of its own (--fail= and --np in a relaunch, its --checkpoint-dir
 * for commits), the user's values of those options, so that the report's
 * config is the user's: `name=value` entries separated by the byte 0x1f
 * (no path holds it). */
#ifndef STRATA_FAILURE_ENV_H
#define STRATA_FAILURE_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/config.h"
#include "../core/err.h"
#include "../core/failure_policy.h"
#include "../core/report.h"

#define FAILURE_ENV "STRATA_FAILURE"
#define USER_OPTIONS_ENV "STRATA_USER_OPTIONS"

struct failure_note {
    int rank;
    double time_s;
    enum failure_policy policy;
    int n_failures;
    double detect_s, relaunch_s, redone_s;
    int64_t steps_redone;
    double relaunch_at_s, first_start_s;
    double checkpoint_s;
};

/* n as text into buf[0..len); ERR_INPUT when it does not fit. */
int failure_env_format(const struct failure_note *n, char *buf, size_t len, struct err *e);

/* The text back; ERR_INPUT naming STRATA_FAILURE and the bad pair. */
int failure_env_parse(const char *text, struct failure_note *n, struct err *e);

/* When $STRATA_FAILURE is set: r's failure section from it, the last
 * relaunch measured to start_s (CLOCK_MONOTONIC of this job's aligned
 * start), goodput over this job's makespan_s and everything before it,
 * checkpoint_s with this job's own_checkpoint_s added, workers_after =
 * r->devices. Nothing when unset; ERR_INPUT when malformed. */
int failure_env_report(struct report *r, double start_s, double makespan_s,
                       double own_checkpoint_s, struct err *e);

/* The supervisor's side of STRATA_USER_OPTIONS: cfg's values of names[0..n)
 * as text into buf[0..len); ERR_INPUT when it does not fit. */
int failure_env_format_options(const struct config *cfg, const char *const *names, int n,
                               char *buf, size_t len, struct err *e);

/* A rank's side: when $STRATA_USER_OPTIONS is set, cfg's options set back
 * to the user's values (after the run, for the report). ERR_INPUT when
 * malformed. */
int failure_env_restore_options(struct config *cfg, struct err *e);

/* Whether $STRATA_USER_OPTIONS names option `name`: the supervisor set it
 * for this job (checkpoint-every: the job's "checkpoints" are shrink's or
 * continue's commits). */
bool failure_env_overrides(const char *name);

#endif

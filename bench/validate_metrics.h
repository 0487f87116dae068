/* The figures `strata validate` judges the simulator by, each a pure
 * function of numbers, so that each can be checked on hand-made input.
 *
 *   quantile        of |step-time error| over rows: median and p90
 *   TVD             total-variation distance of two staleness histograms
 *   Kendall tau-b   agreement of two rankings of the strategies by step time
 *   inflation error how well the simulator predicts what a straggler costs
 *   load            the machine's 1-minute load average, and whether it was quiet */
#ifndef STRATA_BENCH_VALIDATE_METRICS_H
#define STRATA_BENCH_VALIDATE_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/err.h"

/* The q-quantile (0 <= q <= 1) of x[0..n) by linear interpolation between
 * order statistics (Hyndman & Fan type 7, numpy's default): position
 * q (n - 1) in the sorted values. q = 0.5 is the median (the mean of the two
 * middle values for even n). NaN entries are left out; NaN when none is left
 * or on out of memory. x is not changed. */
double validate_quantile(const double *x, int n, double q);

/* Total-variation distance of two histograms, each normalized to sum 1:
 * 0.5 * sum_i |p_i - q_i|, the shorter padded with zeros. 0 = the same
 * distribution, 1 = disjoint supports. NaN when either holds no count
 * (nothing to compare) or a count is negative. */
double validate_tvd(const int64_t *p, int n_p, const int64_t *q, int n_q);

/* Kendall's tau-b of the paired values (x_i, y_i), i < n:
 *   (C - D) / sqrt((n0 - T_x) (n0 - T_y)),   n0 = n (n - 1) / 2,
 * C and D the concordant and discordant pairs, T_x (T_y) the pairs tied in x
 * (in y). Tau-b (Kendall 1945) rather than tau-a: two strategies that tie
 * (the same step time, e.g. ps-sync and ps-async on one worker) neither
 * agree nor disagree, and a perfect match of rankings with ties still gives
 * 1. 1 = the same order, -1 = reversed. NaN when n < 2 or either side is all
 * ties (no order to agree with). O(n^2): a handful of strategies. */
double validate_kendall_tau(const double *x, const double *y, int n);

/* The straggler inflation error of one strategy: the simulator's ratio of
 * disturbed to undisturbed step time over the measured one, minus 1:
 *   (pred_disturbed / pred_none) / (meas_disturbed / meas_none) - 1.
 * +0.1: the simulator predicts the straggler costs 10% more (in ratio) than
 * it does. NaN when a step time is not a finite number > 0. */
double validate_inflation_error(double pred_none_s, double meas_none_s, double pred_disturbed_s,
                                double meas_disturbed_s);

/* The machine's load while measuring. */
struct validate_load {
    int cores;                  /* online CPUs (sysconf) */
    double before_1min;         /* /proc/loadavg's first figure before the runs; NaN unread */
    double after_1min;          /* ... after them */
    int own_ranks;              /* the largest job the runs started: ranks incl. servers */
    double threshold_per_core;  /* VALIDATE_QUIET_LOAD_PER_CORE */
    bool is_quiet;              /* see validate_load_judge */
};

/* A machine is quiet when fewer than half its cores' worth of processes
 * wanted to run, on average, over the last minute: then a rank seldom
 * waits for a core, and a measured step time is the hardware's. */
#define VALIDATE_QUIET_LOAD_PER_CORE 0.5

/* The 1-minute load average from the text of /proc/loadavg ("0.42 0.30 0.25
 * 1/123 4567"). ERR_INPUT when it does not start with a number >= 0. */
int validate_load_parse(const char *text, double *load_1min, struct err *e);

/* /proc/loadavg's 1-minute figure now; ERR_IO when it cannot be read (not
 * Linux): the caller then says the load is unknown. */
int validate_load_read(double *load_1min, struct err *e);

/* Fills l->threshold_per_core and l->is_quiet. Quiet iff
 *   before <= T * cores, and after <= T * cores + own_ranks:
 * the 1-minute average decays with a one-minute time constant, so just
 * after the runs it still counts the validation's own ranks (each busy
 * polling in MPI, each runnable): they are allowed for, anything beyond is
 * someone else's work. An unknown figure (NaN) is never quiet. */
void validate_load_judge(struct validate_load *l);

#endif

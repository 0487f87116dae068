/* One strategy executed for real as its own MPI job: `strata real` run as a
 * child process (which relaunches itself under mpirun), its JSON report
 * read back. Each strategy gets fresh processes, as a user's run would.
 * compare --mode real runs one per strategy plus the one-device baseline. */
#ifndef STRATA_BENCH_REAL_JOB_H
#define STRATA_BENCH_REAL_JOB_H

#include "../core/config.h"
#include "../core/report.h"
#include "../core/workload.h"

/* Runs strategy on np workers with cfg's scenario, training and straggler
 * options. First checks here what `strata real` would reject (ERR_INPUT
 * naming the option: the scenario does not fit the strategy), so that the
 * job only starts when it can run. *out holds the one report. The job's
 * table goes nowhere; its stderr (errors, progress) is the caller's.
 * strata_bin: the strata executable; NULL = this process's own. */
int real_job_run(const struct config *cfg, const struct workload *wl, const char *strategy,
                 int np, const char *strata_bin, struct report_doc *out, struct err *e);

#endif

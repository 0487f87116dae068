/* --hostfile: the MPI hostfile a relaunch passes to mpirun, checked before
 * any job starts, so that a typo is one clear message (exit 2) rather than
 * a launcher's error from every host. The format is Open MPI's (mpirun(1),
 * "Hostfile"): one host a line, '#' comments, each host optionally followed
 * by slots=N, max_slots=N (or max-slots=N); MPICH's "host:N" is taken too. */
#ifndef STRATA_REAL_HOSTFILE_H
#define STRATA_REAL_HOSTFILE_H

#include "../core/err.h"

/* What a hostfile holds. */
struct hostfile_summary {
    int n_lines;        /* hosts listed (a host listed twice counts twice, as mpirun adds them) */
    long long n_slots;  /* slots over the lines that give them */
    int n_without_slots; /* lines that give none: mpirun counts that host's cores */
};

/* Reads and checks path. ERR_INPUT, naming --hostfile, the file and the
 * line: a file that cannot be opened, a line whose host name has
 * characters no host name has, an option other than slots and max_slots,
 * a count that is not a whole number from 1 to 1048576, or no host at all. */
int hostfile_check(const char *path, struct hostfile_summary *out, struct err *e);

#endif

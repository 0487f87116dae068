/* Fault injection for tests, as SQLite's: compiled in always, inert unless
 * armed. Armed, the Nth call of one kind (counted from when it was armed)
 * fails as the system would have failed it, once; the code under test then
 * has to take its error path, which is how tests reach every one of them.
 *
 * A test arms it in-process (faults_arm) or for a whole strata run through
 * the environment: STRATA_FAULT=KIND:N (alloc, open, write, fsync, rename),
 * read once, at the first call that asks. A fault that fires says so on
 * stderr ("strata: injected fault: write #3"), so a test that raises N
 * until nothing fires knows it has tried every call the command makes. */
#ifndef STRATA_FAULTS_H
#define STRATA_FAULTS_H

#include <stdbool.h>

/* The calls a fault can hit: strata's checked allocation (XCALLOC), and the
 * temporary file's creation, writes, fsync and rename in core/fileio. */
enum fault_kind { FAULT_ALLOC, FAULT_OPEN, FAULT_WRITE, FAULT_FSYNC, FAULT_RENAME, FAULT_N_KINDS };

extern const char *const fault_kind_names[FAULT_N_KINDS];  /* "alloc", "open", ... */

/* Makes the nth call of kind from now fail (1 = the next); nth <= 0 disarms. */
void faults_arm(enum fault_kind kind, long nth);

/* Nothing fails any more (what $STRATA_FAULT armed included). */
void faults_disarm(void);

/* Counts a call of kind; true when this one is to fail. */
bool fault_hit(enum fault_kind kind);

#endif

/* A trace written by trace_write_chrome with a scenario (core/trace.h), read
 * back for `strata replay`: the run's options, what it ran, and its spans.
 * The format is docs/trace-format.md. The reader takes what the writer
 * writes and refuses the rest with a message naming the file and the event
 * (never a crash): a plain Chrome trace without "strata_trace" is refused
 * with a hint to write the trace with strata. Whether the spans fit the
 * plan their scenario builds is the replay's check, not the reader's. */
#ifndef STRATA_TRACE_READ_H
#define STRATA_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "err.h"
#include "trace.h"

struct trace_doc {
    char mode[8];             /* "sim" or "real" */
    char strategy[64];
    int64_t steps;            /* steps each compute rank ran */
    int n_ranks, n_workers;   /* of the plan that ran */
    int64_t n_dropped;        /* spans the writer left out (--trace keeps all) */
    struct config cfg;        /* the scenario: config_init, then its keys */
    unsigned config_groups;   /* the groups of the options it holds */
    /* A real run's hosts ("hosts"; 0 when the trace has none): how many,
     * and the one with the most processes per core, its processes (ranks)
     * and cores. More processes than cores: waits took cores from compute. */
    int n_hosts, crowded_processes, crowded_cores;
    /* A real run's "clock_error_s": its ranks' clocks agree with rank 0's
     * to within this many seconds; -1 when the trace does not say. */
    double clock_error_s;
    struct trace trace;       /* the spans, in the file's order; start_s, end_s in seconds */
};

/* Reads the file at path (at most JSON_DOC_MAX_BYTES). 0, ERR_INPUT (missing
 * file, not a strata trace, a bad field: the message names the file and
 * where), ERR_IO or ERR_NOMEM. *out is zeroed first; on failure the caller
 * still calls trace_doc_release. */
int trace_doc_read(const char *path, struct trace_doc *out, struct err *e);

/* As trace_doc_read, from text[0..len); name is the file for messages. */
int trace_doc_parse(const char *text, size_t len, const char *name, struct trace_doc *out,
                    struct err *e);

/* Frees the spans; accepts a zeroed doc and NULL. */
void trace_doc_release(struct trace_doc *d);

#endif

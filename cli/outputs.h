/* What sim and compare write besides the table: --json, --csv, --trace and
 * --timeline, with errors that name the option. */
#ifndef STRATA_CLI_OUTPUTS_H
#define STRATA_CLI_OUTPUTS_H

#include "../bench/run.h"

/* Checks, before any work, that every file cfg asks for can be written
 * (--json, --csv, --trace, --html, --save-params, -o), that --plot's and
 * --chakra's directories can be made or written, and that no two of them
 * share a path nor any takes the path of a file the command reads: a long
 * run must not end in "cannot write", nor one output replace another or
 * an input. ERR_INPUT naming the option (both, for a shared path).
 * Every command that writes a file calls it after parsing. */
int outputs_check(const struct config *cfg, struct err *e);

/* Room for a trace path outputs_trace_path derives. */
#define OUTPUTS_TRACE_PATH_BYTES (CONFIG_PATH_BYTES + 80)

/* Where the trace of `strategy` goes when a command was asked for n_asked
 * strategies: --trace's path for one, else the strategy's name before its
 * extension ("t.json" -> "t.mirrored.json"), however many of them ran (so
 * the name never depends on which fitted the scenario). */
void outputs_trace_path(const struct config *cfg, const char *strategy, int n_asked, char *buf,
                        size_t n);

/* For a command that writes one trace per strategy (compare), before any
 * run: each of strategies[0..n)'s trace paths is checked as outputs_check
 * checks the others: writable, and not the path of another output (the
 * compare's --json would be replaced by a trace), of an input, nor of
 * another strategy's trace. ERR_INPUT naming --trace, the strategy, the
 * path and the other option. 0 without --trace or with fewer than 2. */
int outputs_check_traces(const struct config *cfg, const char *const *strategies, int n,
                         struct err *e);

/* Writes reports[0..n) (one: a report; several: a compare document) to
 * --json and --csv when cfg asks for them. */
int outputs_write_reports(const struct config *cfg, const struct report *const *reports, int n,
                          const double *speedup, struct err *e);

/* Writes runs[0..n) as outputs_write_reports does; the trace of each run
 * goes to outputs_trace_path's path for the n_asked strategies asked. */
int outputs_write(const struct config *cfg, struct sim_run *const *runs, int n, int n_asked,
                  const double *speedup, struct err *e);

/* The first steps of run's kept trace as a chart (--timeline). */
void outputs_timeline(const struct sim_run *run);

/* On the ideal cluster, a line on out saying that its speedups mean
 * nothing (a layer costs one unit per microbatch whatever its size). */
void outputs_note_ideal(FILE *out, const struct sim_run *run);

/* The warning on out ("warning: " after `indent`) for a run r whose peak
 * memory per device exceeds a device of cluster cl (run_exceeds_memory):
 * by how much, and what would fit. sim and compare say it alike. */
void outputs_warn_memory(FILE *out, const char *indent, const struct report *r,
                         const struct cluster *cl);

/* Steps a --timeline (and a --plot's timeline) shows: enough to see one
 * step end and the next begin. */
#define OUTPUTS_TIMELINE_STEPS 2

/* The steps [*first, *last] (counted from 0) that --timeline and --plot's
 * timeline draw: --timeline-steps A:B, else the first
 * OUTPUTS_TIMELINE_STEPS. ERR_INPUT naming the option when A:B is malformed,
 * A > B, or B is not below --steps. */
int outputs_timeline_steps(const struct config *cfg, int64_t *first, int64_t *last,
                           struct err *e);

/* The time of steps [first, last] of run's drawn spans (run_drawn_spans:
 * with failures, the job's steps, a redone step's two runs included),
 * [*begin_s, *end_s): from the first span of step first (0 for the first
 * step) to the last end of step last,
 * or, asynchronous (each worker counts its own steps), to when the first
 * worker to get there ended its step last: the later steps of faster
 * workers are not kept, and would show as idle. Both 0 when none took time. */
void outputs_window_of(const struct sim_run *run, int64_t first, int64_t last, double *begin_s,
                       double *end_s);

/* Steps whose spans a run must keep for these outputs: all for --trace, a
 * few for --timeline and --plot, none otherwise. */
int outputs_keep_steps(const struct config *cfg);

#endif

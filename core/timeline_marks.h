/* Failures on a run's timeline: what the charts (the text timeline, the
 * Gantt plot, the HTML page's timeline) draw beside the ops when ranks die.
 *
 * The simulator runs a restart or shrink job's steps without a failure and
 * replays their durations through the failures (sim/failures.h), so its
 * trace shows a run where nothing happened. The replay records here what
 * happened instead: every run of a step on the job's time line (a step a
 * failure threw away is run again: it appears twice, once lost, once
 * redone), the gaps where no step ran (detection, relaunch and loading;
 * checkpoints and commits), and each death. timeline_marks_lay then lays the
 * failure-free spans over those step runs, once, for every chart.
 *
 * continue's failures happen inside the event loop, whose trace is already
 * the run's: only its deaths are marked (is_gone: the worker never comes
 * back), and no step run is recorded (timeline_marks_has_runs false). */
#ifndef STRATA_TIMELINE_MARKS_H
#define STRATA_TIMELINE_MARKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "trace.h"
#include "vec.h"

/* One run of a step on the job's time line. */
struct tl_step_run {
    int32_t step;          /* the job's step, from 0 */
    double start_s, end_s; /* on the job's time line; end_s is the failure's time when cut */
    double from_s;         /* where the step starts in the failure-free trace */
    double scale;          /* its duration here over its failure-free one (shrink: fewer workers) */
    bool is_lost;          /* a failure threw it away (cut, or rolled back past) */
    bool is_redo;          /* the step had run before: this is its work redone */
};

enum tl_gap_kind {
    TL_GAP_RECOVERY,       /* detection, relaunch (and, restart, loading the checkpoint) */
    TL_GAP_SAVE,           /* writing a checkpoint or a commit: every rank stopped */
};

/* A time when no step ran, on every rank. */
struct tl_gap {
    enum tl_gap_kind kind;
    double start_s, end_s;
};

/* A rank died at time_s. is_gone: it never comes back (shrink, continue);
 * otherwise a replacement takes its row after the recovery (restart). */
struct tl_death {
    int32_t rank;
    double time_s;
    bool is_gone;
};

/* Entries recorded at most, steps, gaps and deaths each: a bound on memory
 * for runs of 10^7 failures (those past it are counted in n_dropped, and a
 * chart of a window beyond them shows what was recorded). */
#define TL_MAX_ENTRIES 1000000

struct timeline_marks {
    VEC(struct tl_step_run) runs;
    VEC(struct tl_gap) gaps;
    VEC(struct tl_death) deaths;
    int64_t n_dropped;
    VEC(struct span) laid;   /* timeline_marks_lay's spans: what the charts draw */
};

/* Recording (the failure replay): each 0 or ERR_NOMEM (e filled). A marks
 * of NULL records nothing and returns 0, so the replay calls them always. */
int timeline_marks_add_run(struct timeline_marks *m, struct tl_step_run r, struct err *e);
int timeline_marks_add_gap(struct timeline_marks *m, enum tl_gap_kind kind, double start_s,
                           double end_s, struct err *e);
int timeline_marks_add_death(struct timeline_marks *m, int rank, double time_s, bool is_gone,
                             struct err *e);

/* The runs recorded since index `from` are lost (a failure went back past
 * them). */
void timeline_marks_lose_since(struct timeline_marks *m, size_t from);

/* True when step runs were recorded: the trace's spans must be laid over
 * them (timeline_marks_lay) before they are drawn. */
bool timeline_marks_has_runs(const struct timeline_marks *m);

/* True when there is anything to draw beyond the ops: a death, a gap or a
 * lost step. */
bool timeline_marks_any(const struct timeline_marks *m);

/* Lays the failure-free spans[0..n) over the step runs into m->laid: a span
 * of step k once per run of k, moved to the run's start and stretched by its
 * scale; a run cut by a failure keeps only what ran before it; a rank that
 * is gone draws nothing after its death. Steps with no run (beyond what was
 * recorded) are left out. 0 or ERR_NOMEM. */
int timeline_marks_lay(struct timeline_marks *m, const struct span *spans, size_t n,
                       struct err *e);

void timeline_marks_release(struct timeline_marks *m);

#endif

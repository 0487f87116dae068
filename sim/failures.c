/* The failure timeline (failures.h): one pass over the job's steps, each
 * phase (a step, a checkpoint or commit, a recovery) run until it ends or
 * the next failure cuts it. O(steps + failures); nothing allocated but the
 * random stream, and, when the charts want the timeline (s->marks), what
 * it records and the step starts it needs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "failures.h"

/* Added to the run seed for the failure stream: another SplitMix64 sequence
 * than the stragglers' (seed) and the jitter's (the fraction of sqrt(2));
 * this is the fraction of sqrt(3), SHA-2's second constant. */
#define FAILURE_SEED_SALT 0xbb67ae8584caa73bull

/* Failures a run may have before the timeline gives up: a job whose
 * failures come much faster than a step would otherwise take e^(step /
 * gap) tries per step. 10^7 failures take about a second to replay. */
#define FAILURE_MAX_FAILURES 10000000
/* a step's length over the job MTBF beyond which it never completes (ln 10^6) */
#define FAILURE_MAX_EXPONENT 14.0

struct failure_draws {
    gsl_rng **rng;   /* one stream */
};

struct failure_draws *failure_draws_create(uint64_t seed, struct err *e)
{
    struct failure_draws *d = XCALLOC(e, 1, sizeof *d);
    if (!d) return NULL;
    if (!(d->rng = straggler_streams_create(seed + FAILURE_SEED_SALT, 1, "failure", e))) {
        free(d);
        return NULL;
    }
    return d;
}

void failure_draws_free(struct failure_draws *d)
{
    if (!d) return;
    straggler_streams_free(d->rng, 1);
    free(d);
}

/* The minimum of n independent Exponential(mtbf_s) lifetimes is
 * Exponential(mtbf_s / n): one draw for the whole job. */
double failure_draws_gap_s(struct failure_draws *d, double mtbf_s, int n_devices)
{
    return gsl_ran_exponential(d->rng[0], mtbf_s / n_devices);
}

int failure_draws_pick(struct failure_draws *d, int n_devices)
{
    return (int)gsl_rng_uniform_int(d->rng[0], (unsigned long)n_devices);
}

/* ---- the price of a relaunch --------------------------------------------- */

double failure_relaunch_s(const struct failure_costs *c, int n_ranks)
{
    const struct relaunch_points *p = &c->relaunch_at;
    if (p->n < 1) return c->relaunch_s + c->relaunch_per_rank_s * n_ranks;
    if (p->n == 1 || n_ranks <= p->ranks[0]) return p->s[0];
    int i = 1;   /* the segment [i - 1, i] that holds n_ranks, else the last */
    while (i < p->n - 1 && n_ranks > p->ranks[i]) i++;
    double slope = (p->s[i] - p->s[i - 1]) / (p->ranks[i] - p->ranks[i - 1]);
    if (n_ranks > p->ranks[i]) slope = fmax(slope, 0);   /* beyond the last point */
    return p->s[i] + slope * (n_ranks - p->ranks[i]);
}

/* Largest rank count a point may name: --devices' bound. */
#define RELAUNCH_MAX_RANKS 1048576
#define RELAUNCH_MAX_S 1e6

/* One "RANKS:SECONDS" of len bytes at item, blanks around it allowed (as
 * around a profile's list entries): plain decimals only (strtod alone
 * would take "nan", hex and blanks inside). */
static bool parse_point(const char *item, size_t len, long *ranks, double *s_out)
{
    while (len > 0 && (*item == ' ' || *item == '\t')) item++, len--;
    while (len > 0 && (item[len - 1] == ' ' || item[len - 1] == '\t')) len--;
    char buf[64];
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, item, len);
    buf[len] = '\0';
    char *colon = strchr(buf, ':');
    if (!colon || colon == buf || !colon[1]) return false;
    *colon = '\0';
    const char *r = buf, *t = colon + 1;
    if (strspn(r, "0123456789") != strlen(r) || strspn(t, "0123456789.eE+-") != strlen(t))
        return false;
    char *end;
    errno = 0;
    *ranks = strtol(r, &end, 10);
    if (*end || errno) return false;
    *s_out = strtod(t, &end);
    return !*end && isfinite(*s_out);
}

int failure_relaunch_points_parse(const char *text, const char *what, struct relaunch_points *p,
                                  struct err *e)
{
    struct relaunch_points got = {0};
    const char *at = text;
    bool ok = *text != '\0';
    while (ok) {
        size_t len = strcspn(at, ",");
        long ranks;
        double s;
        ok = got.n < FAILURE_MAX_RELAUNCH_POINTS && parse_point(at, len, &ranks, &s) &&
             ranks >= 1 && ranks <= RELAUNCH_MAX_RANKS && s >= 0 && s <= RELAUNCH_MAX_S &&
             (got.n == 0 || ranks > got.ranks[got.n - 1]);
        if (!ok) break;
        got.ranks[got.n] = (int)ranks;
        got.s[got.n++] = s;
        if (at[len] == '\0') break;
        at += len + 1;
    }
    if (!ok)
        return err_set(e, ERR_INPUT, "%s: '%.80s%s' is not allowed (1 to %d entries RANKS:SECONDS "
                       "separated by commas, e.g. 1:0.65,2:0.68,3:0.91: ranks from 1 to %d, "
                       "increasing; seconds from 0 to 1e6)", what, text,
                       strlen(text) > 80 ? "..." : "", FAILURE_MAX_RELAUNCH_POINTS,
                       RELAUNCH_MAX_RANKS);
    *p = got;
    return 0;
}

size_t failure_relaunch_points_format(const struct relaunch_points *p, char *buf, size_t n)
{
    size_t used = 0;
    if (n) buf[0] = '\0';
    for (int i = 0; i < p->n; i++)
        used += (size_t)snprintf(used < n ? buf + used : NULL, used < n ? n - used : 0,
                                 "%s%d:%.17g", i ? "," : "", p->ranks[i], p->s[i]);
    return used;
}

/* ---- the timeline ------------------------------------------------------- */

struct timeline {
    const struct failure_setup *s;
    struct failure_outcome *out;
    struct failure_draws *draws;   /* NULL without --mtbf */
    struct err *e;
    struct failure_run run;        /* the job's on n workers */
    int n;                         /* workers now */
    int run_first_k;               /* the first step of surviving work on this run */
    double t;                      /* now */
    int k;                         /* steps complete (the next step to run) */
    int safe_k;                    /* the step a failure goes back to */
    double work_since_safe_s;      /* step time since then: redone on a failure */
    double next_fail_s;            /* INFINITY = none to come */
    int next_rank;
    bool is_next_the_spec;         /* the next failure is --fail's R@Ts */
    bool is_spec_fired;            /* --fail has happened */
    bool *is_alive;                /* [n_workers] shrink, recorded (s->marks or s->busy): the
                                    * plan's workers still in the job */
    /* recording (s->marks): */
    double *from_s;                /* [steps] step k's start in the failure-free run */
    size_t first_unsafe_run;       /* the step runs since the rollback point: lost on a failure */
    int n_started;                 /* steps that have run at least once */
};

/* The next failure after the one at t: a --fail time still ahead, or the
 * next --mtbf draw (the earlier). */
static void schedule_next(struct timeline *tl)
{
    const struct failure_spec *f = &tl->s->failure;
    tl->next_fail_s = INFINITY;
    tl->is_next_the_spec = f->is_set && f->step < 0 && !tl->is_spec_fired;
    if (tl->is_next_the_spec) {
        tl->next_fail_s = f->time_s;
        tl->next_rank = f->rank;
    }
    if (tl->draws) {
        double at = tl->t + failure_draws_gap_s(tl->draws, tl->s->mtbf_s, tl->n);
        int rank = failure_draws_pick(tl->draws, tl->n);
        if (at < tl->next_fail_s) {
            tl->next_fail_s = at;
            tl->next_rank = rank;
            tl->is_next_the_spec = false;
        }
    }
}

/* Runs a phase of dur_s into *acc unless the next failure cuts it; true
 * when it ended whole (tl->t is then its end, else the failure's time). */
static bool run_phase(struct timeline *tl, double dur_s, double *acc)
{
    if (tl->t + dur_s <= tl->next_fail_s) {
        tl->t += dur_s;
        *acc += dur_s;
        return true;
    }
    *acc += tl->next_fail_s - tl->t;
    tl->t = tl->next_fail_s;
    return false;
}

/* The plan's rank of a failure's: a drawn failure of shrink picks among
 * the survivors, so pick k is the k-th worker still alive; --fail names its
 * rank. Shrink's dead worker leaves the job. */
static int plan_rank_of(struct timeline *tl, int rank, bool is_drawn)
{
    if (!tl->is_alive) return rank;
    int r = rank;
    if (is_drawn)
        for (int i = 0, seen = 0; i < tl->s->n_workers; i++)
            if (tl->is_alive[i] && seen++ == rank) {
                r = i;
                break;
            }
    if (r >= 0 && r < tl->s->n_workers) {
        tl->is_alive[r] = false;
        if (tl->s->busy) tl->s->busy->down_from_s[r] = tl->t;
    }
    return r;
}

/* The surviving work of the run now, steps run_first_k .. end_k - 1, to
 * s->busy: each worker of the run (the plan's workers still alive, in
 * order) its mean step's busy time a step, and the steps' durations. */
static void record_run(struct timeline *tl, int end_k)
{
    struct failure_busy *b = tl->s->busy;
    int n_steps = end_k - tl->run_first_k;
    if (!b || n_steps <= 0) return;
    double share = (double)n_steps / tl->s->steps;
    for (int i = 0, j = 0; i < tl->s->n_workers; i++) {
        if (tl->is_alive && !tl->is_alive[i]) continue;
        if (tl->run.compute_s) b->compute_s[i] += tl->run.compute_s[j] * share;
        if (tl->run.comm_s) b->comm_s[i] += tl->run.comm_s[j] * share;
        b->steps[i] += tl->run.steps ? llround((double)tl->run.steps[j] * share) : n_steps;
        j++;
    }
    for (int k = tl->run_first_k; k < end_k; k++) b->step_s[k] = tl->run.step_s[k];
    tl->run_first_k = end_k;
}

/* The charts' record of a failure of the plan's rank r: its death, and
 * every step run since the rollback point lost. */
static int mark_failure(struct timeline *tl, int r)
{
    struct timeline_marks *m = tl->s->marks;
    if (!m) return 0;
    TRY(timeline_marks_add_death(m, r, tl->t, tl->s->policy == FAILURE_SHRINK, tl->e));
    timeline_marks_lose_since(m, tl->first_unsafe_run);
    tl->first_unsafe_run = m->runs.len;
    return 0;
}

/* A device fails now: the work since the rollback point is lost, shrink
 * loses the device, and the next failure is drawn. */
static int on_failure(struct timeline *tl, int rank, bool is_drawn)
{
    struct failure_outcome *o = tl->out;
    if (o->n_failures == FAILURE_MAX_FAILURES)
        return err_set(tl->e, ERR_RUN, "--mtbf: %d failures, and the job is at step %d of %d "
                       "at %.6g s: a failure every %.4g s on average leaves too little time "
                       "for steps of about %.4g s and their recovery (a longer --mtbf, more "
                       "frequent checkpoints or a cheaper restart would)", o->n_failures,
                       tl->k, tl->s->steps, tl->t, tl->s->mtbf_s / tl->n,
                       tl->run.step_s[tl->k < tl->s->steps ? tl->k : 0]);
    if (tl->is_next_the_spec && tl->t == tl->next_fail_s) tl->is_spec_fired = true;
    /* shrink: the work up to the rollback point survives on the run it ran
     * on; the dead worker leaves (plan_rank_of) before the next run */
    if (tl->s->policy == FAILURE_SHRINK) record_run(tl, tl->safe_k);
    TRY(mark_failure(tl, plan_rank_of(tl, rank, is_drawn)));
    if (o->n_failures++ == 0) {
        o->first_rank = rank;
        o->first_time_s = tl->t;
    }
    o->redone_s += tl->work_since_safe_s;
    o->steps_redone += tl->k - tl->safe_k;
    tl->work_since_safe_s = 0;
    tl->k = tl->safe_k;
    o->final_first_step = tl->safe_k;
    if (tl->s->policy == FAILURE_SHRINK) {
        if (tl->n <= 1)
            return err_set(tl->e, ERR_RUN, "--on-failure shrink: the last worker failed at "
                           "%.6g s, with no survivor to go on (%d failures)", tl->t,
                           o->n_failures);
        tl->n--;
        if (tl->s->step_times)
            TRY_CTX(tl->e, tl->s->step_times(tl->s->ctx, tl->n, &tl->run, tl->e),
                    "the job shrunk to %d workers", tl->n);
    }
    schedule_next(tl);
    return 0;
}

/* Detection, then relaunch (and, for restart, loading the checkpoint), until
 * they run without a failure. */
static int recover(struct timeline *tl)
{
    const struct failure_costs *c = &tl->s->costs;
    double relaunch_s = failure_relaunch_s(c, tl->n + tl->s->n_servers) +
                        (tl->s->policy == FAILURE_RESTART ? c->load_s : 0);
    for (;;) {
        double start_s = tl->t;
        bool is_whole = run_phase(tl, c->detect_s, &tl->out->detect_s) &&
                        run_phase(tl, relaunch_s, &tl->out->relaunch_s);
        TRY(timeline_marks_add_gap(tl->s->marks, TL_GAP_RECOVERY, start_s, tl->t, tl->e));
        if (is_whole) return 0;
        TRY(on_failure(tl, tl->next_rank, !tl->is_next_the_spec));
    }
}

/* A phase that saves the state (a checkpoint or a commit) after step k:
 * false when a failure cut it (recovered from already). */
static int save(struct timeline *tl, double dur_s, bool is_rollback_point, bool *is_whole)
{
    double start_s = tl->t;
    *is_whole = run_phase(tl, dur_s, &tl->out->checkpoint_s);
    TRY(timeline_marks_add_gap(tl->s->marks, TL_GAP_SAVE, start_s, tl->t, tl->e));
    if (!*is_whole) {
        TRY(on_failure(tl, tl->next_rank, !tl->is_next_the_spec));
        return recover(tl);
    }
    if (is_rollback_point) {
        tl->safe_k = tl->k;
        tl->work_since_safe_s = 0;
        if (tl->s->marks) tl->first_unsafe_run = tl->s->marks->runs.len;
    }
    return 0;
}

/* Recording: the failure-free run's step starts (marks), shrink's
 * survivors (marks or busy), and nobody's busy time yet. */
static int recording_begin(struct timeline *tl)
{
    const struct failure_setup *s = tl->s;
    if (s->marks) {
        if (!(tl->from_s = XCALLOC(tl->e, (size_t)s->steps + 1, sizeof *tl->from_s)))
            return ERR_NOMEM;
        for (int k = 0; k < s->steps; k++) tl->from_s[k + 1] = tl->from_s[k] + s->step_s[k];
    }
    if (s->policy == FAILURE_SHRINK && (s->marks || s->busy)) {
        if (!(tl->is_alive = XCALLOC(tl->e, (size_t)s->n_workers, sizeof *tl->is_alive)))
            return ERR_NOMEM;
        for (int i = 0; i < s->n_workers; i++) tl->is_alive[i] = true;
    }
    if (s->busy) {
        struct failure_busy *b = s->busy;
        for (int i = 0; i < s->n_workers; i++) {
            b->compute_s[i] = b->comm_s[i] = 0;
            b->down_from_s[i] = INFINITY;
            b->steps[i] = 0;
        }
        for (int k = 0; k < s->steps; k++) b->step_s[k] = 0;
    }
    return 0;
}

/* The run of step tl->k that began at start_s and took dur_s, or was cut by
 * a failure at tl->t. Its scale stretches the failure-free step to this
 * duration (shrink's steps on fewer workers). */
static int mark_step(struct timeline *tl, double start_s, double dur_s, bool is_cut)
{
    if (!tl->s->marks) return 0;
    int k = tl->k;
    double free_s = tl->s->step_s[k];
    struct tl_step_run r = {.step = k, .start_s = start_s, .end_s = tl->t,
                            .from_s = tl->from_s[k], .scale = free_s > 0 ? dur_s / free_s : 1,
                            .is_lost = is_cut, .is_redo = k < tl->n_started};
    if (k + 1 > tl->n_started) tl->n_started = k + 1;
    return timeline_marks_add_run(tl->s->marks, r, tl->e);
}

int failure_timeline(const struct failure_setup *s, struct failure_outcome *out, struct err *e)
{
    *out = (struct failure_outcome){.first_rank = -1, .n_workers_end = s->n_workers};
    if (s->policy != FAILURE_RESTART && s->policy != FAILURE_SHRINK)
        return err_set(e, ERR_INPUT, "failure_timeline: policy %s is the event loop's "
                       "(simulate.h), not the timeline's", failure_policy_names[s->policy]);
    if (s->steps < 0 || s->n_workers < 1 || s->n_servers < 0 || !s->step_s || !(s->mtbf_s >= 0))
        return err_set(e, ERR_INPUT, "failure_timeline: %d steps on %d workers, mtbf %g s: "
                       "not a run", s->steps, s->n_workers, s->mtbf_s);
    /* Progress survives a failure only at a rollback point (a checkpoint,
     * or a commit for shrink; the start when there are none), so the K steps
     * between two of them, the save and a recovery must all fit between
     * failures: with job MTBF M, a span of d seconds takes e^(d/M) tries on
     * average. Past e^14 (about a million tries a span) the run would not
     * end in any time worth simulating: refuse it now, not after 10^7
     * failures. */
    if (s->mtbf_s > 0) {
        double longest_s = 0;
        for (int k = 0; k < s->steps; k++)
            if (s->step_s[k] > longest_s) longest_s = s->step_s[k];
        const bool is_shrink = s->policy == FAILURE_SHRINK;
        int every = is_shrink ? s->commit_every : s->checkpoint_every;
        if (every <= 0 || every > s->steps) every = s->steps;
        double save_s = is_shrink ? s->costs.commit_s : s->costs.checkpoint_s;
        double recovery_s = s->costs.detect_s +
                            failure_relaunch_s(&s->costs, s->n_workers + s->n_servers) +
                            s->costs.load_s;
        double span_s = every * longest_s + save_s + recovery_s;
        double job_mtbf_s = s->mtbf_s / s->n_workers;
        if (span_s / job_mtbf_s > FAILURE_MAX_EXPONENT)
            return err_set(e, ERR_INPUT,
                           "--mtbf: %.4g h per device is a failure every %.4g s for the job's %d "
                           "devices, while %d step%s of up to %.4g s, a save and a recovery "
                           "(%.4g s in all) must pass without one: the run would never finish; "
                           "give a longer --mtbf or save more often (--%s)",
                           s->mtbf_s / 3600, job_mtbf_s, s->n_workers, every,
                           every == 1 ? "" : "s", longest_s, span_s,
                           is_shrink ? "commit-every" : "checkpoint-every");
    }
    struct timeline tl = {.s = s, .out = out, .e = e, .n = s->n_workers,
                          .run = {s->step_s, s->compute_s, s->comm_s, s->worker_steps}};
    bool is_shrink = s->policy == FAILURE_SHRINK;
    int rc = recording_begin(&tl);
    if (rc == 0 && s->mtbf_s > 0 && !(tl.draws = failure_draws_create(s->seed, e))) rc = e->code;
    if (rc == 0) schedule_next(&tl);
    while (rc == 0 && tl.k < s->steps) {
        const struct failure_spec *f = &s->failure;
        if (f->is_set && f->step == tl.k && !tl.is_spec_fired) {
            /* R@STEP: rank R dies as it starts the step, the first time */
            tl.is_spec_fired = true;
            tl.is_next_the_spec = false;
            if ((rc = on_failure(&tl, f->rank, false)) == 0) rc = recover(&tl);
            continue;
        }
        double d = tl.run.step_s[tl.k];
        double before = tl.t;
        bool is_step_whole = run_phase(&tl, d, &out->work_s);
        if ((rc = mark_step(&tl, before, d, !is_step_whole)) != 0) break;
        if (!is_step_whole) {
            tl.work_since_safe_s += tl.t - before;
            if ((rc = on_failure(&tl, tl.next_rank, !tl.is_next_the_spec)) == 0) rc = recover(&tl);
            continue;
        }
        tl.work_since_safe_s += d;
        tl.k++;
        bool is_whole = true;
        if (tl.k < s->steps && is_shrink && s->commit_every > 0 && tl.k % s->commit_every == 0)
            rc = save(&tl, s->costs.commit_s, true, &is_whole);
        if (rc == 0 && is_whole && tl.k < s->steps && s->checkpoint_every > 0 &&
            tl.k % s->checkpoint_every == 0) {
            rc = save(&tl, s->costs.checkpoint_s, !is_shrink, &is_whole);
        }
    }
    /* work_s counted every step run, the redone ones too: what survived is
     * the rest */
    out->work_s -= out->redone_s;
    if (rc == 0) record_run(&tl, s->steps);
    out->total_s = tl.t;
    out->n_workers_end = tl.n;
    failure_draws_free(tl.draws);
    free(tl.from_s);
    free(tl.is_alive);
    return rc;
}

double failure_lost_s(const struct failure_outcome *o)
{
    return o->detect_s + o->relaunch_s + o->redone_s;
}

double failure_goodput(const struct failure_outcome *o)
{
    return o->total_s > 0 ? o->work_s / o->total_s : 1;
}

/* Legend and notes under a table of reports (table_notes.h). The notes say
 * what the numbers of this run are and why; the words around them are the
 * glossary's (`strata help metrics`, docs/metrics.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "table_notes.h"

bool table_legend_print(FILE *out, const struct report *const *rs, int n)
{
    if (n <= 0) return false;
    bool any_final = false, any_failure = false, any_updates = false, any_down = false;
    /* pipelined-steps has no pulls or pushes: its staleness is its own
     * steps in flight (docs/metrics.md), which the pull/push words miss */
    bool any_in_flight = false;
    for (int i = 0; i < n; i++) {
        any_final |= rs[i]->has_final;
        any_failure |= rs[i]->failure.happened;
        any_updates |= rs[i]->has_final && rs[i]->updates > 0;
        any_down |= rs[i]->breakdown.down > 0;
        any_in_flight |= rs[i]->staleness.max > 0 && !strcmp(rs[i]->strategy, "pipelined-steps");
    }
    fputs("compute/comm/idle: shares of the workers' time (comm: not hidden under compute); "
          "bubble: stages' time not computing;\n  staleness: mean/max updates by others between a "
          "worker's pull and its push; peak mem: per device", out);
    if (any_in_flight)
        fputs(";\n  pipelined-steps' staleness: updates between a gradient's parameters and its "
              "own (--inflight K: up to K - 1)", out);
    /* report_print_table shows the down column when some run has it */
    if (any_down)
        fputs(";\n  down: share of the workers' time after their death (compute + comm + down + "
              "idle = 100%)", out);
    if (any_failure) fputs(";\n  time lost: detection + relaunch + redone work; goodput: share "
                           "of the time on work that survived", out);
    if (any_final)
        fprintf(out, ";\n  %sloss and accuracy: on the test set, after the last step",
                any_updates ? "updates: optimizer steps the model took; " : "");
    fputs(".\n", out);
    return true;
}

/* The figures a row shows, equal (the same computation gives the same
 * doubles, so equality is exact, not a tolerance). */
static bool same_figures(const struct report *a, const struct report *b)
{
    return a->devices == b->devices && a->step_time_s.mean == b->step_time_s.mean &&
           a->throughput_samples_per_s == b->throughput_samples_per_s &&
           a->breakdown.compute == b->breakdown.compute && a->breakdown.comm == b->breakdown.comm &&
           a->breakdown.idle == b->breakdown.idle && a->staleness.mean == b->staleness.mean &&
           a->staleness.max == b->staleness.max && a->has_final == b->has_final &&
           (!a->has_final || a->final.test_accuracy == b->final.test_accuracy);
}

/* "A and B", "A, B and C": the strategies of rs[members[0..n)]; returns
 * the characters printed. */
static int print_names(FILE *out, const struct report *const *rs, const int *members, int n)
{
    int len = 0;
    for (int k = 0; k < n; k++)
        len += fprintf(out, "%s%s", k == 0 ? "" : k == n - 1 ? " and " : ", ",
                       rs[members[k]]->strategy);
    return len;
}

/* A note breaks its line before it passes this column: the other notes'
 * lines are at most 107 columns (ps-ssp's). */
enum { NOTE_COLUMNS = 110 };

static const char same_figures_said[] = "ran exactly alike here";
static const char same_figures_why[] = "(the same step time, breakdown "
                                        "and staleness)";

/* ps-ssp among its twins rs[members[0..m)]: its bound K (--staleness) is in
 * steps, a worker's lead over the slowest; it waits only past K
 * (core/ps_policy.h), so a largest lead L <= K means no pull ever waited
 * and the run is ps-async's. With one twin the note names it; with more,
 * the group is named once and the bound explained after it. */
static void explain_ssp(FILE *out, const struct report *ssp, const struct report *const *rs,
                        const int *members, int m)
{
    long long k = ssp->config ? ssp->config->staleness : -1;
    long long l = (long long)ssp->max_step_lead;
    int w = ssp->devices;
    if (m == 2) {
        const struct report *twin = rs[members[rs[members[0]] == ssp ? 1 : 0]];
        fprintf(out, "  note: %s ran exactly as %s: its bound", ssp->strategy, twin->strategy);
    } else {
        fprintf(out, "  note: ");
        print_names(out, rs, members, m);
        fprintf(out, " %s %s:\n  %s's bound", same_figures_said, same_figures_why,
                ssp->strategy);
    }
    fprintf(out, " K = %lld step%s (--staleness: a pull "
            "waits while its worker\n  is more than K steps ahead of the slowest) never held a "
            "pull: the largest lead was L = %lld step%s.\n", k, k == 1 ? "" : "s", l,
            l == 1 ? "" : "s");
    if (w < 2) return;   /* one worker: no one else's updates to count */
    fprintf(out, "  Staleness counts versions, the updates of all %d workers: a lead of L steps "
            "allows about %d (L + 1) = %lld;\n  the largest here was %lld. Slow one worker "
            "down (--straggler slow:1=3) to make K bind.\n", w, w - 1,
            (long long)(w - 1) * (l + 1), (long long)ssp->staleness.max);
}

bool note_identical_rows(FILE *out, const struct report *const *rs, int n)
{
    /* Equal figures are an equivalence (exact equality): one note a group,
     * not one a pair (on one device eight strategies are the same step,
     * which made 28 notes). A group with ps-ssp whose bound never held says
     * why in its one note (it was two: "ps-ssp ran exactly as ps-sync" and
     * "ps-sync and ps-async ran alike"). */
    bool said = false;
    bool *is_grouped = calloc((size_t)n + 1, sizeof *is_grouped);
    int *members = calloc((size_t)n + 1, sizeof *members);
    for (int i = 0; is_grouped && members && i < n; i++) {
        if (is_grouped[i]) continue;
        int m = 0, ssp = -1;
        for (int j = i; j < n; j++)
            if (!is_grouped[j] && same_figures(rs[i], rs[j])) {
                is_grouped[j] = true;
                members[m++] = j;
            }
        if (m < 2) continue;
        said = true;
        for (int k = 0; k < m; k++)
            if (!strcmp(rs[members[k]]->strategy, "ps-ssp")) ssp = k;
        const struct report *r = ssp >= 0 ? rs[members[ssp]] : NULL;
        if (r && r->has_step_lead && r->config && r->max_step_lead <= r->config->staleness) {
            explain_ssp(out, r, rs, members, m);
            continue;
        }
        int len = fprintf(out, "  note: ");
        len += print_names(out, rs, members, m);
        len += fprintf(out, " %s", same_figures_said);
        bool fits = len + 1 + (int)strlen(same_figures_why) + 1 <= NOTE_COLUMNS;
        fprintf(out, "%s%s.\n", fits ? " " : "\n  ", same_figures_why);
    }
    free(is_grouped);
    free(members);
    return said;
}

/* samples_applied counts the last job's samples only; updates, those of
 * the model (a resumed job's include the ones before it) */
static int64_t samples_per_update(const struct report *r)
{
    int64_t job_updates = r->updates - r->updates_resumed;
    return job_updates > 0 ? r->samples_applied / job_updates : 0;
}

bool note_more_updates(FILE *out, const struct report *const *rs, int n)
{
    int lo = -1, hi = -1;
    for (int i = 0; i < n; i++) {
        if (!rs[i]->has_final || rs[i]->updates <= 0) continue;
        if (lo < 0 || rs[i]->updates < rs[lo]->updates) lo = i;
        if (hi < 0 || rs[i]->updates > rs[hi]->updates) hi = i;
    }
    if (lo < 0 || rs[hi]->updates < 2 * rs[lo]->updates) return false;
    double ratio = (double)rs[hi]->updates / (double)rs[lo]->updates;
    fprintf(out, "  note: %s made %.1f× the updates of %s (%lld of %lld samples against %lld "
            "of %lld): its loss and\n  accuracy are after more, smaller, staler steps; lab "
            "async-noise compares equal numbers of updates.\n",
            rs[hi]->strategy, ratio, rs[lo]->strategy, (long long)rs[hi]->updates,
            (long long)samples_per_update(rs[hi]), (long long)rs[lo]->updates,
            (long long)samples_per_update(rs[lo]));
    return true;
}

bool note_nothing_applied(FILE *out, const struct report *const *rs, int n)
{
    bool said = false;
    for (int i = 0; i < n; i++) {
        const struct report *r = rs[i];
        /* both: a report read back from before samples_applied has it 0 */
        if (r->samples_applied != 0 || r->throughput_samples_per_s != 0 || !r->config ||
            r->config->steps < 1)
            continue;
        long long lag = !strcmp(r->strategy, "pipelined-steps") ? r->config->inflight - 1 : 0;
        fprintf(out, "  note: %s applied no gradient in its %lld step%s, so its samples/s is 0",
                r->strategy, r->config->steps, r->config->steps == 1 ? "" : "s");
        if (lag >= r->config->steps)
            fprintf(out, ": a step's gradients are applied --inflight - 1 = %lld steps later; "
                    "run more steps than that", lag);
        fputs(".\n", out);
        said = true;
    }
    return said;
}

bool note_diverged(FILE *out, const struct report *const *rs, int n)
{
    bool said = false;
    for (int i = 0; i < n; i++) {
        const struct report *r = rs[i];
        if (!r->has_final) continue;
        int at = -1;
        for (int k = 0; k < r->n_loss_curve && at < 0; k++)
            if (!isfinite(r->loss_curve[k].loss)) at = k;
        if (at < 0 && isfinite(r->final.loss)) continue;
        fprintf(out, "  note: %s diverged: its training loss became NaN or infinite", r->strategy);
        if (at >= 0)
            fprintf(out, " at step %lld of %lld", (long long)r->loss_curve[at].step,
                    r->config ? r->config->steps : (long long)r->n_loss_curve);
        fprintf(out, ", so its loss shows `-`;\n  its accuracy %.1f%% is what a broken model "
                "scores.", 100 * r->final.test_accuracy);
        if (r->config)
            fprintf(out, " Lower --lr (%g) or --momentum (%g).", r->config->lr,
                    r->config->momentum);
        fputc('\n', out);
        said = true;
    }
    return said;
}

/* Device-seconds of compute per sample applied: what one sample costs. */
static double compute_per_sample_s(const struct report *r)
{
    double s = 0;
    for (int k = 0; k < r->n_per_rank; k++) s += r->per_rank[k].compute_s;
    return r->samples_applied > 0 ? s / (double)r->samples_applied : NAN;
}

bool note_superlinear(FILE *out, const struct report *const *rs, int n, const double *speedup,
                      const struct report *baseline)
{
    if (!speedup || !baseline) return false;
    bool said = false;
    double base_us = 1e6 * compute_per_sample_s(baseline);
    for (int i = 0; i < n; i++) {
        if (!(speedup[i] > rs[i]->devices) || rs[i]->devices <= 1) continue;
        double us = 1e6 * compute_per_sample_s(rs[i]);
        fprintf(out, "  note: %s's speedup %.2f× is more than its %d devices: ", rs[i]->strategy,
                speedup[i], rs[i]->devices);
        if (us < base_us)   /* e.g. a sharded optimizer update: 1/N of it each */
            fprintf(out, "its work split %d ways costs less\n  compute a sample (%.3g us) than "
                    "the one-device baseline's whole (%.3g us).\n", rs[i]->devices, us, base_us);
        else
            fprintf(out, "not by cheaper compute (%.3g us a\n  sample against the one-device "
                    "baseline's %.3g us): the baseline waited, idle %.1f%% of its time.\n", us,
                    base_us, 100 * baseline->breakdown.idle);
        said = true;
    }
    return said;
}

/* Whether r ran with --fail and no rank failed: a --fail R@Ts whose T came
 * after the run's end (a step past the end is refused before the run; a
 * time cannot be, the run's length is what the simulation finds). */
bool note_is_fail_unmet(const struct report *r)
{
    return r->config && r->config->fail[0] &&
           (!r->failure.happened || r->failure.n_failures == 0);
}

bool note_fail_unmet(FILE *out, const struct report *const *rs, int n)
{
    int n_unmet = 0;
    double longest_s = 0;
    const char *fail = NULL;
    for (int i = 0; i < n; i++) {
        if (!note_is_fail_unmet(rs[i])) continue;
        n_unmet++;
        fail = rs[i]->config->fail;
        /* the job time T: step time's mean is T / S (docs/metrics.md) */
        double t_s = rs[i]->step_time_s.mean * (double)rs[i]->config->steps;
        if (t_s > longest_s) longest_s = t_s;
    }
    if (!n_unmet) return false;
    fprintf(out, "  note: --fail %s: no rank failed", fail);
    if (n_unmet < n) {
        fputs(" in", out);
        for (int i = 0, k = 0; i < n; i++)
            if (note_is_fail_unmet(rs[i])) fprintf(out, "%s %s", k++ ? "," : "", rs[i]->strategy);
    }
    fprintf(out, ": %s before it came (%s %.4g s);\n  fail earlier or run more --steps.\n",
            n_unmet == 1 ? "the run ended" : "the runs ended",
            n_unmet == 1 ? "at" : "the longest at", longest_s);
    return true;
}

bool table_notes_print(FILE *out, const struct report *const *rs, int n, const double *speedup,
                       const struct report *baseline)
{
    bool said = note_identical_rows(out, rs, n);
    said |= note_more_updates(out, rs, n);
    said |= note_diverged(out, rs, n);
    said |= note_nothing_applied(out, rs, n);
    said |= note_superlinear(out, rs, n, speedup, baseline);
    said |= note_fail_unmet(out, rs, n);
    return said;
}

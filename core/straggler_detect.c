/* Straggler detection (straggler_detect.h): compute spans grouped by the
 * op they ran and the step, each member's duration held against the median
 * of the other members', then each rank's ratios summarised.
 *
 * Cost: two sorts of the compute spans, O(N log N); the median of "the
 * others" is read off the sorted group (at_without). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "straggler_detect.h"

/* A compute span reduced to what grouping needs. */
struct sample {
    int32_t kind, lo, hi, mb, step, rank;
    double dur_s;
};

/* One compared op: its rank, step and ratio to the others' median. */
struct ratio {
    int32_t rank, step;
    double ratio;
};

static int cmp_i32(int32_t a, int32_t b)
{
    return (a > b) - (a < b);
}

/* Same op in the same step together; within a group, by duration. */
static int by_group_then_duration(const void *x, const void *y)
{
    const struct sample *a = x, *b = y;
    int c = cmp_i32(a->kind, b->kind);
    if (!c) c = cmp_i32(a->lo, b->lo);
    if (!c) c = cmp_i32(a->hi, b->hi);
    if (!c) c = cmp_i32(a->mb, b->mb);
    if (!c) c = cmp_i32(a->step, b->step);
    if (!c) c = (a->dur_s > b->dur_s) - (a->dur_s < b->dur_s);
    if (!c) c = cmp_i32(a->rank, b->rank);
    return c;
}

static bool same_group(const struct sample *a, const struct sample *b)
{
    return a->kind == b->kind && a->lo == b->lo && a->hi == b->hi && a->mb == b->mb &&
           a->step == b->step;
}

static int by_rank_step_ratio(const void *x, const void *y)
{
    const struct ratio *a = x, *b = y;
    int c = cmp_i32(a->rank, b->rank);
    if (!c) c = cmp_i32(a->step, b->step);
    if (!c) c = (a->ratio > b->ratio) - (a->ratio < b->ratio);
    return c;
}

/* Element k of ascending d[0..n) with element p taken out. */
static double at_without(const double *d, size_t p, size_t k)
{
    return d[k < p ? k : k + 1];
}

double straggler_median_of_others(const double *d, size_t n, size_t p)
{
    size_t m = n - 1;
    if (m % 2) return at_without(d, p, m / 2);
    return (at_without(d, p, m / 2 - 1) + at_without(d, p, m / 2)) / 2;
}

static int by_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median of sorted x[0..n), n > 0. */
static double median_sorted(const double *x, size_t n)
{
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Nearest-rank percentile of sorted x[0..n), n > 0 (as core/analysis.c). */
static double percentile_sorted(const double *x, size_t n, int pct)
{
    size_t k = ((size_t)pct * n + 99) / 100;
    return x[k ? k - 1 : 0];
}

/* The ratios of every group with two or more members into *out. */
static int compare_groups(struct sample *s, size_t n, struct ratio **out, size_t *n_out,
                          struct err *e)
{
    qsort(s, n, sizeof *s, by_group_then_duration);
    struct ratio *r = n ? XCALLOC(e, n, sizeof *r) : NULL;
    double *durs = n ? XCALLOC(e, n, sizeof *durs) : NULL;   /* one group's, ascending */
    if (n && (!r || !durs)) {
        free(r);
        free(durs);
        return ERR_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && same_group(&s[i], &s[j])) j++;
        for (size_t p = i; p < j; p++) durs[p - i] = s[p].dur_s;
        for (size_t p = i; j - i >= 2 && p < j; p++) {
            double ref_s = straggler_median_of_others(durs, j - i, p - i);
            double ratio = s[p].dur_s / ref_s;
            if (ref_s > 0 && isfinite(ratio)) r[k++] = (struct ratio){s[p].rank, s[p].step, ratio};
        }
        i = j;
    }
    free(durs);
    *out = r;
    *n_out = k;
    return 0;
}

/* One rank's summary from its ratios r[0..n), sorted by step then ratio;
 * buf has room for n doubles. */
static void summarise(const struct ratio *r, size_t n, double *buf, struct rank_pace *pace)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && r[j].step == r[i].step) j++;
        for (size_t k = i; k < j; k++) buf[k - i] = r[k].ratio;
        pace->steps_compared++;
        if (median_sorted(buf, j - i) >= STRAGGLER_SLOW_RATIO) pace->steps_slow++;
        i = j;
    }
    for (size_t k = 0; k < n; k++) buf[k] = r[k].ratio;
    qsort(buf, n, sizeof *buf, by_double);
    pace->median_ratio = median_sorted(buf, n);
    pace->p99_ratio = percentile_sorted(buf, n, 99);
    pace->is_straggler = pace->median_ratio >= STRAGGLER_SLOW_RATIO &&
                         (double)pace->steps_slow >=
                             STRAGGLER_SHARE_OF_STEPS * (double)pace->steps_compared;
}

static bool is_compute(int kind)
{
    return kind >= 0 && kind < OP_N_KINDS && op_infos[kind].cls == OPC_COMPUTE;
}

int straggler_detect(const struct span *spans, size_t n, struct rank_pace **out, int *n_out,
                     struct err *e)
{
    *out = NULL;
    *n_out = 0;
    size_t n_samples = 0;
    int32_t max_rank = -1;
    for (size_t i = 0; i < n; i++)
        if (is_compute(spans[i].kind) && spans[i].rank >= 0) {
            n_samples++;
            if (spans[i].rank > max_rank) max_rank = spans[i].rank;
        }
    if (n_samples == 0) return 0;

    int rc = ERR_NOMEM;
    struct sample *s = XCALLOC(e, n_samples, sizeof *s);
    bool *has_compute = XCALLOC(e, (size_t)max_rank + 1, sizeof *has_compute);
    double *buf = XCALLOC(e, n_samples, sizeof *buf);
    struct ratio *r = NULL;
    struct rank_pace *paces = NULL;
    size_t n_ratios = 0;
    if (!s || !has_compute || !buf) goto out;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct span *sp = &spans[i];
        if (!is_compute(sp->kind) || sp->rank < 0) continue;
        s[k++] = (struct sample){sp->kind, sp->lo, sp->hi, sp->mb, sp->step, sp->rank,
                                 sp->end_s - sp->start_s};
        has_compute[sp->rank] = true;
    }
    if ((rc = compare_groups(s, n_samples, &r, &n_ratios, e)) < 0) goto out;
    qsort(r, n_ratios, sizeof *r, by_rank_step_ratio);

    int n_paces = 0;
    for (int32_t rank = 0; rank <= max_rank; rank++) n_paces += has_compute[rank];
    rc = ERR_NOMEM;
    if (!(paces = XCALLOC(e, (size_t)n_paces, sizeof *paces))) goto out;
    size_t at = 0;   /* r[at..) are the ratios of ranks not yet summarised */
    int p = 0;
    for (int32_t rank = 0; rank <= max_rank; rank++) {
        if (!has_compute[rank]) continue;
        struct rank_pace *pace = &paces[p++];
        *pace = (struct rank_pace){.rank = rank, .median_ratio = NAN, .p99_ratio = NAN};
        size_t end = at;
        while (end < n_ratios && r[end].rank == rank) end++;
        if (end > at) summarise(&r[at], end - at, buf, pace);
        at = end;
    }
    *out = paces;
    *n_out = n_paces;
    paces = NULL;
    rc = 0;
out:
    free(s);
    free(has_compute);
    free(buf);
    free(r);
    free(paces);
    return rc;
}

/* --- JSON -------------------------------------------------------------------------- */

#define PACE(k, kind_, member, ...) JSON_FIELD(k, kind_, struct rank_pace, member, __VA_ARGS__)
static const struct json_field pace_fields[] = {
    PACE("rank", JSON_INT, rank),
    PACE("median_ratio", JSON_REAL, median_ratio),
    PACE("p99_ratio", JSON_REAL, p99_ratio),
    PACE("steps_compared", JSON_WHOLE, steps_compared),
    PACE("steps_slow", JSON_WHOLE, steps_slow),
    PACE("straggler", JSON_BOOL, is_straggler),
};
static const struct json_table pace_table = JSON_TABLE(JSON_SHAPE_OBJECT, pace_fields);

cJSON *straggler_to_json(const struct rank_pace *paces, int n)
{
    bool ok = true;
    cJSON *o = cJSON_CreateObject();
    json_add(o, "slow_ratio", json_num(STRAGGLER_SLOW_RATIO), &ok);
    json_add(o, "share_of_steps", json_num(STRAGGLER_SHARE_OF_STEPS), &ok);
    cJSON *a = json_add(o, "ranks", cJSON_CreateArray(), &ok);
    for (int i = 0; ok && i < n; i++) json_add(a, NULL, json_write_fields(&paces[i], &pace_table), &ok);
    if (ok) return o;
    cJSON_Delete(o);
    return NULL;
}

/* A pace read back must be one the detector could have written: ratios
 * positive (or null), slow steps among the compared ones, and the verdict
 * the rule gives, so a report cannot name a straggler the data deny. */
static int check_pace(const struct rank_pace *p, const struct json_at *at)
{
    if (!isnan(p->median_ratio) && !(p->median_ratio > 0))
        return json_bad(at, "has median_ratio %g, not a positive ratio or null", p->median_ratio);
    if (!isnan(p->p99_ratio) && !(p->p99_ratio > 0))
        return json_bad(at, "has p99_ratio %g, not a positive ratio or null", p->p99_ratio);
    if (p->steps_slow > p->steps_compared)
        return json_bad(at, "has steps_slow %lld above steps_compared %lld",
                        (long long)p->steps_slow, (long long)p->steps_compared);
    bool rule = p->median_ratio >= STRAGGLER_SLOW_RATIO &&
                (double)p->steps_slow >= STRAGGLER_SHARE_OF_STEPS * (double)p->steps_compared;
    if (p->is_straggler != rule)
        return json_bad(at, "has straggler %s, but its ratios say %s",
                        p->is_straggler ? "true" : "false", rule ? "true" : "false");
    return 0;
}

int straggler_from_json(const cJSON *v, const struct json_at *at, struct rank_pace **out,
                        int *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!cJSON_IsObject(v)) return json_bad(at, "is %s, not an object", json_type_name(v));
    struct json_at ra = json_key(at, "ranks");
    const cJSON *a = json_need_as(v, &ra, cJSON_Array);
    if (!a) return ERR_INPUT;
    int n = cJSON_GetArraySize(a);
    struct rank_pace *paces = n ? XCALLOC(at->e, (size_t)n, sizeof *paces) : NULL;
    if (n && !paces) return ERR_NOMEM;
    int i = 0;
    for (const cJSON *item = a->child; item; item = item->next, i++) {
        struct json_at fi = json_index(&ra, i);
        int rc = json_read_fields(item, &fi, &paces[i], &pace_table, NULL);
        if (rc == 0) rc = check_pace(&paces[i], &fi);
        if (rc < 0) {
            free(paces);
            return rc;
        }
    }
    *out = paces;
    *n_out = n;
    return 0;
}

/* --- Terminal ------------------------------------------------------------------------ */

void straggler_print(FILE *out, const char *label, const struct rank_pace *paces, int n)
{
    if (n == 0) return;
    const char *pre = label ? label : "";
    const char *sep = label ? ": " : "";
    int n_judged = 0, n_slow = 0;
    for (int i = 0; i < n; i++) {
        n_judged += !isnan(paces[i].median_ratio);
        n_slow += paces[i].is_straggler;
    }
    fprintf(out, "%s%sstragglers: ", pre, sep);
    /* One rank computed (one device; or a job that went on with one
     * worker after a failure, --on-failure continue or shrink: the report
     * holds the last job's ranks): no peer at all, whatever the strategy. */
    if (n_judged == 0 && n == 1) {
        fprintf(out, "not judged (rank %d was the only rank that computed: there is no other "
                     "to compare it with)\n", paces[0].rank);
        return;
    }
    if (n_judged == 0) {
        fprintf(out, "not judged (no two ranks run the same op: pipeline and model stages "
                     "are compared only with their replicas, --dp)\n");
        return;
    }
    if (n_slow == 0) fprintf(out, "none");
    for (int i = 0, k = 0; i < n; i++) {
        const struct rank_pace *p = &paces[i];
        if (!p->is_straggler) continue;
        fprintf(out, "%srank %d (compute %.2fx the median of the others, %lld/%lld steps)",
                k++ ? ", " : "", p->rank, p->median_ratio, (long long)p->steps_slow,
                (long long)p->steps_compared);
    }
    fprintf(out, "\n%s%scompute pace per op vs the other ranks (median, p99):", pre, sep);
    for (int i = 0; i < n; i++) {
        const struct rank_pace *p = &paces[i];
        if (isnan(p->median_ratio)) fprintf(out, " rank %d -", p->rank);
        else fprintf(out, " rank %d %.2fx %.2fx", p->rank, p->median_ratio, p->p99_ratio);
        if (i + 1 < n) fputc(',', out);
    }
    fputc('\n', out);
}

/* Stragglers and failures: parsing --straggler and --fail, and the per-rank
 * random streams that draw the disturbances (see straggler.h for the models).
 *
 * Draws happen only where the model needs them: exp and lognormal draw one
 * variate per compute op, pause one uniform per step, none and slow draw
 * nothing. So a rank's stream under each model depends only on how many ops
 * (or steps) that rank ran, never on calls the model ignores: sim/ and real/
 * may ask for both kinds of disturbance and still see the same numbers. */
#include <assert.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "straggler.h"
#include "text_append.h"

#define STRAGGLER_FORMS "none, exp:F, lognormal:SIGMA, slow:R=X[,R=X], pause:P:D"

/* Bounds that keep every disturbed time finite: a run's time is a sum of
 * at most ~1e9 steps of ops whose base time is finite, so factors up to a
 * million, a LogNormal sigma up to 10 (exp(10 Z) stays finite for any draw
 * GSL makes) and pauses up to a million seconds (11.6 days) cannot reach
 * infinity, yet cover every slowdown worth simulating. */
#define STRAGGLER_MAX_FACTOR 1e6
#define STRAGGLER_MAX_SIGMA 10.0
#define STRAGGLER_MAX_PAUSE_S 1e6

/* ---- numbers ---------------------------------------------------------- */

/* A finite or non-finite double spelled with nothing around it: no leading
 * space (strtod would skip it), no trailing text. Returns the end or NULL.
 * Range and finiteness are the caller's checks, so they get their own
 * messages. */
static const char *scan_double(const char *p, double *out)
{
    if (*p == '\0' || isspace((unsigned char)*p)) return NULL;
    char *end;
    double v = strtod(p, &end);
    if (end == p) return NULL;
    *out = v;
    return end;
}

/* An integer with an optional '-' (so "-1" gets the "rank >= 0" message,
 * not "not a model"); digits must follow at once. Values beyond long long
 * clamp to its ends, so the caller's range check still rejects them.
 * Returns the end or NULL. */
static const char *scan_int(const char *p, long long *out)
{
    const char *q = p + (*p == '-');
    if (*q < '0' || *q > '9') return NULL;
    char *end;
    *out = strtoll(p, &end, 10);   /* clamps to LLONG_MIN/MAX on overflow */
    return end;
}

/* ---- --straggler ------------------------------------------------------ */

static int not_a_model(const char *text, struct err *e)
{
    return err_set(e, ERR_INPUT, "--straggler: '%s' is not a model (" STRAGGLER_FORMS ")", text);
}

/* Range checks of a parsed (or hand-made) spec; text names it in messages. */
static int check_spec(const struct straggler_spec *s, const char *text, struct err *e)
{
    switch (s->kind) {
    case STRAG_NONE:
        return 0;
    case STRAG_EXP:
        if (!(s->exp_factor >= 0 && s->exp_factor <= STRAGGLER_MAX_FACTOR))
            return err_set(e, ERR_INPUT,
                           "--straggler: '%s': F must be a number from 0 to %.15g (exp:F adds an "
                           "Exponential delay of mean F x the op's time)", text,
                           STRAGGLER_MAX_FACTOR);
        return 0;
    case STRAG_LOGNORMAL:
        if (!(s->sigma >= 0 && s->sigma <= STRAGGLER_MAX_SIGMA))
            return err_set(e, ERR_INPUT,
                           "--straggler: '%s': SIGMA must be a number from 0 to %.15g "
                           "(lognormal:SIGMA multiplies op times by LogNormal(-SIGMA^2/2, SIGMA); "
                           "0 = no noise)", text, STRAGGLER_MAX_SIGMA);
        return 0;
    case STRAG_SLOW:
        if (s->n_slow < 1 || s->n_slow > STRAGGLER_MAX_SLOW)
            return err_set(e, ERR_INPUT,
                           "--straggler: '%s': slow:R=X[,R=X] names 1 to %d ranks", text,
                           STRAGGLER_MAX_SLOW);
        for (int i = 0; i < s->n_slow; i++) {
            if (s->slow_rank[i] < 0)
                return err_set(e, ERR_INPUT,
                               "--straggler: '%s': rank %d does not exist (ranks are >= 0)",
                               text, s->slow_rank[i]);
            if (!(s->slow_factor[i] >= 1 && s->slow_factor[i] <= STRAGGLER_MAX_FACTOR))
                return err_set(e, ERR_INPUT,
                               "--straggler: '%s': rank %d's factor X must be a number from 1 "
                               "to %.15g (slow:R=X makes rank R X times slower)", text,
                               s->slow_rank[i], STRAGGLER_MAX_FACTOR);
            /* O(n_slow^2), n_slow <= 64. */
            for (int j = 0; j < i; j++)
                if (s->slow_rank[j] == s->slow_rank[i])
                    return err_set(e, ERR_INPUT,
                                   "--straggler: '%s': rank %d is listed twice (one R=X each)",
                                   text, s->slow_rank[i]);
        }
        return 0;
    case STRAG_PAUSE:
        if (!(isfinite(s->pause_p) && s->pause_p >= 0 && s->pause_p <= 1))
            return err_set(e, ERR_INPUT,
                           "--straggler: '%s': P must be a probability from 0 to 1 (pause:P:D "
                           "stalls a rank D seconds with probability P each step)", text);
        if (!(s->pause_s >= 0 && s->pause_s <= STRAGGLER_MAX_PAUSE_S))
            return err_set(e, ERR_INPUT,
                           "--straggler: '%s': D must be a number of seconds from 0 to %.15g "
                           "(pause:P:D stalls a rank D seconds with probability P each step)",
                           text, STRAGGLER_MAX_PAUSE_S);
        return 0;
    }
    return err_set(e, ERR_INPUT, "--straggler: kind %d is not a model (" STRAGGLER_FORMS ")",
                   (int)s->kind);
}

/* "R=X[,R=X]" into s; syntax only (ranges are check_spec's). */
static int parse_slow_list(const char *p, const char *text, struct straggler_spec *s,
                           struct err *e)
{
    for (;;) {
        long long rank;
        double factor;
        if (!(p = scan_int(p, &rank)) || *p++ != '=' || !(p = scan_double(p, &factor)))
            return not_a_model(text, e);
        if (*p != ',' && *p != '\0') return not_a_model(text, e);
        if (s->n_slow == STRAGGLER_MAX_SLOW)
            return err_set(e, ERR_INPUT, "--straggler: '%s': at most %d slow ranks", text,
                           STRAGGLER_MAX_SLOW);
        if (rank < INT_MIN || rank > INT_MAX)
            return err_set(e, ERR_INPUT, "--straggler: '%s': rank %lld is out of range (0 to %d)",
                           text, rank, INT_MAX);
        s->slow_rank[s->n_slow] = (int)rank;
        s->slow_factor[s->n_slow] = factor;
        s->n_slow++;
        if (*p == '\0') return 0;
        p++;   /* ',' : another R=X must follow */
    }
}

int straggler_parse(const char *text, struct straggler_spec *out, struct err *e)
{
    if (!text) text = "none";
    struct straggler_spec s = {.kind = STRAG_NONE};
    const char *p;
    if (strcmp(text, "none") == 0) {
        s.kind = STRAG_NONE;
    } else if (strncmp(text, "exp:", 4) == 0) {
        s.kind = STRAG_EXP;
        if (!(p = scan_double(text + 4, &s.exp_factor)) || *p) return not_a_model(text, e);
    } else if (strncmp(text, "lognormal:", 10) == 0) {
        s.kind = STRAG_LOGNORMAL;
        if (!(p = scan_double(text + 10, &s.sigma)) || *p) return not_a_model(text, e);
    } else if (strncmp(text, "slow:", 5) == 0) {
        s.kind = STRAG_SLOW;
        TRY(parse_slow_list(text + 5, text, &s, e));
    } else if (strncmp(text, "pause:", 6) == 0) {
        s.kind = STRAG_PAUSE;
        if (!(p = scan_double(text + 6, &s.pause_p)) || *p++ != ':' ||
            !(p = scan_double(p, &s.pause_s)) || *p)
            return not_a_model(text, e);
    } else {
        return not_a_model(text, e);
    }
    TRY(check_spec(&s, text, e));
    *out = s;
    return 0;
}

/* Appends to buf[*used .. n), keeping it terminated; cuts what does not fit. */
static void append(char *buf, size_t n, size_t *used, const char *piece)
{
    size_t len = strlen(piece);
    size_t room = *used < n ? n - 1 - *used : 0;
    if (len > room) len = room;
    memcpy(buf + *used, piece, len);
    *used += len;
    buf[*used] = '\0';
}

void straggler_format(const struct straggler_spec *s, char *buf, size_t n)
{
    if (n == 0) return;
    buf[0] = '\0';
    size_t used = 0;
    char num[32];
    switch (s->kind) {
    case STRAG_NONE:
        append(buf, n, &used, "none");
        return;
    case STRAG_EXP:
        text_double_shortest(num, sizeof num, s->exp_factor);
        append(buf, n, &used, "exp:");
        append(buf, n, &used, num);
        return;
    case STRAG_LOGNORMAL:
        text_double_shortest(num, sizeof num, s->sigma);
        append(buf, n, &used, "lognormal:");
        append(buf, n, &used, num);
        return;
    case STRAG_SLOW:
        append(buf, n, &used, "slow:");
        for (int i = 0; i < s->n_slow && i < STRAGGLER_MAX_SLOW; i++) {
            snprintf(num, sizeof num, "%s%d=", i ? "," : "", s->slow_rank[i]);
            append(buf, n, &used, num);
            text_double_shortest(num, sizeof num, s->slow_factor[i]);
            append(buf, n, &used, num);
        }
        return;
    case STRAG_PAUSE:
        append(buf, n, &used, "pause:");
        text_double_shortest(num, sizeof num, s->pause_p);
        append(buf, n, &used, num);
        append(buf, n, &used, ":");
        text_double_shortest(num, sizeof num, s->pause_s);
        append(buf, n, &used, num);
        return;
    }
    append(buf, n, &used, "?");
}

/* ---- random streams ---------------------------------------------------- */

struct straggler {
    struct straggler_spec spec;
    int n_ranks;
    gsl_rng **rng;        /* [n_ranks]: rank r's stream */
    double *slow_factor;  /* [n_ranks]: slow:R=X as a table, 1 for the others */
};

/* Rank r's seed: output r + 1 of a SplitMix64 generator started at the run
 * seed (Steele, Lea & Flood, 2014; Vigna recommends it for seeding other
 * generators). It depends on (seed, r) alone, so adding ranks leaves the
 * others' streams as they were, and nearby seeds or ranks give unrelated
 * outputs. GSL's MT19937 keeps only the low 32 bits of its seed (seeds s and
 * s + 2^32 give the same stream), so the high half is folded in. The cost:
 * two of n ranks share a stream with probability about n^2 / 2^33, 1e-4 at
 * 1,000 ranks and 1% at 10,000; a generator with a 64-bit seed would fix it. */
static unsigned long stream_seed(uint64_t seed, int rank)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * ((uint64_t)rank + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (unsigned long)((z ^ (z >> 32)) & 0xffffffffull);
}

gsl_rng **straggler_streams_create(uint64_t seed, int n_ranks, const char *what, struct err *e)
{
    gsl_rng **rng = XCALLOC(e, n_ranks > 0 ? (size_t)n_ranks : 1, sizeof *rng);
    if (!rng) return NULL;
    for (int r = 0; r < n_ranks; r++) {
        /* One MT19937 per rank: 2.5 KB each, so 10^5 ranks cost 250 MB; a
         * smaller generator would do beyond that. GSL's default error
         * handler aborts when this allocation fails, unless main() has
         * turned it off (gsl_set_error_handler_off); then we report it. */
        if (!(rng[r] = gsl_rng_alloc(gsl_rng_mt19937))) {
            err_set(e, ERR_NOMEM, "out of memory allocating rank %d's %s stream", r, what);
            straggler_streams_free(rng, r);
            return NULL;
        }
        gsl_rng_set(rng[r], stream_seed(seed, r));
    }
    return rng;
}

void straggler_streams_free(gsl_rng **rng, int n_ranks)
{
    for (int r = 0; rng && r < n_ranks; r++) gsl_rng_free(rng[r]);   /* accepts NULL */
    free(rng);
}

/* s NULL = none (as sim_setup's straggler NULL is). */
struct straggler *straggler_create(const struct straggler_spec *s, uint64_t seed, int n_ranks,
                                   struct err *e)
{
    const struct straggler_spec none = {.kind = STRAG_NONE};
    if (!s) s = &none;
    if (n_ranks < 1) {
        err_set(e, ERR_INPUT, "--straggler: %d ranks is not allowed (at least 1)", n_ranks);
        return NULL;
    }
    char text[4096];
    straggler_format(s, text, sizeof text);
    if (check_spec(s, text, e) < 0) return NULL;
    for (int i = 0; s->kind == STRAG_SLOW && i < s->n_slow; i++)
        if (s->slow_rank[i] >= n_ranks) {
            err_set(e, ERR_INPUT,
                    "--straggler: '%s': rank %d does not exist (the run has %d ranks, 0 to %d)",
                    text, s->slow_rank[i], n_ranks, n_ranks - 1);
            return NULL;
        }

    struct straggler *g = XCALLOC(e, 1, sizeof *g);
    if (!g) return NULL;
    g->spec = *s;
    g->n_ranks = n_ranks;
    if (!(g->rng = straggler_streams_create(seed, n_ranks, "random", e))) goto fail;
    if (!(g->slow_factor = XCALLOC(e, (size_t)n_ranks, sizeof *g->slow_factor))) goto fail;
    for (int r = 0; r < n_ranks; r++) g->slow_factor[r] = 1.0;
    for (int i = 0; s->kind == STRAG_SLOW && i < s->n_slow; i++)
        g->slow_factor[s->slow_rank[i]] = s->slow_factor[i];
    return g;
fail:
    straggler_free(g);
    return NULL;
}

int straggler_check_ranks(const struct straggler_spec *s, int n_workers, int n_ranks,
                          const char *strategy, struct err *e)
{
    for (int i = 0; s && s->kind == STRAG_SLOW && i < s->n_slow; i++) {
        if (s->slow_rank[i] < n_workers) continue;
        char text[4096], ranks[32];
        straggler_format(s, text, sizeof text);
        if (s->slow_rank[i] >= n_ranks)
            return err_set(e, ERR_INPUT,
                           "--straggler: '%s': rank %d does not exist (the %s plan has %s)",
                           text, s->slow_rank[i], strategy,
                           text_ranks_upto(ranks, sizeof ranks, n_ranks - 1));
        return err_set(e, ERR_INPUT,
                       "--straggler: '%s': rank %d is a parameter server of the %s plan (its "
                       "workers: %s): a straggler slows compute ops, and servers run none",
                       text, s->slow_rank[i], strategy,
                       text_ranks_upto(ranks, sizeof ranks, n_workers - 1));
    }
    return 0;
}

void straggler_free(struct straggler *g)
{
    if (!g) return;
    straggler_streams_free(g->rng, g->n_ranks);
    free(g->slow_factor);
    free(g);
}

/* g NULL = none; a rank outside [0, n_ranks) is a caller's bug: it asserts in
 * debug builds and is left undisturbed otherwise. */
static bool has_rank(const struct straggler *g, int rank)
{
    bool ok = g && rank >= 0 && rank < g->n_ranks;
    assert((!g || ok) && "straggler: rank outside the run");
    return ok;
}

double straggler_compute_s(struct straggler *g, int rank, double base_s)
{
    if (!has_rank(g, rank)) return base_s;
    gsl_rng *r = g->rng[rank];
    switch (g->spec.kind) {
    case STRAG_EXP:
        /* Extra delay ~ Exponential with mean F x base (GSL's mu is the mean). */
        return base_s + gsl_ran_exponential(r, g->spec.exp_factor * base_s);
    case STRAG_LOGNORMAL: {
        /* E[LogNormal(zeta, sigma)] = exp(zeta + sigma^2/2) = 1 for zeta = -sigma^2/2. */
        double sigma = g->spec.sigma;
        return base_s * gsl_ran_lognormal(r, -0.5 * sigma * sigma, sigma);
    }
    case STRAG_SLOW:
        return base_s * g->slow_factor[rank];
    case STRAG_NONE:
    case STRAG_PAUSE:
        break;
    }
    return base_s;
}

double straggler_pause_s(struct straggler *g, int rank)
{
    if (!has_rank(g, rank) || g->spec.kind != STRAG_PAUSE) return 0;
    return gsl_rng_uniform(g->rng[rank]) < g->spec.pause_p ? g->spec.pause_s : 0;
}

void *straggler_stream_state(struct straggler *g, int rank, size_t *bytes)
{
    *bytes = 0;
    if (!g || rank < 0 || rank >= g->n_ranks) return NULL;
    *bytes = gsl_rng_size(g->rng[rank]);
    return gsl_rng_state(g->rng[rank]);
}

/* ---- --fail ------------------------------------------------------------ */

#define FAIL_FORM                                                                          \
    "R@STEP: rank R dies as it starts step STEP, e.g. 1@20; R@Ts: T seconds into the run, " \
    "e.g. 2@10.5s"

int failure_parse(const char *text, struct failure_spec *out, struct err *e)
{
    if (!text || !*text) {
        *out = (struct failure_spec){.is_set = false, .step = -1};
        return 0;
    }
    long long rank;
    const char *p = scan_int(text, &rank);
    if (!p || *p++ != '@')
        return err_set(e, ERR_INPUT, "--fail: '%s' is not R@STEP or R@Ts (" FAIL_FORM ")", text);
    if (rank < 0 || rank > INT_MAX)
        return err_set(e, ERR_INPUT, "--fail: '%s': R must be a rank from 0 to %d (" FAIL_FORM ")",
                       text, INT_MAX);
    const char *when = p;
    double time_s;
    if (!(p = scan_double(when, &time_s)))
        return err_set(e, ERR_INPUT, "--fail: '%s' is not R@STEP or R@Ts (" FAIL_FORM ")", text);
    if (p[0] == 's' && p[1] == '\0') {
        if (!(isfinite(time_s) && time_s >= 0))
            return err_set(e, ERR_INPUT,
                           "--fail: '%s': T must be a finite number of seconds >= 0 (" FAIL_FORM ")",
                           text);
        *out = (struct failure_spec){.is_set = true, .rank = (int)rank, .step = -1,
                                     .time_s = time_s};
        return 0;
    }
    long long step;
    if (!(p = scan_int(when, &step)) || *p) {
        /* "1@0.5" was the form before steps: say how to write seconds now */
        return err_set(e, ERR_INPUT,
                       "--fail: '%s': after '@' comes a whole step, or seconds ending in 's' "
                       "(" FAIL_FORM ")", text);
    }
    if (step < 0 || step > 1000000000)
        return err_set(e, ERR_INPUT, "--fail: '%s': STEP must be from 0 to 1000000000 (" FAIL_FORM
                       ")", text);
    *out = (struct failure_spec){.is_set = true, .rank = (int)rank, .step = step, .time_s = 0};
    return 0;
}

int failure_check_steps(const struct failure_spec *f, long long steps, struct err *e)
{
    if (!f->is_set || f->step < 0 || f->step < steps) return 0;
    return err_set(e, ERR_INPUT,
                   "--fail %d@%lld: the run never starts step %lld (--steps %lld runs steps 0 "
                   "to %lld); fail at an earlier step or run more steps",
                   f->rank, (long long)f->step, (long long)f->step, steps, steps - 1);
}

/* core/straggler.c: --straggler and --fail parsing, and the per-rank random
 * streams. Expected values come from the forms and distributions in
 * core/straggler.h: Exponential(mean F x base) extra delay, LogNormal of mean
 * 1, exact slow factors, pauses of frequency P. Statistical checks use a fixed
 * seed and 100,000 draws, state their tolerance and log what they measured. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/straggler.h"

#define N_DRAWS 100000

static struct straggler_spec parse_ok(const char *text)
{
    struct straggler_spec s;
    struct err e = {0};
    int rc = straggler_parse(text, &s, &e);
    cr_assert_eq(rc, 0, "straggler_parse('%s'): %s", text, e.msg);
    return s;
}

static struct straggler *create_ok(const char *text, uint64_t seed, int n_ranks)
{
    struct straggler_spec s = parse_ok(text);
    struct err e = {0};
    struct straggler *g = straggler_create(&s, seed, n_ranks, &e);
    cr_assert_not_null(g, "straggler_create('%s', %d ranks): %s", text, n_ranks, e.msg);
    return g;
}

/* Frees every straggler model of a list: FREE_ALL(a, b, c). */
static void free_all(struct straggler *const *g, size_t n)
{
    for (size_t i = 0; i < n; i++) straggler_free(g[i]);
}

#define FREE_ALL(...)                                                                      \
    free_all((struct straggler *const[]){__VA_ARGS__},                                    \
             sizeof(struct straggler *[]){__VA_ARGS__} / sizeof(struct straggler *))

/* ---- parsing ---------------------------------------------------------- */

Test(straggler, parses_every_form)
{
    struct straggler_spec s = parse_ok("none");
    cr_assert_eq(s.kind, STRAG_NONE);

    s = parse_ok("exp:0.5");
    cr_assert_eq(s.kind, STRAG_EXP);
    cr_assert_eq(s.exp_factor, 0.5);
    cr_assert_eq(parse_ok("exp:0").exp_factor, 0.0);
    cr_assert_eq(parse_ok("exp:1e-3").exp_factor, 1e-3);

    s = parse_ok("lognormal:0.25");
    cr_assert_eq(s.kind, STRAG_LOGNORMAL);
    cr_assert_eq(s.sigma, 0.25);
    cr_assert_eq(parse_ok("lognormal:0").sigma, 0.0);

    s = parse_ok("slow:3=2");
    cr_assert_eq(s.kind, STRAG_SLOW);
    cr_assert_eq(s.n_slow, 1);
    cr_assert_eq(s.slow_rank[0], 3);
    cr_assert_eq(s.slow_factor[0], 2.0);

    s = parse_ok("slow:0=1,7=1.5,2=10");
    cr_assert_eq(s.n_slow, 3);
    const int ranks[3] = {0, 7, 2};
    const double factors[3] = {1, 1.5, 10};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(s.slow_rank[i], ranks[i]);
        cr_assert_eq(s.slow_factor[i], factors[i]);
    }

    s = parse_ok("pause:0.1:0.02");
    cr_assert_eq(s.kind, STRAG_PAUSE);
    cr_assert_eq(s.pause_p, 0.1);
    cr_assert_eq(s.pause_s, 0.02);
    s = parse_ok("pause:0:5");
    cr_assert_eq(s.pause_p, 0.0);
    s = parse_ok("pause:1:0");
    cr_assert_eq(s.pause_p, 1.0);
    cr_assert_eq(s.pause_s, 0.0);
}

Test(straggler, parses_the_most_slow_ranks_allowed)
{
    char text[1024] = "slow:";
    for (int r = 0; r < STRAGGLER_MAX_SLOW; r++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d=2", r ? "," : "", r);
    struct straggler_spec s = parse_ok(text);
    cr_assert_eq(s.n_slow, STRAGGLER_MAX_SLOW);
    cr_assert_eq(s.slow_rank[STRAGGLER_MAX_SLOW - 1], STRAGGLER_MAX_SLOW - 1);
}

/* Parses text expecting ERR_INPUT; the message names --straggler, the text,
 * and contains `needle` (which says which class of error it is). The spec is
 * left as it was. */
static void expect_rejected(const char *text, const char *needle)
{
    struct straggler_spec s = {.kind = STRAG_EXP, .exp_factor = 42};
    struct err e = {0};
    int rc = straggler_parse(text, &s, &e);
    cr_assert_eq(rc, ERR_INPUT, "'%s' was accepted (rc %d)", text, rc);
    cr_assert_eq(e.code, ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "--straggler"), "'%s': message '%s'", text, e.msg);
    /* messages show a control character escaped (core/err.h): "\n" */
    char quoted[1100];
    size_t q = 0;
    quoted[q++] = '\'';
    for (const char *p = text; *p && q < sizeof quoted - 8; p++)
        q += (size_t)(*p == '\n' ? snprintf(quoted + q, 3, "\\n") : snprintf(quoted + q, 2, "%c", *p));
    snprintf(quoted + q, sizeof quoted - q, "'");
    cr_assert_not_null(strstr(e.msg, quoted), "'%s': message '%s' lacks the text", text, e.msg);
    cr_assert_not_null(strstr(e.msg, needle), "'%s': message '%s' lacks '%s'", text, e.msg,
                       needle);
    cr_assert(s.kind == STRAG_EXP && s.exp_factor == 42, "'%s' changed the spec", text);
}

#define NOT_A_MODEL \
    "is not a model (none, exp:F, lognormal:SIGMA, slow:R=X[,R=X], pause:P:D)"

Test(straggler, syntax_errors_name_the_forms)
{
    const char *bad[] = {
        "exp:x", "", "None", "none ", " none", "EXP:1", "exp", "exp:", "exp:1x", "exp: 1",
        "exp:1 ", "exp:1:2", "lognormal", "lognormal:", "lognormal:a", "log:0.5",
        "slow", "slow:", "slow:1", "slow:1=", "slow:=2", "slow:1=2,", "slow:,1=2",
        "slow:1=2,,3=2", "slow:a=2", "slow:1.5=2", "slow:+1=2", "slow:1=2;3=2", "slow:1==2",
        "pause", "pause:", "pause:0.5", "pause:0.5:", "pause::1", "pause:0.5:1:2",
        "pause:0.5,1", "fast:1", "none:1", "exp:0.5\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) expect_rejected(bad[i], NOT_A_MODEL);
}

Test(straggler, out_of_range_values_get_their_own_messages)
{
    expect_rejected("exp:-0.1", "F must be a number from 0 to 1000000");
    expect_rejected("exp:inf", "F must be a number from 0 to 1000000");
    expect_rejected("exp:nan", "F must be a number from 0 to 1000000");
    expect_rejected("exp:1e999", "F must be a number from 0 to 1000000");
    expect_rejected("lognormal:-1", "SIGMA must be a number from 0 to 10");
    expect_rejected("lognormal:infinity", "SIGMA must be a number from 0 to 10");
    expect_rejected("slow:1=0.5", "rank 1's factor X must be a number from 1 to 1000000");
    expect_rejected("slow:1=0", "rank 1's factor X must be");
    expect_rejected("slow:2=inf", "rank 2's factor X must be");
    expect_rejected("slow:0=2,4=nan", "rank 4's factor X must be");
    expect_rejected("slow:-1=2", "rank -1 does not exist (ranks are >= 0)");
    expect_rejected("slow:99999999999=2", "rank 99999999999 is out of range");
    expect_rejected("slow:99999999999999999999999=2", "is out of range");
    expect_rejected("slow:1=2,3=1.5,1=3", "rank 1 is listed twice");
    expect_rejected("pause:-0.1:1", "P must be a probability from 0 to 1");
    expect_rejected("pause:1.01:1", "P must be a probability from 0 to 1");
    expect_rejected("pause:nan:1", "P must be a probability from 0 to 1");
    expect_rejected("pause:0.5:-1", "D must be a number of seconds from 0 to 1000000");
    expect_rejected("pause:0.5:inf", "D must be a number of seconds from 0 to 1000000");
    /* issue 15, finding 3: values that made the run's times overflow */
    expect_rejected("exp:1e308", "F must be a number from 0 to 1000000");
    expect_rejected("exp:1000001", "F must be a number from 0 to 1000000");
    expect_rejected("slow:0=1e308", "rank 0's factor X must be a number from 1 to 1000000");
    expect_rejected("pause:1:1e308", "D must be a number of seconds from 0 to 1000000");
    expect_rejected("lognormal:1e3", "SIGMA must be a number from 0 to 10");
    /* and the bounds themselves are allowed */
    cr_assert_eq(parse_ok("exp:1000000").exp_factor, 1e6);
    cr_assert_eq(parse_ok("slow:0=1e6").slow_factor[0], 1e6);
    cr_assert_eq(parse_ok("pause:1:1e6").pause_s, 1e6);
    cr_assert_eq(parse_ok("lognormal:10").sigma, 10.0);

    char text[1024] = "slow:";
    for (int r = 0; r <= STRAGGLER_MAX_SLOW; r++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d=2", r ? "," : "", r);
    expect_rejected(text, "at most 64 slow ranks");
}

/* ---- format ----------------------------------------------------------- */

Test(straggler, format_round_trips)
{
    /* Canonical texts come back unchanged. */
    const char *texts[] = {
        "none", "exp:0.5", "exp:0", "exp:0.1", "exp:1e-300", "lognormal:0.25",
        "slow:3=2", "slow:0=1,7=1.5,2=10", "pause:0.1:0.02", "pause:1:0", "pause:0:3600",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        char buf[256];
        struct straggler_spec s = parse_ok(texts[i]);
        straggler_format(&s, buf, sizeof buf);
        cr_assert_str_eq(buf, texts[i]);
    }
    /* Values with no short spelling still come back bit for bit. */
    struct straggler_spec s = {.kind = STRAG_PAUSE, .pause_p = 1.0 / 3, .pause_s = 2 / 3.0 + 1e-9};
    char buf[256];
    straggler_format(&s, buf, sizeof buf);
    struct straggler_spec back = parse_ok(buf);
    cr_assert_eq(back.pause_p, s.pause_p, "%s", buf);
    cr_assert_eq(back.pause_s, s.pause_s, "%s", buf);
    /* A short buffer is cut, still terminated. */
    char tiny[6];
    s = parse_ok("lognormal:0.25");
    straggler_format(&s, tiny, sizeof tiny);
    cr_assert_str_eq(tiny, "logno");
}

/* ---- streams ---------------------------------------------------------- */

Test(straggler, same_seed_same_draws_other_seed_other_draws)
{
    const char *models[] = {"exp:0.5", "lognormal:0.3", "pause:0.5:1"};
    for (int m = 0; m < 3; m++) {
        struct straggler *a = create_ok(models[m], 42, 4);
        struct straggler *b = create_ok(models[m], 42, 4);
        struct straggler *c = create_ok(models[m], 43, 4);
        int n_diff = 0;
        for (int i = 0; i < 1000; i++)
            for (int r = 0; r < 4; r++) {
                double x = m < 2 ? straggler_compute_s(a, r, 1.0) : straggler_pause_s(a, r);
                double y = m < 2 ? straggler_compute_s(b, r, 1.0) : straggler_pause_s(b, r);
                double z = m < 2 ? straggler_compute_s(c, r, 1.0) : straggler_pause_s(c, r);
                cr_assert_eq(x, y, "%s rank %d draw %d", models[m], r, i);
                n_diff += x != z;
            }
        /* Continuous draws differ everywhere, coin flips about half the time. */
        cr_assert_gt(n_diff, m < 2 ? 3990 : 1800, "%s: seed 43 differs in %d of 4000 draws",
                     models[m], n_diff);
        FREE_ALL(a, b, c);
    }
}

Test(straggler, ranks_have_their_own_streams)
{
    /* Rank 3 draws the same with 4 or 64 ranks, whatever the others draw. */
    struct straggler *small = create_ok("exp:1", 7, 4);
    struct straggler *big = create_ok("exp:1", 7, 64);
    for (int i = 0; i < 1000; i++) {
        for (int r = 0; r < 64; r++)
            if (r != 3) straggler_compute_s(big, r, 1.0);
        cr_assert_eq(straggler_compute_s(small, 3, 1.0), straggler_compute_s(big, 3, 1.0),
                     "draw %d", i);
    }
    /* And no two ranks share a stream. */
    double first[64];
    struct straggler *g = create_ok("exp:1", 7, 64);
    for (int r = 0; r < 64; r++) {
        first[r] = straggler_compute_s(g, r, 1.0);
        for (int q = 0; q < r; q++) cr_assert_neq(first[q], first[r], "ranks %d and %d", q, r);
    }
    FREE_ALL(small, big, g);
}

/* Draws happen only where the model needs them: calls a model ignores do not
 * move its streams. */
Test(straggler, ignored_calls_draw_nothing)
{
    struct straggler *a = create_ok("exp:0.5", 1, 2);
    struct straggler *b = create_ok("exp:0.5", 1, 2);
    struct straggler *p = create_ok("pause:0.5:1", 1, 2);
    struct straggler *q = create_ok("pause:0.5:1", 1, 2);
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(straggler_pause_s(b, 0), 0.0, "exp never pauses");
        cr_assert_eq(straggler_compute_s(a, 0, 1.0), straggler_compute_s(b, 0, 1.0));
        cr_assert_eq(straggler_compute_s(q, 0, 2.5), 2.5, "pause leaves op times alone");
        cr_assert_eq(straggler_pause_s(p, 0), straggler_pause_s(q, 0));
    }
    FREE_ALL(a, b, p, q);
}

Test(straggler, exp_extra_delay_has_mean_F_times_base)
{
    /* Exponential: sd = mean, so 100k draws give a standard error of
     * 1/sqrt(1e5) = 0.32% of the mean; the 2% tolerance is over 6 of them. */
    const double F = 0.5, base = 0.004, tol = 0.02;
    struct straggler *g = create_ok("exp:0.5", 2024, 2);
    double sum = 0, min_extra = INFINITY;
    for (int i = 0; i < N_DRAWS; i++) {
        double extra = straggler_compute_s(g, 1, base) - base;
        sum += extra;
        min_extra = fmin(min_extra, extra);
    }
    double ratio = sum / N_DRAWS / (F * base);
    cr_log_info("exp:0.5, base %g s: mean extra delay / (F x base) = %.5f over %d draws "
                "(tolerance %.0f%%, |error| %.3f%%)", base, ratio, N_DRAWS, 100 * tol,
                100 * fabs(ratio - 1));
    cr_assert_geq(min_extra, 0, "a delay is never negative");
    cr_assert_lt(fabs(ratio - 1), tol, "mean extra delay / (F x base) = %.5f", ratio);
    cr_assert_eq(straggler_compute_s(g, 0, 0.0), 0.0, "an op of no time stays so");
    straggler_free(g);

    g = create_ok("exp:0", 2024, 1);
    cr_assert_eq(straggler_compute_s(g, 0, base), base, "exp:0 is no disturbance");
    straggler_free(g);
}

Test(straggler, lognormal_factor_has_mean_1)
{
    /* LogNormal(-s^2/2, s) has mean 1 and variance e^{s^2} - 1: 0.284 for
     * s = 0.5, so the standard error of 100k draws is 0.17%; tolerance 2%. */
    const double base = 0.01, tol = 0.02;
    struct straggler *g = create_ok("lognormal:0.5", 99, 3);
    double sum = 0, sum_log = 0;
    for (int i = 0; i < N_DRAWS; i++) {
        double factor = straggler_compute_s(g, 2, base) / base;
        cr_assert_gt(factor, 0);
        sum += factor;
        sum_log += log(factor);
    }
    double mean = sum / N_DRAWS, mean_log = sum_log / N_DRAWS;
    cr_log_info("lognormal:0.5: mean factor %.5f (tolerance %.0f%%, |error| %.3f%%), "
                "mean log-factor %.5f (expected -0.125)", mean, 100 * tol,
                100 * fabs(mean - 1), mean_log);
    cr_assert_lt(fabs(mean - 1), tol, "mean factor %.5f", mean);
    /* mu = -sigma^2/2 = -0.125; sd of the log is 0.5, standard error 0.0016. */
    cr_assert_lt(fabs(mean_log + 0.125), 0.01, "mean log-factor %.5f", mean_log);
    straggler_free(g);

    g = create_ok("lognormal:0", 99, 1);
    cr_assert_eq(straggler_compute_s(g, 0, base), base, "sigma 0 is no noise");
    straggler_free(g);
}

Test(straggler, slow_factor_is_exact)
{
    struct straggler *g = create_ok("slow:1=2,3=1.5", 5, 4);
    const double base = 0.0123;
    const double want[4] = {base, base * 2, base, base * 1.5};
    for (int i = 0; i < 3; i++)
        for (int r = 0; r < 4; r++) {
            cr_assert_eq(straggler_compute_s(g, r, base), want[r], "rank %d", r);
            cr_assert_eq(straggler_pause_s(g, r), 0.0);
        }
    straggler_free(g);
}

Test(straggler, none_changes_nothing)
{
    struct straggler *g = create_ok("none", 5, 2);
    cr_assert_eq(straggler_compute_s(g, 1, 0.25), 0.25);
    cr_assert_eq(straggler_pause_s(g, 1), 0.0);
    straggler_free(g);
    g = straggler_create(NULL, 5, 2, NULL);   /* NULL spec = none */
    cr_assert_not_null(g);
    cr_assert_eq(straggler_compute_s(g, 0, 0.25), 0.25);
    straggler_free(g);
    straggler_free(NULL);
}

Test(straggler, pause_frequency_is_P)
{
    /* A Bernoulli(P) frequency over 100k steps has standard error
     * sqrt(P(1-P)/1e5): 0.09 points at P = 0.1, 0.16 at P = 0.5. Tolerance:
     * 1 percentage point, |freq - P| < 0.01, at least 6 standard errors. */
    const double tol = 0.01;
    const char *models[2] = {"pause:0.1:0.25", "pause:0.5:0.25"};
    const double P[2] = {0.1, 0.5};
    for (int m = 0; m < 2; m++) {
        struct straggler *g = create_ok(models[m], 31337, 2);
        int n_paused = 0;
        for (int i = 0; i < N_DRAWS; i++) {
            double d = straggler_pause_s(g, 0);
            cr_assert(d == 0.0 || d == 0.25, "a pause lasts D or nothing: %g", d);
            n_paused += d > 0;
        }
        double freq = (double)n_paused / N_DRAWS;
        cr_log_info("%s: pause frequency %.5f over %d steps (tolerance %.2f, |error| %.5f)",
                    models[m], freq, N_DRAWS, tol, fabs(freq - P[m]));
        cr_assert_lt(fabs(freq - P[m]), tol, "%s: frequency %.5f", models[m], freq);
        straggler_free(g);
    }
    struct straggler *never = create_ok("pause:0:1", 1, 1);
    struct straggler *always = create_ok("pause:1:2", 1, 1);
    for (int i = 0; i < 10000; i++) {
        cr_assert_eq(straggler_pause_s(never, 0), 0.0);
        cr_assert_eq(straggler_pause_s(always, 0), 2.0);
    }
    FREE_ALL(never, always);
}

Test(straggler, create_rejects_ranks_outside_the_run)
{
    struct straggler_spec s = parse_ok("slow:1=2,4=3");
    struct err e = {0};
    cr_assert_null(straggler_create(&s, 1, 4, &e));
    cr_assert_eq(e.code, ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "--straggler: 'slow:1=2,4=3': rank 4 does not exist "
                                     "(the run has 4 ranks, 0 to 3)"), "%s", e.msg);
    struct straggler *g = straggler_create(&s, 1, 5, &e);
    cr_assert_not_null(g, "%s", e.msg);
    straggler_free(g);

    e = (struct err){0};
    cr_assert_null(straggler_create(&s, 1, 0, &e));
    cr_assert_eq(e.code, ERR_INPUT);

    /* A hand-made spec gets the parser's range checks. */
    struct straggler_spec bad = {.kind = STRAG_EXP, .exp_factor = -1};
    e = (struct err){0};
    cr_assert_null(straggler_create(&bad, 1, 2, &e));
    cr_assert_eq(e.code, ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "'exp:-1': F must be"), "%s", e.msg);
}

/* A slow server changes nothing (servers run no compute op), so it is
 * refused rather than run as if it were a straggler; a rank past the plan
 * is refused as straggler_create does. */
Test(straggler, a_slow_rank_must_be_a_worker_of_the_plan)
{
    struct straggler_spec s = parse_ok("slow:1=2,4=3");
    struct err e = {0};
    cr_assert_eq(straggler_check_ranks(&s, 5, 6, "mirrored", &e), 0, "%s", e.msg);
    cr_assert_eq(straggler_check_ranks(&s, 4, 5, "ps-sync", &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "--straggler: 'slow:1=2,4=3': rank 4 is a parameter server "
                                     "of the ps-sync plan (its workers: ranks 0 to 3)"), "%s",
                       e.msg);
    e = (struct err){0};
    cr_assert_eq(straggler_check_ranks(&s, 4, 4, "mirrored", &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "rank 4 does not exist (the mirrored plan has ranks 0 to 3)"),
                       "%s", e.msg);
    /* one worker is rank 0, not "ranks 0 to 0" */
    struct straggler_spec one = parse_ok("slow:1=2");
    e = (struct err){0};
    cr_assert_eq(straggler_check_ranks(&one, 1, 2, "ps-sync", &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "(its workers: rank 0)"), "%s", e.msg);
    struct straggler_spec other = parse_ok("exp:0.5");
    cr_assert_eq(straggler_check_ranks(&other, 1, 2, "ps-sync", &e), 0);
    cr_assert_eq(straggler_check_ranks(NULL, 1, 2, "ps-sync", &e), 0);
}

/* ---- --fail ----------------------------------------------------------- */

Test(straggler, failure_parse_accepts_R_at_STEP_and_R_at_T_seconds)
{
    struct failure_spec f = {.is_set = true, .rank = 9, .step = 9, .time_s = 9};
    struct err e = {0};
    cr_assert_eq(failure_parse("", &f, &e), 0);
    cr_assert(!f.is_set, "\"\" is no failure");

    cr_assert_eq(failure_parse("2@10.5s", &f, &e), 0, "%s", e.msg);
    cr_assert(f.is_set);
    cr_assert_eq(f.rank, 2);
    cr_assert_eq(f.step, -1, "seconds are no step");
    cr_assert_eq(f.time_s, 10.5);

    cr_assert_eq(failure_parse("0@0s", &f, &e), 0, "%s", e.msg);
    cr_assert(f.is_set && f.rank == 0 && f.step == -1 && f.time_s == 0.0);

    cr_assert_eq(failure_parse("17@1e3s", &f, &e), 0, "%s", e.msg);
    cr_assert_eq(f.rank, 17);
    cr_assert_eq(f.time_s, 1000.0);

    cr_assert_eq(failure_parse("1@20", &f, &e), 0, "%s", e.msg);
    cr_assert(f.is_set && f.rank == 1 && f.step == 20, "1@20: rank %d step %lld", f.rank,
              (long long)f.step);
    cr_assert_eq(failure_parse("0@0", &f, &e), 0, "%s", e.msg);
    cr_assert(f.is_set && f.rank == 0 && f.step == 0);
}

Test(straggler, failure_parse_rejects_everything_else)
{
    const char *bad[] = {
        "2", "@1", "2@", "2@@1", "a@1", "2@x", "2@1x", "2@1 ", " 2@1", "2 @1", "2@ 1",
        "+2@1", "1.5@3", "-1@3", "99999999999@1", "2@-1", "2@-0.001s", "2@infs", "2@nans",
        "2@1e999s", "none", "2@10.5", "2@1e3", "2@1ss", "2@s", "2@-3", "2@99999999999",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct failure_spec f = {.is_set = true, .rank = 9, .step = 9, .time_s = 9};
        struct err e = {0};
        int rc = failure_parse(bad[i], &f, &e);
        cr_assert_eq(rc, ERR_INPUT, "'%s' was accepted", bad[i]);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "--fail: '%s'", bad[i]);
        cr_assert_not_null(strstr(e.msg, quoted), "'%s': message '%s'", bad[i], e.msg);
        cr_assert_not_null(strstr(e.msg, "R@STEP"), "'%s': message '%s' lacks the form", bad[i],
                           e.msg);
        cr_assert(f.is_set && f.rank == 9 && f.step == 9 && f.time_s == 9,
                  "'%s' changed the spec", bad[i]);
    }
}

/* A failure at a step the run never starts would leave a report of no
 * failure; one at a time cannot be judged before the run. */
Test(straggler, a_failure_past_the_last_step_is_refused)
{
    struct failure_spec f;
    struct err e = {0};
    cr_assert_eq(failure_parse("1@4", &f, &e), 0, "%s", e.msg);
    cr_expect_eq(failure_check_steps(&f, 5, &e), 0, "step 4 of steps 0 to 4: %s", e.msg);
    cr_assert_eq(failure_check_steps(&f, 4, &e), ERR_INPUT, "step 4 of steps 0 to 3");
    cr_expect_not_null(strstr(e.msg, "--fail 1@4"), "%s", e.msg);
    cr_expect_not_null(strstr(e.msg, "--steps 4 runs steps 0 to 3"), "%s", e.msg);
    e = (struct err){0};
    cr_assert_eq(failure_parse("1@1000s", &f, &e), 0, "%s", e.msg);
    cr_expect_eq(failure_check_steps(&f, 1, &e), 0, "a time is not judged: %s", e.msg);
    cr_assert_eq(failure_parse("", &f, &e), 0, "%s", e.msg);
    cr_expect_eq(failure_check_steps(&f, 1, &e), 0, "no failure");
}

/* A checkpoint saves a rank's stream and a resumed run copies it back
 * (real/checkpoint.c): the draws after the copy are the draws the saved
 * stream would have made, and another rank's stream is left alone. */
Test(straggler, a_saved_stream_copied_back_repeats_its_draws)
{
    struct straggler_spec spec;
    struct err e = {0};
    cr_assert_eq(straggler_parse("exp:0.5", &spec, &e), 0, "%s", e.msg);
    struct straggler *g = straggler_create(&spec, 42, 2, &e);
    cr_assert_not_null(g, "%s", e.msg);
    for (int i = 0; i < 5; i++) straggler_compute_s(g, 1, 1.0);
    size_t bytes = 0;
    void *state = straggler_stream_state(g, 1, &bytes);
    cr_assert(state && bytes > 0);
    unsigned char *saved = malloc(bytes);
    cr_assert_not_null(saved);
    memcpy(saved, state, bytes);
    double first[4], other = straggler_compute_s(g, 0, 1.0);
    for (int i = 0; i < 4; i++) first[i] = straggler_compute_s(g, 1, 1.0);
    memcpy(straggler_stream_state(g, 1, &bytes), saved, bytes);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(straggler_compute_s(g, 1, 1.0), first[i], "draw %d after the copy", i);
    cr_expect_neq(straggler_compute_s(g, 0, 1.0), other, "rank 0's stream moved on by itself");
    cr_expect_null(straggler_stream_state(g, 2, &bytes), "rank 2 of 2 has no stream");
    cr_expect_eq(bytes, 0);
    free(saved);
    straggler_free(g);
}

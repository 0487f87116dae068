/* real/clock_align.c: the ranks of a real run share a zero whatever the
 * scheduler does to them while they agree on it. tests/probes/
 * clock_align_probe.c, under mpirun, gives each rank a clock 1000 s apart
 * from the next, delays one rank 30 ms in two of its round trips (and rank
 * 0 in reading the zero, as a loaded machine deschedules a rank just after
 * the start barrier: CI's +52% replay error), and prints each rank's zero
 * on CLOCK_MONOTONIC, which the ranks of one machine share: the zeros must
 * agree to within the error each rank says its alignment has. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

enum { RANKS = 3 };

struct zeros {
    double zero_s[RANKS], error_s[RANKS], read_s[RANKS];
};

/* mpirun -np RANKS probe delayed delay_ms, its lines read into z */
static struct zeros probe(const char *delayed, const char *delay_ms)
{
    mpirun_env_prepare();
    struct run r = run_argv((const char *const[]){"mpirun", "-np", "3", CLOCK_ALIGN_PROBE,
                                                  delayed, delay_ms, NULL});
    cr_assert_eq(r.status, 0, "clock_align_probe: %s", r.err);
    struct zeros z;
    int seen = 0;
    for (char *line = r.out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        int rank;
        double zero_s, error_s, read_s;
        if (sscanf(line, "rank %d zero_s %lf error_s %lf read_s %lf", &rank, &zero_s, &error_s,
                   &read_s) != 4)
            continue;
        cr_assert(rank >= 0 && rank < RANKS, "%s", r.out);
        z.zero_s[rank] = zero_s;
        z.error_s[rank] = error_s;
        z.read_s[rank] = read_s;
        seen |= 1 << rank;
    }
    cr_assert_eq(seen, (1 << RANKS) - 1, "every rank says its zero:\n%s", r.out);
    run_free(&r);
    return z;
}

/* Rank r's zero is rank 0's to within its error, and the probe's reading
 * of both (plus 10 us for the reads' own rounding). The error bound itself
 * must stay under half the 30 ms delay: a rank delayed mid-round-trip is
 * measured on the round trips it was not delayed in (2 us on an idle
 * machine; a loaded one can stretch every one of a rank's ten). */
static void expect_aligned(const struct zeros *z, const char *what)
{
    cr_expect_eq(z->error_s[0], 0, "rank 0's clock is the reference");
    for (int r = 1; r < RANKS; r++) {
        double off_s = z->zero_s[r] - z->zero_s[0];
        double bound_s = z->error_s[r] + z->read_s[r] + z->read_s[0] + 10e-6;
        cr_log_info("%s: rank %d's zero %+.1f us from rank 0's, error bound %.1f us (reads %.1f "
                    "and %.1f us)", what, r, 1e6 * off_s, 1e6 * z->error_s[r], 1e6 * z->read_s[r],
                    1e6 * z->read_s[0]);
        cr_expect(z->error_s[r] >= 0 && z->error_s[r] < 0.015,
                  "%s: rank %d's error bound %g s: the delayed round trips should not count", what,
                  r, z->error_s[r]);
        cr_expect(fabs(off_s) <= bound_s, "%s: rank %d's zero is %+.3f ms from rank 0's, beyond "
                  "its bound of %.3f ms", what, r, 1e3 * off_s, 1e3 * bound_s);
    }
}

Test(clock_align, clocks_1000_s_apart_share_the_zero)
{
    struct zeros z = probe("-1", "0");
    expect_aligned(&z, "no rank late");
}

Test(clock_align, a_rank_late_in_its_round_trips_shares_the_zero)
{
    struct zeros z = probe("1", "30");
    expect_aligned(&z, "rank 1 30 ms late twice");
}

Test(clock_align, rank_0_late_in_answering_and_after_the_barrier_shares_the_zero)
{
    /* rank 0 is the one whose clock the others measure against */
    struct zeros z = probe("0", "30");
    expect_aligned(&z, "rank 0 30 ms late three times");
}

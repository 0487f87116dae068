/* --timeline-steps A:B (cli/outputs.c) and the windowed text timeline
 * (plots/timeline_text.c): any window of steps, checked; a dead rank's row;
 * asynchronous workers' own step numbers. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../plots/timeline_text.h"
#include "helpers.h"

Test(timeline_window, bad_windows_are_refused_naming_the_option)
{
    /* " 0:1", "+0:+1", "0: 1" and a number past long long were taken by sscanf */
    const char *bad[] = {"3:2", "0:20", "-1:2", "2", "1:2x", "a:b", " 0:1", "+0:+1", "0: 1",
                         "0:99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *args[] = {"sim", "--strategy", "mirrored", "--timeline", "--timeline-steps",
                              bad[i], NULL};
        struct run r = run_strata(args);
        cr_expect_eq(r.status, 2, "%s: exit %d", bad[i], r.status);
        cr_expect(strstr(r.err, "--timeline-steps") && strstr(r.err, bad[i]) &&
                      strstr(r.err, "< --steps 20"), "%s: %s", bad[i], r.err);
        run_free(&r);
    }
}

/* On the ideal cluster a 1F1B step of this plan takes 33 units: steps 1 to 2
 * are units 33 to 99. */
/* Without anything that draws, the window drew nothing and said nothing. */
Test(timeline_window, steps_without_a_timeline_are_refused)
{
    const char *args[] = {"sim", "--timeline-steps", "0:1", "--steps", "3", NULL};
    struct run r = run_strata(args);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect(strstr(r.err, "--timeline-steps 0:1") && strstr(r.err, "none was given"), "%s",
              r.err);
    run_free(&r);
}

Test(timeline_window, a_later_window_starts_where_its_first_step_does)
{
    const char *args[] = {"sim", "--strategy", "pipeline-1f1b", "--cluster", "ideal",
                          "--devices", "4", "--microbatches", "8", "--model",
                          "mlp:512-512-512-512-512", "--steps", "3", "--timeline",
                          "--timeline-steps", "1:2", NULL};
    struct run r = run_strata(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "pipeline-1f1b, steps 1 to 2 (33 to 99 units)"), "%s", r.out);
    run_free(&r);
}

Test(timeline_window, async_rows_show_their_own_steps)
{
    const char *args[] = {"sim", "--strategy", "ps-async", "--devices", "4", "--cluster",
                          "cpu-loopback", "--straggler", "slow:3=10", "--steps", "40",
                          "--timeline", "--timeline-steps", "4:6", NULL};
    struct run r = run_strata(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* the fast workers are at steps 4-6, the 10x slower one far behind */
    cr_assert(strstr(r.out, "rank 0 compute|"), "%s", r.out);
    const char *slow = strstr(r.out, "rank 3 compute|");
    cr_assert(slow, "%s", r.out);
    const char *end = strchr(slow, '\n');
    cr_assert(end && strstr(slow, "| steps 0-") && strstr(slow, "| steps 0-") < end, "%s", r.out);
    run_free(&r);
}

Test(timeline_window, dead_rank_row_marked_from_its_death)
{
    const struct span s[] = {
        {.rank = 0, .stream = 0, .kind = OP_FORWARD, .start_s = 0, .end_s = 10},
        {.rank = 1, .stream = 0, .kind = OP_FORWARD, .start_s = 0, .end_s = 4},
    };
    const struct timeline_view v = {.begin_s = 0, .end_s = 10, .dead_rank = 1, .dead_from_s = 5};
    struct test_capture c;
    /* 10 columns of 1 s */
    timeline_print_view(test_capture_open(&c), s, 2, 2, &v, 16 + 2 + 10, 64, "s");
    char *buf = test_capture_close(&c);
    cr_assert(strstr(buf, "x rank 1 dead"), "%s", buf);
    cr_assert(strstr(buf, "rank 1 compute|FFFF.xxxxx|"), "%s", buf);
    cr_assert(strstr(buf, "rank 0 compute|FFFFFFFFFF|"), "%s", buf);
    /* the same step everywhere: no per-row steps */
    cr_assert(!strstr(buf, "| step"), "%s", buf);
    free(buf);
}

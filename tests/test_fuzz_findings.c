/* The defects that fuzzing strata found (issue 15), each as the command or
 * call that showed it, checked for what it must do now. Findings of the
 * parsers alone are in their modules' tests too (test_straggler,
 * test_cluster, test_config); these run the whole path a user meets. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/sweep.h"
#include "../bench/sweep_tasks.h"
#include "../core/err.h"
#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(findings, .timeout = 120);

/* Finding 1: `strata plot` on a document with no reports crashed (a NULL
 * report in title_of); now exit 2 naming the file. */
Test(findings, plot_of_a_document_without_reports_is_refused)
{
    const char *docs[] = {"{\"strata_compare\":1,\"reports\":[]}",
                          "{\"strata_sweep\":1,\"points\":[]}",
                          "{\"strata_validate\":1,\"rows\":[]}",
                          "{\"strata_validate\":2,\"cells\":[]}"};
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        const char *path = test_tmp_file("empty.json", docs[i]);
        struct run r = RUN("plot", "--plot", test_tmp_path("plots"), path);
        cr_expect_eq(r.status, 2, "%s: status %d (-1 = a signal), stderr: %s", docs[i], r.status,
                     r.err);
        cr_expect_not_null(strstr(r.err, "holds no reports"), "%s: stderr: %s", docs[i], r.err);
        cr_expect_not_null(strstr(r.err, path), "%s: stderr: %s", docs[i], r.err);
        run_free(&r);
    }
}

/* Finding 3: a disturbance that overflowed a time made the simulation fail
 * with exit 0 and the message "strata sim: ", or print a 90-digit step
 * time; now each is refused up front, exit 2, naming what is allowed. */
Test(findings, disturbances_that_overflow_a_time_are_refused)
{
    static const struct {
        const char *straggler, *want;
    } cases[] = {
        {"pause:1:1e308", "D must be a number of seconds from 0 to 1000000"},
        {"exp:1e308", "F must be a number from 0 to 1000000"},
        {"slow:0=1e308", "factor X must be a number from 1 to 1000000"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        expect_refused(RUN("sim", "--steps", "3", "--straggler", cases[i].straggler, "--json",
                           test_tmp_path("o.json")),
                       "--straggler", cases[i].want);
        FILE *f = fopen(test_tmp_path("o.json"), "r");
        cr_expect_null(f, "%s: a refused run wrote its report", cases[i].straggler);
        if (f) fclose(f);
    }
}

/* Finding 3, profiles: flops_per_s = 1e-300, mem_bw_bytes_per_s = 5e-324,
 * op_overhead_s = 1e308 made op times infinite and des_push fail without a
 * message; now the profile is refused naming the file, line and key. */
Test(findings, profiles_that_overflow_a_time_are_refused)
{
    static const char *const lines[] = {"flops_per_s = 1e-300", "mem_bw_bytes_per_s = 5e-324",
                                        "op_overhead_s = 1e308"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "flops_per_s = 1e12\nmem_bw_bytes_per_s = 1e11\nop_overhead_s = 1e-5\n"
                 "mem_bytes = 17179869184\ndevices_per_node = 4\nintra_latency_s = 1e-6\n"
                 "intra_bw_bytes_per_s = 1e10\ninter_latency_s = 1e-5\n"
                 "inter_bw_bytes_per_s = 1e9\n%s\n", lines[i]);
        /* the overflowing line replaces its key's line: drop the first */
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)strcspn(lines[i], " "), lines[i]);
        char *at = strstr(text, key);
        memmove(at, strchr(at, '\n') + 1, strlen(strchr(at, '\n') + 1) + 1);
        const char *path = test_tmp_file("profile.txt", text);
        expect_refused(RUN("sim", "--steps", "3", "--cluster", path), ":9: ", key);
    }
}

/* Finding 8: `strata sim -f /dev/zero` read one endless line to 2.1 GB,
 * then ran with defaults and exited 0; `--cluster /dev/zero` said "missing
 * flops_per_s". Both stop at the first byte now. */
Test(findings, endless_input_files_are_refused_at_once)
{
    expect_refused(RUN("sim", "--steps", "2", "-f", "/dev/zero"), "/dev/zero:1:", "NUL byte");
    expect_refused(RUN("sim", "--steps", "2", "--cluster", "/dev/zero"), "/dev/zero:1:",
                   "NUL byte");
}

/* Finding 9: an escape sequence in an option or a file reached the
 * terminal raw; messages show it escaped. */
Test(findings, control_characters_in_messages_are_escaped)
{
    struct run r = RUN("sim", "--strategy", "\x1b[31mred");
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect_null(strchr(r.err, '\x1b'), "an ESC byte reached stderr: %s", r.err);
    cr_expect_not_null(strstr(r.err, "\\x1b[31mred"), "stderr: %s", r.err);
    run_free(&r);

    const char *path = test_tmp_file("esc.conf", "devices = 4\x07\n");
    r = RUN("sim", "-f", path);
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect_null(strchr(r.err, '\x07'), "a BEL byte reached stderr: %s", r.err);
    cr_expect_not_null(strstr(r.err, "4\\x07"), "stderr: %s", r.err);
    run_free(&r);
}

/* Finding 9: a failed baseline read "the one-device baseline: the
 * one-device baseline: ...": run_baseline's note names it (as the real
 * baseline's now does), so the sweep's error adds nothing. */
Test(findings, a_failed_baseline_is_named_once)
{
    struct sweep_run base = {.rc = ERR_RUN};
    snprintf(base.note, sizeof base.note, "the one-device baseline: simulate: it failed");
    struct sweep s = {.axis = {.is_devices = true}, .n_baselines = 1, .baselines = &base};
    struct err e = {0};
    cr_assert_eq(sweep_check_baseline(&s, &e), ERR_RUN);
    cr_expect_str_eq(e.msg, "the one-device baseline: simulate: it failed");
}

/* Finding 8: nothing bounded what a run would take. gpt3-175b 1F1B with
 * --microbatches 1048575 passed 8 GiB, --steps 1000000000 grew toward
 * 30 GB, `real --np 65536` went to mpirun (~4 TB). Each is refused before
 * anything is built or launched, naming the figure, the option that drives
 * it and --max-memory; --max-memory raises the budget. */
Test(findings, runs_over_the_memory_budget_are_refused_before_the_work)
{
    expect_refused(RUN("sim", "--strategy", "pipeline-1f1b", "--model", "gpt3-175b", "--batch",
                       "1048575", "--microbatches", "1048575"),
                   "most of it from --microbatches 1048575", "--max-memory");
    expect_refused(RUN("sim", "--steps", "1000000000"), "most of it from --steps 1000000000",
                   "GiB");
    expect_refused(RUN("real", "--np", "65536", "--steps", "2"), "most of it from --np 65536",
                   "--max-memory");
    expect_refused(RUN("compare", "--devices", "1048576", "--batch", "1048576"),
                   "most of it from --devices 1048576", "--max-memory");

    /* a sweep checks every value before its first point runs */
    expect_refused(RUN("sweep", "--devices", "1,2,1048576", "--batch", "1048576", "--steps", "2"),
                   "--vary devices=1048576: the run would take about", "--max-memory");

    /* a run that fits, refused under a lower budget and run under a higher */
    const char *small[] = {"sim", "--devices", "1024", "--batch", "1024", "--steps", "2",
                           "--max-memory", "0.001", NULL};
    expect_refused(run_strata(small), "--max-memory 0.001", "most of it from --devices 1024");
    small[8] = "1";
    struct run r = run_strata(small);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    run_free(&r);
}

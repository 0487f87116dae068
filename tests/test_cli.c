/* The command line as a user meets it: exit codes, messages that name the
 * option, --help derived from the option table, schedule's verdicts. Each
 * test runs the built binary (STRATA_BIN) with its output in temp files. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "../sim/cluster.h"
#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/config.h"
#include "../strategies/strategy.h"

Test(cli, help_lists_every_option_with_its_default)
{
    struct run r = RUN("--help");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    for (size_t i = 0; i < config_n_options; i++) {
        char flag[80];
        snprintf(flag, sizeof flag, "--%s ", config_options[i].name);
        const char *at = strstr(r.out, flag);
        cr_expect_not_null(at, "--help does not list %s", flag);
        if (!at) continue;
        const char *eol = strchr(at, '\n');
        const char *def = strstr(at, "default");
        cr_expect(def && (!eol || def < eol), "%s has no default on its line", flag);
    }
    for (size_t i = 0; i < strategy_count; i++)
        cr_expect_not_null(strstr(r.out, strategy_registry[i].name));
    run_free(&r);
}

Test(cli, schedule_help_lists_the_scenario_options_and_ranges)
{
    struct run r = RUN("schedule", "--help");
    cr_assert_eq(r.status, 0);
    cr_expect_not_null(strstr(r.out, "--devices"));
    cr_expect_not_null(strstr(r.out, "--strategy"));
    cr_expect_not_null(strstr(r.out, "1048576"), "the range of --devices is missing");
    cr_expect_null(strstr(r.out, "--strategies "), "schedule takes one strategy, not a list");
    run_free(&r);
}

/* sim takes --timeline-steps, whose help names --plot, but has no --plot:
 * its help says where a timeline figure comes from (a refusal of --plot
 * only said "see --help", and the help did not say). */
Test(cli, sim_help_says_how_to_draw_its_timeline_as_a_figure)
{
    struct run r = RUN("sim", "--help");
    cr_assert_eq(r.status, 0);
    cr_expect_not_null(strstr(r.out, "sim has no --plot: `strata compare --strategies NAME\n"
                                     "--plot DIR` draws it as PNG and SVG"), "%s", r.out);
    run_free(&r);
}

/* Every strategy is valid at the defaults; pipeline-interleaved's default
 * 2 chunks on each of the default 4 devices would need 8 layers, and the
 * default model has 4: it takes 1 chunk a device and says so, naming
 * --chunks. */
Test(cli, schedule_of_every_strategy_at_the_defaults_is_valid)
{
    for (size_t i = 0; i < strategy_count; i++) {
        struct run r = RUN("schedule", "--strategy", strategy_registry[i].name);
        cr_expect_eq(r.status, 0, "%s: status %d: %s", strategy_registry[i].name, r.status, r.err);
        cr_expect_not_null(strstr(r.out, "\nvalid:"), "%s: no verdict 'valid'", strategy_registry[i].name);
        if (!strcmp(strategy_registry[i].name, "pipeline-interleaved"))
            cr_expect_not_null(strstr(r.out, "\nnote: --chunks 1: the default 2 chunks"), "%s",
                               r.out);
        run_free(&r);
    }
    /* a --chunks given is kept, and refused when it does not fit */
    expect_refused(RUN("schedule", "--strategy", "pipeline-interleaved", "--chunks", "2"),
                   "--chunks", "layers");
}

Test(cli, schedule_1f1b_prints_four_programs_and_valid)
{
    struct run r = RUN("schedule", "--strategy", "pipeline-1f1b", "--devices", "4",
                       "--microbatches", "8");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    for (int rank = 0; rank < 4; rank++) {
        char head[32];
        snprintf(head, sizeof head, "\nrank %d: worker", rank);
        cr_expect_not_null(strstr(r.out, head), "no program for rank %d", rank);
    }
    cr_expect_null(strstr(r.out, "\nrank 4:"), "a fifth rank appeared");
    /* 4 one-layer stages, 8 microbatches: (p-1)/(m+p-1) = 3/11 = 27.3% */
    cr_expect_not_null(strstr(r.out, "bubble 27.3%"), "bubble is not 3/11:\n%s", r.out);
    run_free(&r);
}

Test(cli, bare_strata_compares_every_strategy_on_the_default_scenario)
{
    struct run r = run_strata((const char *const[]){NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    for (size_t i = 0; i < strategy_count; i++)
        cr_expect_not_null(strstr(r.out, strategy_registry[i].name));
    cr_expect_not_null(strstr(r.out, "speedup"));
    /* every strategy runs; pipeline-interleaved, whose default 2 chunks on
     * each of 8 devices would need 16 layers, takes 1 and says so */
    cr_expect_null(strstr(r.out, "not run:"), "the default scenario must fit every strategy:\n%s",
                   r.out);
    cr_expect_not_null(strstr(r.out, "note: pipeline-interleaved: --chunks 1"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "\nnext:"), "no hint of what to try next");
    run_free(&r);
}

Test(cli, bad_option_values_exit_2_naming_the_option_and_value)
{
    expect_refused(RUN("schedule", "--strategy", "mirrored", "--devices", "0"), "--devices", "0");
    expect_refused(RUN("schedule", "--devices", "abc"), "--devices", "abc");
    expect_refused(RUN("schedule", "--devices", "4x"), "--devices", "4x");
    expect_refused(RUN("schedule", "--devices", "2000000"), "--devices", "2000000");
    expect_refused(RUN("schedule", "--devices"), "--devices", "value");
    expect_refused(RUN("schedule", "--bucket-mb", "-1"), "--bucket-mb", "-1");
    expect_refused(RUN("schedule", "--devcies", "4"), "--devcies", "--devices");
    expect_refused(RUN("schedule", "--strategies", "all"), "--strategies", NULL);
}

Test(cli, unknown_strategy_and_bad_models_exit_2)
{
    expect_refused(RUN("schedule", "--strategy", "allreduce-magic"), "--strategy",
                     "allreduce-magic");
    expect_refused(RUN("schedule", "--model", "mlp:784-x-10"), "--model", "'x'");
    expect_refused(RUN("schedule", "--model", "resnet50"), "--model", "resnet50");
    expect_refused(RUN("compare", "--strategies", "mirrored,nope"), "--strategies", "nope");
}

Test(cli, scenarios_that_do_not_fit_the_strategy_exit_2)
{
    /* the default model has 4 layers: 8 stages cannot each hold one */
    expect_refused(RUN("schedule", "--strategy", "pipeline-gpipe", "--devices", "8"),
                     "--devices", "8");
    expect_refused(RUN("schedule", "--strategy", "mirrored", "--devices", "300", "--batch",
                         "256"), "--devices", "300");
}

Test(cli, unknown_command_and_stray_arguments_exit_2)
{
    expect_refused(RUN("simulate"), "simulate", "compare");
    expect_refused(RUN("schedule", "pipeline"), "pipeline", NULL);
}

static char *write_temp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/strata-cli-conf-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

Test(cli, scenario_file_is_read_and_the_command_line_wins)
{
    char *path = write_temp("# a lab\nstrategy = pipeline-gpipe\ndevices = 2  # two stages\n"
                            "microbatches = 4\n");
    struct run r = RUN("schedule", "-f", path);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.out, "pipeline-gpipe"));
    cr_expect_not_null(strstr(r.out, "on 2 workers"), "devices from the file not used:\n%.300s", r.out);
    run_free(&r);
    r = RUN("schedule", "--devices", "3", "-f", path);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.out, "on 3 workers"), "the command line did not win");
    run_free(&r);
    unlink(path);
}

Test(cli, broken_scenario_files_exit_2_naming_file_and_line)
{
    expect_refused(RUN("schedule", "-f", "/nonexistent/lab.conf"), "/nonexistent/lab.conf", NULL);
    char *path = write_temp("devices = 2\nthis line has no equals sign\n");
    char line2[80];
    snprintf(line2, sizeof line2, "%s:2", path);
    expect_refused(RUN("schedule", "-f", path), line2, NULL);
    unlink(path);
    path = write_temp("devices = 2\n\nbatch = 0\n");
    snprintf(line2, sizeof line2, "%s:3", path);
    expect_refused(RUN("schedule", "-f", path), line2, "--batch");
    unlink(path);
    /* a key set twice: the second line named, with the key (the last won) */
    path = write_temp("devices = 2\nbatch = 64\ndevices = 6\n");
    snprintf(line2, sizeof line2, "%s:3: devices: set twice", path);
    expect_refused(RUN("schedule", "-f", path), line2, "first on line 1");
    unlink(path);
}

/* Values that their consumers check after the file is read (a model spec, a
 * strategy list, a straggler or failure spec, a cluster) name the file and
 * line too, as the table's own checks do; the command line's value, which
 * wins over the file, is not blamed on it. */
Test(cli, scenario_file_values_checked_later_name_file_and_line)
{
    static const struct {
        const char *command, *text, *option;
    } cases[] = {
        {"sim", "steps = 2\nmodel = mlp:0-1\n", "--model"},
        {"compare", "steps = 2\nstrategies = mirrored,nope\n", "--strategies"},
        {"sim", "steps = 2\nstrategy = nope\n", "--strategy"},
        {"sim", "steps = 2\nstraggler = exp:-1\n", "--straggler"},
        {"sim", "steps = 2\nfail = x\n", "--fail"},
        {"sim", "steps = 2\ncluster = /nonexistent/c.profile\n", "--cluster"},
        {"schedule", "steps = 2\nstrategy = nope\n", "--strategy"},
        /* refusals that read "--NAME VALUE: ..." (a value unquoted) */
        {"sim", "fail = 1@3\non-failure = shrink\nstrategy = pipeline-gpipe\n", "--on-failure"},
        {"real", "steps = 2\ncheckpoint-dir = /tmp\n", "--checkpoint-dir"},
        {"real", "steps = 2\nsupervisor-address = 127.0.0.1\n", "--supervisor-address"},
        {"calibrate", "steps = 2\nmodel = transformer:layers=1,hidden=8,seq=4,vocab=16\n",
         "--model"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = write_temp(cases[i].text);
        char where[96];
        snprintf(where, sizeof where, "%s:2: %s", path, cases[i].option);
        expect_refused(RUN(cases[i].command, "-f", path), where, NULL);
        unlink(path);
    }
    char *path = write_temp("steps = 2\nstraggler = exp:-1\n");
    struct run r = RUN("sim", "-f", path, "--straggler", "exp:-2");
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect_null(strstr(r.err, path), "the command line's value blamed on the file: %s", r.err);
    cr_expect_not_null(strstr(r.err, "'exp:-2'"), "stderr: %s", r.err);
    run_free(&r);
    unlink(path);
}

Test(cli, schedule_json_is_the_plan)
{
    char dir[] = "/tmp/strata-cli-json-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/plan.json", dir);
    struct run r = RUN("schedule", "--strategy", "ps-sync", "--devices", "3", "--servers", "2",
                       "--json", path);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    run_free(&r);
    char *text = test_slurp(path);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "not JSON: %.200s", text);
    cr_expect_eq(cJSON_GetObjectItem(root, "strata_plan")->valueint, 1);
    cr_expect_str_eq(cJSON_GetObjectItem(root, "strategy")->valuestring, "ps-sync");
    cr_expect_str_eq(cJSON_GetObjectItem(root, "policy")->valuestring, "sync");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(root, "valid")));
    cJSON *ranks = cJSON_GetObjectItem(root, "ranks");
    cr_expect_eq(cJSON_GetArraySize(ranks), 5, "3 workers + 2 servers");
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(ranks, 4), "role")->valuestring, "server");
    cJSON_Delete(root);
    free(text);
    unlink(path);
    rmdir(dir);
}

/* schedule runs nothing: it has no report row, trace or run timeline to
 * write. --csv and --trace were accepted and wrote no file, --timeline and
 * --timeline-steps changed nothing; each is refused now, named, before
 * anything is printed or written, and --help no longer lists them. */
Test(cli, schedule_refuses_the_outputs_it_cannot_write)
{
    char dir[] = "/tmp/strata-cli-sched-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char csv[128], trace[128];
    snprintf(csv, sizeof csv, "%s/plan.csv", dir);
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    expect_refused(RUN("schedule", "--csv", csv), "--csv", "strata sim");
    expect_refused(RUN("schedule", "--trace", trace), "--trace", "strata sim");
    expect_refused(RUN("schedule", "--timeline"), "--timeline", NULL);
    expect_refused(RUN("schedule", "--timeline-steps", "0:1"), "--timeline-steps", NULL);
    cr_expect_neq(access(csv, F_OK), 0, "a refused schedule wrote %s", csv);
    cr_expect_neq(access(trace, F_OK), 0, "a refused schedule wrote %s", trace);
    struct run r = RUN("schedule", "--help");
    cr_assert_eq(r.status, 0);
    cr_expect_null(strstr(r.out, "--csv"), "schedule --help lists --csv");
    cr_expect_null(strstr(r.out, "--timeline"), "schedule --help lists --timeline");
    cr_expect_not_null(strstr(r.out, "--json"), "schedule --help lost --json");
    run_free(&r);
    rmdir(dir);
}

Test(cli, json_into_a_missing_directory_exits_2_and_writes_nothing)
{
    struct run r = RUN("schedule", "--json", "/tmp/strata-no-such-dir/plan.json");
    cr_expect_eq(r.status, 2, "status %d: %s", r.status, r.err);
    cr_expect_not_null(strstr(r.err, "--json"));
    struct stat st;
    cr_expect_neq(stat("/tmp/strata-no-such-dir", &st), 0);
    run_free(&r);
}

/* --- output paths: checked before the work, each its own ----------------- */

/* Entries of the current directory other than . and .. */
static int n_entries_here(void)
{
    DIR *d = opendir(".");
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* How often needle occurs in hay. */
static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* args refused before any work: exit 2, stderr naming both must_name and
 * must_name_too (once each when they are options: no doubled "--x: --x:"),
 * nothing on stdout (every command prints its results after the work), and
 * no file made in the current directory, which held n_before entries. */
static void expect_refused_before_work(const char *const *args, const char *must_name,
                                       const char *must_name_too, int n_before)
{
    struct run r = run_strata(args);
    char what[256] = "";
    for (int i = 0; args[i] && strlen(what) < sizeof what - 40; i++)
        strcat(strcat(what, " "), args[i]);
    cr_expect_eq(r.status, 2, "strata%s: exit %d, want 2; stderr: %s", what, r.status, r.err);
    cr_expect_not_null(strstr(r.err, must_name), "strata%s: stderr does not name '%s': %s",
                       what, must_name, r.err);
    cr_expect_not_null(strstr(r.err, must_name_too), "strata%s: stderr does not name '%s': %s",
                       what, must_name_too, r.err);
    if (must_name[0] == '-')
        cr_expect_eq(occurrences(r.err, must_name), 1, "strata%s: '%s' more than once: %s",
                     what, must_name, r.err);
    cr_expect_eq(r.out[0], '\0', "strata%s: worked before refusing; stdout: %.300s", what,
                 r.out);
    cr_expect_eq(n_entries_here(), n_before, "strata%s: wrote a file before refusing", what);
    run_free(&r);
}

#define REFUSED_BEFORE_WORK(must_name, must_name_too, n_before, ...)                         \
    expect_refused_before_work((const char *const[]){__VA_ARGS__, NULL}, must_name,          \
                               must_name_too, n_before)

/* A test's .init: in a fresh directory (made the current one, for
 * relative paths), a trace for replay and a report for plot, the inputs
 * some cases need; 2 entries. Its .fini, leave_dir_with_inputs, goes back
 * to / and removes it, whether the test passed or not. */
static char inputs_dir[64];

static void enter_dir_with_inputs(void)
{
    test_make_dir(inputs_dir, sizeof inputs_dir, "cli-outputs");
    cr_assert_eq(chdir(inputs_dir), 0);
    expect_ok(RUN("sim", "--steps", "2", "--trace", "t.json", "--json", "r.json"), "inputs");
    cr_assert_eq(n_entries_here(), 2);
}

static void leave_dir_with_inputs(void)
{
    cr_assert_eq(chdir("/"), 0);
    test_remove_dir(inputs_dir);
}

/* The user tour's bug: access(W_OK) lets root "write" in /proc, so the
 * pre-check passed and the command worked, then failed to write (exit 1),
 * with the outputs before the failing one already written. Every command
 * and every kind of output: exit 2 at once, naming option and path. */
Test(cli, an_output_in_proc_is_refused_before_the_work_and_nothing_is_written, .timeout = 300,
     .init = enter_dir_with_inputs, .fini = leave_dir_with_inputs)
{
    mpirun_env_prepare();
    const char *const x = "/proc/strata-x.json", *const xd = "/proc/strata-x";
    REFUSED_BEFORE_WORK("--json", x, 2, "sim", "--steps", "2", "--json", x);
    REFUSED_BEFORE_WORK("--csv", x, 2, "sim", "--steps", "2", "--json", "a.json", "--csv", x);
    REFUSED_BEFORE_WORK("--trace", x, 2, "sim", "--steps", "2", "--json", "a.json", "--trace", x);
    REFUSED_BEFORE_WORK("--html", x, 2, "sim", "--steps", "2", "--json", "a.json", "--html", x);
    REFUSED_BEFORE_WORK("--plot", xd, 2, "compare", "--steps", "2", "--json", "a.json", "--plot",
                        xd);
    REFUSED_BEFORE_WORK("--csv", x, 2, "sweep", "--steps", "2", "--devices", "1,2", "--json",
                        "a.json", "--csv", x);
    REFUSED_BEFORE_WORK("--chakra", xd, 2, "schedule", "--json", "a.json", "--chakra", xd);
    REFUSED_BEFORE_WORK("--json", x, 2, "schedule", "--json", x);
    REFUSED_BEFORE_WORK("--plot", xd, 2, "plot", "--html", "a.html", "--plot", xd, "r.json");
    REFUSED_BEFORE_WORK("--json", x, 2, "replay", "--html", "a.html", "--json", x, "t.json");
    REFUSED_BEFORE_WORK("--json", x, 2, "real", "--np", "2", "--steps", "4", "--data",
                        "synthetic", "--save-params", "p.bin", "--json", x);
    REFUSED_BEFORE_WORK("--plot", xd, 2, "validate", "--np", "2", "--steps", "2", "--data",
                        "synthetic", "--strategies", "mirrored", "--json", "a.json", "--plot",
                        xd);
    REFUSED_BEFORE_WORK("--output", "/proc/strata-x.profile", 2, "calibrate", "--data",
                        "synthetic", "-o", "/proc/strata-x.profile");
}

/* Two outputs of one command on one path: the second written replaced the
 * first (--json and --csv exited 0 with the CSV alone), or a directory
 * could not be made where the file was. Any pair, however spelled. */
Test(cli, two_outputs_on_one_path_are_refused_naming_both, .timeout = 120,
     .init = enter_dir_with_inputs, .fini = leave_dir_with_inputs)
{
    mpirun_env_prepare();
    REFUSED_BEFORE_WORK("--csv", "--json", 2, "sim", "--steps", "2", "--json", "o", "--csv", "o");
    REFUSED_BEFORE_WORK("--trace", "--json", 2, "sim", "--steps", "2", "--json", "o", "--trace",
                        "./o");
    REFUSED_BEFORE_WORK("--html", "--csv", 2, "sim", "--steps", "2", "--csv", "o", "--html", "o");
    REFUSED_BEFORE_WORK("--plot", "--json", 2, "compare", "--steps", "2", "--json", "o", "--plot",
                        "o/");
    REFUSED_BEFORE_WORK("--chakra", "--json", 2, "schedule", "--json", "o", "--chakra", "o");
    REFUSED_BEFORE_WORK("--html", "--json", 2, "replay", "--json", "o", "--html", "o", "t.json");
    REFUSED_BEFORE_WORK("--save-params", "--json", 2, "real", "--np", "2", "--steps", "4",
                        "--data", "synthetic", "--json", "o", "--save-params", "o");
}

/* compare --trace T writes one trace per strategy, T with the strategy's
 * name before its extension; those paths were checked against nothing:
 * --trace o.json --json o.mirrored.json exited 0 with the compare's JSON
 * replaced by mirrored's trace, and -f o.ps-sync.conf --trace o.conf put
 * ps-sync's trace over the scenario file. */
Test(cli, a_strategys_trace_on_another_outputs_path_is_refused, .init = enter_dir_with_inputs,
     .fini = leave_dir_with_inputs)
{
    REFUSED_BEFORE_WORK("--json", "'o.mirrored.json'", 2, "compare", "--strategies",
                        "mirrored,ps-sync", "--steps", "2", "--trace", "o.json", "--json",
                        "o.mirrored.json");
    REFUSED_BEFORE_WORK("--trace", "--csv", 2, "compare", "--strategies", "mirrored,ps-sync",
                        "--steps", "2", "--trace", "o.json", "--csv", "./o.ps-sync.json");
    FILE *f = fopen("o.ps-sync.conf", "w");
    cr_assert_not_null(f);
    fputs("steps = 2\n", f);
    fclose(f);
    REFUSED_BEFORE_WORK("-f", "'o.ps-sync.conf'", 3, "compare", "--strategies",
                        "mirrored,ps-sync", "-f", "o.ps-sync.conf", "--trace", "o.conf");
    char *conf = test_slurp("o.ps-sync.conf");
    cr_expect_str_eq(conf, "steps = 2\n", "the scenario file is still the scenario");
    free(conf);
}

/* A list's trace names do not depend on how many of its strategies ran:
 * model does not fit 4 devices of a 2-layer model, and mirrored's trace
 * was written to u.json, as if one strategy had been asked for. */
Test(cli, compare_trace_names_follow_the_strategies_asked_not_those_that_ran,
     .init = enter_dir_with_inputs, .fini = leave_dir_with_inputs)
{
    const char *t = "u.json", *named = "u.mirrored.json";   /* t.json is an input here */
    struct run r = RUN("compare", "--strategies", "mirrored,model", "--devices", "4", "--model",
                       "mlp:784-32-10", "--steps", "2", "--trace", t);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "not run: model"), "model should not fit:\n%s", r.out);
    run_free(&r);
    struct stat st;
    cr_expect_eq(stat(named, &st), 0, "a list's strategy's trace must be %s", named);
    cr_expect_neq(stat(t, &st), 0, "%s written: the name depended on how many ran", t);
    /* one strategy asked: --trace's own path */
    r = RUN("compare", "--strategies", "mirrored", "--devices", "4", "--model", "mlp:784-32-10",
            "--steps", "2", "--trace", t);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    cr_expect_eq(stat(t, &st), 0, "one strategy asked: its trace is %s", t);
}

/* An output on a file the command reads: replay --json t.json t.json
 * exited 0 with its trace replaced by the replay, plot --html r.json
 * r.json put the page over the report. */
Test(cli, an_output_on_a_file_the_command_reads_is_refused, .init = enter_dir_with_inputs,
     .fini = leave_dir_with_inputs)
{
    REFUSED_BEFORE_WORK("--json", "t.json", 2, "replay", "--json", "t.json", "t.json");
    REFUSED_BEFORE_WORK("--html", "r.json", 2, "plot", "--html", "./r.json", "r.json");
    FILE *f = fopen("s.conf", "w");
    cr_assert_not_null(f);
    fputs("steps = 2\n", f);
    fclose(f);
    REFUSED_BEFORE_WORK("--json", "-f", 3, "sim", "-f", "s.conf", "--json", "s.conf");
    char *trace = test_slurp("t.json");
    cr_expect_not_null(strstr(trace, "strata_trace"), "the trace is still the trace");
    free(trace);
}

/* A message that names its option once: replay passed strategy_find's
 * "--strategy: ..." up with "--strategy" put before it again. */
Test(cli, an_unknown_strategy_in_replay_names_the_option_once, .init = enter_dir_with_inputs,
     .fini = leave_dir_with_inputs)
{
    REFUSED_BEFORE_WORK("--strategy", "nope", 2, "replay", "--strategy", "nope", "t.json");
}

/* --- the simulator through the command line ------------------------------ */

/* A report of compare's document, by strategy. */
static const cJSON *report_of(const cJSON *doc, const char *strategy)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(doc, "reports"))
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(r, "strategy")->valuestring, strategy))
            return r;
    cr_assert_fail("no report for %s", strategy);
    return NULL;
}

Test(cli, sim_gpipe_on_the_ideal_cluster_has_the_closed_form_bubble)
{
    char path[] = "/tmp/strata-cli-sim-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    struct run r = RUN("sim", "--strategy", "pipeline-gpipe", "--cluster", "ideal", "--devices",
                       "4", "--microbatches", "8", "--model", "mlp:512-512-512-512-512",
                       "--json", path);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    run_free(&r);
    cJSON *j = read_json(path);
    double bubble = num_at(j, "bubble_fraction", NULL);
    /* (p-1)/(m+p-1) with p = 4 stages, m = 8 microbatches */
    cr_expect(fabs(bubble - 3.0 / 11) < 1e-9, "bubble %.12f, want 3/11 = %.12f", bubble, 3.0 / 11);
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(j, "mode")->valuestring, "sim");
    cJSON_Delete(j);
    unlink(path);
}

/* One rank 50x slower: synchronous strategies wait for it every step;
 * ps-async's other workers take its share of the work (docs/metrics.md) and
 * its step stays within 10% while staleness grows. (Noise on every rank,
 * exp:0.5, is no such test on 16 workers: the step is then bound by the
 * server's updates, which arrivals spread by noise overlap better.) */
Test(cli, compare_with_a_slow_rank_slows_sync_and_makes_async_stale)
{
    char calm[] = "/tmp/strata-cli-calm-XXXXXX", noisy[] = "/tmp/strata-cli-noisy-XXXXXX";
    close(mkstemp(calm));
    close(mkstemp(noisy));
    struct run r = RUN("compare", "--devices", "16", "--strategies", "mirrored,ps-sync,ps-async",
                       "--json", calm);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    run_free(&r);
    r = RUN("compare", "--devices", "16", "--strategies", "mirrored,ps-sync,ps-async",
            "--straggler", "slow:0=50", "--json", noisy);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    run_free(&r);
    cJSON *a = read_json(calm), *b = read_json(noisy);
    for (const char *const *s = (const char *const[]){"mirrored", "ps-sync", NULL}; *s; s++) {
        double t0 = num_at(report_of(a, *s), "step_time_s", "mean");
        double t1 = num_at(report_of(b, *s), "step_time_s", "mean");
        cr_expect_gt(t1, t0, "%s: stragglers did not slow the step (%g s -> %g s)", *s, t0, t1);
    }
    double stale0 = num_at(report_of(a, "ps-async"), "staleness", "max");
    double stale1 = num_at(report_of(b, "ps-async"), "staleness", "max");
    cr_expect_gt(stale1, stale0, "ps-async's slow worker's pushes are no staler (%g -> %g)",
                 stale0, stale1);
    double t0 = num_at(report_of(a, "ps-async"), "step_time_s", "mean");
    double t1 = num_at(report_of(b, "ps-async"), "step_time_s", "mean");
    cr_expect_lt(t1, 1.1 * t0, "ps-async waited for the slow rank (%g s -> %g s)", t0, t1);
    cJSON_Delete(a);
    cJSON_Delete(b);
    unlink(calm);
    unlink(noisy);
}

Test(cli, the_same_seed_gives_byte_identical_json_and_another_seed_does_not)
{
    char p1[] = "/tmp/strata-cli-s1-XXXXXX", p2[] = "/tmp/strata-cli-s2-XXXXXX",
         p3[] = "/tmp/strata-cli-s3-XXXXXX";
    close(mkstemp(p1));
    close(mkstemp(p2));
    close(mkstemp(p3));
    const char *paths[] = {p1, p2, p3};
    const char *seeds[] = {"7", "7", "8"};
    for (int i = 0; i < 3; i++) {
        struct run r = RUN("sim", "--strategy", "ps-async", "--devices", "8", "--straggler",
                           "exp:0.3", "--seed", seeds[i], "--json", paths[i]);
        cr_assert_eq(r.status, 0, "stderr: %s", r.err);
        run_free(&r);
    }
    char *t1 = test_slurp(p1), *t2 = test_slurp(p2), *t3 = test_slurp(p3);
    cr_expect_str_eq(t1, t2, "seed 7 twice gave different reports");
    cr_expect_str_neq(t1, t3, "seeds 7 and 8 gave the same report");
    free(t1);
    free(t2);
    free(t3);
    unlink(p1);
    unlink(p2);
    unlink(p3);
}

Test(cli, sim_trace_is_chrome_trace_json_and_timeline_draws_ranks)
{
    char path[] = "/tmp/strata-cli-trace-XXXXXX";
    close(mkstemp(path));
    struct run r = RUN("sim", "--strategy", "pipeline-1f1b", "--devices", "4", "--steps", "3",
                       "--trace", path, "--timeline");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    for (int rank = 0; rank < 4; rank++) {
        char row[32];
        snprintf(row, sizeof row, "rank %d compute", rank);
        cr_expect_not_null(strstr(r.out, row), "--timeline has no row '%s'", row);
    }
    run_free(&r);
    cJSON *j = read_json(path);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
    cr_assert(cJSON_IsArray(events));
    int complete = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events) {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
        complete += cJSON_IsString(ph) && !strcmp(ph->valuestring, "X");
    }
    cr_expect_gt(complete, 0, "no complete ('X') events");
    cJSON_Delete(j);
    unlink(path);
}

Test(cli, bad_simulator_options_exit_2_naming_the_option)
{
    expect_refused(RUN("sim", "--cluster", "tpu-pod"), "--cluster", "tpu-pod");
    /* a file that is no profile (a directory, a report) names the option too */
    expect_refused(RUN("sim", "--cluster", "/", "--steps", "2"), "strata sim: --cluster: '/'",
                   "is a directory, not a profile file");
    expect_refused(RUN("compare", "--cluster", "/", "--steps", "2"), "--cluster: '/'", NULL);
    /* every file of lines says a directory so, before reading a line (it
     * said "/:1: cannot read: Is a directory") */
    expect_refused(RUN("sim", "-f", "/"), "scenario file '/': a directory", NULL);
    expect_refused(RUN("lab", "/"), "lab file '/': a directory", NULL);
    expect_refused(RUN("real", "--hostfile", "/"), "--hostfile /: a directory", NULL);
    expect_refused(RUN("sim", "--straggler", "exp:x"), "--straggler", "exp:x");
    expect_refused(RUN("sim", "--fail", "99@1"), "--fail", "99");
    /* a malformed --fail is refused once, not by each strategy of a compare
     * ("not run" a line each) nor after a real compare's baseline job */
    struct run r = RUN("compare", "--fail", "x", "--steps", "2");
    cr_expect_null(strstr(r.err, "not run"), "%s", r.err);
    expect_refused(r, "strata compare: --fail: 'x' is not R@STEP or R@Ts", NULL);
    r = RUN("compare", "--mode", "real", "--fail", "x", "--steps", "2");
    cr_expect_null(strstr(r.err, "exited with status"), "%s", r.err);
    expect_refused(r, "strata compare: --fail: 'x'", NULL);
    expect_refused(RUN("sweep", "--devices", "1,2", "--fail", "1@x", "--steps", "2"),
                   "strata sweep: --fail: '1@x'", NULL);
    expect_refused(RUN("sim", "--fail", "1@100", "--steps", "5"), "--fail 1@100",
                   "never starts step 100");
    /* what only a real run reads was accepted and ignored */
    const char *real_only[][2] = {{"--device", "cuda"}, {"--comm", "nccl"}, {"--tf32", NULL},
                                  {"--epochs", "3"}, {"--save-params", "p.bin"}};
    for (size_t i = 0; i < sizeof real_only / sizeof *real_only; i++)
        expect_refused(real_only[i][1] ? RUN("sim", real_only[i][0], real_only[i][1])
                                       : RUN("sim", real_only[i][0]),
                       real_only[i][0], "only real runs read it");
    expect_refused(RUN("real", "--cluster", "ideal"), "--cluster", "only simulations read it");
    expect_refused(RUN("sim", "--allreduce", "butterfly"), "--allreduce", "butterfly");
    expect_refused(RUN("sim", "--nodes", "1", "--devices-per-node", "2", "--devices", "8"),
                     "--nodes", NULL);
}

/* --save-params was in the help of compare, sweep, validate and calibrate,
 * taken, and ignored: compare --mode real exited 0 and wrote no file (a
 * simulated compare even noted it as read by --mode real). They keep no
 * trained model: refused, naming strata real, and not offered. No
 * launcher is to be found, so nothing here can start an MPI job. */
Test(cli, save_params_is_refused_where_no_model_is_kept)
{
    setenv("STRATA_MPIRUN", "/nonexistent/mpirun", 1);
    const char *const p = "/tmp/strata-test-never-written.bin";
    expect_refused(RUN("compare", "--steps", "2", "--save-params", p), "--save-params",
                   "strata real");
    expect_refused(RUN("compare", "--mode", "real", "--np", "2", "--steps", "2", "--data",
                       "synthetic", "--save-params", p),
                   "--save-params", "strata real");
    expect_refused(RUN("sweep", "--devices", "1,2", "--steps", "2", "--save-params", p),
                   "--save-params", "strata real");
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--np", "2", "--steps", "2",
                       "--save-params", p),
                   "--save-params", "strata real");
    expect_refused(RUN("calibrate", "--data", "synthetic", "--save-params", p), "--save-params",
                   "strata real");
    unsetenv("STRATA_MPIRUN");
    cr_expect_neq(access(p, F_OK), 0, "%s was written", p);
    const char *const commands[] = {"compare", "sweep", "validate", "calibrate"};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        struct run h = RUN(commands[i], "--help");
        cr_expect_null(strstr(h.out, "--save-params"), "%s --help offers --save-params",
                       commands[i]);
        run_free(&h);
    }
    struct run h = RUN("real", "--help");
    cr_expect_not_null(strstr(h.out, "--save-params"), "real --help lost --save-params");
    run_free(&h);
}

/* A launch option alone (--supervisor-address without --hostfile) is
 * refused by every real job alike: a command of many jobs refuses it once,
 * itself, before any job (they said it job by job, or after a baseline's
 * or a cell's work; calibrate after timing checkpoints). No launcher is to
 * be found, so nothing here can start an MPI job. */
Test(cli, a_launch_option_alone_is_refused_once_by_commands_of_many_jobs)
{
    setenv("STRATA_MPIRUN", "/nonexistent/mpirun", 1);
    const char *const says = ": --supervisor-address 127.0.0.1: read only with --hostfile";
    struct {
        const char *name;
        struct run r;
    } runs[] = {
        {"compare", RUN("compare", "--mode", "real", "--np", "2", "--steps", "2", "--data",
                        "synthetic", "--supervisor-address", "127.0.0.1")},
        {"sweep", RUN("sweep", "--mode", "real", "--devices", "1,2", "--steps", "2", "--data",
                      "synthetic", "--supervisor-address", "127.0.0.1")},
        {"validate", RUN("validate", "--cluster", "cpu-loopback", "--np", "2", "--steps", "2",
                         "--data", "synthetic", "--supervisor-address", "127.0.0.1")},
        {"calibrate", RUN("calibrate", "--data", "synthetic", "--supervisor-address",
                          "127.0.0.1")},
    };
    unsetenv("STRATA_MPIRUN");
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        char want[160];
        snprintf(want, sizeof want, "strata %s%s", runs[i].name, says);
        expect_refused(runs[i].r, want, NULL);
    }
}

/* sweep and validate draw no one run's spans: --timeline-steps with --plot
 * or --html was taken and ignored (exit 0), and --help offered --trace,
 * --timeline and --timeline-steps (validate also --mode and --csv) that
 * were refused once given. Refused with the options, and not offered. */
Test(cli, sweep_and_validate_refuse_and_do_not_offer_one_runs_outputs)
{
    setenv("STRATA_MPIRUN", "/nonexistent/mpirun", 1);
    expect_refused(RUN("sweep", "--devices", "1,2", "--steps", "2", "--plot",
                       "/tmp/strata-test-never-made", "--timeline-steps", "0:1"),
                   "--timeline-steps: this command runs many scenarios", "strata sim");
    expect_refused(RUN("validate", "--cluster", "cpu-loopback", "--np", "2", "--steps", "2",
                       "--html", "/tmp/strata-test-never-written.html", "--timeline-steps", "0:1"),
                   "--timeline-steps: this command runs many scenarios", NULL);
    unsetenv("STRATA_MPIRUN");
    cr_expect_neq(access("/tmp/strata-test-never-made", F_OK), 0, "the plot directory was made");
    const char *const offered[][2] = {{"sweep", "--trace"}, {"sweep", "--timeline"},
                                      {"validate", "--timeline"}, {"validate", "--mode"},
                                      {"validate", "--csv"}};
    for (size_t i = 0; i < sizeof offered / sizeof *offered; i++) {
        struct run h = RUN(offered[i][0], "--help");
        char head[32];
        snprintf(head, sizeof head, "\n  %s ", offered[i][1]);
        cr_expect_null(strstr(h.out, head), "%s --help offers %s", offered[i][0], offered[i][1]);
        run_free(&h);
    }
}

/* pipeline-interleaved lowers the default --chunks 2 to what the model's
 * layers allow: the report's config records the chunks it ran with. */
Test(cli, a_lowered_chunks_default_is_what_the_report_records)
{
    char path[] = "/tmp/strata-test-chunks-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    struct run r = RUN("sim", "--strategy", "pipeline-interleaved", "--devices", "4", "--steps",
                       "2", "--json", path);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "note: --chunks 1:"), "%s", r.out);
    run_free(&r);
    cJSON *j = read_json(path);
    cr_assert_not_null(j);
    const cJSON *chunks =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "config"), "chunks");
    cr_expect(cJSON_IsNumber(chunks) && chunks->valuedouble == 1, "config.chunks");
    cJSON_Delete(j);
    unlink(path);
}

/* An option set for another strategy is not silently dropped: sim, real
 * and schedule name it and who reads it. */
Test(cli, options_the_strategy_does_not_read_are_noted)
{
    expect_ok_saying(RUN("sim", "--staleness", "3", "--chunks", "4", "--steps", "2"),
                     "\nnote: mirrored does not read --chunks 4 (only pipeline-interleaved reads "
                     "it); --staleness 3 (only ps-ssp reads it)\n", true);
    expect_ok_saying(RUN("schedule", "--strategy", "ps-sync", "--microbatches", "8"),
                     "note: ps-sync does not read --microbatches 8 (only pipeline-gpipe, "
                     "pipeline-1f1b, pipeline-interleaved, pipeline-zb read it)", true);
    /* a simulated compare or sweep says what only --mode real would read */
    expect_ok_saying(RUN("compare", "--np", "4", "--device", "cuda", "--steps", "2",
                         "--strategies", "mirrored"),
                     "  note: --device cuda --np 4: read by real runs only (--mode real); this "
                     "compare is simulated\n", true);
    expect_ok_saying(RUN("sweep", "--np", "2", "--steps", "2", "--strategies", "mirrored",
                         "--devices", "1,2"),
                     "  note: --np 2: read by real runs only (--mode real); this sweep is "
                     "simulated\n", true);
    /* an empty value shows as '' ("--device : read by" read as a typo) */
    expect_ok_saying(RUN("compare", "--device", "", "--steps", "2", "--strategies", "mirrored"),
                     "  note: --device '': read by real runs only", true);
    /* ps-ssp reads all it was given */
    expect_ok_saying(RUN("sim", "--strategy", "ps-ssp", "--staleness", "3", "--devices", "8",
                         "--steps", "2"), "does not read", false);
}

/* A compare or sweep sets options for some of its strategies; one that
 * none of them reads, the varied one too, is noted rather than left to
 * read as though it shaped the table (identical rows, silently). */
Test(cli, options_no_strategy_of_a_compare_or_sweep_reads_are_noted)
{
    expect_ok_saying(RUN("compare", "--strategies", "mirrored,ps-sync", "--staleness", "3",
                         "--servers", "2", "--steps", "2"),
                     "  note: no strategy compared reads --staleness 3 (only ps-ssp reads it)\n",
                     true);
    expect_ok_saying(RUN("sweep", "--strategies", "mirrored,ps-sync", "--vary",
                         "staleness=1,2", "--chunks", "3", "--steps", "2"),
                     "  note: no strategy swept reads --chunks 3 (only pipeline-interleaved "
                     "reads it)\n  note: --vary staleness=1,2: no strategy swept reads "
                     "--staleness (only ps-ssp reads it), so its values run alike\n", true);
    /* one of them reads it: no note */
    expect_ok_saying(RUN("compare", "--strategies", "mirrored,ps-ssp", "--staleness", "3",
                         "--steps", "2"), "no strategy compared", false);
    expect_ok_saying(RUN("sweep", "--strategies", "mirrored,ps-ssp", "--vary",
                         "staleness=1,2", "--steps", "2"), "no strategy swept", false);
}

/* The failure options a simulated compare or sweep does not read (no
 * --fail or --mtbf: nothing fails), and a --fail that came after every
 * point's run, were taken and said nothing there, though sim says them. */
Test(cli, failure_options_a_compare_or_sweep_does_not_read_are_noted)
{
    expect_ok_saying(RUN("compare", "--strategies", "mirrored", "--on-failure", "shrink",
                         "--commit-every", "5", "--steps", "2"),
                     "  note: --on-failure shrink, --commit-every 5: no failure is scheduled "
                     "(--fail R@STEP or --mtbf HOURS), so nothing reads them\n", true);
    expect_ok_saying(RUN("sweep", "--strategies", "mirrored", "--devices", "1,2",
                         "--commit-every", "5", "--steps", "2"),
                     "  note: --commit-every 5: no failure is scheduled", true);
    expect_ok_saying(RUN("sweep", "--strategies", "mirrored", "--devices", "1,2", "--fail",
                         "0@100s", "--steps", "2"),
                     "  note: --fail 0@100s: no rank failed: the runs ended before it came", true);
}

/* The presets price a checkpoint at 0 s: --checkpoint-every changed
 * nothing there and said nothing (a profile with ckpt_write_bw_bytes_per_s
 * prices it, and gets no note). */
Test(cli, checkpoints_on_a_cluster_that_prices_them_at_0_are_noted)
{
    expect_ok_saying(RUN("sim", "--checkpoint-every", "2", "--steps", "4"),
                     "\nnote: --checkpoint-every 2: h100-nvlink-ib prices a checkpoint at 0 s (its "
                     "profile sets no ckpt_write_bw_bytes_per_s), so the interval changes nothing "
                     "here;", true);
    expect_ok_saying(RUN("sweep", "--strategies", "mirrored", "--vary", "checkpoint-every=1,2",
                         "--steps", "4", "--fail", "0@2"),
                     "  note: --vary checkpoint-every=1,2: h100-nvlink-ib prices a checkpoint at "
                     "0 s (its profile sets no ckpt_write_bw_bytes_per_s), so the interval sets "
                     "only what a failure redoes;", true);
    expect_ok_saying(RUN("sim", "--checkpoint-every", "2", "--steps", "4", "--cluster",
                         STRATA_SOURCE_DIR "/labs/failures.profile"), "prices a checkpoint", false);
}

/* The training options shape only the arithmetic: a simulation without
 * --numerics times its steps alone, and says so of --lr, --data ... rather
 * than exit 0 as though a missing data directory had been read. */
Test(cli, training_options_of_a_simulation_without_numerics_are_noted)
{
    expect_ok_saying(RUN("sim", "--lr", "5", "--data", "/nonexistent", "--steps", "2"),
                     "\nnote: --lr 5 --data /nonexistent: read only when the arithmetic runs "
                     "(--numerics, or --target-accuracy above 0) or for real; this simulation "
                     "times the steps alone\n", true);
    expect_ok_saying(RUN("compare", "--momentum", "0", "--steps", "2", "--strategies",
                         "mirrored"),
                     "  note: --momentum 0: read only when the arithmetic runs", true);
    expect_ok_saying(RUN("sweep", "--eval-every", "3", "--steps", "2", "--strategies",
                         "mirrored", "--devices", "1,2"),
                     "  note: --eval-every 3: read only when the arithmetic runs", true);
    /* a value quoted in a note is escaped, as in an error: a note never
     * drives the terminal (it echoed an escape sequence raw) */
    expect_ok_saying(RUN("sim", "--data", "a\x1b[2J\nb", "--steps", "2"),
                     "note: --data a\\x1b[2J\\nb: read only", true);
    /* with the arithmetic they are read: no note */
    expect_ok_saying(RUN("sim", "--numerics", "--data", "synthetic", "--model", "mlp:784-8-10",
                         "--lr", "0.1", "--steps", "2"), "read only when", false);
}

/* Ranks fill nodes in order: --nodes beyond what they fill is said in the
 * header, not left for the user to read as ranks spread over the nodes. */
Test(cli, sim_header_says_which_nodes_the_ranks_fill)
{
    expect_ok_saying(RUN("sim", "--nodes", "4", "--devices", "12", "--steps", "2"),
                     "(4 nodes x 8; the 12 ranks on nodes 0 to 1,", true);
    /* every node holds a rank */
    expect_ok_saying(RUN("sim", "--nodes", "3", "--devices", "3", "--devices-per-node", "1",
                         "--steps", "2"), "(3 nodes x 1), batch", true);
}

/* Every command a lab tells students to run works: the labs are documentation
 * that the suite keeps true. Commands are the comment lines "#   strata ...",
 * with a trailing '\' joining the next line and "# ..." after them a remark. */
Test(cli, every_command_in_the_labs_runs)
{
    const char *labs[] = {"pipeline-bubble.conf", "ddp-buckets.conf", "parameter-servers.conf",
                          "stragglers.conf"};
    int n_run = 0;
    for (size_t l = 0; l < sizeof labs / sizeof labs[0]; l++) {
        char path[512];
        snprintf(path, sizeof path, "%s/labs/%s", STRATA_SOURCE_DIR, labs[l]);
        char *text = test_slurp(path);
        char cmd[1024] = "";
        for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
            if (strncmp(line, "#   ", 4) || (!cmd[0] && strncmp(line + 4, "strata ", 7))) continue;
            char *body = line + 4;
            while (*body == ' ') body++;
            char *remark = strstr(body, " #");
            if (remark) *remark = '\0';
            size_t len = strlen(body);
            while (len && body[len - 1] == ' ') body[--len] = '\0';
            bool more = len && body[len - 1] == '\\';
            if (more) body[--len] = '\0';
            strncat(cmd, body, sizeof cmd - strlen(cmd) - 2);
            strcat(cmd, " ");
            if (more) continue;
            /* "strata A B ..." -> args, with -f's relative lab path made absolute */
            const char *args[64];
            int n = 0;
            char lab_path[512];
            for (char *s2 = NULL, *w = strtok_r(cmd + 7, " ", &s2); w && n < 62;
                 w = strtok_r(NULL, " ", &s2)) {
                if (!strncmp(w, "labs/", 5)) {
                    snprintf(lab_path, sizeof lab_path, "%s/%s", STRATA_SOURCE_DIR, w);
                    w = lab_path;
                }
                args[n++] = w;
            }
            args[n] = NULL;
            struct run r = run_strata(args);
            cr_expect_eq(r.status, 0, "%s: `%s` exited %d: %s", labs[l], cmd, r.status, r.err);
            run_free(&r);
            n_run++;
            cmd[0] = '\0';
        }
        free(text);
    }
    cr_expect_geq(n_run, 15, "only %d lab commands found", n_run);
}

Test(cli, sim_warns_when_a_plan_does_not_fit_the_device_memory)
{
    /* GPT-3 175B replicated: 175e9 parameters x 2 bytes x (weights, grads,
     * momentum) alone are ~1 TB, far beyond an H100's 80 GB. */
    struct run r = RUN("sim", "--model", "gpt3-175b", "--strategy", "mirrored", "--devices", "8",
                       "--batch", "8", "--steps", "1");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.out, "would not fit"), "no memory warning:\n%s", r.out);
    run_free(&r);
    r = RUN("sim", "--strategy", "mirrored", "--devices", "2", "--steps", "1");
    cr_expect_null(strstr(r.out, "would not fit"), "a small MLP fits an H100:\n%s", r.out);
    run_free(&r);
}

/* compare says how much each plan that does not fit needs, against what,
 * and the knob of its own kind that would shrink it (it said only "needs
 * more memory per device than a h100-nvlink-ib device has"), alone and
 * with jobs, where only the reports come back. */
Test(cli, compare_says_what_a_plan_that_does_not_fit_needs_and_what_would_fit)
{
    static const char *const jobs[] = {"1", "2"};
    for (int j = 0; j < 2; j++) {
        struct run r = RUN("compare", "--model", "gpt2-small", "--devices", "8", "--batch", "512",
                           "--steps", "1", "--strategies", "mirrored,model,pipeline-1f1b", "-j",
                           jobs[j]);
        cr_assert_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_not_null(strstr(r.out, "warning: model needs "), "-j %s:\n%s", jobs[j], r.out);
        cr_expect_not_null(strstr(r.out, "more than the 80.0 GiB of a h100-nvlink-ib device"),
                           "-j %s:\n%s", jobs[j], r.out);
        cr_expect_not_null(strstr(r.out, "(more devices, --dp or a smaller --batch would)"),
                           "-j %s:\n%s", jobs[j], r.out);
        cr_expect_not_null(strstr(r.out, "warning: pipeline-1f1b needs "), "%s", r.out);
        cr_expect_not_null(strstr(r.out, "(more --microbatches or more devices would)"), "%s",
                           r.out);
        cr_expect_null(strstr(r.out, "warning: mirrored"), "64 samples a device fit:\n%s", r.out);
        run_free(&r);
    }
}

/* On one device every strategy is single-device training; parameter
 * servers are extra ranks that pay for their updates, so ps-* is never
 * faster than the one-device baseline (it used to be 1.01x: the server's
 * SGD was free). docs/metrics.md, speedup. */
Test(cli, one_device_parameter_servers_are_never_faster_than_one_device)
{
    char path[] = "/tmp/strata-cli-one-XXXXXX";
    close(mkstemp(path));
    struct run r = RUN("compare", "--devices", "1", "--cluster", "cpu-loopback", "--json", path);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "over the baseline"), "%s", r.out);
    run_free(&r);
    cJSON *j = read_json(path);
    double base = num_at(report_of(j, "mirrored"), "throughput_samples_per_s", NULL);
    for (const char *const *s = (const char *const[]){"ps-sync", "ps-async", "ps-ssp", NULL}; *s;
         s++) {
        double t = num_at(report_of(j, *s), "throughput_samples_per_s", NULL);
        cr_expect_leq(t, base, "%s on one device: %g samples/s, one device %g", *s, t, base);
    }
    cJSON_Delete(j);
    unlink(path);
}

Test(cli, help_metrics_defines_every_column)
{
    struct run r = RUN("help", "metrics");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    const char *terms[] = {"step time", "samples/s", "speedup", "compute", "comm", "down",
                           "idle", "bubble", "staleness", "peak mem", "steps_per_worker"};
    for (size_t i = 0; i < sizeof terms / sizeof *terms; i++)
        cr_expect_not_null(strstr(r.out, terms[i]), "`strata help metrics` lacks \"%s\"",
                           terms[i]);
    /* a real continue is a relaunch (real/supervise.h), its goodput under
     * 1 as shrink's: the page said "continue: 1" of every run */
    cr_expect_not_null(strstr(r.out, "a real one relaunches the survivors"), "%s", r.out);
    /* a --vary sweep's speedup and efficiency are not over one device, as
     * `sweep` says under its table; this page said "speedup / devices" */
    cr_expect_not_null(strstr(r.out, "A sweep of\n             another option than the devices: "
                                     "over the same strategy at\n             its first value."),
                       "%s", r.out);
    cr_expect_not_null(strstr(r.out, "option: samples/s over devices x one device's"), "%s",
                       r.out);
    run_free(&r);
}

/* `strata schedule --explain` is EXPLAIN's comment column: the meaning of
 * each op kind the plan uses (op_infos, core/plan.h) and of its server
 * policy (policy_infos, core/ps_policy.h), before the program; other
 * commands refuse it. */
Test(cli, schedule_explain_says_what_each_op_kind_and_the_policy_mean)
{
    struct run r = RUN("schedule", "--strategy", "ps-ssp", "--devices", "3", "--staleness", "2",
                       "--explain");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    for (int k = 0; k < OP_N_KINDS; k++) {
        bool is_in_plan = k == OP_FORWARD || k == OP_BACKWARD || k == OP_PUSH || k == OP_PULL;
        const char *at = strstr(r.out, op_infos[k].meaning);
        cr_expect_eq(at != NULL, is_in_plan, "%s's meaning %s", op_infos[k].name,
                     is_in_plan ? "is missing" : "is shown, but the plan has none");
        if (at) cr_expect_lt(at, strstr(r.out, "rank 0:"), "before the program");
    }
    cr_expect_not_null(strstr(r.out, "server policy ssp:2 (K = 2)"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, policy_infos[POLICY_SSP].meaning), "%s", r.out);
    run_free(&r);
    /* without --explain the program alone, as before */
    r = RUN("schedule", "--strategy", "mirrored", "--devices", "2");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_null(strstr(r.out, op_infos[OP_ALLREDUCE].meaning), "%s", r.out);
    run_free(&r);
    r = RUN("schedule", "--strategy", "mirrored", "--devices", "2", "--explain");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.out, op_infos[OP_ALLREDUCE].meaning), "%s", r.out);
    cr_expect_null(strstr(r.out, "server policy"), "mirrored has no servers:\n%s", r.out);
    run_free(&r);
    /* SEND's meaning spoke of "tag ACT", and the program writes act@1: it
     * names the column's own spelling and what the number is */
    r = RUN("schedule", "--strategy", "pipeline-gpipe", "--devices", "2", "--explain");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.out, "act@B: at layer boundary B"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, " SEND       act@1 "), "%s", r.out);
    run_free(&r);
    r = RUN("schedule", "--help");
    cr_expect_not_null(strstr(r.out, "--explain"), "schedule --help lacks --explain");
    run_free(&r);
    expect_refused(RUN("schedule", "--explain=maybe"), "--explain", NULL);
    expect_refused(RUN("compare", "--explain"), "--explain", "not an option");
}

/* The seconds `strata schedule --devices n --batch n` takes, the best of two
 * runs (a busy machine only ever adds time); its output ends in the verdict. */
static double schedule_seconds(int n)
{
    char devices[16];
    snprintf(devices, sizeof devices, "%d", n);
    double best_s = INFINITY;
    for (int k = 0; k < 2; k++) {
        double t0 = test_now_s();
        struct run r = RUN("schedule", "--devices", devices, "--batch", devices);
        double took_s = test_now_s() - t0;
        cr_assert_eq(r.status, 0, "--devices %d: stderr: %s", n, r.err);
        char verdict[48];
        snprintf(verdict, sizeof verdict, "\nvalid: %d ranks", n);
        cr_expect_not_null(strstr(r.out, verdict), "--devices %d: no verdict", n);
        run_free(&r);
        if (took_s < best_s) best_s = took_s;
    }
    return best_s;
}

/* schedule is linear in the ranks: 8 times the ranks take about 8 times as
 * long (less: start-up is a fixed cost). It was quadratic (the op column's
 * width and the replica grid rescanned the plan once per rank): 1,000 to
 * 8,000 ranks took 0.29 s to 37.9 s in a Debug build, 130 times. The bound,
 * 24 times, is 3 times the linear figure: room for a busy machine, far
 * below the quadratic 64. */
Test(cli, schedule_time_is_linear_in_the_ranks, .timeout = 600)
{
    double small_s = schedule_seconds(1000), large_s = schedule_seconds(8000);
    cr_log_info("schedule: 1000 ranks %.3f s, 8000 ranks %.3f s, ratio %.1f", small_s, large_s,
                large_s / small_s);
    cr_expect_lt(large_s / small_s, 24.0,
                 "8x the ranks took %.1fx the time (%.3f s, %.3f s): quadratic again?",
                 large_s / small_s, small_s, large_s);
}

/* Hybrid plans (--dp) print which rank is each stage of each replica, the
 * k-th copy of a stage (by rank) being replica k's: ranks 0-3 are replica
 * 0's four stages and 4-7 replica 1's (strategies/ lays replicas out so). */
Test(cli, schedule_dp_prints_the_replica_grid)
{
    struct run r = RUN("schedule", "--strategy", "pipeline-1f1b", "--devices", "8", "--dp", "2",
                       "--model", "fmnist-8");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.out,
                              "\ngrid: 2 replicas x 4 stages; the rank of each stage in each replica\n"
                              "                 stage 0    stage 1    stage 2    stage 3\n"
                              "  replica 0            0          1          2          3\n"
                              "  replica 1            4          5          6          7\n"),
                       "%s", r.out);
    run_free(&r);
    /* plain data parallel: one stage, no grid */
    r = RUN("schedule", "--devices", "4");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_null(strstr(r.out, "\ngrid:"), "%s", r.out);
    run_free(&r);
}

/* `strata --version` and `strata version` print project(VERSION) of
 * CMakeLists.txt (STRATA_VERSION, the same compile definition the binary
 * gets) and exit 0; --help says so. It was "unknown option" (exit 2). */
Test(cli, version_prints_the_project_version)
{
    const char *forms[] = {"--version", "version"};
    for (size_t i = 0; i < 2; i++) {
        struct run r = RUN(forms[i]);
        cr_expect_eq(r.status, 0, "%s: status %d: %s", forms[i], r.status, r.err);
        cr_expect_str_eq(r.out, "strata " STRATA_VERSION "\n", "%s", forms[i]);
        run_free(&r);
    }
    struct run r = RUN("--help");
    cr_expect_not_null(strstr(r.out, "`strata --version`"), "--help does not say --version");
    run_free(&r);
    expect_refused(RUN("--version", "extra"), "--version", "'extra'");
}

/* `strata help TOPIC`: metrics, cluster, or a command (its --help, byte for byte);
 * any other topic is bad input naming it and the topics (it printed the
 * general help, exit 0). Alone, the general help. */
Test(cli, help_topics_are_metrics_and_the_commands_and_no_other)
{
    struct run r = RUN("help");
    cr_expect_eq(r.status, 0);
    cr_expect_not_null(strstr(r.out, "commands:"), "%s", r.out);
    run_free(&r);
    struct run a = RUN("help", "schedule"), b = RUN("schedule", "--help");
    cr_expect_eq(a.status, 0, "stderr: %s", a.err);
    cr_expect_str_eq(a.out, b.out, "strata help schedule is not strata schedule --help");
    run_free(&a);
    run_free(&b);
    expect_refused(RUN("help", "foo"), "'foo'", "metrics, cluster, compare, sim");
    expect_refused(RUN("help", "metrics", "sim"), "'sim'", NULL);
}

/* `strata help cluster`: a profile's missing key pointed at "see
 * sim/cluster.h", a source file an engineer with the binary does not have,
 * and no help topic said what a profile holds. Every key a profile file
 * takes (those a written preset carries, and the optional record `nodes`)
 * is listed, with the all-reduce formulas the network model uses. */
Test(cli, help_cluster_lists_every_key_a_profile_takes)
{
    struct run r = RUN("help", "cluster");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    char text[4096];
    cluster_format(&cluster_presets[1], text, sizeof text);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char key[64];
        if (sscanf(line, " %63[a-z_] =", key) != 1) continue;
        cr_expect_not_null(strstr(r.out, key), "`strata help cluster` lacks %s", key);
    }
    const char *const also[] = {"nodes", "ring", "tree", "hierarchical", "required keys:"};
    for (size_t i = 0; i < sizeof also / sizeof *also; i++)
        cr_expect_not_null(strstr(r.out, also[i]), "`strata help cluster` lacks %s", also[i]);
    run_free(&r);
    char *path = write_temp("flops_per_s = 1e12\n");
    expect_refused(RUN("sim", "--cluster", path), "missing", "`strata help cluster`");
    unlink(path);
}

/* A word after '--' is an argument even when it starts with '--': the
 * message says so, not "options start with --" (which it does). */
Test(cli, an_option_after_dashes_is_refused_as_an_argument)
{
    struct run r = RUN("sim", "--", "--devices", "2");
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.err, "'--devices' after '--'"), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "strata sim takes no arguments"), "%s", r.err);
    cr_expect_null(strstr(r.err, "options start with"), "%s", r.err);
    run_free(&r);
    /* before '--', a stray word is still told how options are written */
    expect_refused(RUN("sim", "stray", "--", "--devices"), "'stray'", "options start with --");
}

/* replay --help said --cluster defaults to h100-nvlink-ib and --strategy
 * to mirrored, where replay takes both from its trace (a real trace's
 * network: cpu-loopback); validate's --cluster, which it requires, was
 * shown with the same default. The help says what each command does. */
Test(cli, help_shows_the_defaults_a_command_decides_itself)
{
    struct run r = RUN("replay", "--help");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_null(strstr(r.out, "(default h100-nvlink-ib)"), "%s", r.out);
    cr_expect_null(strstr(r.out, "(default mirrored)"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "(default: a simulated trace's own; a real trace's, "
                                     "cpu-loopback)"), "%s", r.out);
    run_free(&r);
    r = RUN("validate", "--help");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "(required: a profile of this machine"), "%s", r.out);
    run_free(&r);
    r = RUN("sim", "--help");
    cr_expect_not_null(strstr(r.out, "(default h100-nvlink-ib)"), "sim keeps the table's: %s",
                       r.out);
    run_free(&r);
}

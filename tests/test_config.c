/* core/config.c: the option table, argv, scenario files, --help. Expected
 * values come from the table rows (core/config.c) and the message formats
 * of the option contract (core/config.h, STYLE.md "Errors are values"). */
#include <criterion/criterion.h>

#include "helpers.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/config.h"
#include "../core/lines.h"

#define ALL_GROUPS (~0u)

/* ---- helpers --------------------------------------------------------- */

/* Each test gets a fresh test_tmp_dir. */
TEST_SUITE_WITH_TMP_DIR(config);

/* Parses the NULL-terminated words into c (after config_init). */
static int parse_words(struct config *c, unsigned groups, struct err *e, char **words)
{
    int n = 0;
    while (words[n]) n++;
    config_init(c);
    return config_parse_args(c, n, words, groups, e);
}

#define PARSE(c, e, ...) parse_words((c), ALL_GROUPS, (e), (char *[]){__VA_ARGS__, NULL})
#define PARSE_IN(c, groups, e, ...) parse_words((c), (groups), (e), (char *[]){__VA_ARGS__, NULL})

/* words parse (with every group's options) into c, or the test stops,
 * naming the error. */
static void parse_words_ok(struct config *c, char **words)
{
    struct err e = {0};
    cr_assert_eq(parse_words(c, ALL_GROUPS, &e, words), 0, "%s", e.msg);
}

#define PARSE_OK(c, ...) parse_words_ok((c), (char *[]){__VA_ARGS__, NULL})

/* The parse fails with ERR_INPUT and a message that contains each of the
 * given fragments. */
static void expect_input_error(int rc, const struct err *e, const char *a, const char *b)
{
    cr_expect_eq(rc, ERR_INPUT, "rc %d, want ERR_INPUT (%d); message: %s", rc, ERR_INPUT, e->msg);
    cr_expect_eq(e->code, ERR_INPUT);
    cr_expect_not_null(strstr(e->msg, a), "message does not contain '%s': %s", a, e->msg);
    if (b) cr_expect_not_null(strstr(e->msg, b), "message does not contain '%s': %s", b, e->msg);
}

/* text as the file `name` in test_tmp_dir, loaded into a fresh c with every
 * group: ERR_INPUT whose message holds a (the file's path when NULL) and b
 * (unless NULL). The file's path. */
static const char *expect_file_refused(struct config *c, struct err *e, const char *name,
                                       const char *text, const char *a, const char *b)
{
    const char *path = test_tmp_file(name, text);
    config_init(c);
    expect_input_error(config_load_file(c, path, ALL_GROUPS, e), e, a ? a : path, b);
    return path;
}

/* expect_file_refused, and the message is the file's path then after_path. */
static void expect_file_message(struct config *c, struct err *e, const char *name,
                                const char *text, const char *after_path)
{
    const char *path = expect_file_refused(c, e, name, text, NULL, NULL);
    char want[512];
    snprintf(want, sizeof want, "%s%s", path, after_path);
    cr_expect_str_eq(e->msg, want);
}

static size_t options_set(const struct config *c)
{
    size_t n = 0;
    for (size_t i = 0; i < config_n_options; i++) n += c->is_set[i];
    return n;
}

/* ---- the table and the defaults -------------------------------------- */

Test(config, table_rows_are_complete_and_names_unique)
{
    cr_assert_leq(config_n_options, CONFIG_MAX_OPTIONS, "is_set has an entry per option");
    for (size_t i = 0; i < config_n_options; i++) {
        const struct opt_spec *o = &config_options[i];
        cr_expect(o->name && *o->name && o->name[0] != '-', "row %zu: bad name", i);
        cr_expect(o->help && *o->help, "--%s has no help", o->name);
        cr_expect(o->def, "--%s has no default", o->name);
        cr_expect_neq(o->groups, 0u, "--%s belongs to no group", o->name);
        cr_expect(o->type == OPT_FLAG || o->metavar, "--%s has no metavar", o->name);
        cr_expect(o->offset + o->size <= offsetof(struct config, scenario_path),
                  "--%s lies outside the option fields", o->name);
        cr_expect_eq(config_find(o->name), o, "--%s is not unique", o->name);
        cr_expect_neq(strcmp(o->name, "file"), 0, "'file' is -f, not a row");
        cr_expect_neq(strcmp(o->name, "help"), 0, "'help' is -h, not a row");
    }
}

Test(config, every_default_parses_like_user_input)
{
    struct config c;
    config_init(&c);
    for (size_t i = 0; i < config_n_options; i++) {
        struct err e = {0};
        int rc = config_set(&c, config_options[i].name, config_options[i].def, ALL_GROUPS, &e);
        cr_expect_eq(rc, 0, "default of --%s does not parse: %s", config_options[i].name, e.msg);
    }
    config_release(&c);
}

Test(config, init_puts_every_option_at_its_table_default)
{
    struct config c;
    memset(&c, 0x5a, sizeof c);  /* init must not rely on a zeroed struct */
    config_init(&c);
    for (size_t i = 0; i < config_n_options; i++) {
        char buf[600];
        config_format(&c, &config_options[i], buf, sizeof buf);
        cr_expect_str_eq(buf, config_options[i].def, "--%s", config_options[i].name);
    }
    /* The same defaults read through the fields, as strategies will. */
    cr_expect_str_eq(c.strategy, "mirrored");
    cr_expect_str_eq(c.model, "mlp:784-256-256-256-10");
    cr_expect_eq(c.devices, 4);
    cr_expect_eq(c.servers, 1);
    cr_expect_eq(c.batch, 256);
    cr_expect_eq(c.microbatches, 4);
    cr_expect_eq(c.bucket_mb, 25.0);
    cr_expect_eq(c.staleness, 4);
    cr_expect_eq(c.backup_workers, 0);
    cr_expect_str_eq(c.strategies, "all");
    cr_expect_str_eq(c.json_path, "");
    cr_expect_str_eq(c.scenario_path, "");
    cr_expect_eq(options_set(&c), 0, "defaults count as not given");
    cr_expect_eq(c.n_positional, 0);
    cr_expect_null(c.positional);
    config_release(&c);
}

Test(config, find_and_format)
{
    cr_expect_null(config_find("nope"));
    cr_expect_null(config_find("--devices"), "names have no dashes");
    struct config c;
    PARSE_OK(&c, "--bucket-mb", "0.5", "--batch", "1024");
    char buf[64];
    config_format(&c, config_find("bucket-mb"), buf, sizeof buf);
    cr_expect_str_eq(buf, "0.5");
    config_format(&c, config_find("batch"), buf, sizeof buf);
    cr_expect_str_eq(buf, "1024");
    config_release(&c);
    /* Integral reals print whole, not as %g's 1.04858e+06. */
    PARSE_OK(&c, "--bucket-mb", "1048576");
    config_format(&c, config_find("bucket-mb"), buf, sizeof buf);
    cr_expect_str_eq(buf, "1048576");
    config_release(&c);
}

/* ---- argv ------------------------------------------------------------ */

Test(config, argv_space_and_equals_forms)
{
    struct config c;
    PARSE_OK(&c, "--devices", "8");
    cr_expect_eq(c.devices, 8);
    config_release(&c);
    PARSE_OK(&c, "--devices=16", "--model=mlp:10-5-2", "--bucket-mb=0");
    cr_expect_eq(c.devices, 16);
    cr_expect_str_eq(c.model, "mlp:10-5-2");
    cr_expect_eq(c.bucket_mb, 0.0);
    config_release(&c);
}

/* One-letter aliases take their value as getopt does: the next word or
 * attached (-j2, -fFILE); -j2 was "unknown option". */
Test(config, short_options_take_the_value_attached_or_next)
{
    struct config c;
    struct err e = {0};
    PARSE_OK(&c, "-j2", "-ocluster.profile");
    cr_expect_eq(c.jobs, 2);
    cr_expect_str_eq(c.output, "cluster.profile");
    cr_expect(config_is_set(&c, "jobs"));
    config_release(&c);
    PARSE_OK(&c, "-j", "3");
    cr_expect_eq(c.jobs, 3);
    config_release(&c);
    const char *path = test_tmp_file("short.conf", "devices = 5\n");
    char attached[300];
    snprintf(attached, sizeof attached, "-f%s", path);
    PARSE_OK(&c, attached);
    cr_expect_eq(c.devices, 5);
    cr_expect_str_eq(c.scenario_path, path);
    config_release(&c);
    /* an attached value is checked as a separate one is */
    expect_input_error(PARSE(&c, &e, "-j0"), &e, "--jobs: 0 is not allowed", "1 to 1024");
    /* an alias of an option the command does not take says so */
    expect_input_error(PARSE_IN(&c, OPTG_SCENARIO, &e, "-j2"), &e,
                       "-j (--jobs): not an option of this command", NULL);
}

Test(config, equals_value_may_contain_equals_and_start_with_dash)
{
    struct config c;
    PARSE_OK(&c, "--model=transformer:layers=2,hidden=8,seq=4,vocab=16", "--json=-weird.json");
    cr_expect_str_eq(c.model, "transformer:layers=2,hidden=8,seq=4,vocab=16");
    cr_expect_str_eq(c.json_path, "-weird.json");
    config_release(&c);
}

Test(config, last_occurrence_wins)
{
    struct config c;
    PARSE_OK(&c, "--devices", "8", "--batch", "64", "--devices=2");
    cr_expect_eq(c.devices, 2);
    cr_expect_eq(c.batch, 64);
    config_release(&c);
}

Test(config, is_set_marks_only_given_options)
{
    struct config c;
    PARSE_OK(&c, "--batch", "256", "--json", "r.json");
    cr_expect(config_is_set(&c, "batch"), "given at its default value still counts as given");
    cr_expect(config_is_set(&c, "json"));
    cr_expect_eq(options_set(&c), 2);
    config_release(&c);
}

Test(config, negative_number_is_a_value_not_an_option)
{
    struct config c;
    struct err e = {0};
    expect_input_error(PARSE(&c, &e, "--staleness", "-1"), &e,
                       "--staleness: -1 is not allowed (0 to 1000000)", NULL);
}

Test(config, positionals_are_collected_in_order)
{
    struct config c;
    struct err e = {0};
    char *words[] = {"a.json", "--devices", "8", "b.json", "-", "--", "--batch", "-h", NULL};
    cr_assert_eq(parse_words(&c, ALL_GROUPS, &e, words), 0, "%s", e.msg);
    cr_expect_eq(c.devices, 8);
    cr_expect_eq(c.batch, 256, "--batch after -- is not an option");
    cr_assert_eq(c.n_positional, 5);
    cr_expect_eq(c.positional[0], words[0], "positionals borrow argv");
    cr_expect_str_eq(c.positional[1], "b.json");
    cr_expect_str_eq(c.positional[2], "-");
    cr_expect_str_eq(c.positional[3], "--batch");
    cr_expect_str_eq(c.positional[4], "-h");
    config_release(&c);
    cr_expect_null(c.positional);
    cr_expect_eq(c.n_positional, 0);
    config_release(&c);  /* twice is harmless */
}

Test(config, help_words_return_config_help)
{
    struct config c;
    struct err e = {0};
    cr_expect_eq(PARSE(&c, &e, "-h"), CONFIG_HELP);
    config_release(&c);
    cr_expect_eq(PARSE(&c, &e, "--devices", "8", "--help"), CONFIG_HELP);
    config_release(&c);
    /* --help wins over a mistake elsewhere on the line. */
    cr_expect_eq(PARSE(&c, &e, "--devices", "0", "--nope", "-h"), CONFIG_HELP);
    config_release(&c);
}

Test(config, option_outside_the_groups_is_rejected)
{
    struct config c;
    struct err e = {0};
    int rc = PARSE_IN(&c, OPTG_SCENARIO, &e, "--json", "out.json");
    expect_input_error(rc, &e, "--json: not an option of this command (see --help)", NULL);
    cr_expect_str_eq(e.msg, "--json: not an option of this command (see --help)");
    cr_expect_eq(PARSE_IN(&c, OPTG_SCENARIO | OPTG_OUTPUT, &e, "--json", "out.json"), 0, "%s",
                 e.msg);
    cr_expect_str_eq(c.json_path, "out.json");
    config_release(&c);
    /* config_set applies the same rule. */
    config_init(&c);
    cr_expect_eq(config_set(&c, "strategies", "all", OPTG_SCENARIO, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "--strategies: not an option of this command"), "%s", e.msg);
    config_release(&c);
}

/* ---- argv errors ----------------------------------------------------- */

Test(config, unknown_option_suggests_the_closest_name)
{
    struct config c;
    struct err e = {0};
    expect_input_error(PARSE(&c, &e, "--devcies", "8"), &e, "--devcies", NULL);
    cr_expect_str_eq(e.msg, "--devcies: unknown option (did you mean --devices?)");
    expect_input_error(PARSE(&c, &e, "--bach=8"), &e, "--bach", "did you mean --batch?");
    expect_input_error(PARSE(&c, &e, "-devices", "8"), &e, "-devices", "did you mean --devices?");
}

Test(config, unknown_option_far_from_every_name_points_to_help)
{
    struct config c;
    struct err e = {0};
    expect_input_error(PARSE(&c, &e, "--frobnicate", "8"), &e, "--frobnicate", NULL);
    cr_expect_str_eq(e.msg, "--frobnicate: unknown option (see --help)");
    expect_input_error(PARSE(&c, &e, "-x"), &e, "-x: unknown option (see --help)", NULL);
    /* strata's --version, or a typo of it, after a command: where it goes */
    char *const versions[] = {"--version", "--versio", "--verison"};
    for (size_t i = 0; i < 3; i++)
        expect_input_error(PARSE(&c, &e, versions[i]), &e, versions[i],
                           "`strata --version` prints strata's version");
}

Test(config, suggestion_stays_within_the_command_groups)
{
    struct config c;
    struct err e = {0};
    /* "jsn" is one edit from --json, which this command does not take. */
    expect_input_error(PARSE_IN(&c, OPTG_SCENARIO, &e, "--jsn", "x"), &e, "--jsn", NULL);
    cr_expect_null(strstr(e.msg, "--json"), "%s", e.msg);
}

Test(config, missing_value_says_what_is_allowed)
{
    struct config c;
    struct err e = {0};
    expect_input_error(PARSE(&c, &e, "--devices"), &e, "--devices", NULL);
    cr_expect_str_eq(e.msg, "--devices: needs a value (an integer from 1 to 1048576)");
    /* An option in the value's place is a missing value, not the value. */
    expect_input_error(PARSE(&c, &e, "--json", "--devices", "8"), &e,
                       "--json: needs a value (FILE)", NULL);
    expect_input_error(PARSE(&c, &e, "--bucket-mb"), &e,
                       "--bucket-mb: needs a value (a number from 0 to 1048576)", NULL);
    expect_input_error(PARSE(&c, &e, "-f"), &e, "-f: needs a value", NULL);
}

Test(config, non_numeric_values_are_refused)
{
    struct config c;
    struct err e = {0};
    expect_input_error(PARSE(&c, &e, "--devices", "abc"), &e, "--devices", "'abc'");
    cr_expect_str_eq(e.msg, "--devices: 'abc' is not an integer (1 to 1048576)");
    expect_input_error(PARSE(&c, &e, "--devices", "8x"), &e, "--devices", "'8x' is not an integer");
    expect_input_error(PARSE(&c, &e, "--devices", "2.5"), &e, "--devices", "'2.5' is not an integer");
    expect_input_error(PARSE(&c, &e, "--devices", " 8"), &e, "--devices", "' 8' is not an integer");
    expect_input_error(PARSE(&c, &e, "--devices="), &e, "--devices", "'' is not an integer");
    expect_input_error(PARSE(&c, &e, "--bucket-mb", "x"), &e, "--bucket-mb", NULL);
    cr_expect_str_eq(e.msg, "--bucket-mb: 'x' is not a number (0 to 1048576)");
    expect_input_error(PARSE(&c, &e, "--bucket-mb", "nan"), &e, "--bucket-mb", "'nan' is not a number");
    expect_input_error(PARSE(&c, &e, "--bucket-mb", "inf"), &e, "--bucket-mb", "'inf' is not a number");
    expect_input_error(PARSE(&c, &e, "--bucket-mb", "0x10"), &e, "--bucket-mb", "'0x10' is not a number");
    expect_input_error(PARSE(&c, &e, "--bucket-mb", "25MB"), &e, "--bucket-mb", "'25MB'");
}

Test(config, overflowing_numbers_are_refused)
{
    struct config c;
    struct err e = {0};
    expect_input_error(PARSE(&c, &e, "--devices", "99999999999999999999"), &e, "--devices",
                       "99999999999999999999");
    cr_expect_str_eq(e.msg, "--devices: 99999999999999999999 is not allowed (1 to 1048576)");
    expect_input_error(PARSE(&c, &e, "--devices", "-99999999999999999999"), &e, "--devices",
                       "-99999999999999999999 is not allowed");
    expect_input_error(PARSE(&c, &e, "--bucket-mb", "1e999"), &e, "--bucket-mb",
                       "1e999 is not allowed (0 to 1048576)");
}

/* 1e-400 underflowed to 0 and was taken: --lr 0 trains nothing, --timeout
 * 0 is the default and --mtbf 0 none, so a tiny value turned into another
 * meaning, silently. A small one that is still a number stays. */
Test(config, underflowing_numbers_are_refused)
{
    struct config c;
    struct err e = {0};
    expect_input_error(PARSE(&c, &e, "--lr", "1e-400"), &e, "--lr: 1e-400 is too small to tell "
                       "from 0", "write 0 if 0 is meant");
    expect_input_error(PARSE(&c, &e, "--timeout", "-1e-999"), &e, "--timeout", NULL);
    cr_assert_eq(PARSE(&c, &e, "--lr", "1e-300", "--timeout", "0"), 0, "%s", e.msg);
    cr_expect_eq(c.lr, 1e-300);
    config_release(&c);
}

Test(config, out_of_range_low_and_high)
{
    struct config c;
    struct err e = {0};
    expect_input_error(PARSE(&c, &e, "--devices", "0"), &e, "--devices", NULL);
    cr_expect_str_eq(e.msg, "--devices: 0 is not allowed (1 to 1048576)");
    expect_input_error(PARSE(&c, &e, "--devices", "1048577"), &e, "--devices",
                       "1048577 is not allowed (1 to 1048576)");
    expect_input_error(PARSE(&c, &e, "--bucket-mb", "-0.5"), &e, "--bucket-mb",
                       "-0.5 is not allowed (0 to 1048576)");
    expect_input_error(PARSE(&c, &e, "--bucket-mb", "1048576.5"), &e, "--bucket-mb",
                       "1048576.5 is not allowed");
    /* The bounds themselves are allowed. */
    cr_expect_eq(PARSE(&c, &e, "--devices", "1048576", "--staleness", "0"), 0, "%s", e.msg);
    config_release(&c);
}

Test(config, string_too_long_for_its_field_says_the_limit)
{
    struct config c;
    struct err e = {0};
    char value[300];
    memset(value, 'a', sizeof value - 1);
    value[sizeof value - 1] = '\0';
    char arg[320];
    snprintf(arg, sizeof arg, "--model=%s", value);
    expect_input_error(PARSE(&c, &e, arg), &e, "--model", "at most 255 characters");
    /* 256 characters need 257 bytes: one too many; 255 fit. */
    value[256] = '\0';
    expect_input_error(config_set(&c, "model", value, ALL_GROUPS, &e), &e, "--model",
                       "at most 255 characters");
    value[255] = '\0';
    cr_expect_eq(config_set(&c, "model", value, ALL_GROUPS, &e), 0, "%s", e.msg);
    cr_expect_eq(strlen(c.model), 255u);
    config_release(&c);
}

Test(config, empty_value_after_equals_clears_a_string)
{
    struct config c;
    struct err e = {0};
    cr_expect_eq(PARSE(&c, &e, "--json="), 0, "an empty --json= means no file: %s", e.msg);
    cr_expect_str_eq(c.json_path, "");
    cr_expect(config_is_set(&c, "json"));
    cr_expect_eq(options_set(&c), 1);
    config_release(&c);
}

/* ---- scenario files -------------------------------------------------- */

Test(config, file_with_comments_blanks_quotes_and_spaces)
{
    /* with a UTF-8 byte order mark before it (Windows Notepad), which read
     * as an unknown option "--\xef\xbb\xbf# a lab scenario" */
    const char *path = test_tmp_file("s.conf",
                                  "\xef\xbb\xbf# a lab scenario\n"
                                  "\n"
                                  "   devices   =   8   \n"
                                  "batch=512 # inline comment\n"
                                  "\t\n"
                                  "model = \"mlp:784-128-10\"   # quoted\n"
                                  "json = \"out#1 .json\"\n"
                                  "strategy = ps-ssp\r\n"
                                  "bucket-mb = 0.25");  /* no newline at the end */
    struct config c;
    struct err e = {0};
    config_init(&c);
    cr_assert_eq(config_load_file(&c, path, ALL_GROUPS, &e), 0, "%s", e.msg);
    cr_expect_eq(c.devices, 8);
    cr_expect_eq(c.batch, 512);
    cr_expect_str_eq(c.model, "mlp:784-128-10");
    cr_expect_str_eq(c.json_path, "out#1 .json", "'#' inside quotes is not a comment");
    cr_expect_str_eq(c.strategy, "ps-ssp", "CRLF line ends are trimmed");
    cr_expect_eq(c.bucket_mb, 0.25);
    cr_expect_eq(c.servers, 1, "options not in the file keep their defaults");
    cr_expect_str_eq(c.scenario_path, path);
    cr_expect(config_is_set(&c, "devices"));
    cr_expect(!config_is_set(&c, "servers"));
    config_release(&c);
}

/* -f and --help are the command line's: a file naming them got "--file:
 * unknown option (did you mean --file?)". */
Test(config, file_keys_file_and_help_are_named_as_the_command_lines)
{
    const char *keys[] = {"file", "help"};
    for (size_t i = 0; i < 2; i++) {
        struct config c;
        struct err e = {0};
        char text[32], name[32], want[160];
        snprintf(text, sizeof text, "%s = x\n", keys[i]);
        snprintf(name, sizeof name, "%s.conf", keys[i]);
        snprintf(want, sizeof want,
                 ":1: %s: not a key of a scenario file (-f and --help are the command line's)",
                 keys[i]);
        expect_file_message(&c, &e, name, text, want);
    }
}

/* Nor is either a near miss of a file's key: `title = x` (a lab header's
 * key in a scenario file) was told "did you mean --file?". On the command
 * line --fle still is. */
Test(config, file_keys_are_not_told_of_the_command_lines_own_options)
{
    struct config c;
    struct err e = {0};
    expect_file_message(&c, &e, "title.conf", "title = x\n",
                        ":1: --title: unknown option (see --help)");
    config_init(&c);
    cr_expect_eq(config_set(&c, "fle", "x", OPTG_SCENARIO, &e), ERR_INPUT);
    cr_expect_null(strstr(e.msg, "--file"), "%s", e.msg);
    config_release(&c);
    expect_input_error(PARSE(&c, &e, "--fle", "x"), &e, "--fle", "did you mean --file?");
}

/* A scenario file's keys are the options' names without their dashes: a
 * line `--devices = 2` said '----devices: unknown option (did you mean
 * --devices?)', dashes doubled, the fix not said. */
Test(config, file_key_with_dashes_says_to_drop_them)
{
    struct config c;
    struct err e = {0};
    expect_file_message(&c, &e, "d.conf", "--devices = 2\n",
                        ":1: --devices: a scenario file's keys have no dashes: write "
                        "'devices = 2'");
    expect_file_message(&c, &e, "j.conf", "steps = 3\n-j = 2\n",
                        ":2: -j: a scenario file's keys have no dashes: write 'jobs = 2'");
    expect_file_refused(&c, &e, "u.conf", "--nosuch = 1\n", "--nosuch: unknown option", NULL);
    cr_expect_null(strstr(e.msg, "----"), "dashes doubled: %s", e.msg);
}

/* A key set twice is refused with both lines, as cluster profiles refuse
 * it (the last line won, silently). An option outside the command's groups
 * counts too: the file is one scenario whatever command reads it. */
Test(config, file_repeated_key_is_refused_naming_both_lines)
{
    struct config c;
    struct err e = {0};
    expect_file_message(&c, &e, "r.conf", "devices = 2\n# the same option again\ndevices = 6\n",
                        ":3: devices: set twice (first on line 1); a scenario file sets each "
                        "option once");
    const char *path = test_tmp_file("g.conf", "json = a.json\nbatch = 64\njson = b.json\n");
    config_init(&c);
    expect_input_error(config_load_file(&c, path, OPTG_SCENARIO, &e), &e,
                       ":3: json: set twice (first on line 1)", NULL);
    /* different keys, and the command line over the file, are no repeat */
    path = test_tmp_file("ok.conf", "devices = 2\nbatch = 64\n");
    char *p = (char *)path;
    PARSE_OK(&c, "-f", p, "--devices", "8", "--devices", "4");
    cr_expect_eq(c.devices, 4);
    cr_expect_eq(c.batch, 64);
    config_release(&c);
}

/* A second -f dropped the first file without a word (a file is many
 * options, not one value that a later one overrides); the same file twice
 * says one thing. */
Test(config, a_second_scenario_file_is_refused)
{
    const char *a = test_tmp_file("a.conf", "steps = 3\n");
    char *pa = (char *)a, *pb = (char *)test_tmp_file("b.conf", "batch = 64\n");
    struct config c;
    struct err e = {0};
    expect_input_error(PARSE(&c, &e, "-f", pa, "--file", pb), &e, "-f: two scenario files",
                       "a command reads one");
    config_release(&c);
    char attached[600];
    snprintf(attached, sizeof attached, "-f%s", pb);
    expect_input_error(PARSE(&c, &e, "--file=" "x.conf", attached), &e, "'x.conf', then", NULL);
    config_release(&c);
    PARSE_OK(&c, "-f", pa, "-f", pa);
    cr_expect_eq(c.steps, 3);
    config_release(&c);
}

Test(config, command_line_wins_over_file_whatever_the_order)
{
    const char *path = test_tmp_file("w.conf", "devices = 2\nbatch = 64\n");
    struct config c;
    char *p = (char *)path;
    PARSE_OK(&c, "--devices", "8", "-f", p);
    cr_expect_eq(c.devices, 8, "-f last still loses to --devices");
    cr_expect_eq(c.batch, 64, "the file's other options apply");
    cr_expect_str_eq(c.scenario_path, path);
    config_release(&c);

    PARSE_OK(&c, "-f", p, "--devices", "8");
    cr_expect_eq(c.devices, 8);
    config_release(&c);

    char eq[300];
    snprintf(eq, sizeof eq, "--file=%s", path);
    PARSE_OK(&c, "--devices=8", eq);
    cr_expect_eq(c.devices, 8);
    cr_expect_eq(c.batch, 64);
    config_release(&c);

    PARSE_OK(&c, "--file", p);
    cr_expect_eq(c.devices, 2);
    config_release(&c);
}

Test(config, file_missing)
{
    struct config c;
    struct err e = {0};
    config_init(&c);
    int rc = config_load_file(&c, "/nonexistent/x.conf", ALL_GROUPS, &e);
    expect_input_error(rc, &e, "/nonexistent/x.conf", NULL);
    cr_expect_str_eq(e.msg, "scenario file '/nonexistent/x.conf': cannot open: "
                            "No such file or directory");
    expect_input_error(PARSE(&c, &e, "-f", "missing.conf"), &e, "'missing.conf'", "cannot open");
}

Test(config, file_malformed_line_names_its_number)
{
    struct config c;
    struct err e = {0};
    expect_file_message(&c, &e, "m.conf", "# header\ndevices = 8\nblah\n",
                        ":3: expected 'key = value', got 'blah'");
    config_release(&c);

    expect_file_refused(&c, &e, "k.conf", "= 8\n", ":1: expected 'key = value'", "got '= 8'");
}

Test(config, file_bad_key_or_value_names_line_and_option)
{
    struct config c;
    struct err e = {0};
    expect_file_message(&c, &e, "v.conf", "\nbatch = 8\ndevices = 0\n",
                        ":3: --devices: 0 is not allowed (1 to 1048576)");

    expect_file_refused(&c, &e, "u.conf", "devcies = 8\n",
                        ":1: --devcies: unknown option", "did you mean --devices?");

    /* A key of another command's option is not an error in a file (one
     * file serves several commands); it is ignored. */
    const char *path = test_tmp_file("g.conf", "devices = 8\njson = out.json\n");
    config_init(&c);
    cr_expect_eq(config_load_file(&c, path, OPTG_SCENARIO, &e), 0, "%s", e.msg);
    cr_expect_eq(c.devices, 8);
    cr_expect_str_eq(c.json_path, "");
    config_release(&c);
}

Test(config, file_empty_value_and_open_quote_are_errors)
{
    struct config c;
    struct err e = {0};
    const char *path = expect_file_refused(&c, &e, "e.conf", "devices =   # nothing\n",
                                           ":1: devices: no value", NULL);
    expect_file_refused(&c, &e, "q.conf", "batch = 8\nmodel = \"mlp:1-2\n",
                        ":2: model:", "no closing");
    /* An explicitly quoted empty string is a value: no JSON file. */
    path = test_tmp_file("z.conf", "json = \"\"\n");
    config_init(&c);
    cr_expect_eq(config_load_file(&c, path, ALL_GROUPS, &e), 0, "%s", e.msg);
    cr_expect_str_eq(c.json_path, "");
}

Test(config, file_error_through_argv_keeps_line_number)
{
    const char *path = test_tmp_file("a.conf", "devices = 4\nbatch = lots\n");
    struct config c;
    struct err e = {0};
    expect_input_error(PARSE(&c, &e, "-f", (char *)path), &e, ":2: --batch: 'lots' is not an integer",
                       NULL);
}

Test(config, very_long_lines_do_not_crash)
{
    /* Lines up to the limit (core/lines.h): a value too long for its
     * field, a malformed line, a key. */
    size_t n = 1u << 20, fits = LINES_MAX_BYTES - 8;
    char *text = malloc(n + 64);
    cr_assert_not_null(text);
    struct config c;
    struct err e = {0};

    strcpy(text, "model = ");
    memset(text + 8, 'x', fits);
    strcpy(text + 8 + fits, "\n");
    expect_file_refused(&c, &e, "long1.conf", text, ":1: --model:", "at most 255 characters");

    memset(text, 'y', fits);
    strcpy(text + fits, "\n");
    expect_file_refused(&c, &e, "long2.conf", text, ":1: expected 'key = value'", NULL);

    memset(text, 'k', fits);
    strcpy(text + fits, " = 1\n");
    expect_file_refused(&c, &e, "long3.conf", text, ":1: --kkkk", "unknown option");

    /* issue 15, finding 8: a longer line is an error naming it, not a
     * read that grows without end (strata sim -f /dev/zero read 2.1 GB) */
    strcpy(text, "# fine\nmodel = ");
    memset(text + 15, 'x', n);
    strcpy(text + 15 + n, "\n");
    expect_file_refused(&c, &e, "long4.conf", text, ":2: the line is longer than 4096 bytes",
                        NULL);
    const char *nul_path = test_tmp_path("nul.conf");
    FILE *f = fopen(nul_path, "wb");
    cr_assert_not_null(f);
    fwrite("devices = 4\nsteps = 2\0\n", 1, 23, f);
    fclose(f);
    config_init(&c);
    expect_input_error(config_load_file(&c, nul_path, ALL_GROUPS, &e), &e, ":2: a NUL byte",
                       "not a text file");
    config_init(&c);
    expect_input_error(config_load_file(&c, "/dev/zero", ALL_GROUPS, &e), &e, "/dev/zero:1: ",
                       "NUL byte");

    /* The same through argv. */
    memcpy(text, "--devices=", 10);
    memset(text + 10, '9', n);
    text[10 + n] = '\0';
    expect_input_error(PARSE(&c, &e, text), &e, "--devices: 9999", "is not allowed");
    memset(text, 'z', n);
    memcpy(text, "--", 2);
    text[n] = '\0';
    expect_input_error(PARSE(&c, &e, text), &e, "--zzzz", "unknown option");
    free(text);
}

/* ---- --help ---------------------------------------------------------- */

/* Help of groups as a malloc'd string. */
static char *help_text(unsigned groups)
{
    struct test_capture c;
    config_print_help(test_capture_open(&c), groups);
    return test_capture_close(&c);
}

/* The help line of --name, or NULL. */
static const char *help_line(const char *text, const char *name, char *line, size_t n)
{
    char flag[64], aliased[64];
    snprintf(flag, sizeof flag, "  --%s ", name);
    snprintf(aliased, sizeof aliased, ", --%s ", name);   /* "  -o, --output FILE" */
    const char *at = strstr(text, flag);
    if (!at && (at = strstr(text, aliased)))
        while (at > text && at[-1] != '\n') at--;
    if (!at) return NULL;
    const char *eol = strchr(at, '\n');
    size_t len = eol ? (size_t)(eol - at) : strlen(at);
    snprintf(line, n, "%.*s", (int)len, at);
    return line;
}

Test(config, help_lists_every_option_of_the_groups_with_its_default)
{
    char *text = help_text(ALL_GROUPS);
    for (size_t i = 0; i < config_n_options; i++) {
        const struct opt_spec *o = &config_options[i];
        char line[1024], want[128];
        cr_expect_not_null(help_line(text, o->name, line, sizeof line), "--%s missing:\n%s",
                           o->name, text);
        if (o->def_shown)   /* a default the command computes: --jobs */
            snprintf(want, sizeof want, "(default %s", o->def_shown);
        else if (*o->def)
            snprintf(want, sizeof want, "(default %s", o->def);
        else
            snprintf(want, sizeof want, "(default: none)");
        cr_expect_not_null(strstr(line, want), "--%s: no '%s' in '%s'", o->name, want, line);
        cr_expect_not_null(strstr(line, o->help), "--%s: its help is not on its line", o->name);
    }
    cr_expect_not_null(strstr(text, "  -f, --file FILE "));
    cr_expect_not_null(strstr(text, "  -o, --output FILE "));
    cr_expect_not_null(strstr(text, "  -h, --help "));
    free(text);
}

Test(config, help_line_shows_metavar_default_and_range)
{
    char *text = help_text(OPTG_SCENARIO);
    char line[1024];
    cr_assert_not_null(help_line(text, "devices", line, sizeof line));
    cr_expect_not_null(strstr(line, "--devices N "));
    cr_expect_not_null(strstr(line, "devices that compute (default 4; 1 to 1048576)"), "%s", line);
    cr_assert_not_null(help_line(text, "bucket-mb", line, sizeof line));
    cr_expect_not_null(strstr(line, "(default 25; 0 to 1048576)"), "%s", line);
    free(text);
}

Test(config, help_leaves_out_other_groups_and_aligns)
{
    char *text = help_text(OPTG_SCENARIO);
    cr_expect_null(strstr(text, "--json"), "--json is OPTG_OUTPUT:\n%s", text);
    cr_expect_null(strstr(text, "--strategies"), "--strategies is OPTG_COMPARE");
    /* Every help text starts in the same column. */
    long column = -1;
    for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
        const char *gap = strstr(l + 2, "  ");
        cr_assert_not_null(gap);
        while (*gap == ' ') gap++;
        long col = (long)(gap - l);
        if (column < 0) column = col;
        cr_expect_eq(col, column, "misaligned: %.60s", l);
    }
    free(text);
}

Test(config, file_keys_of_other_commands_are_checked_then_ignored)
{
    /* One lab file serves schedule (strategy), compare (strategies) and sim
     * (steps): a command reading only OPTG_SCENARIO takes devices and leaves
     * the rest as it was. */
    const char *path = test_tmp_file("lab.conf", "strategy = ps-ssp\ndevices = 6\nstrategies = "
                                              "mirrored\nsteps = 50\n");
    struct config c;
    struct err e = {0};
    config_init(&c);
    cr_assert_eq(config_load_file(&c, path, OPTG_SCENARIO, &e), 0, "%s", e.msg);
    cr_expect_eq(c.devices, 6);
    cr_expect_str_eq(c.strategy, "mirrored", "strategy is not this command's: left at default");
    cr_expect_str_eq(c.strategies, "all");
    cr_expect_eq(c.steps, 20);
    config_release(&c);
    /* ...but a bad value is an error even where it would be ignored */
    path = test_tmp_file("bad.conf", "devices = 6\nsteps = 0\n");
    config_init(&c);
    expect_input_error(config_load_file(&c, path, OPTG_SCENARIO, &e), &e, "bad.conf:2", "--steps");
    config_release(&c);
}

Test(config, one_letter_alias_sets_its_option_and_only_in_its_groups)
{
    struct config c;
    config_init(&c);
    struct err e = {0};
    char *words[] = {"-o", "local.profile"};
    cr_assert_eq(config_parse_args(&c, 2, words, ALL_GROUPS, &e), 0, "%s", e.msg);
    cr_assert_str_eq(c.output, "local.profile");
    cr_assert(config_is_set(&c, "output"));
    config_release(&c);
    config_init(&c);
    cr_assert_eq(config_parse_args(&c, 2, words, OPTG_SCENARIO, &e), ERR_INPUT);
    char *bare[] = {"-o"};
    cr_assert_eq(config_parse_args(&c, 1, bare, ALL_GROUPS, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "needs a value"), "%s", e.msg);
    config_release(&c);
}

/* A profile named without a directory in a scenario file lies beside the
 * file, as in a lab's [run] (labs/README.md): `strata sim -f
 * /repo/labs/llama3-failures.conf` ran from the repository root only. A
 * path with a directory, and a preset, are as written. */
Test(config, a_profile_named_alone_in_a_scenario_file_is_read_beside_it)
{
    static const struct {
        const char *value, *want_after_dir;   /* NULL: the value as written */
    } cases[] = {
        {"wan.profile", "/wan.profile"},
        {"labs/wan.profile", NULL},
        {"h100-nvlink-ib", NULL},
        {"wan.conf", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[128], want[512];
        snprintf(text, sizeof text, "cluster = %s\n", cases[i].value);
        const char *path = test_tmp_file("run.conf", text);
        struct config c;
        struct err e = {0};
        config_init(&c);
        cr_assert_eq(config_load_file(&c, path, ALL_GROUPS, &e), 0, "%s", e.msg);
        if (cases[i].want_after_dir)
            snprintf(want, sizeof want, "%s%s", test_tmp_dir, cases[i].want_after_dir);
        else
            snprintf(want, sizeof want, "%s", cases[i].value);
        cr_expect_str_eq(c.cluster, want);
        config_release(&c);
    }
    /* the command line's value is the user's, from where they stand */
    struct config c;
    PARSE_OK(&c, "--cluster", "wan.profile");
    cr_expect_str_eq(c.cluster, "wan.profile");
    config_release(&c);
}

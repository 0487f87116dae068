/* tests for core/report.c: the JSON contract (ARCHITECTURE.md, Reports) and
 * the terminal table. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "helpers.h"
#include "report_fixture.h"

#include "../core/report.h"


static void fill(struct report *r)
{
    test_fill_report(r);
}

/* report_to_json, printed and parsed back: what a script reading the file
 * sees. Caller deletes. */
static cJSON *round_trip(const struct report *r)
{
    cJSON *j = report_to_json(r);
    cr_assert_not_null(j);
    char *text = cJSON_Print(j);
    cr_assert_not_null(text);
    cJSON_Delete(j);
    cJSON *back = cJSON_Parse(text);
    cr_assert_not_null(back, "report_to_json printed invalid JSON:\n%s", text);
    cJSON_free(text);
    return back;
}

static const cJSON *get(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    cr_assert_not_null(v, "missing field \"%s\"", key);
    return v;
}

/* obj.key, an object (cJSON_Object) or an array (cJSON_Array) of n members. */
static const cJSON *get_sized(const cJSON *obj, const char *key, int type, int n)
{
    const cJSON *v = get(obj, key);
    bool is_obj = type == cJSON_Object;
    cr_assert((v->type & 0xff) == type, "\"%s\" is not %s", key, is_obj ? "an object" : "an array");
    cr_assert_eq(cJSON_GetArraySize(v), n, "\"%s\" has %d %s, want %d", key,
                 cJSON_GetArraySize(v), is_obj ? "fields" : "elements", n);
    return v;
}

static const cJSON *get_obj(const cJSON *obj, const char *key, int n_fields)
{
    return get_sized(obj, key, cJSON_Object, n_fields);
}

static const cJSON *get_arr(const cJSON *obj, const char *key, int n)
{
    return get_sized(obj, key, cJSON_Array, n);
}

/* The contract's top-level fields, in ARCHITECTURE.md's order. */
static const char *const top_fields[] = {
    "strata_report", "mode", "strategy", "devices", "config", "step_time_s",
    "throughput_samples_per_s",
    "samples_applied", /* beyond ARCHITECTURE.md's list: what the throughput counts */
    "breakdown", "bubble_fraction", "staleness",
    "memory_bytes_per_device", "loss_curve",
    "accuracy_curve", /* beyond ARCHITECTURE.md's list: test accuracy during training */
    "final", "time_to_accuracy_s", "per_rank",
    "steps_per_worker", /* beyond ARCHITECTURE.md's list: asynchronous work shares (issue 11) */
    "failure", /* beyond ARCHITECTURE.md's list: what a --fail cost (issue 4) */
};
#define N_TOP ((int)(sizeof top_fields / sizeof *top_fields))

Test(report, json_has_exactly_the_contract_fields_in_order)
{
    struct report r;
    fill(&r);
    cJSON *j = round_trip(&r);
    cr_assert_eq(cJSON_GetArraySize(j), N_TOP, "%d top-level fields, want %d",
                 cJSON_GetArraySize(j), N_TOP);
    int i = 0;
    for (const cJSON *c = j->child; c; c = c->next, i++)
        cr_assert_str_eq(c->string, top_fields[i], "field %d", i);
    cJSON_Delete(j);
    report_release(&r);
}

/* The objects test_fill_report's JSON holds, with their field counts
 * (config: r.config == NULL), and every number in it at obj.a or obj.a.b,
 * with the value test_fill_report gave it. */
static const struct { const char *key; int n_fields; } fill_objects[] = {
    {"config", 0},    {"step_time_s", 3},             {"breakdown", 4},
    {"staleness", 3}, {"memory_bytes_per_device", 5}, {"final", 3},
};
static const struct number_at {
    const char *a, *b;
    double want;
} fill_numbers[] = {
    {"strata_report", NULL, REPORT_FORMAT_VERSION},
    {"devices", NULL, 8},
    {"step_time_s", "mean", 0.125},
    {"step_time_s", "p50", 0.0625},
    {"step_time_s", "p99", 0.25},
    {"throughput_samples_per_s", NULL, 4096.5},
    {"samples_applied", NULL, 2560},
    {"breakdown", "compute", 0.5},
    {"breakdown", "comm", 0.375},
    {"breakdown", "idle", 0.125},
    {"breakdown", "down", 0.0625},
    {"bubble_fraction", NULL, 0.2},
    {"staleness", "mean", 1.75},
    {"staleness", "max", 4},
    {"memory_bytes_per_device", "params", 1000},
    {"memory_bytes_per_device", "grads", 2000},
    {"memory_bytes_per_device", "optimizer", 3000},
    {"memory_bytes_per_device", "activations", 4000},
    {"final", "loss", 0.625},
    {"final", "test_accuracy", 0.875},
    {"final", "updates", 100},
    {"time_to_accuracy_s", NULL, 42.5},
};

/* A resumed real run's final.updates_resumed (docs/metrics.md): written
 * only then, so every other report's JSON is as before, and read back. */
Test(report, final_updates_resumed_is_written_only_for_a_resumed_run_and_reads_back)
{
    struct report r, back;
    struct config c_back;
    fill(&r);
    cJSON *j = round_trip(&r);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(get(j, "final"), "updates_resumed"));
    cJSON_Delete(j);
    r.updates_resumed = 60;   /* of fill's 100 */
    r.has_updates_resumed = true;
    j = round_trip(&r);
    cr_assert_eq(num_at(j, "final", "updates_resumed"), 60);
    struct err e = {0};
    cr_assert_eq(test_read_back(j, &back, &c_back, &e), 0, "%s", e.msg);
    cr_expect(back.has_updates_resumed);
    cr_expect_eq(back.updates_resumed, 60);
    cr_expect_eq(back.updates, 100);
    cJSON_Delete(j);
    report_release(&back);
    report_release(&r);
    config_release(&c_back);
}

Test(report, json_round_trip_keeps_every_value)
{
    struct report r;
    fill(&r);
    cJSON *j = round_trip(&r);

    cr_assert_str_eq(str_at(j, "mode"), "sim");
    cr_assert_str_eq(str_at(j, "strategy"), "pipeline-1f1b");
    for (size_t i = 0; i < sizeof fill_objects / sizeof *fill_objects; i++)
        get_obj(j, fill_objects[i].key, fill_objects[i].n_fields);
    for (size_t i = 0; i < sizeof fill_numbers / sizeof *fill_numbers; i++) {
        const struct number_at *w = &fill_numbers[i];
        cr_assert_eq(num_at(j, w->a, w->b), w->want, "%s%s%s", w->a, w->b ? "." : "",
                     w->b ? w->b : "");
    }
    /* above 2^32, to show int64 survives */
    const cJSON *mem = get(j, "memory_bytes_per_device");
    cr_assert_eq((long long)num_at(mem, "peak", NULL), 5000000000123LL);

    const cJSON *h = get_arr(get(j, "staleness"), "histogram", 3);
    for (int i = 0; i < 3; i++) {
        const cJSON *x = cJSON_GetArrayItem(h, i);
        cr_assert(cJSON_IsNumber(x));
        cr_assert_eq(x->valuedouble, 10.0 * (i + 1), "histogram[%d]", i);
    }

    const cJSON *lc = get_arr(j, "loss_curve", 2);
    const double want_lc[2][3] = {{0, 0.0, 2.5}, {100, 12.5, 0.75}};
    for (int i = 0; i < 2; i++) {
        const cJSON *pt = cJSON_GetArrayItem(lc, i);
        cr_assert(cJSON_IsArray(pt));
        cr_assert_eq(cJSON_GetArraySize(pt), 3, "loss_curve[%d] is [step, time_s, loss]", i);
        for (int k = 0; k < 3; k++) {
            const cJSON *x = cJSON_GetArrayItem(pt, k);
            cr_assert(cJSON_IsNumber(x));
            cr_assert_eq(x->valuedouble, want_lc[i][k], "loss_curve[%d][%d]", i, k);
        }
    }

    const cJSON *pr = get_arr(j, "per_rank", 2);
    const char *const pr_keys[5] = {"rank", "compute_s", "comm_s", "idle_s", "down_s"};
    const double want_pr[2][5] = {{0, 1.5, 0.5, 0.25, 0}, {1, 1.25, 0.75, 0.125, 0.5}};
    const cJSON *spw = get_arr(j, "steps_per_worker", 2);
    cr_assert_eq(cJSON_GetArrayItem(spw, 0)->valuedouble, 7);
    cr_assert_eq(cJSON_GetArrayItem(spw, 1)->valuedouble, 3);
    for (int i = 0; i < 2; i++) {
        const cJSON *o = cJSON_GetArrayItem(pr, i);
        cr_assert(cJSON_IsObject(o));
        cr_assert_eq(cJSON_GetArraySize(o), 5);
        for (int k = 0; k < 5; k++)
            cr_assert_eq(num_at(o, pr_keys[k], NULL), want_pr[i][k], "per_rank[%d].%s", i,
                         pr_keys[k]);
    }

    cJSON_Delete(j);
    report_release(&r);
}

Test(report, final_and_time_to_accuracy_are_null_when_absent)
{
    struct report r;
    fill(&r);
    r.has_final = false;
    r.has_time_to_accuracy = false;
    cJSON *j = round_trip(&r);
    cr_assert(cJSON_IsNull(get(j, "final")));
    cr_assert(cJSON_IsNull(get(j, "time_to_accuracy_s")));
    cr_assert_eq(cJSON_GetArraySize(j), N_TOP, "null fields are present, not dropped");
    cJSON_Delete(j);
    report_release(&r);
}

Test(report, empty_arrays_are_written_as_empty_arrays)
{
    struct report r;
    report_init(&r);
    r.mode = "real";
    cJSON *j = round_trip(&r);
    get_arr(get(j, "staleness"), "histogram", 0);
    get_arr(j, "loss_curve", 0);
    get_arr(j, "per_rank", 0);
    cr_assert_str_eq(str_at(j, "strategy"), "");
    cr_assert_str_eq(str_at(j, "mode"), "real");
    cJSON_Delete(j);
}

Test(report, non_finite_numbers_become_null_and_the_document_parses)
{
    struct report r;
    fill(&r);
    r.step_time_s.mean = NAN;
    r.throughput_samples_per_s = INFINITY;
    r.bubble_fraction = -INFINITY;
    r.loss_curve[1].loss = NAN;
    r.final.loss = NAN;
    r.time_to_accuracy_s = NAN;
    r.per_rank[0].idle_s = INFINITY;

    /* The tree itself holds null, not a NaN number that only this cJSON's
     * printer happens to spell "null". */
    cJSON *raw = report_to_json(&r);
    cr_assert(cJSON_IsNull(get(get(raw, "step_time_s"), "mean")));
    cr_assert(cJSON_IsNull(get(raw, "throughput_samples_per_s")));
    cJSON_Delete(raw);

    cJSON *j = round_trip(&r);  /* asserts the printed text parses */
    cr_assert(cJSON_IsNull(get(get(j, "step_time_s"), "mean")));
    cr_assert_eq(num_at(get(j, "step_time_s"), "p50", NULL), 0.0625, "neighbours untouched");
    cr_assert(cJSON_IsNull(get(j, "throughput_samples_per_s")));
    cr_assert(cJSON_IsNull(get(j, "bubble_fraction")));
    cr_assert(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetArrayItem(get(j, "loss_curve"), 1), 2)));
    cr_assert(cJSON_IsNull(get(get(j, "final"), "loss")));
    cr_assert(cJSON_IsNull(get(j, "time_to_accuracy_s")));
    cr_assert(cJSON_IsNull(get(cJSON_GetArrayItem(get(j, "per_rank"), 0), "idle_s")));
    cJSON_Delete(j);
    report_release(&r);
}

Test(report, config_options_become_typed_values)
{
    /* The real option table (core/config.c): OPT_INT and OPT_REAL options
     * are JSON numbers, OPT_STRING text, and only options of config_groups
     * appear, in table order. */
    struct config c;
    config_init(&c);
    struct err e = {0};
    unsigned all = OPTG_SCENARIO | OPTG_STRATEGY | OPTG_COMPARE | OPTG_OUTPUT;
    cr_assert_eq(config_set(&c, "strategy", "ps-ssp", all, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(&c, "devices", "16", all, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(&c, "bucket-mb", "25.5", all, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(&c, "model", "mlp:784-64-10", all, &e), 0, "%s", e.msg);
    cr_assert_eq(config_set(&c, "json", "out/r.json", all, &e), 0, "%s", e.msg);

    struct report r;
    fill(&r);
    r.config = &c;
    r.config_groups = OPTG_SCENARIO | OPTG_STRATEGY;
    cJSON *j = round_trip(&r);
    const cJSON *cfg = get(j, "config");
    cr_assert(cJSON_IsObject(cfg));

    /* One field per option of those groups, in the table's order. */
    const cJSON *item = cfg->child;
    int n_want = 0;
    for (size_t i = 0; i < config_n_options; i++) {
        const struct opt_spec *o = &config_options[i];
        if (!(o->groups & r.config_groups)) {
            cr_assert_null(cJSON_GetObjectItemCaseSensitive(cfg, o->name),
                           "\"%s\" is outside config_groups", o->name);
            continue;
        }
        n_want++;
        cr_assert_not_null(item, "config stops before \"%s\"", o->name);
        cr_assert_str_eq(item->string, o->name);
        switch (o->type) {
        case OPT_INT:
        case OPT_REAL: cr_assert(cJSON_IsNumber(item), "\"%s\" is a number", o->name); break;
        case OPT_FLAG: cr_assert(cJSON_IsBool(item), "\"%s\" is a boolean", o->name); break;
        default: cr_assert(cJSON_IsString(item), "\"%s\" is a string", o->name); break;
        }
        item = item->next;
    }
    cr_assert_null(item, "config has fields beyond the table");
    cr_assert_eq(cJSON_GetArraySize(cfg), n_want);
    cr_assert_str_eq(str_at(cfg, "strategy"), "ps-ssp");
    cr_assert_str_eq(str_at(cfg, "model"), "mlp:784-64-10");
    cr_assert_eq(num_at(cfg, "devices", NULL), 16);
    cr_assert_eq(num_at(cfg, "bucket-mb", NULL), 25.5);
    cr_assert_eq(num_at(cfg, "servers", NULL), 1, "defaults are written too");
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(cfg, "json"));
    cJSON_Delete(j);

    r.config_groups = OPTG_OUTPUT;
    int n_output = 0;
    for (size_t i = 0; i < config_n_options; i++) n_output += !!(config_options[i].groups & OPTG_OUTPUT);
    j = round_trip(&r);
    cfg = get_obj(j, "config", n_output);
    cr_assert_str_eq(str_at(cfg, "json"), "out/r.json");
    cJSON_Delete(j);

    r.config_groups = 0;  /* a config but no groups: nothing to say */
    j = round_trip(&r);
    get_obj(j, "config", 0);
    cJSON_Delete(j);

    report_release(&r);
    config_release(&c);
}

Test(report, release_frees_and_is_null_safe)
{
    struct report r;
    fill(&r);
    report_release(&r);
    cr_assert_null(r.loss_curve);
    cr_assert_null(r.per_rank);
    cr_assert_null(r.staleness.histogram);
    cr_assert_eq(r.n_loss_curve + r.n_per_rank + r.staleness.n_histogram, 0);
    report_release(&r);  /* twice is harmless */
    report_release(NULL);
}

/* ps-async on 2 workers, worker 1 slow: items k of job step k div 2 end at
 * w0: 1 (item 0), 2 (2), 3 (3), 5 (4); w1: 4 (item 1), 8 (5). Each step's
 * loss is the mean of its items'; its time was its last item's end, 4, 3,
 * 8: the curve went back in time (`strata sim --strategy ps-async
 * --straggler slow:1=4 --numerics` drew loss against time zigzagging).
 * A step ends with the (s+1)N-th worker step to end (docs/metrics.md):
 * 2, 4, 8. A synchronous run, each step's ends before the next's, keeps
 * its last end. */
Test(report, loss_curve_time_is_when_the_jobs_step_ended_and_never_goes_back)
{
    const struct step_loss async[] = {
        {0, 1, 2.0, 1}, {0, 4, 4.0, 1}, {1, 2, 1.0, 1}, {1, 3, 3.0, 1}, {2, 5, 1.0, 1},
        {2, 8, 2.0, 1}};
    struct report r;
    report_init(&r);
    struct err e = {0};
    cr_assert_eq(report_set_loss_curve(&r, async, 6, 3, &e), 0, "%s", e.msg);
    cr_assert_eq(r.n_loss_curve, 3);
    const double want_s[] = {2, 4, 8}, want_loss[] = {3, 2, 1.5};
    for (int s = 0; s < 3; s++) {
        cr_expect_eq(r.loss_curve[s].step, s);
        cr_expect_float_eq(r.loss_curve[s].time_s, want_s[s], 1e-12, "step %d at %g s", s,
                           r.loss_curve[s].time_s);
        cr_expect_float_eq(r.loss_curve[s].loss, want_loss[s], 1e-12);
    }
    /* synchronous, 2 workers, given in any order */
    const struct step_loss sync[] = {{1, 2.5, 1.0, 2}, {0, 1.5, 2.0, 2}, {0, 1.0, 2.0, 2},
                                     {1, 2.0, 1.0, 2}};
    cr_assert_eq(report_set_loss_curve(&r, sync, 4, 2, &e), 0, "%s", e.msg);
    cr_expect_float_eq(r.loss_curve[0].time_s, 1.5, 1e-12);
    cr_expect_float_eq(r.loss_curve[1].time_s, 2.5, 1e-12);
    report_release(&r);
}

/* --- files ---------------------------------------------------------------- */

TEST_SUITE_WITH_TMP_DIR(report_files);

Test(report_files, write_json_gives_a_parsable_file_ending_in_newline)
{
    struct report r;
    fill(&r);
    const char *path = test_tmp_path("r.json");
    struct err e = {0};
    cr_assert_eq(report_write_json(&r, path, &e), 0, "%s", e.msg);

    char *text = test_slurp(path);
    size_t n = strlen(text);
    cr_assert(n > 0 && text[n - 1] == '\n', "the file ends in a newline");
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j, "invalid JSON:\n%s", text);
    cr_assert_eq(num_at(j, "strata_report", NULL), 1);
    cr_assert_str_eq(str_at(j, "strategy"), "pipeline-1f1b");
    cJSON_Delete(j);
    free(text);
    report_release(&r);
}

Test(report_files, compare_json_holds_every_report_in_order)
{
    struct report a, b;
    fill(&a);
    fill(&b);
    snprintf(b.strategy, sizeof b.strategy, "mirrored");
    b.devices = 4;
    b.has_final = false;
    const struct report *rs[] = {&a, &b};
    const char *path = test_tmp_path("r.json");
    struct err e = {0};
    cr_assert_eq(report_write_compare_json(rs, 2, NULL, path, &e), 0, "%s", e.msg);

    cJSON *j = read_json(path);
    cr_assert_eq(cJSON_GetArraySize(j), 2, "{strata_compare, reports}");
    cr_assert_eq(num_at(j, "strata_compare", NULL), 1);
    const cJSON *reports = get_arr(j, "reports", 2);
    const cJSON *ja = cJSON_GetArrayItem(reports, 0), *jb = cJSON_GetArrayItem(reports, 1);
    cr_assert_str_eq(str_at(ja, "strategy"), "pipeline-1f1b");
    cr_assert_str_eq(str_at(jb, "strategy"), "mirrored");
    cr_assert_eq(num_at(jb, "devices", NULL), 4);
    cr_assert(cJSON_IsObject(get(ja, "final")));
    cr_assert(cJSON_IsNull(get(jb, "final")));
    cr_assert_eq(cJSON_GetArraySize(ja), N_TOP, "each report is a whole report");
    cJSON_Delete(j);
    report_release(&a);
    report_release(&b);
}

/* Given speedups, each report of a compare document carries its own, just
 * after the throughput it is a ratio of; null where it is not known. */
Test(report_files, compare_json_carries_each_speedup)
{
    struct report a, b;
    fill(&a);
    fill(&b);
    const struct report *rs[] = {&a, &b};
    const double speedup[] = {2.5, NAN};
    const char *path = test_tmp_path("s.json");
    struct err e = {0};
    cr_assert_eq(report_write_compare_json(rs, 2, speedup, path, &e), 0, "%s", e.msg);
    cJSON *j = read_json(path);
    const cJSON *reports = get_arr(j, "reports", 2);
    const cJSON *ja = cJSON_GetArrayItem(reports, 0), *jb = cJSON_GetArrayItem(reports, 1);
    cr_expect_eq(num_at(ja, "speedup", NULL), 2.5);
    cr_expect(cJSON_IsNull(get(jb, "speedup")), "an unknown speedup is null");
    const cJSON *after = get(ja, "throughput_samples_per_s")->next;
    cr_expect(after && !strcmp(after->string, "speedup"), "the speedup follows the throughput");
    cr_expect_eq(cJSON_GetArraySize(ja), N_TOP + 1, "a whole report, and its speedup");
    cJSON_Delete(j);
    report_release(&a);
    report_release(&b);
}

Test(report_files, write_errors_pass_through_with_the_path)
{
    struct report r;
    fill(&r);
    const char *path = test_tmp_path("missing/r.json");
    struct err e = {0};
    cr_assert_eq(report_write_json(&r, path, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "does not exist"), "%s", e.msg);
    cr_assert_eq(report_write_compare_json(NULL, 0, NULL, path, &e), ERR_INPUT);
    report_release(&r);
}

/* Every string of want (NULL-terminated) is somewhere in t. */
static void expect_in(const char *t, const char *const *want)
{
    for (const char *const *w = want; *w; w++)
        cr_assert_not_null(strstr(t, *w), "no \"%s\" in:\n%s", *w, t);
}

#define EXPECT_IN(t, ...) expect_in((t), (const char *const[]){__VA_ARGS__, NULL})

/* --- table ---------------------------------------------------------------- */

/* The table as a string (caller frees). */
static char *table(const struct report *const *rs, int n, const double *speedup)
{
    struct test_capture c;
    report_print_table(test_capture_open(&c), rs, n, speedup);
    return test_capture_close(&c);
}

/* Terminal columns of a UTF-8 line (up to '\n'). */
static int line_width(const char *s)
{
    int w = 0;
    for (; *s && *s != '\n'; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) w++;
    return w;
}

/* Every line (header, rule, rows) has the same width: the columns line up. */
static void assert_aligned(const char *t, int n_lines)
{
    int lines = 0, w0 = line_width(t);
    for (const char *p = t; *p; p = strchr(p, '\n') + 1) {
        cr_assert_eq(line_width(p), w0, "line %d is %d wide, the header %d:\n%s", lines,
                     line_width(p), w0, t);
        lines++;
    }
    cr_assert_eq(lines, n_lines, "%d lines:\n%s", lines, t);
}

/* t, the table of a and b, lines up (header, rule, a row each); frees t
 * and releases a and b. */
/* The table of rs[0..n) has no `word` anywhere (why: what none of them had). */
static void expect_table_lacks(const struct report *const *rs, int n, const char *word,
                               const char *why)
{
    char *t = table(rs, n, NULL);
    cr_assert_null(strstr(t, word), "%s:\n%s", why, t);
    free(t);
}

static void expect_aligned_then_release(char *t, struct report *a, struct report *b)
{
    assert_aligned(t, 4);
    free(t);
    report_release(a);
    report_release(b);
}

Test(report, table_has_header_rule_and_a_row_per_report)
{
    struct report a, b;
    fill(&a);
    fill(&b);
    a.has_final = b.has_final = false;
    snprintf(b.strategy, sizeof b.strategy, "ps-ssp");
    const struct report *rs[] = {&a, &b};
    char *t = table(rs, 2, NULL);

    cr_assert(strncmp(t, "strategy", 8) == 0, "header first:\n%s", t);
    const char *titles[] = {"devices", "step time", "samples/s", "speedup", "compute",
                            "comm", "idle", "bubble", "staleness", "peak mem"};
    for (size_t i = 0; i < sizeof titles / sizeof *titles; i++)
        cr_assert_not_null(strstr(t, titles[i]), "no \"%s\" column:\n%s", titles[i], t);
    cr_assert_not_null(strstr(strchr(t, '\n') + 1, "---"), "a rule under the header");
    cr_assert_not_null(strstr(t, "\npipeline-1f1b "), "row for a:\n%s", t);
    cr_assert_not_null(strstr(t, "\nps-ssp "), "row for b:\n%s", t);
    cr_assert_null(strstr(t, "loss"), "no final columns when no report has one:\n%s", t);
    cr_assert_null(strstr(t, "accuracy"));
    /* fill(): 0.125 s mean, 50/37.5/12.5 %, 20 % bubble, staleness 1.75/4 */
    EXPECT_IN(t, "125.000 ms", "4096.5", "50.0%", "37.5%", "20.0%", "1.75/4");
    expect_aligned_then_release(t, &a, &b);
}

Test(report, table_speedup_is_a_dash_without_speedups)
{
    struct report a;
    fill(&a);
    const struct report *rs[] = {&a};
    char *t = table(rs, 1, NULL);
    /* the speedup cell is the 5th, right after "samples/s"'s value */
    cr_assert_not_null(strstr(t, "4096.5        -  "), "%s", t);
    free(t);

    double speedup[] = {3.456};
    t = table(rs, 1, speedup);
    cr_assert_not_null(strstr(t, "3.46\xc3\x97"), "x.xx× when given:\n%s", t);
    assert_aligned(t, 3);
    free(t);
    report_release(&a);
}

Test(report, table_final_columns_appear_when_any_report_has_final)
{
    struct report a, b;
    fill(&a);
    fill(&b);
    b.has_final = false;
    a.has_time_to_accuracy = b.has_time_to_accuracy = false;   /* no target: no such column */
    const struct report *rs[] = {&a, &b};
    char *t = table(rs, 2, NULL);
    cr_assert_null(strstr(t, "time to acc"), "%s", t);
    EXPECT_IN(t, "loss", "accuracy");
    cr_assert_not_null(strstr(t, "0.6250"), "a's final loss:\n%s", t);
    cr_assert_not_null(strstr(t, "87.5%"), "a's accuracy:\n%s", t);
    /* b's row ends in the cells "-" (loss) and "-" (accuracy) */
    const char *row_b = strstr(strstr(t, "\npipeline") + 1, "\npipeline");
    cr_assert_not_null(row_b);
    char line[256];
    snprintf(line, sizeof line, "%.*s", (int)(strchr(row_b + 1, '\n') - row_b - 1), row_b + 1);
    const char *last[2] = {NULL, NULL};
    for (char *tok = strtok(line, " "); tok; tok = strtok(NULL, " ")) {
        last[0] = last[1];
        last[1] = tok;
    }
    cr_assert(last[0] && !strcmp(last[0], "-") && !strcmp(last[1], "-"), "%s", t);
    expect_aligned_then_release(t, &a, &b);
}

/* One row's step-time and peak-memory cells for given values. */
static void expect_units(double step_s, int64_t peak, const char *want_step,
                         const char *want_mem)
{
    struct report r;
    report_init(&r);
    r.mode = "sim";
    snprintf(r.strategy, sizeof r.strategy, "s");
    r.step_time_s.mean = step_s;
    r.memory_bytes_per_device.peak = peak;
    const struct report *rs[] = {&r};
    char *t = table(rs, 1, NULL);
    cr_assert_not_null(strstr(t, want_step), "want \"%s\":\n%s", want_step, t);
    cr_assert_not_null(strstr(t, want_mem), "want \"%s\":\n%s", want_mem, t);
    free(t);
}

Test(report, table_units_follow_magnitude)
{
    expect_units(1.5, 512, "1.500 s", "512 B");
    expect_units(0.0025, 1536, "2.500 ms", "1.5 KiB");
    expect_units(2e-5, 3LL << 20, "20.000 us", "3.0 MiB");
    expect_units(0.9999999, 5LL << 30, "1.000 s", "5.0 GiB");  /* not "1000.000 ms" */
    expect_units(12.0, (1LL << 40) + (1LL << 39), "12.000 s", "1.5 TiB");
    expect_units(NAN, 1023, " - ", "1023 B");
    expect_units(0.001, (1LL << 20) - 1, "1.000 ms", "1.0 MiB");  /* not "1024.0 KiB" */
}

Test(report, table_is_deterministic)
{
    struct report a;
    fill(&a);
    const struct report *rs[] = {&a};
    double speedup[] = {1.0};
    char *t1 = table(rs, 1, speedup), *t2 = table(rs, 1, speedup);
    cr_assert_str_eq(t1, t2);
    free(t1);
    free(t2);
    char *t0 = table(rs, 0, NULL);
    assert_aligned(t0, 2);  /* header and rule only */
    free(t0);
    report_release(&a);
}

Test(report, csv_has_a_header_and_one_row_per_report_that_reads_back,
     .init = report_files_make_tmp_dir, .fini = test_tmp_dir_remove)
{
    struct report a, b;
    fill(&a);
    fill(&b);
    snprintf(b.strategy, sizeof b.strategy, "ps-async");
    b.has_final = false;
    const struct report *rs[] = {&a, &b};
    double speedup[] = {3.25, 0.5};
    const char *path = test_tmp_path("r.csv");
    struct err e = {0};
    cr_assert_eq(report_write_csv(rs, 2, speedup, path, &e), 0, "%s", e.msg);
    char *text = test_slurp(path);
    char *save = NULL;
    char *header = strtok_r(text, "\n", &save);
    char *row1 = strtok_r(NULL, "\n", &save);
    char *row2 = strtok_r(NULL, "\n", &save);
    cr_assert(header && row1 && row2, "want a header and two rows:\n%s", text);
    cr_assert_null(strtok_r(NULL, "\n", &save), "more than two rows");
    cr_expect(strncmp(header, "strategy,devices,step_time_mean_s,", 34) == 0, "%s", header);
    int fields = 1;
    for (const char *c = header; *c; c++) fields += *c == ',';
    cr_expect_eq(fields, 17, "16 and the updates of a's final model: %s", header);
    cr_expect(strstr(header, ",test_accuracy,updates") != NULL, "%s", header);
    /* every row has the header's fields; the numbers read back exactly */
    for (char *row = row1; row; row = row == row1 ? row2 : NULL) {
        int n = 1;
        for (const char *c = row; *c; c++) n += *c == ',';
        cr_expect_eq(n, fields, "row '%s' has %d fields", row, n);
    }
    cr_expect(strncmp(row1, "pipeline-1f1b,8,", 16) == 0, "%s", row1);
    cr_expect(strstr(row1, ",100") == row1 + strlen(row1) - 4, "a's updates last: %s", row1);
    double mean = strtod(strchr(strchr(row1, ',') + 1, ',') + 1, NULL);
    cr_expect_eq(mean, a.step_time_s.mean, "step time %.17g read back as %.17g",
                 a.step_time_s.mean, mean);
    cr_expect_not_null(strstr(row2, ",0.5,"), "speedup of the second row: %s", row2);
    cr_expect(row2[strlen(row2) - 1] == ',', "no final loss: the last fields are empty: %s", row2);
    free(text);
    report_release(&a);
    report_release(&b);
}

Test(report, table_shows_time_to_accuracy_reached_or_not)
{
    struct report a, b;
    fill(&a);
    fill(&b);
    a.has_time_to_accuracy = true;
    a.time_to_accuracy_s = 1.5;
    b.has_time_to_accuracy = false;
    struct config target;
    config_init(&target);
    target.target_accuracy = 0.8;
    b.config = &target;   /* asked for, never reached */
    const struct report *rs[] = {&a, &b};
    char *t = table(rs, 2, NULL);
    EXPECT_IN(t, "time to acc", "1.500 s", "not reached");
    expect_aligned_then_release(t, &a, &b);
}

/* A run that failed: the table gains its failures, time lost and goodput;
 * a run that did not shows 0 and dashes; without any failure, no such
 * columns (the reference outputs of runs without --fail stay as they are). */
Test(report, table_failure_columns_appear_when_any_report_failed)
{
    struct report a, b;
    fill(&a);
    fill(&b);
    a.has_final = b.has_final = false;
    const struct report *rs[] = {&a, &b};
    expect_table_lacks(rs, 2, "goodput", "no run failed");
    a.failure.happened = true;
    a.failure.n_failures = 3;
    a.failure.lost_s = 2.5;
    a.failure.goodput = 0.9375;
    char *t = table(rs, 2, NULL);
    EXPECT_IN(t, "failures", "time lost", "goodput", "2.500 s", "93.8%");
    cr_assert_not_null(strstr(t, "3    2.500 s    93.8%\n"), "a's cells:\n%s", t);
    cr_assert_not_null(strstr(t, "0          -        -\n"), "b's cells:\n%s", t);
    expect_aligned_then_release(t, &a, &b);
}

/* The down share (dead workers' time: --fail under continue) is a column
 * when some run has it, so that compute + comm + down + idle, as the row
 * shows them, make 100%; without it the table is as before. */
Test(report, table_down_column_appears_when_any_worker_was_down)
{
    struct report a, b;
    fill(&a);
    fill(&b);
    a.has_final = b.has_final = false;
    a.breakdown.down = b.breakdown.down = 0;
    const struct report *rs[] = {&a, &b};
    expect_table_lacks(rs, 2, "down", "no worker was down");
    a.breakdown.compute = 0.5;
    a.breakdown.comm = 0.25;
    a.breakdown.down = 0.1875;
    a.breakdown.idle = 0.0625;
    char *t = table(rs, 2, NULL);
    cr_assert_not_null(strstr(t, "compute   comm   down   idle"), "%s", t);
    cr_assert_not_null(strstr(t, "50.0%  25.0%  18.8%   6.2%"), "a's shares:\n%s", t);
    cr_assert_not_null(strstr(t, "37.5%   0.0%  12.5%"), "b's shares:\n%s", t);
    expect_aligned_then_release(t, &a, &b);
}

Test(report, csv_has_the_failure_fields_when_any_report_failed,
     .init = report_files_make_tmp_dir, .fini = test_tmp_dir_remove)
{
    struct report a, b;
    fill(&a);
    fill(&b);
    a.failure.happened = true;
    a.failure.policy = "restart";
    a.failure.n_failures = 2;
    a.failure.lost_s = 1.5;
    a.failure.detect_s = 0.25;
    a.failure.relaunch_s = 0.5;
    a.failure.redone_s = 0.75;
    a.failure.steps_redone = 6;
    a.failure.checkpoint_s = 0.125;
    a.failure.goodput = 0.875;
    const struct report *rs[] = {&a, &b};
    const char *path = test_tmp_path("f.csv");
    struct err e = {0};
    cr_assert_eq(report_write_csv(rs, 2, NULL, path, &e), 0, "%s", e.msg);
    char *text = test_slurp(path);
    cr_expect_not_null(strstr(text, ",test_accuracy,failure_policy,n_failures,lost_s,detect_s,"
                                    "relaunch_s,redone_s,steps_redone,checkpoint_s,goodput,down,"
                                    "updates\n"),
                       "%s", text);
    cr_expect_not_null(strstr(text, ",restart,2,1.5,0.25,0.5,0.75,6,0.125,0.875,0.0625,100\n"),
                       "%s", text);
    cr_expect_not_null(strstr(text, ",,,,,,,,,,,100\n"), "b did not fail: empty fields\n%s",
                       text);
    /* every line has the header's 27 fields */
    for (char *line = text; *line; line = strchr(line, '\n') + 1) {
        int n = 1;
        for (const char *c = line; *c != '\n'; c++) n += *c == ',';
        cr_expect_eq(n, 27, "%d fields in: %.80s", n, line);
    }
    free(text);
    report_release(&a);
    report_release(&b);
}


/* tests for core/report_read.c: a report read back is the report written,
 * field by field and byte for byte once written again; every document kind
 * of ARCHITECTURE.md's Reports section reads; and every kind of malformed
 * input is ERR_INPUT naming the file and the field, without a crash, a leak
 * (the sanitizer build checks) or a half-filled result. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "helpers.h"
#include "report_fixture.h"

#include "../core/report.h"

/* --- fixtures ---------------------------------------------------------------- */

static void set(struct config *c, const char *name, const char *value)
{
    struct err e = {0};
    cr_assert_eq(config_set(c, name, value, ~0u, &e), 0, "%s", e.msg);
}

/* Options of every type (int, real, string, choice, flag), some away from
 * their defaults; 0.1 has no exact double, so it tests the %.15g / %.17g
 * handoff between config_format and the reader. */
static void fill_config(struct config *c)
{
    config_init(c);
    set(c, "strategy", "pipeline-1f1b");
    set(c, "devices", "8");
    set(c, "bucket-mb", "25.5");
    set(c, "lr", "0.1");
    set(c, "allreduce", "tree");
    set(c, "timeline", "true");
    set(c, "json", "out/r.json");
}

#define FILL_GROUPS                                                                         \
    (OPTG_SCENARIO | OPTG_STRATEGY | OPTG_RUN | OPTG_SIM | OPTG_TRAIN | OPTG_EXEC | OPTG_OUTPUT)

/* Every field set (tests/report_fixture.h), plus a failure and a config. */
static void fill(struct report *r, const struct config *c)
{
    test_fill_report(r);
    r->config = c;
    r->config_groups = c ? FILL_GROUPS : 0;
    r->failure.happened = true;
    r->failure.has_first = true;
    r->failure.rank = 1;
    r->failure.time_s = 3.5;
    r->failure.lost_s = 0.75;
    r->failure.steps_redone = 6;
    r->failure.policy = "shrink";
    r->failure.n_failures = 2;
    r->failure.detect_s = 0.125;
    r->failure.relaunch_s = 0.25;
    r->failure.redone_s = 0.375;
    r->failure.checkpoint_s = 0.5;
    r->failure.goodput = 0.625;
    r->failure.has_workers_after = true;
    r->failure.workers_after = 1;
}

/* report_to_json as text (caller frees with cJSON_free). */
static char *json_text(const struct report *r, bool formatted)
{
    cJSON *j = report_to_json(r);
    cr_assert_not_null(j);
    char *text = formatted ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
    cr_assert_not_null(text);
    cJSON_Delete(j);
    return text;
}

/* A valid report document as a tree, for tests to break (caller deletes). */
static cJSON *valid_tree(void)
{
    struct config c;
    struct report r;
    fill_config(&c);
    fill(&r, &c);
    cJSON *j = report_to_json(&r);
    cr_assert_not_null(j);
    report_release(&r);
    return j;
}

static char *valid_text(void)
{
    cJSON *j = valid_tree();
    char *text = cJSON_Print(j);
    cr_assert_not_null(text);
    cJSON_Delete(j);
    return text;
}

/* --- comparing ------------------------------------------------------------------ */

static bool same_real(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

#define EXPECT_REAL(field) \
    cr_expect(same_real(a->field, b->field), #field ": wrote %.17g, read %.17g", a->field, b->field)
#define EXPECT_EQ(field) \
    cr_expect_eq(a->field, b->field, #field ": wrote %lld, read %lld", (long long)a->field, \
                 (long long)b->field)

static void expect_same_config(const struct report *a, const struct report *b)
{
    cr_assert_not_null(b->config);
    cr_expect_eq(a->config_groups, b->config_groups, "config_groups: wrote %#x, read %#x",
                 a->config_groups, b->config_groups);
    char va[4200], vb[4200];
    for (size_t i = 0; a->config && i < config_n_options; i++) {
        const struct opt_spec *o = &config_options[i];
        if (!(o->groups & a->config_groups)) continue;
        config_format(a->config, o, va, sizeof va);
        config_format(b->config, o, vb, sizeof vb);
        cr_expect_str_eq(va, vb, "config %s", o->name);
    }
}

/* Every field of struct report, then the JSON they make. */
static void expect_same_report(const struct report *a, const struct report *b)
{
    cr_expect_str_eq(a->mode, b->mode);
    cr_expect_str_eq(a->strategy, b->strategy);
    EXPECT_EQ(devices);
    expect_same_config(a, b);
    EXPECT_REAL(step_time_s.mean);
    EXPECT_REAL(step_time_s.p50);
    EXPECT_REAL(step_time_s.p99);
    EXPECT_REAL(throughput_samples_per_s);
    EXPECT_REAL(breakdown.compute);
    EXPECT_REAL(breakdown.comm);
    EXPECT_REAL(breakdown.idle);
    EXPECT_REAL(bubble_fraction);
    EXPECT_REAL(staleness.mean);
    EXPECT_EQ(staleness.max);
    cr_assert_eq(a->staleness.n_histogram, b->staleness.n_histogram);
    for (int i = 0; i < a->staleness.n_histogram; i++) EXPECT_EQ(staleness.histogram[i]);
    EXPECT_EQ(memory_bytes_per_device.params);
    EXPECT_EQ(memory_bytes_per_device.grads);
    EXPECT_EQ(memory_bytes_per_device.optimizer);
    EXPECT_EQ(memory_bytes_per_device.activations);
    EXPECT_EQ(memory_bytes_per_device.peak);
    cr_assert_eq(a->n_loss_curve, b->n_loss_curve);
    for (int i = 0; i < a->n_loss_curve; i++) {
        EXPECT_EQ(loss_curve[i].step);
        EXPECT_REAL(loss_curve[i].time_s);
        EXPECT_REAL(loss_curve[i].loss);
    }
    EXPECT_EQ(has_final);
    if (a->has_final) {
        EXPECT_REAL(final.loss);
        EXPECT_REAL(final.test_accuracy);
        EXPECT_EQ(updates);   /* the table's column, after compare --mode real reads it */
    }
    EXPECT_EQ(has_time_to_accuracy);
    if (a->has_time_to_accuracy) EXPECT_REAL(time_to_accuracy_s);
    cr_assert_eq(a->n_per_rank, b->n_per_rank);
    for (int i = 0; i < a->n_per_rank; i++) {
        EXPECT_EQ(per_rank[i].rank);
        EXPECT_REAL(per_rank[i].compute_s);
        EXPECT_REAL(per_rank[i].comm_s);
        EXPECT_REAL(per_rank[i].idle_s);
    }
    EXPECT_EQ(failure.happened);
    if (a->failure.happened) {
        EXPECT_EQ(failure.has_first);
        if (a->failure.has_first) {
            EXPECT_EQ(failure.rank);
            EXPECT_REAL(failure.time_s);
        }
        EXPECT_REAL(failure.lost_s);
        EXPECT_EQ(failure.steps_redone);
        EXPECT_EQ(failure.n_failures);
        EXPECT_REAL(failure.detect_s);
        EXPECT_REAL(failure.relaunch_s);
        EXPECT_REAL(failure.redone_s);
        EXPECT_REAL(failure.checkpoint_s);
        EXPECT_REAL(failure.goodput);
        cr_assert((!a->failure.policy && !b->failure.policy) ||
                  (a->failure.policy && b->failure.policy &&
                   !strcmp(a->failure.policy, b->failure.policy)));
    }
    /* Fields compared one by one can all agree while the JSON does not (a
     * config option read as set that was not); the text settles it. */
    char *ja = json_text(a, true), *jb = json_text(b, true);
    cr_expect_str_eq(ja, jb, "written again, the JSON differs");
    cJSON_free(ja);
    cJSON_free(jb);
}

static void expect_zeroed(const struct report_doc *d)
{
    cr_expect_eq(d->n, 0);
    cr_expect_null(d->reports);
    cr_expect_null(d->configs);
}

/* --- files ------------------------------------------------------------------------ */

static char dir[64];

static void make_dir(void)
{
    test_make_dir(dir, sizeof dir, "report-read");
}

static void remove_dir(void)
{
    test_remove_dir(dir);
}

static void path_in_dir(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

Test(report_read, round_trip_keeps_every_field_and_the_json, .init = make_dir,
     .fini = remove_dir)
{
    struct config c;
    struct report r;
    fill_config(&c);
    fill(&r, &c);
    char path[128];
    path_in_dir(path, sizeof path, "r.json");
    struct err e = {0};
    cr_assert_eq(report_write_json(&r, path, &e), 0, "%s", e.msg);

    struct report_doc d;
    cr_assert_eq(report_doc_read(path, &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d.n, 1);
    cr_expect_eq(d.reports[0].config, &d.configs[0], "the report points at its own config");
    expect_same_report(&r, &d.reports[0]);
    /* the file itself is what report_to_json prints, plus the newline */
    char *file = test_slurp(path), *again = json_text(&d.reports[0], true);
    cr_expect(!strncmp(file, again, strlen(again)) && !strcmp(file + strlen(again), "\n"));
    free(file);
    cJSON_free(again);
    report_doc_release(&d);
    report_release(&r);
}

Test(report_read, nulls_read_back_as_nan_and_absent)
{
    /* report.c writes non-finite values as null; they come back as NaN
     * (inf too: null cannot say which), and null final, time to accuracy
     * and failure as absent. */
    struct report r;
    fill(&r, NULL);
    r.step_time_s.mean = NAN;
    r.throughput_samples_per_s = NAN;
    r.staleness.mean = NAN;
    r.loss_curve[1].loss = NAN;
    r.per_rank[0].idle_s = NAN;
    r.has_final = false;
    r.has_time_to_accuracy = false;
    r.failure.happened = false;
    char *text = json_text(&r, false);
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_parse(text, strlen(text), "r.json", &d, &e), 0, "%s", e.msg);
    cr_assert(isnan(d.reports[0].step_time_s.mean));
    cr_assert(isnan(d.reports[0].loss_curve[1].loss));
    cr_assert_eq(d.reports[0].config_groups, 0, "an empty config object: no groups");
    expect_same_report(&r, &d.reports[0]);
    report_doc_release(&d);
    cJSON_free(text);
    report_release(&r);
}

Test(report_read, compare_document_gives_every_report_in_order, .init = make_dir,
     .fini = remove_dir)
{
    struct config ca, cb;
    struct report a, b;
    fill_config(&ca);
    config_init(&cb);
    set(&cb, "straggler", "exp:0.5");
    fill(&a, &ca);
    fill(&b, &cb);
    snprintf(b.strategy, sizeof b.strategy, "ps-async");
    b.mode = "real";
    b.config_groups = config_find("straggler")->groups;  /* whichever group holds it */
    b.has_final = false;
    b.failure.happened = false;
    const struct report *rs[] = {&a, &b};
    char path[128];
    path_in_dir(path, sizeof path, "compare.json");
    struct err e = {0};
    cr_assert_eq(report_write_compare_json(rs, 2, NULL, path, &e), 0, "%s", e.msg);

    struct report_doc d;
    cr_assert_eq(report_doc_read(path, &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d.n, 2);
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(d.reports[i].config, &d.configs[i]);
        expect_same_report(rs[i], &d.reports[i]);
    }
    cr_expect_str_eq(d.configs[1].straggler, "exp:0.5");
    report_doc_release(&d);
    report_release(&a);
    report_release(&b);
}

/* A compare document's speedups are read beside its reports; one written
 * before they were (none there) still reads, its speedups unknown. */
Test(report_read, compare_document_speedups_are_read_when_there, .init = make_dir,
     .fini = remove_dir)
{
    struct config ca;
    struct report a, b;
    fill_config(&ca);
    fill(&a, &ca);
    fill(&b, &ca);
    const struct report *rs[] = {&a, &b};
    char with[128], without[128];
    path_in_dir(with, sizeof with, "with.json");
    path_in_dir(without, sizeof without, "without.json");
    struct err e = {0};
    cr_assert_eq(report_write_compare_json(rs, 2, (const double[]){3.25, NAN}, with, &e), 0,
                 "%s", e.msg);
    cr_assert_eq(report_write_compare_json(rs, 2, NULL, without, &e), 0, "%s", e.msg);
    struct report_doc d;
    cr_assert_eq(report_doc_read(with, &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d.n_entries, 2);
    cr_expect_eq(d.entries[0].speedup, 3.25);
    cr_expect(isnan(d.entries[1].speedup), "null reads as unknown");
    cr_expect_eq(d.entries[1].first_report, 1);
    expect_same_report(rs[0], &d.reports[0]);
    report_doc_release(&d);
    cr_assert_eq(report_doc_read(without, &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d.n, 2);
    cr_expect(isnan(d.entries[0].speedup) && isnan(d.entries[1].speedup));
    report_doc_release(&d);
    report_release(&a);
    report_release(&b);
}

Test(report_read, empty_compare_document_has_no_reports)
{
    const char *text = "{\"strata_compare\": 1, \"reports\": []}";
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_parse(text, strlen(text), "c.json", &d, &e), 0, "%s", e.msg);
    expect_zeroed(&d);
}

/* printf into a new string (caller frees). */
__attribute__((format(printf, 1, 2)))
static char *text_of(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* A report's JSON with another strategy, devices and mode. */
static char *report_text(const char *strategy, int devices, const char *mode)
{
    struct report r;
    fill(&r, NULL);
    snprintf(r.strategy, sizeof r.strategy, "%s", strategy);
    r.devices = devices;
    r.mode = mode;
    char *text = json_text(&r, false);
    report_release(&r);
    return text;
}

static struct report_doc parse_ok(const char *text)
{
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_parse(text, strlen(text), "doc.json", &d, &e), 0, "%s", e.msg);
    return d;
}

Test(report_read, sweep_document_gives_each_points_report)
{
    /* No sweep writer exists yet: the document is ARCHITECTURE.md's, by hand. */
    char *r1 = report_text("mirrored", 1, "sim"), *r2 = report_text("mirrored", 2, "sim");
    char *text = text_of("{\"strata_sweep\": 1, \"points\": ["
                         "{\"strategy\": \"mirrored\", \"devices\": 1, \"speedup\": 1, "
                         "\"efficiency\": 1, \"report\": %s},\n"
                         "{\"strategy\": \"mirrored\", \"devices\": 2, \"speedup\": 1.9, "
                         "\"efficiency\": 0.95, \"report\": %s}]}\n", r1, r2);
    struct report_doc d = parse_ok(text);
    cr_assert_eq(d.n, 2);
    cr_expect_eq(d.reports[0].devices, 1);
    cr_expect_eq(d.reports[1].devices, 2);
    cr_expect_str_eq(d.reports[1].strategy, "mirrored");
    report_doc_release(&d);
    free(text);
    cJSON_free(r1);
    cJSON_free(r2);
}

Test(report_read, validate_document_gives_predicted_then_measured_per_row)
{
    char *p1 = report_text("mirrored", 4, "sim"), *m1 = report_text("mirrored", 4, "real");
    char *p2 = report_text("ps-sync", 4, "sim"), *m2 = report_text("ps-sync", 4, "real");
    char *text = text_of("{\"strata_validate\": 1, \"rows\": ["
                         "{\"strategy\": \"mirrored\", \"predicted_step_s\": 0.125, "
                         "\"measured_step_s\": 0.125, \"error\": 0, "
                         "\"predicted\": %s, \"measured\": %s},"
                         "{\"strategy\": \"ps-sync\", \"predicted_step_s\": 0.125, "
                         "\"measured_step_s\": 0.125, \"error\": 0, "
                         "\"predicted\": %s, \"measured\": %s}]}", p1, m1, p2, m2);
    struct report_doc d = parse_ok(text);
    cr_assert_eq(d.n, 4);
    const char *want[4][2] = {
        {"mirrored", "sim"}, {"mirrored", "real"}, {"ps-sync", "sim"}, {"ps-sync", "real"}};
    for (int i = 0; i < 4; i++) {
        cr_expect_str_eq(d.reports[i].strategy, want[i][0], "report %d", i);
        cr_expect_str_eq(d.reports[i].mode, want[i][1], "report %d", i);
    }
    report_doc_release(&d);
    free(text);
    cJSON_free(p1);
    cJSON_free(m1);
    cJSON_free(p2);
    cJSON_free(m2);
}

Test(report_read, parse_reads_only_len_bytes)
{
    /* An exact-size copy with no NUL after it: the address sanitizer build
     * catches a read past the end. Text after len is not the document's. */
    char *text = valid_text();
    size_t n = strlen(text);
    char *exact = malloc(n);
    cr_assert_not_null(exact);
    memcpy(exact, text, n);
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_parse(exact, n, "r.json", &d, &e), 0, "%s", e.msg);
    report_doc_release(&d);
    free(exact);

    char *longer = text_of("%s garbage", text);
    cr_assert_eq(report_doc_parse(longer, n, "r.json", &d, &e), 0, "%s", e.msg);
    report_doc_release(&d);
    free(longer);
    cJSON_free(text);
}

Test(report_read, release_accepts_zeroed_and_null)
{
    struct report_doc d = {0};
    report_doc_release(&d);
    report_doc_release(&d);
    report_doc_release(NULL);
    expect_zeroed(&d);
}

/* --- malformed input ------------------------------------------------------------- */

/* text[0..len) must fail with ERR_INPUT, a message naming r.json and
 * containing want, and a zeroed result even from a dirty one. */
static void expect_bad_n(const char *text, size_t len, const char *want)
{
    struct report_doc d;
    memset(&d, 0x5a, sizeof d);
    struct err e = {0};
    int rc = report_doc_parse(text, len, "r.json", &d, &e);
    cr_assert_eq(rc, ERR_INPUT, "rc %d (%s) for:\n%.*s", rc, e.msg, (int)len, text);
    cr_assert_eq(e.code, ERR_INPUT);
    cr_assert(!strncmp(e.msg, "r.json", 6), "the message names the file: %s", e.msg);
    cr_assert_not_null(strstr(e.msg, want), "want \"%s\" in: %s", want, e.msg);
    expect_zeroed(&d);
}

static void expect_bad(const char *text, const char *want)
{
    expect_bad_n(text, strlen(text), want);
}

/* Prints and deletes j, then expect_bad. */
static void expect_bad_tree(cJSON *j, const char *want)
{
    char *text = cJSON_Print(j);
    cr_assert_not_null(text);
    cJSON_Delete(j);
    expect_bad(text, want);
    cJSON_free(text);
}

static cJSON *at(cJSON *j, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    cr_assert_not_null(v, "no \"%s\"", key);
    return v;
}

static void replace(cJSON *obj, const char *key, cJSON *with)
{
    cr_assert(cJSON_ReplaceItemInObjectCaseSensitive(obj, key, with), "no \"%s\"", key);
}

/* j printed and read back, which must succeed (report_doc_release it). */
static struct report_doc parse_tree(const cJSON *j)
{
    char *text = cJSON_PrintUnformatted(j);
    cr_assert_not_null(text);
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_parse(text, strlen(text), "r.json", &d, &e), 0, "%s", e.msg);
    cJSON_free(text);
    return d;
}

/* Puts `with` in place of the item at path in j: "a.b" names an object's
 * member, "a[1]" an array's element ("per_rank[0].rank", "loss_curve[0][2]"). */
static void replace_at(cJSON *j, const char *path, cJSON *with)
{
    cJSON *node = j;
    for (const char *p = path; *p;) {
        char key[64];
        int index = -1;
        if (*p == '[') {
            char *end;
            index = (int)strtol(p + 1, &end, 10);
            cr_assert_eq(*end, ']', "bad path %s", path);
            p = end + 1;
        } else {
            size_t n = strcspn(p, ".[");
            cr_assert_lt(n, sizeof key, "bad path %s", path);
            memcpy(key, p, n);
            key[n] = '\0';
            p += n;
        }
        if (*p == '.') p++;
        if (!*p) {   /* the last step: the item to replace */
            if (index >= 0)
                cr_assert(cJSON_ReplaceItemInArray(node, index, with), "no %s", path);
            else
                replace(node, key, with);
            return;
        }
        node = index >= 0 ? cJSON_GetArrayItem(node, index) : at(node, key);
        cr_assert_not_null(node, "no %s", path);
    }
}

/* A valid document with `with` at path (replace_at) must fail as expect_bad
 * says, naming want. */
static void expect_bad_value(const char *path, cJSON *with, const char *want)
{
    cJSON *j = valid_tree();
    replace_at(j, path, with);
    expect_bad_tree(j, want);
}

/* valid_text() with the first `from` replaced by `to` (caller frees). */
static char *edited(const char *from, const char *to)
{
    char *text = valid_text();
    char *p = strstr(text, from);
    cr_assert_not_null(p, "no \"%s\" in the document", from);
    char *out = text_of("%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
    cJSON_free(text);
    return out;
}

/* A sweep document of two mirrored points (reports r1, r2), head's fields
 * first ("" or "\"key\": value, ..., "); the caller frees it. */
static char *sweep_with(const char *head, const char *r1, const char *r2)
{
    return text_of("{\"strata_sweep\": 1, %s\"points\": [{\"strategy\": \"mirrored\", "
                   "\"devices\": 1, \"report\": %s}, {\"strategy\": \"mirrored\", "
                   "\"devices\": 2, \"report\": %s}]}", head, r1, r2);
}

/* strata plot titles a sweep's figures as the sweep did (a weak sweep's
 * said nothing of weak scaling, and "reports of different scenarios" of
 * its own points): it needs the axis the document states beside them. */
Test(report_read, sweep_document_gives_its_axis_when_it_states_one)
{
    char *r1 = report_text("mirrored", 1, "sim"), *r2 = report_text("mirrored", 2, "sim");
    char *text = sweep_with("\"mode\": \"real\", \"option\": \"devices\", "
                            "\"scaling\": \"weak\", ", r1, r2);
    struct report_doc d = parse_ok(text);
    cr_expect(d.sweep.has_axis);
    cr_expect_str_eq(d.sweep.option, "devices");
    cr_expect(d.sweep.is_weak);
    cr_expect(d.sweep.is_real);
    report_doc_release(&d);
    free(text);
    /* written before sweeps said their axis: none, and no complaint */
    text = sweep_with("", r1, r2);
    d = parse_ok(text);
    cr_expect_not(d.sweep.has_axis);
    report_doc_release(&d);
    free(text);
    text = sweep_with("\"scaling\": 2, ", r1, r2);
    expect_bad(text, "\"scaling\" is a number, not a string");
    free(text);
    cJSON_free(r1);
    cJSON_free(r2);
}

Test(report_read, truncated_json_says_where)
{
    char *text = valid_text();
    size_t n = strlen(text);
    expect_bad_n(text, n / 2, "not valid JSON");
    /* "r.json:LINE:COL:", the line being that of the cut */
    size_t lines = 1;
    for (size_t i = 0; i + 1 < n / 2; i++) lines += text[i] == '\n';
    char want[64];
    snprintf(want, sizeof want, "r.json:%zu:", lines);
    expect_bad_n(text, n / 2, want);
    cJSON_free(text);
}

Test(report_read, every_prefix_is_rejected)
{
    /* The unformatted text ends in its closing brace: every shorter prefix
     * is unfinished JSON. */
    char *text = report_text("mirrored", 4, "sim");
    size_t n = strlen(text);
    for (size_t k = 0; k < n; k++) expect_bad_n(text, k, "r.json");
    cJSON_free(text);
}

Test(report_read, every_single_byte_corruption_is_handled)
{
    /* Fuzzing by hand: each byte replaced by characters that matter to JSON
     * and to the reader. Some edits still make a valid report (a digit for a
     * digit); the rest must fail cleanly. The sanitizer build finds any
     * crash or leak. */
    char *text = report_text("mirrored", 4, "sim");
    size_t n = strlen(text);
    static const char subs[] = {'x', '"', '-', '9', '.', '{', ']', ',', ':', '\0'};
    int ok = 0, rejected = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t s = 0; s < sizeof subs; s++) {
            char saved = text[k];
            text[k] = subs[s];
            struct report_doc d;
            struct err e = {0};
            int rc = report_doc_parse(text, n, "r.json", &d, &e);
            text[k] = saved;
            cr_assert(rc == 0 || rc == ERR_INPUT, "byte %zu -> '%c': rc %d (%s)", k, subs[s],
                      rc, e.msg);
            if (rc == 0) {
                ok++;
                report_doc_release(&d);
            } else {
                rejected++;
                cr_assert(!strncmp(e.msg, "r.json", 6), "%s", e.msg);
                expect_zeroed(&d);
            }
        }
    cr_expect_gt(rejected, ok, "%d edits read, %d rejected", ok, rejected);
    cJSON_free(text);
}

Test(report_read, not_an_object_is_rejected)
{
    expect_bad("[1, 2]", "r.json: the document is an array, not an object");
    expect_bad("42", "is a number, not an object");
    expect_bad("\"report\"", "is a string, not an object");
    expect_bad("null", "is null, not an object");
}

Test(report_read, empty_text_is_rejected)
{
    expect_bad("", "r.json: the document is empty");
    expect_bad(" \n\t\n", "is empty");
}

Test(report_read, text_after_the_document_is_rejected)
{
    char *text = text_of("{\"strata_compare\": 1, \"reports\": []}\n}");
    expect_bad(text, "r.json:2:1: text after the JSON document");
    free(text);
}

Test(report_read, unknown_document_kind_is_rejected)
{
    expect_bad("{\"strata_plan\": 1}", "not a strata report");
    expect_bad("{\"strata_report\": 1, \"strata_compare\": 1, \"reports\": []}",
               "has both \"strata_report\" and \"strata_compare\"");
}

Test(report_read, wrong_version_is_rejected)
{
    expect_bad_value("strata_report", cJSON_CreateNumber(2),
                     "\"strata_report\" is 2: this strata reads version 1");
    expect_bad_value("strata_report", cJSON_CreateString("1"),
                     "\"strata_report\" is a string, not a version number");

    expect_bad("{\"strata_compare\": 2, \"reports\": []}", "\"strata_compare\" is 2");
}

Test(report_read, missing_field_is_named)
{
    cJSON *j = valid_tree();
    cJSON_DeleteItemFromObjectCaseSensitive(at(j, "step_time_s"), "p50");
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_parse(text, strlen(text), "r.json", &d, &e), ERR_INPUT);
    cr_assert_str_eq(e.msg, "r.json: \"step_time_s.p50\" is missing (not a strata report?)");
    cJSON_free(text);
}

/* Deletes the k-th member of the object `parent` finds in a fresh valid tree
 * and expects that member's path to be named missing. */
static void expect_member_required(const char *parent, int elem, int k)
{
    cJSON *j = valid_tree();
    cJSON *obj = parent ? at(j, parent) : j;
    if (elem >= 0) obj = cJSON_GetArrayItem(obj, elem);
    cJSON *victim = cJSON_GetArrayItem(obj, k);
    char want[128];
    if (!parent) snprintf(want, sizeof want, "\"%s\" is missing", victim->string);
    else if (elem < 0) snprintf(want, sizeof want, "\"%s.%s\" is missing", parent, victim->string);
    else snprintf(want, sizeof want, "\"%s[%d].%s\" is missing", parent, elem, victim->string);
    cJSON_Delete(cJSON_DetachItemViaPointer(obj, victim));
    expect_bad_tree(j, want);
}

/* Fields added after version 1 of the format: files from before them lack
 * them, and they read as 0. */
static bool is_later_field(const char *key)
{
    static const char *const later[] = {"accuracy_curve", "samples_applied", "steps_per_worker",
                                        "down", "down_s",
                                        /* failure's, from issue 14 */
                                        "policy", "n_failures", "detect_s", "relaunch_s",
                                        "redone_s", "checkpoint_s", "goodput", "workers_after",
                                        /* final's */
                                        "updates"};
    for (size_t i = 0; i < sizeof later / sizeof *later; i++)
        if (!strcmp(key, later[i])) return true;
    return false;
}

Test(report_read, every_field_of_the_contract_is_required)
{
    cJSON *j = valid_tree();
    int n_top = cJSON_GetArraySize(j);
    /* k = 0, "strata_report", is the document's kind: unknown_document_kind */
    for (int k = 1; k < n_top; k++)
        if (!is_later_field(cJSON_GetArrayItem(j, k)->string)) expect_member_required(NULL, -1, k);
    /* Members of objects, except config, whose members are optional
     * (defaults fill the rest). */
    for (const cJSON *m = j->child; m; m = m->next) {
        if (!strcmp(m->string, "config")) continue;
        if (cJSON_IsObject(m))
            for (int k = 0; k < cJSON_GetArraySize(m); k++)
                if (!is_later_field(cJSON_GetArrayItem(m, k)->string))
                    expect_member_required(m->string, -1, k);
    }
    for (int k = 0; k < 4; k++) expect_member_required("per_rank", 1, k);
    cJSON_Delete(j);
}

/* --mtbf that drew no failure: the section is there (its checkpoints and
 * goodput count), and the first failure's rank and time are null. A
 * compare -j worker's report, an --html page and `strata plot` read it back. */
Test(report_read, mtbf_run_without_a_failure_round_trips_with_null_rank)
{
    struct config c;
    fill_config(&c);
    struct report r;
    fill(&r, &c);
    r.failure.has_first = false;
    r.failure.rank = -1;
    r.failure.time_s = 0;
    r.failure.n_failures = 0;
    char *text = json_text(&r, false);
    cJSON *j = cJSON_Parse(text);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(at(j, "failure"), "rank")), "%s", text);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(at(j, "failure"), "time_s")));
    struct report_doc d = parse_tree(j);
    cr_assert(d.reports[0].failure.happened);
    cr_assert(!d.reports[0].failure.has_first);
    cr_assert_eq(d.reports[0].failure.n_failures, 0);
    expect_same_report(&r, &d.reports[0]);
    report_doc_release(&d);
    cJSON_Delete(j);
    cJSON_free(text);
    report_release(&r);
}

Test(report_read, later_fields_read_back_and_are_zero_when_absent)
{
    cJSON *j = valid_tree();
    replace(j, "samples_applied", cJSON_CreateNumber(1536));
    replace(at(j, "breakdown"), "down", cJSON_CreateNumber(0.25));
    cJSON *spw = cJSON_GetObjectItemCaseSensitive(j, "steps_per_worker");
    int n = cJSON_GetArraySize(spw);
    cr_assert_gt(n, 0);
    cJSON_ReplaceItemInArray(spw, n - 1, cJSON_CreateNumber(9));
    struct report_doc d = parse_tree(j);
    cr_assert_eq(d.reports[0].samples_applied, 1536);
    cr_assert_eq(d.reports[0].breakdown.down, 0.25);
    cr_assert_eq(d.reports[0].per_rank[n - 1].steps, 9);
    cr_assert(d.reports[0].failure.has_workers_after);
    cr_assert_eq(d.reports[0].failure.workers_after, 1);
    report_doc_release(&d);
    replace(at(j, "failure"), "workers_after", cJSON_CreateNull());
    d = parse_tree(j);
    cr_assert(!d.reports[0].failure.has_workers_after, "null: not said (the simulator's)");
    report_doc_release(&d);
    cJSON_DeleteItemFromObjectCaseSensitive(at(j, "failure"), "workers_after");
    d = parse_tree(j);
    cr_assert(!d.reports[0].failure.has_workers_after, "absent: a report from before");
    report_doc_release(&d);

    cJSON_DeleteItemFromObjectCaseSensitive(j, "samples_applied");
    cJSON_DeleteItemFromObjectCaseSensitive(j, "steps_per_worker");
    cJSON_DeleteItemFromObjectCaseSensitive(at(j, "breakdown"), "down");
    d = parse_tree(j);
    cr_assert_eq(d.reports[0].samples_applied, 0);
    cr_assert_eq(d.reports[0].breakdown.down, 0);
    cr_assert_eq(d.reports[0].per_rank[n - 1].steps, 0);
    report_doc_release(&d);

    /* one count a worker, or the file is wrong */
    cJSON_AddItemToObject(j, "steps_per_worker", cJSON_CreateArray());
    expect_bad_tree(j, "\"steps_per_worker\" has 0 entries");
}

Test(report_read, first_complaint_is_the_first_bad_field_of_the_text)
{
    /* Fields are checked in report_to_json's order, so fixing the file from
     * the top down meets the complaints in turn. */
    cJSON *j = valid_tree();
    cJSON_DeleteItemFromObjectCaseSensitive(j, "bubble_fraction");
    replace(at(j, "breakdown"), "comm", cJSON_CreateString("most"));
    replace(j, "per_rank", cJSON_CreateNull());
    expect_bad_tree(j, "\"breakdown.comm\" is a string");
}

Test(report_read, string_where_a_number_goes_is_rejected)
{
    expect_bad_value("devices", cJSON_CreateString("8"), "\"devices\" is a string, not a number");
    expect_bad_value("step_time_s.p99", cJSON_CreateString("fast"),
                     "\"step_time_s.p99\" is a string, not a number");
    expect_bad_value("staleness.max", cJSON_CreateNull(),
                     "\"staleness.max\" is null, not a number");
}

Test(report_read, histogram_count_must_be_whole_and_not_negative)
{
    expect_bad_value("staleness.histogram[1]", cJSON_CreateNumber(-3),
                     "\"staleness.histogram[1]\" is -3, not a whole number from 0 to");
    expect_bad_value("staleness.histogram[0]", cJSON_CreateNumber(2.5),
                     "\"staleness.histogram[0]\" is 2.5");
    expect_bad_value("staleness.histogram", cJSON_CreateObject(),
                     "\"staleness.histogram\" is an object, not an array");
}

Test(report_read, loss_curve_entry_must_be_a_triple)
{
    double pair[] = {100, 12.5};
    expect_bad_value("loss_curve[1]", cJSON_CreateDoubleArray(pair, 2),
                     "\"loss_curve[1]\" is not a [step, time_s, loss] triple");
    expect_bad_value("loss_curve[0]", cJSON_CreateString("0, 0, 2.5"),
                     "\"loss_curve[0]\" is not a [step, time_s, loss] triple");
    expect_bad_value("loss_curve[0][2]", cJSON_CreateString("low"),
                     "\"loss_curve[0][2]\" is a string, not a number");
}

Test(report_read, unknown_config_key_is_rejected)
{
    cJSON *j = valid_tree();
    cJSON_AddNumberToObject(at(j, "config"), "devcies", 8);
    expect_bad_tree(j, "r.json: \"config.devcies\": --devcies: unknown option "
                       "(did you mean --devices?)");
}

Test(report_read, bad_config_value_is_rejected)
{
    expect_bad_value("config.devices", cJSON_CreateNumber(0),
                     "\"config.devices\": --devices: 0 is not allowed");
    expect_bad_value("config.devices", cJSON_CreateNumber(2.5),
                     "\"config.devices\": --devices: '2.5' is not an integer");
    expect_bad_value("config.allreduce", cJSON_CreateString("star"),
                     "\"config.allreduce\": --allreduce: 'star' is not one of");
    expect_bad_value("config.timeline", cJSON_CreateString("yes"),
                     "\"config.timeline\": --timeline: 'yes' is not true or false");
    expect_bad_value("config.seed", cJSON_CreateArray(),
                     "\"config.seed\" is an array, not a number, string or boolean");
    expect_bad_value("config", cJSON_CreateNull(), "\"config\" is null, not an object");
}

Test(report_read, non_finite_number_is_rejected)
{
    /* No writer prints 1e999 (report.c writes null); cJSON parses it as inf. */
    char *text = edited("0.0625", "1e999");
    expect_bad(text, "\"step_time_s.p50\" is not finite");
    free(text);
    text = edited("5000000000123", "-1e999");
    expect_bad(text, "\"memory_bytes_per_device.peak\" is -inf, not a whole number");
    free(text);
}

Test(report_read, absurd_sizes_are_rejected)
{
    expect_bad_value("memory_bytes_per_device.peak", cJSON_CreateNumber(1e300),
                     "\"memory_bytes_per_device.peak\" is 1e+300, not a whole number from 0 "
                     "to 4611686018427387904");
    expect_bad_value("per_rank[0].rank", cJSON_CreateNumber(3e9),
                     "\"per_rank[0].rank\" is 3000000000, not a whole number from 0 to "
                     "2147483647");
    expect_bad_value("devices", cJSON_CreateNumber(0),
                     "\"devices\" is 0: a run has at least one device");
    expect_bad_value("devices", cJSON_CreateNumber(-4), "\"devices\" is -4");
}

Test(report_read, mode_must_be_sim_or_real)
{
    expect_bad_value("mode", cJSON_CreateString("simulated"),
                     "\"mode\" is \"simulated\", not \"sim\" or \"real\"");
    /* null: what report.c writes for mode == NULL */
    expect_bad_value("mode", cJSON_CreateNull(), "\"mode\" is null, not \"sim\" or \"real\"");
}

Test(report_read, strategy_must_be_a_name_that_fits)
{
    char long_name[80];
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    expect_bad_value("strategy", cJSON_CreateString(long_name),
                     "\"strategy\" has 64 characters, not 1 to 63");
    expect_bad_value("strategy", cJSON_CreateString(""), "\"strategy\" has 0 characters");
    expect_bad_value("strategy", cJSON_CreateString("a,b\n"),
                     "\"strategy\" is \"a,b\\n\": a strategy name has only letters");
    expect_bad_value("strategy", cJSON_CreateNumber(3), "\"strategy\" is a number, not a string");
}

Test(report_read, final_and_failure_are_null_or_an_object)
{
    expect_bad_value("final", cJSON_CreateNumber(0.5),
                     "\"final\" is a number, not an object or null");
    expect_bad_value("failure", cJSON_CreateTrue(),
                     "\"failure\" is a boolean, not an object or null");
    expect_bad_value("time_to_accuracy_s", cJSON_CreateString("never"),
                     "\"time_to_accuracy_s\" is a string, not a number");
    expect_bad_value("per_rank[0]", cJSON_CreateArray(),
                     "\"per_rank[0]\" is an array, not an object");
}

Test(report_read, nested_documents_name_the_whole_path)
{
    cJSON *bad = valid_tree();
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetArrayItem(at(bad, "per_rank"), 0),
                                            "comm_s");
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "strata_compare", 1);
    cJSON *reports = cJSON_AddArrayToObject(doc, "reports");
    cJSON_AddItemToArray(reports, valid_tree());
    cJSON_AddItemToArray(reports, bad);
    expect_bad_tree(doc, "\"reports[1].per_rank[0].comm_s\" is missing");

    expect_bad("{\"strata_compare\": 1, \"reports\": {}}", "\"reports\" is an object, not an array");
    expect_bad("{\"strata_compare\": 1, \"reports\": [3]}", "\"reports[0]\" is a number, not a report");
    expect_bad("{\"strata_sweep\": 1, \"points\": [{\"devices\": 2}]}",
               "\"points[0].report\" is missing");
    expect_bad("{\"strata_validate\": 1, \"rows\": [[]]}", "\"rows[0]\" is an array, not an object");

    char *p = report_text("mirrored", 4, "sim");
    char *text = text_of("{\"strata_validate\": 1, \"rows\": [{\"predicted\": %s}]}", p);
    expect_bad(text, "\"rows[0].measured\" is missing");
    free(text);
    cJSON_free(p);
}

/* --- files --------------------------------------------------------------------------- */

Test(report_read_files, missing_file_is_input_error_naming_it)
{
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_read("/nonexistent/r.json", &d, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "cannot read '/nonexistent/r.json'"), "%s", e.msg);
    expect_zeroed(&d);
}

Test(report_read_files, directory_is_rejected, .init = make_dir, .fini = remove_dir)
{
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_read(dir, &d, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "is a directory"), "%s", e.msg);
    expect_zeroed(&d);
}

Test(report_read_files, file_over_the_cap_is_rejected_unread, .init = make_dir,
     .fini = remove_dir)
{
    /* A sparse file: 256 MiB + 1 of size without the disk or the reading. */
    char path[128];
    path_in_dir(path, sizeof path, "huge.json");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fclose(f);
    cr_assert_eq(truncate(path, (256 << 20) + 1), 0);
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_read(path, &d, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "268435457 bytes, over the 256 MiB"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, path), "%s", e.msg);
    expect_zeroed(&d);
}

Test(report_read_files, bad_file_names_the_file, .init = make_dir, .fini = remove_dir)
{
    char path[128];
    path_in_dir(path, sizeof path, "r.json");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs("{\"strata_report\": 1, \"mode\": \"sim\"}\n", f);
    fclose(f);
    struct report_doc d;
    struct err e = {0};
    cr_assert_eq(report_doc_read(path, &d, &e), ERR_INPUT);
    char want[256];
    snprintf(want, sizeof want, "%s: \"strategy\" is missing", path);
    cr_assert_not_null(strstr(e.msg, want), "%s", e.msg);
    expect_zeroed(&d);
}

Test(report_read, accuracy_curve_reads_back_and_may_be_absent)
{
    cJSON *j = valid_tree();
    cJSON *ac = cJSON_CreateArray();
    cJSON *pt = cJSON_CreateArray();
    cJSON_AddItemToArray(pt, cJSON_CreateNumber(40));
    cJSON_AddItemToArray(pt, cJSON_CreateNumber(1.5));
    cJSON_AddItemToArray(pt, cJSON_CreateNumber(0.875));
    cJSON_AddItemToArray(ac, pt);
    cJSON_ReplaceItemInObjectCaseSensitive(j, "accuracy_curve", ac);
    struct report_doc d = parse_tree(j);
    cr_assert_eq(d.reports[0].n_accuracy_curve, 1);
    cr_assert_eq(d.reports[0].accuracy_curve[0].step, 40);
    cr_assert_float_eq(d.reports[0].accuracy_curve[0].accuracy, 0.875, 1e-12);
    report_doc_release(&d);
    cJSON_DeleteItemFromObjectCaseSensitive(j, "accuracy_curve");
    d = parse_tree(j);
    cr_assert_eq(d.reports[0].n_accuracy_curve, 0);
    report_doc_release(&d);
    cJSON_Delete(j);
}

/* Issue 15: a report with accuracy -1e308 was read, then drawn (gnuplot
 * failed half-way). Values no run gives are refused, naming the field. */
Test(report_read, values_no_run_gives_are_refused_naming_the_field)
{
    const struct { const char *path; double value; const char *want; } cases[] = {
        {"final.test_accuracy", -1e308, "\"final.test_accuracy\" is -1e+308, not in [0, 1]"},
        {"final.test_accuracy", 1.5, "\"final.test_accuracy\" is 1.5, not in [0, 1]"},
        {"loss_curve[0][1]", -3, "\"loss_curve[0][1]\" is -3, not a number >= 0"},
        {"step_time_s.p99", -0.5, "\"step_time_s.p99\" is -0.5, not a number >= 0"},
        {"per_rank[1].idle_s", -1, "\"per_rank[1].idle_s\" is -1, not a number >= 0"},
        {"breakdown.idle", 2, "\"breakdown.idle\" is 2, not in [0, 1]"},
        {"time_to_accuracy_s", -42, "\"time_to_accuracy_s\" is -42, not a number >= 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_bad_value(cases[i].path, cJSON_CreateNumber(cases[i].value), cases[i].want);
}

/* A curve point with a null time was read as NaN and handed to gnuplot,
 * which failed: strata plot exited 1, as for a failed run, not 2 for a
 * damaged report. Its loss may be null (a diverged run), its time not. */
Test(report_read, a_curve_point_without_its_time_is_refused)
{
    expect_bad_value("loss_curve[0][1]", cJSON_CreateNull(),
                     "\"loss_curve[0][1]\" is null: a curve point's time is always known");
    cJSON *j = valid_tree();
    replace_at(j, "loss_curve[0][2]", cJSON_CreateNull());
    struct report_doc d = parse_tree(j);
    cr_expect(isnan(d.reports[0].loss_curve[0].loss), "a diverged loss reads as NaN");
    report_doc_release(&d);
    cJSON_Delete(j);
}

/* A curve time of 1e308 s passed the reader (finite, >= 0) and reached
 * gnuplot. A point is measured while the run runs: the fixture's run ends
 * at 12.625 s (its mean step time, 0.125 s, x the 101 steps its loss curve
 * reaches; its per_rank times end sooner), and 1 s + 1% of slack past it
 * is kept for a real rank's clock. */
Test(report_read, a_curve_time_after_the_run_is_refused)
{
    expect_bad_value("loss_curve[1][1]", cJSON_CreateNumber(1e308),
                     "\"loss_curve[1][1]\" is 1e+308 s, after the run's end (12.625 s");
    expect_bad_value("loss_curve[1][1]", cJSON_CreateNumber(14), "after the run's end");
    cJSON *j = valid_tree();
    replace_at(j, "loss_curve[1][1]", cJSON_CreateNumber(13.5));   /* within the slack */
    struct report_doc d = parse_tree(j);
    cr_expect_eq(d.reports[0].loss_curve[1].time_s, 13.5);
    report_doc_release(&d);
    cJSON_Delete(j);
}

/* A resumed real run's curves go on from the run's clock at its resume
 * (final.time_resumed_s): a point that far past this job's own end is one
 * the run measured; past that, as far again as a plain run's, it is not. */
Test(report_read, a_resumed_runs_curves_reach_past_its_jobs_end_by_its_resume_time)
{
    cJSON *j = valid_tree();
    replace_at(j, "loss_curve[1][1]", cJSON_CreateNumber(40));
    cJSON_AddItemToObject(cJSON_GetObjectItem(j, "final"), "time_resumed_s",
                          cJSON_CreateNumber(30));
    struct report_doc d = parse_tree(j);
    cr_expect_eq(d.reports[0].loss_curve[1].time_s, 40);
    cr_expect(d.reports[0].has_time_resumed && d.reports[0].time_resumed_s == 30);
    report_doc_release(&d);
    replace_at(j, "loss_curve[1][1]", cJSON_CreateNumber(45));   /* past 1 s + 1% of slack */
    expect_bad_tree(j, "\"loss_curve[1][1]\" is 45 s, after the run's end (42.625 s");
}

/* An evaluation that a later step trained after is held to the run's end;
 * the final one (after the last loss point's step, 100) is not: a real
 * run evaluates after its last span, and no figure says for how long. */
Test(report_read, an_accuracy_time_is_held_to_the_run_only_before_the_last_step)
{
    cJSON *j = valid_tree();
    cJSON *curve = cJSON_Parse("[[50, 1e308, 0.5]]");
    replace(j, "accuracy_curve", curve);
    expect_bad_tree(j, "\"accuracy_curve[0][1]\" is 1e+308 s, after the run's end");

    j = valid_tree();
    replace(j, "accuracy_curve", cJSON_Parse("[[50, 6.25, 0.5], [101, 20, 0.8]]"));
    struct report_doc d = parse_tree(j);
    cr_assert_eq(d.reports[0].n_accuracy_curve, 2);
    cr_expect_eq(d.reports[0].accuracy_curve[1].time_s, 20, "the final evaluation's time");
    report_doc_release(&d);
    cJSON_Delete(j);
}

Test(report_read, rounding_below_zero_and_null_are_still_read)
{
    /* an idle time computed as a difference may round to -1e-12 s */
    cJSON *j = valid_tree();
    replace_at(j, "per_rank[0].idle_s", cJSON_CreateNumber(-1e-12));
    replace_at(j, "final.test_accuracy", cJSON_CreateNull());
    struct report_doc d = parse_tree(j);
    cr_expect(isnan(d.reports[0].final.test_accuracy));
    report_doc_release(&d);
    cJSON_Delete(j);
}

/* A one-device baseline of a model of Llama 3's size estimates 6.28e16
 * bytes of activations (labs/llama3-failures.conf on 16 devices): past
 * 2^53, where a whole number stops being exact in JSON, and `sweep -j 2`
 * failed reading its workers' reports back. Byte counts read to 2^62, as
 * the double nearest; beyond that, and negative, they are refused. */
Test(report_read, memory_beyond_2_to_the_53_reads_back)
{
    cJSON *j = valid_tree();
    replace_at(j, "memory_bytes_per_device.activations", cJSON_CreateNumber(6.28272325774541e16));
    struct report_doc d = parse_tree(j);
    cr_expect_eq(d.reports[0].memory_bytes_per_device.activations, (int64_t)6.28272325774541e16);
    report_doc_release(&d);
    cJSON_Delete(j);
    expect_bad_value("memory_bytes_per_device.peak", cJSON_CreateNumber(1e19),
                     "\"memory_bytes_per_device.peak\" is 1e+19, not a whole number from 0 to "
                     "4611686018427387904");
}

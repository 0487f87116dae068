/* tests for core/json_doc.c and core/json_fields.c: the shared writing
 * helpers, the whole-file write, and a field table read and written. The
 * report's own table is tested through tests/test_report*.c. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "helpers.h"

#include "../core/json_doc.h"

Test(json_doc, non_finite_numbers_are_null)
{
    cJSON *a = json_num(NAN), *b = json_num(INFINITY), *c = json_num(2.5);
    cr_expect(cJSON_IsNull(a));
    cr_expect(cJSON_IsNull(b));
    cr_expect(cJSON_IsNumber(c) && c->valuedouble == 2.5);
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

Test(json_doc, a_failed_add_clears_ok_and_frees_the_item)
{
    bool ok = true;
    cJSON *o = cJSON_CreateObject();
    cr_expect_not_null(json_add(o, "x", cJSON_CreateNumber(1), &ok));
    cr_expect(ok);
    cr_expect_null(json_add(o, "y", NULL, &ok));
    cr_expect(!ok);
    ok = true;
    cr_expect_null(json_add(NULL, "z", cJSON_CreateNumber(2), &ok));  /* freed: the sanitizer checks */
    cr_expect(!ok);
    cJSON_Delete(o);
}

static char dir[64];
static void make_dir(void) { test_make_dir(dir, sizeof dir, "json-doc"); }
static void remove_dir(void) { test_remove_dir(dir); }

Test(json_doc, write_atomic_prints_the_document_and_a_newline, .init = make_dir,
     .fini = remove_dir)
{
    char path[128];
    snprintf(path, sizeof path, "%s/d.json", dir);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "strata_test", 1);
    char *want = cJSON_Print(doc);
    struct err e = {0};
    cr_assert_eq(json_write_atomic(doc, path, &e), 0, "%s", e.msg);
    char *got = test_slurp(path);
    size_t n = strlen(want);
    cr_expect(!strncmp(got, want, n) && !strcmp(got + n, "\n"), "wrote:\n%s", got);
    free(got);
    cJSON_free(want);

    cr_expect_eq(json_write_atomic(NULL, path, &e), ERR_NOMEM, "NULL: building ran out of memory");
    cr_expect_not_null(strstr(e.msg, "out of memory building the JSON"), "%s", e.msg);
}

/* A struct of every kind a table knows. */
struct point { int64_t step; double value; };
struct thing {
    int count;
    double ratio;
    bool is_on;
    bool has_best;
    double best;
    struct point *points;
    int n_points;
};

static const struct json_field point_fields[] = {
    {.key = "step", .kind = JSON_WHOLE, .offset = offsetof(struct point, step)},
    {.key = "value", .kind = JSON_REAL, .offset = offsetof(struct point, value)},
};
static const struct json_table points = JSON_ITEMS(JSON_SHAPE_TUPLE, point_fields, struct point);
static const struct json_field thing_fields[] = {
    {.key = "strata_thing", .kind = JSON_VERSION, .max = 3},
    {.key = "count", .kind = JSON_INT, .offset = offsetof(struct thing, count), .min = 1,
     .why = "a thing counts at least one"},
    {.key = "ratio", .kind = JSON_REAL, .offset = offsetof(struct thing, ratio)},
    {.key = "on", .kind = JSON_BOOL, .offset = offsetof(struct thing, is_on)},
    {.key = "best", .kind = JSON_REAL, .offset = offsetof(struct thing, best),
     .flags = JSON_NULLABLE, .flag_offset = offsetof(struct thing, has_best)},
    {.key = "points", .kind = JSON_ARRAY, .offset = offsetof(struct thing, points),
     .flag_offset = offsetof(struct thing, n_points), .sub = &points, .flags = JSON_OPTIONAL},
};
static const struct json_table thing = JSON_TABLE(JSON_SHAPE_OBJECT, thing_fields);

/* text read by the table: 0, or the message in *msg (a static buffer). */
static int read_thing(const char *text, struct thing *t, const char **msg)
{
    static struct err e;
    memset(&e, 0, sizeof e);
    memset(t, 0, sizeof *t);
    cJSON *j = NULL;
    int rc = json_parse(text, strlen(text), "t.json", &j, &e);
    struct json_at top = {.file = "t.json", .e = &e};
    if (rc == 0) rc = json_read_fields(j, &top, t, &thing, NULL);
    cJSON_Delete(j);
    *msg = e.msg;
    return rc;
}

Test(json_fields, one_table_writes_what_it_reads)
{
    struct point pts[] = {{0, 2.5}, {10, NAN}};
    struct thing a = {.count = 4, .ratio = 0.5, .is_on = true, .points = pts, .n_points = 2};
    cJSON *j = json_write_fields(&a, &thing);
    cr_assert_not_null(j);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    /* keys in the table's order; NaN and an absent nullable as null */
    cr_expect_str_eq(text, "{\"strata_thing\":3,\"count\":4,\"ratio\":0.5,\"on\":true,"
                           "\"best\":null,\"points\":[[0,2.5],[10,null]]}");
    struct thing b;
    const char *msg;
    cr_assert_eq(read_thing(text, &b, &msg), 0, "%s", msg);
    cr_expect_eq(b.count, 4);
    cr_expect_eq(b.ratio, 0.5);
    cr_expect(b.is_on);
    cr_expect(!b.has_best);
    cr_assert_eq(b.n_points, 2);
    cr_expect_eq(b.points[1].step, 10);
    cr_expect(isnan(b.points[1].value));
    free(b.points);
    cJSON_free(text);
}

Test(json_fields, bad_values_are_named)
{
    struct thing t;
    const char *msg;
    /* a version below this strata's was said to be a newer strata's */
    cr_expect_eq(read_thing("{\"strata_thing\": 2}", &t, &msg), ERR_INPUT);
    cr_expect_str_eq(msg, "t.json: \"strata_thing\" is 2: this strata reads version 3 "
                          "(an older strata wrote it: make it again with this one)");
    cr_expect_eq(read_thing("{\"strata_thing\": 4}", &t, &msg), ERR_INPUT);
    cr_expect_str_eq(msg, "t.json: \"strata_thing\" is 4: this strata reads version 3 "
                          "(a newer strata wrote it?)");
    cr_expect_eq(read_thing("{\"strata_thing\": 0}", &t, &msg), ERR_INPUT);
    cr_expect_str_eq(msg, "t.json: \"strata_thing\" is 0: this strata reads version 3 "
                          "(no strata writes that version)");
    cr_expect_eq(read_thing("{\"strata_thing\": 3, \"count\": 0}", &t, &msg), ERR_INPUT);
    cr_expect_str_eq(msg, "t.json: \"count\" is 0: a thing counts at least one");
    cr_expect_eq(read_thing("{\"strata_thing\": 3, \"count\": 1, \"ratio\": 1}", &t, &msg),
                 ERR_INPUT);
    cr_expect_str_eq(msg, "t.json: \"on\" is missing (not a strata report?)");
    cr_expect_eq(read_thing("{\"strata_thing\": 3, \"count\": 1, \"ratio\": 1, \"on\": 1}", &t,
                            &msg), ERR_INPUT);
    cr_expect_str_eq(msg, "t.json: \"on\" is a number, not true or false");
    cr_expect_eq(read_thing("{\"strata_thing\": 3, \"count\": 1, \"ratio\": 1, \"on\": false, "
                            "\"best\": 2, \"points\": [[1, 2, 3]]}", &t, &msg), ERR_INPUT);
    cr_expect_str_eq(msg, "t.json: \"points[0]\" is not a [step, value] pair");
    free(t.points);
    cr_expect_eq(read_thing("{\"strata_thing\": 3, \"count\": 1, \"ratio\": 1, \"on\": false, "
                            "\"best\": 2}", &t, &msg), 0, "%s", msg);
    cr_expect(t.has_best && t.best == 2, "a nullable that is there");
    cr_expect_eq(t.n_points, 0, "an optional that is not");
}

Test(json_doc, syntax_errors_say_where)
{
    cJSON *j = NULL;
    struct err e = {0};
    cr_expect_eq(json_parse("{\n  \"a\": ]", 10, "x.json", &j, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "x.json:2:"), "%s", e.msg);
    cr_expect_null(j);
}

/* Tests for core/trace.c: what the trace keeps and drops, and the Chrome
 * trace-event file read back with cJSON. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../core/trace.h"

static struct span span_at(int rank, int stream, int kind, int step, double start_s,
                           double end_s)
{
    return (struct span){
        .rank = rank, .stream = (int16_t)stream, .kind = (int16_t)kind, .step = step,
        .mb = -1, .peer = -1, .start_s = start_s, .end_s = end_s,
        .version_read = -1, .version_applied = -1,
    };
}

static struct span step_span(int step)
{
    return span_at(0, STREAM_COMPUTE, OP_FORWARD, step, step, step + 1);
}

Test(trace, keeps_only_the_first_steps)
{
    struct trace t;
    trace_init(&t, 2, 1000);
    for (int step = 0; step < 5; step++)
        for (int k = 0; k < 3; k++) {
            struct span s = step_span(step);
            cr_assert_eq(trace_add(&t, &s), 0);
        }
    /* steps 0 and 1 kept (3 spans each), steps 2-4 dropped */
    cr_assert_eq(t.spans.len, 6);
    cr_assert_eq(t.n_dropped, 9);
    for (size_t i = 0; i < t.spans.len; i++) cr_assert_lt(t.spans.items[i].step, 2);
    trace_release(&t);
    cr_assert_eq(t.spans.len, 0);
    trace_release(&t);   /* twice is harmless */
}

Test(trace, keeps_at_most_max_spans)
{
    struct trace t;
    trace_init(&t, -1, 4);
    for (int step = 0; step < 10; step++) {
        struct span s = step_span(step);
        cr_assert_eq(trace_add(&t, &s), 0);
    }
    /* every step qualifies; the first 4 spans are kept, 6 counted */
    cr_assert_eq(t.spans.len, 4);
    cr_assert_eq(t.n_dropped, 6);
    for (int i = 0; i < 4; i++) cr_assert_eq(t.spans.items[i].step, i);
    trace_release(&t);
}

Test(trace, both_limits_at_once)
{
    struct trace t;
    trace_init(&t, 3, 2);
    for (int step = 0; step < 4; step++) {
        struct span s = step_span(step);
        trace_add(&t, &s);
    }
    cr_assert_eq(t.spans.len, 2);    /* steps 0, 1 */
    cr_assert_eq(t.n_dropped, 2);    /* step 2 (full), step 3 (late) */
    trace_release(&t);
}

Test(trace, keep_everything)
{
    struct trace t;
    trace_init(&t, -1, -1);
    for (int step = 0; step < 100; step++) {
        struct span s = step_span(step);
        cr_assert_eq(trace_add(&t, &s), 0);
    }
    cr_assert_eq(t.spans.len, 100);
    cr_assert_eq(t.n_dropped, 0);
    trace_release(&t);
}

/* --- Chrome JSON --------------------------------------------------------- */

/* The whole number at o.key (pid, tid, bytes, versions). */
static int num(const cJSON *o, const char *key)
{
    return (int)num_at(o, key, NULL);
}

/* The metadata event (name `what`) for pid/tid, or NULL. */
static const cJSON *find_metadata(const cJSON *events, const char *what, int pid, int tid)
{
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        if (strcmp(str_at(ev, "ph"), "M") == 0 && strcmp(str_at(ev, "name"), what) == 0 &&
            num(ev, "pid") == pid && (tid < 0 || num(ev, "tid") == tid))
            return ev;
    }
    return NULL;
}

static const char *metadata_name(const cJSON *events, const char *what, int pid, int tid)
{
    const cJSON *ev = find_metadata(events, what, pid, tid);
    cr_assert_not_null(ev, "no %s for pid %d tid %d", what, pid, tid);
    return str_at(cJSON_GetObjectItemCaseSensitive(ev, "args"), "name");
}

/* A complete event's name, category, process (rank), thread (stream), start
 * and duration in microseconds; its args. */
static const cJSON *expect_span_event(const cJSON *x, const char *name, const char *cat, int pid,
                                      int tid, double ts_us, double dur_us)
{
    cr_assert_str_eq(str_at(x, "name"), name);
    cr_assert_str_eq(str_at(x, "cat"), cat);
    cr_assert_eq(num(x, "pid"), pid, "%s", name);
    cr_assert_eq(num(x, "tid"), tid, "%s", name);
    cr_assert_eq(num_at(x, "ts", NULL), ts_us, "%s", name);
    cr_assert_eq(num_at(x, "dur", NULL), dur_us, "%s", name);
    return cJSON_GetObjectItemCaseSensitive(x, "args");
}

/* t written by trace_write_chrome (which must succeed) and read back. */
static cJSON *chrome_json(const struct trace *t, const struct plan *p)
{
    char path[] = "/tmp/strata-trace-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    struct err e = {0};
    cr_assert_eq(trace_write_chrome(t, p, NULL, path, &e), 0, "%s", e.msg);
    cJSON *doc = read_json(path);
    unlink(path);
    return doc;
}

Test(trace, chrome_json_reads_back)
{
    struct workload *wl = test_workload("mlp:8-8-8");
    struct err e = {0};
    struct plan *p = plan_create("test", wl, 2, 1, 4, 1, &e);   /* ranks 0, 1 work; 2 serves */
    cr_assert_not_null(p, "%s", e.msg);

    struct trace t;
    trace_init(&t, 1, 100);
    struct span fwd = span_at(0, STREAM_COMPUTE, OP_FORWARD, 0, 0.5, 0.75);
    fwd.mb = 3;
    fwd.lo = 0;
    fwd.hi = 2;
    fwd.flops = 1e6;
    fwd.bytes = 4096;
    struct span push = span_at(1, STREAM_COMM, OP_PUSH, 0, 1.25, 2.0);
    push.lo = 0;
    push.hi = 2;
    push.peer = 2;
    push.bytes = 1 << 20;
    push.version_read = 4;
    push.version_applied = 6;
    struct span late = span_at(0, STREAM_COMPUTE, OP_BACKWARD, 1, 3, 4);   /* step 1: dropped */
    cr_assert_eq(trace_add(&t, &fwd), 0);
    cr_assert_eq(trace_add(&t, &push), 0);
    cr_assert_eq(trace_add(&t, &late), 0);
    cr_assert_eq(t.n_dropped, 1);

    cJSON *doc = chrome_json(&t, p);
    cr_assert_str_eq(str_at(doc, "displayTimeUnit"), "ms");
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
    cr_assert(cJSON_IsArray(events));

    /* processes are ranks, threads are streams; servers have no streams */
    cr_assert_str_eq(metadata_name(events, "process_name", 0, -1), "rank 0 (worker)");
    cr_assert_str_eq(metadata_name(events, "process_name", 1, -1), "rank 1 (worker)");
    cr_assert_str_eq(metadata_name(events, "process_name", 2, -1), "rank 2 (server)");
    for (int r = 0; r < 2; r++) {
        cr_assert_str_eq(metadata_name(events, "thread_name", r, STREAM_COMPUTE), "compute");
        cr_assert_str_eq(metadata_name(events, "thread_name", r, STREAM_COMM), "comm");
    }
    cr_assert_null(find_metadata(events, "thread_name", 2, -1));

    /* one complete event per kept span, in microseconds */
    const cJSON *x[2];
    int n_x = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        if (strcmp(str_at(ev, "ph"), "X") == 0) {
            cr_assert_lt(n_x, 2, "more X events than kept spans");
            x[n_x++] = ev;
        }
    }
    cr_assert_eq(n_x, 2);

    /* 0.5 s and 0.25 s: exact in binary, so exact in microseconds */
    const cJSON *args = expect_span_event(x[0], "FORWARD", "compute", 0, STREAM_COMPUTE,
                                          500000.0, 250000.0);
    cr_assert_str_eq(str_at(args, "layers"), "[0,2)");
    cr_assert_eq(num(args, "mb"), 3);
    cr_assert_eq(num(args, "bytes"), 4096);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(args, "flops")->valuedouble, 1e6);
    cr_assert_eq(num(args, "step"), 0);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(args, "version_read"));
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(args, "version_applied"));

    args = expect_span_event(x[1], "PUSH", "comm", 1, STREAM_COMM, 1250000.0, 750000.0);
    cr_assert_eq(num(args, "version_read"), 4);
    cr_assert_eq(num(args, "version_applied"), 6);
    cr_assert_eq(num(args, "bytes"), 1 << 20);
    cr_assert_eq(num(args, "peer"), 2);

    cJSON_Delete(doc);
    trace_release(&t);
    plan_free(p);
    workload_free(wl);
}

Test(trace, chrome_json_of_an_empty_trace)
{
    struct trace t;
    trace_init(&t, -1, -1);
    cJSON *doc = chrome_json(&t, NULL);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "traceEvents")), 0);
    cJSON_Delete(doc);
}

Test(trace, chrome_json_refuses_a_bad_op_kind_and_reports_bad_paths)
{
    struct err e = {0};
    struct trace t;
    trace_init(&t, -1, -1);
    struct span s = span_at(0, STREAM_COMPUTE, OP_N_KINDS, 0, 0, 1);
    cr_assert_eq(trace_add(&t, &s), 0);
    cr_assert_eq(trace_write_chrome(&t, NULL, NULL, "/tmp/strata-never-written.json", &e), ERR_INPUT);
    cr_assert(strstr(e.msg, "op kind"), "%s", e.msg);
    cr_assert_eq(access("/tmp/strata-never-written.json", F_OK), -1);

    t.spans.items[0].kind = OP_FORWARD;
    e = (struct err){0};
    cr_assert_eq(trace_write_chrome(&t, NULL, NULL, "/nonexistent-dir/trace.json", &e), ERR_INPUT);
    cr_assert(strstr(e.msg, "does not exist"), "%s", e.msg);
    trace_release(&t);
}

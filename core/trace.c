/* The kept trace and its Chrome trace-event writer. Format: the "JSON
 * Object Format" of the Trace Event Format document (Google, 2016): an
 * object with "traceEvents", complete events ("ph": "X") with "ts" and
 * "dur" in microseconds, and metadata events ("ph": "M") naming processes
 * (our ranks) and threads (our streams). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_doc.h"
#include "plan_json.h"
#include "report.h"
#include "trace.h"

#define US_PER_S 1e6

void trace_init(struct trace *t, int32_t keep_steps, int64_t max_spans)
{
    memset(t, 0, sizeof *t);
    t->keep_steps = keep_steps;
    t->max_spans = max_spans;
}

void trace_release(struct trace *t)
{
    if (!t) return;
    vec_free(&t->spans);
    t->n_dropped = 0;
}

/* keep_steps -1 keeps every step; a negative max_spans likewise sets no
 * limit, so "unbounded" reads the same in both. */
int trace_add(struct trace *t, const struct span *s)
{
    if (!trace_keeps(t, s->step)) {
        t->n_dropped++;
        return 0;
    }
    return vec_push(&t->spans, *s);
}

/* --- Chrome trace-event JSON ---------------------------------------------
 * cJSON_Add* calls are not checked one by one: a failed one leaves an item
 * out, and every object made here is counted in *ok, so the writer checks
 * once (the idiom of report.c). */

static cJSON *add_item(cJSON *array, cJSON *item, bool *ok)
{
    if (!item || !cJSON_AddItemToArray(array, item)) {
        cJSON_Delete(item);
        *ok = false;
        return NULL;
    }
    return item;
}

/* {"name": what, "ph": "M", "pid": pid, "tid": tid, "args": {"name": value}} */
static void add_metadata(cJSON *events, const char *what, int pid, int tid, const char *value,
                         bool *ok)
{
    cJSON *m = add_item(events, cJSON_CreateObject(), ok);
    if (!m) return;
    cJSON *args = cJSON_CreateObject();
    bool added = cJSON_AddStringToObject(m, "name", what) && cJSON_AddStringToObject(m, "ph", "M") &&
                 cJSON_AddNumberToObject(m, "pid", pid) && cJSON_AddNumberToObject(m, "tid", tid) &&
                 args && cJSON_AddItemToObject(m, "args", args);
    if (!added) {
        cJSON_Delete(args);
        *ok = false;
        return;
    }
    if (!cJSON_AddStringToObject(args, "name", value)) *ok = false;
}

/* One complete event for span s. */
static void add_span(cJSON *events, const struct span *s, bool *ok)
{
    cJSON *x = add_item(events, cJSON_CreateObject(), ok);
    if (!x) return;
    char layers[32];
    snprintf(layers, sizeof layers, "[%d,%d)", (int)s->lo, (int)s->hi);
    cJSON *args = cJSON_CreateObject();
    bool added =
        cJSON_AddStringToObject(x, "name", op_infos[s->kind].name) &&
        cJSON_AddStringToObject(x, "cat", plan_stream_name(s->stream)) &&
        cJSON_AddStringToObject(x, "ph", "X") &&
        cJSON_AddNumberToObject(x, "ts", s->start_s * US_PER_S) &&
        cJSON_AddNumberToObject(x, "dur", (s->end_s - s->start_s) * US_PER_S) &&
        cJSON_AddNumberToObject(x, "pid", s->rank) && cJSON_AddNumberToObject(x, "tid", s->stream) &&
        args && cJSON_AddItemToObject(x, "args", args);
    if (!added) {
        cJSON_Delete(args);
        *ok = false;
        return;
    }
    added = cJSON_AddStringToObject(args, "layers", layers) &&
            cJSON_AddNumberToObject(args, "mb", s->mb) &&
            cJSON_AddNumberToObject(args, "bytes", (double)s->bytes) &&
            cJSON_AddNumberToObject(args, "flops", s->flops) &&
            (s->peer < 0 || cJSON_AddNumberToObject(args, "peer", s->peer)) &&
            (s->version_read < 0 ||
             cJSON_AddNumberToObject(args, "version_read", (double)s->version_read)) &&
            (s->version_applied < 0 ||
             cJSON_AddNumberToObject(args, "version_applied", (double)s->version_applied)) &&
            cJSON_AddNumberToObject(args, "step", s->step) &&
            cJSON_AddNumberToObject(args, "op", s->op);
    if (!added) *ok = false;
}

/* [ { "host": name, "processes": ranks on it, "cores": its cores }, ... ]
 * in the order of each host's first rank: O(ranks x hosts), as the
 * report's host map. */
static cJSON *hosts_json(const struct rank_host *h, int n, bool *ok)
{
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; list && *ok && i < n; i++) {
        bool is_seen = false;
        for (int k = 0; k < i && !is_seen; k++) is_seen = !strcmp(h[k].name, h[i].name);
        if (is_seen) continue;
        int processes = 0;
        for (int k = i; k < n; k++) processes += !strcmp(h[k].name, h[i].name);
        cJSON *x = json_add(list, NULL, cJSON_CreateObject(), ok);
        json_add(x, "host", cJSON_CreateString(h[i].name), ok);
        json_add(x, "processes", cJSON_CreateNumber(processes), ok);
        json_add(x, "cores", cJSON_CreateNumber(h[i].cores), ok);
    }
    if (!list) *ok = false;
    return list;
}

/* The keys replay reads (docs/trace-format.md); viewers skip them. */
static void add_scenario(cJSON *doc, const struct trace *t, const struct plan *p,
                         const struct trace_scenario *sc, bool *ok)
{
    json_add(doc, "strata_trace", cJSON_CreateNumber(TRACE_FORMAT_VERSION), ok);
    json_add(doc, "mode", cJSON_CreateString(sc->mode ? sc->mode : "sim"), ok);
    json_add(doc, "strategy", cJSON_CreateString(p ? p->strategy : ""), ok);
    json_add(doc, "steps", cJSON_CreateNumber((double)sc->steps), ok);
    json_add(doc, "ranks", cJSON_CreateNumber(p ? p->n_ranks : 0), ok);
    json_add(doc, "workers", cJSON_CreateNumber(p ? p->n_workers : 0), ok);
    json_add(doc, "dropped_spans", cJSON_CreateNumber((double)t->n_dropped), ok);
    json_add(doc, "scenario", report_config_to_json(sc->cfg, sc->config_groups), ok);
    if (sc->hosts && sc->n_hosts > 0) json_add(doc, "hosts", hosts_json(sc->hosts, sc->n_hosts, ok), ok);
    if (sc->has_clock_error) json_add(doc, "clock_error_s", cJSON_CreateNumber(sc->clock_error_s), ok);
}

int trace_write_chrome(const struct trace *t, const struct plan *p,
                       const struct trace_scenario *sc, const char *path, struct err *e)
{
    for (size_t i = 0; i < t->spans.len; i++) {
        const struct span *s = &t->spans.items[i];
        if (s->kind < 0 || s->kind >= OP_N_KINDS || s->stream < 0 ||
            s->stream >= PLAN_N_STREAMS)
            return err_set(e, ERR_INPUT,
                           "cannot write the trace '%s': span %zu (rank %d) has op kind %d "
                           "and stream %d (0 to %d and 0 to %d)",
                           path, i, (int)s->rank, (int)s->kind, (int)s->stream, OP_N_KINDS - 1,
                           PLAN_N_STREAMS - 1);
    }

    bool ok = true;
    cJSON *doc = cJSON_CreateObject();
    cJSON *events = doc ? cJSON_AddArrayToObject(doc, "traceEvents") : NULL;
    if (!events || !cJSON_AddStringToObject(doc, "displayTimeUnit", "ms")) ok = false;
    if (ok && sc) add_scenario(doc, t, p, sc, &ok);

    /* Metadata first: viewers label a rank and its streams however early
     * or late its first span comes. Servers run no streams of ours. */
    for (int r = 0; ok && p && r < p->n_ranks; r++) {
        bool is_server = p->ranks[r].is_server;
        char name[48];
        snprintf(name, sizeof name, "rank %d (%s)", r, is_server ? "server" : "worker");
        add_metadata(events, "process_name", r, 0, name, &ok);
        for (int st = 0; !is_server && st < PLAN_N_STREAMS; st++)
            add_metadata(events, "thread_name", r, st, plan_stream_name(st), &ok);
    }
    for (size_t i = 0; ok && i < t->spans.len; i++) add_span(events, &t->spans.items[i], &ok);

    if (!ok) {
        cJSON_Delete(doc);
        return err_set(e, ERR_NOMEM, "cannot write the trace '%s': out of memory building "
                       "the JSON (%zu spans; keep fewer steps)", path, t->spans.len);
    }
    /* Compact: a trace can hold millions of events. */
    return json_write_atomic_as(doc, JSON_COMPACT, path, e);
}

/* A strata trace read back (trace_read.h): the top-level keys replay needs
 * and one span per complete event. Events of other phases (the metadata
 * naming ranks and streams, or what a viewer added) are skipped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_doc.h"
#include "plan.h"
#include "report.h"
#include "trace_read.h"

#define US_PER_S 1e6
/* Ranks and steps fit the span's int32 fields with room to spare. */
#define TRACE_MAX_RANKS (1 << 24)
#define TRACE_MAX_INDEX ((int64_t)INT32_MAX)

void trace_doc_release(struct trace_doc *d)
{
    if (!d) return;
    trace_release(&d->trace);
    memset(d, 0, sizeof *d);
}

/* parent's member at->key, or NULL after saying it is missing (json_need's
 * hint is about reports). type: a cJSON type the member must have, or 0. */
static const cJSON *member(const cJSON *parent, const struct json_at *at, int type)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(parent, at->key);
    if (!v) {
        json_bad(at, "is missing (docs/trace-format.md lists what a strata trace holds)");
        return NULL;
    }
    if (type && !(v->type & type)) {
        json_bad(at, "is %s, not %s", json_type_name(v),
                 type == cJSON_Object ? "an object" : "an array");
        return NULL;
    }
    return v;
}

/* parent[key] as a whole number in [0, max]. */
static int need_whole(const cJSON *parent, const struct json_at *up, const char *key,
                      int64_t max, int64_t *out)
{
    struct json_at at = json_key(up, key);
    const cJSON *v = member(parent, &at, 0);
    if (!v) return ERR_INPUT;
    return json_as_whole(v, &at, max, out);
}

/* parent[key] as a string of at most n - 1 characters, into buf. */
static int need_string(const cJSON *parent, const struct json_at *up, const char *key,
                       char *buf, size_t n)
{
    struct json_at at = json_key(up, key);
    const cJSON *v = member(parent, &at, 0);
    if (!v) return ERR_INPUT;
    if (!cJSON_IsString(v)) return json_bad(&at, "is %s, not a string", json_type_name(v));
    size_t len = strlen(v->valuestring);
    if (len >= n) return json_bad(&at, "has %zu characters, at most %zu", len, n - 1);
    memcpy(buf, v->valuestring, len + 1);
    return 0;
}

/* v (at) as a finite real number >= 0; what: the quantity with its unit,
 * for the message ("a time of 0 or more seconds"). */
static int nonneg_real(const cJSON *v, const struct json_at *at, const char *what, double *out)
{
    TRY(json_as_real(v, at, out));
    if (!(isfinite(*out) && *out >= 0)) return json_bad(at, "is %g, not %s", *out, what);
    return 0;
}

/* The largest ts or dur read, microseconds. A replay adds up a rank's
 * spans (a document of JSON_DOC_MAX_BYTES holds fewer than 3e6 of them),
 * and ts + dur is a span's end: below 1e300 each, every such sum stays far
 * from the 1.8e308 where doubles end (ts = dur = 1e308 made an end of inf
 * and a replay that failed without saying why). Runs strata writes stay
 * far below it too: the simulator's op times are under ~1e36 us
 * (sim/cluster.c's bounds). */
#define TRACE_MAX_TIME_US 1e300

/* parent[key] as a time of 0 to TRACE_MAX_TIME_US microseconds (the
 * trace-event unit). */
static int need_time(const cJSON *parent, const struct json_at *up, const char *key, double *out)
{
    static const char what[] = "a time of 0 to 1e300 microseconds";
    struct json_at at = json_key(up, key);
    const cJSON *v = member(parent, &at, 0);
    if (!v) return ERR_INPUT;
    TRY(nonneg_real(v, &at, what, out));
    if (*out > TRACE_MAX_TIME_US) return json_bad(&at, "is %g, not %s", *out, what);
    return 0;
}

/* parent[key] as nonneg_real when present; absent, *out keeps its default. */
static int opt_nonneg_real(const cJSON *parent, const struct json_at *up, const char *key,
                           const char *what, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(parent, key);
    if (!v) return 0;
    struct json_at at = json_key(up, key);
    return nonneg_real(v, &at, what, out);
}

/* A whole number of [lo, hi] that may be absent (then def). */
static int opt_int(const cJSON *parent, const struct json_at *up, const char *key, int64_t lo,
                   int64_t hi, int64_t def, int64_t *out)
{
    struct json_at at = json_key(up, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(parent, key);
    *out = def;
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return json_bad(&at, "is not a whole number of %lld to %lld", (long long)lo,
                        (long long)hi);
    *out = (int64_t)v->valuedouble;
    return 0;
}

static int kind_of(const char *name)
{
    for (int k = 0; k < OP_N_KINDS; k++)
        if (!strcmp(op_infos[k].name, name)) return k;
    return -1;
}

/* "[lo,hi)" as the writer prints it, 0 <= lo <= hi. */
static int read_layers(const cJSON *args, const struct json_at *up, struct span *s)
{
    char text[40];
    TRY(need_string(args, up, "layers", text, sizeof text));
    int lo = -1, hi = -1, used = 0;
    if (sscanf(text, "[%d,%d)%n", &lo, &hi, &used) != 2 || text[used] != '\0' || lo < 0 ||
        hi < lo) {
        struct json_at at = json_key(up, "layers");
        return json_bad(&at, "is \"%s\", not layers \"[lo,hi)\" with 0 <= lo <= hi", text);
    }
    s->lo = lo;
    s->hi = hi;
    return 0;
}

/* One complete event ev (at) as a span of a run of n_ranks ranks. */
static int read_span(const cJSON *ev, const struct json_at *at, int n_ranks, struct span *s)
{
    char name[32];
    memset(s, 0, sizeof *s);
    TRY(need_string(ev, at, "name", name, sizeof name));
    int kind = kind_of(name);
    if (kind < 0) {
        struct json_at k = json_key(at, "name");
        return json_bad(&k, "is \"%s\", not an op kind (FORWARD, BACKWARD, SEND, ...)", name);
    }
    s->kind = (int16_t)kind;
    int64_t pid, tid, v;
    TRY(need_whole(ev, at, "pid", n_ranks - 1, &pid));
    TRY(need_whole(ev, at, "tid", PLAN_N_STREAMS - 1, &tid));
    s->rank = (int32_t)pid;
    s->stream = (int16_t)tid;
    double ts_us, dur_us;
    TRY(need_time(ev, at, "ts", &ts_us));
    TRY(need_time(ev, at, "dur", &dur_us));
    s->start_s = ts_us / US_PER_S;
    s->end_s = (ts_us + dur_us) / US_PER_S;

    struct json_at args_at = json_key(at, "args");
    const cJSON *args = member(ev, &args_at, cJSON_Object);
    if (!args) return ERR_INPUT;
    TRY(need_whole(args, &args_at, "step", TRACE_MAX_INDEX, &v));
    s->step = (int32_t)v;
    /* -1: a parameter server's update, no op of the plan (real/ps_server.c) */
    struct json_at op_at = json_key(&args_at, "op");
    if (!member(args, &op_at, 0)) return ERR_INPUT;
    TRY(opt_int(args, &args_at, "op", -1, TRACE_MAX_INDEX, -1, &v));
    s->op = (int32_t)v;
    TRY(opt_int(args, &args_at, "mb", -1, TRACE_MAX_INDEX, -1, &v));
    s->mb = (int32_t)v;
    TRY(read_layers(args, &args_at, s));
    TRY(opt_int(args, &args_at, "peer", -1, TRACE_MAX_RANKS, -1, &v));
    s->peer = (int32_t)v;
    TRY(opt_int(args, &args_at, "bytes", 0, JSON_WHOLE_MAX, 0, &s->bytes));
    TRY(opt_int(args, &args_at, "version_read", -1, JSON_WHOLE_MAX, -1, &s->version_read));
    TRY(opt_int(args, &args_at, "version_applied", -1, JSON_WHOLE_MAX, -1, &s->version_applied));
    /* absent: 0, as the memset left it */
    return opt_nonneg_real(args, &args_at, "flops", "a count of 0 or more", &s->flops);
}

/* "hosts" (optional: simulated runs and older traces have none): the most
 * crowded host, by processes per core, into d. */
static int read_hosts(const cJSON *root, const struct json_at *top, struct trace_doc *d)
{
    struct json_at at = json_key(top, "hosts");
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(root, "hosts");
    if (!hosts) return 0;
    if (!cJSON_IsArray(hosts)) return json_bad(&at, "is %s, not an array", json_type_name(hosts));
    int i = 0;
    for (const cJSON *h = hosts->child; h; h = h->next, i++) {
        struct json_at h_at = json_index(&at, i);
        if (!cJSON_IsObject(h)) return json_bad(&h_at, "is %s, not an object", json_type_name(h));
        char name[REPORT_HOST_BYTES];
        int64_t processes, cores;
        TRY(need_string(h, &h_at, "host", name, sizeof name));
        TRY(need_whole(h, &h_at, "processes", d->n_ranks, &processes));
        TRY(need_whole(h, &h_at, "cores", INT32_MAX, &cores));
        d->n_hosts++;
        /* processes / cores above the crowded one's, compared without division */
        if (cores > 0 && (d->crowded_cores == 0 ||
                          processes * d->crowded_cores > (int64_t)d->crowded_processes * cores)) {
            d->crowded_processes = (int)processes;
            d->crowded_cores = (int)cores;
        }
    }
    return 0;
}

static int read_header(const cJSON *root, const struct json_at *top, struct trace_doc *d)
{
    struct json_at tag = json_key(top, "strata_trace");
    if (!cJSON_GetObjectItemCaseSensitive(root, "strata_trace"))
        return json_bad(top, "has no \"strata_trace\": it is not a trace strata wrote with its "
                        "scenario (write one with `strata real --trace FILE` or `strata sim "
                        "--trace FILE`)");
    TRY(json_read_version(root, top, "strata_trace", TRACE_FORMAT_VERSION));
    (void)tag;
    TRY(need_string(root, top, "mode", d->mode, sizeof d->mode));
    if (strcmp(d->mode, "sim") && strcmp(d->mode, "real")) {
        struct json_at m = json_key(top, "mode");
        return json_bad(&m, "is \"%s\", not \"sim\" or \"real\"", d->mode);
    }
    TRY(need_string(root, top, "strategy", d->strategy, sizeof d->strategy));
    int64_t v;
    TRY(need_whole(root, top, "steps", TRACE_MAX_INDEX, &d->steps));
    TRY(need_whole(root, top, "ranks", TRACE_MAX_RANKS, &v));
    d->n_ranks = (int)v;
    TRY(need_whole(root, top, "workers", d->n_ranks, &v));
    d->n_workers = (int)v;
    TRY(need_whole(root, top, "dropped_spans", JSON_WHOLE_MAX, &d->n_dropped));
    if (d->steps < 1 || d->n_workers < 1)
        return json_bad(top, "ran %lld steps on %d workers: nothing to replay",
                        (long long)d->steps, d->n_workers);
    TRY(read_hosts(root, top, d));
    /* "clock_error_s" is optional: simulated runs and older traces have none */
    d->clock_error_s = -1;
    TRY(opt_nonneg_real(root, top, "clock_error_s", "a time of 0 or more seconds",
                        &d->clock_error_s));
    struct json_at sc_at = json_key(top, "scenario");
    const cJSON *sc = member(root, &sc_at, 0);
    if (!sc) return ERR_INPUT;
    TRY(report_config_from_json(sc, &sc_at, &d->cfg, &d->config_groups));
    /* the scenario and the header are written from one run: apart, the
     * file was edited or damaged, and neither can be trusted */
    if (strcmp(d->cfg.strategy, d->strategy)) {
        struct json_at at = json_key(&sc_at, "strategy");
        return json_bad(&at, "is \"%s\", but the trace is of %s: it is damaged",
                        d->cfg.strategy, d->strategy);
    }
    return 0;
}

/* The header and spans of root (named name in messages) into out, an empty
 * document with its trace initialised; deletes root. */
static int doc_of(cJSON *root, const char *name, struct trace_doc *out, struct err *e)
{
    struct json_at top = {.file = name, .e = e};
    int rc = 0;
    if (!cJSON_IsObject(root))
        rc = json_bad(&top, "is %s, not an object with \"traceEvents\"", json_type_name(root));
    if (rc == 0) rc = read_header(root, &top, out);
    struct json_at ev_at = json_key(&top, "traceEvents");
    const cJSON *events = rc == 0 ? member(root, &ev_at, cJSON_Array) : NULL;
    if (rc == 0 && !events) rc = ERR_INPUT;
    int i = 0;
    for (const cJSON *ev = events ? events->child : NULL; rc == 0 && ev; ev = ev->next, i++) {
        struct json_at at = json_index(&ev_at, i);
        if (!cJSON_IsObject(ev)) {
            rc = json_bad(&at, "is %s, not an event object", json_type_name(ev));
            break;
        }
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
        if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X")) continue;
        struct span s;
        rc = read_span(ev, &at, out->n_ranks, &s);
        if (rc == 0) rc = trace_add(&out->trace, &s);
        if (rc < 0 && rc != ERR_INPUT) rc = err_set(e, rc, "%s: out of memory reading span %d", name, i);
    }
    cJSON_Delete(root);
    return rc;
}

int trace_doc_parse(const char *text, size_t len, const char *name, struct trace_doc *out,
                    struct err *e)
{
    memset(out, 0, sizeof *out);
    trace_init(&out->trace, -1, -1);
    cJSON *root = NULL;
    TRY(json_parse(text, len, name, &root, e));
    return doc_of(root, name, out, e);
}

int trace_doc_read(const char *path, struct trace_doc *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    trace_init(&out->trace, -1, -1);
    cJSON *root = NULL;
    TRY(json_parse_file(path, &root, e));
    return doc_of(root, path, out, e);
}

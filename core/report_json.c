/* A report as JSON, both ways: the one table that names each field of the
 * contract (ARCHITECTURE.md, Reports) drives the writer and the reader.
 *
 * The reader accepts what the writer writes and nothing looser: every field
 * present and typed, counts whole and non-negative, numbers finite; where
 * the writer would print nonsense it was handed (no devices, a strategy
 * name of control characters) the reader is a little stricter. The writer
 * forces one allowance: it writes a non-finite double as null, so null in a
 * real field reads back as NaN (NaN and ±inf are folded together, in the
 * file and so in the round trip). */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failure_policy.h"
#include "json_doc.h"
#include "report.h"
#include "straggler_detect.h"

/* config_set with every group: a report's config may hold any option. */
#define ALL_GROUPS (~0u)

/* --- mode and strategy ------------------------------------------------------ */

static int read_mode(const cJSON *v, const struct json_at *at, void *base, void *ctx)
{
    (void)ctx;
    struct report *r = base;
    if (!cJSON_IsString(v))
        return json_bad(at, "is %s, not \"sim\" or \"real\"", json_type_name(v));
    if (!strcmp(v->valuestring, "sim")) r->mode = "sim";
    else if (!strcmp(v->valuestring, "real")) r->mode = "real";
    else return json_bad(at, "is \"%.40s\", not \"sim\" or \"real\"", v->valuestring);
    return 0;
}

static cJSON *write_mode(const void *base)
{
    const struct report *r = base;
    return r->mode ? cJSON_CreateString(r->mode) : cJSON_CreateNull();
}

/* Registry names use letters, digits and '-' ('_' and '.' are as harmless).
 * Holding names read back to that keeps report_write_csv's promise that
 * nothing needs quoting, and control characters off the terminal. */
static int read_strategy(const cJSON *v, const struct json_at *at, void *base, void *ctx)
{
    (void)ctx;
    struct report *r = base;
    if (!cJSON_IsString(v)) return json_bad(at, "is %s, not a string", json_type_name(v));
    const char *s = v->valuestring;
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof r->strategy)
        return json_bad(at, "has %zu characters, not 1 to %zu", n, sizeof r->strategy - 1);
    static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.";
    if (strspn(s, ok) != n)
        return json_bad(at, "is \"%s\": a strategy name has only letters, digits, '-', '_' "
                        "and '.'", s);
    memcpy(r->strategy, s, n + 1);
    return 0;
}

/* The strategy field may lack its NUL when full. */
static cJSON *write_strategy(const void *base)
{
    const struct report *r = base;
    char buf[sizeof r->strategy + 1];
    size_t n = strnlen(r->strategy, sizeof r->strategy);
    memcpy(buf, r->strategy, n);
    buf[n] = '\0';
    return cJSON_CreateString(buf);
}

/* --- config ------------------------------------------------------------------- */

/* One option's value, typed: config_format gives text, the option's type
 * says what JSON type it is. Text that does not parse as its type (which
 * config validation should make impossible) is kept as a string rather
 * than lost. */
static cJSON *option_value(const struct config *c, const struct opt_spec *o)
{
    size_t n = o->size + 64;  /* strings: capacity; numbers: %.17g fits in 64 */
    char *buf = malloc(n);
    if (!buf) return NULL;
    buf[0] = '\0';
    config_format(c, o, buf, n);

    cJSON *v = NULL;
    char *end = NULL;
    switch (o->type) {
    case OPT_INT:
    case OPT_REAL: {
        double x = strtod(buf, &end);
        v = (end != buf && *end == '\0') ? json_num(x) : cJSON_CreateString(buf);
        break;
    }
    case OPT_FLAG:
        if (strcmp(buf, "true") == 0) v = cJSON_CreateTrue();
        else if (strcmp(buf, "false") == 0) v = cJSON_CreateFalse();
        else v = cJSON_CreateString(buf);
        break;
    case OPT_STRING:
    case OPT_CHOICE:
    default:
        v = cJSON_CreateString(buf);
        break;
    }
    free(buf);
    return v;
}

cJSON *report_config_to_json(const struct config *c, unsigned groups)
{
    bool ok = true;
    cJSON *cfg = cJSON_CreateObject();
    for (size_t i = 0; cfg && ok && c && i < config_n_options; i++) {
        const struct opt_spec *o = &config_options[i];
        if (o->groups & groups) json_add(cfg, o->name, option_value(c, o), &ok);
    }
    if (ok) return cfg;
    cJSON_Delete(cfg);
    return NULL;
}

/* The options of the report's config_groups, in the option table's order. */
static cJSON *write_config(const void *base)
{
    const struct report *r = base;
    return report_config_to_json(r->config, r->config_groups);
}

/* An option's value as config_set's text. The writer prints numbers from
 * config_format's text, so whole numbers print whole (OPT_INT parses them)
 * and others with %.17g, which reads back as the same double. */
static const char *option_text(const cJSON *v, char *buf, size_t n)
{
    if (cJSON_IsString(v)) return v->valuestring;
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v) ? "true" : "false";
    if (!cJSON_IsNumber(v)) return NULL;
    double x = v->valuedouble;
    if (x == floor(x) && fabs(x) <= (double)JSON_WHOLE_MAX) snprintf(buf, n, "%.0f", x);
    else snprintf(buf, n, "%.17g", x);
    return buf;
}

static int read_option(const cJSON *item, const struct json_at *cfg_at, struct config *c,
                       unsigned *groups)
{
    struct json_at f = json_key(cfg_at, item->string);
    char buf[64];
    const char *text = option_text(item, buf, sizeof buf);
    if (!text) return json_bad(&f, "is %s, not a number, string or boolean", json_type_name(item));
    if (config_set(c, item->string, text, ALL_GROUPS, f.e) < 0) {
        char path[256];
        json_path(&f, path, sizeof path);
        return err_prefix(f.e, "%s: \"%s\"", f.file, path);
    }
    *groups |= config_find(item->string)->groups;
    return 0;
}

/* ctx is the config the report is to point to: config_init's defaults,
 * then every key of the object through config_set. */
int report_config_from_json(const cJSON *v, const struct json_at *at, struct config *c,
                            unsigned *groups)
{
    config_init(c);
    if (!cJSON_IsObject(v)) return json_bad(at, "is %s, not an object", json_type_name(v));
    for (const cJSON *item = v->child; item; item = item->next)
        TRY(read_option(item, at, c, groups));
    return 0;
}

static int read_config(const cJSON *v, const struct json_at *at, void *base, void *ctx)
{
    struct report *r = base;
    r->config = ctx;
    return report_config_from_json(v, at, ctx, &r->config_groups);
}

/* --- steps_per_worker: a column of per_rank, written beside it ------------------ */

static cJSON *write_steps_per_worker(const void *base)
{
    const struct report *r = base;
    bool ok = true;
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && ok && i < r->n_per_rank; i++)
        json_add(a, NULL, json_num((double)r->per_rank[i].steps), &ok);
    if (ok) return a;
    cJSON_Delete(a);
    return NULL;
}

/* One whole number per entry of per_rank, which is read before it. */
static int read_steps_per_worker(const cJSON *v, const struct json_at *at, void *base,
                                 void *ctx)
{
    (void)ctx;
    struct report *r = base;
    if (!cJSON_IsArray(v)) return json_bad(at, "is %s, not an array", json_type_name(v));
    if (cJSON_GetArraySize(v) != r->n_per_rank)
        return json_bad(at, "has %d entries, per_rank %d: one a worker", cJSON_GetArraySize(v),
                        r->n_per_rank);
    int i = 0;
    for (const cJSON *item = v->child; item; item = item->next, i++) {
        struct json_at fi = json_index(at, i);
        TRY(json_as_whole(item, &fi, JSON_WHOLE_MAX, &r->per_rank[i].steps));
    }
    return 0;
}

/* --- hosts: { "host": [ranks], ... }, real runs only ----------------------------- */

/* Each host once, in the order of its first rank: O(ranks x hosts), fine for
 * the thousands of ranks a report holds. */
static cJSON *write_hosts(const void *base)
{
    const struct report *r = base;
    bool ok = true;
    cJSON *map = cJSON_CreateObject();
    for (int i = 0; map && ok && i < r->n_rank_hosts; i++) {
        const char *name = r->rank_hosts[i].name;
        /* listed with an earlier rank */
        if (cJSON_GetObjectItemCaseSensitive(map, name)) continue;
        cJSON *ranks = json_add(map, name, cJSON_CreateArray(), &ok);
        for (int k = i; ok && k < r->n_rank_hosts; k++)
            if (!strcmp(r->rank_hosts[k].name, name))
                json_add(ranks, NULL, cJSON_CreateNumber(k), &ok);
    }
    if (ok) return map;
    cJSON_Delete(map);
    return NULL;
}

/* The inverse: every rank 0 .. n-1 exactly once over the hosts' lists. */
static int read_hosts(const cJSON *v, const struct json_at *at, void *base, void *ctx)
{
    (void)ctx;
    struct report *r = base;
    if (!cJSON_IsObject(v))
        return json_bad(at, "is %s, not an object of host: [ranks]", json_type_name(v));
    int n = 0;
    for (const cJSON *h = v->child; h; h = h->next) {
        struct json_at hat = json_key(at, h->string);
        if (!cJSON_IsArray(h))
            return json_bad(&hat, "is %s, not an array of ranks", json_type_name(h));
        if (!h->string[0] || strlen(h->string) >= REPORT_HOST_BYTES)
            return json_bad(&hat, "is not a host name of 1 to %d characters",
                            REPORT_HOST_BYTES - 1);
        int k = cJSON_GetArraySize(h);
        if (k > INT_MAX - n) return json_bad(&hat, "holds too many ranks");
        n += k;
    }
    free(r->rank_hosts);
    r->rank_hosts = calloc(n > 0 ? (size_t)n : 1, sizeof *r->rank_hosts);
    r->n_rank_hosts = 0;
    if (!r->rank_hosts) return err_set(at->e, ERR_NOMEM, "out of memory for %d ranks' hosts", n);
    r->n_rank_hosts = n;
    for (const cJSON *h = v->child; h; h = h->next) {
        struct json_at hat = json_key(at, h->string);
        int i = 0;
        for (const cJSON *item = h->child; item; item = item->next, i++) {
            struct json_at iat = json_index(&hat, i);
            int64_t rank = 0;
            TRY(json_as_whole(item, &iat, n > 0 ? n - 1 : 0, &rank));
            if (r->rank_hosts[rank].name[0])
                return json_bad(&iat, "is rank %lld, listed before under \"%s\"",
                                (long long)rank, r->rank_hosts[rank].name);
            snprintf(r->rank_hosts[rank].name, REPORT_HOST_BYTES, "%s", h->string);
        }
    }
    return 0;
}

/* --- The table ------------------------------------------------------------------
 * Each field of the contract, once, in the order the file has them. Fields
 * marked JSON_OPTIONAL came after version 1 of the format: absent in older
 * files, where they keep report_init's 0 (no down time, nothing known of
 * samples). */

#define R(k, kind_, member, ...) JSON_FIELD(k, kind_, struct report, member, __VA_ARGS__)
#define CUSTOM(k, rd, wr, ...) {.key = (k), .kind = JSON_CUSTOM, .read = (rd), .write = (wr), __VA_ARGS__}
#define OBJECT(k, table, ...) {.key = (k), .kind = JSON_OBJECT, .sub = &(table), __VA_ARGS__}
#define ARRAY(k, member, count, table, ...)                                                 \
    {.key = (k), .kind = JSON_ARRAY, .offset = offsetof(struct report, member),             \
     .flag_offset = offsetof(struct report, count), .sub = &(table), __VA_ARGS__}
#define NULLABLE(present) .flags = JSON_NULLABLE, .flag_offset = offsetof(struct report, present)

static const struct json_field step_time_fields[] = {
    R("mean", JSON_REAL, step_time_s.mean),
    R("p50", JSON_REAL, step_time_s.p50),
    R("p99", JSON_REAL, step_time_s.p99),
};
static const struct json_field breakdown_fields[] = {
    R("compute", JSON_REAL, breakdown.compute),
    R("comm", JSON_REAL, breakdown.comm),
    R("idle", JSON_REAL, breakdown.idle),
    R("down", JSON_REAL, breakdown.down, .flags = JSON_OPTIONAL),
};
static const struct json_field histogram_item[] = {{.key = "count", .kind = JSON_WHOLE}};
static const struct json_table histogram_items =
    JSON_ITEMS(JSON_SHAPE_VALUE, histogram_item, int64_t);
static const struct json_field staleness_fields[] = {
    R("mean", JSON_REAL, staleness.mean),
    R("max", JSON_WHOLE, staleness.max),
    ARRAY("histogram", staleness.histogram, staleness.n_histogram, histogram_items),
};
static const struct json_field memory_fields[] = {
    R("params", JSON_BYTES, memory_bytes_per_device.params),
    R("grads", JSON_BYTES, memory_bytes_per_device.grads),
    R("optimizer", JSON_BYTES, memory_bytes_per_device.optimizer),
    R("activations", JSON_BYTES, memory_bytes_per_device.activations),
    R("peak", JSON_BYTES, memory_bytes_per_device.peak),
};
/* A curve's points: [step, time_s, value] triples. */
#define CURVE_POINT(type, value)                        \
    {JSON_FIELD("step", JSON_WHOLE, type, step),        \
     JSON_FIELD("time_s", JSON_REAL, type, time_s),     \
     JSON_FIELD(#value, JSON_REAL, type, value)}
static const struct json_field loss_point_fields[] = CURVE_POINT(struct loss_point, loss);
static const struct json_field accuracy_point_fields[] =
    CURVE_POINT(struct accuracy_point, accuracy);
static const struct json_table loss_points =
    JSON_ITEMS(JSON_SHAPE_TUPLE, loss_point_fields, struct loss_point);
static const struct json_table accuracy_points =
    JSON_ITEMS(JSON_SHAPE_TUPLE, accuracy_point_fields, struct accuracy_point);
static const struct json_field final_fields[] = {
    R("loss", JSON_REAL, final.loss),
    R("test_accuracy", JSON_REAL, final.test_accuracy),
    /* the updates that trained the final model: what the table's column
     * shows, so that a report read back (compare --mode real) shows it too */
    R("updates", JSON_WHOLE, updates, .flags = JSON_OPTIONAL),
    /* a resumed or restarted real run's: so that its samples per update
     * (samples_applied over this job's updates) stay known when read back */
    R("updates_resumed", JSON_WHOLE, updates_resumed,
      .flags = JSON_OPTIONAL | JSON_NULLABLE | JSON_OMIT_ABSENT,
      .flag_offset = offsetof(struct report, has_updates_resumed)),
    /* and its clock then: curve points of the steps before it lie that
     * much further on than this job's own times reach */
    R("time_resumed_s", JSON_REAL, time_resumed_s,
      .flags = JSON_OPTIONAL | JSON_NULLABLE | JSON_OMIT_ABSENT,
      .flag_offset = offsetof(struct report, has_time_resumed)),
};
static const struct json_field rank_time_fields[] = {
    JSON_FIELD("rank", JSON_INT, struct rank_time, rank),
    JSON_FIELD("compute_s", JSON_REAL, struct rank_time, compute_s),
    JSON_FIELD("comm_s", JSON_REAL, struct rank_time, comm_s),
    JSON_FIELD("idle_s", JSON_REAL, struct rank_time, idle_s),
    JSON_FIELD("down_s", JSON_REAL, struct rank_time, down_s, .flags = JSON_OPTIONAL),
};
static const struct json_table rank_times =
    JSON_ITEMS(JSON_SHAPE_OBJECT, rank_time_fields, struct rank_time);
static int read_failure_policy(const cJSON *v, const struct json_at *at, void *base, void *ctx)
{
    (void)ctx;
    struct report *r = base;
    r->failure.policy = NULL;
    if (cJSON_IsNull(v)) return 0;
    if (!cJSON_IsString(v))
        return json_bad(at, "is %s, not a policy name (restart, shrink, continue)",
                        json_type_name(v));
    for (size_t k = 0; k < 3; k++)
        if (!strcmp(v->valuestring, failure_policy_names[k])) {
            r->failure.policy = failure_policy_names[k];
            return 0;
        }
    return json_bad(at, "is \"%.40s\", not restart, shrink or continue", v->valuestring);
}

static cJSON *write_failure_policy(const void *base)
{
    const struct report *r = base;
    return r->failure.policy ? cJSON_CreateString(r->failure.policy) : cJSON_CreateNull();
}

/* The fields after steps_redone came with issue 14: optional, so reports
 * written before still read. */
static const struct json_field failure_fields[] = {
    R("rank", JSON_INT, failure.rank, NULLABLE(failure.has_first)),
    R("time_s", JSON_REAL, failure.time_s, NULLABLE(failure.has_first)),
    R("lost_s", JSON_REAL, failure.lost_s),
    R("steps_redone", JSON_INT, failure.steps_redone),
    CUSTOM("policy", read_failure_policy, write_failure_policy, .flags = JSON_OPTIONAL),
    R("n_failures", JSON_INT, failure.n_failures, .flags = JSON_OPTIONAL),
    R("detect_s", JSON_REAL, failure.detect_s, .flags = JSON_OPTIONAL),
    R("relaunch_s", JSON_REAL, failure.relaunch_s, .flags = JSON_OPTIONAL),
    R("redone_s", JSON_REAL, failure.redone_s, .flags = JSON_OPTIONAL),
    R("checkpoint_s", JSON_REAL, failure.checkpoint_s, .flags = JSON_OPTIONAL),
    R("goodput", JSON_REAL, failure.goodput, .flags = JSON_OPTIONAL),
    R("workers_after", JSON_INT, failure.workers_after, .flags = JSON_OPTIONAL | JSON_NULLABLE,
      .flag_offset = offsetof(struct report, failure.has_workers_after)),
};

static const struct json_table step_time = JSON_TABLE(JSON_SHAPE_OBJECT, step_time_fields);
static const struct json_table breakdown = JSON_TABLE(JSON_SHAPE_OBJECT, breakdown_fields);
static const struct json_table staleness = JSON_TABLE(JSON_SHAPE_OBJECT, staleness_fields);
static const struct json_table memory = JSON_TABLE(JSON_SHAPE_OBJECT, memory_fields);
static const struct json_table final = JSON_TABLE(JSON_SHAPE_OBJECT, final_fields);
static const struct json_table failure = JSON_TABLE(JSON_SHAPE_OBJECT, failure_fields);

static const struct json_field report_fields[] = {
    {.key = "strata_report", .kind = JSON_VERSION, .max = REPORT_FORMAT_VERSION},
    CUSTOM("mode", read_mode, write_mode),
    CUSTOM("strategy", read_strategy, write_strategy),
    R("devices", JSON_INT, devices, .min = 1, .why = "a run has at least one device"),
    CUSTOM("config", read_config, write_config),
    OBJECT("step_time_s", step_time),
    R("throughput_samples_per_s", JSON_REAL, throughput_samples_per_s),
    R("samples_applied", JSON_WHOLE, samples_applied, .flags = JSON_OPTIONAL),
    OBJECT("breakdown", breakdown),
    R("bubble_fraction", JSON_REAL, bubble_fraction),
    OBJECT("staleness", staleness),
    OBJECT("memory_bytes_per_device", memory),
    ARRAY("loss_curve", loss_curve, n_loss_curve, loss_points),
    ARRAY("accuracy_curve", accuracy_curve, n_accuracy_curve, accuracy_points,
          .flags = JSON_OPTIONAL),
    OBJECT("final", final, NULLABLE(has_final)),
    R("time_to_accuracy_s", JSON_REAL, time_to_accuracy_s, NULLABLE(has_time_to_accuracy)),
    ARRAY("per_rank", per_rank, n_per_rank, rank_times),
    CUSTOM("steps_per_worker", read_steps_per_worker, write_steps_per_worker,
           .flags = JSON_OPTIONAL),
    OBJECT("failure", failure, NULLABLE(failure.happened)),
    CUSTOM("hosts", read_hosts, write_hosts,
           .flags = JSON_OPTIONAL | JSON_NULLABLE | JSON_OMIT_ABSENT,
           .flag_offset = offsetof(struct report, has_hosts)),
};
static const struct json_table report_table = JSON_TABLE(JSON_SHAPE_OBJECT, report_fields);

/* --- Both ways --------------------------------------------------------------------- */

/* "stragglers" lives outside the table: the table writes every field, and
 * a simulated report has no such member (its bytes stay as they were). */
cJSON *report_to_json(const struct report *r)
{
    cJSON *j = json_write_fields(r, &report_table);
    bool ok = j != NULL;
    if (ok && r->n_paces > 0)
        json_add(j, "stragglers", straggler_to_json(r->paces, r->n_paces), &ok);
    if (ok) return j;
    cJSON_Delete(j);
    return NULL;
}

int report_from_json(const cJSON *j, const struct json_at *at, struct report *r,
                     struct config *c)
{
    if (!cJSON_IsObject(j))
        return json_bad(at, "is %s, not a report (an object)", json_type_name(j));
    TRY(json_read_fields(j, at, r, &report_table, c));
    const cJSON *paces = cJSON_GetObjectItemCaseSensitive(j, "stragglers");
    struct json_at pat = json_key(at, "stragglers");
    return paces ? straggler_from_json(paces, &pat, &r->paces, &r->n_paces) : 0;
}

int report_write_json(const struct report *r, const char *path, struct err *e)
{
    return json_write_atomic(report_to_json(r), path, e);
}

/* speedup into a report's object, just after its throughput (what it is a
 * ratio of); null when not known (NaN), where the terminal shows "-". */
static bool add_speedup(cJSON *report, double speedup)
{
    bool ok = true;
    cJSON *v = json_add(report, "speedup", json_num(speedup), &ok);
    cJSON *c = report->child;
    while (c && !(c->string && !strcmp(c->string, "throughput_samples_per_s"))) c = c->next;
    if (!ok || !c || c->next == v) return ok;   /* no throughput: left at the end */
    /* From the end, where the key was set, to just after the throughput.
     * By hand: cJSON_InsertItemInArray refuses an object's item (1.7.15).
     * A list's first item's prev is its last, which stays the last. */
    cJSON_DetachItemViaPointer(report, v);
    v->prev = c;
    v->next = c->next;
    c->next->prev = v;
    c->next = v;
    return true;
}

int report_write_json_speedup(const struct report *r, const double *speedup, const char *path,
                              struct err *e)
{
    cJSON *doc = report_to_json(r);
    if (doc && speedup && !add_speedup(doc, *speedup)) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    return json_write_atomic(doc, path, e);
}

int report_write_compare_json(const struct report *const *rs, int n, const double *speedup,
                              const char *path, struct err *e)
{
    bool ok = true;
    cJSON *doc = cJSON_CreateObject();
    json_add(doc, "strata_compare", cJSON_CreateNumber(1), &ok);
    cJSON *arr = json_add(doc, "reports", cJSON_CreateArray(), &ok);
    for (int i = 0; ok && i < n; i++) {
        cJSON *r = json_add(arr, NULL, report_to_json(rs[i]), &ok);
        if (ok && speedup) ok = add_speedup(r, speedup[i]);
    }
    if (!ok) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    return json_write_atomic(doc, path, e);
}

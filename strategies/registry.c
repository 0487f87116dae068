/* The strategy registry and the lookups the command line uses. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../core/text_append.h"
#include "families.h"

/* Every strategy, in the order tables list them: what it is. How it builds
 * its plan is its family's file (families.h). */
const struct strategy strategy_registry[] = {
    {.name = "mirrored", .options = "bucket-mb", .policy = POLICY_NONE,
     .build = mirrored_build, .plan_size = mirrored_plan_size,
     .summary = "synchronous data parallel: full replicas, gradients all-reduced in buckets "
                "overlapped with backward (DDP)"},
    {.name = "ps-sync", .options = "servers,backup-workers", .policy = POLICY_SYNC,
     .build = ps_sync_build, .plan_size = ps_plan_size,
     .summary = "parameter server, synchronous: push, server averages all (or all but "
                "--backup-workers), pull"},
    {.name = "ps-async", .options = "servers", .policy = POLICY_ASYNC,
     .build = ps_async_build, .plan_size = ps_plan_size,
     .summary = "parameter server, asynchronous: each worker pushes and pulls on its own"},
    {.name = "ps-ssp", .options = "servers,staleness", .policy = POLICY_SSP,
     .build = ps_ssp_build, .plan_size = ps_plan_size,
     .summary = "parameter server, stale-synchronous: async with a staleness bound K"},
    {.name = "model", .options = "dp,bucket-mb", .policy = POLICY_NONE,
     .build = model_build, .plan_size = model_plan_size,
     .summary = "model parallel: layers split across devices, one batch flows through them"},
    {.name = "pipeline-gpipe", .options = "microbatches,dp,bucket-mb", .policy = POLICY_NONE,
     .build = pipeline_gpipe_build, .plan_size = pipeline_plan_size,
     .summary = "pipeline: M microbatches, all forwards then all backwards (GPipe)"},
    {.name = "pipeline-1f1b", .options = "microbatches,dp,bucket-mb", .policy = POLICY_NONE,
     .build = pipeline_1f1b_build, .plan_size = pipeline_plan_size,
     .summary = "pipeline: one forward, one backward (PipeDream-flush): same bubble, less "
                "activation memory"},
    {.name = "pipeline-interleaved", .options = "microbatches,chunks", .policy = POLICY_NONE,
     .build = pipeline_interleaved_build, .plan_size = pipeline_interleaved_plan_size,
     .summary = "pipeline: interleaved 1F1B (Megatron-LM), --chunks V chunks per device: bubble "
                "V times smaller, V times the messages"},
    {.name = "pipeline-zb", .options = "microbatches", .policy = POLICY_NONE,
     .build = pipeline_zb_build, .plan_size = pipeline_zb_plan_size,
     .summary = "pipeline: zero-bubble ZB-H1, backward split into input and weight halves, "
                "weights deferred into the bubble"},
    {.name = "mirrored-zero1", .options = "bucket-mb", .policy = POLICY_NONE,
     .build = mirrored_zero1_build, .plan_size = mirrored_zero1_plan_size,
     .summary = "mirrored with the momentum sharded (ZeRO-1): gradients reduce-scattered, each "
                "device steps its shard, parameters all-gathered"},
    {.name = "pipelined-steps", .options = "bucket-mb,inflight", .policy = POLICY_NONE,
     .build = pipelined_steps_build, .plan_size = mirrored_plan_size,
     .summary = "mirrored with --inflight K steps in flight: a step's all-reduce overlaps the "
                "next steps' compute, its gradients applied K-1 steps late"},
};
const size_t strategy_count = sizeof strategy_registry / sizeof strategy_registry[0];

/* "mirrored, ps-sync, ..." for error messages: every strategy, or those
 * that read option `reading` when it is not NULL. */
static void list_names(char *buf, size_t n, const char *reading)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < strategy_count; i++)
        if (!reading || strategy_reads(&strategy_registry[i], reading))
            text_appendf(buf, n, &used, "%s%s", used ? ", " : "", strategy_registry[i].name);
}

/* The strategy whose name is [name, name+len), or NULL. */
static const struct strategy *lookup(const char *name, size_t len)
{
    for (size_t i = 0; i < strategy_count; i++)
        if (strlen(strategy_registry[i].name) == len &&
            !strncmp(strategy_registry[i].name, name, len))
            return &strategy_registry[i];
    return NULL;
}

void strategy_names_reading(const char *option, char *buf, size_t n)
{
    list_names(buf, n, option);
}

const struct strategy *strategy_baseline(void)
{
    return &strategy_registry[0];   /* mirrored */
}

bool strategy_reads(const struct strategy *s, const char *name)
{
    size_t n = strlen(name);
    for (const char *item = s->options; n && *item;) {
        const char *comma = strchr(item, ',');
        size_t len = comma ? (size_t)(comma - item) : strlen(item);
        if (len == n && !strncmp(item, name, n)) return true;
        if (!comma) break;
        item = comma + 1;
    }
    return false;
}

void strategy_unread_note(const struct strategy *s, const struct config *c, char *buf,
                          size_t n)
{
    strategy_list_unread_note(&s, 1, c, buf, n);
}

bool strategy_any_reads(const struct strategy *const *list, size_t n_list, const char *name)
{
    for (size_t i = 0; i < n_list; i++)
        if (strategy_reads(list[i], name)) return true;
    return false;
}

void strategy_list_unread_note(const struct strategy *const *list, size_t n_list,
                               const struct config *c, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < config_n_options; k++) {
        const struct opt_spec *o = &config_options[k];
        char readers[256], value[64];
        if (!config_is_set(c, o->name) || strategy_any_reads(list, n_list, o->name)) continue;
        list_names(readers, sizeof readers, o->name);
        if (!readers[0]) continue;   /* no strategy's own option: devices, batch, ... */
        config_format(c, o, value, sizeof value);
        text_appendf(buf, n, &used, "%s--%s %s (only %s read%s it)", used ? "; " : "", o->name,
                     value, readers, strchr(readers, ',') ? "" : "s");
    }
}

bool strategy_has_servers(const struct strategy *s)
{
    return policy_infos[s->policy].has_servers;
}

const struct strategy *strategy_find(const char *name, struct err *e)
{
    if (!name) name = "";
    const struct strategy *s = lookup(name, strlen(name));
    if (!s) {
        char names[512];
        list_names(names, sizeof names, NULL);
        err_set(e, ERR_INPUT, "--strategy: '%.64s' is not a strategy (%s)", name, names);
    }
    return s;
}

int strategy_parse_list(const char *spec, const struct strategy **out, size_t *n,
                        struct err *e)
{
    char names[512];
    list_names(names, sizeof names, NULL);
    *n = 0;
    if (!spec) spec = "";
    if (!strcmp(spec, "all")) {
        for (size_t i = 0; i < strategy_count; i++) out[i] = &strategy_registry[i];
        *n = strategy_count;
        return 0;
    }
    for (const char *item = spec;;) {
        const char *comma = strchr(item, ',');
        size_t len = comma ? (size_t)(comma - item) : strlen(item);
        /* spaces around an item are forgiven: "mirrored, model" */
        const char *first = item, *last = item + len;
        while (first < last && (*first == ' ' || *first == '\t')) first++;
        while (last > first && (last[-1] == ' ' || last[-1] == '\t')) last--;
        int shown = (int)(last - first > 64 ? 64 : last - first);
        if (first == last) {
            *n = 0;
            return err_set(e, ERR_INPUT,
                           "--strategies: empty item in '%.200s' (use \"all\" or names "
                           "separated by commas: %s)",
                           spec, names);
        }
        const struct strategy *s = lookup(first, (size_t)(last - first));
        if (!s) {
            *n = 0;
            return err_set(e, ERR_INPUT, "--strategies: '%.*s' is not a strategy (all, %s)",
                           shown, first, names);
        }
        for (size_t i = 0; i < *n; i++)
            if (out[i] == s) {
                *n = 0;
                return err_set(e, ERR_INPUT, "--strategies: '%s' is listed twice", s->name);
            }
        out[(*n)++] = s;   /* no repeats, so at most strategy_count */
        if (!comma) return 0;
        item = comma + 1;
    }
}

/* --dp, whose default 1 leaves every strategy as it is, given another
 * value for a strategy that does not read it: refused, naming those that
 * do, rather than the devices silently meaning something else than asked
 * (D replicas of stages). Options that only tune one strategy (--chunks,
 * --staleness, --inflight) are ignored by the others, as their defaults
 * must be; a single strategy's run notes them (strategy_unread_note). */
static int check_unread(const struct strategy *s, const char *name, long long value,
                        const char *what, struct err *e)
{
    if (value <= 1 || strategy_reads(s, name)) return 0;
    char names[256];
    list_names(names, sizeof names, name);
    return err_set(e, ERR_INPUT, "--%s %lld: %s does not take %s (only %s do); leave it at 1",
                   name, value, s->name, what, names);
}

int strategy_build(const struct strategy *s, const struct config *c,
                   const struct workload *wl, struct plan **out, struct err *e)
{
    *out = NULL;
    struct plan *p = NULL;
    TRY(check_unread(s, "dp", c->dp, "data-parallel replicas of stages", e));
    int rc = s->build(s, c, wl, &p, e);
    if (rc < 0) return rc;
    rc = plan_build_status(p, e);
    if (rc < 0) {
        plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void strategy_plan_size(const struct strategy *s, const struct config *c,
                        const struct workload *wl, struct budget_plan *out)
{
    *out = (struct budget_plan){0};
    if (s->plan_size) {
        s->plan_size(c, wl, out);
        return;
    }
    /* Forward, backward, send and receive per microbatch and chunk, a
     * collective or a push and a pull per layer, the update and a few
     * more: every strategy's shape (a plan read from traces has none). */
    double ranks = (double)c->devices + (strategy_has_servers(s) ? (double)c->servers : 0);
    double micro = 4.0 * (double)c->microbatches * (double)(c->chunks > 1 ? c->chunks : 1);
    out->ranks = ranks;
    out->ops = ranks * (micro + 2.0 * wl->n_layers + 8);
    out->micro_ops = ranks * micro;
}

void strategy_plan_size_max(const struct strategy *const *list, size_t n,
                            const struct config *c, const struct workload *wl,
                            struct budget_plan *out)
{
    /* the baseline: its strategy on one device */
    struct config one = *c;
    one.devices = 1;
    strategy_plan_size(strategy_baseline(), &one, wl, out);
    for (size_t i = 0; i < n; i++) {
        struct budget_plan b;
        strategy_plan_size(list[i], c, wl, &b);
        if (b.ranks > out->ranks) out->ranks = b.ranks;
        if (b.ops > out->ops) {
            out->ops = b.ops;
            out->micro_ops = b.micro_ops;
        }
    }
}

void strategy_plan_size_spec(const char *spec, const struct config *c,
                             const struct workload *wl, struct budget_plan *out)
{
    const struct strategy *list[sizeof strategy_registry / sizeof strategy_registry[0]];
    size_t n = 0;
    struct err ignored = {0};
    if (strategy_parse_list(spec, list, &n, &ignored) < 0) {
        for (n = 0; n < strategy_count; n++) list[n] = &strategy_registry[n];
    }
    strategy_plan_size_max(list, n, c, wl, out);
}

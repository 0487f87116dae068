/* The strategy registry and the lookups the command line uses. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "families.h"

const struct strategy *const strategy_registry[] = {
    &strategy_mirrored, &strategy_ps_sync, &strategy_ps_async, &strategy_ps_ssp,
    &strategy_model,    &strategy_pipeline_gpipe, &strategy_pipeline_1f1b,
    &strategy_pipeline_interleaved, &strategy_pipeline_zb,
    &strategy_mirrored_zero1, &strategy_pipelined_steps,
};
const size_t strategy_count = sizeof strategy_registry / sizeof strategy_registry[0];

/* "mirrored, ps-sync, ..." for error messages. */
static void list_names(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < strategy_count && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "",
                                 strategy_registry[i]->name);
}

/* The strategy whose name is [name, name+len), or NULL. */
static const struct strategy *lookup(const char *name, size_t len)
{
    for (size_t i = 0; i < strategy_count; i++)
        if (strlen(strategy_registry[i]->name) == len &&
            !strncmp(strategy_registry[i]->name, name, len))
            return strategy_registry[i];
    return NULL;
}

const struct strategy *strategy_baseline(void)
{
    return &strategy_mirrored;
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
        list_names(names, sizeof names);
        err_set(e, ERR_INPUT, "--strategy: '%.64s' is not a strategy (%s)", name, names);
    }
    return s;
}

int strategy_parse_list(const char *spec, const struct strategy **out, size_t *n,
                        struct err *e)
{
    char names[512];
    list_names(names, sizeof names);
    *n = 0;
    if (!spec) spec = "";
    if (!strcmp(spec, "all")) {
        for (size_t i = 0; i < strategy_count; i++) out[i] = strategy_registry[i];
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
 * must be. */
static int check_unread(const struct strategy *s, const char *name, long long value,
                        const char *what, struct err *e)
{
    if (value <= 1 || strategy_reads(s, name)) return 0;
    char names[256];
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < strategy_count && used < sizeof names; i++)
        if (strategy_reads(strategy_registry[i], name))
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                     used ? ", " : "", strategy_registry[i]->name);
    return err_set(e, ERR_INPUT, "--%s %lld: %s does not take %s (only %s do); leave it at 1",
                   name, value, s->name, what, names);
}

int strategy_build(const struct strategy *s, const struct config *c,
                   const struct workload *wl, struct plan **out, struct err *e)
{
    *out = NULL;
    struct plan *p = NULL;
    TRY(check_unread(s, "dp", c->dp, "data-parallel replicas of stages", e));
    int rc = s->build(c, wl, &p, e);
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
        for (n = 0; n < strategy_count; n++) list[n] = strategy_registry[n];
    }
    strategy_plan_size_max(list, n, c, wl, out);
}

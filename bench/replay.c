/* Trace-driven simulation and its what-ifs (replay.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/analysis.h"
#include "../core/workload.h"
#include "../sim/cluster.h"
#include "../sim/simulate.h"
#include "../strategies/strategy.h"
#include "replay.h"
#include "replay_durations.h"
#include "run.h"

/* Where one replay's compute durations come from: a table of the plan it
 * runs, or per-layer rates for a plan the trace did not run. */
struct source {
    const struct replay_table *table;
    const struct replay_rates *rates;
    const struct replay_updates *updates;   /* servers' measured updates, or NULL */
    const struct replay_table *comm;        /* measured communication, or NULL: the network's */
    bool has_comm_modelled;       /* comm: an op it has no entry for, left to the network */
    const struct workload *wl;
    const struct plan *plan;      /* the plan being replayed (set by replay_sim) */
    bool is_drawn;                /* rates: a quantile drawn per op, else the median */
    uint64_t seed;
    int64_t n_from_rates;         /* table: ops it has no entry for, given the rates' time */
};

/* splitmix64's finaliser: a draw that depends on (seed, rank, step, op)
 * only, not on the order the simulator asks in. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static double uniform_of(uint64_t seed, int rank, int64_t step, int op)
{
    uint64_t h = mix(mix(mix(mix(seed) ^ (uint64_t)rank) ^ (uint64_t)step) ^ (uint64_t)op);
    return (double)(h >> 11) * 0x1.0p-53;   /* [0, 1) */
}

static double source_compute_s(void *ctx, int rank, int64_t step, int op)
{
    struct source *s = ctx;
    if (s->table) {
        /* An asynchronous job on another network shares its steps out
         * otherwise: a worker may run one more than the trace measured.
         * Its ops take the run's measured rates, not the cluster's model
         * (whose times, on ideal, are not even seconds). */
        double d = replay_table_get(s->table, rank, step, op);
        if (d >= 0 || !s->rates) return d;
        s->n_from_rates++;
    }
    const struct op *o = &s->plan->ranks[rank].ops.items[op];
    return replay_rates_op_s(s->rates, s->wl, o, s->is_drawn ? uniform_of(s->seed, rank, step, op)
                                                             : -1);
}

static double source_update_s(void *ctx, int rank, int64_t k)
{
    const struct source *s = ctx;
    return replay_updates_get(s->updates, rank, k);
}

static double source_comm_s(void *ctx, int rank, int64_t step, int op)
{
    struct source *s = ctx;
    double d = replay_table_get(s->comm, rank, step, op);
    s->has_comm_modelled |= d < 0;   /* -1: the simulator asks the network model */
    return d;
}

/* Simulates cfg's plan with src's durations; its spans to keep (may be
 * NULL); its report to r (config pointing to cfg). */
static int replay_sim(const struct config *cfg, const struct workload *wl, struct source *src,
                      struct trace *keep, struct report *r, struct err *e)
{
    const struct strategy *st = strategy_find(cfg->strategy, e);
    if (!st) return e->code;
    struct cluster cl;
    struct plan *p = NULL;
    TRY(cluster_load(cfg->cluster, &cl, e));
    TRY(cluster_set_jitter(&cl, "off", e));
    TRY_CTX(e, strategy_build(st, cfg, wl, &p, e), "%s", st->name);
    int rc = cluster_layout(&cl, p->n_ranks, cfg->nodes, cfg->devices_per_node, cfg->allreduce, e);
    src->plan = p;
    bool has_updates = src->updates && src->updates->has_any;
    const struct sim_durations given = {.ctx = src, .compute_s = source_compute_s,
                                        .update_s = has_updates ? source_update_s : NULL,
                                        .comm_s = src->comm ? source_comm_s : NULL};
    const struct sim_setup setup = {.plan = p, .cluster = &cl, .steps = (int)cfg->steps,
                                    .seed = (uint64_t)cfg->seed, .durations = &given};
    struct analysis *a = rc == 0 ? analysis_create(p, setup.steps, e) : NULL;
    if (rc == 0 && !a) rc = e->code;
    struct sim_result res = {0};
    if (rc == 0) rc = simulate(&setup, a, keep, &res, e);
    if (rc == 0) rc = analysis_finish(a, res.makespan_s, r, e);
    analysis_free(a);
    if (rc == 0) {
        r->mode = "sim";
        snprintf(r->strategy, sizeof r->strategy, "%s", st->name);
        r->devices = p->n_workers;
        r->config = cfg;
        r->config_groups = RUN_CONFIG_GROUPS;
    }
    src->plan = NULL;
    plan_free(p);
    return rc;
}

/* Spans of a rank in step order, as the analysis takes them. */
static int by_rank_step_end(const void *pa, const void *pb)
{
    const struct span *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->step != b->step) return a->step < b->step ? -1 : 1;
    if (a->end_s != b->end_s) return a->end_s < b->end_s ? -1 : 1;
    return (a->op > b->op) - (a->op < b->op);
}

/* The measured run's report, by the analysis every run goes through. */
static int measured_report(const struct trace_doc *doc, const struct plan *p,
                           struct replay_result *res, struct err *e)
{
    size_t n = doc->trace.spans.len;
    struct span *spans = XCALLOC(e, n + 1, sizeof *spans);
    if (!spans) return ERR_NOMEM;
    if (n) memcpy(spans, doc->trace.spans.items, n * sizeof *spans);
    qsort(spans, n, sizeof *spans, by_rank_step_end);
    double makespan_s = 0;
    for (size_t i = 0; i < n; i++) makespan_s = fmax(makespan_s, spans[i].end_s);
    struct analysis *a = analysis_create(p, (int)doc->steps, e);
    int rc = a ? 0 : e->code;
    for (size_t i = 0; rc == 0 && i < n; i++) rc = analysis_add(a, &spans[i]);
    if (rc == 0) rc = analysis_finish(a, makespan_s, &res->measured, e);
    analysis_free(a);
    free(spans);
    struct report *r = &res->measured;
    r->mode = !strcmp(res->mode, "real") ? "real" : "sim";
    snprintf(r->strategy, sizeof r->strategy, "%s", p->strategy);
    r->devices = p->n_workers;
    r->config = &res->cfg;
    r->config_groups = doc->config_groups;
    return rc;
}

static double last_end_s(const struct span *spans, size_t n, int rank)
{
    double t = 0;
    for (size_t i = 0; i < n; i++)
        if (spans[i].rank == rank) t = fmax(t, spans[i].end_s);
    return t;
}

static double compute_of(const struct report *r, int rank)
{
    for (int i = 0; i < r->n_per_rank; i++)
        if (r->per_rank[i].rank == rank) return r->per_rank[i].compute_s;
    return NAN;
}

/* Per worker: its end and compute, measured and replayed. */
static int fill_ranks(const struct trace_doc *doc, int n_workers, struct replay_result *res,
                      struct err *e)
{
    res->ranks = XCALLOC(e, (size_t)n_workers + 1, sizeof *res->ranks);
    if (!res->ranks) return ERR_NOMEM;
    res->n_ranks = n_workers;
    for (int r = 0; r < n_workers; r++) {
        struct replay_rank *x = &res->ranks[r];
        x->rank = r;
        x->measured_end_s = last_end_s(doc->trace.spans.items, doc->trace.spans.len, r);
        x->replayed_end_s =
            last_end_s(res->replayed_trace.spans.items, res->replayed_trace.spans.len, r);
        x->measured_compute_s = compute_of(&res->measured, r);
        x->replayed_compute_s = compute_of(&res->replayed, r);
        x->straggler_share = NAN;
    }
    return 0;
}

/* --without-stragglers' per-rank shares: the replay with rank r alone made
 * typical, against the replay of everything as measured. */
static int straggler_shares(const struct replay_table *measured,
                            const struct replay_table *typical,
                            const struct replay_updates *updates,
                            const struct replay_table *comm, const struct workload *wl,
                            struct replay_result *res, struct err *e)
{
    res->is_share_skipped = res->n_ranks > REPLAY_MAX_SHARE_RANKS;
    if (res->is_share_skipped) return 0;
    double all_s = res->replayed.step_time_s.mean;
    for (int r = 0; r < res->n_ranks; r++) {
        struct replay_table one;
        int rc = replay_table_one_typical(measured, typical, r, &one, e);
        struct report rep;
        report_init(&rep);
        struct source src = {.table = &one, .updates = updates, .comm = comm, .wl = wl};
        if (rc == 0) rc = replay_sim(&res->cfg, wl, &src, NULL, &rep, e);
        if (rc == 0 && all_s > 0) res->ranks[r].straggler_share = 1 - rep.step_time_s.mean / all_s;
        report_release(&rep);
        replay_table_free(&one);
        TRY(rc);
    }
    return 0;
}

/* The what-if's scenario: cfg with o's network, strategy and devices. */
static int whatif_config(const struct replay_result *res, const struct replay_opts *o,
                         struct config *w, struct err *e)
{
    *w = res->cfg;
    if (o->cluster && o->cluster[0]) {
        struct cluster probe;
        TRY(cluster_load(o->cluster, &probe, e));
        snprintf(w->cluster, sizeof w->cluster, "%s", o->cluster);
    }
    if (o->strategy && o->strategy[0]) {
        const struct strategy *st = strategy_find(o->strategy, e);
        if (!st) return e->code;   /* its message names --strategy */
        snprintf(w->strategy, sizeof w->strategy, "%s", st->name);
    }
    if (o->scale_devices > 0) {
        /* weak scaling: each device keeps the samples it had */
        long long batch = (long long)llround((double)res->cfg.batch * (double)o->scale_devices /
                                             (double)res->cfg.devices);
        /* the batch the what-if runs must be one --batch allows */
        char text[32];
        snprintf(text, sizeof text, "%lld", batch > 0 ? batch : 1);
        TRY_CTX(e, config_set(w, "batch", text, ~0u, e),
                "--scale %lld: each device keeps its %lld samples", o->scale_devices,
                res->cfg.batch / (res->cfg.devices > 0 ? res->cfg.devices : 1));
        w->devices = o->scale_devices;
        w->np = 0;
    }
    return 0;
}

static void describe_whatif(const struct replay_opts *o, const struct config *w,
                            struct replay_result *res)
{
    char *b = res->whatif_what;
    size_t n = sizeof res->whatif_what, k = 0;
    const char *sep = "";
#define ADD(...)                                                                  \
    do {                                                                          \
        if (k < n) k += (size_t)snprintf(b + k, n - k, __VA_ARGS__);              \
    } while (0)
    if (o->without_stragglers) {
        ADD("without stragglers");
        sep = ", ";
    }
    if (o->strategy && o->strategy[0]) {
        ADD("%sas %s", sep, w->strategy);
        sep = ", ";
    }
    if (o->scale_devices > 0) {
        ADD("%sat %lld device%s (batch %lld)", sep, w->devices, w->devices == 1 ? "" : "s",
            w->batch);
        sep = ", ";
    }
    if (o->cluster && o->cluster[0]) ADD("%son %.200s", sep, w->cluster);
#undef ADD
}

/* The what-if's plan can be built. When it cannot, the strategy's message
 * names --devices, --batch or --model, options replay does not take: the
 * what-if keeps the trace's model and each device's samples, so it is said
 * in the trace's terms, with the options that asked for the plan. */
static int whatif_plan_check(const struct replay_result *res, const struct replay_opts *o,
                             const struct workload *wl, struct err *e)
{
    const struct config *w = &res->whatif_cfg;
    const struct strategy *st = strategy_find(w->strategy, e);
    if (!st) return e->code;
    struct plan *p = NULL;
    int rc = strategy_build(st, w, wl, &p, e);
    plan_free(p);
    if (rc == 0) return 0;
    char why[ERR_MSG_BYTES], asked[96] = "";
    snprintf(why, sizeof why, "%s", e->msg);
    if (o->strategy && o->strategy[0]) snprintf(asked, sizeof asked, "--strategy %s", w->strategy);
    if (o->scale_devices > 0)
        snprintf(asked + strlen(asked), sizeof asked - strlen(asked), "%s--scale %lld",
                 asked[0] ? " with " : "", o->scale_devices);
    return err_set(e, rc, "%s: the what-if (%s) builds no plan of the trace's model %s, batch %lld "
                   "on %lld devices (replay keeps the model and each device's samples; --scale "
                   "N sets the devices): %s", asked, res->whatif_what, w->model, w->batch,
                   w->devices, why);
}

static int run_whatif(const struct replay_table *measured, const struct replay_table *typical,
                      const struct replay_updates *updates, const struct replay_table *comm,
                      const struct plan *p, const struct workload *wl,
                      const struct replay_opts *o, struct replay_result *res, struct err *e)
{
    TRY(whatif_config(res, o, &res->whatif_cfg, e));
    describe_whatif(o, &res->whatif_cfg, res);
    const struct replay_table *from = o->without_stragglers ? typical : measured;
    bool is_replanned = strcmp(res->whatif_cfg.strategy, res->cfg.strategy) ||
                        res->whatif_cfg.devices != res->cfg.devices ||
                        res->whatif_cfg.batch != res->cfg.batch;
    struct replay_rates rates = {0};
    struct source src = {.wl = wl, .seed = o->seed, .is_drawn = o->scale_devices > 0};
    int rc = replay_rates_build(from, p, &rates, e);
    src.rates = &rates;
    if (!is_replanned) {
        src.table = from;
        src.updates = updates;   /* the same servers: their measured updates */
        /* the same network too: the measured messages, if asked */
        if (!strcmp(res->whatif_cfg.cluster, res->cfg.cluster)) src.comm = comm;
    }
    res->is_whatif_comm_modelled = comm && !src.comm;
    if (rc == 0 && is_replanned) rc = whatif_plan_check(res, o, wl, e);
    if (rc == 0 && (rc = replay_sim(&res->whatif_cfg, wl, &src, NULL, &res->whatif, e)) < 0)
        err_prefix(e, "the what-if (%s)", res->whatif_what);
    replay_rates_free(&rates);
    TRY(rc);
    res->whatif_ops_from_rates = src.n_from_rates;
    res->has_whatif = true;
    res->whatif_change = res->whatif.step_time_s.mean / res->measured.step_time_s.mean - 1;
    return 0;
}

/* The trace's scenario as replay runs it: what was measured stands in for
 * the disturbances, so none is drawn again. */
static int home_config(const struct trace_doc *doc, const struct replay_opts *o,
                       struct replay_result *res, struct err *e)
{
    res->cfg = doc->cfg;
    struct config *c = &res->cfg;
    c->positional = NULL;
    c->n_positional = 0;
    if (c->fail[0] || c->mtbf_hours > 0)
        return err_set(e, ERR_INPUT, "the traced run had failures (--fail %s, --mtbf %g): replay "
                       "replays runs without failures", c->fail[0] ? c->fail : "none",
                       c->mtbf_hours);
    snprintf(c->strategy, sizeof c->strategy, "%s", doc->strategy);
    snprintf(res->mode, sizeof res->mode, "%s", doc->mode);
    /* a real run does not know its network: --cluster says it, else the
     * loopback preset stands in */
    if (!strcmp(doc->mode, "real")) {
        const char *net = o->cluster && o->cluster[0] ? o->cluster : "cpu-loopback";
        struct cluster probe;
        TRY(cluster_load(net, &probe, e));
        snprintf(c->cluster, sizeof c->cluster, "%s", net);
    }
    snprintf(res->home_cluster, sizeof res->home_cluster, "%s", c->cluster);
    snprintf(c->straggler, sizeof c->straggler, "none");
    snprintf(c->jitter, sizeof c->jitter, "off");
    c->steps = doc->steps;
    c->epochs = 0;
    c->numerics = false;
    return 0;
}

int replay_run(const struct trace_doc *doc, const char *name, const struct replay_opts *o,
               struct replay_result *res, struct err *e)
{
    memset(res, 0, sizeof *res);
    report_init(&res->measured);
    report_init(&res->replayed);
    report_init(&res->whatif);
    trace_init(&res->replayed_trace, -1, -1);
    if (doc->n_dropped)
        return err_set(e, ERR_INPUT, "%s: the trace left out %lld span%s when it was written (its "
                       "limit): a replay needs every op; trace fewer --steps", name,
                       (long long)doc->n_dropped, doc->n_dropped == 1 ? "" : "s");
    TRY(home_config(doc, o, res, e));
    /* --cluster is the what-if's network only where the trace knows its own */
    struct replay_opts wo = *o;
    if (!strcmp(doc->mode, "real")) wo.cluster = NULL;
    o = &wo;

    struct workload *wl = NULL;
    struct plan *p = NULL;
    struct replay_table measured = {0}, typical = {0};
    struct replay_updates updates = {0};
    struct replay_table comm = {0};
    const struct strategy *st = NULL;
    int rc = workload_parse(res->cfg.model, &wl, e);
    if (rc < 0) err_prefix(e, "%s: \"scenario.model\"", name);   /* the trace's, not an option */
    if (rc == 0 && !(st = strategy_find(res->cfg.strategy, e))) rc = e->code;
    if (rc == 0 && (rc = strategy_build(st, &res->cfg, wl, &p, e)) < 0)
        err_prefix(e, "%s: its \"scenario\" (the options of the traced run)", name);
    if (rc == 0 && (p->n_ranks != doc->n_ranks || p->n_workers != doc->n_workers))
        rc = err_set(e, ERR_INPUT, "%s: the trace has %d ranks (%d workers), but its scenario "
                     "builds %d (%d): the trace is of another plan", name, doc->n_ranks,
                     doc->n_workers, p->n_ranks, p->n_workers);
    /* An asynchronous run's fast worker may run up to all of the job's
     * steps; and a rank's step k means k spans of it before: both bound
     * what a (damaged) file can make replay allocate. */
    int64_t n_spans = (int64_t)doc->trace.spans.len;
    int64_t max_steps = doc->steps * (p && p->n_workers > 1 ? p->n_workers : 1);
    if (max_steps > n_spans) max_steps = n_spans;
    if (rc == 0 && doc->steps > n_spans)
        rc = err_set(e, ERR_INPUT, "%s: the trace says its run had %lld steps but holds %lld "
                     "spans: it is cut short or damaged", name, (long long)doc->steps,
                     (long long)n_spans);
    /* Some worker reaches the last step: a synchronous one always, and of
     * an asynchronous job's S x N steps one worker runs S or more. */
    int64_t last_step = -1;
    for (size_t i = 0; i < doc->trace.spans.len; i++)
        if (doc->trace.spans.items[i].step > last_step) last_step = doc->trace.spans.items[i].step;
    if (rc == 0 && last_step + 1 < doc->steps)
        rc = err_set(e, ERR_INPUT, "%s: the trace says its run had %lld steps but its spans end "
                     "at step %lld: it is cut short or damaged", name, (long long)doc->steps,
                     (long long)last_step);
    if (rc == 0) rc = replay_table_from_spans(doc->trace.spans.items, doc->trace.spans.len, p,
                                              max_steps, name, &measured, e);
    if (rc == 0) rc = replay_check_complete(doc->trace.spans.items, doc->trace.spans.len, p,
                                            doc->steps, &measured, name, e);
    if (rc == 0 && o->measured_comm)
        rc = replay_comm_from_spans(doc->trace.spans.items, doc->trace.spans.len, p, &measured,
                                    &comm, e);
    const struct replay_table *given_comm = o->measured_comm ? &comm : NULL;
    res->is_measured_comm = o->measured_comm;
    if (rc == 0) rc = replay_updates_from_spans(doc->trace.spans.items, doc->trace.spans.len, p,
                                                &updates, e);
    if (rc == 0) rc = measured_report(doc, p, res, e);
    res->n_plan_ranks = p ? p->n_ranks : 0;
    res->has_server_updates = updates.has_any;
    res->processes = doc->crowded_processes;
    res->cores = doc->crowded_cores;
    res->is_oversubscribed = doc->crowded_cores > 0 && doc->crowded_processes > doc->crowded_cores;
    res->clock_error_s = doc->clock_error_s;
    struct replay_rates rates = {0};
    if (rc == 0) rc = replay_rates_build(&measured, p, &rates, e);
    struct source src = {.table = &measured, .rates = &rates, .updates = &updates,
                         .comm = given_comm, .wl = wl};
    if (rc == 0) rc = replay_sim(&res->cfg, wl, &src, &res->replayed_trace, &res->replayed, e);
    replay_rates_free(&rates);
    res->replayed_ops_from_rates = src.n_from_rates;
    res->has_comm_modelled = src.has_comm_modelled;
    if (rc == 0) {
        res->error = res->replayed.step_time_s.mean / res->measured.step_time_s.mean - 1;
        rc = fill_ranks(doc, p->n_workers, res, e);
    }
    if (rc == 0 && o->without_stragglers) rc = replay_table_typical(&measured, p, &typical, e);
    if (rc == 0 && o->without_stragglers) rc = straggler_shares(&measured, &typical, &updates, given_comm, wl, res, e);
    bool wants_whatif = o->without_stragglers || (o->cluster && o->cluster[0]) ||
                        (o->strategy && o->strategy[0]) || o->scale_devices > 0;
    if (rc == 0 && wants_whatif) rc = run_whatif(&measured, &typical, &updates, given_comm, p, wl, o, res, e);
    replay_updates_free(&updates);
    replay_table_free(&comm);
    replay_table_free(&measured);
    replay_table_free(&typical);
    plan_free(p);
    workload_free(wl);
    /* the reports point at res's configs, which moved nowhere */
    return rc;
}

void replay_result_release(struct replay_result *res)
{
    if (!res) return;
    report_release(&res->measured);
    report_release(&res->replayed);
    report_release(&res->whatif);
    trace_release(&res->replayed_trace);
    free(res->ranks);
    res->ranks = NULL;
}

/* strata schedule: a strategy's plan per rank, the checker's verdict and the
 * unit-cost timeline, strata's EXPLAIN. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/chakra_write.h"
#include "../core/json_doc.h"
#include "../core/plan_check.h"
#include "../core/plan_json.h"
#include "../plots/timeline_text.h"
#include "../strategies/strategy.h"
#include "scenario.h"

/* Output options of OPTG_OUTPUT that schedule has nothing to write to: it
 * runs no simulation, so there is no report row (--csv) or trace (--trace),
 * and it always prints its unit-cost timeline of the one step it plans
 * (--timeline, --timeline-steps). Accepting them wrote nothing, silently. */
const struct refusal schedule_refused[] = {
    {(const char *const[]){"csv", "trace", "timeline", "timeline-steps", NULL},
     "schedule writes only the plan (--json, --chakra) and always prints its one step's unit-cost "
     "timeline; strata sim writes a run's CSV, trace and timeline"},
    {NULL, NULL},
};

/* Which op kinds some rank of p runs: one pass over every op, done once (a
 * scan per kind, or per rank, made schedule quadratic in ranks). */
static void kinds_used(const struct plan *p, bool is_used[OP_N_KINDS])
{
    for (int k = 0; k < OP_N_KINDS; k++) is_used[k] = false;
    for (int r = 0; r < p->n_ranks; r++)
        for (size_t i = 0; i < p->ranks[r].ops.len; i++)
            is_used[p->ranks[r].ops.items[i].kind] = true;
}

/* The op column's width: the longest name of the kinds used, 9 at least
 * ("ALLREDUCE"), so that the common plans keep their columns. */
static int name_width(const bool is_used[OP_N_KINDS])
{
    int width = 9;
    for (int k = 0; k < OP_N_KINDS; k++) {
        int n = (int)strlen(op_infos[k].name);
        if (n > width && is_used[k]) width = n;
    }
    return width;
}

/* One line per op: what it does, to what, and what it waits for. */
static void print_op(FILE *out, const struct plan *p, int r, int i, int width)
{
    const struct op *op = &p->ranks[r].ops.items[i];
    char where[48] = "-", peer[32] = "-", bytes[32], deps[96] = "-", mb[16] = "-";
    if (op_infos[op->kind].cls == OPC_P2P)
        snprintf(where, sizeof where, "%s@%d", plan_tag_kind(op->tag) == TAG_ACT ? "act" : "grad",
                 plan_tag_boundary(op->tag));
    else
        snprintf(where, sizeof where, "[%d,%d)", op->lo, op->hi);
    enum op_class cls = op_infos[op->kind].cls;
    if (cls == OPC_P2P) snprintf(peer, sizeof peer, "%s %d", op_infos[op->kind].dir, op->peer);
    if (cls == OPC_SERVER) snprintf(peer, sizeof peer, "server %d", op->peer);
    if (cls == OPC_COLLECTIVE)
        snprintf(peer, sizeof peer, "group %d (%d)", op->group, p->groups.items[op->group].n_ranks);
    if (op->kind == OP_UPDATE && op->group >= 0)   /* ZeRO-1: this rank's shard only */
        snprintf(peer, sizeof peer, "shard %d of %d", plan_group_member(p, op->group, r),
                 p->groups.items[op->group].n_ranks);
    if (op->mb >= 0) snprintf(mb, sizeof mb, "%d", op->mb);
    format_bytes((double)op->bytes, bytes, sizeof bytes);
    const int *d = plan_deps(p, r, i);
    size_t used = 0;
    for (int k = 0; k < op->n_deps && used < sizeof deps - 12; k++)
        used += (size_t)snprintf(deps + used, sizeof deps - used, "%s%d", k ? "," : "", d[k]);
    char lag[64] = "";
    if (op->lag > 0) snprintf(lag, sizeof lag, "  (lag %d: step s-%d's gradients)", op->lag, op->lag);
    fprintf(out, "  %4d  %-7s  %-*s  %-9s  %4s  %7d  %-14s  %10s%s  %s%s\n", i,
            plan_stream_name(op->stream), width, op_infos[op->kind].name, where, mb, op->n_samples, peer,
            bytes, op_infos[op->kind].cls == OPC_COMPUTE ? " touched" : " moved  ", deps, lag);
}

/* --explain: the meaning of each op kind the plan uses, in the order of the
 * instruction list (core/plan.h), and of its server policy
 * (core/ps_policy.h): SQLite's EXPLAIN comment column, once per kind. */
static void print_explain(FILE *out, const struct plan *p, const bool is_used[OP_N_KINDS],
                          int width)
{
    fputs("\nops of this plan, and what each does ([lo,hi), mb, peer and group are the "
          "columns of the\nprogram below):\n", out);
    for (int k = 0; k < OP_N_KINDS; k++)
        if (is_used[k])
            fprintf(out, "  %-*s  %-7s  %s\n", width, op_infos[k].name,
                    plan_stream_name(op_infos[k].stream), op_infos[k].meaning);
    const struct policy_info *pi = &policy_infos[p->policy];
    if (!pi->has_servers) return;
    fprintf(out, "server policy %s", pi->name);
    if (pi->arg) fprintf(out, ":%d (%s = %d)", p->policy_arg, pi->arg, p->policy_arg);
    fprintf(out, ": %s\n", pi->meaning);
}

/* The first layer worker r runs forward: what tells its stage. */
static int first_layer(const struct plan *p, int r)
{
    int lo = p->wl->n_layers;
    const struct plan_rank *pr = &p->ranks[r];
    for (size_t i = 0; i < pr->ops.len; i++)
        if (pr->ops.items[i].kind == OP_FORWARD && pr->ops.items[i].lo < lo)
            lo = pr->ops.items[i].lo;
    return lo;
}

/* Hybrid data x pipeline plans (--dp): which rank is which stage of which
 * replica. Workers that start at the same layer are copies of one stage;
 * the k-th copy (by rank) is replica k's. Printed only when there are
 * several stages each with the same several copies. O(ops + layers): each
 * worker's first layer is found once. */
static int print_grid(FILE *out, const struct plan *p, struct err *e)
{
    int n = p->n_workers, n_layers = p->wl->n_layers, n_stages = 0, n_copies = 0, status = 0;
    int *first = malloc(sizeof *first * (size_t)(n ? n : 1));           /* [n] */
    int *copy = malloc(sizeof *copy * (size_t)(n ? n : 1));             /* [n]: r's copy number */
    int *n_at = calloc((size_t)n_layers + 1, sizeof *n_at);             /* [first layer] */
    int *row = malloc(sizeof *row * (size_t)(n ? n : 1));               /* [replica x stage] */
    int *n_placed = calloc((size_t)(n ? n : 1), sizeof *n_placed);      /* [replica] */
    if (!first || !copy || !n_at || !row || !n_placed) {
        status = err_set(e, ERR_NOMEM, "out of memory drawing the replica grid");
        goto out;
    }
    /* r's copy number: the ranks before it that start where it does */
    for (int r = 0; r < n; r++) {
        first[r] = first_layer(p, r);
        copy[r] = n_at[first[r]]++;
        n_stages += copy[r] == 0;
    }
    for (int r = 0; r < n; r++) {
        if (n_copies && n_at[first[r]] != n_copies) goto out;   /* not a grid */
        n_copies = n_at[first[r]];
    }
    if (n_stages < 2 || n_copies < 2) goto out;
    fprintf(out, "\ngrid: %d replicas x %d stages; the rank of each stage in each replica\n",
            n_copies, n_stages);
    fprintf(out, "  %-11s", "");
    for (int i = 0; i < n_stages; i++) {
        char label[24];
        snprintf(label, sizeof label, "stage %d", i);
        fprintf(out, "  %9s", label);
    }
    fputs("\n", out);
    /* Replica d's row: its ranks in rank order. Every stage has n_copies
     * copies, so each replica has one rank per stage: n_stages a row. */
    for (int r = 0; r < n; r++) row[copy[r] * n_stages + n_placed[copy[r]]++] = r;
    for (int d = 0; d < n_copies; d++) {
        fprintf(out, "  replica %-3d", d);
        for (int i = 0; i < n_stages; i++) fprintf(out, "  %9d", row[d * n_stages + i]);
        fputs("\n", out);
    }
out:
    free(first);
    free(copy);
    free(n_at);
    free(row);
    free(n_placed);
    return status;
}

static void print_rank(FILE *out, const struct plan *p, int r, int width)
{
    const struct plan_rank *pr = &p->ranks[r];
    if (pr->is_server) {
        fprintf(out, "\nrank %d: parameter server holding layers [%d,%d), policy %s", r,
                pr->shard_lo, pr->shard_hi, policy_infos[p->policy].name);
        if (policy_infos[p->policy].arg)
            fprintf(out, ":%d", p->policy_arg);
        fputs("; no program (servers are agents of the executor)\n", out);
        return;
    }
    int lo = p->wl->n_layers, hi = 0;
    for (size_t i = 0; i < pr->ops.len; i++)
        if (pr->ops.items[i].kind == OP_FORWARD) {
            if (pr->ops.items[i].lo < lo) lo = pr->ops.items[i].lo;
            if (pr->ops.items[i].hi > hi) hi = pr->ops.items[i].hi;
        }
    fprintf(out, "\nrank %d: worker, layers [%d,%d), %zu ops\n", r, lo, hi, pr->ops.len);
    fprintf(out, "  %4s  %-7s  %-*s  %-9s  %4s  %7s  %-14s  %18s  %s\n", "#", "stream", width,
            "op", "layers", "mb", "samples", "peer/group", "bytes", "deps");
    for (size_t i = 0; i < pr->ops.len; i++) print_op(out, p, r, (int)i, width);
}

static int write_json(const struct plan *p, const struct plan_verdict *v, const char *path,
                      struct err *e)
{
    cJSON *root = plan_to_json(p);
    if (!root) return err_set(e, ERR_NOMEM, "out of memory building the plan's JSON");
    cJSON_AddBoolToObject(root, "valid", v->is_valid);
    cJSON *defects = cJSON_AddArrayToObject(root, "defects");
    for (int i = 0; defects && i < v->n_defects && i < PLAN_MAX_DEFECTS; i++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddNumberToObject(d, "rank", v->defects[i].rank);
        cJSON_AddNumberToObject(d, "op", v->defects[i].op);
        cJSON_AddStringToObject(d, "message", v->defects[i].msg);
        cJSON_AddItemToArray(defects, d);
    }
    if (json_write_atomic(root, path, e) < 0) return err_prefix(e, "--json");
    return 0;
}

int cmd_schedule(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct scenario s;
    struct plan *p = NULL;
    struct plan_index *ix = NULL;
    struct plan_verdict v;
    struct plan_times t = {0};
    int status = 0;

    /* its refused outputs were refused with the options (scenario_load) */
    if (scenario_start(&s, self, argc, argv, &status) < 0) goto out;
    const struct strategy *st = s.strategy;
    /* --json and --chakra were checked with the options (outputs_check) */
    if (strategy_build(st, &s.cfg, s.wl, &p, &e) < 0 ||
        plan_prepare(p, &v, &ix, &e) < 0) {
        status = scenario_fail_in(self, &s, &e);
        goto out;
    }

    char desc[512], comm[32];
    workload_describe(s.wl, desc, sizeof desc);
    printf("%s: %s\n%s\nbatch %d per step on %d worker%s", st->name, st->summary, desc, p->batch,
           p->n_workers, p->n_workers == 1 ? "" : "s");
    if (p->n_servers) printf(" and %d server%s", p->n_servers, p->n_servers == 1 ? "" : "s");
    if (p->n_microbatches > 1)
        printf(", as %d microbatches through the stages", p->n_microbatches);
    puts("");
    scenario_print_notes(stdout, st, &s.cfg, p, "");
    if (p->n_grad_slots > 1)
        printf("steps in flight: %d (an op with lag L works on the gradients of the step L "
               "back, and does nothing before that step exists)\n", p->n_grad_slots);
    bool is_used[OP_N_KINDS];
    kinds_used(p, is_used);
    int width = name_width(is_used);
    if (s.cfg.explain) print_explain(stdout, p, is_used, width);
    if (print_grid(stdout, p, &e) < 0) {
        status = scenario_fail_in(self, &s, &e);
        goto out;
    }
    for (int r = 0; r < p->n_ranks; r++) print_rank(stdout, p, r, width);
    puts("");

    if (v.is_valid) {
        if (plan_unit_times(ix, &t, &e) < 0) {
            status = scenario_fail_in(self, &s, &e);
            goto out;
        }
        size_t n_spans;
        struct span *spans = timeline_spans_of_unit_run(p, &t, &n_spans);
        if (!spans) {
            err_set(&e, ERR_NOMEM, "out of memory drawing the timeline");
            status = scenario_fail_in(self, &s, &e);
            goto out;
        }
        /* One unit a column when the step fits the terminal: the textbook picture. */
        int cols = timeline_width();
        if (t.makespan + 18 < cols) cols = (int)t.makespan + 18;
        printf("At unit cost: forward 1 unit per layer, backward 2%s, communication free.\n",
               is_used[OP_BACKWARD_INPUT] ? " (its input and weight halves 1 each)" : "");
        timeline_print(stdout, spans, n_spans, p->n_ranks, t.makespan, cols, 64, "units");
        free(spans);
        format_bytes((double)plan_comm_bytes(p), comm, sizeof comm);
        /* the bytes handed to communication (plan_comm_bytes: each rank's
         * collective buffer), not those on the wire, which the algorithm
         * decides (a ring all-reduce moves 2(n-1)/n of each buffer) */
        printf("\nvalid: %d ranks, %lld ops, %s in communication ops per step; unit-cost "
               "step %g units, bubble %.1f%%\n", p->n_ranks, (long long)plan_n_ops(p), comm,
               t.makespan, 100 * plan_unit_bubble(p, &t));
    } else {
        printf("INVALID: %d defect%s\n", v.n_defects, v.n_defects == 1 ? "" : "s");
        for (int i = 0; i < v.n_defects && i < PLAN_MAX_DEFECTS; i++)
            printf("  rank %d op %d: %s\n", v.defects[i].rank, v.defects[i].op, v.defects[i].msg);
        /* A built-in strategy that emits a broken plan is a bug in strata. */
        status = 1;
    }
    if (s.cfg.json_path[0] && write_json(p, &v, s.cfg.json_path, &e) < 0)
        status = scenario_fail_in(self, &s, &e);
    /* Chakra traces of a valid plan only: other tools would run a broken one */
    if (v.is_valid && s.cfg.chakra_dir[0]) {
        if (chakra_write_plan(p, &s.cfg, s.cfg.chakra_dir, st->name, &e) < 0) {
            err_prefix(&e, "--chakra");
            status = scenario_fail_in(self, &s, &e);
        }
        else
            printf("Chakra traces: %s/%s.{0..%d}.et (strata sim --workload chakra:%s runs "
                   "them)\n", s.cfg.chakra_dir, st->name, p->n_ranks - 1, s.cfg.chakra_dir);
    }
out:
    plan_times_release(&t);
    plan_index_free(ix);
    plan_free(p);
    scenario_release(&s);
    return status;
}

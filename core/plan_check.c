/* The static plan checker (see plan_check.h).
 *
 * The checks fill in the plan's index (core/plan_index.h) as they match
 * ops, and record each defect they find; plan_prepare then derives the rest
 * of the index, runs the matched plan at unit cost (plan_run.c), names the
 * cycle if it cannot finish, and hands the index of a valid plan out. Everything
 * is sorting and linear passes: O(n log n) in the number of ops, whatever the
 * number of ranks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_check_internal.h"

/* A (key, op) pair; sorted by key then g (collect), each rank's ops stay in
 * program order, since g grows with rank and index. */
struct rec {
    int key, g;
};

static inline const struct op *op_at(const struct ck *c, int g)
{
    return plan_index_op(c->ix, g);
}

/* ---- naming ops for people ---------------------------------------------- */

/* "RECV from 0, ACT@1 mb 3", "ALLREDUCE group 0 [0,4)", "FORWARD [0,2) mb 1" */
static void op_desc(const struct op *op, char *buf, size_t n)
{
    if ((int)op->kind < 0 || (int)op->kind >= OP_N_KINDS) {
        snprintf(buf, n, "op kind %d", (int)op->kind);
        return;
    }
    const struct op_info *o = &op_infos[op->kind];
    switch (o->cls) {
    case OPC_P2P:
        snprintf(buf, n, "%s %s %d, %s@%d mb %d", o->name, o->dir, op->peer,
                 plan_tag_kind(op->tag) == TAG_ACT ? "ACT" : "GRAD", plan_tag_boundary(op->tag),
                 plan_tag_mb(op->tag));
        break;
    case OPC_COLLECTIVE:
        snprintf(buf, n, "%s group %d [%d,%d)", o->name, op->group, op->lo, op->hi);
        break;
    case OPC_SERVER:
        snprintf(buf, n, "%s %s %d [%d,%d)", o->name, o->dir, op->peer, op->lo, op->hi);
        break;
    case OPC_COMPUTE:
        if (op->mb != -1) snprintf(buf, n, "%s [%d,%d) mb %d", o->name, op->lo, op->hi, op->mb);
        else snprintf(buf, n, "%s [%d,%d)", o->name, op->lo, op->hi);
        break;
    }
}

/* "rank 1 op 4 (RECV from 0, ACT@1 mb 3)" */
const char *ck_op_name(const struct plan_index *ix, int g, char buf[NAME_BYTES])
{
    char d[80];
    int r = ix->rank_of[g];
    op_desc(plan_index_op(ix, g), d, sizeof d);
    snprintf(buf, NAME_BYTES, "rank %d op %d (%.80s)", r, g - ix->off[r], d);
    return buf;
}

static void defect(struct plan_verdict *v, int rank, int op, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void defect(struct plan_verdict *v, int rank, int op, const char *fmt, ...)
{
    if (v->n_defects < PLAN_MAX_DEFECTS) {
        struct plan_defect *d = &v->defects[v->n_defects];
        d->rank = rank;
        d->op = op;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->msg, sizeof d->msg, fmt, ap);
        va_end(ap);
    }
    v->n_defects++;
}

/* A defect at op g: "rank R op I (...) <rest>". */
static void op_defect(const struct ck *c, struct plan_verdict *v, int g, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void op_defect(const struct ck *c, struct plan_verdict *v, int g, const char *fmt, ...)
{
    char rest[400], name[NAME_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rest, sizeof rest, fmt, ap);
    va_end(ap);
    int r = c->ix->rank_of[g];
    defect(v, r, g - c->ix->off[r], "%s %s", ck_op_name(c->ix, g, name), rest);
}

/* ---- the index ------------------------------------------------------------ */

void ck_free(struct ck *c)
{
    plan_index_free(c->ix);
    memset(c, 0, sizeof *c);
}

int ck_init(struct ck *c, const struct plan *p, struct err *e)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    return plan_index_create(p, &c->ix, e);
}

/* ---- malformed ops -------------------------------------------------------- */

static bool in_group(const struct plan_group *grp, int rank)
{
    int lo = 0, hi = grp->n_ranks;   /* ranks ascending: binary search */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (grp->ranks[mid] == rank) return true;
        if (grp->ranks[mid] < rank) lo = mid + 1;
        else hi = mid;
    }
    return false;
}

/* Does BACKWARD_WEIGHT op of rank pr wait for the BACKWARD_INPUT of its
 * microbatch and layers? That input half keeps what the weight half reads
 * (nn/mlp.h), so the dep must be explicit, not merely implied by stream
 * order. O(deps). */
static bool waits_for_its_input_half(const struct plan_rank *pr, const struct op *op)
{
    const int *deps = pr->deps.items + op->dep_first;
    for (int k = 0; k < op->n_deps; k++) {
        const struct op *d = &pr->ops.items[deps[k]];
        if (d->kind == OP_BACKWARD_INPUT && d->mb == op->mb && d->lo == op->lo &&
            d->hi == op->hi)
            return true;
    }
    return false;
}

/* Checks one op's own fields; true when it is well formed. *member_of is
 * the group last found to hold op g's rank (-1: none yet): a rank's
 * collectives are mostly on one group, and a binary search of a group of
 * 100,000 ranks for each of them was a tenth of the checks. */
static bool op_well_formed(const struct ck *c, struct plan_verdict *v, int g, int *member_of)
{
    const struct plan *p = c->p;
    int r = c->ix->rank_of[g], i = g - c->ix->off[r];
    const struct plan_rank *pr = &p->ranks[r];
    const struct op *op = &pr->ops.items[i];
    int n_layers = p->wl ? p->wl->n_layers : PLAN_MAX_BOUNDARY;
    int before = v->n_defects;

    if ((int)op->kind < 0 || (int)op->kind >= OP_N_KINDS) {
        defect(v, r, i, "rank %d op %d has kind %d, which is not an op kind", r, i,
               (int)op->kind);
        return false;
    }
    if (op->stream < 0 || op->stream >= PLAN_N_STREAMS)
        op_defect(c, v, g, "runs on stream %d; streams are 0 to %d", op->stream,
                  PLAN_N_STREAMS - 1);
    if (op->n_deps < 0 || op->dep_first < 0 || (size_t)op->dep_first + (size_t)op->n_deps >
                                                   pr->deps.len) {
        op_defect(c, v, g, "has deps [%d, +%d) outside the rank's %zu dep entries",
                  op->dep_first, op->n_deps, pr->deps.len);
    } else {
        const int *deps = pr->deps.items + op->dep_first;
        bool are_deps_earlier = true;
        for (int k = 0; k < op->n_deps; k++)
            if (deps[k] < 0 || deps[k] >= i) {
                op_defect(c, v, g, "depends on op %d, which is not an earlier op of rank %d",
                          deps[k], r);
                are_deps_earlier = false;
            }
        if (are_deps_earlier && op->kind == OP_BACKWARD_WEIGHT &&
            !waits_for_its_input_half(pr, op))
            op_defect(c, v, g, "waits for no BACKWARD_INPUT of mb %d and layers [%d,%d): the "
                      "weight half needs what that input half keeps",
                      op->mb, op->lo, op->hi);
    }

    enum op_class cls = op_infos[op->kind].cls;
    if (cls == OPC_P2P) {
        int boundary = plan_tag_boundary(op->tag);
        if (op->lo != op->hi || op->lo != boundary || boundary > n_layers)
            op_defect(c, v, g, "has layers [%d,%d) and tag boundary %d; a %s crosses one "
                      "boundary b in 0..%d, with lo = hi = b",
                      op->lo, op->hi, boundary, op_infos[op->kind].name, n_layers);
        if (op->peer < 0 || op->peer >= p->n_workers || op->peer == r)
            op_defect(c, v, g, "names peer %d; the peer must be another worker (0..%d)",
                      op->peer, p->n_workers - 1);
    } else if (op->lo < 0 || op->lo >= op->hi || op->hi > n_layers) {
        op_defect(c, v, g, "has layers [%d,%d), which are empty or outside the model's %d",
                  op->lo, op->hi, n_layers);
    }
    if (op->lag != 0 && (op->lag < 0 || op->lag >= p->n_grad_slots ||
                         (op->kind != OP_ALLREDUCE && op->kind != OP_UPDATE)))
        op_defect(c, v, g, "has lag %d; only an ALLREDUCE or UPDATE may lag, by 0 to %d "
                  "(the plan's %d gradient blocks less one)",
                  op->lag, p->n_grad_slots - 1, p->n_grad_slots);
    /* a collective names its group, and so does a shard UPDATE: the group
     * whose shard it steps */
    if (plan_is_collective(op->kind) || (op->kind == OP_UPDATE && op->group != -1)) {
        if (op->group < 0 || (size_t)op->group >= p->groups.len)
            op_defect(c, v, g, "names group %d; the plan has %zu groups", op->group,
                      p->groups.len);
        else if (op->group != *member_of && !in_group(&p->groups.items[op->group], r))
            op_defect(c, v, g, "is on group %d, which rank %d is not a member of", op->group, r);
        else
            *member_of = op->group;
    }
    if (cls == OPC_SERVER) {
        if (op->peer < p->n_workers || op->peer >= p->n_ranks) {
            op_defect(c, v, g, "names server %d; the servers are ranks %d..%d", op->peer,
                      p->n_workers, p->n_ranks - 1);
        } else {
            const struct plan_rank *srv = &p->ranks[op->peer];
            if (op->lo < srv->shard_lo || op->hi > srv->shard_hi)
                op_defect(c, v, g, "moves layers [%d,%d) but server %d holds only [%d,%d)",
                          op->lo, op->hi, op->peer, srv->shard_lo, srv->shard_hi);
        }
        if (!policy_infos[p->policy].has_servers)
            op_defect(c, v, g, "talks to a parameter server, but the plan has no server "
                      "policy (policy none)");
    }
    return v->n_defects == before;
}

static void check_ops(struct ck *c, struct plan_verdict *v)
{
    const struct plan *p = c->p;
    for (int r = 0; r < p->n_ranks; r++) {
        if (p->ranks[r].is_server) {
            if (p->ranks[r].ops.len)
                defect(v, r, 0, "rank %d is a parameter server but has %zu ops; servers run "
                       "no program (they are agents of the executor)", r, p->ranks[r].ops.len);
            continue;
        }
        int last[PLAN_N_STREAMS] = {-1, -1}, member_of = -1;
        for (int g = c->ix->off[r]; g < c->ix->off[r + 1]; g++) {
            if (!op_well_formed(c, v, g, &member_of)) continue;
            const struct op *op = op_at(c, g);
            c->ix->kind[g] = (uint8_t)op->kind;
            c->n_of_kind[op->kind]++;
            int s = op->stream;
            c->ix->prev[g] = last[s];
            if (last[s] >= 0) c->ix->next[last[s]] = g;
            last[s] = g;
        }
    }
}

/* ---- SEND/RECV matching ---------------------------------------------------- */

struct p2p_rec {
    int src, dst;
    uint32_t tag;
    int is_recv, g;
};

static int cmp_p2p(const void *a, const void *b)
{
    const struct p2p_rec *x = a, *y = b;
    if (x->src != y->src) return (x->src > y->src) - (x->src < y->src);
    if (x->dst != y->dst) return (x->dst > y->dst) - (x->dst < y->dst);
    if (x->tag != y->tag) return (x->tag > y->tag) - (x->tag < y->tag);
    if (x->is_recv != y->is_recv) return x->is_recv - y->is_recv;
    return (x->g > y->g) - (x->g < y->g);
}

/* Sorts every SEND and RECV by (sender, receiver, tag): each key must hold
 * exactly one SEND, then exactly one RECV. O(n log n). */
static int check_p2p(struct ck *c, struct plan_verdict *v, struct err *e)
{
    size_t n = (size_t)c->n_of_kind[OP_SEND] + (size_t)c->n_of_kind[OP_RECV];
    if (n == 0) return 0;
    struct p2p_rec *recs = XCALLOC(e, n, sizeof *recs);
    if (!recs) return ERR_NOMEM;
    n = 0;
    for (int g = 0; g < c->ix->n_ops; g++) {
        if (c->ix->kind[g] != OP_SEND && c->ix->kind[g] != OP_RECV) continue;
        const struct op *op = op_at(c, g);
        bool is_recv = op->kind == OP_RECV;
        int r = c->ix->rank_of[g];
        recs[n++] = (struct p2p_rec){is_recv ? op->peer : r, is_recv ? r : op->peer, op->tag,
                                     is_recv, g};
    }
    qsort(recs, n, sizeof *recs, cmp_p2p);
    char a[NAME_BYTES], b[NAME_BYTES];
    for (size_t lo = 0, hi; lo < n; lo = hi) {
        size_t first_recv = n;
        for (hi = lo; hi < n && recs[hi].src == recs[lo].src && recs[hi].dst == recs[lo].dst &&
                      recs[hi].tag == recs[lo].tag;
             hi++)
            if (recs[hi].is_recv && first_recv == n) first_recv = hi;
        if (first_recv == n) first_recv = hi;
        size_t n_send = first_recv - lo, n_recv = hi - first_recv;
        int send = n_send ? recs[lo].g : -1, recv = n_recv ? recs[first_recv].g : -1;
        if (!n_recv)
            op_defect(c, v, send, "has no matching RECV at rank %d", recs[lo].dst);
        if (!n_send)
            op_defect(c, v, recv, "has no matching SEND at rank %d", recs[lo].src);
        for (size_t k = lo + 1; k < first_recv; k++)
            op_defect(c, v, recs[k].g, "repeats %s: same receiver and tag; each SEND needs a "
                      "tag of its own", ck_op_name(c->ix, send, a));
        for (size_t k = first_recv + 1; k < hi; k++)
            op_defect(c, v, recs[k].g, "repeats %s: same sender and tag; a tag is received once",
                      ck_op_name(c->ix, recv, a));
        if (send >= 0 && recv >= 0) {
            if (op_at(c, send)->bytes != op_at(c, recv)->bytes)
                defect(v, recs[lo].src, send - c->ix->off[recs[lo].src],
                       "%s sends %lld bytes but %s expects %lld", ck_op_name(c->ix, send, a),
                       (long long)op_at(c, send)->bytes, ck_op_name(c->ix, recv, b),
                       (long long)op_at(c, recv)->bytes);
            c->ix->partner[send] = recv;
            c->ix->partner[recv] = send;
        }
    }
    free(recs);
    return 0;
}

/* ---- sequences every member must agree on ---------------------------------- */

/* One participant's ops of one kind on one group or server, in program order. */
struct run {
    int rank;
    const struct rec *items;
    int n;
};

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Do a and b, the k-th ops of two members, do the same thing: the same kind
 * (a group's collectives may mix kinds) on the same layers? */
static bool same_work(const struct op *a, const struct op *b)
{
    /* members that lag differently would skip a collective in different
     * steps (core/plan.h "Steps in flight") */
    return a->kind == b->kind && a->lo == b->lo && a->hi == b->hi && a->lag == b->lag;
}

/* The members of a group (or the workers pushing to one server) must do the
 * same number of ops, of the same kind with the same [lo,hi), in the same order. The
 * reference is the most common length (ties: the longer, then the lowest
 * rank), so the member that skips or adds one is the one reported.
 * *ref is its index, or -1 when some member differs. */
static int check_agree(const struct ck *c, struct plan_verdict *v, const struct run *runs,
                       int n, const char *verb, const char *what, const char *why, int *ref,
                       struct err *e)
{
    *ref = -1;
    if (n == 0) return 0;
    int *len = XCALLOC(e, (size_t)n, sizeof *len);
    if (!len) return ERR_NOMEM;
    for (int i = 0; i < n; i++) len[i] = runs[i].n;
    qsort(len, (size_t)n, sizeof *len, cmp_int);
    int best = len[0], best_count = 0;
    for (int i = 0, j; i < n; i = j) {
        for (j = i; j < n && len[j] == len[i]; j++) {}
        if (j - i >= best_count) best = len[i], best_count = j - i;
    }
    free(len);
    int r0 = 0;
    while (runs[r0].n != best) r0++;
    const struct run *R = &runs[r0];

    bool agree = true;
    char a[NAME_BYTES], b[NAME_BYTES], lens[160];
    for (int i = 0; i < n; i++) {
        const struct run *M = &runs[i];
        if (i == r0) continue;
        snprintf(lens, sizeof lens, "rank %d %s %d %s where rank %d %s %d", M->rank, verb, M->n,
                 what, R->rank, verb, R->n);
        int k = 0;
        while (k < M->n && k < R->n && same_work(op_at(c, M->items[k].g), op_at(c, R->items[k].g)))
            k++;
        if (k < M->n && k < R->n) {
            op_defect(c, v, M->items[k].g, "is #%d of its %s, but rank %d's #%d is %s%s%s; %s",
                      k + 1, what, R->rank, k + 1, ck_op_name(c->ix, R->items[k].g, b),
                      M->n != R->n ? "; " : "", M->n != R->n ? lens : "", why);
        } else if (M->n < R->n) {
            int last = M->n ? M->items[M->n - 1].g : -1;
            defect(v, M->rank, last >= 0 ? last - c->ix->off[M->rank] : -1,
                   "%s; rank %d's #%d is %s%s%s; %s", lens, R->rank, M->n + 1,
                   ck_op_name(c->ix, R->items[M->n].g, a), last >= 0 ? "; its last is " : "",
                   last >= 0 ? ck_op_name(c->ix, last, b) : "", why);
        } else if (M->n > R->n) {
            op_defect(c, v, M->items[R->n].g, "is #%d of its %s, one that rank %d never "
                      "reaches (%s); %s", R->n + 1, what, R->rank, lens, why);
        } else {
            continue;
        }
        agree = false;
    }
    if (agree) *ref = r0;
    return 0;
}

/* Splits the recs with key `key` (sorted by key, then g) from *pos on into
 * one run per rank: with ranks, one for each of ranks[0..n) (ascending, and
 * holding every rank that has such ops), empty where it has none; without,
 * one for each rank that has some. Returns the number of runs. */
static int split_runs(const struct ck *c, const struct rec *recs, size_t n_recs, size_t *pos,
                      int key, const int *ranks, int n, struct run *runs)
{
    int n_runs = 0;
    size_t j = *pos;
    for (int m = 0; ranks ? m < n : j < n_recs && recs[j].key == key; m++) {
        int rank = ranks ? ranks[m] : c->ix->rank_of[recs[j].g];
        struct run run = {rank, recs + j, 0};
        while (j < n_recs && recs[j].key == key && c->ix->rank_of[recs[j].g] == rank) j++, run.n++;
        runs[n_runs++] = run;
    }
    *pos = j;
    return n_runs;
}

/* Is an ok op of kind k one that collect gathers: by group, every
 * collective; else `kind`? */
static bool is_collected(int k, enum op_kind kind, bool by_group)
{
    return by_group ? plan_is_collective((enum op_kind)k) : k == (int)kind;
}

/* Collects the ok ops of `kind` (by_group: every collective, keyed by group;
 * else keyed by server), sorted by key, then g. The keys are groups or
 * ranks, so a counting sort does it in two passes; the ops come in
 * ascending g and it is stable, so each key's keep that order. The kind
 * bytes pick the ops out: the others are never read. */
static struct rec *collect(const struct ck *c, enum op_kind kind, bool by_group, size_t *n,
                           struct err *e)
{
    const struct plan_index *ix = c->ix;
    size_t count = 0;
    for (int k = 0; k < OP_N_KINDS; k++)
        if (is_collected(k, kind, by_group)) count += (size_t)c->n_of_kind[k];
    /* keys: a well-formed op's group is one of the plan's, its server a rank */
    size_t n_keys = by_group ? c->p->groups.len : (size_t)c->p->n_ranks;
    struct rec *recs = XCALLOC(e, count, sizeof *recs);
    struct rec *unsorted = XCALLOC(e, count, sizeof *unsorted);
    size_t *key_first = XCALLOC(e, n_keys + 1, sizeof *key_first);
    if (!recs || !unsorted || !key_first) {
        free(recs);
        recs = NULL;
        goto done;
    }
    *n = 0;
    for (int g = 0; g < ix->n_ops && *n < count; g++) {
        if (ix->kind[g] == OP_N_KINDS || !is_collected(ix->kind[g], kind, by_group)) continue;
        const struct op *op = op_at(c, g);
        int key = by_group ? op->group : op->peer;
        unsorted[(*n)++] = (struct rec){key, g};
        key_first[key]++;
    }
    for (size_t k = 0, sum = 0; k <= n_keys; k++) {
        size_t here = key_first[k];
        key_first[k] = sum;
        sum += here;
    }
    for (size_t i = 0; i < *n; i++) recs[key_first[unsorted[i].key]++] = unsorted[i];
done:
    free(unsorted);
    free(key_first);
    return recs;
}

/* ---- collectives ---------------------------------------------------------- */

static int check_collectives(struct ck *c, struct plan_verdict *v, struct err *e)
{
    const struct plan *p = c->p;
    size_t n_recs = 0, pos = 0;
    struct rec *recs = collect(c, OP_ALLREDUCE, true, &n_recs, e);
    struct run *runs = XCALLOC(e, (size_t)p->n_ranks, sizeof *runs);
    c->ix->coll_first = XCALLOC(e, n_recs + 1, sizeof *c->ix->coll_first);
    c->ix->coll_ops = XCALLOC(e, n_recs, sizeof *c->ix->coll_ops);
    int rc = ERR_NOMEM;
    if (!recs || !runs || !c->ix->coll_first || !c->ix->coll_ops) goto done;
    int used = 0;
    for (size_t grp = 0; grp < p->groups.len && pos < n_recs; grp++) {
        const struct plan_group *G = &p->groups.items[grp];
        if (recs[pos].key != (int)grp) continue;
        int n = split_runs(c, recs, n_recs, &pos, (int)grp, G->ranks, G->n_ranks, runs);
        char what[48];
        snprintf(what, sizeof what, "collectives on group %zu", grp);
        int ref;
        rc = check_agree(c, v, runs, n, "reaches", what,
                         "every member must reach a group's collectives in the same order", &ref,
                         e);
        if (rc < 0) goto done;
        if (ref < 0) continue;
        /* collective k of this group: the k-th collective of every member */
        for (int k = 0; k < runs[ref].n; k++) {
            c->ix->coll_first[c->ix->n_coll] = used;
            for (int m = 0; m < n; m++) {
                c->ix->coll_ops[used++] = runs[m].items[k].g;
                c->ix->coll[runs[m].items[k].g] = c->ix->n_coll;
            }
            c->ix->n_coll++;
        }
    }
    c->ix->coll_first[c->ix->n_coll] = used;
    rc = 0;
done:
    free(recs);
    free(runs);
    return rc;
}

/* ---- parameter servers (sync and backup policies) ------------------------- */

static int check_servers(struct ck *c, struct plan_verdict *v, struct err *e)
{
    const struct plan *p = c->p;
    if (!policy_infos[p->policy].has_rounds) return 0;
    size_t n_push = 0, n_pull = 0, ppos = 0, qpos = 0;
    struct rec *pushes = collect(c, OP_PUSH, false, &n_push, e);
    struct rec *pulls = collect(c, OP_PULL, false, &n_pull, e);
    struct run *runs = XCALLOC(e, (size_t)p->n_workers, sizeof *runs);
    struct run *pull_runs = XCALLOC(e, (size_t)p->n_workers, sizeof *pull_runs);
    c->ix->round_first = XCALLOC(e, n_push + 1, sizeof *c->ix->round_first);
    c->ix->round_ops = XCALLOC(e, n_push, sizeof *c->ix->round_ops);
    c->ix->round_need = XCALLOC(e, n_push, sizeof *c->ix->round_need);
    c->ix->pull_first = XCALLOC(e, n_push + 2, sizeof *c->ix->pull_first);
    c->ix->pull_ops = XCALLOC(e, n_pull, sizeof *c->ix->pull_ops);
    int rc = ERR_NOMEM;
    if (!pushes || !pulls || !runs || !pull_runs || !c->ix->round_first ||
        !c->ix->round_ops || !c->ix->round_need || !c->ix->pull_first || !c->ix->pull_ops)
        goto done;
    int used = 0;
    char what[48], name[NAME_BYTES];
    for (int s = p->n_workers; s < p->n_ranks; s++) {
        while (ppos < n_push && pushes[ppos].key < s) ppos++;
        while (qpos < n_pull && pulls[qpos].key < s) qpos++;
        int n = split_runs(c, pushes, n_push, &ppos, s, NULL, 0, runs);
        int n_pr = split_runs(c, pulls, n_pull, &qpos, s, NULL, 0, pull_runs);
        snprintf(what, sizeof what, "pushes to server %d", s);
        int ref = -1;
        rc = check_agree(c, v, runs, n, "makes", what,
                         "a synchronous server waits for every worker's push, so it could never "
                         "complete a step", &ref, e);
        if (rc < 0) goto done;
        if (n && ref < 0) continue;
        int n_rounds = n ? runs[ref].n : 0;
        int need = policy_round_quorum(p->policy, p->policy_arg, n);
        if (n && (need < 1 || need > n)) {
            defect(v, s, -1, "policy backup:%d with %d workers pushing to server %d keeps %d "
                   "pushes a step; it must keep 1 to %d", p->policy_arg, n, s, need, n);
            continue;
        }
        for (int k = 0; k < n_rounds; k++) {
            c->ix->round_first[c->ix->n_rounds + k] = used;
            c->ix->round_need[c->ix->n_rounds + k] = need;
            for (int m = 0; m < n; m++) {
                c->ix->round_ops[used++] = runs[m].items[k].g;
                c->ix->round[runs[m].items[k].g] = c->ix->n_rounds + k;
            }
        }
        /* a worker's j-th pull from s waits for round j of s */
        for (int m = 0; m < n_pr; m++)
            for (int j = 0; j < pull_runs[m].n; j++) {
                int g = pull_runs[m].items[j].g;
                if (j < n_rounds) c->ix->round[g] = c->ix->n_rounds + j;
                else
                    op_defect(c, v, g, "is pull #%d of rank %d from server %d, but the workers "
                              "push to it %d time%s a step: under the %s policy it has no push "
                              "to wait for%s%s", j + 1, pull_runs[m].rank, s, n_rounds,
                              n_rounds == 1 ? "" : "s", policy_infos[p->policy].name,
                              n ? "; workers' last push is " : "",
                              n ? ck_op_name(c->ix, runs[0].items[n_rounds - 1].g, name) : "");
            }
        c->ix->n_rounds += n_rounds;
    }
    c->ix->round_first[c->ix->n_rounds] = used;
    /* pulls grouped by the round they wait for (counting sort) */
    for (size_t k = 0; k < n_pull; k++)
        if (c->ix->round[pulls[k].g] >= 0) c->ix->pull_first[c->ix->round[pulls[k].g] + 2]++;
    for (int s = 0; s < c->ix->n_rounds; s++) c->ix->pull_first[s + 2] += c->ix->pull_first[s + 1];
    for (size_t k = 0; k < n_pull; k++)
        if (c->ix->round[pulls[k].g] >= 0)
            c->ix->pull_ops[c->ix->pull_first[c->ix->round[pulls[k].g] + 1]++] = pulls[k].g;
    rc = 0;
done:
    free(pushes);
    free(pulls);
    free(runs);
    free(pull_runs);
    return rc;
}

/* Runs every static check; 0 or ERR_NOMEM. */
int ck_check_static(struct ck *c, struct plan_verdict *v, struct err *e)
{
    if (c->p->build_rc)
        defect(v, -1, -1, "the plan is incomplete: a builder call failed: %s", c->p->build_msg);
    check_ops(c, v);
    TRY(check_p2p(c, v, e));
    TRY(check_collectives(c, v, e));
    TRY(check_servers(c, v, e));
    return 0;
}

/* ---- the entry point ------------------------------------------------------ */

int plan_prepare(const struct plan *p, struct plan_verdict *v, struct plan_index **out,
                 struct err *e)
{
    memset(v, 0, sizeof *v);
    if (out) *out = NULL;
    struct ck c;
    struct run_state s = {0};
    int rc = ck_init(&c, p, e);
    if (rc < 0) goto done;
    rc = ck_check_static(&c, v, e);
    if (rc < 0 || v->n_defects) goto done;   /* a deadlock check needs a matched plan */
    struct plan_index *ix = c.ix;
    rc = plan_index_derive(ix, e);
    if (rc < 0) goto done;
    ix->unit_start = XCALLOC(e, (size_t)ix->n_ops + 1, sizeof *ix->unit_start);
    rc = !ix->unit_start ? ERR_NOMEM : ck_unit_run(ix, &s, ix->unit_start, e);
    if (rc < 0 || s.n_done == ix->n_ops) goto done;
    char msg[sizeof v->defects[0].msg];
    int g = ck_cycle_message(&s, msg, sizeof msg, e, &rc);
    if (rc < 0) goto done;
    int r = g >= 0 ? ix->rank_of[g] : -1;
    defect(v, r, g >= 0 ? g - ix->off[r] : -1, "%s", msg);
    v->has_deadlock = true;
done:
    v->is_valid = rc == 0 && v->n_defects == 0;
    ck_run_state_free(&s);
    if (v->is_valid && out) {
        *out = c.ix;   /* handed out whole: ck_free frees the rest */
        c.ix = NULL;
    }
    ck_free(&c);
    return rc;
}

int plan_check(const struct plan *p, struct plan_verdict *v, struct err *e)
{
    return plan_prepare(p, v, NULL, e);
}

/* The plan executor in virtual time (see simulate.h): the event loop, the op
 * semantics, failures and recording; sim_index.c builds the tables it runs on.
 *
 * The plan is one step; every rank runs it `steps` times. Before the run the
 * plan is checked and prepared once (plan_prepare, core/plan_index.h): flat
 * arrays over a global op id g = off[rank] + index give the op after each
 * on its stream, the ops that name it as a dep, the RECV of each SEND, the
 * collective of each collective op, the (server, worker) slot of each PUSH and
 * PULL; sim_index.c adds the link each transfer crosses. During the run each op keeps a count of unmet conditions (stream
 * predecessor and deps, reset at every step start); when it reaches 0 the op
 * is *ready* and one switch over op kinds decides what happens:
 *
 *   FORWARD, BACKWARD, UPDATE  run for straggler_compute_s(jitter_compute_s(cost_compute_s)):
 *             the machine's own spread (the cluster's), then the user's --straggler
 *   SEND      enters the network now (eager); ends when its data has arrived
 *   RECV      ends when the matching SEND's data of the same step has arrived
 *   ALLREDUCE, REDUCE_SCATTER, ALL_GATHER
 *             arrives at its collective; the last member starts it for all,
 *             for cost_collective_s; one event ends every member
 *   PUSH      crosses the server's link; on arrival the server's policy takes
 *             it (ps_server_push) and the PUSH ends. A PUSH after it on its
 *             stream may start as it starts (issued, as in a real run), so a
 *             worker's pushes to several servers move at once; anything
 *             else waits for its end
 *   PULL      is held by its server until ps_server_pull_bound passes it, then the
 *             parameters cross the server's link; it ends on arrival
 *
 * An op that ends when it starts (free compute on the ideal cluster, a free
 * collective, a RECV whose data is there) goes through a FIFO of ends at
 * the current instant instead of the event queue. When a rank's ops of a
 * step have all ended it starts the next step, after straggler_pause_s.
 *
 * Links: every rank has a NIC inside its node and one to other nodes, each
 * with an outbound and an inbound direction (link_profile bandwidth is per
 * direction), so 4 processor-sharing links per rank, set from cost_link.
 * A SEND crosses the sender's outbound link (intra- or inter-node by where
 * the receiver is); a PUSH the server's inbound link, a PULL the server's
 * outbound one: the server's NIC is what all of its workers share. A SEND
 * ends when its data has arrived (the network reports arrivals only; the
 * sender's comm stream is thus busy alpha + n/beta per message, the
 * alpha-beta model's blocking send). A RECV's span runs from when the data
 * started to move (the later of the SEND's start and the RECV being posted)
 * to its arrival, or is empty at the post when the data was already there,
 * as core/trace.h defines. A PULL's span runs from the server's answer to
 * the arrival.
 *
 * Servers: one ps_server per server rank; its workers are the workers that
 * push to it (ascending rank), worker w of the policy being the w-th of them.
 * The policy counts in rounds: a worker's j-th push to a server in step s
 * is round s * n + j (n its pushes to that server a step), and its j-th pull
 * waits for round s * n + min(j, n - 1): the j-th pull <-> j-th push rule of
 * core/plan.h. Every strategy pushes a server once a step, where rounds are
 * steps. A PUSH records the version its worker last pulled from that server
 * (0 before any pull) and the version the policy applied it to.
 *
 * Failures (simulate.h: continue only): a dead worker's pending ops,
 * transfers and waiting pulls are dropped, its time from then on is down,
 * and it retires at each server (ps_server_retire) so that ssp's
 * slowest-worker bound ignores it. Ops running at its death never end and
 * leave no span.
 *
 * n_events counts events handled: those popped from the event queue (op and
 * collective ends, network events, delayed step starts) and ends taken from
 * the FIFO of the current instant; the ends a fold (start_folded) leaves
 * out of the queue count each as the event it would have been.
 *
 * Cost: O(log q) per event (q events pending), O(1) per op condition, no
 * allocation per event once the queue, the FIFO and the servers' held pulls
 * have reached their peak. Nothing on an event scans the ranks: a server's
 * policy finds its slowest worker in O(1) (core/min_clock.h), its held
 * pulls are keyed by the round they wait for (held_pulls.h), so a push
 * looks only at the pulls it frees, and a retiring worker rechecks only the
 * servers it pushes to. When every rank has completed one more step a pass
 * over the ranks finds who is already past it: O(ranks) a step, O(1) an
 * event amortised over the step's events. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/plan_check.h"
#include "../core/ps_policy.h"
#include "../core/text_append.h"
#include "cost.h"
#include "des.h"
#include "failures.h"
#include "network.h"
#include "sim_internal.h"
#include "simulate.h"

enum ev_kind {
    EV_NET,         /* the network's own events */
    EV_OP_END,      /* a = rank, b = op g */
    EV_COLL_END,    /* a = collective */
    EV_STEP_START,  /* a = rank, after its pause */
    EV_FAIL,        /* a = the worker that dies, -1 = an --mtbf draw picks it */
    EV_PULL_SEND,   /* b = PULL op g: its server has worked through what came before */
    EV_GIVEN_ARRIVE, /* b = op g: its transfer of a given duration (replay) arrived */
};

static void fail_nomem(struct sim *m)
{
    if (!m->rc) m->rc = err_set(m->e, ERR_NOMEM, "simulate: out of memory in the event loop");
}

/* A time that is not a number reached the event queue or a link: the
 * inputs' bounds (core/config, sim/cluster) are meant to rule it out, so
 * say what it was rather than fail without a word. */
static void fail_time(struct sim *m, const char *what, double t, int rank)
{
    if (!m->rc)
        m->rc = err_set(m->e, ERR_RUN,
                        "simulate: %s at %g s (rank %d) is not a finite time: an option or a "
                        "cluster profile value is out of the range a run can time",
                        what, t, rank);
}

/* Op g of its rank's step `step` would end at end_s, which is not a
 * finite time (its start and duration summed past the largest double). */
static void fail_op_time(struct sim *m, int g, int32_t step, double start_s, double end_s)
{
    const struct xop *x = &m->x[g];
    if (!m->rc)
        m->rc = err_set(m->e, ERR_RUN,
                        "simulate: rank %d's op %d (%s, step %d) starts at %g s and would end "
                        "at %g s, not a finite time: the durations given or drawn add up past "
                        "the largest time a run can hold (about 1e308 s)",
                        x->rank, g - m->off[x->rank], op_infos[x->kind].name,
                        (int)step, start_s, end_s);
}

/* The network could not go on with an event of link `link` at t (a link
 * index or event it does not know, a time it cannot take): its functions
 * return a code without a message, so the message is said here. */
static void fail_network(struct sim *m, int rc, int64_t link, double t)
{
    if (rc == ERR_NOMEM) fail_nomem(m);
    else if (!m->rc)
        m->rc = err_set(m->e, ERR_RUN,
                        "simulate: the network could not time the transfers of link %lld at "
                        "%g s (an out-of-range link, event or time: a bug in the simulator, or "
                        "an option or a cluster profile value outside the range a run can time)",
                        (long long)link, t);
}

static void push_event(struct sim *m, double t, int kind, int a, int64_t b)
{
    int rc = des_push(&m->q, t, kind, a, b);
    if (rc == ERR_NOMEM) fail_nomem(m);
    else if (rc < 0) fail_time(m, "an event's time", t, kind == EV_NET ? -1 : a);
}

static void end_now(struct sim *m, int g)
{
    if (vec_push(&m->now_q, g) < 0) fail_nomem(m);
}

/* The given duration of comm op g (its rank's, in step `step` of the
 * rank whose op is asked: sim_durations.comm_s), or -1: the network's. */
static double given_comm_s(const struct sim *m, int g, int64_t step)
{
    const struct sim_durations *given = m->s->durations;
    if (!given || !given->comm_s) return -1;
    int r = m->x[g].rank;
    return given->comm_s(given->ctx, r, step, g - m->off[r]);
}

static void start_transfer(struct sim *m, int g, int link, int64_t bytes)
{
    /* replay --measured-comm: a SEND's message as long as its RECV took */
    int asked = m->x[g].kind == OP_SEND ? m->xc[m->x[g].aux].peer_op : g;
    double d = given_comm_s(m, asked, m->step[m->x[g].rank]);
    if (d >= 0) {
        push_event(m, m->now_s + d, EV_GIVEN_ARRIVE, m->x[g].rank, g);
        return;
    }
    int rc = network_start(m->net, &m->q, m->now_s, link, bytes, g);
    if (rc == ERR_NOMEM) fail_nomem(m);
    else if (rc < 0) fail_time(m, "a transfer's start", m->now_s, m->x[g].rank);
}

/* The policy's round of PUSH/PULL g in its rank's current step. */
static int64_t round_of(const struct sim *m, int g)
{
    const struct xop *x = &m->x[g];
    const struct xcomm *c = &m->xc[x->aux];
    const struct slot *sl = &m->slots[c->peer_op];
    int32_t xj = c->j;
    int j = xj < sl->n_push ? xj : sl->n_push - 1;
    return m->step[x->rank] * sl->n_push + j;
}

static void retire_worker(struct sim *m, int r);

/* A hook's error stops the run like any other. */
static void hooked(struct sim *m, int rc)
{
    if (rc < 0 && !m->rc) {
        m->rc = rc;
        m->is_stopped = true;
    }
}

/* The policy lets PULL g be answered: it reads the parameters as they are
 * now, with every push that arrived before it (numerics copies them now),
 * and its data leaves when the server has done the updates queued before
 * it. */
static void answer_pull(struct sim *m, int g)
{
    const struct xop *x = &m->x[g];
    struct xcomm *c = &m->xc[x->aux];
    const struct sim_hooks *h = m->s->hooks;
    const struct server *S = &m->servers[m->slots[c->peer_op].server];
    if (h && h->pull_answered)
        hooked(m, h->pull_answered(h->ctx, x->rank, m->p->n_workers + m->slots[c->peer_op].server));
    c->ver_read = S->ps.version;
    if (S->busy_until_s > m->now_s) {
        push_event(m, S->busy_until_s, EV_PULL_SEND, x->rank, g);
        return;
    }
    m->x[g].start_s = m->now_s;
    start_transfer(m, g, c->link, c->bytes);
}

static void send_pull(struct sim *m, int g)
{
    if (m->is_dead[m->x[g].rank]) return;
    m->x[g].start_s = m->now_s;
    start_transfer(m, g, m->xc[m->x[g].aux].link, m->xc[m->x[g].aux].bytes);
}

/* Answers the held pulls the policy now allows, in the order they were
 * held (a dead worker's are dropped). O(log h) per pull freed; nothing when
 * none is. */
static void recheck_pulls(struct sim *m, int srv)
{
    struct server *S = &m->servers[srv];
    const struct held_pull *freed;
    size_t n = held_pulls_free_below(&S->held, ps_server_pull_bound(&S->ps), &freed);
    m->n_scanned += 1 + n;
    for (size_t k = 0; k < n; k++)
        if (!m->is_dead[m->x[freed[k].g].rank]) answer_pull(m, freed[k].g);
}

/* How long compute op g runs, started now: cost_s before jitter and
 * stragglers, or the duration the setup's durations give it (replay), in
 * *d_s. False (the run fails) when that is not a finite time. */
static bool compute_duration(struct sim *m, int g, double cost_s, double *d_s)
{
    const struct xop *x = &m->x[g];
    const struct sim_durations *given = m->s->durations;
    double d = given ? given->compute_s(given->ctx, x->rank, m->step[x->rank], g - m->off[x->rank])
                     : -1;
    if (d < 0) {
        double base_s = jitter_compute_s(m->jit, x->rank, (enum op_kind)x->kind, cost_s);
        d = m->strag ? straggler_compute_s(m->strag, x->rank, base_s) : base_s;
    }
    if (!(d >= 0 && d < INFINITY)) {
        fail_time(m, "a compute op's duration", d, x->rank);
        return false;
    }
    *d_s = d;
    return true;
}

/* Compute op g runs now (compute_duration). */
static void start_compute(struct sim *m, int g, double cost_s)
{
    double d;
    if (!compute_duration(m, g, cost_s, &d)) return;
    if (d > 0) push_event(m, m->now_s + d, EV_OP_END, m->x[g].rank, g);
    else end_now(m, g);
}

/* A fold: compute op g and the ops it folds into (struct xop), one after
 * another on its stream, are all timed now and end as one event, the
 * last op's; finish records the others' spans then (finish_folded). Each
 * op starts when the one before ends, t + d in the same arithmetic as one
 * event an op, and each draws its duration from its rank's own random
 * streams in the same order, so every span is the one the ops would have
 * had one by one. What the folded ends did alone (a span, a count of the
 * rank's ends, the next op ready) touches only the rank's own state, so
 * leaving them out changes nothing else; the last end's event is queued
 * earlier than it would have been, which moves it only among events of the
 * very same time, and in a plan without transfers, servers or failures
 * (can_fold) the order of simultaneous events changes no result: a
 * collective starts when its last member arrives, whichever that is, and
 * everything else they touch is a rank's own or a sum, count or maximum.
 * One event instead of several: pipelined-steps' whole forward and
 * backward (its all-reduces wait on no backward), 10 ops a step on 100,000
 * devices: 5.89 -> 4.44 s CPU over 30 steps. Only runs of three ops or
 * more fold (op_ready): mirrored's forward and first backward, a run of
 * two, were 4% slower folded than not on the same scenario. */
static void start_folded(struct sim *m, int head)
{
    int g = head;
    double t_s = m->now_s, d;
    for (;;) {
        if (!compute_duration(m, g, m->cost_s[m->x[g].aux], &d)) return;
        t_s += d;
        if (!(m->x[g].fold & FOLD_INTO_NEXT)) break;
        g = m->x[g].next;
        m->x[g].start_s = t_s;
    }
    m->fold_head[m->x[g].rank] = head;
    if (t_s > m->now_s) push_event(m, t_s, EV_OP_END, m->x[g].rank, g);
    else end_now(m, g);
}

/* May rank r's ops fold now? Only when the trace keeps none of its spans
 * from now on: a kept span's place in the trace is the order of the ends. */
static bool can_fold_now(const struct sim *m, int r)
{
    return m->can_fold && !(m->t && trace_keeps(m->t, (int32_t)m->step[r]));
}

/* Time-shared nodes: the compute ops that started at this instant, now
 * that all of them are known, at the slowdown of the ranks computing on
 * their node (so the order of simultaneous starts does not matter). */
static void start_timeshared(struct sim *m)
{
    for (size_t k = 0; k < m->start_q.len; k++) {
        int g = m->start_q.items[k];
        int busy = m->node_busy[cluster_node_of(m->cl, m->x[g].rank)];
        start_compute(m, g, m->cost_s[m->x[g].aux] * cluster_timeshare_of(m->cl, busy) /
                                m->cl->time_share_stretch);
    }
    m->start_q.len = 0;
}

/* PUSH g's parameters cross its server's link. */
static void start_push(struct sim *m, int g)
{
    struct xcomm *c = &m->xc[m->x[g].aux];
    c->ver_read = m->slots[c->peer_op].version_read;
    start_transfer(m, g, c->link, c->bytes);
}

/* Does op g free the next op of its stream when it starts rather than when
 * it ends? A PUSH followed by a PUSH does, once started (not skipped for
 * its lag): issued, as a real run's is (real/worker.c OPS_ISSUED). Any
 * other op after it still waits for its arrival, so a PULL from the same
 * server never overtakes the push, whatever deps its plan gives it (an
 * asynchronous server answers a pull at once). */
static bool frees_stream_at_start(const struct sim *m, int g)
{
    const struct xop *x = &m->x[g];
    return x->kind == OP_PUSH && x->lag <= m->step[x->rank] && x->next >= 0 &&
           m->x[x->next].kind == OP_PUSH;
}

static void op_ready(struct sim *m, int g);

/* PUSH g has started: a PUSH after it on its stream may start now. A
 * worker's pushes to its S servers thus cross the S servers' links at
 * once, as a real run's do, instead of one after another: with 16 workers
 * of gpt2-small and 25 GB/s links, each push waited for the one before it,
 * 2 x 104 ms on 2 servers, the 209 ms of one, so --servers did not relieve
 * the servers' links. A run of pushes starts here in a loop, not by
 * recursion, whatever S is. */
static void issue_pushes_after(struct sim *m, int g)
{
    for (int h = g; frees_stream_at_start(m, h);) {
        h = m->x[h].next;
        if (--m->pending[h] != 0) return;
        if (m->x[h].lag > m->step[m->x[h].rank]) {
            op_ready(m, h);   /* skipped: it ends now and frees what follows */
            return;
        }
        m->x[h].start_s = m->now_s;
        start_push(m, h);
    }
}

/* Op g has met its stream and dep conditions: the one switch over op kinds. */
static void op_ready(struct sim *m, int g)
{
    struct xop *x = &m->x[g];
    x->start_s = m->now_s;
    /* a lagged op before its step exists has no gradients to work on
     * (core/plan.h "Steps in flight"); every member of a collective skips
     * it in the same step, since members agree on the lag */
    if (x->lag > m->step[x->rank]) {
        end_now(m, g);
        return;
    }
    switch ((enum op_kind)x->kind) {
    case OP_FORWARD:
    case OP_BACKWARD:
    case OP_BACKWARD_INPUT:
    case OP_BACKWARD_WEIGHT:
    case OP_UPDATE:
        if (m->is_timeshared) {
            /* its time waits for every op starting at this instant */
            m->node_busy[cluster_node_of(m->cl, x->rank)]++;
            if (vec_push(&m->start_q, g) < 0) fail_nomem(m);
        } else if ((x->fold & FOLD_INTO_NEXT) && (m->x[x->next].fold & FOLD_INTO_NEXT) &&
                   can_fold_now(m, x->rank)) {
            /* three ops or more (start_folded) */
            start_folded(m, g);
        } else {
            start_compute(m, g, m->cost_s[x->aux]);
        }
        break;
    case OP_SEND:
        /* eager: the data moves whether or not the RECV is posted */
        m->xc[m->xc[x->aux].recv_comm].send_start_s = m->now_s;
        start_transfer(m, g, m->xc[x->aux].link, m->xc[x->aux].bytes);
        break;
    case OP_RECV:
        if (m->xc[x->aux].arrived > m->step[x->rank]) end_now(m, g);
        else m->xc[x->aux].is_waiting = true;
        break;
    case OP_ALLREDUCE:
    case OP_REDUCE_SCATTER:
    case OP_ALL_GATHER: {
        int c = x->aux, first = m->coll_first[c], n = m->coll_first[c + 1] - first;
        if (++m->coll_arrived[c] < n) break;
        /* the last member: the collective starts now for every member */
        m->coll_arrived[c] = 0;
        double cost_s = m->coll_cost_s[c];
        m->coll_start_s[c] = m->now_s;   /* every member's span starts now (record) */
        if (m->s->durations && m->s->durations->comm_s) {
            m->n_scanned += (uint64_t)n;
            /* the longest member's, when every member has one */
            double given_s = 0;
            bool is_given = true;
            for (int k = first; k < first + n && is_given; k++) {
                int gk = m->coll_ops[k];
                double d = given_comm_s(m, gk, m->step[m->x[gk].rank]);
                is_given = d >= 0;
                given_s = fmax(given_s, d);
            }
            if (is_given) cost_s = given_s;
        }
        if (cost_s > 0) push_event(m, m->now_s + cost_s, EV_COLL_END, c, 0);
        else
            for (int k = first; k < first + n; k++) end_now(m, m->coll_ops[k]);
        break;
    }
    case OP_PUSH:
        start_push(m, g);
        issue_pushes_after(m, g);
        break;
    case OP_PULL: {
        struct server *S = &m->servers[m->slots[m->xc[x->aux].peer_op].server];
        int64_t round = round_of(m, g);
        if (round < ps_server_pull_bound(&S->ps)) answer_pull(m, g);
        else if (held_pulls_add(&S->held, round, g) < 0) fail_nomem(m);
        break;
    }
    case OP_N_KINDS:
        break;
    }
}

/* Asynchronous plans: worker r takes the next item of the job's work, a
 * given-back one first. False when none is left: r is done, and retires at
 * its servers so that ssp's bound no longer waits for it. */
static bool take_work(struct sim *m, int r)
{
    if (m->work_free.len) {
        m->work[r] = m->work_free.items[--m->work_free.len];
        return true;
    }
    if (m->work_next < m->work_total) {
        m->work[r] = m->work_next++;
        return true;
    }
    m->work[r] = -1;
    m->is_done[r] = true;
    retire_worker(m, r);
    return false;
}

/* The job's step and the replica whose samples rank r's current step takes. */
static void job_step_of(const struct sim *m, int r, int64_t *job_step, int *replica)
{
    if (m->is_async) {
        *job_step = m->work[r] / m->p->n_workers;
        *replica = (int)(m->work[r] % m->p->n_workers);
    } else {
        *job_step = m->step[r];
        *replica = r;
    }
}

static void kill_worker(struct sim *m, int r);

static void start_step(struct sim *m, int r)
{
    const struct sim_hooks *h = m->s->hooks;
    const struct failure_spec *f = &m->s->failure;
    if (f->is_set && f->step >= 0 && r == f->rank && m->step[r] == f->step && !m->is_spec_fired) {
        /* R@STEP: it dies as it starts its own step STEP */
        m->is_spec_fired = true;
        kill_worker(m, r);
        return;
    }
    if (m->is_async && r < m->p->n_workers && !take_work(m, r)) return;
    if (h && h->step_start) {
        int64_t job_step;
        int replica;
        job_step_of(m, r, &job_step, &replica);
        hooked(m, h->step_start(h->ctx, r, job_step, replica));
    }
    memcpy(&m->pending[m->off[r]], &m->pending0[m->off[r]],
           (size_t)(m->off[r + 1] - m->off[r]) * sizeof *m->pending);
    m->n_scanned += (uint64_t)(m->off[r + 1] - m->off[r]);
    m->n_done[r] = 0;
    double pause_s = m->strag ? straggler_pause_s(m->strag, r) : 0;
    if (pause_s > 0) {
        push_event(m, m->now_s + pause_s, EV_STEP_START, r, 0);
        return;
    }
    for (int k = m->root_first[r]; k < m->root_first[r + 1]; k++) op_ready(m, m->roots[k]);
}

/* Rank r has ended every op of its current step. */
static void step_done(struct sim *m, int r)
{
    const struct sim_hooks *h = m->s->hooks;
    if (h && h->step_done) {
        int64_t job_step;
        int replica;
        job_step_of(m, r, &job_step, &replica);
        hooked(m, h->step_done(h->ctx, r, job_step, replica, m->now_s));
    }
    if (m->is_async) {
        m->work[r] = -1;
        m->work_completed++;
    }
    if (m->step[r]++ == m->n_complete && ++m->n_past == m->n_working) {
        /* every rank has now completed n_complete + 1 steps */
        if (m->s->step_end_s && m->n_complete < m->s->steps)
            m->s->step_end_s[m->n_complete] = m->now_s;
        m->n_complete++;
        if (m->s->on_step && m->n_complete <= m->s->steps)
            m->s->on_step(m->s->on_step_ctx, m->n_complete, m->s->steps);
        m->n_past = 0;
        m->n_scanned += (uint64_t)m->n_ranks;
        for (int k = 0; k < m->n_ranks; k++)
            m->n_past += m->off[k + 1] > m->off[k] && m->step[k] > m->n_complete;
    }
    if (m->is_async || m->step[r] < m->s->steps) start_step(m, r);
}

/* Op g's span, ended at end_s. */
static void record(struct sim *m, int g, double end_s)
{
    const struct xop *x = &m->x[g];
    int32_t step = (int32_t)m->step[x->rank];
    bool is_kept = m->t && trace_keeps(m->t, step);
    /* What the analysis reads; a span the trace keeps gets the rest, from
     * the plan's op (left alone otherwise: another cache line an event) */
    /* a collective's members start together, when the last arrives; one
     * that a lag skipped (op_ready) started alone, when it was ready */
    bool is_joint = plan_is_collective(x->kind) && x->lag <= step;
    struct span sp = {
        .rank = x->rank,
        .stream = x->stream,
        .kind = x->kind,
        .step = step,
        .start_s = is_joint ? m->coll_start_s[x->aux] : x->start_s,
        .end_s = end_s,
        .version_read = x->kind == OP_PUSH || x->kind == OP_PULL ? m->xc[x->aux].ver_read : -1,
        .version_applied = x->kind == OP_PUSH ? m->xc[x->aux].ver_applied : -1,
    };
    if (x->lag > 0 && x->kind == OP_UPDATE) {
        struct op lagged = {.kind = OP_UPDATE, .lag = x->lag};
        plan_lag_versions(&lagged, step, &sp.version_read, &sp.version_applied);
    }
    if (is_kept) {
        const int index = g - m->off[x->rank];
        const struct op *op = &m->p->ranks[x->rank].ops.items[index];
        struct span whole;
        memset(&whole, 0, sizeof whole);   /* no stray padding: traces compare byte for byte */
        whole.rank = sp.rank;
        whole.stream = sp.stream;
        whole.kind = sp.kind;
        whole.step = sp.step;
        whole.op = index;
        whole.mb = op->mb;
        whole.lo = op->lo;
        whole.hi = op->hi;
        whole.peer = op->peer;
        whole.start_s = sp.start_s;
        whole.end_s = sp.end_s;
        whole.bytes = op->bytes;
        whole.flops = op->flops;
        whole.version_read = sp.version_read;
        whole.version_applied = sp.version_applied;
        sp = whole;
    }
    /* an end past the largest double (durations near 1e308 summed) is no
     * time the analysis can hold: say which op, rather than let its
     * refusal (a code without a message) end the run "without saying why" */
    if (!(sp.end_s < INFINITY)) {
        fail_op_time(m, g, step, sp.start_s, sp.end_s);
        return;
    }
    int rc = 0;
    if (m->a) rc = analysis_add(m->a, &sp);
    if (rc == 0 && m->t) rc = trace_add(m->t, &sp);
    if (rc == ERR_NOMEM) fail_nomem(m);
    else if (rc < 0 && !m->rc)
        m->rc = err_set(m->e, ERR_RUN, "simulate: rank %d's op %d (%s, step %d, %g s to %g s) "
                        "was refused by the analysis (a bug in the simulator: please report "
                        "it with the command)", x->rank, g - m->off[x->rank],
                        op_infos[x->kind].name, (int)step, sp.start_s, sp.end_s);
}

/* Op `last` ends a fold (start_folded): the ops folded before it end
 * first, each when the next started, as their own events would have. */
static void finish_folded(struct sim *m, int last)
{
    int r = m->x[last].rank;
    for (int g = m->fold_head[r]; g != last; g = m->x[g].next) {
        if (m->a || m->t) record(m, g, m->x[m->x[g].next].start_s);
        m->n_done[r]++;   /* never the step's last: `last` is still to end */
        m->n_events++;
    }
    m->fold_head[r] = -1;
}

/* Op g ends now: its span, then what waited for it. */
static void finish(struct sim *m, int g)
{
    const struct xop *x = &m->x[g];
    /* a dead rank's core is free too; a lagged op skipped before its step
     * exists (op_ready) never took one: freeing it anyway left the node
     * a rank short, and pipelined-steps' skipped UPDATEs of step 0 made
     * every later compute op free (cluster_timeshare_of(0) = 0) */
    if (m->is_timeshared && op_infos[x->kind].cls == OPC_COMPUTE && x->lag <= m->step[x->rank])
        m->node_busy[cluster_node_of(m->cl, x->rank)]--;
    if (m->is_dead[x->rank]) return;
    if (m->now_s > m->makespan_s) m->makespan_s = m->now_s;
    if ((x->fold & FOLD_TAIL) && m->fold_head[x->rank] >= 0) finish_folded(m, g);
    if (m->a || m->t) record(m, g, m->now_s);
    if (x->next >= 0 && !frees_stream_at_start(m, g) && --m->pending[x->next] == 0)
        op_ready(m, x->next);
    for (int k = x->dep_first; k < x->dep_first + x->n_dependents; k++)
        if (--m->pending[m->dependents[k]] == 0) op_ready(m, m->dependents[k]);
    if (++m->n_done[x->rank] == m->off[x->rank + 1] - m->off[x->rank]) step_done(m, x->rank);
}

/* What a push that the policy did not drop costs its server: the model's
 * shard update per push, or the replay's measured update when the policy
 * applies one (a gathered push waits for its round's update). */
static double push_cost_s(struct sim *m, int srv, enum ps_action action)
{
    struct server *S = &m->servers[srv];
    const struct sim_durations *given = m->s->durations;
    if (!given || !given->update_s) return S->update_cost_s;
    if (action == PS_GATHERED) return 0;
    double d = given->update_s(given->ctx, m->p->n_workers + srv, S->n_updates++);
    return d >= 0 ? d : S->update_cost_s;
}

/* The network delivered the transfer of op g. */
static void arrived(struct sim *m, int g)
{
    const struct xop *x = &m->x[g];
    if (m->is_dead[x->rank]) return;   /* a dead rank's messages never come */
    switch ((enum op_kind)x->kind) {
    case OP_SEND: {
        int recv_g = m->xc[x->aux].peer_op;
        struct xop *recv = &m->x[recv_g];
        struct xcomm *rc = &m->xc[recv->aux];
        rc->arrived++;
        if (rc->is_waiting) {
            rc->is_waiting = false;
            if (rc->send_start_s > recv->start_s) recv->start_s = rc->send_start_s;
            finish(m, recv_g);
        }
        finish(m, g);
        break;
    }
    case OP_PUSH: {
        struct xcomm *c = &m->xc[x->aux];
        const struct slot *sl = &m->slots[c->peer_op];
        struct server *S = &m->servers[sl->server];
        int64_t round = round_of(m, g);
        struct ps_push_result pr = ps_server_push(&S->ps, sl->w, round, c->ver_read);
        c->ver_applied = pr.version_applied;
        if (pr.action != PS_DROPPED)
            S->busy_until_s = fmax(S->busy_until_s, m->now_s) + push_cost_s(m, sl->server, pr.action);
        const struct sim_hooks *h = m->s->hooks;
        if (h && h->push_arrived)
            hooked(m, h->push_arrived(h->ctx, x->rank, m->p->n_workers + sl->server, round, &pr));
        /* only an applied update can change what a pull may see */
        if (pr.action == PS_APPLIED || pr.action == PS_ROUND) recheck_pulls(m, sl->server);
        finish(m, g);
        break;
    }
    case OP_PULL:
        m->slots[m->xc[x->aux].peer_op].version_read = m->xc[x->aux].ver_read;
        finish(m, g);
        break;
    default:
        break;
    }
}

/* ---- failures -------------------------------------------------------------- */

static int by_int(const void *x, const void *y)
{
    int a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Worker r holds nothing back any more (it died, or no work is left for
 * it): it retires at every server it pushes to, and the pulls held there
 * are answered if they now may be, server by server in ascending order.
 * Only those servers: a server's bound moves on a push or a retirement at
 * it, so the others free nothing. O(r's ops + its servers log its servers). */
static void retire_worker(struct sim *m, int r)
{
    m->touched.len = 0;
    for (int g = m->off[r]; g < m->off[r + 1]; g++) {
        const struct xop *x = &m->x[g];
        if (x->kind != OP_PUSH) continue;
        const struct slot *sl = &m->slots[m->xc[x->aux].peer_op];
        ps_server_retire(&m->servers[sl->server].ps, sl->w);   /* per PUSH op: repeats are no-ops */
        if (vec_push(&m->touched, sl->server) < 0) fail_nomem(m);
    }
    m->n_scanned += (uint64_t)(m->off[r + 1] - m->off[r]) + m->touched.len;
    if (m->touched.len > 1) qsort(m->touched.items, m->touched.len, sizeof *m->touched.items, by_int);
    for (size_t k = 0; k < m->touched.len; k++)
        if (k == 0 || m->touched.items[k] != m->touched.items[k - 1])
            recheck_pulls(m, m->touched.items[k]);
}

/* Async and ssp: worker r stops; what the servers accepted stays, its time
 * from now on is down, and the work item it was on goes back to the job for
 * a live worker to take. When every other worker is done already, nobody
 * takes it: that work is lost, and not counted (docs/metrics.md). */
static void kill_worker(struct sim *m, int r)
{
    if (!m->res->failed) {
        m->res->failed = true;
        m->res->failed_rank = r;
        m->res->failure_time_s = m->now_s;
    }
    m->res->n_failures++;
    m->n_dead++;
    m->is_dead[r] = true;
    if (m->a && analysis_set_down(m->a, r, m->now_s) < 0 && !m->rc)
        m->rc = err_set(m->e, ERR_RUN, "simulate: rank %d cannot be marked down", r);
    retire_worker(m, r);
    if (m->work[r] < 0) return;
    if (vec_push(&m->work_free, m->work[r]) < 0) fail_nomem(m);
    m->work[r] = -1;
}

static int new_network(struct sim *m)
{
    m->net = network_create(m->n_links, EV_NET, m->e);
    if (!m->net) return m->e ? m->e->code : ERR_NOMEM;
    const struct cluster *cl = m->cl;
    int span_ranks = cl->nodes * cl->devices_per_node;
    for (int r = 0; r < m->n_ranks; r++) {
        /* any rank of another node stands for "between nodes" */
        int other = (r + cl->devices_per_node) % (span_ranks > 0 ? span_ranks : 1);
        struct link_profile intra = cost_link(cl, r, r);
        struct link_profile inter = cl->nodes > 1 ? cost_link(cl, r, other) : intra;
        for (int dir = 0; dir < 2; dir++) {
            network_set_link(m->net, 4 * r + dir, intra.bw_bytes_per_s, intra.latency_s);
            network_set_link(m->net, 4 * r + 2 + dir, inter.bw_bytes_per_s, inter.latency_s);
        }
    }
    return 0;
}

/* A new event queue and network: pending events and transfers are
 * forgotten wholesale. */
static int fresh_queue(struct sim *m)
{
    m->n_net_touched += m->q.n_moves + network_touched(m->net);
    des_release(&m->q);
    des_init(&m->q);
    network_free(m->net);
    m->net = NULL;
    m->now_q.len = m->now_head = 0;
    return new_network(m);
}

/* Every rank and server at the start: the servers at version 0, every
 * rank starts step 0 now. */
static void reset(struct sim *m)
{
    for (int s = 0; s < m->p->n_servers; s++) {
        struct server *S = &m->servers[s];
        if (!S->is_used) continue;
        held_pulls_clear(&S->held);
        S->busy_until_s = 0;
        S->n_updates = 0;
        ps_server_rewind(&S->ps, 0, 0);
    }
    m->work_next = m->work_completed = 0;
    m->work_free.len = 0;
    for (int r = 0; r < m->n_ranks; r++) {
        m->work[r] = -1;
        m->is_done[r] = false;
        m->fold_head[r] = -1;
    }
    m->n_scanned += (uint64_t)m->n_ops + (uint64_t)m->n_ranks;
    for (int g = 0; g < m->n_ops; g++) {
        const struct xop *x = &m->x[g];
        if (x->kind == OP_RECV) {
            m->xc[x->aux].arrived = 0;
            m->xc[x->aux].is_waiting = false;
        } else if (x->kind == OP_PUSH) {
            m->slots[m->xc[x->aux].peer_op].version_read = 0;
        }
    }
    for (int k = 0; k < m->n_coll; k++) m->coll_arrived[k] = 0;
    if (m->is_timeshared) memset(m->node_busy, 0, (size_t)m->cl->nodes * sizeof *m->node_busy);
    m->start_q.len = 0;
    m->n_complete = 0;
    m->n_past = 0;
    for (int r = 0; r < m->n_ranks; r++) {
        m->step[r] = 0;
        if (m->off[r + 1] > m->off[r]) start_step(m, r);
    }
}

/* A failure now: worker w dies (w < 0: one that --mtbf's draw picks among
 * the live workers, and the next draw is scheduled over those left), unless
 * the job's work is all done: after the run, nothing happens. O(workers) a
 * failure. */
static void on_failure(struct sim *m, int w)
{
    int n_workers = m->p->n_workers, live = n_workers - m->n_dead;
    bool is_running = false;
    for (int r = 0; r < n_workers && !is_running; r++)
        is_running = !m->is_dead[r] && !m->is_done[r];
    m->n_scanned += (uint64_t)n_workers;
    if (!is_running) return;
    if (w < 0) {
        int k = failure_draws_pick(m->draws, live);
        for (w = 0; w < n_workers; w++)
            if (!m->is_dead[w] && k-- == 0) break;
        if (live > 1)
            push_event(m, m->now_s + failure_draws_gap_s(m->draws, m->s->mtbf_s, live - 1),
                       EV_FAIL, -1, 0);
    }
    if (!m->is_dead[w]) kill_worker(m, w);
}

/* ---- the run ------------------------------------------------------------------ */

/* What the run makes: the event queue, the network, the stragglers, the FIFO
 * of the current instant. */
static void free_run(struct sim *m)
{
    des_release(&m->q);
    network_free(m->net);
    straggler_free(m->strag);
    jitter_free(m->jit);
    vec_free(&m->now_q);
}

/* Checks the setup and prepares its plan: its index in *ix. */
static int check_setup(const struct sim_setup *s, struct plan_index **ix, struct err *e)
{
    if (!s->plan || !s->cluster)
        return err_set(e, ERR_INPUT, "simulate: a setup needs a plan and a cluster");
    if (s->steps < 1)
        return err_set(e, ERR_INPUT, "--steps: %d is not allowed (1 or more)", s->steps);
    const struct failure_spec *f = &s->failure;
    bool has_failures = f->is_set || s->mtbf_s > 0;
    char ranks[32];
    if (f->is_set && (f->rank < 0 || f->rank >= s->plan->n_ranks))
        return err_set(e, ERR_INPUT, "--fail: rank %d is not a rank of the %s plan (%s)",
                       f->rank, s->plan->strategy,
                       text_ranks_upto(ranks, sizeof ranks, s->plan->n_ranks - 1));
    if (f->is_set && f->step < 0 && !(f->time_s >= 0 && isfinite(f->time_s)))
        return err_set(e, ERR_INPUT, "--fail: time %g s is not allowed (0 or more seconds)",
                       f->time_s);
    if (!(s->mtbf_s >= 0 && isfinite(s->mtbf_s)))
        return err_set(e, ERR_INPUT, "--mtbf: %g s is not allowed (0 = none, or more)", s->mtbf_s);
    if (has_failures && !policy_is_async(s->plan->policy))
        return err_set(e, ERR_INPUT, "simulate: the %s plan is synchronous, so a failure stops "
                       "every rank (restart or shrink), which sim/failures.h replays; the event "
                       "loop carries on after an asynchronous worker's death only", s->plan->strategy);
    if (f->is_set && f->rank >= s->plan->n_workers)
        return err_set(e, ERR_INPUT, "--fail: rank %d is a parameter server of the %s plan "
                       "(its workers: %s): a server alone holds its shard, so the job "
                       "cannot carry on without it (--on-failure restart can)", f->rank,
                       s->plan->strategy,
                       text_ranks_upto(ranks, sizeof ranks, s->plan->n_workers - 1));
    TRY(straggler_check_ranks(s->straggler, s->plan->n_workers, s->plan->n_ranks,
                              s->plan->strategy, e));
    if (s->cluster->devices_per_node < 1 ||
        (long long)s->cluster->nodes * s->cluster->devices_per_node < s->plan->n_ranks)
        return err_set(e, ERR_INPUT, "simulate: cluster %s has %d x %d places for %d ranks; "
                       "lay it out for the plan first (cluster_layout)", s->cluster->name,
                       s->cluster->nodes, s->cluster->devices_per_node, s->plan->n_ranks);
    struct plan_verdict v;
    TRY(plan_prepare(s->plan, &v, ix, e));
    if (!v.is_valid)
        return err_set(e, ERR_INPUT, "the %s plan cannot be simulated: %s%s", s->plan->strategy,
                       v.defects[0].msg,
                       v.n_defects > 1 ? " (and more; `strata schedule` lists them)" : "");
    if (s->hooks && has_failures)
        return err_set(e, ERR_INPUT, "--fail or --mtbf with --numerics is not supported: the "
                       "arithmetic of a dead worker's step cannot be taken back");
    return 0;
}

/* The run from time 0: fresh random streams, queue and network, the
 * servers at version 0, the failures pending, every rank at step 0. */
static int begin(struct sim *m)
{
    straggler_free(m->strag);
    m->strag = NULL;
    const struct straggler_spec *spec = m->s->straggler;
    if (spec && spec->kind != STRAG_NONE) {
        m->strag = straggler_create(spec, m->s->seed, m->n_ranks, m->e);
        if (!m->strag) return m->e && m->e->code ? m->e->code : ERR_NOMEM;
    }
    jitter_free(m->jit);
    m->jit = NULL;
    if (jitter_is_set(&m->cl->jitter)) {
        m->jit = jitter_create(&m->cl->jitter, m->s->seed, m->n_ranks, m->e);
        if (!m->jit) return m->e && m->e->code ? m->e->code : ERR_NOMEM;
    }
    TRY(fresh_queue(m));
    m->now_s = m->makespan_s = 0;
    m->n_events = 0;
    m->n_scanned = m->n_net_touched = 0;
    m->is_stopped = m->is_spec_fired = false;
    m->n_dead = 0;
    memset(m->is_dead, 0, (size_t)m->n_ranks * sizeof *m->is_dead);
    const struct failure_spec *f = &m->s->failure;
    if (f->is_set && f->step < 0) push_event(m, f->time_s, EV_FAIL, f->rank, 0);
    if (m->draws)
        push_event(m, failure_draws_gap_s(m->draws, m->s->mtbf_s, m->p->n_workers), EV_FAIL, -1, 0);
    reset(m);
    return m->rc;
}

/* Prefetching. Ops end in waves, one rank after another (lock-step: op k
 * of every rank, then op k + 1), so with 10^5 ranks an op's line is cold
 * when it ends: one miss to memory an event, the bulk of a large run's time
 * per event. Where the coming ends are known (the FIFO of the instant, a
 * collective's members, the queue's lane behind the event popped) their
 * lines are fetched this many ends ahead, to be there when they are due. */
enum { PREFETCH_AHEAD = 8, PREFETCH_NEAR = 4, PREFETCH_SLOT = 2 };

/* Op g's line: the first thing its end reads. A macro, not a function:
 * GCC finds a function made only of prefetches free of effects, and deletes
 * its calls. */
#if defined(__GNUC__)
#define PREFETCH_OP(m, g) __builtin_prefetch(&(m)->x[(g)])
#else
#define PREFETCH_OP(m, g) ((void)(m), (void)(g))
#endif

/* Nearer, with op g's line fetched already: what its end goes on to touch,
 * the analysis's state for its rank and the lines of the ops it may make
 * ready (the next on its stream, its first dependent, which in a pipeline
 * are not its neighbours in memory). */
static void prefetch_near(const struct sim *m, int g)
{
    const struct xop *x = &m->x[g];
    if (m->a) analysis_prefetch(m->a, x->rank);
#if defined(__GNUC__)
    if (x->next >= 0) __builtin_prefetch(&m->x[x->next]);
    if (x->n_dependents > 0) __builtin_prefetch(&m->x[m->dependents[x->dep_first]]);
#endif
}

/* Nearest, with the analysis's state for op g's rank fetched already: the
 * slot of its span list that recording g's end writes. A macro for the
 * reason PREFETCH_OP is. */
#define PREFETCH_SLOT_OF(m, g)                                                              \
    do {                                                                                    \
        if ((m)->a) analysis_prefetch_slot((m)->a, (m)->x[(g)].rank, (m)->x[(g)].stream);   \
    } while (0)

/* Pops and handles events until none is left or an error stops the run. */
static void run_loop(struct sim *m)
{
    struct des_event ev;
    while (!m->rc && !m->is_stopped) {
        if (m->now_head < m->now_q.len) {
            if (m->now_head + PREFETCH_AHEAD < m->now_q.len)
                PREFETCH_OP(m, m->now_q.items[m->now_head + PREFETCH_AHEAD]);
            if (m->now_head + PREFETCH_NEAR < m->now_q.len)
                prefetch_near(m, m->now_q.items[m->now_head + PREFETCH_NEAR]);
            if (m->now_head + PREFETCH_SLOT < m->now_q.len)
                PREFETCH_SLOT_OF(m, m->now_q.items[m->now_head + PREFETCH_SLOT]);
            int g = m->now_q.items[m->now_head++];
            if (m->now_head == m->now_q.len) m->now_q.len = m->now_head = 0;
            m->n_events++;
            finish(m, g);
            continue;
        }
        if (m->start_q.len) {
            start_timeshared(m);
            continue;
        }
        if (!des_pop(&m->q, &ev)) break;
        m->n_events++;
        m->now_s = ev.time_s;
        switch ((enum ev_kind)ev.kind) {
        case EV_NET: {
            int64_t cookie;
            /* 1: a transfer arrived; a negative code is a failure, whose
             * cookie is not set (it used to be taken as an arrival) */
            int rc = network_on_event(m->net, &m->q, &ev, &cookie);
            if (rc > 0) arrived(m, (int)cookie);
            else if (rc < 0) fail_network(m, rc, ev.a < 0 ? -1 - (int64_t)ev.a : ev.a, ev.time_s);
            break;
        }
        case EV_OP_END: {
            const struct des_event *ahead = des_ahead(&m->q, PREFETCH_AHEAD);
            if (ahead && ahead->kind == EV_OP_END) PREFETCH_OP(m, (int)ahead->b);
            const struct des_event *near = des_ahead(&m->q, PREFETCH_NEAR);
            if (near && near->kind == EV_OP_END) prefetch_near(m, (int)near->b);
            const struct des_event *slot = des_ahead(&m->q, PREFETCH_SLOT);
            if (slot && slot->kind == EV_OP_END) PREFETCH_SLOT_OF(m, (int)slot->b);
            finish(m, (int)ev.b);
            break;
        }
        case EV_COLL_END: {
            int first = m->coll_first[ev.a], end = m->coll_first[ev.a + 1];
            m->n_scanned += (uint64_t)(end - first);
            for (int k = first; k < end; k++) {
                if (k + PREFETCH_AHEAD < end) PREFETCH_OP(m, m->coll_ops[k + PREFETCH_AHEAD]);
                if (k + PREFETCH_NEAR < end) prefetch_near(m, m->coll_ops[k + PREFETCH_NEAR]);
                if (k + PREFETCH_SLOT < end) PREFETCH_SLOT_OF(m, m->coll_ops[k + PREFETCH_SLOT]);
                finish(m, m->coll_ops[k]);
            }
            break;
        }
        case EV_STEP_START:
            for (int k = m->root_first[ev.a]; k < m->root_first[ev.a + 1]; k++)
                op_ready(m, m->roots[k]);
            break;
        case EV_FAIL:
            on_failure(m, ev.a);
            break;
        case EV_PULL_SEND:
            send_pull(m, (int)ev.b);
            break;
        case EV_GIVEN_ARRIVE:
            arrived(m, (int)ev.b);
            break;
        }
    }
}

/* After the loop: every live rank must have run every step (asynchronous:
 * be done, with no work left). */
static int check_finished(const struct sim *m)
{
    if (m->n_dead > 0 && m->n_dead == m->p->n_workers && m->work_completed < m->work_total)
        return err_set(m->e, ERR_RUN, "every one of the %d workers failed before the job's work "
                       "was done (%lld of %lld worker steps): nobody is left to carry on",
                       m->p->n_workers, (long long)m->work_completed, (long long)m->work_total);
    for (int r = 0; r < m->n_ranks; r++) {
        if (m->off[r + 1] == m->off[r] || m->is_dead[r]) continue;
        if (m->is_async ? m->is_done[r] : m->step[r] >= m->s->steps) continue;
        if (m->res->failed && m->is_dead[m->res->failed_rank])
            return err_set(m->e, ERR_RUN,
                           "after rank %d failed at %g s, rank %d stopped in step %lld of %d: it "
                           "waits for the dead rank, which an asynchronous run cannot replace",
                           m->res->failed_rank, m->res->failure_time_s, r,
                           (long long)m->step[r] + 1, m->s->steps);
        return err_set(m->e, ERR_RUN, "the %s run stopped at %g s with rank %d in step %lld of "
                       "%d (a simulator bug: the plan passed the checker)",
                       m->p->strategy, m->now_s, r, (long long)m->step[r] + 1, m->s->steps);
    }
    return 0;
}

int simulate(const struct sim_setup *s, struct analysis *a, struct trace *t,
             struct sim_result *res, struct err *e)
{
    memset(res, 0, sizeof *res);
    res->failed_rank = -1;
    struct sim m;
    memset(&m, 0, sizeof m);
    int rc = check_setup(s, &m.ix, e);
    if (rc < 0) {
        plan_index_free(m.ix);
        return rc;
    }
    m.s = s;
    m.p = s->plan;
    m.cl = s->cluster;
    m.a = a;
    m.t = t;
    m.e = e;
    m.res = res;
    m.is_async = policy_is_async(s->plan->policy);
    m.is_timeshared = s->cluster->n_timeshare > 0 && s->cluster->time_share_stretch > 0 &&
                      s->cluster->nodes > 0;
    m.work_total = (int64_t)s->steps * s->plan->n_workers;
    des_init(&m.q);
    rc = ERR_NOMEM;
    if (m.is_timeshared &&
        !(m.node_busy = XCALLOC(e, (size_t)s->cluster->nodes, sizeof *m.node_busy)))
        goto done;
    rc = sim_index_init(&m);
    if (rc < 0) goto done;
    m.can_fold = m.n_xcomm == 0 && !s->hooks && !s->durations && !m.is_timeshared &&
                 !s->failure.is_set && !(s->mtbf_s > 0);
    if (s->mtbf_s > 0 && !(m.draws = failure_draws_create(s->seed, e))) {
        rc = e->code;
        goto done;
    }
    rc = begin(&m);
    if (rc < 0) goto done;
    run_loop(&m);
    rc = m.rc;
    if (rc == 0) rc = check_finished(&m);
    res->makespan_s = m.makespan_s;
    res->n_events = m.n_events;
    res->n_scanned = m.n_scanned;
    res->n_heap_moves = m.n_net_touched + m.q.n_moves + network_touched(m.net);
    res->max_step_lead = -1;
    for (int k = 0; m.is_async && m.servers && k < s->plan->n_servers; k++)
        if (m.servers[k].is_used && m.servers[k].ps.max_lead > res->max_step_lead)
            res->max_step_lead = m.servers[k].ps.max_lead;
done:
    failure_draws_free(m.draws);
    free(m.node_busy);
    vec_free(&m.start_q);
    free_run(&m);
    sim_index_release(&m);
    return rc;
}

/* The arithmetic of simulated runs: see numerics.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/vec.h"
#include "../nn/mlp.h"
#include "numerics.h"

/* ---- what both paths need ---------------------------------------------- */

/* A batch's inputs and labels on the host, and the activations to run it. */
struct batch {
    int max_n;
    int64_t *idx;
    float *x;
    int32_t *y;
    struct mlp_act *act;
};

static int batch_init(struct batch *b, const struct mlp *m, int max_n, int features, struct err *e)
{
    memset(b, 0, sizeof *b);
    b->max_n = max_n;
    b->idx = XCALLOC(e, (size_t)max_n, sizeof *b->idx);
    b->x = XCALLOC(e, (size_t)max_n * (size_t)features, sizeof *b->x);
    b->y = XCALLOC(e, (size_t)max_n, sizeof *b->y);
    if (!b->idx || !b->x || !b->y) return ERR_NOMEM;
    return mlp_act_create(m, max_n, &b->act, e);
}

static void batch_release(struct batch *b)
{
    free(b->idx);
    free(b->x);
    free(b->y);
    mlp_act_free(b->act);
    memset(b, 0, sizeof *b);
}

/* m's gradient sums (m->grads, zeroed first) over worker w's share of step
 * `step`; *loss_sum and *n its loss and samples. */
static int gradient(struct mlp *m, struct batch *b, struct sampler *smp, const struct dataset *tr,
                    int64_t step, int w, int n_workers, double *loss_sum, int *n, struct err *e)
{
    int64_t count = 0;
    TRY(sampler_indices(smp, step, w, n_workers, 0, 1, b->idx, &count, e));
    const size_t features = (size_t)data_features(tr);
    for (int64_t i = 0; i < count; i++) {
        memcpy(b->x + (size_t)i * features, tr->x + (size_t)b->idx[i] * features,
               features * sizeof(float));
        b->y[i] = tr->y[b->idx[i]];
    }
    *n = (int)count;
    mlp_zero_grad(m, 0, m->n_layers);
    if (count == 0) {
        *loss_sum = 0;
        return 0;
    }
    TRY(mlp_forward(m, b->act, 0, m->n_layers, b->x, *n, NULL, e));
    TRY(mlp_loss(m, b->act, b->y, *n, loss_sum, e));
    return mlp_backward(m, b->act, 0, m->n_layers, b->act->dlogits, *n, NULL, e);
}

/* Test labels as the int32 mlp_evaluate takes. */
static int32_t *test_labels(const struct dataset *test, struct err *e)
{
    int32_t *y = XCALLOC(e, (size_t)test->n, sizeof *y);
    for (int64_t i = 0; y && i < test->n; i++) y[i] = test->y[i];
    return y;
}

static int device_model(const struct numerics_setup *s, struct mlp **out, struct err *e)
{
    const struct device *dev = device_find("cpu", e);
    if (!dev) return e->code;
    TRY(dev->init(0, e));
    return mlp_create(s->wl, dev, s->seed, out, e);
}

static int append_accuracy(struct accuracy_point **pts, int *n, struct accuracy_point p,
                           struct err *e)
{
    struct accuracy_point *grown = realloc(*pts, ((size_t)*n + 1) * sizeof *grown);
    if (!grown) return err_set(e, ERR_NOMEM, "out of memory");
    *pts = grown;
    grown[(*n)++] = p;
    return 0;
}

static bool is_eval_step(const struct numerics_setup *s, int64_t done)
{
    return s->eval_every > 0 && done % s->eval_every == 0 && done < s->steps;
}

/* ---- the synchronous path ----------------------------------------------- */

/* Delayed gradients (pipelined-steps): step t's gradients, kept in slot
 * t mod (delay + 1), are applied at step t + delay, as the lagged UPDATE of
 * core/plan.h "Steps in flight" does; with delay 0 nothing is kept. */
struct delayed {
    int n_slots;
    float **grads;   /* [n_slots][n_params] */
    int *n;          /* [n_slots]: the samples each slot's gradients sum over */
};

static int delayed_init(struct delayed *d, const struct mlp *m, int delay, struct err *e)
{
    memset(d, 0, sizeof *d);
    if (delay <= 0) return 0;
    d->n_slots = delay + 1;
    d->grads = XCALLOC(e, (size_t)d->n_slots, sizeof *d->grads);
    d->n = XCALLOC(e, (size_t)d->n_slots, sizeof *d->n);
    if (!d->grads || !d->n) return ERR_NOMEM;
    for (int k = 0; k < d->n_slots; k++)
        if (!(d->grads[k] = XCALLOC(e, (size_t)m->n_params, sizeof(float)))) return ERR_NOMEM;
    return 0;
}

static void delayed_release(struct delayed *d)
{
    for (int k = 0; d->grads && k < d->n_slots; k++) free(d->grads[k]);
    free(d->grads);
    free(d->n);
    memset(d, 0, sizeof *d);
}

/* Keeps step's gradients (m->grads, over n samples) and puts those of step
 * - delay in their place; false while there are none yet. *n becomes theirs. */
static bool delayed_swap(struct delayed *d, struct mlp *m, int64_t step, int *n)
{
    if (d->n_slots == 0) return true;
    size_t bytes = (size_t)m->n_params * sizeof(float);
    int in = (int)(step % d->n_slots), out = (int)((step + 1) % d->n_slots);
    memcpy(d->grads[in], m->grads, bytes);   /* CPU device: its memory is the host's */
    d->n[in] = *n;
    if (step < d->n_slots - 1) return false;
    memcpy(m->grads, d->grads[out], bytes);  /* step - delay = step + 1 mod n_slots */
    *n = d->n[out];
    return true;
}

int numerics_sync_run(const struct numerics_setup *s, struct sync_numerics *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    struct mlp *m = NULL;
    struct batch b = {0};
    struct sampler smp = {0};
    struct delayed late = {0};
    int32_t *labels = NULL;
    const struct dataset *tr = &s->data->train, *test = &s->data->test;
    int rc = device_model(s, &m, e);
    if (rc == 0) rc = delayed_init(&late, m, s->grad_delay, e);
    if (rc == 0) rc = batch_init(&b, m, s->batch, (int)data_features(tr), e);
    if (rc == 0) rc = sampler_init(&smp, tr->n, s->batch, s->seed, e);
    if (rc == 0 && !(labels = test_labels(test, e))) rc = ERR_NOMEM;
    if (rc == 0 && !(out->loss = XCALLOC(e, (size_t)s->steps + 1, sizeof *out->loss)))
        rc = ERR_NOMEM;
    out->steps = s->steps;
    for (int64_t step = 0; rc == 0 && step < s->steps; step++) {
        double loss_sum = 0;
        int n = 0;
        rc = gradient(m, &b, &smp, tr, step, 0, 1, &loss_sum, &n, e);
        if (rc < 0) break;
        out->loss[step] = loss_sum / n;
        if (delayed_swap(&late, m, step, &n))
            mlp_sgd_step(m, 0, m->n_layers, s->lr, s->momentum, s->weight_decay,
                         1.0f / (float)n);
        if (is_eval_step(s, step + 1) || step + 1 == s->steps) {
            double acc = 0, test_loss = 0;
            rc = mlp_evaluate(m, test->x, labels, (int)test->n, &acc, &test_loss, e);
            if (rc == 0)
                rc = append_accuracy(&out->accuracy, &out->n_accuracy,
                                     (struct accuracy_point){step + 1, 0, acc}, e);
            out->final_loss = test_loss;
        }
    }
    free(labels);
    sampler_release(&smp);
    batch_release(&b);
    delayed_release(&late);
    mlp_free(m);
    if (rc < 0) sync_numerics_release(out);
    return rc;
}

void sync_numerics_release(struct sync_numerics *n)
{
    free(n->loss);
    free(n->accuracy);
    memset(n, 0, sizeof *n);
}

int numerics_sync_report(const struct sync_numerics *n, const double *step_end_s,
                         struct report *r, struct err *e)
{
    r->loss_curve = XCALLOC(e, (size_t)n->steps + 1, sizeof *r->loss_curve);
    r->accuracy_curve = XCALLOC(e, (size_t)n->n_accuracy + 1, sizeof *r->accuracy_curve);
    if (!r->loss_curve || !r->accuracy_curve) return ERR_NOMEM;
    for (int s = 0; s < n->steps; s++)
        r->loss_curve[s] = (struct loss_point){s, step_end_s[s], n->loss[s]};
    r->n_loss_curve = n->steps;
    for (int i = 0; i < n->n_accuracy; i++) {
        struct accuracy_point p = n->accuracy[i];
        p.time_s = step_end_s[p.step - 1];
        r->accuracy_curve[i] = p;
    }
    r->n_accuracy_curve = n->n_accuracy;
    if (n->n_accuracy > 0) {
        r->has_final = true;
        r->final.loss = n->final_loss;
        r->final.test_accuracy = n->accuracy[n->n_accuracy - 1].accuracy;
    }
    return 0;
}

/* ---- the asynchronous path ------------------------------------------------ */

struct numerics {
    struct numerics_setup s;
    const struct plan *p;
    struct sim_hooks hooks;
    struct mlp *global;          /* the servers' parameters and momentum, every shard */
    struct mlp **worker;         /* [n_workers]: the parameters each last pulled; its gradient */
    double *loss_sum;            /* [n_workers]: its current step's */
    int *n_samples;              /* [n_workers] */
    bool *in_round;              /* [n_servers x n_workers]: push counted in the open round */
    int64_t *round_samples;      /* [n_servers] */
    float *round_sum;            /* [n_params] */
    struct batch b;
    struct sampler smp;
    int32_t *labels;
    VEC(struct step_loss) losses;
    struct err err;              /* what a hook met: the simulator keeps only the code */
    struct accuracy_point *accuracy;
    int n_accuracy;
    double final_loss;
};

static int on_step_start(void *ctx, int rank, int64_t job_step, int replica)
{
    struct numerics *n = ctx;
    if (rank >= n->p->n_workers) return 0;
    return gradient(n->worker[rank], &n->b, &n->smp, &n->s.data->train, job_step, replica,
                    n->p->n_workers, &n->loss_sum[rank], &n->n_samples[rank], &n->err);
}

static void shard(const struct numerics *n, int server, int64_t *off, int64_t *count)
{
    const struct plan_rank *pr = &n->p->ranks[server];
    *off = mlp_param_offset(n->global, pr->shard_lo);
    *count = mlp_param_count(n->global, pr->shard_lo, pr->shard_hi);
}

static void sgd(struct numerics *n, int64_t off, int64_t count, const float *g, int64_t samples)
{
    const struct device *dev = n->global->dev;
    dev->sgd_momentum(n->global->params + off, n->global->momentum + off, g, (size_t)count,
                      n->s.lr, n->s.momentum, n->s.weight_decay, 1.0f / (float)samples);
}

static int on_push(void *ctx, int rank, int server, int64_t round, const struct ps_push_result *pr)
{
    (void)round;
    struct numerics *n = ctx;
    int sv = server - n->p->n_workers, nw = n->p->n_workers;
    int64_t off, count;
    shard(n, server, &off, &count);
    const struct device *dev = n->global->dev;
    switch (pr->action) {
    case PS_APPLIED:
        sgd(n, off, count, n->worker[rank]->grads + off, n->n_samples[rank]);
        return 0;
    case PS_GATHERED:
    case PS_ROUND:
        /* the gradients wait in the workers' own blocks: a worker's next
         * step, which overwrites them, follows its pull, which waits for
         * the round to close */
        n->in_round[(size_t)sv * nw + rank] = true;
        n->round_samples[sv] += n->n_samples[rank];
        if (pr->action == PS_GATHERED) return 0;
        dev->fill(n->round_sum, (size_t)count, 0);
        for (int w = 0; w < nw; w++)
            if (n->in_round[(size_t)sv * nw + w])
                dev->axpy((size_t)count, 1.0f, n->worker[w]->grads + off, n->round_sum);
        sgd(n, off, count, n->round_sum, n->round_samples[sv]);
        memset(n->in_round + (size_t)sv * nw, 0, (size_t)nw * sizeof *n->in_round);
        n->round_samples[sv] = 0;
        return 0;
    case PS_DROPPED:
        return 0;
    }
    return 0;
}

static int on_pull(void *ctx, int rank, int server)
{
    struct numerics *n = ctx;
    int64_t off, count;
    shard(n, server, &off, &count);
    memcpy(n->worker[rank]->params + off, n->global->params + off, (size_t)count * sizeof(float));
    return 0;
}

static int evaluate(struct numerics *n, int64_t step, double now_s, struct err *e)
{
    const struct dataset *test = &n->s.data->test;
    double acc = 0;
    TRY(mlp_evaluate(n->global, test->x, n->labels, (int)test->n, &acc, &n->final_loss, e));
    return append_accuracy(&n->accuracy, &n->n_accuracy,
                           (struct accuracy_point){step, now_s, acc}, e);
}

static int on_step_done(void *ctx, int rank, int64_t job_step, int replica, double now_s)
{
    struct numerics *n = ctx;
    if (rank >= n->p->n_workers) return 0;
    struct step_loss l = {job_step, now_s, n->loss_sum[rank], n->n_samples[rank]};
    if (vec_push(&n->losses, l) < 0) return err_set(&n->err, ERR_NOMEM, "out of memory");
    /* each job step's replica 0 is computed once, by whichever worker took
     * it: its end sets when the servers' model is evaluated */
    if (replica == 0 && is_eval_step(&n->s, job_step + 1))
        return evaluate(n, job_step + 1, now_s, &n->err);
    return 0;
}

int numerics_create(const struct numerics_setup *s, const struct plan *p, struct numerics **out,
                    struct err *e)
{
    *out = NULL;
    int64_t params = 0;
    for (int l = 0; l < s->wl->n_layers; l++) params += s->wl->layers[l].params;
    double need = (double)(p->n_workers + 1) * 12.0 * (double)params;
    if (need > (double)NUMERICS_MAX_BYTES)
        return err_set(e, ERR_INPUT,
                       "--numerics: %d workers each holding the model's %lld parameters need "
                       "%.1f GiB, over the %.0f GiB budget; use fewer --devices or a smaller "
                       "--model", p->n_workers, (long long)params, need / (1 << 30),
                       (double)NUMERICS_MAX_BYTES / (1 << 30));
    struct numerics *n = XCALLOC(e, 1, sizeof *n);
    if (!n) return ERR_NOMEM;
    n->s = *s;
    n->p = p;
    n->hooks = (struct sim_hooks){.ctx = n, .step_start = on_step_start, .push_arrived = on_push,
                                  .pull_answered = on_pull, .step_done = on_step_done};
    int nw = p->n_workers, ns = p->n_servers > 0 ? p->n_servers : 1;
    int rc = device_model(s, &n->global, e);
    n->worker = XCALLOC(e, (size_t)nw, sizeof *n->worker);
    n->loss_sum = XCALLOC(e, (size_t)nw, sizeof *n->loss_sum);
    n->n_samples = XCALLOC(e, (size_t)nw, sizeof *n->n_samples);
    n->in_round = XCALLOC(e, (size_t)ns * (size_t)nw, sizeof *n->in_round);
    n->round_samples = XCALLOC(e, (size_t)ns, sizeof *n->round_samples);
    if (rc == 0 && (!n->worker || !n->loss_sum || !n->n_samples || !n->in_round ||
                    !n->round_samples))
        rc = ERR_NOMEM;
    if (rc == 0 && !(n->round_sum = n->global->dev->alloc((size_t)n->global->n_params *
                                                          sizeof(float), e)))
        rc = ERR_NOMEM;
    for (int w = 0; rc == 0 && w < nw; w++) rc = mlp_create(s->wl, n->global->dev, s->seed, &n->worker[w], e);
    int max_n = (int)sampler_max_count(s->batch, nw, 1);
    if (rc == 0) rc = batch_init(&n->b, n->global, max_n, (int)data_features(&s->data->train), e);
    if (rc == 0) rc = sampler_init(&n->smp, s->data->train.n, s->batch, s->seed, e);
    if (rc == 0 && !(n->labels = test_labels(&s->data->test, e))) rc = ERR_NOMEM;
    if (rc < 0) {
        numerics_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

void numerics_free(struct numerics *n)
{
    if (!n) return;
    for (int w = 0; n->worker && w < n->p->n_workers; w++) mlp_free(n->worker[w]);
    free(n->worker);
    free(n->loss_sum);
    free(n->n_samples);
    free(n->in_round);
    free(n->round_samples);
    if (n->global) n->global->dev->free(n->round_sum);
    mlp_free(n->global);
    batch_release(&n->b);
    sampler_release(&n->smp);
    free(n->labels);
    vec_free(&n->losses);
    free(n->accuracy);
    free(n);
}

const struct sim_hooks *numerics_hooks(struct numerics *n)
{
    return &n->hooks;
}

const struct err *numerics_error(const struct numerics *n)
{
    return &n->err;
}

int numerics_report(struct numerics *n, double makespan_s, struct report *r, struct err *e)
{
    TRY(evaluate(n, n->s.steps, makespan_s, e));
    TRY(report_set_loss_curve(r, n->losses.items, n->losses.len, n->s.steps, e));
    r->accuracy_curve = n->accuracy;
    r->n_accuracy_curve = n->n_accuracy;
    n->accuracy = NULL;
    n->n_accuracy = 0;
    r->has_final = true;
    r->final.loss = n->final_loss;
    r->final.test_accuracy = r->accuracy_curve[r->n_accuracy_curve - 1].accuracy;
    return 0;
}

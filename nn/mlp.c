/* The MLP: layout of the blocks, initialisation, forward and backward of a
 * dense layer side by side, the loss, the update and evaluation. Shapes are
 * (rows, columns), row-major; n is the microbatch's samples. All arithmetic
 * is the device's (nn/device.h); this file only decides what to compute. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "mlp.h"

/* ---- layout ------------------------------------------------------------ */

int64_t mlp_param_offset(const struct mlp *m, int layer)
{
    return m->offset[layer];
}

int64_t mlp_param_count(const struct mlp *m, int lo, int hi)
{
    return m->offset[hi] - m->offset[lo];
}

float *mlp_weight(const struct mlp *m, float *block, int layer)
{
    return block + m->offset[layer];
}

float *mlp_bias(const struct mlp *m, float *block, int layer)
{
    return block + m->offset[layer] + (int64_t)m->sizes[layer] * m->sizes[layer + 1];
}

/* ReLU after every layer but the last, whose logits go to softmax. */
static enum dev_act layer_act(const struct mlp *m, int layer)
{
    return layer == m->n_layers - 1 ? DEV_ACT_IDENTITY : DEV_ACT_RELU;
}

static int widest(const struct mlp *m)
{
    int w = 0;
    for (int l = 0; l <= m->n_layers; l++) w = m->sizes[l] > w ? m->sizes[l] : w;
    return w;
}

/* ---- the model --------------------------------------------------------- */

/* Normal weights with std sqrt(gain/in), biases 0, into a host copy of the
 * block, layer by layer in block order (the draws' order is the layout's). */
static int init_params(const struct mlp *m, uint64_t seed, float *host, struct err *e)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return err_set(e, ERR_NOMEM, "mlp: out of memory for the random generator");
    /* mt19937 takes 32 bits of seed: fold the high half in, so seeds that
     * differ only there still give different models. */
    gsl_rng_set(r, (unsigned long)((seed ^ (seed >> 32)) & 0xffffffffu));
    for (int l = 0; l < m->n_layers; l++) {
        int in = m->sizes[l], out = m->sizes[l + 1];
        /* He et al. 2015: ReLU zeroes half the variance, so 2/in keeps it
         * constant through the layers; the linear last layer has no ReLU. */
        double gain = layer_act(m, l) == DEV_ACT_RELU ? 2.0 : 1.0;
        double std = sqrt(gain / in);
        float *w = host + m->offset[l];
        for (int64_t i = 0; i < (int64_t)in * out; i++) w[i] = (float)gsl_ran_gaussian(r, std);
        memset(w + (int64_t)in * out, 0, (size_t)out * sizeof *w);
    }
    gsl_rng_free(r);
    return 0;
}

int mlp_create(const struct workload *w, const struct device *dev, uint64_t seed,
               struct mlp **out, struct err *e)
{
    *out = NULL;
    if (!w->is_mlp)
        return err_set(e, ERR_INPUT,
                       "model '%s' is a sizes-only model (for timing simulation): there is "
                       "no arithmetic to do; use an mlp: workload, e.g. mlp:784-256-128-10",
                       w->spec);
    if (w->n_layers < 1)
        return err_set(e, ERR_INPUT, "model '%s' has no layers", w->spec);
    for (int l = 0; l < w->n_layers; l++) {
        const struct layer *ly = &w->layers[l];
        if (ly->kind != LAYER_DENSE || ly->in < 1 || ly->out < 1 || ly->in > INT_MAX ||
            ly->out > INT_MAX || (l > 0 && ly->in != w->layers[l - 1].out))
            return err_set(e, ERR_INPUT,
                           "model '%s': layer %d is not a dense layer that the MLP can "
                           "compute (in %lld, out %lld)",
                           w->spec, l, (long long)ly->in, (long long)ly->out);
    }

    int rc = ERR_NOMEM;
    float *host = NULL;
    struct mlp *m = XCALLOC(e, 1, sizeof *m);
    if (!m) return ERR_NOMEM;
    m->dev = dev;
    m->n_layers = w->n_layers;
    if (!(m->sizes = XCALLOC(e, (size_t)m->n_layers + 1, sizeof *m->sizes))) goto fail;
    if (!(m->offset = XCALLOC(e, (size_t)m->n_layers + 1, sizeof *m->offset))) goto fail;
    m->sizes[0] = (int)w->layers[0].in;
    for (int l = 0; l < m->n_layers; l++) {
        m->sizes[l + 1] = (int)w->layers[l].out;
        /* W (in, out) then b (out) */
        m->offset[l + 1] = m->offset[l] + (int64_t)m->sizes[l] * m->sizes[l + 1] + m->sizes[l + 1];
    }
    m->n_params = m->offset[m->n_layers];

    size_t bytes = (size_t)m->n_params * sizeof(float);
    if (!(m->params = dev->alloc(bytes, e))) goto fail;
    if (!(m->grads = dev->alloc(bytes, e))) goto fail;
    if (!(m->momentum = dev->alloc(bytes, e))) goto fail;
    if (!(host = XCALLOC(e, (size_t)m->n_params, sizeof *host))) goto fail;
    if ((rc = init_params(m, seed, host, e)) < 0) goto fail;
    dev->copy(m->params, host, bytes, DEV_H2D);
    dev->fill(m->grads, (size_t)m->n_params, 0);
    dev->fill(m->momentum, (size_t)m->n_params, 0);
    free(host);
    host = NULL;
    if ((rc = dev->sync(e)) < 0) goto fail;
    *out = m;
    return 0;
fail:
    free(host);
    mlp_free(m);
    return rc;
}

void mlp_free(struct mlp *m)
{
    if (!m) return;
    m->dev->free(m->params);
    m->dev->free(m->grads);
    m->dev->free(m->momentum);
    free(m->sizes);
    free(m->offset);
    free(m);
}

/* ---- activations ------------------------------------------------------- */

int mlp_act_create(const struct mlp *m, int max_n, struct mlp_act **out, struct err *e)
{
    *out = NULL;
    if (max_n < 1)
        return err_set(e, ERR_INPUT, "mlp: a microbatch of %d samples (1 or more)", max_n);
    const struct device *dev = m->dev;
    struct mlp_act *a = XCALLOC(e, 1, sizeof *a);
    if (!a) return ERR_NOMEM;
    a->dev = dev;
    a->max_n = max_n;
    a->n_layers = m->n_layers;
    if (!(a->x = XCALLOC(e, (size_t)m->n_layers + 1, sizeof *a->x))) goto fail;
    for (int l = 0; l <= m->n_layers; l++)
        if (!(a->x[l] = dev->alloc((size_t)max_n * m->sizes[l] * sizeof(float), e))) goto fail;
    if (!(a->dlogits = dev->alloc((size_t)max_n * m->sizes[m->n_layers] * sizeof(float), e)))
        goto fail;
    for (int i = 0; i < 2; i++)
        if (!(a->scratch[i] = dev->alloc((size_t)max_n * widest(m) * sizeof(float), e)))
            goto fail;
    *out = a;
    return 0;
fail:
    mlp_act_free(a);
    return ERR_NOMEM;
}

void mlp_act_free(struct mlp_act *a)
{
    if (!a) return;
    for (int l = 0; a->x && l <= a->n_layers; l++) a->dev->free(a->x[l]);
    free(a->x);
    a->dev->free(a->dlogits);
    a->dev->free(a->scratch[0]);
    a->dev->free(a->scratch[1]);
    for (int l = 0; a->dy && l < a->n_layers; l++) a->dev->free(a->dy[l]);
    for (int l = 0; a->db && l < a->n_layers; l++) a->dev->free(a->db[l]);
    free(a->dy);
    free(a->db);
    a->dev->free(a->one);
    free(a);
}

/* ---- one dense layer, forward and backward ----------------------------- */

/* forward:  y (n, out) = act(x (n, in) W (in, out) + b (out)) */
static void dense_forward(const struct mlp *m, int l, const float *x, float *y, int n)
{
    const struct device *d = m->dev;
    int in = m->sizes[l], out = m->sizes[l + 1];
    const float *w = mlp_weight(m, m->params, l), *b = mlp_bias(m, m->params, l);
    d->sgemm(false, false, n, out, in, 1.0f, x, in, w, out, 0.0f, y, out);
    d->bias_act_forward(y, b, n, out, layer_act(m, l));
}

/* backward, given dy_in (n, out), the gradient by this layer's output y:
 *   dy (n, out)  = dy_in * act'(y)            (into the dy buffer)
 *   db (out)    += sum over rows of dy
 *   dW (in, out) += x^T (in, n) dy (n, out)
 *   dx (n, in)   = dy (n, out) W^T (out, in)   (skipped when dx is NULL)
 * FLOPs: 2 n in out for dW and as many for dx, as workload.c counts them. */
static void dense_backward(struct mlp *m, int l, const float *x, const float *y,
                           const float *dy_in, float *dy, float *dx, int n)
{
    const struct device *d = m->dev;
    int in = m->sizes[l], out = m->sizes[l + 1];
    const float *w = mlp_weight(m, m->params, l);
    float *dw = mlp_weight(m, m->grads, l), *db = mlp_bias(m, m->grads, l);
    d->bias_act_backward(dy_in, y, n, out, layer_act(m, l), dy, db);
    d->sgemm(true, false, in, out, n, 1.0f, x, in, dy, out, 1.0f, dw, out);
    if (dx) d->sgemm(false, true, n, in, out, 1.0f, dy, out, w, out, 0.0f, dx, in);
}

/* ---- one microbatch over layers [lo, hi) ------------------------------- */

static int check_range(const struct mlp *m, const struct mlp_act *a, int lo, int hi, int n,
                       const char *what, struct err *e)
{
    if (a->n_layers != m->n_layers)
        return err_set(e, ERR_INPUT, "mlp %s: activations of a %d-layer model for a %d-layer one",
                       what, a->n_layers, m->n_layers);
    if (lo < 0 || hi > m->n_layers || lo >= hi)
        return err_set(e, ERR_INPUT, "mlp %s: layers [%d, %d) are not a range of [0, %d)", what,
                       lo, hi, m->n_layers);
    if (n < 1 || n > a->max_n)
        return err_set(e, ERR_INPUT, "mlp %s: %d samples, the activations hold 1 to %d", what,
                       n, a->max_n);
    return 0;
}

int mlp_forward(const struct mlp *m, struct mlp_act *a, int lo, int hi, const float *in,
                int n, float *out, struct err *e)
{
    TRY(check_range(m, a, lo, hi, n, "forward", e));
    const struct device *d = m->dev;
    if (in && in != a->x[lo])
        d->copy(a->x[lo], in, (size_t)n * m->sizes[lo] * sizeof(float), DEV_D2D);
    for (int l = lo; l < hi; l++) dense_forward(m, l, a->x[l], a->x[l + 1], n);
    a->dy_lo = a->dy_hi = 0;   /* a new microbatch: no weight half is owed */
    if (out && out != a->x[hi])
        d->copy(out, a->x[hi], (size_t)n * m->sizes[hi] * sizeof(float), DEV_D2D);
    a->n = n;
    return 0;
}

int mlp_loss(const struct mlp *m, struct mlp_act *a, const int32_t *labels, int n,
             double *loss_sum, struct err *e)
{
    TRY(check_range(m, a, 0, m->n_layers, n, "loss", e));
    if (n != a->n)
        return err_set(e, ERR_INPUT, "mlp loss: %d samples, but the last forward had %d", n,
                       a->n);
    int classes = m->sizes[m->n_layers];
    m->dev->softmax_xent(a->x[m->n_layers], labels, n, classes, 1.0f, a->dlogits, loss_sum);
    return 0;
}

int mlp_backward(struct mlp *m, struct mlp_act *a, int lo, int hi, const float *dout, int n,
                 float *din, struct err *e)
{
    TRY(check_range(m, a, lo, hi, n, "backward", e));
    if (n != a->n)
        return err_set(e, ERR_INPUT, "mlp backward: %d samples, but the forward had %d", n,
                       a->n);
    /* Invariant: g is the gradient by layer l's output. dy always goes to
     * scratch[0] and dx to scratch[1] (or din at the bottom), so no call
     * reads and writes the same buffer, and dout is never written. */
    const float *g = dout;
    for (int l = hi - 1; l >= lo; l--) {
        float *dx = l > lo ? a->scratch[1] : din;
        dense_backward(m, l, a->x[l], a->x[l + 1], g, a->scratch[0], dx, n);
        g = dx;
    }
    return 0;
}

/* ---- the backward in two halves ---------------------------------------- */

/* The buffers of the split backward, on first use: a pass that never splits
 * pays nothing for them. */
static int split_buffers(const struct mlp *m, struct mlp_act *a, struct err *e)
{
    if (a->one) return 0;
    const struct device *d = m->dev;
    if (!a->dy && !(a->dy = XCALLOC(e, (size_t)m->n_layers, sizeof *a->dy))) return ERR_NOMEM;
    if (!a->db && !(a->db = XCALLOC(e, (size_t)m->n_layers, sizeof *a->db))) return ERR_NOMEM;
    for (int l = 0; l < m->n_layers; l++) {
        size_t out = (size_t)m->sizes[l + 1];
        if (!a->dy[l] && !(a->dy[l] = d->alloc((size_t)a->max_n * out * sizeof(float), e)))
            return ERR_NOMEM;
        if (!a->db[l] && !(a->db[l] = d->alloc(out * sizeof(float), e))) return ERR_NOMEM;
    }
    const float one = 1.0f;
    if (!(a->one = d->alloc(sizeof one, e))) return ERR_NOMEM;
    d->copy(a->one, &one, sizeof one, DEV_H2D);
    return 0;
}

/* B of one layer, given dy_in (n, out), the gradient by its output y:
 *   dy[l] (n, out) = dy_in * act'(y)            (kept for W)
 *   db[l] (out)    = sum over rows of dy[l]     (kept for W)
 *   dx (n, in)     = dy[l] (n, out) W^T (out, in)   (skipped when dx is NULL) */
static void dense_backward_input(struct mlp *m, struct mlp_act *a, int l, const float *dy_in,
                                 float *dx, int n)
{
    const struct device *d = m->dev;
    int in = m->sizes[l], out = m->sizes[l + 1];
    d->fill(a->db[l], (size_t)out, 0);
    d->bias_act_backward(dy_in, a->x[l + 1], n, out, layer_act(m, l), a->dy[l], a->db[l]);
    if (dx)
        d->sgemm(false, true, n, in, out, 1.0f, a->dy[l], out, mlp_weight(m, m->params, l), out,
                 0.0f, dx, in);
}

/* W of one layer: dW (in, out) += x^T (in, n) dy[l] (n, out), and
 * db (1, out) += 1 (1, 1) db[l] (1, out), an addition as a GEMM so that it
 * runs on whichever device holds the blocks. */
static void dense_backward_weight(struct mlp *m, const struct mlp_act *a, int l, int n)
{
    const struct device *d = m->dev;
    int in = m->sizes[l], out = m->sizes[l + 1];
    d->sgemm(true, false, in, out, n, 1.0f, a->x[l], in, a->dy[l], out, 1.0f,
             mlp_weight(m, m->grads, l), out);
    d->sgemm(false, false, 1, out, 1, 1.0f, a->one, 1, a->db[l], out, 1.0f,
             mlp_bias(m, m->grads, l), out);
}

int mlp_backward_input(struct mlp *m, struct mlp_act *a, int lo, int hi, const float *dout,
                       int n, float *din, struct err *e)
{
    TRY(check_range(m, a, lo, hi, n, "backward (input)", e));
    if (n != a->n)
        return err_set(e, ERR_INPUT, "mlp backward (input): %d samples, but the forward had %d",
                       n, a->n);
    TRY(split_buffers(m, a, e));
    /* Invariant: g is the gradient by layer l's output; dx goes to
     * scratch[1] (or din at the bottom), which g no longer needs once
     * dy[l] holds its product with act'. */
    const float *g = dout;
    for (int l = hi - 1; l >= lo; l--) {
        float *dx = l > lo ? a->scratch[1] : din;
        dense_backward_input(m, a, l, g, dx, n);
        g = dx;
    }
    /* kept layers: these, joined to those kept before when they touch
     * (stages of one microbatch going down the model) */
    if (a->dy_lo < a->dy_hi && hi == a->dy_lo) a->dy_lo = lo;
    else if (a->dy_lo < a->dy_hi && lo == a->dy_hi) a->dy_hi = hi;
    else a->dy_lo = lo, a->dy_hi = hi;
    return 0;
}

int mlp_backward_weight(struct mlp *m, struct mlp_act *a, int lo, int hi, int n, struct err *e)
{
    TRY(check_range(m, a, lo, hi, n, "backward (weights)", e));
    if (n != a->n)
        return err_set(e, ERR_INPUT, "mlp backward (weights): %d samples, but the forward had %d",
                       n, a->n);
    if (lo < a->dy_lo || hi > a->dy_hi)
        return err_set(e, ERR_INPUT, "mlp backward (weights) of layers [%d, %d): the input half "
                       "kept [%d, %d) of this microbatch (run mlp_backward_input first)",
                       lo, hi, a->dy_lo, a->dy_hi);
    for (int l = lo; l < hi; l++) dense_backward_weight(m, a, l, n);
    return 0;
}

/* ---- optimizer and evaluation ------------------------------------------ */

void mlp_zero_grad(struct mlp *m, int lo, int hi)
{
    m->dev->fill(m->grads + m->offset[lo], (size_t)mlp_param_count(m, lo, hi), 0);
}

void mlp_sgd_step(struct mlp *m, int lo, int hi, float lr, float momentum, float weight_decay,
                  float scale)
{
    int64_t at = m->offset[lo];
    m->dev->sgd_momentum(m->params + at, m->momentum + at, m->grads + at,
                         (size_t)mlp_param_count(m, lo, hi), lr, momentum, weight_decay, scale);
}

#define EVAL_BATCH 256

int mlp_evaluate(const struct mlp *m, const float *x, const int32_t *y, int n,
                 double *accuracy, double *mean_loss, struct err *e)
{
    int classes = m->sizes[m->n_layers], features = m->sizes[0];
    if (n < 1) return err_set(e, ERR_INPUT, "mlp evaluate: %d samples (1 or more)", n);
    for (int i = 0; i < n; i++)
        if (y[i] < 0 || y[i] >= classes)
            return err_set(e, ERR_INPUT, "mlp evaluate: label %d of sample %d is not a class "
                                         "(0 to %d)", (int)y[i], i, classes - 1);
    const struct device *d = m->dev;
    int batch = n < EVAL_BATCH ? n : EVAL_BATCH;
    struct mlp_act *a = NULL;
    int32_t *labels = NULL;
    float *logits = NULL;
    int rc = mlp_act_create(m, batch, &a, e);
    if (rc < 0) goto out;
    rc = ERR_NOMEM;
    if (!(labels = d->alloc((size_t)batch * sizeof *labels, e))) goto out;
    if (!(logits = XCALLOC(e, (size_t)batch * classes, sizeof *logits))) goto out;

    double loss = 0;
    int64_t correct = 0;
    for (int at = 0; at < n; at += batch) {
        int k = n - at < batch ? n - at : batch;
        d->copy(a->x[0], x + (size_t)at * features, (size_t)k * features * sizeof(float), DEV_H2D);
        d->copy(labels, y + at, (size_t)k * sizeof *labels, DEV_H2D);
        if ((rc = mlp_forward(m, a, 0, m->n_layers, NULL, k, NULL, e)) < 0) goto out;
        double part;
        d->softmax_xent(a->x[m->n_layers], labels, k, classes, 1.0f, a->dlogits, &part);
        loss += part;
        d->copy(logits, a->x[m->n_layers], (size_t)k * classes * sizeof(float), DEV_D2H);
        for (int i = 0; i < k; i++) {
            const float *l = logits + (size_t)i * classes;
            int best = 0;
            for (int c = 1; c < classes; c++) best = l[c] > l[best] ? c : best;
            correct += best == y[at + i];
        }
    }
    if ((rc = d->sync(e)) < 0) goto out;
    *accuracy = (double)correct / n;
    *mean_loss = loss / n;
    rc = 0;
out:
    free(logits);
    d->free(labels);
    mlp_act_free(a);
    return rc;
}

/* The MLP of an mlp: workload: dense layers, ReLU after every one but the
 * last, softmax cross-entropy on the last layer's logits, SGD with momentum.
 * All arithmetic goes through a device table (nn/device.h).
 *
 * Memory, as llm.c keeps it: ONE parameter block per model, layer by layer,
 * each layer its weights W (in, out) row-major then its bias b (out):
 *
 *   params: | W0 b0 | W1 b1 | ... | W(L-1) b(L-1) |
 *           ^ offset[0] = 0       ^ offset[L-1]    ^ offset[L] = n_params
 *
 * so layers [lo, hi) are the contiguous slice [offset[lo], offset[hi]): an
 * all-reduce bucket, a pipeline stage's parameters or a shard is one pointer
 * and one count. The gradient and momentum blocks have the same layout.
 *
 * Gradients are SUMS over samples (device.h): backward adds a microbatch's
 * gradient into the gradient block (+=), so M microbatches, or N ranks
 * all-reduced with SUM, leave the global batch's gradient sum there, and
 * mlp_sgd_step divides by the global batch once (scale = 1/B).
 *
 * Activations live in a struct mlp_act the caller owns, one per microbatch
 * in flight: a pipeline runs forward of microbatch k while microbatch j still
 * waits for its backward, so each needs its own saved activations. A model
 * is not thread-safe: one thread calls its functions at a time. */
#ifndef STRATA_NN_MLP_H
#define STRATA_NN_MLP_H

#include <stdint.h>

#include "../core/err.h"
#include "../core/workload.h"
#include "device.h"

struct mlp {
    const struct device *dev;   /* where the blocks live and the math runs */
    int n_layers;               /* L */
    int *sizes;                 /* [L + 1]: sizes[l] features into layer l; sizes[L] = classes */
    int64_t *offset;            /* [L + 1]: layer l's W starts at offset[l]; offset[L] = n_params */
    int64_t n_params;
    float *params;              /* [n_params] device: W0 b0 W1 b1 ... */
    float *grads;               /* [n_params] device: sums over samples since mlp_zero_grad */
    float *momentum;            /* [n_params] device: SGD's velocity v */
};

/* Builds the model of an mlp: workload on dev, initialised from seed:
 * weights of ReLU layers are normal with std sqrt(2/in) (He et al. 2015),
 * the last (linear) layer's std sqrt(1/in) (the same derivation without
 * ReLU halving the variance: LeCun), biases 0; drawn with GSL's mt19937
 * layer by layer, so every rank that builds the model from the run's seed
 * holds the same parameters (data-parallel replicas start equal with no
 * broadcast). Gradients and momentum start at 0. A workload of sizes only
 * (transformer:) is ERR_INPUT; dev must have been initialised (dev->init). */
int mlp_create(const struct workload *w, const struct device *dev, uint64_t seed,
               struct mlp **out, struct err *e);
void mlp_free(struct mlp *m);   /* accepts NULL */

/* Where layer's parameters start in the blocks, in floats; layer in
 * [0, n_layers], and mlp_param_offset(m, n_layers) = n_params. */
int64_t mlp_param_offset(const struct mlp *m, int layer);
/* Parameters (= gradients = momentum values) of layers [lo, hi). */
int64_t mlp_param_count(const struct mlp *m, int lo, int hi);
/* Layer l's weights W (in, out) and bias b (out) in a block (params, grads
 * or momentum). */
float *mlp_weight(const struct mlp *m, float *block, int layer);
float *mlp_bias(const struct mlp *m, float *block, int layer);

/* ---- activations of one microbatch ---------------------------------- */

struct mlp_act {
    const struct device *dev;   /* the model's: where the buffers live */
    int max_n;        /* the most samples one forward may hold */
    int n;            /* samples of the last forward */
    int n_layers;
    float **x;        /* [L + 1] device: x[l] (max_n, sizes[l]) enters layer l;
                       * x[l+1] is its output (after ReLU); x[L] the logits */
    float *dlogits;   /* (max_n, classes) device: mlp_loss's gradient of the logits */
    float *scratch[2]; /* (max_n, widest layer) device: backward's working gradients */
    /* The backward split in two (mlp_backward_input, mlp_backward_weight),
     * made by the first mlp_backward_input, NULL until then: */
    float **dy;       /* [L] device: dy[l] (max_n, sizes[l+1]), the gradient by layer
                       * l's pre-activation, which the weight half needs */
    float **db;       /* [L] device: db[l] (sizes[l+1]), this microbatch's bias gradient */
    float *one;       /* device: 1.0f, the (1,1) factor that adds db[l] into the grads */
    int dy_lo, dy_hi; /* layers whose dy and db are this microbatch's; empty after a forward */
};

/* Buffers for one microbatch of at most max_n samples (max_n >= 1), for m
 * or any model of the same workload on the same device. */
int mlp_act_create(const struct mlp *m, int max_n, struct mlp_act **out, struct err *e);
void mlp_act_free(struct mlp_act *a);   /* accepts NULL */

/* ---- one microbatch, over a range of layers -------------------------- */

/* Forward of layers [lo, hi) on n samples (1 <= n <= a->max_n):
 *   in  (n, sizes[lo]) device: copied into a->x[lo]; NULL or a->x[lo]
 *       itself means it is there already (an earlier forward of [.., lo) in
 *       the same act, or the caller wrote or received it there)
 *   out (n, sizes[hi]) device: a copy of the output, or NULL (it stays in
 *       a->x[hi] either way)
 * Saves each layer's input and output in a for backward. ERR_INPUT for a
 * range or n out of bounds. */
int mlp_forward(const struct mlp *m, struct mlp_act *a, int lo, int hi, const float *in,
                int n, float *out, struct err *e);

/* Softmax cross-entropy of the logits a->x[L] (a forward through the last
 * layer must have run on a) against labels (device, n, each in
 * [0, classes)): *loss_sum = the SUM of the n samples' losses (divide by the
 * samples for the mean) and a->dlogits = its gradient (softmax - onehot, per
 * sample, undivided), ready for mlp_backward(..., a->dlogits, ...). */
int mlp_loss(const struct mlp *m, struct mlp_act *a, const int32_t *labels, int n,
             double *loss_sum, struct err *e);

/* Backward of layers [lo, hi) for the microbatch whose forward a holds
 * (n must be that forward's n):
 *   dout (n, sizes[hi]) device: the gradient of the loss sum by the output
 *        of layer hi-1 (a->dlogits when hi = L)
 *   din  (n, sizes[lo]) device: written (=) with the gradient by the input
 *        of layer lo, what a pipeline sends back; NULL skips it (layer 0's
 *        input is data: no one needs its gradient, and skipping it saves a
 *        third of that layer's backward)
 * Adds (+=) the weight and bias gradients of layers [lo, hi) into m->grads.
 * Stages compose: backward [1,3) then [0,1) with the first's din as the
 * second's dout gives what backward [0,3) gives. */
int mlp_backward(struct mlp *m, struct mlp_act *a, int lo, int hi, const float *dout,
                 int n, float *din, struct err *e);

/* mlp_backward split in two, for zero-bubble pipelines (Qi et al., ICLR
 * 2024), which run the weight half later, where the pipeline would idle.
 * Together they leave what mlp_backward leaves (up to the order of float
 * sums).
 *
 * Input half, B: the same arguments and din as mlp_backward, but m->grads
 * is not touched; it keeps each layer's output gradient and bias gradient
 * in a for the weight half. */
int mlp_backward_input(struct mlp *m, struct mlp_act *a, int lo, int hi, const float *dout,
                       int n, float *din, struct err *e);

/* Weight half, W: adds (+=) the weight and bias gradients of layers [lo, hi)
 * into m->grads from what mlp_backward_input kept in a for this microbatch
 * (dW = x^T dy, one GEMM of the forward's shape per layer). ERR_INPUT when
 * no input half of these layers ran since a's last forward. */
int mlp_backward_weight(struct mlp *m, struct mlp_act *a, int lo, int hi, int n,
                        struct err *e);

/* ---- optimizer and evaluation --------------------------------------- */

/* Gradients of layers [lo, hi) = 0 (before a step's first backward). */
void mlp_zero_grad(struct mlp *m, int lo, int hi);

/* One SGD step on layers [lo, hi) with PyTorch's momentum and weight decay
 * (device.h sgd_momentum): g' = scale g + weight_decay w; v = momentum v + g';
 * w -= lr v. scale = 1 / the samples the gradients sum over (the global
 * batch). Gradients are left as they are. */
void mlp_sgd_step(struct mlp *m, int lo, int hi, float lr, float momentum,
                  float weight_decay, float scale);

/* Accuracy (argmax of the logits = label, ties to the lower class) and mean
 * loss over n samples of host memory: x (n, sizes[0]) floats, y (n) labels,
 * run in batches of up to 256 through the whole model. Gradients are not
 * touched. ERR_INPUT for n < 1 or a label out of range. */
int mlp_evaluate(const struct mlp *m, const float *x, const int32_t *y, int n,
                 double *accuracy, double *mean_loss, struct err *e);

#endif

/* Devices: where the arithmetic runs, behind one small table of functions
 * chosen at start-up (Redis's ae backends: ae_epoll.c, ae_kqueue.c fill the
 * same few functions; the loop never asks which one it runs on). The MLP and
 * the executors call through the table and never test `if (cuda)`.
 *
 *   cpu   host memory, sgemm from oneDNN or OpenBLAS (nn/gemm.h: the build
 *         picks), plain loops (nn/device_cpu.c)
 *   cuda  device memory, cuBLAS and a few kernels on one CUDA stream
 *         (nn/device_cuda.cu; only in builds with the CUDA toolkit, and
 *         asking for it elsewhere is a clear error). Its init takes the GPU
 *         local rank % GPUs (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or
 *         SLURM_LOCALID; 0 outside MPI) and reads STRATA_TF32=1 for TF32
 *         tensor-core sgemm (real runs set it from --tf32), as cpu reads
 *         OPENBLAS_NUM_THREADS and OMP_NUM_THREADS (oneDNN's).
 *
 * Conventions every backend keeps:
 *   - Matrices are row-major, float32. "(n, out)" is n rows of out floats.
 *   - Pointers to tensors are device pointers (from alloc); only `copy`
 *     crosses between host and device. For cpu the two are the same memory.
 *   - Compute functions return nothing: like CUDA work queued on a stream,
 *     they may run later, and a failure is reported by the next `sync`. On
 *     cpu they run at once, and only sgemm can fail (oneDNN returns a
 *     status: bad arguments, no memory), which `sync` then reports.
 *   - Gradients are SUMS over samples, never means (see softmax_xent): a
 *     microbatch's gradient, a rank's and a pushed one all add up to the
 *     global batch's by plain addition (all-reduce SUM, += across
 *     microbatches), and the one division by the number of samples happens
 *     in the update (sgd_momentum's g_scale = 1 / samples summed).
 *   - Sizes fit in int (cblas takes int dimensions); vector lengths are
 *     size_t. */
#ifndef STRATA_NN_DEVICE_H
#define STRATA_NN_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/err.h"

enum dev_act {
    DEV_ACT_IDENTITY,   /* y = x: the last layer (its logits go to softmax) */
    DEV_ACT_RELU,       /* y = max(x, 0), NaN kept (PyTorch's relu keeps it too) */
};

enum dev_copy {
    DEV_H2D,            /* host -> device */
    DEV_D2H,            /* device -> host */
    DEV_D2D,            /* device -> device */
};

/* Alignment of every alloc, in bytes: a cache line, and a whole AVX-512
 * vector, so that loops over a block never split one. */
#define DEV_ALIGN_BYTES 64

struct device {
    const char *name;   /* "cpu": what --device takes and what reports record */
    /* Are its pointers host pointers, that MPI and memcpy may use as they
     * are? cpu: yes; cuda: no, so MPI traffic is staged through host copies. */
    bool is_host_memory;

    /* Can this process use the device at all, before init and cheaply (no
     * context, nothing allocated)? cpu: always 0. cuda: ERR_INPUT "no CUDA
     * device: cudaGetDeviceCount says ..." on a machine without a GPU. */
    int (*probe)(struct err *e);

    /* Prepares the device for this process; call once at start-up, before
     * any other function. cpu: n_threads GEMM threads; n_threads 0 means 1
     * per process (one MPI rank per core: more would oversubscribe the
     * cores), unless OPENBLAS_NUM_THREADS (OMP_NUM_THREADS for oneDNN) is
     * set, in which case the library's own reading of it stands. 0 or
     * ERR_INPUT (n_threads < 0). */
    int (*init)(int n_threads, struct err *e);

    /* One line for reports: "cpu (oneDNN 2.6.3, avx512_core, 1 thread)",
     * "cpu (OpenBLAS 0.3.21, Haswell, 1 thread)": library, kernels, threads. */
    void (*describe)(char *buf, size_t n);

    /* Waits for queued work; returns 0 or the first failure since the last
     * sync (ERR_RUN, naming the call). */
    int (*sync)(struct err *e);

    /* ---- memory ------------------------------------------------------- */

    /* bytes of device memory, DEV_ALIGN_BYTES-aligned, contents undefined
     * (use fill). NULL and ERR_NOMEM when there is none. bytes 0 is allowed. */
    void *(*alloc)(size_t bytes, struct err *e);
    void (*free)(void *p);                        /* accepts NULL */
    /* bytes from src to dst (non-overlapping), in the direction kind says. */
    void (*copy)(void *dst, const void *src, size_t bytes, enum dev_copy kind);

    /* ---- vectors (n elements) ----------------------------------------- */

    void (*fill)(float *x, size_t n, float value);             /* x = value */
    void (*scale)(float *x, size_t n, float alpha);            /* x *= alpha */
    void (*axpy)(size_t n, float alpha, const float *x, float *y);  /* y += alpha x */

    /* ---- matrices ------------------------------------------------------ */

    /* The BLAS contract, row-major: C = alpha op(A) op(B) + beta C, with
     * op(A) (m, k), op(B) (k, n), C (m, n); op(X) = X or X^T as trans_x says;
     * lda, ldb, ldc are the row strides of A, B, C as stored. When beta is 0,
     * C is not read (NaN or garbage there does not leak into the result). */
    void (*sgemm)(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                  const float *a, int lda, const float *b, int ldb, float beta,
                  float *c, int ldc);

    /* ---- layers -------------------------------------------------------- */

    /* The bias and activation half of a dense layer, after its sgemm has put
     * x W into y:  y (n, out) = act(y + b), b (out) broadcast over rows. In
     * place, one pass (the matmul half is sgemm, so a backend may fuse both
     * when it can: cuBLASLt epilogues). */
    void (*bias_act_forward)(float *y, const float *b, int n, int out, enum dev_act act);

    /* Its backward: dy_out (n, out) = dy (n, out) * act'(y), with act' read
     * from the forward OUTPUT y (ReLU: 1 where y > 0, else 0); then
     * db (out) += column sums of dy_out (accumulates, as all gradients do).
     * dy_out may be dy (in place). */
    void (*bias_act_backward)(const float *dy, const float *y, int n, int out,
                              enum dev_act act, float *dy_out, float *db);

    /* Softmax cross-entropy over n rows of `classes` logits:
     *   *loss_sum (host) = sum_i -log softmax(logits_i)[labels_i]
     *   (written before the call returns, even where the rest runs later:
     *   a GPU waits for its sum; a failure is a NaN and the next sync's)
     *   dlogits (n, classes) = (softmax(logits_i) - onehot(labels_i)) * grad_scale
     * Normalisation: the loss is a SUM over the rows and grad_scale = 1 makes
     * dlogits the gradient of that sum, so a microbatch of n samples gives
     * exactly its share of the global batch's gradient and microbatches,
     * ranks and pushes combine by addition; whoever knows the global batch B
     * divides once (loss / B for the report, g_scale = 1/B in sgd_momentum).
     * A mean here (grad_scale = 1/n) would make every microbatch rescale by
     * n/B before summing, and an uneven split would get it wrong silently.
     * labels (device, n) must lie in [0, classes) (nn/data checks them on
     * load); cpu makes the loss NaN for one that does not, rather than read
     * out of bounds. Row maxima are subtracted first, so large logits do not
     * overflow. dlogits may not alias logits. */
    void (*softmax_xent)(const float *logits, const int32_t *labels, int n, int classes,
                         float grad_scale, float *dlogits, double *loss_sum);

    /* ---- optimizer ----------------------------------------------------- */

    /* SGD with momentum and weight decay, PyTorch's convention
     * (torch.optim.SGD, dampening 0, not Nesterov):
     *   g' = g_scale g + weight_decay w      (g_scale = 1 / samples summed in g)
     *   v  = momentum v + g'
     *   w -= lr v
     * over n elements. v starts at 0, so the first step sets v = g', as
     * PyTorch's first step does (its buffer starts as a copy of g'). Unlike
     * Sutskever et al. (2013) lr multiplies v, not g'. */
    void (*sgd_momentum)(float *w, float *v, const float *g, size_t n, float lr,
                         float momentum, float weight_decay, float g_scale);
};

/* A backend's table: its name and is_host_memory, then DEVICE_OPS(prefix),
 * which fills every function from the backend's own prefix_op (cpu_probe,
 * cpu_init, ...). A function a backend lacks is then a compile error, where
 * a line missed in a hand-written table would be a NULL found at run time.
 * In the fields' order, as C++ (which compiles the cuda table) wants its
 * designated initializers; a field added above is added here too. */
#define DEVICE_OPS(prefix)                                                                   \
    .probe = prefix##_probe, .init = prefix##_init, .describe = prefix##_describe,           \
    .sync = prefix##_sync,                                                                   \
    .alloc = prefix##_alloc, .free = prefix##_free, .copy = prefix##_copy,                   \
    .fill = prefix##_fill, .scale = prefix##_scale, .axpy = prefix##_axpy,                   \
    .sgemm = prefix##_sgemm,                                                                 \
    .bias_act_forward = prefix##_bias_act_forward,                                           \
    .bias_act_backward = prefix##_bias_act_backward,                                         \
    .softmax_xent = prefix##_softmax_xent,                                                   \
    .sgd_momentum = prefix##_sgd_momentum

/* The device called name: "cpu" in every build; "cuda" in builds with the
 * CUDA toolkit (whether or not this machine has a GPU: probe says). Anything
 * else is ERR_INPUT naming the devices this build has. The table is static
 * and const: never freed. */
const struct device *device_find(const char *name, struct err *e);

/* device_find, then the device's probe: what a launcher checks before it
 * starts ranks, so that a machine without a GPU says so once. 0 or ERR_INPUT. */
int device_check(const char *name, struct err *e);

/* The names of this build's devices, comma-separated ("cpu" or "cpu,cuda"),
 * for --help. */
const char *device_names(void);

#endif

/* The cpu device: host memory, sgemm from the library the build picked
 * (nn/gemm.h: oneDNN when built with it, else OpenBLAS), plain loops for
 * the rest. The loops are memory-bound and short (a layer's bias pass
 * touches n*out floats once, against the 2*n*in*out FLOPs of its sgemm),
 * but at batch 64, scalar, they took 40% as long as the GEMMs (perf, issue
 * 13): each is one pass, written with restrict pointers and selects rather
 * than branches so that the compiler vectorises it (this file is built at
 * -O3, see CMakeLists.txt). Everything runs at once on the calling
 * thread; the one thing that can fail after alloc is the GEMM library
 * (oneDNN returns a status), and sync reports the first such failure.
 *
 * Threads: one GEMM thread per process by default. strata runs one MPI rank
 * per core, and the libraries' default (a thread per core in every rank)
 * would put p ranks x p threads on p cores, which is slower than one each.
 * init's n_threads, or OPENBLAS_NUM_THREADS / OMP_NUM_THREADS in the
 * environment, say otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends.h"
#include "gemm.h"

/* The first GEMM failure since the last sync (0: none), and its library:
 * compute functions cannot return one (device.h), sync does. One process
 * runs one device, so this is the process's. */
static int gemm_failure;
static const struct gemm_lib *gemm_failed_lib;

/* The hot loops in three builds, picked at load time for this CPU (GCC's
 * function multi-versioning through an ifunc): the baseline x86-64 build
 * has only 16-byte SSE2 vectors. Elsewhere, one plain build. */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
#define CPU_WIDE_VECTORS __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CPU_WIDE_VECTORS
#endif

/* ---- set-up ------------------------------------------------------------ */

static int cpu_init(int n_threads, struct err *e)
{
    if (n_threads < 0)
        return err_set(e, ERR_INPUT, "cpu device: %d BLAS threads is not allowed "
                                     "(0 for the default of one per process, or 1 and up)",
                       n_threads);
    /* every library built, not only the default: tests and benchmarks
     * call the others (nn/gemm.h gemm_at) */
    for (int i = 0; i < gemm_count(); i++) gemm_at(i)->set_threads(n_threads);
    /* One small product in each transpose now: oneDNN generates its kernels
     * at its first call (about 40 ms here, far more under a sanitizer), and
     * a run must not time that as its first step's compute, which a
     * straggler's slow factor would then multiply. */
    float a[8 * 8] = {0}, b[8 * 8] = {0}, c[8 * 8];
    for (int i = 0; i < gemm_count(); i++)
        for (int t = 0; t < 4; t++)
            if (gemm_at(i)->sgemm(t & 1, t >> 1, 8, 8, 8, 1.0f, a, 8, b, 8, 0.0f, c, 8) != 0)
                return err_set(e, ERR_RUN, "cpu device: %s sgemm failed on an 8x8 product",
                               gemm_at(i)->name);
    return 0;
}

static void cpu_describe(char *buf, size_t n)
{
    const struct gemm_lib *g = gemm_default();
    char lib[96];
    g->describe(lib, sizeof lib);
    int threads = g->threads();
    snprintf(buf, n, "cpu (%s, %d thread%s)", lib, threads, threads == 1 ? "" : "s");
}

static int cpu_probe(struct err *e)
{
    (void)e;
    return 0;
}

static int cpu_sync(struct err *e)
{
    if (!gemm_failure) return 0;
    int status = gemm_failure;
    gemm_failure = 0;
    return err_set(e, ERR_RUN, "cpu device: %s sgemm failed: %s (status %d)",
                   gemm_failed_lib->name, gemm_failed_lib->status_name(status), status);
}

/* ---- memory ------------------------------------------------------------ */

static void *cpu_alloc(size_t bytes, struct err *e)
{
    /* aligned_alloc wants a multiple of the alignment (C11 7.22.3.1). */
    size_t rounded = (bytes + DEV_ALIGN_BYTES - 1) / DEV_ALIGN_BYTES * DEV_ALIGN_BYTES;
    if (rounded < bytes) rounded = 0;   /* overflow: fail below */
    void *p = rounded ? aligned_alloc(DEV_ALIGN_BYTES, rounded) : NULL;
    if (!p && bytes == 0) p = aligned_alloc(DEV_ALIGN_BYTES, DEV_ALIGN_BYTES);
    if (!p) err_set(e, ERR_NOMEM, "cpu device: out of memory allocating %zu bytes", bytes);
    return p;
}

static void cpu_free(void *p)
{
    free(p);
}

static void cpu_copy(void *dst, const void *src, size_t bytes, enum dev_copy kind)
{
    (void)kind;   /* host and device are one memory */
    if (bytes) memcpy(dst, src, bytes);
}

/* ---- vectors ----------------------------------------------------------- */

static void cpu_fill(float *x, size_t n, float value)
{
    /* zero (every step's gradients) is memset: all-zero bits are +0.0f */
    if (value == 0 && !signbit(value)) {
        memset(x, 0, n * sizeof *x);
        return;
    }
    for (size_t i = 0; i < n; i++) x[i] = value;
}

static void cpu_scale(float *x, size_t n, float alpha)
{
    for (size_t i = 0; i < n; i++) x[i] *= alpha;
}

static void cpu_axpy(size_t n, float alpha, const float *restrict x, float *restrict y)
{
    for (size_t i = 0; i < n; i++) y[i] += alpha * x[i];
}

/* ---- matrices ---------------------------------------------------------- */

static void cpu_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                      const float *a, int lda, const float *b, int ldb, float beta,
                      float *c, int ldc)
{
    const struct gemm_lib *g = gemm_default();
    int status = g->sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (status && !gemm_failure) {
        gemm_failure = status;
        gemm_failed_lib = g;
    }
}

/* ---- layers ------------------------------------------------------------ */

/* y (n, out) = act(y + b). `v < 0 ? 0 : v` rather than fmaxf so that a NaN
 * stays NaN: a diverging run should show it, not hide it behind zeros. */
CPU_WIDE_VECTORS
static void cpu_bias_act_forward(float *y, const float *b, int n, int out, enum dev_act act)
{
    for (int i = 0; i < n; i++) {
        float *restrict row = y + (size_t)i * out;
        const float *restrict bias = b;
        if (act == DEV_ACT_RELU) {
            for (int j = 0; j < out; j++) {
                float v = row[j] + bias[j];
                row[j] = v < 0 ? 0 : v;
            }
        } else {
            for (int j = 0; j < out; j++) row[j] += bias[j];
        }
    }
}

/* dy_out = dy * act'(y); db += column sums of dy_out, in one pass. Rows in
 * order, so the sums are the same for every run (and every split of the
 * rows into calls adds the same numbers, up to the order of the final
 * additions). dy_out may be dy: each element is read before it is written. */
CPU_WIDE_VECTORS
static void cpu_bias_act_backward(const float *dy, const float *y, int n, int out,
                                  enum dev_act act, float *dy_out, float *db)
{
    float *restrict sum = db;
    for (int i = 0; i < n; i++) {
        const float *g = dy + (size_t)i * out;
        const float *restrict yr = y + (size_t)i * out;
        float *d = dy_out + (size_t)i * out;
        if (act == DEV_ACT_RELU) {
            for (int j = 0; j < out; j++) {
                float gj = g[j];   /* read unconditionally: a select vectorises, a branch does not */
                float v = yr[j] > 0 ? gj : 0;
                d[j] = v;
                sum[j] += v;
            }
        } else {
            for (int j = 0; j < out; j++) {
                float v = g[j];
                d[j] = v;
                sum[j] += v;
            }
        }
    }
}

/* Per row: m = max logit; p_j = exp(l_j - m) / Z with Z = sum_j exp(l_j - m);
 * loss = log Z - (l_y - m), computed from the shifted logits so that neither
 * overflows. The loss sum is a double: a batch of 256 losses of ~2.3 loses
 * nothing to rounding. */
static void cpu_softmax_xent(const float *logits, const int32_t *labels, int n, int classes,
                             float grad_scale, float *dlogits, double *loss_sum)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        const float *l = logits + (size_t)i * classes;
        float *d = dlogits + (size_t)i * classes;
        int32_t y = labels[i];
        float m = l[0];
        for (int j = 1; j < classes; j++) m = l[j] > m ? l[j] : m;
        double z = 0;
        for (int j = 0; j < classes; j++) {
            d[j] = expf(l[j] - m);
            z += d[j];
        }
        float inv_z = (float)(1.0 / z);
        for (int j = 0; j < classes; j++) d[j] = d[j] * inv_z * grad_scale;
        if (y < 0 || y >= classes) {
            sum = NAN;   /* a label out of range: see softmax_xent in device.h */
            continue;
        }
        d[y] -= grad_scale;
        sum += log(z) - ((double)l[y] - m);
    }
    *loss_sum = sum;
}

/* ---- optimizer --------------------------------------------------------- */

CPU_WIDE_VECTORS
static void cpu_sgd_momentum(float *restrict w, float *restrict v, const float *restrict g,
                             size_t n, float lr, float momentum, float weight_decay,
                             float g_scale)
{
    for (size_t i = 0; i < n; i++) {
        float gi = g_scale * g[i] + weight_decay * w[i];
        v[i] = momentum * v[i] + gi;
        w[i] -= lr * v[i];
    }
}

const struct device device_cpu = {
    .name = "cpu",
    .is_host_memory = true,
    DEVICE_OPS(cpu),
};

/* The cuda device: device memory from cudaMalloc, cuBLAS for sgemm, a few
 * kernels for the rest, all queued on one stream of one GPU per process.
 *
 * Row-major on a column-major library: cuBLAS reads a row-major (m, n)
 * matrix with row stride ld as the column-major (n, m) matrix, its
 * transpose, with leading dimension ld. So C = op(A) op(B) is computed as
 * C^T = op(B)^T op(A)^T: cublasSgemm(op_b, op_a, n, m, k, B, ldb, A, lda, C,
 * ldc), with the operands swapped and the transposition flags as given.
 *
 * Failures: a compute function returns nothing (nn/device.h), so a failed
 * CUDA or cuBLAS call is noted, the first one since the last sync with the
 * call's text, file and line, and sync reports it. Calls that can return
 * an error (init, alloc, sync) return it at once.
 *
 * Arithmetic: the kernels compute what the cpu device's loops compute, and
 * CMake builds this file with --fmad=false so that no multiply-add is
 * fused: the element-wise results equal the cpu device's; exp and log are
 * CUDA's (within 2 ulp of glibc's). Sums are parallel, in a fixed tree
 * (a bias gradient's column sums, the loss over rows), so a run gives the
 * same bits every time but not the cpu's row-order sum (within ~1e-6
 * relative); cuBLAS adds a product's terms in its own order. With --tf32
 * the products round their inputs to TF32 (10-bit mantissa): ~3e-4
 * relative.
 *
 * Synchronisation: the host waits for the stream only where it reads what
 * the stream made (a copy to or from the host, the loss) and in sync;
 * everything else is queued (real/worker.c waits after a run of compute
 * ops, and the nccl comm orders itself after the stream with events).
 *
 * cuBLAS is opened at init (dlopen), not linked: loading libcublasLt costs
 * ~0.35 s and ~200 MB of resident memory in every process that links it,
 * which every strata command, test and cpu rank would pay for nothing.
 * STRATA_CUBLAS (CMake: the toolkit's libcublas.so.N) names it.
 *
 * The state below is the process's: one CUDA context per process, as
 * OpenBLAS keeps one thread pool. Not thread-safe, like the MLP above it. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "cuda_device.h"
#include "device.h"
}
#include "cuda_check.h"

static struct {
    bool is_ready;          /* init succeeded once */
    int ordinal, n_gpus;    /* the GPU in use, of how many */
    bool is_tf32;
    cudaStream_t stream;    /* every function's work, in order */
    cublasHandle_t blas;
    double *loss_blocks;    /* softmax_xent's per-block sums, [XENT_MAX_BLOCKS] */
    double *loss_dev;       /* softmax_xent's sum on the device ... */
    double *loss_host;      /* ... and in pinned host memory */
    struct err pending;     /* the first failure since the last sync */
} g;

/* The cuBLAS functions used, from dlopen: cublas.Sgemm is cublasSgemm. */
static struct {
    void *lib;
    decltype(&cublasCreate_v2) Create;
    decltype(&cublasSetStream_v2) SetStream;
    decltype(&cublasSetMathMode) SetMathMode;
    decltype(&cublasSgemm_v2) Sgemm;
    decltype(&cublasGetVersion_v2) GetVersion;
    decltype(&cublasGetStatusString) GetStatusString;
} cublas;

#ifndef STRATA_CUBLAS
#define STRATA_CUBLAS "libcublas.so"
#endif

static const char *blas_status(cublasStatus_t rc)
{
    return cublas.GetStatusString ? cublas.GetStatusString(rc) : "cuBLAS status";
}

/* Opens cuBLAS: the build's library by name ($LD_LIBRARY_PATH, the loader's
 * cache, the executable's run path), then the plain name. */
static int cublas_open(struct err *e)
{
    if (cublas.lib) return 0;
    const char *tried[] = {STRATA_CUBLAS, "libcublas.so"};
    void *lib = NULL;
    for (size_t i = 0; i < 2 && !lib; i++) lib = dlopen(tried[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return err_set(e, ERR_RUN, "cuda device: dlopen(\"%s\") failed: %s; HINT: add the CUDA "
                       "toolkit's lib64 to LD_LIBRARY_PATH", STRATA_CUBLAS, dlerror());
    const struct { const char *name; void **fn; } syms[] = {
        {"cublasCreate_v2", (void **)&cublas.Create},
        {"cublasSetStream_v2", (void **)&cublas.SetStream},
        {"cublasSetMathMode", (void **)&cublas.SetMathMode},
        {"cublasSgemm_v2", (void **)&cublas.Sgemm},
        {"cublasGetVersion_v2", (void **)&cublas.GetVersion},
        {"cublasGetStatusString", (void **)&cublas.GetStatusString},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].fn = dlsym(lib, syms[i].name))) {
            err_set(e, ERR_RUN, "cuda device: %s has no %s: %s", STRATA_CUBLAS, syms[i].name,
                    dlerror());
            memset(&cublas, 0, sizeof cublas);
            dlclose(lib);
            return e ? e->code : ERR_RUN;
        }
    cublas.lib = lib;
    return 0;
}

/* ---- errors ---------------------------------------------------------------- */

static void note(const char *what, const char *call, const char *file, int line)
{
    if (g.pending.code == 0)
        err_set(&g.pending, ERR_RUN, "cuda device: %s failed: %s (%s:%d)", call, what, file, line);
}

static bool note_cuda(cudaError_t rc, const char *call, const char *file, int line)
{
    if (rc == cudaSuccess) return true;
    note(cudaGetErrorString(rc), call, file, line);
    return false;
}

static bool note_blas(cublasStatus_t rc, const char *call, const char *file, int line)
{
    if (rc == CUBLAS_STATUS_SUCCESS) return true;
    note(blas_status(rc), call, file, line);
    return false;
}

static int fail_blas(struct err *e, cublasStatus_t rc, const char *call, const char *file,
                     int line)
{
    return err_set(e, ERR_RUN, "cuda device: %s failed: %s (%s:%d)", call, blas_status(rc), file,
                   line);
}

/* In functions that return nothing: note a failure for the next sync. */
#define CUDA_NOTE(call) note_cuda((call), #call, __FILE__, __LINE__)
#define BLAS_NOTE(call) note_blas((call), #call, __FILE__, __LINE__)
/* In functions that return an error: return it now (CUDA_TRY: nn/cuda_check.h). */
#define BLAS_TRY(e, call) TRY_CALL(e, cublasStatus_t, CUBLAS_STATUS_SUCCESS, fail_blas, call)
/* After a kernel launch: a bad configuration shows here, a fault at sync. */
#define LAUNCHED(kernel) note_cuda(cudaGetLastError(), #kernel "<<<...>>>", __FILE__, __LINE__)

/* ---- kernels ---------------------------------------------------------------- */

#define THREADS 256

/* Blocks for n elements at one per thread, capped: the kernels loop over
 * the rest (grid-stride), so any size_t n works. */
static unsigned blocks_for(size_t n)
{
    size_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

#define GRID_STRIDE(i, n)                                                       \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);     \
         i += (size_t)gridDim.x * blockDim.x)

__global__ void fill_kernel(float *x, size_t n, float value)
{
    GRID_STRIDE(i, n) x[i] = value;
}

__global__ void scale_kernel(float *x, size_t n, float alpha)
{
    GRID_STRIDE(i, n) x[i] *= alpha;
}

__global__ void axpy_kernel(size_t n, float alpha, const float *x, float *y)
{
    GRID_STRIDE(i, n) y[i] += alpha * x[i];
}

/* y (n, out) = act(y + b): `v < 0 ? 0 : v` keeps a NaN, as the cpu does. */
__global__ void bias_act_forward_kernel(float *y, const float *b, size_t total, int out,
                                        bool is_relu)
{
    GRID_STRIDE(i, total) {
        float v = y[i] + b[i % (size_t)out];
        y[i] = is_relu && v < 0 ? 0 : v;
    }
}

/* Column tiles: a block of 32 x 32 threads per 32 columns; thread (x, r)
 * takes column tile + x and rows r, r + 32, r + 64, ...: dy_out[i][j] =
 * dy[i][j] * act'(y[i][j]), and its partial sum. A warp (one r) reads 32
 * neighbouring columns of a row at once (128 bytes, coalesced). Then warp
 * c adds column c's 32 partials through shared memory in a fixed tree and
 * lane 0 adds that to db[j]: the same bits every run. Cost: n / 32 steps
 * per thread, out / 32 blocks of 1,024 threads (128 for 4,096 columns:
 * one per SM), where one thread per column walking all n rows kept 16
 * blocks busy. */
#define BACT_TILE 32

__global__ void bias_act_backward_kernel(const float *dy, const float *y, int n, int out,
                                         bool is_relu, float *dy_out, float *db)
{
    __shared__ float part[BACT_TILE][BACT_TILE + 1];   /* [r][x]; +1: no bank conflicts */
    const int x = threadIdx.x, r = threadIdx.y;
    const int j = blockIdx.x * BACT_TILE + x;
    float sum = 0;
    if (j < out)
        for (int i = r; i < n; i += BACT_TILE) {
            size_t at = (size_t)i * out + j;
            float d = is_relu ? (y[at] > 0 ? dy[at] : 0) : dy[at];
            dy_out[at] = d;
            sum += d;
        }
    part[r][x] = sum;
    __syncthreads();
    /* warp r now sums column tile + r: lane x holds row lane x's partial */
    float v = part[x][r];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    const int jr = blockIdx.x * BACT_TILE + r;
    if (x == 0 && jr < out) db[jr] += v;
}

/* Rows in parallel: a warp per row, XENT_WARPS rows per block, blocks
 * striding over the rows; a warp's lanes share its row's classes. Per row,
 * as the cpu: m = max logit, d_j = exp(l_j - m), z = sum_j d_j (double),
 * d_j = d_j * (1/z) * grad_scale, d_y -= grad_scale, loss = log z - (l_y -
 * m). Each warp sums its rows' losses in row order, thread 0 the warps' in
 * warp order into block_loss[block], and sum_blocks_kernel the blocks' in
 * block order: for one n the same grid and the same total every run. */
#define XENT_WARPS 8
#define XENT_MAX_BLOCKS 1024

__global__ void softmax_xent_kernel(const float *logits, const int32_t *labels, int n,
                                    int classes, float grad_scale, float *dlogits,
                                    double *block_loss)
{
    __shared__ double warp_sum[XENT_WARPS];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    double mine = 0;   /* lane 0's: this warp's rows so far */
    for (int i = blockIdx.x * XENT_WARPS + warp; i < n; i += gridDim.x * XENT_WARPS) {
        const float *l = logits + (size_t)i * classes;
        float *d = dlogits + (size_t)i * classes;
        float m = l[0];
        for (int j = lane; j < classes; j += 32) m = l[j] > m ? l[j] : m;
        for (int o = 16; o > 0; o /= 2) {
            float other = __shfl_xor_sync(0xffffffffu, m, o);
            m = other > m ? other : m;
        }
        double z = 0;
        for (int j = lane; j < classes; j += 32) {
            d[j] = expf(l[j] - m);
            z += d[j];
        }
        for (int o = 16; o > 0; o /= 2) z += __shfl_xor_sync(0xffffffffu, z, o);
        const int32_t y = labels[i];
        const float inv_z = (float)(1.0 / z);
        for (int j = lane; j < classes; j += 32) {
            float p = d[j] * inv_z * grad_scale;
            d[j] = j == y ? p - grad_scale : p;
        }
        if (lane == 0)
            mine += y < 0 || y >= classes ? (double)NAN : log(z) - ((double)l[y] - m);
    }
    if (lane == 0) warp_sum[warp] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        double sum = 0;
        for (int w = 0; w < XENT_WARPS; w++) sum += warp_sum[w];
        block_loss[blockIdx.x] = sum;
    }
}

/* One thread: at most XENT_MAX_BLOCKS independent loads and adds, a few
 * microseconds, against a tree's launch of its own. */
__global__ void sum_blocks_kernel(const double *block_loss, int n_blocks, double *loss)
{
    double sum = 0;
    for (int b = 0; b < n_blocks; b++) sum += block_loss[b];
    *loss = sum;
}

/* PyTorch's SGD with momentum (nn/device.h), element by element. */
__global__ void sgd_momentum_kernel(float *w, float *v, const float *g, size_t n, float lr,
                                    float momentum, float weight_decay, float g_scale)
{
    GRID_STRIDE(i, n) {
        float gi = g_scale * g[i] + weight_decay * w[i];
        v[i] = momentum * v[i] + gi;
        w[i] -= lr * v[i];
    }
}

/* ---- set-up ----------------------------------------------------------------- */

/* This process's rank on its machine, from the MPI launcher's environment:
 * Open MPI, MPICH/Hydra and Slurm's names; 0 outside an MPI job. */
static int local_rank(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return atoi(v) > 0 ? atoi(v) : 0;
    }
    return 0;
}

static int cuda_probe(struct err *e)
{
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess)
        return err_set(e, ERR_INPUT, "no CUDA device: cudaGetDeviceCount says %s (%s); use "
                       "--device cpu", cudaGetErrorString(rc), cudaGetErrorName(rc));
    if (n < 1)
        return err_set(e, ERR_INPUT, "no CUDA device: cudaGetDeviceCount says 0 GPUs; use "
                       "--device cpu");
    return 0;
}

/* STRATA_TF32: "1" for TF32 products, "0" or unset for FP32. */
static int read_tf32(bool *is_tf32, struct err *e)
{
    const char *v = getenv("STRATA_TF32");
    *is_tf32 = v && !strcmp(v, "1");
    if (v && *v && strcmp(v, "0") && strcmp(v, "1"))
        return err_set(e, ERR_INPUT, "cuda device: STRATA_TF32=%s (0 or 1; --tf32 sets it)", v);
    return 0;
}

/* The GPU local rank % GPUs, its stream, cuBLAS handle and the loss
 * buffers, once; every call (re)reads STRATA_TF32 and sets cuBLAS's math
 * mode from it. n_threads is the cpu's and must be >= 0. */
static int cuda_init(int n_threads, struct err *e)
{
    if (n_threads < 0)
        return err_set(e, ERR_INPUT, "cuda device: %d threads is not allowed (0 or more; the "
                       "GPU does not use them)", n_threads);
    bool is_tf32 = false;
    TRY(read_tf32(&is_tf32, e));
    if (!g.is_ready) {
        TRY(cuda_probe(e));
        CUDA_TRY(e, cudaGetDeviceCount(&g.n_gpus));
        g.ordinal = local_rank() % g.n_gpus;
        CUDA_TRY(e, cudaSetDevice(g.ordinal));
        TRY(cublas_open(e));
        CUDA_TRY(e, cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
        BLAS_TRY(e, cublas.Create(&g.blas));
        BLAS_TRY(e, cublas.SetStream(g.blas, g.stream));
        CUDA_TRY(e, cudaMalloc((void **)&g.loss_dev, sizeof *g.loss_dev));
        CUDA_TRY(e, cudaMalloc((void **)&g.loss_blocks, XENT_MAX_BLOCKS * sizeof *g.loss_blocks));
        CUDA_TRY(e, cudaMallocHost((void **)&g.loss_host, sizeof *g.loss_host));
        g.is_ready = true;
    }
    /* Default math is plain FP32 (no TF32 unless asked); TF32 tensor cores
     * round the inputs of each product to a 10-bit mantissa. */
    BLAS_TRY(e, cublas.SetMathMode(g.blas, is_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                   : CUBLAS_DEFAULT_MATH));
    g.is_tf32 = is_tf32;
    return 0;
}

static void cuda_describe(char *buf, size_t n)
{
    cudaDeviceProp prop;
    int runtime = 0, blas = 0;
    if (!g.is_ready || cudaGetDeviceProperties(&prop, g.ordinal) != cudaSuccess) {
        snprintf(buf, n, "cuda (not initialised)");
        return;
    }
    cudaRuntimeGetVersion(&runtime);
    cublas.GetVersion(g.blas, &blas);
    snprintf(buf, n, "cuda (%s, sm_%d%d, GPU %d of %d, CUDA %d.%d, cuBLAS %d, %s)", prop.name,
             prop.major, prop.minor, g.ordinal, g.n_gpus, runtime / 1000, runtime % 1000 / 10,
             blas, g.is_tf32 ? "TF32" : "FP32");
}

static int cuda_sync(struct err *e)
{
    CUDA_NOTE(cudaStreamSynchronize(g.stream));
    CUDA_NOTE(cudaGetLastError());
    if (g.pending.code == 0) return 0;
    int code = g.pending.code;
    if (e) *e = g.pending;
    memset(&g.pending, 0, sizeof g.pending);
    return code;
}

/* ---- memory ----------------------------------------------------------------- */

/* cudaMalloc aligns to 256 bytes at least, past DEV_ALIGN_BYTES; 0 bytes
 * get a real allocation too, so that NULL means failure only. */
static void *cuda_alloc(size_t bytes, struct err *e)
{
    void *p = NULL;
    cudaError_t rc = cudaMalloc(&p, bytes ? bytes : 1);
    if (rc != cudaSuccess) {
        cudaGetLastError();   /* an allocation failure is not sticky: clear it */
        err_set(e, ERR_NOMEM, "cuda device: cudaMalloc of %zu bytes failed: %s", bytes,
                cudaGetErrorString(rc));
        return NULL;
    }
    return p;
}

static void cuda_free(void *p)
{
    if (p) CUDA_NOTE(cudaFree(p));
}

/* In stream order; a copy from or to the host returns when it is done, so
 * the host may reuse or read its buffer at once. */
static void cuda_copy(void *dst, const void *src, size_t bytes, enum dev_copy kind)
{
    if (!bytes) return;
    cudaMemcpyKind k = kind == DEV_H2D   ? cudaMemcpyHostToDevice
                       : kind == DEV_D2H ? cudaMemcpyDeviceToHost
                                         : cudaMemcpyDeviceToDevice;
    if (CUDA_NOTE(cudaMemcpyAsync(dst, src, bytes, k, g.stream)) && kind != DEV_D2D)
        CUDA_NOTE(cudaStreamSynchronize(g.stream));
}

/* ---- vectors ---------------------------------------------------------------- */

static void cuda_fill(float *x, size_t n, float value)
{
    if (!n) return;
    fill_kernel<<<blocks_for(n), THREADS, 0, g.stream>>>(x, n, value);
    LAUNCHED(fill_kernel);
}

static void cuda_scale(float *x, size_t n, float alpha)
{
    if (!n) return;
    scale_kernel<<<blocks_for(n), THREADS, 0, g.stream>>>(x, n, alpha);
    LAUNCHED(scale_kernel);
}

static void cuda_axpy(size_t n, float alpha, const float *x, float *y)
{
    if (!n) return;
    axpy_kernel<<<blocks_for(n), THREADS, 0, g.stream>>>(n, alpha, x, y);
    LAUNCHED(axpy_kernel);
}

/* ---- matrices --------------------------------------------------------------- */

static void cuda_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta, float *c,
                       int ldc)
{
    /* C^T (n, m) = op(B)^T (n, k) op(A)^T (k, m), column-major: see the top */
    BLAS_NOTE(cublas.Sgemm(g.blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                           trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b, ldb, a, lda,
                           &beta, c, ldc));
}

/* ---- layers ----------------------------------------------------------------- */

static void cuda_bias_act_forward(float *y, const float *b, int n, int out, enum dev_act act)
{
    size_t total = (size_t)n * (size_t)out;
    if (!total) return;
    bias_act_forward_kernel<<<blocks_for(total), THREADS, 0, g.stream>>>(y, b, total, out,
                                                                         act == DEV_ACT_RELU);
    LAUNCHED(bias_act_forward_kernel);
}

static void cuda_bias_act_backward(const float *dy, const float *y, int n, int out,
                                   enum dev_act act, float *dy_out, float *db)
{
    if (n < 1 || out < 1) return;
    const dim3 threads(BACT_TILE, BACT_TILE);
    bias_act_backward_kernel<<<(out + BACT_TILE - 1) / BACT_TILE, threads, 0, g.stream>>>(
        dy, y, n, out, act == DEV_ACT_RELU, dy_out, db);
    LAUNCHED(bias_act_backward_kernel);
}

/* The loss sum is the host's at return (nn/device.h): a host read, so
 * this waits for the stream. */
static void cuda_softmax_xent(const float *logits, const int32_t *labels, int n, int classes,
                              float grad_scale, float *dlogits, double *loss_sum)
{
    *loss_sum = NAN;
    if (n < 1 || classes < 1) {
        *loss_sum = 0;
        return;
    }
    int rows_per_block = XENT_WARPS, n_blocks = (n + rows_per_block - 1) / rows_per_block;
    if (n_blocks > XENT_MAX_BLOCKS) n_blocks = XENT_MAX_BLOCKS;
    softmax_xent_kernel<<<n_blocks, XENT_WARPS * 32, 0, g.stream>>>(
        logits, labels, n, classes, grad_scale, dlogits, g.loss_blocks);
    if (!LAUNCHED(softmax_xent_kernel)) return;
    sum_blocks_kernel<<<1, 1, 0, g.stream>>>(g.loss_blocks, n_blocks, g.loss_dev);
    if (!LAUNCHED(sum_blocks_kernel) ||
        !CUDA_NOTE(cudaMemcpyAsync(g.loss_host, g.loss_dev, sizeof *g.loss_dev,
                                   cudaMemcpyDeviceToHost, g.stream)) ||
        !CUDA_NOTE(cudaStreamSynchronize(g.stream)))
        return;
    *loss_sum = *g.loss_host;
}

/* ---- optimizer -------------------------------------------------------------- */

static void cuda_sgd_momentum(float *w, float *v, const float *grad, size_t n, float lr,
                              float momentum, float weight_decay, float g_scale)
{
    if (!n) return;
    sgd_momentum_kernel<<<blocks_for(n), THREADS, 0, g.stream>>>(w, v, grad, n, lr, momentum,
                                                                 weight_decay, g_scale);
    LAUNCHED(sgd_momentum_kernel);
}

/* ---- the table and what comm_nccl borrows ----------------------------------- */

extern "C" const struct device device_cuda = {
    .name = "cuda",
    .is_host_memory = false,
    DEVICE_OPS(cuda),
};

extern "C" int dev_cuda_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" void *dev_cuda_stream(void)
{
    return (void *)g.stream;
}

extern "C" void dev_cuda_bus_id(char *buf, size_t n)
{
    if (n == 0) return;
    buf[0] = '\0';
    if (g.is_ready && cudaDeviceGetPCIBusId(buf, (int)n, g.ordinal) != cudaSuccess) buf[0] = '\0';
}

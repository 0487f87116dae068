/* oneDNN's dnnl_sgemm as a gemm_lib (nn/gemm.h), in builds made with
 * libdnnl (CMake STRATA_DNNL). It picks its kernels from the CPU at run
 * time (AVX-512 where there is, AVX2 below) and threads with OpenMP.
 *
 * Threads: an OpenMP thread count is a per-thread setting (each thread's
 * nthreads-var), so a thread other than the one init ran on would start
 * from OMP_NUM_THREADS or all cores. sgemm therefore checks the calling
 * thread's count against the wanted one (omp_get_max_threads is a read of
 * that setting) and sets it when they differ. */
#include <stdio.h>
#include <stdlib.h>

#include <dnnl.h>
#include <omp.h>

#include "backends.h"

/* This file's functions are onednn_*, the prefix GEMM_LIB_OPS fills the
 * table from: dnnl_* is the library's own (dnnl_sgemm, which onednn_sgemm
 * calls). */

/* The threads one sgemm runs on; 0 before set_threads, and then whatever
 * OpenMP says. Written once at the device's init, before any sgemm. */
static int wanted_threads;

static void onednn_set_threads(int n_threads)
{
    if (n_threads > 0) wanted_threads = n_threads;
    else wanted_threads = getenv("OMP_NUM_THREADS") ? 0 : 1;
    if (wanted_threads > 0) omp_set_num_threads(wanted_threads);
}

static int onednn_threads(void)
{
    return omp_get_max_threads();
}

static const char *isa_name(dnnl_cpu_isa_t isa)
{
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "isa unknown";
    }
}

/* "oneDNN 2.6.3, avx512_core_bf16": the version of the library loaded (not
 * of the header built against) and the widest instruction set it uses here. */
static void onednn_describe(char *buf, size_t n)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, n, "oneDNN %d.%d.%d, %s", v->major, v->minor, v->patch,
             isa_name(dnnl_get_effective_cpu_isa()));
}

static const char *onednn_status_name(int status)
{
    switch ((dnnl_status_t)status) {
    case dnnl_out_of_memory: return "out of memory";
    case dnnl_invalid_arguments: return "invalid arguments";
    case dnnl_unimplemented: return "unimplemented";
    case dnnl_runtime_error: return "runtime error";
    default: return "error";
    }
}

static int onednn_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c,
                        int ldc)
{
    if (wanted_threads > 0 && omp_get_max_threads() != wanted_threads)
        omp_set_num_threads(wanted_threads);
    /* dnnl_sgemm is row-major already (unlike BLAS's column-major sgemm) */
    dnnl_status_t s = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a,
                                 lda, b, ldb, beta, c, ldc);
    return s == dnnl_success ? 0 : (int)s;
}

const struct gemm_lib gemm_dnnl = {
    .name = "oneDNN",
    GEMM_LIB_OPS(onednn),
};

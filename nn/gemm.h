/* The cpu device's SGEMM libraries, behind one small table (as the devices
 * are, nn/device.h): OpenBLAS in every build, oneDNN's dnnl_sgemm in builds
 * made with it (CMake STRATA_DNNL=AUTO finds Debian's libdnnl-dev). The
 * build picks which one the cpu device uses (gemm_default); tests reach
 * every one that is built (gemm_count, gemm_at) to hold them against a
 * reference.
 *
 * Chosen by measurement (one thread, this project's MLP shapes; the
 * numbers are in docs/performance.md, "Against PyTorch, and the GEMM library"): oneDNN
 * 2.6 runs the wide layers' shapes 10-25% faster than OpenBLAS (its AVX-512
 * kernels or, where OPENBLAS_CORETYPE pins it, its Haswell ones); OpenBLAS's
 * AVX-512 kernels win on the narrow 10-class layer, under 1% of a step's
 * FLOPs, so a build with oneDNN uses it for every shape. */
#ifndef STRATA_NN_GEMM_H
#define STRATA_NN_GEMM_H

#include <stdbool.h>
#include <stddef.h>

struct gemm_lib {
    const char *name;   /* "OpenBLAS", "oneDNN" */
    /* Threads for the library's own parallel loops: n_threads >= 1 sets
     * them; 0 means one per process unless the library's environment
     * variable (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS) says otherwise. */
    void (*set_threads)(int n_threads);
    int (*threads)(void);   /* the threads one call runs on */
    /* "OpenBLAS 0.3.21, Haswell" / "oneDNN 2.6.3, avx512_core": version and
     * the kernels chosen for this CPU, for the device's describe line. */
    void (*describe)(char *buf, size_t n);
    /* What a nonzero status of sgemm means, for a message. */
    const char *(*status_name)(int status);
    /* device.h's sgemm contract: row-major C = alpha op(A) op(B) + beta C,
     * C not read when beta is 0. Returns 0, or the library's own nonzero
     * status (oneDNN reports one for arguments it rejects or memory it
     * cannot get; OpenBLAS has none to report and returns 0). */
    int (*sgemm)(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                  const float *a, int lda, const float *b, int ldb, float beta, float *c,
                  int ldc);
};

/* A library's table: its name, then GEMM_LIB_OPS(prefix), which fills every
 * function from the library's own prefix_op (openblas_sgemm, ...), so that
 * one it lacks is a compile error rather than a NULL (as nn/device.h's
 * DEVICE_OPS). A field added above is added here too. */
#define GEMM_LIB_OPS(prefix)                                                                 \
    .set_threads = prefix##_set_threads, .threads = prefix##_threads,                        \
    .describe = prefix##_describe, .status_name = prefix##_status_name,                      \
    .sgemm = prefix##_sgemm

/* The library the cpu device uses: oneDNN when built with it, else OpenBLAS. */
const struct gemm_lib *gemm_default(void);

/* Every library this build has, the default first: i in [0, gemm_count()). */
int gemm_count(void);
const struct gemm_lib *gemm_at(int i);

#endif

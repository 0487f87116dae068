/* GPU readiness that can be proved without a GPU (issue 20):
 *
 *   - nn/cuda_poll.h: an unfinished event poll leaves no error behind for
 *     the cuda device's next launch check. The runtime is stood in for by
 *     a stub of its error state: on a machine without a driver every CUDA
 *     event call fails (cudaErrorInsufficientDriver or NoDevice) before an
 *     event exists, so a real cudaErrorNotReady cannot be made here; the
 *     GPU run of test_cuda's nccl cases exercises the real one.
 *   - real/nccl_lib.h: NCCL is loaded when asked for, not linked, so the
 *     binary starts without libnccl.so.2, and asking for --comm nccl where
 *     it cannot load says what is missing (exit 2, before any MPI job).
 *
 * Builds without CUDA or NCCL skip what they lack, saying so. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "../real/comm.h"
#ifdef STRATA_HAVE_CUDA
#include "../nn/cuda_poll.h"
#endif
#ifdef STRATA_HAVE_NCCL
#include "../real/nccl_lib.h"
#endif

/* ---- the poll and the runtime's last error ---------------------------------- */

#ifdef STRATA_HAVE_CUDA
/* The runtime's error state, as cudaGetLastError sees it: set by a failing
 * call (cudaEventQuery's cudaErrorNotReady among them), read and cleared
 * by cudaGetLastError. */
static cudaError_t stub_last = cudaSuccess;
static cudaError_t stub_answer = cudaSuccess;   /* what the next query returns */
static int stub_queries;

static cudaError_t stub_query(cudaEvent_t ev)
{
    (void)ev;
    stub_queries++;
    if (stub_answer != cudaSuccess) stub_last = stub_answer;
    return stub_answer;
}

static cudaError_t stub_get_last_error(void)
{
    cudaError_t was = stub_last;
    stub_last = cudaSuccess;
    return was;
}

static const struct cuda_poll_rt stub = {stub_query, stub_get_last_error};

Test(cuda_poll, not_ready_is_an_answer_and_leaves_no_error_for_the_next_launch_check)
{
    stub_answer = cudaErrorNotReady;
    cr_expect_eq(cuda_event_poll_with(&stub, NULL), cudaErrorNotReady);
    cr_expect_eq(stub_queries, 1);
    /* what nn/device_cuda.cu's LAUNCHED reads after the next kernel */
    cr_expect_eq(stub_get_last_error(), cudaSuccess,
                 "the poll left cudaErrorNotReady as the last error: the next launch check "
                 "would report it");
}

Test(cuda_poll, done_is_success_and_a_real_failure_stays_for_the_checks)
{
    stub_answer = cudaSuccess;
    cr_expect_eq(cuda_event_poll_with(&stub, NULL), cudaSuccess);
    stub_answer = cudaErrorLaunchFailure;
    cr_expect_eq(cuda_event_poll_with(&stub, NULL), cudaErrorLaunchFailure);
    cr_expect_eq(stub_get_last_error(), cudaErrorLaunchFailure,
                 "a failure must not be cleared by the poll");
}
#else
Test(cuda_poll, needs_cuda)
{
    cr_skip_test("this build has no CUDA (-DSTRATA_CUDA=OFF or no toolkit)");
}
#endif

/* ---- NCCL loaded on demand ---------------------------------------------------- */

/* Does the binary name libnccl among the libraries it needs? ldd's listing. */
static int nccl_lines_in_ldd(const char *bin)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ldd '%s' 2>&1", bin);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f, "popen(%s)", cmd);
    char line[1024];
    int n_lines = 0, n_nccl = 0;
    while (fgets(line, sizeof line, f)) {
        n_lines++;
        n_nccl += strstr(line, "libnccl") != NULL;
    }
    int status = pclose(f);
    cr_assert_eq(status, 0, "ldd %s failed (%d lines)", bin, n_lines);
    cr_assert_gt(n_lines, 2, "ldd listed %d libraries: is %s dynamic?", n_lines, bin);
    return n_nccl;
}

Test(nccl_lib, the_binary_does_not_link_nccl)
{
    cr_expect_eq(nccl_lines_in_ldd(STRATA_BIN), 0,
                 "strata links libnccl: it would not start where NCCL is missing");
}

Test(nccl_lib, comm_check_knows_the_comms_of_this_build)
{
    struct err e = {0};
    cr_expect_eq(comm_check("auto", &e), 0, "%s", e.msg);
    cr_expect_eq(comm_check("mpi", &e), 0, "%s", e.msg);
    cr_expect_eq(comm_check("gloo", &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "'gloo' is not available"), "%s", e.msg);
}

/* `strata real --comm nccl` where NCCL cannot load: exit 2 naming what is
 * missing, from the launcher (no mpirun). A build without NCCL says it
 * has none, the same way. */
Test(nccl_lib, strata_real_comm_nccl_without_nccl_is_bad_input_naming_it, .timeout = 60)
{
    setenv("STRATA_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
    const char *argv[] = {STRATA_BIN, "real", "--device", "cpu", "--comm", "nccl", "--np", "1",
                          "--steps", "2", "--data", "synthetic", NULL};
    struct run r = run_argv(argv);
    cr_expect_eq(r.status, 2, "exit %d; stderr:\n%s", r.status, r.err);
#ifdef STRATA_HAVE_NCCL
    cr_expect_not_null(strstr(r.err, "cannot load NCCL"), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "/nonexistent/libnccl.so.2"), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "--comm mpi"), "the fix should be named: %s", r.err);
#else
    cr_expect_not_null(strstr(r.err, "this build has: mpi"), "%s", r.err);
#endif
    cr_expect_null(strstr(r.err, "mpirun"), "the launcher should stop before mpirun:\n%s", r.err);
    run_free(&r);
}

#ifdef STRATA_HAVE_NCCL
Test(nccl_lib, a_missing_library_is_bad_input_with_a_hint)
{
    setenv("STRATA_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
    struct err e = {0};
    cr_expect_eq(nccl_lib_open(&e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "dlopen(\"/nonexistent/libnccl.so.2\") failed"), "%s",
                       e.msg);
    cr_expect_not_null(strstr(e.msg, "HINT"), "%s", e.msg);
    cr_expect_null(nccl_lib.handle, "nothing half-open");
    char line[128];
    nccl_lib_describe(line, sizeof line);
    cr_expect_str_eq(line, "NCCL (not loaded)");
    cr_expect_eq(comm_check("nccl", &e), ERR_INPUT);
}

Test(nccl_lib, a_library_that_is_not_nccl_names_the_missing_function)
{
    setenv("STRATA_NCCL_LIB", "libz.so.1", 1);   /* every build links zlib */
    struct err e = {0};
    cr_expect_eq(nccl_lib_open(&e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "libz.so.1 has no ncclGetVersion"), "%s", e.msg);
    cr_expect_null(nccl_lib.handle);
}

/* The toolkit here has NCCL (CMake found it to build this): it loads, with
 * every function, and says its version. No GPU is needed for that. */
Test(nccl_lib, the_builds_nccl_loads_and_says_its_version)
{
    unsetenv("STRATA_NCCL_LIB");
    struct err e = {0};
    int rc = nccl_lib_open(&e);
    if (rc < 0) cr_skip_test("NCCL is not on this machine's library path: %s", e.msg);
    cr_expect_not_null(nccl_lib.AllReduce);
    cr_expect_not_null(nccl_lib.CommInitRank);
    char line[128];
    nccl_lib_describe(line, sizeof line);
    cr_log_info("%s", line);
    cr_expect_eq(strncmp(line, "NCCL 2.", 7), 0, "%s", line);
    cr_expect_eq(nccl_lib_open(&e), 0, "a second open is a no-op");
}
#endif

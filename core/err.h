/* Errors are values: functions that can fail return 0 or a negative ERR_*
 * code and fill the caller's struct err with a message for people.
 * Only main() turns a code into an exit status (err_exit_status). */
#ifndef STRATA_ERR_H
#define STRATA_ERR_H

#include <stddef.h>

enum {
    ERR_OK = 0,
    ERR_RUN = -1,     /* a run failed (exit 1) */
    ERR_INPUT = -2,   /* bad input from the user: option, file, model (exit 2) */
    ERR_NOMEM = -3,   /* out of memory (exit 1) */
    ERR_IO = -4,      /* a file could not be read or written (exit 1) */
};

#define ERR_MSG_BYTES 1024

struct err {
    int code;                  /* the last ERR_* set, ERR_OK when none */
    char msg[ERR_MSG_BYTES];   /* "--devices: 0 is not allowed (1 to 1048576)" */
};

/* Records code and a printf-style message; returns code so that callers can
 * write `return err_set(e, ERR_INPUT, "...")`. e may be NULL. Control
 * characters in the message (from what users typed or files hold) are
 * written escaped, "\x1b", "\n": a message never drives the terminal. The
 * arguments may point into e->msg. */
int err_set(struct err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "context: " to the message already in e, the way a short stack
 * reads ("scenario.conf:3: --devices: ..."), escaped as err_set's. Returns
 * e->code. */
int err_prefix(struct err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* text into out[0..n), its control characters escaped as err_set's, for
 * notes that quote a value as typed; returns the bytes written. */
size_t err_escape(char *out, size_t n, const char *text);

/* ERR_OK -> 0, ERR_INPUT -> 2, anything else -> 1. */
int err_exit_status(int code);

/* Passes a failure up unchanged. */
#define TRY(expr)                      \
    do {                               \
        int try_rc_ = (expr);          \
        if (try_rc_ < 0) return try_rc_; \
    } while (0)

/* Passes a failure up, adding the caller's frame to the message. */
#define TRY_CTX(e, expr, ...)                  \
    do {                                       \
        int try_rc_ = (expr);                  \
        if (try_rc_ < 0) {                     \
            err_prefix((e), __VA_ARGS__);      \
            return try_rc_;                    \
        }                                      \
    } while (0)

/* A library call checked: runs call, whose status has type T; when that is
 * not ok, returns fail(e, status, "call", __FILE__, __LINE__), which says
 * what failed and returns an ERR_* code. The one shape behind each
 * library's checking macro (MPI_TRY in real/mpi_check.h, CUDA_TRY in
 * nn/cuda_check.h, NCCL_TRY, BLAS_TRY), as nccl-tests' MPICHECK and
 * CUDACHECK. */
#define TRY_CALL(e, T, ok, fail, call)                                    \
    do {                                                                  \
        T try_call_rc_ = (call);                                          \
        if (try_call_rc_ != (ok))                                         \
            return fail((e), try_call_rc_, #call, __FILE__, __LINE__);    \
    } while (0)

/* Checked allocation: returns NULL and sets ERR_NOMEM naming the caller's
 * file and line. Tests can make the Nth one fail (core/faults.h: alloc). */
#define XCALLOC(e, n, size) err_calloc_((e), (n), (size), __FILE__, __LINE__)
void *err_calloc_(struct err *e, size_t n, size_t size, const char *file, int line);

#endif

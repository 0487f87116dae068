/* What the test files share: running the strata binary (or any program) with
 * its output captured, files and temporary directories, JSON reports read
 * back, the CPU device, a workload parsed or the test fails, and a seeded
 * random stream. Compiled once (tests/helpers.c) into every test executable;
 * every function fails the calling test, with a message, when it cannot do
 * its job, so a test reads as its checks. */
#ifndef STRATA_TESTS_HELPERS_H
#define STRATA_TESTS_HELPERS_H

#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct strategy;

struct config;
struct device;
struct plan;
struct workload;

/* ---- running a program ---------------------------------------------------- */

/* One finished run of a program. */
struct run {
    int status;      /* exit status, or -1 when killed by a signal */
    char *out, *err; /* whole stdout and stderr (run_free frees them) */
};

/* Runs argv (NULL-terminated; argv[0] looked up in PATH), stdout and stderr
 * into temporary files that are read back and removed. */
struct run run_argv(const char *const *argv);

/* Runs the built strata (STRATA_BIN) with args (NULL-terminated, without
 * argv[0]). */
struct run run_strata(const char *const *args);

/* Sets the environment a test's own `mpirun --oversubscribe` needs (strata
 * sets it itself only when it launches): leave to run as root when the
 * test is root, and what sanitizer builds give the ranks they start. */
void mpirun_env_prepare(void);

void run_free(struct run *r);

/* Runs argv as run_argv does; the test fails, showing stderr, unless it
 * exits 0. */
void run_argv_ok(const char *const *argv);

/* r exited 0, or the test fails naming `what` and showing stderr. Frees r. */
void expect_ok(struct run r, const char *what);

/* r exited 0 and its stdout holds `text` (is_said) or does not; else the
 * test fails showing both streams. Frees r. */
void expect_ok_saying(struct run r, const char *text, bool is_said);

/* RUN("sim", "--steps", "4"): run_strata on a literal argument list. */
#define RUN(...) run_strata((const char *const[]){__VA_ARGS__, NULL})

/* Bad input: exit 2, and stderr names must_name (and must_name_too, unless
 * NULL). Frees r. */
void expect_refused(struct run r, const char *must_name, const char *must_name_too);

/* ---- a command's whole output, for -j against -j 1 ------------------------ */

/* What one run of a command gave: exit status, stdout, stderr, and its
 * --json and --csv files (NULL when not asked for or not written). */
struct job_outputs {
    int status;
    char *out, *err, *json, *csv;
};

void job_outputs_free(struct job_outputs *o);

/* Runs prefix (NULL, or mpirun ... NULL-terminated) strata COMMAND args
 * (NULL-terminated), with -j jobs unless jobs is 0, and with_files:
 * --json and --csv into the test's directory (TEST_SUITE_WITH_TMP_DIR)
 * under tag. */
struct job_outputs run_with_jobs(const char *const *prefix, const char *command,
                                 const char *const *args, int jobs, const char *tag,
                                 bool with_files);

/* a and b agree on everything (status, stdout, stderr, both files, or
 * neither written); what says which runs they are. */
void expect_same_outputs(const struct job_outputs *a, const struct job_outputs *b,
                         const char *what);

/* strata COMMAND args (NULL-terminated) with -j 1, then -j 2 and -j 3 (as
 * run_with_jobs, with_files too): -j 1 exits status, or the test stops;
 * the others give what -j 1 gave (expect_same_outputs). -j 1's outputs are
 * left in *one (job_outputs_free them). */
void expect_jobs_agree_with_one(const char *command, const char *const *args, int status,
                                bool with_files, struct job_outputs *one);

/* A small run with --numerics (real arithmetic on the synthetic data): its
 * loss and accuracy are what a command's -j N must report as -j 1 does. */
#define SMALL_NUMERICS_RUN                                                                  \
    "--numerics", "--data", "synthetic", "--model", "mlp:784-16-10", "--steps", "6", "--batch", "32"

/* ---- files ---------------------------------------------------------------- */

/* The bytes of path, NUL-terminated (caller frees); their count in *n when n
 * is not NULL. Fails the test when the file cannot be read. */
char *test_slurp_n(const char *path, size_t *n);
char *test_slurp(const char *path);

/* Whether /proc/PID/WHAT ("environ", "cmdline": entries ending in NUL) holds
 * an entry equal to `entry` (or, with is_prefix, starting with it); the rest
 * of the first such entry into rest[0..n) unless rest is NULL. false when the
 * process is gone. Reads the first 64 KiB. */
bool test_proc_has(long pid, const char *what, const char *entry, bool is_prefix, char *rest,
                   size_t n);

/* Seconds of CLOCK_MONOTONIC, and a sleep of s seconds. */
double test_now_s(void);
void test_sleep_s(double s);

/* A program run in the background: stdout to /dev/null, stderr to err_path. */
struct test_bg {
    pid_t pid;
    char err_path[256];
};

/* Starts argv[0] (NULL-ended argv) with stderr into err_path; asserts it started. */
struct test_bg test_bg_start(const char *const *argv, const char *err_path);

/* Waits for b's end, at most limit_s (then kills it and fails the test); its
 * exit status (128 + signal when killed), the wait into *took_s unless NULL. */
int test_bg_finish(const struct test_bg *b, double limit_s, double *took_s);

/* Makes a fresh directory /tmp/strata-test-WHAT-XXXXXX into dir (capacity n). */
void test_make_dir(char *dir, size_t n, const char *what);

/* Removes dir and everything in it. */
void test_remove_dir(const char *dir);

/* A suite whose every test gets a fresh directory in test_tmp_dir, removed
 * after it, with PATH put back first (a test may change it; the removal runs
 * rm through the shell): TEST_SUITE_WITH_TMP_DIR(cluster) makes
 * /tmp/strata-test-cluster-*; more suite options may follow the name
 * (TEST_SUITE_WITH_TMP_DIR(real, .timeout = 120)). A test of another suite
 * may borrow the directory: .init = real_make_tmp_dir, .fini = test_tmp_dir_remove. */
extern char test_tmp_dir[64];
void test_tmp_dir_make(const char *what);
void test_tmp_dir_remove(void);
#define TEST_SUITE_WITH_TMP_DIR(...) TEST_SUITE_WITH_TMP_DIR_(__VA_ARGS__, )
#define TEST_SUITE_WITH_TMP_DIR_(suite, ...)                                             \
    static void suite##_make_tmp_dir(void) { test_tmp_dir_make(#suite); }                \
    TestSuite(suite, __VA_ARGS__ .init = suite##_make_tmp_dir, .fini = test_tmp_dir_remove)

/* test_tmp_dir/name, in static storage that the eighth call after this one
 * reuses (so a test may hold a few paths at once). */
char *test_tmp_path(const char *name);

/* Writes text to test_tmp_dir/name and returns its path (as test_tmp_path). */
const char *test_tmp_file(const char *name, const char *text);

/* A trace written by hand: its file, open, and whether a span is in it yet. */
struct test_trace {
    FILE *f;
    const char *path; /* as test_tmp_path */
    bool has_spans;
};

/* Creates test_tmp_dir/name for a trace written by hand and writes its
 * opening, {"traceEvents":[ (the spans and the closing are the caller's:
 * test_trace_span, and fprintf into .f). Fails the test when it cannot. */
struct test_trace test_trace_begin(const char *name);

/* Writes one span ("ph":"X") into t: op `op` of `step` on rank (its pid),
 * stream tid (0 compute, 1 comm), its layers and microbatch mb, from ts_ms
 * for dur_ms, then extra args (",\"key\":value..." or ""); after a comma
 * unless it is the first. */
void test_trace_span(struct test_trace *t, const char *name, int rank, int tid, int step, int op,
                     const char *layers, int mb, double ts_ms, double dur_ms, const char *extra);

/* What a printer writes, caught in memory: test_capture_open gives the FILE
 * to print into (fails the test when it cannot make one); test_capture_close
 * closes it and returns what was written, NUL-terminated (caller frees). */
struct test_capture {
    FILE *f;
    char *text;
    size_t len;
};
FILE *test_capture_open(struct test_capture *c);
char *test_capture_close(struct test_capture *c);

/* ---- JSON ----------------------------------------------------------------- */

/* The JSON document in path (caller deletes); fails the test when it is not
 * JSON. */
cJSON *read_json(const char *path);

/* The number at obj.a (or obj.a.b when b is not NULL); fails the test when
 * there is none. */
double num_at(const cJSON *obj, const char *a, const char *b);

/* The string at obj.key; fails the test when there is none. */
const char *str_at(const cJSON *obj, const char *key);

/* A report's curve obj.key ("loss_curve", "accuracy_curve") as [step,
 * time_s, value] triples into out (at most cap); how many it has. A null
 * (a diverged loss) fails the test. */
int curve_at(const cJSON *obj, const char *key, double out[][3], int cap);

/* ---- fixtures ------------------------------------------------------------- */

/* The CPU device, initialised with init_arg (its thread count; 0 = all). */
const struct device *test_cpu(int init_arg);

/* spec parsed (workload_free it), or the test fails naming the error. */
struct workload *test_workload(const char *spec);

/* A suite whose every test finds `spec` parsed in the static `var`, freed
 * after it: TEST_SUITE_WITH_WORKLOAD(check, wl, "mlp:784-10") (in a file that
 * includes core/workload.h). */
#define TEST_SUITE_WITH_WORKLOAD(suite, var, spec)                                       \
    static struct workload *var;                                                         \
    static void suite##_parse_workload(void) { var = test_workload(spec); }              \
    static void suite##_free_workload(void) { workload_free(var); }                      \
    TestSuite(suite, .init = suite##_parse_workload, .fini = suite##_free_workload)

/* The parameter files path and ref_path (real/params.h, --save-params) hold
 * the same count (n_expected too, unless it is -1) and every parameter within
 * 1e-5 relative (of max(|ref|, 1e-2)) of ref_path's: what a synchronous
 * strategy on many ranks owes one device. Logs the largest difference. */
void expect_params_match(const char *path, const char *ref_path, int64_t n_expected,
                         const char *what);

/* The registered strategy called name, or the test fails naming the error. */
const struct strategy *test_strategy(const char *name);

/* A scenario filled by hand, without config_init: model, devices, batch and
 * microbatches as given; one server, 2 chunks, 25 MiB buckets, staleness 4;
 * everything else 0. */
struct config test_config(const char *model, int devices, int batch, int microbatches);

/* The plan strategy `name` builds for c on wl (which must outlive it), or
 * the test fails naming the strategy, the scenario's sizes and the error. */
struct plan *test_build_plan(const char *name, const struct config *c,
                             const struct workload *wl);

/* plan_check finds p valid, or the test fails naming `what` and the first
 * defect (its rank, op and message). */
void test_assert_plan_valid(const struct plan *p, const char *what);

/* The bubble of p's unit-cost run (plan_unit_bubble), or the test fails. */
double test_unit_bubble(const struct plan *p);

/* splitmix64: a fixed-seed stream, so every run checks the same sequence. */
uint64_t test_rng_next(uint64_t *state);

/* Uniform in [0, 1), 53 bits from test_rng_next. */
double test_rng_uniform(uint64_t *state);

#endif

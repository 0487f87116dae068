/* The shared test harness (helpers.h): one copy, linked into every
 * tests/test_*.c executable. */
#include "helpers.h"

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/config.h"
#include "../core/err.h"
#include "../core/plan_check.h"
#include "../core/untracked.h"
#include "../core/workload.h"
#include "../nn/device.h"
#include "../real/params.h"
#include "../strategies/strategy.h"

extern char **environ;

/* ---- running a program ---------------------------------------------------- */

struct run run_argv(const char *const *argv)
{
    char out_path[] = "/tmp/strata-test-out-XXXXXX", err_path[] = "/tmp/strata-test-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    cr_assert(out_fd >= 0 && err_fd >= 0, "mkstemp: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "cannot start %s: %s", argv[0], strerror(rc));
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    close(out_fd);
    close(err_fd);
    struct run r = {WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, test_slurp(out_path),
                    test_slurp(err_path)};
    unlink(out_path);
    unlink(err_path);
    return r;
}

void job_outputs_free(struct job_outputs *o)
{
    free(o->out);
    free(o->err);
    free(o->json);
    free(o->csv);
}

#define JOB_MAX_ARGS 48

struct job_outputs run_with_jobs(const char *const *prefix, const char *command,
                                 const char *const *args, int jobs, const char *tag,
                                 bool with_files)
{
    const char *argv[JOB_MAX_ARGS];
    char j[16], json[256], csv[256], name[64];
    int n = 0;
    for (; prefix && prefix[n]; n++) {
        cr_assert_lt(n, JOB_MAX_ARGS - 16);
        argv[n] = prefix[n];
    }
    argv[n++] = STRATA_BIN;
    argv[n++] = command;
    for (int i = 0; args[i]; i++) {
        cr_assert_lt(n, JOB_MAX_ARGS - 8);
        argv[n++] = args[i];
    }
    if (jobs) {
        snprintf(j, sizeof j, "%d", jobs);
        argv[n++] = "-j";
        argv[n++] = j;
    }
    snprintf(name, sizeof name, "%s.json", tag);
    snprintf(json, sizeof json, "%s", test_tmp_path(name));
    snprintf(name, sizeof name, "%s.csv", tag);
    snprintf(csv, sizeof csv, "%s", test_tmp_path(name));
    if (with_files) {
        argv[n++] = "--json";
        argv[n++] = json;
        argv[n++] = "--csv";
        argv[n++] = csv;
    }
    argv[n] = NULL;
    struct run r = run_argv(argv);
    struct job_outputs o = {r.status, r.out, r.err, NULL, NULL};
    if (with_files && access(json, F_OK) == 0) o.json = test_slurp(json);
    if (with_files && access(csv, F_OK) == 0) o.csv = test_slurp(csv);
    return o;
}

void expect_same_outputs(const struct job_outputs *a, const struct job_outputs *b,
                         const char *what)
{
    cr_expect_eq(a->status, b->status, "%s: exit %d and %d; stderr:\n%s\n---\n%s", what,
                 a->status, b->status, a->err, b->err);
    cr_expect_str_eq(a->out, b->out, "%s: stdout differs", what);
    cr_expect_str_eq(a->err, b->err, "%s: stderr differs", what);
    cr_expect(a->json && b->json ? !strcmp(a->json, b->json) : a->json == b->json,
              "%s: --json differs (or only one was written)", what);
    cr_expect(a->csv && b->csv ? !strcmp(a->csv, b->csv) : a->csv == b->csv,
              "%s: --csv differs (or only one was written)", what);
}

void expect_jobs_agree_with_one(const char *command, const char *const *args, int status,
                                bool with_files, struct job_outputs *one)
{
    *one = run_with_jobs(NULL, command, args, 1, "j1", with_files);
    cr_assert_eq(one->status, status, "-j 1 exited %d, not %d; stderr:\n%s", one->status,
                 status, one->err);
    for (int jobs = 2; jobs <= 3; jobs++) {
        char tag[16], what[32];
        snprintf(tag, sizeof tag, "j%d", jobs);
        snprintf(what, sizeof what, "-j 1 and -j %d", jobs);
        struct job_outputs many = run_with_jobs(NULL, command, args, jobs, tag, with_files);
        expect_same_outputs(one, &many, what);
        job_outputs_free(&many);
    }
}

struct run run_strata(const char *const *args)
{
    size_t n = 0;
    while (args[n]) n++;
    const char **argv = malloc((n + 2) * sizeof *argv);
    cr_assert_not_null(argv);
    argv[0] = STRATA_BIN;
    memcpy(argv + 1, args, (n + 1) * sizeof *argv);   /* with the NULL */
    struct run r = run_argv(argv);
    free(argv);
    return r;
}

void mpirun_env_prepare(void)
{
    if (geteuid() == 0) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
    setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
    untracked_prepare_ranks_env();   /* these ranks are started here, not by strata */
}

void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

void run_argv_ok(const char *const *argv)
{
    expect_ok(run_argv(argv), argv[0]);
}

void expect_ok(struct run r, const char *what)
{
    int status = r.status;
    cr_expect_eq(status, 0, "%s exited %d; stderr:\n%s", what, status, r.err);
    run_free(&r);   /* before the test stops, so that LeakSanitizer sees none of ours */
    cr_assert_eq(status, 0);
}

void expect_ok_saying(struct run r, const char *text, bool is_said)
{
    cr_expect_eq(r.status, 0, "exit %d; stderr:\n%s", r.status, r.err);
    cr_expect_eq(strstr(r.out, text) != NULL, is_said, "'%s' %s stdout:\n%s", text,
                 is_said ? "is not in" : "is in", r.out);
    run_free(&r);
}

void expect_refused(struct run r, const char *must_name, const char *must_name_too)
{
    cr_expect_eq(r.status, 2, "exit %d, want 2; stderr: %s", r.status, r.err);
    cr_expect_not_null(strstr(r.err, must_name), "stderr does not name '%s': %s", must_name,
                       r.err);
    if (must_name_too)
        cr_expect_not_null(strstr(r.err, must_name_too), "stderr does not name '%s': %s",
                           must_name_too, r.err);
    run_free(&r);
}

/* ---- files ---------------------------------------------------------------- */

char *test_slurp_n(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap + 1);
    cr_assert_not_null(buf);
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            buf = realloc(buf, (cap *= 2) + 1);
            cr_assert_not_null(buf);
        }
    }
    cr_assert(!ferror(f), "cannot read %s", path);
    fclose(f);
    buf[len] = '\0';
    if (n) *n = len;
    return buf;
}

char *test_slurp(const char *path)
{
    return test_slurp_n(path, NULL);
}

bool test_proc_has(long pid, const char *what, const char *entry, bool is_prefix, char *rest,
                   size_t n)
{
    char path[64], buf[65536];
    snprintf(path, sizeof path, "/proc/%ld/%s", pid, what);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    size_t k = strlen(entry);
    for (size_t at = 0; at < len; at += strlen(buf + at) + 1)
        if (is_prefix ? !strncmp(buf + at, entry, k) : !strcmp(buf + at, entry)) {
            if (rest) snprintf(rest, n, "%s", buf + at + k);
            return true;
        }
    return false;
}

void test_make_dir(char *dir, size_t n, const char *what)
{
    snprintf(dir, n, "/tmp/strata-test-%s-XXXXXX", what);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp %s: %s", dir, strerror(errno));
}

void test_remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
}

char test_tmp_dir[64];

/* PATH as the test found it (Criterion runs each test in its own process). */
static char *saved_path;

void test_tmp_dir_make(const char *what)
{
    test_make_dir(test_tmp_dir, sizeof test_tmp_dir, what);
    const char *p = getenv("PATH");
    saved_path = p ? strdup(p) : NULL;
}

void test_tmp_dir_remove(void)
{
    if (saved_path) setenv("PATH", saved_path, 1);
    free(saved_path);
    saved_path = NULL;
    if (test_tmp_dir[0]) test_remove_dir(test_tmp_dir);
}

char *test_tmp_path(const char *name)
{
    static char paths[8][256];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, sizeof paths[0], "%s/%s", test_tmp_dir, name);
    return path;
}

const char *test_tmp_file(const char *name, const char *text)
{
    const char *path = test_tmp_path(name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
    return path;
}

struct test_trace test_trace_begin(const char *name)
{
    struct test_trace t = {.path = test_tmp_path(name)};
    t.f = fopen(t.path, "w");
    cr_assert(t.f, "cannot write %s", t.path);
    fprintf(t.f, "{\"traceEvents\":[");
    return t;
}

FILE *test_capture_open(struct test_capture *c)
{
    *c = (struct test_capture){0};
    c->f = open_memstream(&c->text, &c->len);
    cr_assert_not_null(c->f, "open_memstream: %s", strerror(errno));
    return c->f;
}

char *test_capture_close(struct test_capture *c)
{
    fclose(c->f);
    return c->text;
}

void test_trace_span(struct test_trace *t, const char *name, int rank, int tid, int step, int op,
                     const char *layers, int mb, double ts_ms, double dur_ms, const char *extra)
{
    fprintf(t->f, "%s{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.17g,"
                  "\"dur\":%.17g,\"args\":{\"layers\":\"%s\",\"mb\":%d,\"step\":%d,\"op\":%d%s}}",
            t->has_spans ? "," : "", name, rank, tid, ts_ms * 1e3, dur_ms * 1e3, layers, mb, step,
            op, extra);
    t->has_spans = true;
}

/* ---- JSON ----------------------------------------------------------------- */

cJSON *read_json(const char *path)
{
    char *text = test_slurp(path);
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j, "%s is not JSON:\n%.400s", path, text);
    free(text);
    return j;
}

double num_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);
    if (b) v = cJSON_GetObjectItemCaseSensitive(v, b);
    cr_assert(cJSON_IsNumber(v), "no number at %s%s%s", a, b ? "." : "", b ? b : "");
    return v->valuedouble;
}

int curve_at(const cJSON *obj, const char *key, double out[][3], int cap)
{
    const cJSON *curve = cJSON_GetObjectItemCaseSensitive(obj, key);
    int n = 0;
    for (const cJSON *p = curve ? curve->child : NULL; p && n < cap; p = p->next, n++)
        for (int k = 0; k < 3; k++) {
            const cJSON *v = cJSON_GetArrayItem(p, k);
            cr_assert(cJSON_IsNumber(v), "%s[%d][%d] is not a number", key, n, k);
            out[n][k] = v->valuedouble;
        }
    return n;
}

const char *str_at(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    cr_assert(cJSON_IsString(v), "no string at %s", key);
    return v->valuestring;
}

/* ---- fixtures ------------------------------------------------------------- */

const struct device *test_cpu(int init_arg)
{
    struct err e = {0};
    const struct device *d = device_find("cpu", &e);
    cr_assert_not_null(d, "device_find(\"cpu\"): %s", e.msg);
    cr_assert_eq(d->init(init_arg, &e), 0, "init: %s", e.msg);
    return d;
}

struct workload *test_workload(const char *spec)
{
    struct workload *w = NULL;
    struct err e = {0};
    cr_assert_eq(workload_parse(spec, &w, &e), 0, "%s: %s", spec, e.msg);
    return w;
}

uint64_t test_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

double test_rng_uniform(uint64_t *state)
{
    return (double)(test_rng_next(state) >> 11) * 0x1p-53;
}

static float *load_params(const char *path, int64_t *n)
{
    float *p = NULL;
    struct err e = {0};
    cr_assert_eq(params_load(path, &p, n, &e), 0, "%s", e.msg);
    return p;
}

void expect_params_match(const char *path, const char *ref_path, int64_t n_expected,
                         const char *what)
{
    int64_t n = 0, n_ref = 0;
    float *a = load_params(path, &n), *b = load_params(ref_path, &n_ref);
    cr_assert_eq(n, n_ref, "%s: %lld parameters, one device has %lld", what, (long long)n,
                 (long long)n_ref);
    if (n_expected >= 0)
        cr_assert_eq(n, n_expected, "%s: %lld parameters, the model has %lld", what,
                     (long long)n, (long long)n_expected);
    double max_rel = 0;
    int64_t worst = 0, n_bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double rel = fabs((double)a[i] - (double)b[i]) / fmax(fabs((double)b[i]), 1e-2);
        if (!(rel <= 1e-5)) n_bad++;   /* NaN counts as bad */
        if (!(rel <= max_rel)) {
            max_rel = rel;
            worst = i;
        }
    }
    cr_expect_eq(n_bad, 0,
                 "%s: %lld of %lld parameters differ from one device's by more than 1e-5 "
                 "relative; largest %.3g at parameter %lld (%.9g vs %.9g)",
                 what, (long long)n_bad, (long long)n, max_rel, (long long)worst,
                 (double)a[worst], (double)b[worst]);
    cr_log_info("%s: largest relative difference from one device %.3g (tolerance 1e-5)", what,
                max_rel);
    free(a);
    free(b);
}

const struct strategy *test_strategy(const char *name)
{
    struct err e = {0};
    const struct strategy *s = strategy_find(name, &e);
    cr_assert_not_null(s, "%s", e.msg);
    return s;
}

struct config test_config(const char *model, int devices, int batch, int microbatches)
{
    struct config c;
    memset(&c, 0, sizeof c);
    snprintf(c.model, sizeof c.model, "%s", model);
    c.devices = devices;
    c.servers = 1;
    c.batch = batch;
    c.microbatches = microbatches;
    c.chunks = 2;
    c.bucket_mb = 25;
    c.staleness = 4;
    return c;
}

struct plan *test_build_plan(const char *name, const struct config *c,
                             const struct workload *wl)
{
    struct err e = {0};
    struct plan *p = NULL;
    int rc = strategy_build(test_strategy(name), c, wl, &p, &e);
    cr_assert_eq(rc, 0, "%s on %s, %lld devices, batch %lld, %lld microbatches, %lld chunks: %s",
                 name, wl->spec, c->devices, c->batch, c->microbatches, c->chunks, e.msg);
    cr_assert_not_null(p, "%s: built, but no plan", name);
    return p;
}

void test_assert_plan_valid(const struct plan *p, const char *what)
{
    struct err e = {0};
    struct plan_verdict v;
    cr_assert_eq(plan_check(p, &v, &e), 0, "%s: %s", what, e.msg);
    cr_assert(v.is_valid, "%s: %d defects, first: rank %d op %d: %s", what, v.n_defects,
              v.n_defects ? v.defects[0].rank : -1, v.n_defects ? v.defects[0].op : -1,
              v.n_defects ? v.defects[0].msg : "");
}

double test_unit_bubble(const struct plan *p)
{
    struct err e = {0};
    struct plan_times t;
    cr_assert_eq(plan_unit_run(p, &t, &e), 0, "%s", e.msg);
    double bubble = plan_unit_bubble(p, &t);
    plan_times_release(&t);
    return bubble;
}

/* ---- a program in the background ------------------------------------------ */

double test_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void test_sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

struct test_bg test_bg_start(const char *const *argv, const char *err_path)
{
    struct test_bg b = {0};
    snprintf(b.err_path, sizeof b.err_path, "%s", err_path);
    int fd = open(b.err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int out = open("/dev/null", O_WRONLY);
    cr_assert(fd >= 0 && out >= 0, "%s: %s", b.err_path, strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    int rc = posix_spawn(&b.pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd);
    close(out);
    cr_assert_eq(rc, 0, "cannot start %s: %s", argv[0], strerror(rc));
    return b;
}

int test_bg_finish(const struct test_bg *b, double limit_s, double *took_s)
{
    double t0 = test_now_s();
    int ws = 0;
    pid_t got = 0;
    while ((got = waitpid(b->pid, &ws, WNOHANG)) == 0 && test_now_s() - t0 < limit_s)
        test_sleep_s(0.05);
    if (took_s) *took_s = test_now_s() - t0;
    if (got == 0) {
        kill(b->pid, SIGKILL);
        waitpid(b->pid, &ws, 0);
        cr_assert_fail("%s did not end within %.0f s", b->err_path, limit_s);
    }
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Measuring this machine (see calibrate.h): compute on the device, the
 * links between MPI ranks, and the profile made of them. */
#define _GNU_SOURCE   /* sched_setaffinity: the sharing processes leave rank 0's core */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../nn/mlp.h"
#include "../real/mpi_check.h"
#include "calibrate.h"
#include "calibrate_links.h"

/* ---- timing ------------------------------------------------------------ */

/* Each measured call runs at least this many times, and more until this
 * much time has gone (a median of the calls is taken, so a busy machine's
 * stalls do not move it). */
#define MIN_CALLS 11
#define MAX_CALLS 2000
#define MIN_TIME_S 0.05
#define WARMUP_CALLS 3

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts t[0..n) and returns its median. */
double calib_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* What one timed call does: a layer's forward or backward alone, the update. */
struct bench {
    struct mlp *m;
    struct mlp_act *a;
    int32_t *labels;         /* device (rows): the last layer's forward computes the loss, as the executor's does */
    float *dout;             /* (rows, widest): a layer's incoming gradient */
    float *din;              /* (rows, widest): its outgoing one */
    int rows;
    /* a whole step's inputs, as the executor loads them (worker.c) */
    const struct dataset *train;   /* NULL: the rows stay as they are */
    struct sampler sampler;
    int64_t *idx;            /* [rows] */
    float *x_host;           /* (rows, features) */
    int32_t *y_host;         /* [rows] */
};

enum bench_what { B_FORWARD, B_BACKWARD, B_UPDATE };

static int bench_call(struct bench *b, enum bench_what what, int layer, struct err *e)
{
    struct mlp *m = b->m;
    const bool is_last = layer == m->n_layers - 1;
    double loss = 0;
    switch (what) {
    case B_FORWARD:
        TRY(mlp_forward(m, b->a, layer, layer + 1, NULL, b->rows, NULL, e));
        if (is_last) TRY(mlp_loss(m, b->a, b->labels, b->rows, &loss, e));
        break;
    case B_BACKWARD:
        /* layer 0's input gradient is skipped, as the executor skips it */
        TRY(mlp_backward(m, b->a, layer, layer + 1, is_last ? b->a->dlogits : b->dout, b->rows,
                         layer > 0 ? b->din : NULL, e));
        break;
    case B_UPDATE:
        mlp_sgd_step(m, 0, m->n_layers, 0.01f, 0.9f, 0.0f, 1.0f / (float)b->rows);
        break;
    }
    return m->dev->sync(e);
}

/* The median time of one call, after a warm-up. */
static int time_call(struct bench *b, enum bench_what what, int layer, double *median_s,
                     struct err *e)
{
    double t[MAX_CALLS];
    for (int i = 0; i < WARMUP_CALLS; i++) TRY(bench_call(b, what, layer, e));
    int n = 0;
    double start = now_s();
    while (n < MAX_CALLS && (n < MIN_CALLS || now_s() - start < MIN_TIME_S)) {
        double t0 = now_s();
        TRY(bench_call(b, what, layer, e));
        t[n++] = now_s() - t0;
    }
    *median_s = calib_median(t, n);
    return 0;
}

/* Step `step`'s input rows and labels from the data set to the device, as
 * real/worker.c's load_inputs and load_labels do. */
static int load_step(struct bench *b, int64_t step, struct err *e)
{
    const struct dataset *tr = b->train;
    const struct device *d = b->m->dev;
    const size_t features = (size_t)data_features(tr);
    int64_t count = 0;
    TRY(sampler_indices(&b->sampler, step, 0, 1, 0, 1, b->idx, &count, e));
    for (int64_t i = 0; i < count; i++) {
        memcpy(b->x_host + (size_t)i * features, tr->x + (size_t)b->idx[i] * features,
               features * sizeof(float));
        b->y_host[i] = tr->y[b->idx[i]];
    }
    d->copy(b->a->x[0], b->x_host, (size_t)count * features * sizeof(float), DEV_H2D);
    d->copy(b->labels, b->y_host, (size_t)count * sizeof(int32_t), DEV_H2D);
    return 0;
}

/* One training step's compute ops, each timed: FORWARD (inputs, every
 * layer, loss), BACKWARD (every layer), UPDATE. */
static int time_step(struct bench *b, int64_t step, double t[3], struct err *e)
{
    struct mlp *m = b->m;
    const int L = m->n_layers;
    double loss = 0, t0 = now_s();
    mlp_zero_grad(m, 0, L);
    if (b->train) TRY(load_step(b, step, e));
    TRY(mlp_forward(m, b->a, 0, L, NULL, b->rows, NULL, e));
    TRY(mlp_loss(m, b->a, b->labels, b->rows, &loss, e));
    TRY(m->dev->sync(e));
    double t1 = now_s();
    TRY(mlp_backward(m, b->a, 0, L, b->a->dlogits, b->rows, NULL, e));
    TRY(m->dev->sync(e));
    double t2 = now_s();
    mlp_sgd_step(m, 0, L, 0.01f, 0.9f, 0.0f, 1.0f / (float)b->rows);
    TRY(m->dev->sync(e));
    t[0] = t1 - t0;
    t[1] = t2 - t1;
    t[2] = now_s() - t2;
    return 0;
}

/* Linear interpolation between order statistics of sorted t[0..n), at
 * rank p (n - 1) (Hyndman & Fan, 1996, definition 7: R's and numpy's
 * default). */
static double quantile_sorted(const double *t, int n, double p)
{
    double h = p * (n - 1);
    int lo = (int)h;
    if (lo >= n - 1) return t[n - 1];
    return t[lo] + (h - lo) * (t[lo + 1] - t[lo]);
}

double calib_fit_sigma(double *t, int n)
{
    if (n < 4) return 0;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double q25 = quantile_sorted(t, n, 0.25), q75 = quantile_sorted(t, n, 0.75);
    if (!(q25 > 0) || !(q75 >= q25)) return 0;
    double sigma = (log(q75) - log(q25)) / 1.349;
    /* a profile holds at most JITTER_MAX_SIGMA (core/jitter.h) */
    return isfinite(sigma) ? fmin(sigma, JITTER_MAX_SIGMA) : 0;
}

/* The median FORWARD, BACKWARD and UPDATE of repeated steps, and the
 * spread of each (calib_fit_sigma) into c. */
static int time_steps(struct bench *b, double *fwd_s, double *bwd_s, double *upd_s,
                      struct calib_compute *c, struct err *e)
{
    const int n_max = MAX_CALLS;
    double *t = malloc(3 * (size_t)n_max * sizeof *t), one[3];
    if (!t) return err_set(e, ERR_NOMEM, "calibrate: out of memory");
    int rc = 0, n = 0;
    for (int i = 0; rc == 0 && i < WARMUP_CALLS; i++) rc = time_step(b, i, one, e);
    double start = now_s();
    while (rc == 0 && n < n_max && (n < MIN_CALLS || now_s() - start < 2 * MIN_TIME_S)) {
        rc = time_step(b, WARMUP_CALLS + n, one, e);
        for (int k = 0; k < 3; k++) t[k * n_max + n] = one[k];
        n++;
    }
    if (rc == 0) {
        *fwd_s = calib_median(t, n);
        *bwd_s = calib_median(t + n_max, n);
        *upd_s = calib_median(t + 2 * n_max, n);
        c->n_steps = n;
        c->fwd_sigma = calib_fit_sigma(t, n);
        c->bwd_sigma = calib_fit_sigma(t + n_max, n);
        c->update_sigma = calib_fit_sigma(t + 2 * n_max, n);
    }
    free(t);
    return rc;
}

/* ---- compute -------------------------------------------------------------- */

static void bench_release(struct bench *b)
{
    if (b->m) {
        const struct device *d = b->m->dev;
        d->free(b->dout);
        d->free(b->din);
        d->free(b->labels);
    }
    mlp_act_free(b->a);
    mlp_free(b->m);
    sampler_release(&b->sampler);
    free(b->idx);
    free(b->x_host);
    free(b->y_host);
    memset(b, 0, sizeof *b);
}

/* A model of wl on dev with rows samples of activations, inputs and
 * gradients filled with finite values (the first forward fills the rest);
 * with train, the buffers a step's inputs are loaded through. */
static int bench_create(const struct device *dev, const struct workload *wl,
                        const struct dataset *train, int rows, uint64_t seed, struct bench *b,
                        struct err *e)
{
    memset(b, 0, sizeof *b);
    b->rows = rows;
    TRY(mlp_create(wl, dev, seed, &b->m, e));
    TRY(mlp_act_create(b->m, rows, &b->a, e));
    int widest = 0;
    for (int l = 0; l <= b->m->n_layers; l++)
        if (b->m->sizes[l] > widest) widest = b->m->sizes[l];
    size_t n = (size_t)rows * (size_t)widest;
    b->labels = dev->alloc((size_t)rows * sizeof *b->labels, e);
    b->dout = dev->alloc(n * sizeof(float), e);
    b->din = dev->alloc(n * sizeof(float), e);
    float *host = malloc(n * sizeof *host);
    int32_t *host_labels = malloc((size_t)rows * sizeof *host_labels);
    if (!b->labels || !b->dout || !b->din || !host || !host_labels) {
        free(host);
        free(host_labels);
        return e->code ? e->code : err_set(e, ERR_NOMEM, "calibrate: out of memory");
    }
    /* small values of both signs: half the ReLUs open, no overflow however
     * often the calls repeat */
    int classes = b->m->sizes[b->m->n_layers];
    for (size_t i = 0; i < n; i++) host[i] = (float)((int)(i * 2654435761u % 201) - 100) * 1e-3f;
    for (int i = 0; i < rows; i++) host_labels[i] = i % classes;
    dev->copy(b->a->x[0], host, (size_t)rows * (size_t)b->m->sizes[0] * sizeof(float), DEV_H2D);
    dev->copy(b->dout, host, n * sizeof(float), DEV_H2D);
    dev->copy(b->labels, host_labels, (size_t)rows * sizeof *b->labels, DEV_H2D);
    free(host);
    free(host_labels);
    if (train) {
        b->train = train;
        b->idx = XCALLOC(e, (size_t)rows, sizeof *b->idx);
        b->x_host = XCALLOC(e, (size_t)rows * (size_t)data_features(train), sizeof *b->x_host);
        b->y_host = XCALLOC(e, (size_t)rows, sizeof *b->y_host);
        if (!b->idx || !b->x_host || !b->y_host) return ERR_NOMEM;
        TRY(sampler_init(&b->sampler, train->n, rows, seed, e));
        TRY(load_step(b, 0, e));
    }
    TRY(mlp_forward(b->m, b->a, 0, b->m->n_layers, NULL, rows, NULL, e));
    double loss = 0;
    TRY(mlp_loss(b->m, b->a, b->labels, rows, &loss, e));
    mlp_zero_grad(b->m, 0, b->m->n_layers);
    return dev->sync(e);
}

/* A layer op of one sample, one feature in and one out: all overhead. */
static int measure_overhead(const struct device *dev, uint64_t seed, double *s, struct err *e)
{
    struct workload *tiny = NULL;
    TRY(workload_parse("mlp:1-1", &tiny, e));
    struct bench b;
    int rc = bench_create(dev, tiny, NULL, 1, seed, &b, e);
    if (rc == 0) rc = time_call(&b, B_FORWARD, 0, s, e);
    bench_release(&b);
    workload_free(tiny);
    return rc;
}

static void compute_rates(struct calib_compute *c)
{
    double time_s = c->fwd_s + c->bwd_s;
    c->flops_per_s = time_s > 0 ? (c->fwd_flops + c->bwd_flops) / time_s : 0;
    c->mem_bw_bytes_per_s = c->update_s > 0 ? (double)c->update_bytes / c->update_s : 0;
}

int calib_measure_compute(const struct device *dev, const struct workload *wl,
                          const struct dataset *train, int rows, uint64_t seed,
                          struct calib_compute *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    if (!wl->is_mlp)
        return err_set(e, ERR_INPUT, "--model: calibrate runs the layers of an mlp: model, not "
                       "'%s' (e.g. --model mlp:784-256-128-10)", wl->spec);
    if (wl->n_layers > CALIB_MAX_LAYERS)
        return err_set(e, ERR_INPUT, "--model: calibrate measures at most %d layers, '%s' has %d",
                       CALIB_MAX_LAYERS, wl->spec, wl->n_layers);
    if (rows < 1 || (train && rows > train->n))
        return err_set(e, ERR_INPUT, "calibrate: %d samples per op (want 1 to %lld)", rows,
                       (long long)(train ? train->n : 16777216));
    out->rows = rows;
    out->n_layers = wl->n_layers;
    out->is_gathered = train != NULL;
    struct bench b;
    int rc = bench_create(dev, wl, train, rows, seed, &b, e);
    for (int l = 0; rc == 0 && l < wl->n_layers; l++) {
        struct calib_layer *cl = &out->layers[l];
        const struct layer *ly = &wl->layers[l];
        cl->in = (int)ly->in;
        cl->out = (int)ly->out;
        cl->fwd_flops = ly->fwd_flops_per_sample * rows;
        cl->bwd_flops = ly->bwd_flops_per_sample * rows;
        out->fwd_flops += cl->fwd_flops;
        out->bwd_flops += cl->bwd_flops;
        rc = time_call(&b, B_FORWARD, l, &cl->fwd_s, e);
        if (rc == 0) rc = time_call(&b, B_BACKWARD, l, &cl->bwd_s, e);
    }
    /* the plan's UPDATE: read w, v, g, write w, v (core/plan.c) */
    out->update_bytes = 5 * workload_param_bytes(wl, 0, wl->n_layers);
    if (rc == 0) rc = time_steps(&b, &out->fwd_s, &out->bwd_s, &out->update_s, out, e);
    bench_release(&b);
    if (rc == 0) rc = measure_overhead(dev, seed, &out->op_overhead_s, e);
    TRY(rc);
    compute_rates(out);
    return 0;
}

/* ---- the fit ------------------------------------------------------------- */

double calib_algbw(int64_t bytes, double time_s)
{
    return time_s > 0 ? (double)bytes / time_s : 0;
}

double calib_busbw_allreduce(double algbw, int n_ranks)
{
    return n_ranks > 1 ? algbw * 2.0 * (n_ranks - 1) / n_ranks : 0;
}

int calib_fit_link(const int64_t *bytes, const double *time_s, int n, double *alpha_s,
                   double *beta_bytes_per_s, struct err *e)
{
    if (n < 2) return err_set(e, ERR_INPUT, "calibrate: a link fit needs 2 sizes or more, not %d", n);
    /* Weighted least squares of t = a + x b (b = 1/beta) with weights
     * 1/t^2, i.e. of 1 = a/t + b x/t: normal equations
     *   [S_uu S_uv] [a]   [S_u]
     *   [S_uv S_vv] [b] = [S_v]      u = 1/t, v = x/t. */
    double suu = 0, suv = 0, svv = 0, su = 0, sv = 0;
    for (int i = 0; i < n; i++) {
        if (!(time_s[i] > 0) || !isfinite(time_s[i]) || bytes[i] < 0)
            return err_set(e, ERR_INPUT, "calibrate: a link time of %g s for %lld bytes "
                           "(want > 0)", time_s[i], (long long)bytes[i]);
        double u = 1 / time_s[i], v = (double)bytes[i] / time_s[i];
        suu += u * u;
        suv += u * v;
        svv += v * v;
        su += u;
        sv += v;
    }
    double det = suu * svv - suv * suv;
    double a = det != 0 ? (su * svv - sv * suv) / det : -1;
    double b = det != 0 ? (suu * sv - suv * su) / det : 0;
    if (!(a >= 0)) {   /* no latency to speak of, or a degenerate set: bandwidth alone */
        a = 0;
        b = svv > 0 ? sv / svv : 0;
    }
    if (!(b > 0) || !isfinite(b))
        return err_set(e, ERR_INPUT, "calibrate: the link times do not grow with the bytes "
                       "(no bandwidth fits them)");
    *alpha_s = a;
    *beta_bytes_per_s = 1 / b;
    return 0;
}

/* ---- the links --------------------------------------------------------------- */

double calib_ring_s(double alpha_s, double beta_bytes_per_s, double gamma_s_per_byte,
                    int n_ranks, int64_t bytes)
{
    if (n_ranks < 2) return 0;
    int p = n_ranks;
    double n = (double)bytes;
    return 2.0 * (p - 1) * (alpha_s + n / (p * beta_bytes_per_s)) + (double)(p - 1) / p * n * gamma_s_per_byte;
}

double calib_fit_gamma(const int64_t *bytes, const double *time_s, int n, int n_ranks,
                       double alpha_s, double beta_bytes_per_s)
{
    /* minimise sum ((ring_i + c_i gamma) / t_i - 1)^2, c_i = (p-1)/p n_i:
     * gamma = sum (c_i/t_i)(1 - ring_i/t_i) / sum (c_i/t_i)^2 */
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        if (!(time_s[i] > 0)) continue;
        double ring = calib_ring_s(alpha_s, beta_bytes_per_s, 0, n_ranks, bytes[i]);
        double c = (double)(n_ranks - 1) / n_ranks * (double)bytes[i] / time_s[i];
        num += c * (1 - ring / time_s[i]);
        den += c * c;
    }
    double gamma = den > 0 ? num / den : 0;
    return gamma > 0 && isfinite(gamma) ? gamma : 0;
}

/* ---- time-sharing ------------------------------------------------------------ */

/* Work of each sharing process: steps that take this long alone. Enough
 * for many scheduler time slices (CFS's are a few ms), so the mean over
 * the run is the share a process gets, not the luck of one slice. */
#define TIMESHARE_ALONE_S 0.2

static void write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        p += w;
        n -= (size_t)w;
    }
}

static bool read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

/* A forked process: its own model, ready on `ready`, waits for `go` to
 * close, runs `steps` steps, writes its seconds (-1: failed) to `out`. It
 * never returns and calls no MPI. */
static void share_child(const struct calib_setup *s, int steps, int ready, int go, int out)
{
#ifdef CPU_SET
    /* rank 0 may be bound to one core (--bind): its children must not be */
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int i = 0; i < CPU_SETSIZE; i++) CPU_SET(i, &all);
    sched_setaffinity(0, sizeof all, &all);
#endif
    struct bench b;
    struct err e = {0};
    double elapsed = -1, one[3];
    int rc = bench_create(s->dev, s->wl, s->train, s->rows, s->seed, &b, &e);
    char c = 1;
    write_all(ready, &c, 1);
    if (rc == 0 && read(go, &c, 1) == 0) {   /* EOF: the parent closed go, all start */
        double t0 = now_s();
        for (int i = 0; rc == 0 && i < steps; i++) rc = time_step(&b, i, one, &e);
        if (rc == 0) elapsed = now_s() - t0;
    }
    write_all(out, &elapsed, sizeof elapsed);
    _exit(0);   /* no atexit, no stdio flush: the parent's buffers are its own */
}

/* k processes at once; their mean seconds a step into *step_s. */
static int share_level(const struct calib_setup *s, int k, int steps, double *step_s,
                       struct err *e)
{
    int ready[2], go[2], out[2];
    if (pipe(ready) < 0) return err_set(e, ERR_RUN, "calibrate: pipe: %s", strerror(errno));
    if (pipe(go) < 0 || pipe(out) < 0) {
        close(ready[0]);
        close(ready[1]);
        return err_set(e, ERR_RUN, "calibrate: pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pids[CLUSTER_MAX_TIMESHARE];
    int n = 0;
    for (; n < k; n++) {
        if ((pids[n] = fork()) < 0) break;
        if (pids[n] == 0) {
            close(ready[0]);
            close(go[1]);
            close(out[0]);
            share_child(s, steps, ready[1], go[0], out[1]);
        }
    }
    close(ready[1]);
    close(go[0]);
    close(out[1]);
    char c;
    for (int i = 0; i < n; i++)
        if (!read_all(ready[0], &c, 1)) break;
    close(go[1]);   /* go */
    double sum = 0;
    int ok = 0;
    for (int i = 0; i < n; i++) {
        double t;
        if (read_all(out[0], &t, sizeof t) && t > 0) {
            sum += t;
            ok++;
        }
    }
    close(ready[0]);
    close(out[0]);
    for (int i = 0; i < n; i++) waitpid(pids[i], NULL, 0);
    if (n < k) return err_set(e, ERR_RUN, "calibrate: fork of sharing process %d of %d: %s",
                              n + 1, k, strerror(errno));
    if (ok < k) return err_set(e, ERR_RUN, "calibrate: %d of %d sharing processes failed", k - ok,
                               k);
    *step_s = sum / k / steps;
    return 0;
}

/* Rank 0's part: every level from 1 to cores + 2 (at most the table's). */
static int measure_sharing(const struct calib_setup *s, int n_ranks, struct calib_compute *c,
                           struct err *e)
{
    int levels = (s->cores > 0 ? s->cores : 1) + 2;
    if (levels > CLUSTER_MAX_TIMESHARE) levels = CLUSTER_MAX_TIMESHARE;
    if (levels < n_ranks) levels = n_ranks < CLUSTER_MAX_TIMESHARE ? n_ranks : CLUSTER_MAX_TIMESHARE;
    double step_s = c->fwd_s + c->bwd_s + c->update_s;
    int steps = step_s > 0 ? (int)ceil(TIMESHARE_ALONE_S / step_s) : MIN_CALLS;
    if (steps < MIN_CALLS) steps = MIN_CALLS;
    c->timeshare_steps = steps;
    for (int k = 1; k <= levels; k++) TRY(share_level(s, k, steps, &c->timeshare_step_s[k - 1], e));
    c->n_timeshare = levels;
    /* relative to the ranks the device figures were measured on together */
    int ref = n_ranks <= levels ? n_ranks : levels;
    for (int k = 0; k < levels; k++)
        c->timeshare_slowdown[k] = c->timeshare_step_s[k] / c->timeshare_step_s[ref - 1];
    return 0;
}

/* A barrier that sleeps while it waits: an MPI barrier polls, and a
 * polling rank would take a core from the processes being measured. */
static int quiet_barrier(struct err *e)
{
    MPI_Request req;
    MPI_TRY(e, MPI_Ibarrier(MPI_COMM_WORLD, &req));
    for (int done = 0;;) {
        MPI_TRY(e, MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        if (done) return 0;
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
}

/* ---- the whole run ------------------------------------------------------------ */

/* Every rank's compute times replaced by their mean over the ranks. */
static int mean_over_ranks(struct calib_compute *c, int n_ranks, struct err *e)
{
    double t[2 * CALIB_MAX_LAYERS + 7], sum[2 * CALIB_MAX_LAYERS + 7];
    int n = 0;
    for (int l = 0; l < c->n_layers; l++) {
        t[n++] = c->layers[l].fwd_s;
        t[n++] = c->layers[l].bwd_s;
    }
    t[n++] = c->fwd_s;
    t[n++] = c->bwd_s;
    t[n++] = c->update_s;
    t[n++] = c->op_overhead_s;
    t[n++] = c->fwd_sigma;
    t[n++] = c->bwd_sigma;
    t[n++] = c->update_sigma;
    MPI_TRY(e, MPI_Allreduce(t, sum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    n = 0;
    for (int l = 0; l < c->n_layers; l++) {
        c->layers[l].fwd_s = sum[n++] / n_ranks;
        c->layers[l].bwd_s = sum[n++] / n_ranks;
    }
    c->fwd_s = sum[n++] / n_ranks;
    c->bwd_s = sum[n++] / n_ranks;
    c->update_s = sum[n++] / n_ranks;
    c->op_overhead_s = sum[n++] / n_ranks;
    c->fwd_sigma = sum[n++] / n_ranks;
    c->bwd_sigma = sum[n++] / n_ranks;
    c->update_sigma = sum[n++] / n_ranks;
    compute_rates(c);
    return 0;
}

int calib_run(const struct calib_setup *s, struct calib_result *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    int rank = 0, n_ranks = 0;
    MPI_TRY(e, MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_TRY(e, MPI_Comm_size(MPI_COMM_WORLD, &n_ranks));
    if (n_ranks < 2)
        return err_set(e, ERR_INPUT, "calibrate: the links are measured between 2 MPI ranks or "
                       "more; this job has %d (run `strata calibrate` alone: it starts 2)", n_ranks);
    if (s->max_bytes < 8 || s->max_bytes > INT_MAX)
        return err_set(e, ERR_INPUT, "calibrate: a largest message of %lld bytes (8 B to 2 GiB)",
                       (long long)s->max_bytes);
    /* every rank computes at once, sharing caches and memory as in a run */
    MPI_TRY(e, MPI_Barrier(MPI_COMM_WORLD));
    int rc = calib_measure_compute(s->dev, s->wl, s->train, s->rows, s->seed, &out->compute, e);
    TRY(mpi_check_agree(rc, e));
    TRY(mean_over_ranks(&out->compute, n_ranks, e));
    /* time-sharing: rank 0's processes alone on the machine, then shared */
    rc = rank == 0 ? measure_sharing(s, n_ranks, &out->compute, e) : 0;
    int rc_wait = quiet_barrier(e);
    TRY(mpi_check_agree(rc < 0 ? rc : rc_wait, e));
    struct calib_compute *c = &out->compute;
    MPI_TRY(e, MPI_Bcast(&c->n_timeshare, 1, MPI_INT, 0, MPI_COMM_WORLD));
    MPI_TRY(e, MPI_Bcast(&c->timeshare_steps, 1, MPI_INT, 0, MPI_COMM_WORLD));
    MPI_TRY(e, MPI_Bcast(c->timeshare_step_s, CLUSTER_MAX_TIMESHARE, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    MPI_TRY(e, MPI_Bcast(c->timeshare_slowdown, CLUSTER_MAX_TIMESHARE, MPI_DOUBLE, 0,
                         MPI_COMM_WORLD));
    out->comm.n_ranks = n_ranks;
    /* ranks on several hosts: each link class alone (calibrate_nodes.c) */
    TRY(calib_nodes_split(&out->nodes, e));
    if (out->nodes.n_nodes > 1) return calib_nodes_measure(&out->nodes, s->max_bytes, &out->comm, e);
    TRY(calib_links_measure(MPI_COMM_WORLD, 0, 1, MPI_COMM_WORLD, s->max_bytes, &out->comm, e));
    return calib_links_fit(&out->comm, e);
}

/* ---- the profile ------------------------------------------------------------ */

void calib_profile(const struct calib_compute *c, const struct calib_comm *m, int cores,
                   int64_t mem_bytes_per_rank, const char *name, struct cluster *out)
{
    /* One machine, one node: it holds as many ranks as are started (MPI
     * oversubscribes), and they share its cores. */
    enum { MOST_DEVICES_PER_NODE = 1024 };   /* a profile's bound (sim/cluster.c) */
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    out->is_ideal = false;
    out->device.flops_per_s = c->flops_per_s;
    out->device.mem_bw_bytes_per_s = c->mem_bw_bytes_per_s;
    out->device.op_overhead_s = c->op_overhead_s;
    out->device.mem_bytes = mem_bytes_per_rank > 0 ? mem_bytes_per_rank : 1;
    out->intra = (struct link_profile){.latency_s = m->latency_s, .bw_bytes_per_s = m->bw_bytes_per_s};
    out->inter = out->intra;
    out->devices_per_node = MOST_DEVICES_PER_NODE;
    out->cores_per_node = cores < 0 ? 0 : cores > MOST_DEVICES_PER_NODE ? MOST_DEVICES_PER_NODE : cores;
    out->allreduce_gamma_s_per_byte = m->gamma_s_per_byte;
    out->n_timeshare = c->n_timeshare;
    for (int k = 0; k < c->n_timeshare && k < CLUSTER_MAX_TIMESHARE; k++)
        out->timeshare_slowdown[k] = c->timeshare_slowdown[k];
    out->jitter = (struct jitter_spec){.forward_sigma = c->fwd_sigma,
                                       .backward_sigma = c->bwd_sigma,
                                       .update_sigma = c->update_sigma};
    out->allreduce = ALLREDUCE_RING;
}

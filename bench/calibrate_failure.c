/* The failure costs of this machine (calibrate_failure.h). */
#include "calibrate_failure.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/fileio.h"
#include "real_job.h"
#include "validate_metrics.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t calib_state_bytes(const struct workload *wl)
{
    /* parameters and their momentum, one float each (nn/mlp's blocks) */
    return 2 * workload_param_bytes(wl, 0, wl->n_layers);
}

/* Where the supervisor puts a run's checkpoints when the user names no
 * directory (real/supervise.c): /dev/shm, else $TMPDIR, else /tmp. */
static const char *supervisor_base(void)
{
    const char *tmp = getenv("TMPDIR");
    return access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : tmp && *tmp ? tmp : "/tmp";
}

/* path read whole into buf[0..n): the bytes read, or -1. */
static long read_whole(const char *path, unsigned char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t got = fread(buf, 1, n, f);
    bool bad = ferror(f);
    fclose(f);
    return bad ? -1 : (long)got;
}

int calib_measure_checkpoint_io(const char *dir, int64_t state_bytes, int n,
                                struct calib_failure *out, struct err *e)
{
    if (n < 1 || state_bytes < 1)
        return err_set(e, ERR_INPUT, "calibrate: %d checkpoint writes of %lld bytes", n,
                       (long long)state_bytes);
    char tmp_dir[CONFIG_PATH_BYTES], path[CONFIG_PATH_BYTES + 32];
    snprintf(out->dir, sizeof out->dir, "%s", dir && *dir ? dir : supervisor_base());
    if ((size_t)snprintf(tmp_dir, sizeof tmp_dir, "%s/strata-calib-XXXXXX", out->dir) >=
            sizeof tmp_dir || !mkdtemp(tmp_dir))
        return err_set(e, ERR_IO, "%s: cannot make a directory there to time checkpoints: %s",
                       out->dir, strerror(errno));
    snprintf(path, sizeof path, "%s/rank-0.ckpt", tmp_dir);
    unsigned char *state = XCALLOC(e, (size_t)state_bytes, 1);
    unsigned char *back = XCALLOC(e, (size_t)state_bytes, 1);
    double *write_s = XCALLOC(e, (size_t)n, sizeof *write_s);
    double *read_s = XCALLOC(e, (size_t)n, sizeof *read_s);
    int rc = state && back && write_s && read_s ? 0 : ERR_NOMEM;
    for (int64_t i = 0; rc == 0 && i < state_bytes; i++) state[i] = (unsigned char)(i * 131);
    /* write then read, in turn: a restart reads the checkpoint just
     * written, from the page cache as in a run */
    for (int k = 0; rc == 0 && k < n; k++) {
        double t0 = now_s();
        rc = file_write_atomic(path, state, (size_t)state_bytes, e);
        double t1 = now_s();
        if (rc == 0 && read_whole(path, back, (size_t)state_bytes) != (long)state_bytes)
            rc = err_set(e, ERR_IO, "%s: cannot read back the %lld bytes just written", path,
                         (long long)state_bytes);
        write_s[k] = t1 - t0;
        read_s[k] = now_s() - t1;
    }
    if (rc == 0) {
        out->state_bytes = state_bytes;
        out->n_io = n;
        out->write_s = validate_quantile(write_s, n, 0.5);
        out->read_s = validate_quantile(read_s, n, 0.5);
        /* a clock too coarse to see the read is a free one (0 = free) */
        out->ckpt_write_bw_bytes_per_s = out->write_s > 0 ? (double)state_bytes / out->write_s : 0;
        out->ckpt_read_bw_bytes_per_s = out->read_s > 0 ? (double)state_bytes / out->read_s : 0;
    }
    unlink(path);
    rmdir(tmp_dir);
    free(state);
    free(back);
    free(write_s);
    free(read_s);
    return rc;
}

int calib_relaunch_counts(long cores)
{
    if (cores < 1) cores = 2;
    return cores + 1 < CALIB_RELAUNCH_MAX_RANKS ? (int)cores + 1 : CALIB_RELAUNCH_MAX_RANKS;
}

int calib_measure_relaunch(const struct config *cfg, const struct workload *wl,
                           const char *strata_bin, struct calib_failure *out, struct err *e)
{
    struct config *job = XCALLOC(e, 1, sizeof *job);
    if (!job) return ERR_NOMEM;
    *job = *cfg;
    job->positional = NULL;
    job->n_positional = 0;
    /* a rank dies as step 2 starts (below); every rank starts again from
     * scratch (no checkpoint: its reading is timed above) and runs the 4
     * steps */
    static const char *const set[][2] = {{"steps", "4"},
                                         {"on-failure", "restart"}, {"checkpoint-every", "0"},
                                         {"eval-every", "0"}, {"resume", ""}};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof set / sizeof set[0]; i++)
        rc = config_set(job, set[i][0], set[i][1], ~0u, e);
    const int n_counts = calib_relaunch_counts(sysconf(_SC_NPROCESSORS_ONLN));
    double relaunch_s[CALIB_RELAUNCH_MAX_RANKS][CALIB_RELAUNCH_RUNS];
    double detect_s[CALIB_RELAUNCH_MAX_RANKS * CALIB_RELAUNCH_RUNS];
    for (int c = 0; rc == 0 && c < n_counts; c++) {
        const int ranks = c + 1;
        /* rank 1 dies as step 2 starts (rank 0 when it is alone) */
        char fail[32];
        snprintf(fail, sizeof fail, "%d@2", ranks > 1 ? 1 : 0);
        rc = config_set(job, "fail", fail, ~0u, e);
        for (int k = 0; rc == 0 && k < CALIB_RELAUNCH_RUNS; k++) {
            struct report_doc doc;
            rc = real_job_run(job, wl, "mirrored", ranks, strata_bin, &doc, e);
            if (rc < 0) break;
            const struct report *r = &doc.reports[0];
            if (!r->failure.happened)
                rc = err_set(e, ERR_RUN, "calibrate: the supervised run on %d rank%s reported "
                             "no failure", ranks, ranks == 1 ? "" : "s");
            relaunch_s[c][k] = r->failure.relaunch_s;
            detect_s[c * CALIB_RELAUNCH_RUNS + k] = r->failure.detect_s;
            report_doc_release(&doc);
        }
    }
    free(job);
    if (rc < 0) {
        err_prefix(e, "calibrate, timing a relaunch");
        return rc;
    }
    out->n_runs = CALIB_RELAUNCH_RUNS;
    out->relaunch = (struct relaunch_points){.n = n_counts};
    for (int c = 0; c < n_counts; c++) {
        out->relaunch.ranks[c] = c + 1;
        out->relaunch.s[c] = validate_quantile(relaunch_s[c], CALIB_RELAUNCH_RUNS, 0.5);
    }
    out->detect_s = validate_quantile(detect_s, n_counts * CALIB_RELAUNCH_RUNS, 0.5);
    return 0;
}

int calib_failure_format(const struct calib_failure *f, char *buf, size_t n, struct err *e)
{
    char points[FAILURE_MAX_RELAUNCH_POINTS * 40];
    if (failure_relaunch_points_format(&f->relaunch, points, sizeof points) >= sizeof points)
        return err_set(e, ERR_INPUT, "%s: %d relaunch points do not fit", CALIB_FAILURE_ENV,
                       f->relaunch.n);
    int w = snprintf(buf, n, "runs=%d;relaunch_s_at_ranks=%s;detect_s=%.17g", f->n_runs, points,
                     f->detect_s);
    if (w < 0 || (size_t)w >= n)
        return err_set(e, ERR_INPUT, "%s: %d bytes do not fit %zu", CALIB_FAILURE_ENV, w, n);
    return 0;
}

int calib_failure_parse(const char *text, struct calib_failure *f, struct err *e)
{
    static const char points_key[] = ";relaunch_s_at_ranks=", detect_key[] = ";detect_s=";
    int runs = 0, used = 0;
    double detect_s = 0;
    char points[FAILURE_MAX_RELAUNCH_POINTS * 40];
    const char *p = strstr(text, points_key), *d = p ? strstr(p, detect_key) : NULL;
    bool ok = p && d && (size_t)(d - p) - (sizeof points_key - 1) < sizeof points &&
              sscanf(text, "runs=%d%n", &runs, &used) == 1 && text + used == p && runs >= 1 &&
              sscanf(d, ";detect_s=%lf%n", &detect_s, &used) == 1 && d[used] == '\0' &&
              isfinite(detect_s) && detect_s >= 0;
    struct relaunch_points pts = {0};
    if (ok) {
        size_t len = (size_t)(d - p) - (sizeof points_key - 1);
        memcpy(points, p + sizeof points_key - 1, len);
        points[len] = '\0';
        ok = failure_relaunch_points_parse(points, "relaunch_s_at_ranks", &pts, NULL) == 0;
    }
    if (!ok)
        return err_set(e, ERR_INPUT, "%s: '%.120s' is not runs=N;relaunch_s_at_ranks=R:S,...;"
                       "detect_s=S (N >= 1, ranks increasing from 1, S >= 0)",
                       CALIB_FAILURE_ENV, text);
    f->n_runs = runs;
    f->relaunch = pts;
    f->detect_s = detect_s;
    return 0;
}

void calib_failure_profile(const struct calib_failure *f, struct cluster *c)
{
    c->ckpt_write_bw_bytes_per_s = f->ckpt_write_bw_bytes_per_s;
    c->ckpt_read_bw_bytes_per_s = f->ckpt_read_bw_bytes_per_s;
    /* the measured points price a relaunch; the line of older profiles is
     * not written beside them */
    c->restart_s = 0;
    c->restart_per_rank_s = 0;
    c->restart_s_at_ranks = f->relaunch;
    c->detect_s = f->detect_s;
}

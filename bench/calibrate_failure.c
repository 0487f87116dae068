/* The failure costs of this machine (calibrate_failure.h). */
#include "calibrate_failure.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "../core/ckpt_file.h"
#include "../core/fileio.h"
#include "../core/temp_files.h"
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

/* Save k's directory in base, and its rank file. */
static void save_paths(const char *base, int k, char *dir, size_t n_dir, char *file, size_t n_file)
{
    snprintf(dir, n_dir, "%s/step-%010d", base, k);
    snprintf(file, n_file, "%s/rank-0.ckpt", dir);
}

/* Removes save k's files and directory from base (best effort). */
static void remove_save(const char *base, int k)
{
    char dir[CONFIG_PATH_BYTES + 32], file[CONFIG_PATH_BYTES + 64];
    save_paths(base, k, dir, sizeof dir, file, sizeof file);
    unlink(file);
    char manifest[CONFIG_PATH_BYTES + 64];
    snprintf(manifest, sizeof manifest, "%s/MANIFEST", dir);
    unlink(manifest);
    rmdir(dir);
}

/* Save k of a rank's state as real/checkpoint.c makes one, less the ranks'
 * agreement: its step directory, the rank's file built in memory (the
 * records copied, the CRC computed: core/ckpt_file) and written
 * atomically, the MANIFEST beside it, and the save before the previous one
 * removed (real runs keep the newest two). A save costs all of that, not
 * one file's write: quiet on 2 cores, one write of 2.68 MB took 1.15 ms and
 * a real run's save about 8 ms (docs/failures.md). */
static int save_like_a_run(const char *base, int k, const unsigned char *state, int64_t bytes,
                           struct err *e)
{
    char dir[CONFIG_PATH_BYTES + 32], file[CONFIG_PATH_BYTES + 64], manifest[CONFIG_PATH_BYTES + 64];
    save_paths(base, k, dir, sizeof dir, file, sizeof file);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return err_set(e, ERR_IO, "%s: cannot make a directory there to time checkpoints: %s",
                       dir, strerror(errno));
    struct ckpt_writer w;
    ckpt_writer_init(&w);
    size_t half = (size_t)bytes / 2;   /* parameters, then their momentum */
    int rc = ckpt_writer_add(&w, CKPT_PARAMS, state, half, e);
    if (rc == 0) rc = ckpt_writer_add(&w, CKPT_MOMENTUM, state + half, (size_t)bytes - half, e);
    if (rc == 0) rc = ckpt_writer_finish(&w, e);
    if (rc == 0) rc = file_write_atomic(file, w.buf, w.len, e);
    ckpt_writer_release(&w);
    static const char text[] = "strata-checkpoint 1\nstep 0\nranks 1\n";
    snprintf(manifest, sizeof manifest, "%s/MANIFEST", dir);
    if (rc == 0) rc = file_write_atomic(manifest, text, sizeof text - 1, e);
    if (rc == 0 && k >= 2) remove_save(base, k - 2);
    return rc;
}

/* Reads save k back as a resumed run does: whole, then checked (CRC and
 * records). */
static int load_like_a_run(const char *base, int k, unsigned char *buf, size_t n, struct err *e)
{
    char dir[CONFIG_PATH_BYTES + 32], file[CONFIG_PATH_BYTES + 64];
    save_paths(base, k, dir, sizeof dir, file, sizeof file);
    long got = read_whole(file, buf, n);
    if (got < 0 || (size_t)got == n)   /* the file is the state plus its framing: < n */
        return err_set(e, ERR_IO, "%s: cannot read back the checkpoint just written", file);
    struct ckpt_view v;
    return ckpt_parse(buf, (size_t)got, file, &v, e);
}

int calib_measure_checkpoint_io(const char *dir, int64_t state_bytes, int n,
                                struct calib_failure *out, struct err *e)
{
    if (n < 1 || state_bytes < 2)
        return err_set(e, ERR_INPUT, "calibrate: %d checkpoint writes of %lld bytes", n,
                       (long long)state_bytes);
    char tmp_dir[CONFIG_PATH_BYTES];
    snprintf(out->dir, sizeof out->dir, "%s", dir && *dir ? dir : supervisor_base());
    if ((size_t)snprintf(tmp_dir, sizeof tmp_dir, "%s/strata-calib-XXXXXX", out->dir) >=
            sizeof tmp_dir || !mkdtemp(tmp_dir))
        return err_set(e, ERR_IO, "%s: cannot make a directory there to time checkpoints: %s",
                       out->dir, strerror(errno));
    /* Ctrl-C or SIGTERM while timing removes it and its saves (a step
     * directory each), as the end below does */
    int slot = temp_files_track_tree(tmp_dir, 1);
    /* room for the file's framing (header, record heads, CRC) beyond the state */
    const size_t back_bytes = (size_t)state_bytes + 4096;
    unsigned char *state = XCALLOC(e, (size_t)state_bytes, 1);
    unsigned char *back = XCALLOC(e, back_bytes, 1);
    double *write_s = XCALLOC(e, (size_t)n, sizeof *write_s);
    double *read_s = XCALLOC(e, (size_t)n, sizeof *read_s);
    int rc = state && back && write_s && read_s ? 0 : ERR_NOMEM;
    for (int64_t i = 0; rc == 0 && i < state_bytes; i++) state[i] = (unsigned char)(i * 131);
    /* save then load, in turn: a restart reads the checkpoint just
     * written, from the page cache as in a run */
    int k = 0;
    for (; rc == 0 && k < n; k++) {
        double t0 = now_s();
        rc = save_like_a_run(tmp_dir, k, state, state_bytes, e);
        double t1 = now_s();
        if (rc == 0) rc = load_like_a_run(tmp_dir, k, back, back_bytes, e);
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
    /* every save, not the newest two alone: a save that failed before it
     * removed the one two back left three (tests/test_faults.c) */
    for (int j = 0; j <= k; j++) remove_save(tmp_dir, j);
    rmdir(tmp_dir);
    temp_files_forget(slot);
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
     * steps (--epochs would set others); calibrate's --checkpoint-dir is
     * where the reading and writing were timed, nothing of these jobs' */
    static const char *const set[][2] = {{"steps", "4"}, {"epochs", "0"},
                                         {"on-failure", "restart"}, {"checkpoint-every", "0"},
                                         {"checkpoint-dir", ""}, {"eval-every", "0"},
                                         {"resume", ""}};
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

/* Checkpoints' files and directories, and the checks that need no MPI
 * (checkpoint_files.h, real/checkpoint.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../strategies/strategy.h"
#include "checkpoint.h"
#include "checkpoint_files.h"

/* ---- the directory ---------------------------------------------------------- */

void checkpoint_step_dir(char *out, size_t n, const char *dir, int64_t step)
{
    snprintf(out, n, "%s/step-%010" PRId64, dir, step);
}

/* mkdir -p path: 0, or -1 with errno. */
int checkpoint_make_dirs(char *path)
{
    for (char *s = path + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        int rc = mkdir(path, 0755);
        *s = '/';
        if (rc != 0 && errno != EEXIST) return -1;
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* "step-N" -> N, or -1. */
static int64_t step_of_name(const char *name)
{
    if (strncmp(name, "step-", 5) != 0 || !name[5]) return -1;
    char *end;
    long long s = strtoll(name + 5, &end, 10);
    return *end == '\0' && s >= 0 ? (int64_t)s : -1;
}

/* Is dir/name a whole checkpoint (its MANIFEST there and naming its step)? */
static bool is_whole(const char *dir, const char *name, int64_t step)
{
    char path[CKPT_PATH_BYTES + 64];
    snprintf(path, sizeof path, "%s/%s/" MANIFEST_NAME, dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    long long s = -1, ranks = 0;
    int version = 0;
    bool ok = fscanf(f, "strata-checkpoint %d step %lld ranks %lld", &version, &s, &ranks) == 3 &&
              version == 1 && s == step && ranks > 0;
    fclose(f);
    return ok;
}

/* dir itself a whole checkpoint ("DIR/step-N" with its MANIFEST)? its step, else -1 */
int64_t checkpoint_step_of_dir(const char *dir)
{
    char parent[CKPT_PATH_BYTES], name[CKPT_PATH_BYTES];
    if ((size_t)snprintf(parent, sizeof parent, "%s", dir) >= sizeof parent) return -1;
    size_t len = strlen(parent);
    while (len > 1 && parent[len - 1] == '/') parent[--len] = '\0';
    char *slash = strrchr(parent, '/');
    snprintf(name, sizeof name, "%s", slash ? slash + 1 : parent);
    int64_t step = step_of_name(name);
    if (step < 0) return -1;
    if (!slash) strcpy(parent, ".");
    else if (slash == parent) strcpy(parent, "/");
    else *slash = '\0';
    return is_whole(parent, name, step) ? step : -1;
}

void checkpoint_resume_dir(const struct config *cfg, char *out, size_t n)
{
    snprintf(out, n, "%s", cfg->resume);
    if (!cfg->resume[0] || checkpoint_step_of_dir(cfg->resume) < 0) return;
    size_t len = strlen(out);
    while (len > 1 && out[len - 1] == '/') out[--len] = '\0';
    char *slash = strrchr(out, '/');
    if (slash == out) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(out, n, ".");
}

/* checkpoint_newest among the steps below `before`. */
static int newest_before(const char *dir, int64_t before, char *path, size_t n, int64_t *step,
                         struct err *e)
{
    /* path is written only at the end: it may be dir's own buffer */
    *step = -1;
    int64_t own = checkpoint_step_of_dir(dir);
    if (own >= 0) {   /* a step directory named directly: that one */
        if (own >= before) return 1;
        if (strlen(dir) >= n)
            return err_set(e, ERR_INPUT, "%s: the checkpoint path is too long", dir);
        memmove(path, dir, strlen(dir) + 1);
        *step = own;
        return 0;
    }
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR) return 1;
        return err_set(e, ERR_IO, "%s: cannot read the checkpoint directory (%s)", dir,
                       strerror(errno));
    }
    int64_t best = -1;
    for (struct dirent *de; (de = readdir(d));) {
        int64_t s = step_of_name(de->d_name);
        if (s > best && s < before && is_whole(dir, de->d_name, s)) best = s;
    }
    closedir(d);
    if (best < 0) return 1;
    char p[2 * CKPT_PATH_BYTES];
    checkpoint_step_dir(p, sizeof p, dir, best);
    if (strlen(p) >= n) return err_set(e, ERR_INPUT, "%s: the checkpoint path is too long", p);
    memcpy(path, p, strlen(p) + 1);
    *step = best;
    return 0;
}

int checkpoint_newest(const char *dir, char *path, size_t n, int64_t *step, struct err *e)
{
    return newest_before(dir, INT64_MAX, path, n, step, e);
}

int checkpoint_newest_before(const char *dir, int64_t before, char *path, size_t n,
                             int64_t *step, struct err *e)
{
    return newest_before(dir, before, path, n, step, e);
}

/* Removes dir's plain files, then dir. Best effort: what cannot be removed
 * stays (a checkpoint left behind is wasted space, not a wrong result). */
void checkpoint_remove_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char path[CKPT_PATH_BYTES + 300];
        /* a path cut short could name another file: leave that one */
        int len = snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (len < 0 || (size_t)len >= sizeof path) continue;
        if (unlink(path) != 0 && depth > 0) checkpoint_remove_tree(path, depth - 1);
    }
    closedir(d);
    rmdir(dir);
}

/* The temporaries (core/fileio's ".tmp.XXXXXX") in step directory path. */
static void remove_temporaries(const char *path)
{
    DIR *d = opendir(path);
    for (struct dirent *de; d && (de = readdir(d));) {
        char file[CKPT_PATH_BYTES + 300];
        int len = snprintf(file, sizeof file, "%s/%s", path, de->d_name);
        if (strstr(de->d_name, ".tmp.") && len > 0 && (size_t)len < sizeof file) unlink(file);
    }
    if (d) closedir(d);
}

void checkpoint_remove_partial(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *de; d && (de = readdir(d));) {
        int64_t s = step_of_name(de->d_name);
        char path[CKPT_PATH_BYTES + 300];
        int len = snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (s < 0 || len < 0 || (size_t)len >= sizeof path) continue;
        if (is_whole(dir, de->d_name, s)) remove_temporaries(path);
        else checkpoint_remove_tree(path, 0);
    }
    if (d) closedir(d);
}

/* Keeps the newest two whole checkpoints and any newer partial one; older
 * step directories go, the oldest whole one last of all (it is removed
 * only once two newer ones are whole). */
void checkpoint_prune(const char *dir)
{
    int64_t newest = -1, second = -1;
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *de; (de = readdir(d));) {
        int64_t s = step_of_name(de->d_name);
        if (s < 0 || !is_whole(dir, de->d_name, s)) continue;
        if (s > newest) {
            second = newest;
            newest = s;
        } else if (s > second) {
            second = s;
        }
    }
    rewinddir(d);
    int64_t keep_from = second >= 0 ? second : newest;
    for (struct dirent *de; (de = readdir(d));) {
        int64_t s = step_of_name(de->d_name);
        if (s < 0 || s >= keep_from) continue;
        char path[CKPT_PATH_BYTES + 300];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        checkpoint_remove_tree(path, 0);
    }
    closedir(d);
}

/* What a checkpoint of this run at step, written by rank, says of itself:
 * nothing here needs MPI or the model (the supervisor checks a --resume
 * before the job starts). */
void checkpoint_ident_of(const struct config *cfg, const struct plan *p, int64_t n_params, int rank,
                     int64_t step, struct ckpt_ident *id)
{
    memset(id, 0, sizeof *id);
    snprintf(id->strategy, sizeof id->strategy, "%s", p->strategy);
    snprintf(id->model, sizeof id->model, "%s", cfg->model);
    snprintf(id->data, sizeof id->data, "%s", cfg->data);
    id->workers = p->n_workers;
    id->servers = p->n_servers;
    id->batch = p->batch;
    id->microbatches = p->n_microbatches;
    id->seed = cfg->seed;
    /* as the strategy uses them: --chunks 3 changes nothing of mirrored's */
    const struct strategy *st = strategy_find(p->strategy, &(struct err){0});
    id->chunks = st && strategy_reads(st, "chunks") ? cfg->chunks : 1;
    id->dp = st && strategy_reads(st, "dp") && cfg->dp > 1 ? cfg->dp : 1;
    id->inflight = st && strategy_reads(st, "inflight") && cfg->inflight > 1 ? cfg->inflight : 1;
    id->lr = cfg->lr;
    id->momentum = cfg->momentum;
    id->weight_decay = cfg->weight_decay;
    id->n_params = n_params;
    id->rank = rank;
    id->n_ranks = p->n_ranks;
    id->step = step;
}

/* The bytes of path, read whole (caller frees). ERR_INPUT naming it. */
int checkpoint_slurp(const char *path, unsigned char **out, size_t *n, struct err *e)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, ERR_INPUT, "%s: cannot open (%s); the checkpoint is not whole",
                           path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        unsigned char *grown = realloc(buf, cap *= 2);
        if (!grown) free(buf);
        buf = grown;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf) return err_set(e, ERR_NOMEM, "%s: out of memory reading it", path);
    if (bad) {
        free(buf);
        return err_set(e, ERR_IO, "%s: cannot read it", path);
    }
    *out = buf;
    *n = len;
    return 0;
}

/* Rank 0: the manifest of the checkpoint to resume: its rank count. */
int checkpoint_read_manifest(const char *dir, int64_t *ranks, struct err *e)
{
    char path[CKPT_PATH_BYTES + 32];
    snprintf(path, sizeof path, "%s/" MANIFEST_NAME, dir);
    FILE *f = fopen(path, "r");
    long long s = 0, r = 0;
    int version = 0;
    bool ok = f && fscanf(f, "strata-checkpoint %d step %lld ranks %lld", &version, &s, &r) == 3 &&
              r > 0;
    if (f) fclose(f);
    if (!ok) return err_set(e, ERR_INPUT, "%s: cannot read it", path);
    *ranks = r;
    return 0;
}

static bool server_has_workers(const struct plan *p, int server)
{
    for (int r = 0; r < p->n_workers; r++)
        for (size_t i = 0; i < p->ranks[r].ops.len; i++)
            if (p->ranks[r].ops.items[i].kind == OP_PUSH && p->ranks[r].ops.items[i].peer == server)
                return true;
    return false;
}

int checkpoint_check(const struct config *cfg, const struct plan *p, struct err *e)
{
    if (cfg->checkpoint_every <= 0 && !cfg->resume[0]) return 0;
    /* a server joins a checkpoint when its workers ask it to: one that no
     * worker pushes to would never join */
    for (int r = p->n_workers; r < p->n_ranks; r++)
        if (!server_has_workers(p, r))
            return err_set(e, ERR_INPUT, "--checkpoint-every/--resume: server rank %d holds no "
                           "layer any worker pushes (fewer --servers)", r);
    /* A checkpoint holds parameters and momentum at a step boundary, not
     * the gradients of the steps still in flight (core/plan.h): a resume
     * would apply zeros in their place. */
    if (p->n_grad_slots > 1)
        return err_set(e, ERR_INPUT, "--checkpoint-every/--resume: %s keeps %d steps in flight, "
                       "whose gradients a checkpoint does not hold; use --inflight 1",
                       p->strategy, p->n_grad_slots);
    if (!cfg->resume[0]) return 0;
    char path[CKPT_PATH_BYTES + 32];
    int64_t step = 0;
    int rc = checkpoint_newest(cfg->resume, path, sizeof path, &step, e);
    struct stat st;
    /* a mistyped path read as an empty directory: say which it is */
    if (rc == 1 && stat(cfg->resume, &st) != 0)
        return err_set(e, ERR_INPUT, "--resume %s: %s", cfg->resume, strerror(errno));
    if (rc == 1 && !S_ISDIR(st.st_mode))
        return err_set(e, ERR_INPUT, "--resume %s: not a directory (give the --checkpoint-dir "
                       "of the run, or one step-N directory in it)", cfg->resume);
    if (rc == 1)
        return err_set(e, ERR_INPUT, "--resume %s: no whole checkpoint there (a step-N "
                       "directory with its " MANIFEST_NAME ")", cfg->resume);
    return rc;
}

/* The nearest existing directory at or above path (path itself when it
 * exists) into out; -1 with errno when none can be looked at. */
static int nearest_existing(const char *path, char *out, size_t n, struct stat *st)
{
    snprintf(out, n, "%s", path);
    for (;;) {
        if (stat(out, st) == 0) return 0;
        if (errno != ENOENT && errno != ENOTDIR) return -1;
        size_t len = strlen(out);
        while (len > 1 && out[len - 1] == '/') out[--len] = '\0';
        char *slash = strrchr(out, '/');
        if (!slash) {
            snprintf(out, n, ".");
        } else if (slash == out) {
            out[1] = '\0';
        } else {
            *slash = '\0';
        }
    }
}

/* checkpoint_check_dir's checks of dir, named by the option `as`. */
static int check_dir_writable(const char *dir, const char *as, struct err *e)
{
    /* room for DIR/step-NNNNNNNNNN/rank-N.ckpt.tmp.XXXXXX (real/checkpoint.h) */
    if (strlen(dir) + 64 >= CKPT_PATH_BYTES)
        return err_set(e, ERR_INPUT, "%s: a path of %zu bytes is too long (at "
                       "most %d)", as, strlen(dir), CKPT_PATH_BYTES - 64);
    char at[CKPT_PATH_BYTES];
    struct stat st;
    if (nearest_existing(dir, at, sizeof at, &st) != 0)
        return err_set(e, ERR_INPUT, "%s %s: cannot look at it (%s)", as, dir,
                       strerror(errno));
    bool is_dir_itself = !strcmp(at, dir);
    if (!S_ISDIR(st.st_mode))
        return is_dir_itself
                   ? err_set(e, ERR_INPUT, "%s %s: not a directory", as, dir)
                   : err_set(e, ERR_INPUT, "%s %s: cannot make it: %s is not a "
                             "directory", as, dir, at);
    if (access(at, W_OK | X_OK) != 0)
        return is_dir_itself
                   ? err_set(e, ERR_INPUT, "%s %s: cannot write there (%s)", as, dir,
                             strerror(errno))
                   : err_set(e, ERR_INPUT, "%s %s: cannot make it in %s (%s)", as,
                             dir, at, strerror(errno));
    return 0;
}

int checkpoint_check_dir(const struct config *cfg, bool are_commits, struct err *e)
{
    if (cfg->checkpoint_dir[0])
        return check_dir_writable(cfg->checkpoint_dir, "--checkpoint-dir", e);
    /* commits go to the run directory: a read-only --resume is only read
     * (it was refused, and told to give a --checkpoint-dir that shrink
     * and continue refuse in turn) */
    if (cfg->checkpoint_every <= 0 || !cfg->resume[0] || are_commits) return 0;
    /* a resumed run's checkpoints go beside the one it resumed from: a
     * read-only one there failed the run at its first checkpoint */
    char dir[CKPT_PATH_BYTES];
    checkpoint_resume_dir(cfg, dir, sizeof dir);
    int rc = check_dir_writable(dir, "--resume", e);
    if (rc < 0) {
        char msg[ERR_MSG_BYTES];
        snprintf(msg, sizeof msg, "%s", e->msg);
        err_set(e, rc, "%s: --checkpoint-every writes a resumed run's checkpoints there; give "
                "--checkpoint-dir DIR for them", msg);
    }
    return rc;
}

/* One file of the checkpoint in dir (step, of file_ranks ranks), checked
 * as checkpoint_check_resume says; *is_damaged when it is missing or its
 * bytes are bad (not when it is whole and of another run). */
static int check_file(const struct config *cfg, const struct plan *p, int64_t n_params,
                      const char *dir, int64_t step, int file_rank, bool *is_damaged,
                      struct err *e)
{
    char path[CKPT_PATH_BYTES + 64];
    snprintf(path, sizeof path, "%s/rank-%d.ckpt", dir, file_rank);
    unsigned char *buf = NULL;
    size_t n = 0;
    *is_damaged = true;
    TRY(checkpoint_slurp(path, &buf, &n, e));
    struct ckpt_view v;
    struct ckpt_ident file, run;
    checkpoint_ident_of(cfg, p, n_params, file_rank, step, &run);
    int rc = ckpt_parse(buf, n, path, &v, e);
    *is_damaged = rc < 0;
    if (rc == 0) rc = ckpt_ident_read(&v, path, &file, e);
    if (rc == 0) rc = ckpt_ident_match(&file, &run, p->data_parallel, path, e);
    if (rc == 0 && (file.step != step || file.rank != file_rank))
        rc = err_set(e, ERR_INPUT, "%s: holds rank %" PRId64 " at step %" PRId64 ", not rank %d "
                     "at step %" PRId64, path, file.rank, file.step, file_rank, step);
    free(buf);
    return rc;
}

int checkpoint_check_resume(const struct config *cfg, const struct plan *p, int64_t n_params,
                            int64_t steps, struct err *e)
{
    if (!cfg->resume[0]) return 0;
    TRY(checkpoint_check(cfg, p, e));
    char dir[CKPT_PATH_BYTES];
    int64_t step = 0, ranks = 0;
    int rc = checkpoint_newest(cfg->resume, dir, sizeof dir, &step, e);
    if (rc == 1)
        return err_set(e, ERR_INPUT, "--resume %s: no whole checkpoint there", cfg->resume);
    TRY(rc);
    TRY(checkpoint_read_manifest(dir, &ranks, e));
    int64_t file_workers = ranks - p->n_servers;
    if (file_workers < 1)
        return err_set(e, ERR_INPUT, "%s: a checkpoint of %" PRId64 " ranks cannot hold %d "
                       "servers", dir, ranks, p->n_servers);
    if (p->n_workers != file_workers && !p->data_parallel)
        return err_set(e, ERR_INPUT, "%s: written by a run of %" PRId64 " workers; this run has %d "
                       "(only data-parallel plans resume on another count)", dir, file_workers,
                       p->n_workers);
    if (steps > 0 && step >= steps) {
        /* one below the run's steps may be kept beside it (two are): say
         * how to take that one, as --resume DIR always takes the newest */
        char older[CKPT_PATH_BYTES];
        int64_t older_step = 0;
        bool has_older = strcmp(dir, cfg->resume) != 0 &&
                         checkpoint_newest_before(cfg->resume, steps, older, sizeof older,
                                                  &older_step, &(struct err){0}) == 0;
        char also[CKPT_PATH_BYTES + 96] = "";
        if (has_older)
            snprintf(also, sizeof also, "; --resume %s takes the one of step %" PRId64, older,
                     older_step);
        return err_set(e, ERR_INPUT, "--resume %s: its checkpoint is at step %" PRId64 ", not "
                       "below this run's %" PRId64 " steps: nothing is left to run (more "
                       "--steps go on from it)%s", cfg->resume, step, steps, also);
    }
    /* every file: its CRC, and whose run it is (O(checkpoint size): read
     * once more here so that a bad one is strata's message, not an abort) */
    for (int r = 0; r < (int)ranks; r++) {
        bool is_damaged = false;
        rc = check_file(cfg, p, n_params, dir, step, r, &is_damaged, e);
        if (rc == 0) continue;
        /* a damaged newest checkpoint: the one before it (two are kept)
         * may be whole; say how to take it, since --resume DIR always
         * picks the newest. Not for another run's checkpoint: the older
         * one is that run's too. */
        char older[CKPT_PATH_BYTES];
        int64_t older_step = 0;
        struct err ignored = {0};
        if (is_damaged && rc == ERR_INPUT && strcmp(dir, cfg->resume) != 0 &&
            checkpoint_newest_before(cfg->resume, step, older, sizeof older, &older_step,
                                     &ignored) == 0) {
            char msg[ERR_MSG_BYTES];
            snprintf(msg, sizeof msg, "%s", e->msg);
            err_set(e, rc, "%s; to go back to the checkpoint of step %" PRId64 " before it, "
                    "--resume %s", msg, older_step, older);
        }
        return rc;
    }
    return 0;
}

/* ---- one run a directory ------------------------------------------------ */

#define LOCK_NAME ".strata-lock"

int checkpoint_dir_hold(const char *dir, int *fd, struct err *e)
{
    *fd = -1;
    char path[CKPT_PATH_BYTES + 32];
    if ((size_t)snprintf(path, sizeof path, "%s", dir) >= CKPT_PATH_BYTES)
        return err_set(e, ERR_INPUT, "--checkpoint-dir %s: the path is too long", dir);
    if (checkpoint_make_dirs(path) != 0)
        return err_set(e, ERR_IO, "%s: cannot make the checkpoint directory (%s)", dir,
                       strerror(errno));
    snprintf(path, sizeof path, "%s/" LOCK_NAME, dir);
    /* close-on-exec: the job's processes must not hold it past us */
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (f < 0)
        return err_set(e, ERR_IO, "%s: cannot make the lock that keeps other runs out of the "
                       "checkpoint directory (%s)", path, strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        int why = errno;
        char text[32] = "";
        ssize_t n = pread(f, text, sizeof text - 1, 0);
        text[n > 0 ? n : 0] = '\0';
        close(f);
        long pid = strtol(text, NULL, 10);
        if (why == EWOULDBLOCK)
            return err_set(e, ERR_INPUT, "%s: another strata run (pid %ld) is writing its "
                           "checkpoints there; two runs in one directory remove each other's: "
                           "give this one its own --checkpoint-dir, or wait for that one", dir,
                           pid);
        return err_set(e, ERR_IO, "%s: cannot lock it (%s)", path, strerror(why));
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(f, 0) != 0 || pwrite(f, pid, (size_t)len, 0) != len) {
        /* the lock holds all the same; only the message naming us is lost */
    }
    *fd = f;
    return 0;
}

void checkpoint_dir_release(int fd)
{
    if (fd >= 0) close(fd);   /* and with it the flock */
}

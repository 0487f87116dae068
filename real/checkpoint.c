/* Checkpoints of real runs (real/checkpoint.h). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/ckpt_file.h"
#include "../core/fileio.h"
#include "../core/ps_policy.h"
#include "checkpoint.h"
#include "heartbeat.h"
#include "host_copy.h"
#include "mpi_check.h"

#define CKPT_PATH_BYTES 4096
#define MANIFEST_NAME "MANIFEST"

struct checkpointer {
    char dir[CKPT_PATH_BYTES];     /* where checkpoints go; "" = none are written */
    bool is_temporary;             /* made here: removed at a successful end */
    int64_t every;                 /* --checkpoint-every */
    double spent_s;                /* writing, on this rank */
    int n_written;
    /* resumed: a worker's links, a server's state */
    struct checkpoint_link *links;
    int n_links;
    bool has_server;
    struct checkpoint_server server;
    int64_t *last_applied;
};

/* ---- the directory ---------------------------------------------------------- */

static void step_dir(char *out, size_t n, const char *dir, int64_t step)
{
    snprintf(out, n, "%s/step-%010" PRId64, dir, step);
}

/* mkdir -p path: 0, or -1 with errno. */
static int make_dirs(char *path)
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
static int64_t step_of_dir(const char *dir)
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

/* checkpoint_newest among the steps below `before`. */
static int newest_before(const char *dir, int64_t before, char *path, size_t n, int64_t *step,
                         struct err *e)
{
    /* path is written only at the end: it may be dir's own buffer */
    *step = -1;
    int64_t own = step_of_dir(dir);
    if (own >= 0) {   /* a step directory named directly: that one */
        if (own >= before) return 1;
        if (strlen(dir) >= n) return err_set(e, ERR_INPUT, "%s: the checkpoint path is too long", dir);
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
    step_dir(p, sizeof p, dir, best);
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
static void remove_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char path[CKPT_PATH_BYTES + 300];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (unlink(path) != 0 && depth > 0) remove_tree(path, depth - 1);
    }
    closedir(d);
    rmdir(dir);
}

/* Keeps the newest two whole checkpoints and any newer partial one; older
 * step directories go, the oldest whole one last of all (it is removed
 * only once two newer ones are whole). */
static void prune(const char *dir)
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
        remove_tree(path, 0);
    }
    closedir(d);
}

/* ---- what identifies this run ------------------------------------------------ */

/* What a checkpoint of this run at step, written by rank, says of itself:
 * nothing here needs MPI or the model (the supervisor checks a --resume
 * before the job starts). */
static void ident_of(const struct config *cfg, const struct plan *p, int64_t n_params, int rank,
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
    id->lr = cfg->lr;
    id->momentum = cfg->momentum;
    id->weight_decay = cfg->weight_decay;
    id->n_params = n_params;
    id->rank = rank;
    id->n_ranks = p->n_ranks;
    id->step = step;
}

static void run_ident(const struct real_ctx *ctx, int64_t step, struct ckpt_ident *id)
{
    ident_of(ctx->cfg, ctx->p, ctx->m->n_params, ctx->rank, step, id);
}

static int64_t steps_per_epoch(const struct real_ctx *ctx)
{
    return ctx->rank < ctx->p->n_workers ? sampler_steps_per_epoch(ctx->data.train.n, ctx->p->batch)
                                         : 0;
}

/* ---- writing -------------------------------------------------------------------- */

/* This rank's file, built in w. */
static int build(struct real_ctx *ctx, int64_t next_step, const struct checkpoint_extra *x,
                 struct ckpt_writer *w, struct err *e)
{
    struct ckpt_ident id;
    run_ident(ctx, next_step, &id);
    TRY(ckpt_writer_add_ident(w, &id, e));
    size_t bytes = (size_t)ctx->m->n_params * sizeof(float);
    struct host_copy hp = {0}, hm = {0};
    const void *params = host_copy_out(ctx->dev, &hp, ctx->m->params, bytes, e);
    const void *momentum = params ? host_copy_out(ctx->dev, &hm, ctx->m->momentum, bytes, e) : NULL;
    int rc = momentum ? ctx->dev->sync(e) : e->code;
    if (rc == 0) rc = ckpt_writer_add(w, CKPT_PARAMS, params, bytes, e);
    if (rc == 0) rc = ckpt_writer_add(w, CKPT_MOMENTUM, momentum, bytes, e);
    host_copy_release(&hp);
    host_copy_release(&hm);
    TRY(rc);
    size_t rng_bytes = 0;
    const void *rng = straggler_stream_state(ctx->strag, ctx->rank, &rng_bytes);
    if (rng) TRY(ckpt_writer_add(w, CKPT_RNG, rng, rng_bytes, e));
    int64_t per_epoch = steps_per_epoch(ctx);
    int64_t sampler[3] = {per_epoch ? next_step / per_epoch : 0,
                          per_epoch ? next_step % per_epoch : 0, per_epoch};
    TRY(ckpt_writer_add(w, CKPT_SAMPLER, sampler, sizeof sampler, e));
    if (x && x->n_links > 0)
        TRY(ckpt_writer_add(w, CKPT_LINKS, x->links, (size_t)x->n_links * sizeof *x->links, e));
    if (x && x->server) {
        const struct checkpoint_server *s = x->server;
        size_t n = 3 + (size_t)s->n_workers;
        int64_t *v = XCALLOC(e, n, sizeof *v);
        if (!v) return ERR_NOMEM;
        v[0] = s->version;
        v[1] = s->round;
        v[2] = s->n_workers;
        memcpy(v + 3, s->last_applied, (size_t)s->n_workers * sizeof *v);
        rc = ckpt_writer_add(w, CKPT_SERVER, v, n * sizeof *v, e);
        free(v);
        TRY(rc);
    }
    return ckpt_writer_finish(w, e);
}

static int write_rank_file(struct real_ctx *ctx, int64_t next_step, const struct checkpoint_extra *x,
                           struct err *e)
{
    char dir[CKPT_PATH_BYTES + 32], path[CKPT_PATH_BYTES + 64];
    step_dir(dir, sizeof dir, ctx->ckpt->dir, next_step);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return err_set(e, ERR_IO, "%s: cannot make the checkpoint directory (%s)", dir,
                       strerror(errno));
    snprintf(path, sizeof path, "%s/rank-%d.ckpt", dir, ctx->rank);
    struct ckpt_writer w;
    ckpt_writer_init(&w);
    int rc = build(ctx, next_step, x, &w, e);
    if (rc == 0) rc = file_write_atomic(path, w.buf, w.len, e);
    ckpt_writer_release(&w);
    return rc;
}

bool checkpoint_is_due(const struct real_ctx *ctx, int64_t steps_done)
{
    return ctx->ckpt && ctx->ckpt->every > 0 && steps_done > 0 && steps_done % ctx->ckpt->every == 0;
}

int checkpoint_save(struct real_ctx *ctx, int64_t next_step, const struct checkpoint_extra *x,
                    struct err *e)
{
    struct checkpointer *c = ctx->ckpt;
    double t0 = MPI_Wtime();
    TRY(mpi_check_agree(write_rank_file(ctx, next_step, x, e), e));
    if (ctx->rank == 0) {
        char dir[CKPT_PATH_BYTES + 32], path[CKPT_PATH_BYTES + 64], text[128];
        step_dir(dir, sizeof dir, c->dir, next_step);
        snprintf(path, sizeof path, "%s/" MANIFEST_NAME, dir);
        int n = snprintf(text, sizeof text, "strata-checkpoint 1\nstep %" PRId64 "\nranks %d\n",
                         next_step, ctx->p->n_ranks);
        TRY(file_write_atomic(path, text, (size_t)n, e));
        prune(c->dir);
    }
    c->spent_s += MPI_Wtime() - t0;
    c->n_written++;
    /* the supervisor adds a failed job's checkpoint time to the report's */
    heartbeat_checkpointed(ctx->hb, c->spent_s);
    return 0;
}

/* ---- resuming ---------------------------------------------------------------- */

/* The bytes of path, read whole (caller frees). ERR_INPUT naming it. */
static int slurp(const char *path, unsigned char **out, size_t *n, struct err *e)
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

/* A rank's file of the checkpoint in dir, read and checked against this
 * run: its bytes in *buf (caller frees) and records in v. */
static int load_file(struct real_ctx *ctx, const char *dir, int64_t step, int file_rank,
                     unsigned char **buf, struct ckpt_view *v, struct err *e)
{
    char path[CKPT_PATH_BYTES + 64];
    snprintf(path, sizeof path, "%s/rank-%d.ckpt", dir, file_rank);
    size_t n = 0;
    TRY(slurp(path, buf, &n, e));
    struct ckpt_ident file, run;
    run_ident(ctx, step, &run);
    int rc = ckpt_parse(*buf, n, path, v, e);
    if (rc == 0) rc = ckpt_ident_read(v, path, &file, e);
    if (rc == 0) rc = ckpt_ident_match(&file, &run, ctx->p->data_parallel, path, e);
    if (rc == 0 && (file.step != step || file.rank != file_rank))
        rc = err_set(e, ERR_INPUT, "%s: holds rank %" PRId64 " at step %" PRId64 ", not rank %d "
                     "at step %" PRId64, path, file.rank, file.step, file_rank, step);
    size_t bytes = (size_t)ctx->m->n_params * sizeof(float);
    if (rc == 0 && (v->len[CKPT_PARAMS] != bytes || v->len[CKPT_MOMENTUM] != bytes))
        rc = err_set(e, ERR_INPUT, "%s: its parameter or momentum block is not %" PRId64
                     " floats", path, ctx->m->n_params);
    if (rc < 0) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

static int restore_blocks(struct real_ctx *ctx, const struct ckpt_view *v, struct err *e)
{
    size_t bytes = (size_t)ctx->m->n_params * sizeof(float);
    struct host_copy h = {0};
    int rc = 0;
    float *blocks[2] = {ctx->m->params, ctx->m->momentum};
    const unsigned char *from[2] = {v->data[CKPT_PARAMS], v->data[CKPT_MOMENTUM]};
    for (int k = 0; k < 2 && rc == 0; k++) {
        void *into = host_copy_in(ctx->dev, &h, blocks[k], bytes, e);
        if (!into) {
            rc = e->code;
            break;
        }
        memcpy(into, from[k], bytes);
        host_copy_in_done(ctx->dev, &h, blocks[k], bytes);
    }
    host_copy_release(&h);
    return rc == 0 ? ctx->dev->sync(e) : rc;
}

/* Checks and keeps what v's records hold beyond the blocks: the stream
 * (from rng_v, this rank's own old file), the sampler, links, server. */
static int restore_rest(struct real_ctx *ctx, const struct ckpt_view *v, const struct ckpt_view *rng_v,
                        int64_t step, const char *dir, struct err *e)
{
    struct checkpointer *c = ctx->ckpt;
    size_t rng_bytes = 0;
    void *rng = straggler_stream_state(ctx->strag, ctx->rank, &rng_bytes);
    if (rng && rng_v->len[CKPT_RNG] != rng_bytes)
        return err_set(e, ERR_INPUT, "%s: rank %d's random stream is not %zu bytes of this "
                       "build's generator", dir, ctx->rank, rng_bytes);
    if (rng) memcpy(rng, rng_v->data[CKPT_RNG], rng_bytes);
    int64_t sampler[3] = {0};
    if (v->len[CKPT_SAMPLER] != sizeof sampler)
        return err_set(e, ERR_INPUT, "%s: rank %d's sampler record is malformed", dir, ctx->rank);
    memcpy(sampler, v->data[CKPT_SAMPLER], sizeof sampler);
    int64_t per_epoch = steps_per_epoch(ctx);
    if (sampler[2] != per_epoch ||
        (per_epoch && (sampler[0] != step / per_epoch || sampler[1] != step % per_epoch)))
        return err_set(e, ERR_INPUT, "%s: the sampler was at epoch %" PRId64 " position %" PRId64
                       " of %" PRId64 "; this run's data puts step %" PRId64 " elsewhere", dir,
                       sampler[0], sampler[1], sampler[2], step);
    if (v->data[CKPT_LINKS]) {
        size_t n = (size_t)(v->len[CKPT_LINKS] / sizeof *c->links);
        if (n * sizeof *c->links != v->len[CKPT_LINKS])
            return err_set(e, ERR_INPUT, "%s: a links record is malformed", dir);
        if (!(c->links = XCALLOC(e, n + 1, sizeof *c->links))) return ERR_NOMEM;
        memcpy(c->links, v->data[CKPT_LINKS], n * sizeof *c->links);
        c->n_links = (int)n;
    }
    if (v->data[CKPT_SERVER]) {
        uint64_t len = v->len[CKPT_SERVER];
        int64_t head[3];
        if (len < sizeof head) return err_set(e, ERR_INPUT, "%s: a server record is malformed", dir);
        memcpy(head, v->data[CKPT_SERVER], sizeof head);
        if (head[2] < 0 || head[2] > (1 << 24) || len != (uint64_t)(3 + head[2]) * sizeof(int64_t))
            return err_set(e, ERR_INPUT, "%s: a server record is malformed", dir);
        if (!(c->last_applied = XCALLOC(e, (size_t)head[2] + 1, sizeof *c->last_applied)))
            return ERR_NOMEM;
        memcpy(c->last_applied, v->data[CKPT_SERVER] + sizeof head, (size_t)head[2] * sizeof(int64_t));
        c->server = (struct checkpoint_server){.version = head[0], .round = head[1],
                                               .n_workers = head[2],
                                               .last_applied = c->last_applied};
        c->has_server = true;
    }
    return 0;
}

/* This rank's part of --resume, from the checkpoint dir at step. */
static int resume_rank(struct real_ctx *ctx, const char *dir, int64_t step, int file_workers,
                       struct err *e)
{
    const struct plan *p = ctx->p;
    bool is_worker = ctx->rank < p->n_workers;
    bool is_shrunk = p->n_workers < file_workers;
    /* a shrunk job's workers take replica 0's state; servers keep their index */
    int state_rank = !is_worker ? ctx->rank - p->n_workers + file_workers
                                : is_shrunk ? 0 : ctx->rank;
    unsigned char *buf = NULL, *own = NULL;
    struct ckpt_view v, own_v;
    TRY(load_file(ctx, dir, step, state_rank, &buf, &v, e));
    int rc = 0;
    if (state_rank != ctx->rank && is_worker) rc = load_file(ctx, dir, step, ctx->rank, &own, &own_v, e);
    if (rc == 0) rc = restore_blocks(ctx, &v, e);
    if (rc == 0) rc = restore_rest(ctx, &v, own ? &own_v : &v, step, dir, e);
    free(buf);
    free(own);
    return rc;
}

/* Rank 0's view, broadcast: where checkpoints go and what --resume found. */
struct shared {
    char dir[CKPT_PATH_BYTES];
    char resume[CKPT_PATH_BYTES];
    int64_t resume_step;
    int64_t file_workers;
    int rc;
};

/* Rank 0: the manifest of the checkpoint to resume: its rank count. */
static int read_manifest(const char *dir, int64_t *ranks, struct err *e)
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

static int rank0_plan(struct real_ctx *ctx, struct shared *sh, struct err *e)
{
    const struct config *cfg = ctx->cfg;
    if (cfg->checkpoint_every > 0) {
        /* a resumed run's checkpoints go on where it resumed from, by
         * default: beside the step directory when --resume named one */
        const char *dir = cfg->checkpoint_dir[0] ? cfg->checkpoint_dir : cfg->resume;
        char parent[CKPT_PATH_BYTES];
        if (!cfg->checkpoint_dir[0] && step_of_dir(cfg->resume) >= 0) {
            snprintf(parent, sizeof parent, "%s", cfg->resume);
            size_t len = strlen(parent);
            while (len > 1 && parent[len - 1] == '/') parent[--len] = '\0';
            char *slash = strrchr(parent, '/');
            if (slash == parent) slash[1] = '\0';
            else if (slash) *slash = '\0';
            else strcpy(parent, ".");
            dir = parent;
        }
        if (dir[0]) {
            snprintf(sh->dir, sizeof sh->dir, "%s", dir);
            if (make_dirs(sh->dir) != 0)
                return err_set(e, ERR_INPUT, "--checkpoint-dir %s: cannot make it (%s)", sh->dir,
                               strerror(errno));
        } else {
            const char *tmp = getenv("TMPDIR");
            snprintf(sh->dir, sizeof sh->dir, "%s/strata-ckpt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
            if (!mkdtemp(sh->dir))
                return err_set(e, ERR_IO, "%s: cannot make a temporary checkpoint directory (%s)",
                               sh->dir, strerror(errno));
        }
    }
    if (!cfg->resume[0]) return 0;
    int rc = checkpoint_newest(cfg->resume, sh->resume, sizeof sh->resume, &sh->resume_step, e);
    if (rc == 1)   /* gone since checkpoint_check looked */
        return err_set(e, ERR_INPUT, "--resume %s: no whole checkpoint there", cfg->resume);
    TRY(rc);
    int64_t ranks = 0;
    TRY(read_manifest(sh->resume, &ranks, e));
    sh->file_workers = ranks - ctx->p->n_servers;
    if (sh->file_workers < 1)
        return err_set(e, ERR_INPUT, "%s: a checkpoint of %" PRId64 " ranks cannot hold %d "
                       "servers", sh->resume, ranks, ctx->p->n_servers);
    if (sh->resume_step >= ctx->steps && ctx->steps > 0)
        return err_set(e, ERR_INPUT, "--resume %s: its checkpoint is at step %" PRId64 ", not "
                       "below this run's %" PRId64 " steps: nothing is left to run", cfg->resume,
                       sh->resume_step, ctx->steps);
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
    if (!cfg->resume[0]) return 0;
    char path[CKPT_PATH_BYTES + 32];
    int64_t step = 0;
    int rc = checkpoint_newest(cfg->resume, path, sizeof path, &step, e);
    if (rc == 1)
        return err_set(e, ERR_INPUT, "--resume %s: no whole checkpoint there (a step-N "
                       "directory with its " MANIFEST_NAME ")", cfg->resume);
    return rc;
}

/* One file of the checkpoint in dir (step, of file_ranks ranks), checked
 * as checkpoint_check_resume says. */
static int check_file(const struct config *cfg, const struct plan *p, int64_t n_params,
                      const char *dir, int64_t step, int file_rank, struct err *e)
{
    char path[CKPT_PATH_BYTES + 64];
    snprintf(path, sizeof path, "%s/rank-%d.ckpt", dir, file_rank);
    unsigned char *buf = NULL;
    size_t n = 0;
    TRY(slurp(path, &buf, &n, e));
    struct ckpt_view v;
    struct ckpt_ident file, run;
    ident_of(cfg, p, n_params, file_rank, step, &run);
    int rc = ckpt_parse(buf, n, path, &v, e);
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
    TRY(read_manifest(dir, &ranks, e));
    int64_t file_workers = ranks - p->n_servers;
    if (file_workers < 1)
        return err_set(e, ERR_INPUT, "%s: a checkpoint of %" PRId64 " ranks cannot hold %d "
                       "servers", dir, ranks, p->n_servers);
    if (p->n_workers != file_workers && !p->data_parallel)
        return err_set(e, ERR_INPUT, "%s: written by a run of %" PRId64 " workers; this run has %d "
                       "(only data-parallel plans resume on another count)", dir, file_workers,
                       p->n_workers);
    if (steps > 0 && step >= steps)
        return err_set(e, ERR_INPUT, "--resume %s: its checkpoint is at step %" PRId64 ", not "
                       "below this run's %" PRId64 " steps: nothing is left to run", cfg->resume,
                       step, steps);
    /* every file: its CRC, and whose run it is (O(checkpoint size): read
     * once more here so that a bad one is strata's message, not an abort) */
    for (int r = 0; r < (int)ranks; r++) TRY(check_file(cfg, p, n_params, dir, step, r, e));
    return 0;
}

int checkpoint_open(struct real_ctx *ctx, struct err *e)
{
    const struct config *cfg = ctx->cfg;
    ctx->first_step = 0;
    if (cfg->checkpoint_every <= 0 && !cfg->resume[0]) return 0;
    TRY(checkpoint_check(cfg, ctx->p, e));
    struct checkpointer *c = XCALLOC(e, 1, sizeof *c);
    if (!c) return ERR_NOMEM;
    ctx->ckpt = c;
    c->every = cfg->checkpoint_every;
    struct shared sh = {.resume_step = 0};
    if (ctx->rank == 0) sh.rc = rank0_plan(ctx, &sh, e);
    MPI_TRY(e, MPI_Bcast(&sh, (int)sizeof sh, MPI_BYTE, 0, MPI_COMM_WORLD));
    snprintf(c->dir, sizeof c->dir, "%s", sh.dir);
    c->is_temporary = cfg->checkpoint_every > 0 && !cfg->checkpoint_dir[0] && !cfg->resume[0];
    if (sh.rc < 0)
        return ctx->rank == 0 ? sh.rc : err_set(e, sh.rc, "rank 0 could not open the checkpoints");
    if (!sh.resume[0]) return 0;
    ctx->first_step = sh.resume_step;
    if (ctx->p->n_workers != sh.file_workers && !ctx->p->data_parallel)
        return err_set(e, ERR_INPUT, "%s: written by a run of %" PRId64 " workers; this run has %d "
                       "(only data-parallel plans resume on another count)", sh.resume,
                       sh.file_workers, ctx->p->n_workers);
    return resume_rank(ctx, sh.resume, sh.resume_step, (int)sh.file_workers, e);
}

void checkpoint_close(struct real_ctx *ctx, bool is_success)
{
    struct checkpointer *c = ctx->ckpt;
    if (!c) return;
    /* a failed run's temporary checkpoints are kept, and said where, for a
     * --resume; with none written there is nothing to keep */
    if (c->is_temporary && ctx->rank == 0 && c->dir[0]) {
        if (is_success || c->n_written == 0) remove_tree(c->dir, 1);
        else fprintf(stderr, "strata real: the checkpoints stay in %s (--resume %s)\n", c->dir,
                     c->dir);
    }
    free(c->links);
    free(c->last_applied);
    free(c);
    ctx->ckpt = NULL;
}

int64_t checkpoint_resumed_link(const struct real_ctx *ctx, int server, int64_t otherwise)
{
    const struct checkpointer *c = ctx->ckpt;
    for (int k = 0; c && k < c->n_links; k++)
        if (c->links[k].server == server - ctx->p->n_workers) return c->links[k].version_read;
    return otherwise;
}

const struct checkpoint_server *checkpoint_resumed_server(const struct real_ctx *ctx)
{
    return ctx->ckpt && ctx->ckpt->has_server ? &ctx->ckpt->server : NULL;
}

void checkpoint_stats(const struct real_ctx *ctx, double *seconds, int *count)
{
    *seconds = ctx->ckpt ? ctx->ckpt->spent_s : 0;
    *count = ctx->ckpt ? ctx->ckpt->n_written : 0;
}

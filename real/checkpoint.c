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
#include "checkpoint_files.h"
#include "failure_env.h"
#include "heartbeat.h"
#include "host_copy.h"
#include "mpi_check.h"

struct checkpointer {
    char dir[CKPT_PATH_BYTES];     /* where checkpoints go; "" = none are written */
    bool is_temporary;             /* made here: removed at a successful end */
    int64_t every;                 /* --checkpoint-every */
    double spent_s;                /* writing, on this rank */
    double offset_s;               /* the run's clock at this job's aligned start: 0, or
                                    * where a resumed run's training time goes on from */
    double resumed_run_s;          /* rank 0: the run's clock at the resumed checkpoint */
    bool is_point_due;             /* the resumed step is an --eval-every point that the
                                    * checkpoint does not carry (checkpoint_point_due) */
    int n_written;
    /* resumed: a worker's links, a server's state */
    struct checkpoint_link *links;
    int n_links;
    bool has_server;
    struct checkpoint_server server;
    int64_t *last_applied;
};

/* ---- what identifies this run ------------------------------------------------ */

static void run_ident(const struct real_ctx *ctx, int64_t step, struct ckpt_ident *id)
{
    checkpoint_ident_of(ctx->cfg, ctx->p, ctx->m->n_params, ctx->rank, step, id);
}

static int64_t steps_per_epoch(const struct real_ctx *ctx)
{
    return ctx->rank < ctx->p->n_workers ? sampler_steps_per_epoch(ctx->data.train.n, ctx->p->batch)
                                         : 0;
}

/* ---- writing -------------------------------------------------------------------- */

/* What the run's report will need of the steps before a resume (its
 * curves start at step 1 and keep one clock across relaunches): the
 * clock, this rank's losses and, on rank 0, the --eval-every points not
 * yet evaluated (evaluated after the last step, off the clock: a job
 * that dies takes them with it unless they are here). Times go on the
 * run's clock. The points are every one since step 0, written again at
 * each checkpoint: a checkpoint grows by the parameters of each point,
 * as rank 0's memory does (--max-memory counts them). */
static int add_history(struct real_ctx *ctx, int64_t next_step, struct ckpt_writer *w,
                       struct err *e)
{
    const double offset_s = ctx->ckpt->offset_s;
    double clock[2] = {real_now(ctx) + offset_s, heartbeat_clock_s()};
    TRY(ckpt_writer_add(w, CKPT_CLOCK, clock, sizeof clock, e));
    size_t n_losses = ctx->losses.len;
    if (n_losses > 0) {
        struct step_loss *losses = XCALLOC(e, n_losses, sizeof *losses);
        if (!losses) return ERR_NOMEM;
        for (size_t i = 0; i < n_losses; i++) {
            losses[i] = ctx->losses.items[i];
            losses[i].end_s += offset_s;
        }
        int rc = ckpt_writer_add(w, CKPT_LOSSES, losses, n_losses * sizeof *losses, e);
        free(losses);
        TRY(rc);
    }
    const struct eval_snapshots *ev = ctx->evals;
    int64_t n = 0;   /* the points of the steps this checkpoint holds */
    while (ev && n < ev->n && ev->step[n] <= next_step) n++;
    if (n == 0) return 0;
    int64_t head[2] = {n, ev->n_params};
    double *at_s = XCALLOC(e, (size_t)n, sizeof *at_s);
    if (!at_s) return ERR_NOMEM;
    for (int64_t i = 0; i < n; i++) at_s[i] = ev->at_s[i] + offset_s;
    const void *parts[] = {head, ev->step, at_s, ev->params};
    size_t sizes[] = {sizeof head, (size_t)n * sizeof *ev->step, (size_t)n * sizeof *at_s,
                      (size_t)n * (size_t)ev->n_params * sizeof *ev->params};
    int rc = ckpt_writer_add_parts(w, CKPT_EVALS, parts, sizes, 4, e);
    free(at_s);
    return rc;
}

/* This rank's file, built in w. */
static int build(struct real_ctx *ctx, int64_t next_step, const struct checkpoint_extra *x,
                 struct ckpt_writer *w, struct err *e)
{
    struct ckpt_ident id;
    run_ident(ctx, next_step, &id);
    TRY(ckpt_writer_add_ident(w, &id, e));
    /* the momentum block is the rank's shards' alone under ZeRO-1 */
    size_t bytes = (size_t)ctx->m->n_params * sizeof(float);
    size_t m_bytes = (size_t)ctx->n_momentum * sizeof(float);
    struct host_copy hp = {0}, hm = {0};
    const void *params = host_copy_out(ctx->dev, &hp, ctx->m->params, bytes, e);
    const void *momentum =
        params ? host_copy_out(ctx->dev, &hm, ctx->m->momentum, m_bytes, e) : NULL;
    int rc = momentum ? ctx->dev->sync(e) : e->code;
    if (rc == 0) rc = ckpt_writer_add(w, CKPT_PARAMS, params, bytes, e);
    if (rc == 0) rc = ckpt_writer_add(w, CKPT_MOMENTUM, momentum, m_bytes, e);
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
    TRY(add_history(ctx, next_step, w, e));
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
    checkpoint_step_dir(dir, sizeof dir, ctx->ckpt->dir, next_step);
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

/* After every rank agreed that a save failed (each is past its write): a
 * checkpoint one rank could not write, or without its MANIFEST, is no
 * checkpoint, and the files the others wrote would stay in a step
 * directory that nothing reads or removes after this failed run. Rank 0
 * removes it; rc is passed on. */
static int drop_step(struct real_ctx *ctx, int64_t next_step, int rc)
{
    if (ctx->rank == 0) {
        char dir[CKPT_PATH_BYTES + 32];
        checkpoint_step_dir(dir, sizeof dir, ctx->ckpt->dir, next_step);
        checkpoint_remove_tree(dir, 0);
    }
    return rc;
}

int checkpoint_save(struct real_ctx *ctx, int64_t next_step, const struct checkpoint_extra *x,
                    struct err *e)
{
    struct checkpointer *c = ctx->ckpt;
    double t0 = MPI_Wtime();
    heartbeat_saving(ctx->hb);
    int rc = mpi_check_agree(write_rank_file(ctx, next_step, x, e), e);
    if (rc < 0) return drop_step(ctx, next_step, rc);
    if (ctx->rank == 0) {
        char dir[CKPT_PATH_BYTES + 32], path[CKPT_PATH_BYTES + 64], text[128];
        checkpoint_step_dir(dir, sizeof dir, c->dir, next_step);
        snprintf(path, sizeof path, "%s/" MANIFEST_NAME, dir);
        int n = snprintf(text, sizeof text, "strata-checkpoint 1\nstep %" PRId64 "\nranks %d\n",
                         next_step, ctx->p->n_ranks);
        rc = file_write_atomic(path, text, (size_t)n, e);
        if (rc == 0) checkpoint_prune(c->dir);
    }
    /* a commit: no rank goes on until the MANIFEST is in place, so a rank
     * that dies after its checkpoint never takes it down with it (the
     * supervisor would find only the one before), and a MANIFEST that
     * could not be written fails every rank, not rank 0 alone */
    rc = mpi_check_agree(rc, e);
    if (rc < 0) return drop_step(ctx, next_step, rc);
    c->spent_s += MPI_Wtime() - t0;
    c->n_written++;
    /* the supervisor adds a failed job's checkpoint time to the report's */
    heartbeat_checkpointed(ctx->hb, c->spent_s);
    return 0;
}

/* ---- resuming ---------------------------------------------------------------- */

/* A rank's file of the checkpoint in dir, read and checked against this
 * run: its bytes in *buf (caller frees) and records in v. */
static int load_file(struct real_ctx *ctx, const char *dir, int64_t step, int file_rank,
                     unsigned char **buf, struct ckpt_view *v, struct err *e)
{
    char path[CKPT_PATH_BYTES + 64];
    snprintf(path, sizeof path, "%s/rank-%d.ckpt", dir, file_rank);
    size_t n = 0;
    TRY(checkpoint_slurp(path, buf, &n, e));
    struct ckpt_ident file, run;
    run_ident(ctx, step, &run);
    int rc = ckpt_parse(*buf, n, path, v, e);
    if (rc == 0) rc = ckpt_ident_read(v, path, &file, e);
    if (rc == 0) rc = ckpt_ident_match(&file, &run, ctx->p->data_parallel, path, e);
    if (rc == 0 && (file.step != step || file.rank != file_rank))
        rc = err_set(e, ERR_INPUT, "%s: holds rank %" PRId64 " at step %" PRId64 ", not rank %d "
                     "at step %" PRId64, path, file.rank, file.step, file_rank, step);
    size_t bytes = (size_t)ctx->m->n_params * sizeof(float);
    size_t m_bytes = (size_t)ctx->n_momentum * sizeof(float);
    if (rc == 0 && (v->len[CKPT_PARAMS] != bytes || v->len[CKPT_MOMENTUM] != m_bytes))
        rc = err_set(e, ERR_INPUT, "%s: its parameter block is not %" PRId64 " floats or its "
                     "momentum block not %" PRId64 " (this rank's momentum)", path,
                     ctx->m->n_params, ctx->n_momentum);
    if (rc < 0) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

static int restore_blocks(struct real_ctx *ctx, const struct ckpt_view *v, struct err *e)
{
    size_t sizes[2] = {(size_t)ctx->m->n_params * sizeof(float),
                       (size_t)ctx->n_momentum * sizeof(float)};
    struct host_copy h = {0};
    int rc = 0;
    float *blocks[2] = {ctx->m->params, ctx->m->momentum};
    const unsigned char *from[2] = {v->data[CKPT_PARAMS], v->data[CKPT_MOMENTUM]};
    for (int k = 0; k < 2 && rc == 0; k++) {
        size_t bytes = sizes[k];
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

/* Where the run's clock stands at this job's aligned start, from the
 * checkpoint's clock record (run_s at monotonic_s): a user's --resume
 * goes on where the checkpoint left off (the time between runs is no
 * training time); a job the supervisor relaunched after a failure adds
 * the time since, its lost time (since the first job's start when the
 * checkpoint is older than this supervised run: the user's --resume). */
static double resumed_offset_s(const struct real_ctx *ctx, double run_s, double monotonic_s)
{
    const char *text = getenv(FAILURE_ENV);
    struct failure_note n;
    struct err ignored = {0};
    if (!text || !*text || failure_env_parse(text, &n, &ignored) < 0) return run_s;
    double since_s = monotonic_s > n.first_start_s ? monotonic_s : n.first_start_s;
    double gap_s = heartbeat_start_s(ctx->hb) - since_s;
    return run_s + (gap_s > 0 ? gap_s : 0);
}

/* What the steps before the checkpoint left for the report: the clock
 * (rank 0's file decides: checkpoint_open shares it), this worker's
 * losses (from own_v, its own old file: under shrink a dead rank's are
 * lost, and each step's loss is the mean over the workers that remain)
 * and rank 0's evaluation points. Times stay on the run's clock until
 * checkpoint_open has shared the offset. */
static int restore_history(struct real_ctx *ctx, const struct ckpt_view *v,
                           const struct ckpt_view *own_v, int64_t step, const char *dir,
                           struct err *e)
{
    double run_s = 0, monotonic_s = 0;
    int rc = ckpt_clock_read(v, dir, &run_s, &monotonic_s, e);
    TRY(rc);
    if (rc == 0 && ctx->rank == 0) {
        ctx->ckpt->offset_s = resumed_offset_s(ctx, run_s, monotonic_s);
        ctx->ckpt->resumed_run_s = run_s;
    }
    struct step_loss *losses = NULL;
    size_t n = 0;
    if (ctx->rank < ctx->p->n_workers) TRY(ckpt_losses_read(own_v, dir, step, &losses, &n, e));
    for (size_t i = 0; i < n && rc >= 0; i++)
        if (vec_push(&ctx->losses, losses[i]) < 0) rc = err_set(e, ERR_NOMEM, "out of memory");
    free(losses);
    TRY(rc);
    if (!ctx->evals) return 0;
    struct ckpt_evals ev;
    TRY(ckpt_evals_read(v, dir, ctx->m->n_params, step, &ev, e));
    const size_t bytes = (size_t)ctx->m->n_params * sizeof(float);
    for (int64_t i = 0; i < ev.n && rc >= 0; i++)
        rc = eval_snapshots_add(ctx->evals, ev.params + (size_t)i * bytes, ctx->m->n_params,
                                ev.step[i], ev.at_s[i], e);
    ckpt_evals_release(&ev);
    return rc < 0 ? rc : 0;
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
    TRY(restore_history(ctx, v, rng_v, step, dir, e));
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

static int rank0_plan(struct real_ctx *ctx, struct shared *sh, struct err *e)
{
    const struct config *cfg = ctx->cfg;
    if (cfg->checkpoint_every > 0) {
        /* a resumed run's checkpoints go on where it resumed from, by
         * default: beside the step directory when --resume named one */
        char resumed[CKPT_PATH_BYTES];
        checkpoint_resume_dir(cfg, resumed, sizeof resumed);
        const char *dir = cfg->checkpoint_dir[0] ? cfg->checkpoint_dir : resumed;
        if (dir[0]) {
            snprintf(sh->dir, sizeof sh->dir, "%s", dir);
            if (checkpoint_make_dirs(sh->dir) != 0)
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
    TRY(checkpoint_read_manifest(sh->resume, &ranks, e));
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
    TRY(mpi_check_agree(resume_rank(ctx, sh.resume, sh.resume_step, (int)sh.file_workers, e), e));
    /* the steps before the checkpoint, onto this job's clock; a run that
     * ended at an --eval-every point (its last step is evaluated as the
     * final model, not kept as a point) left none for it in its checkpoint */
    const struct eval_snapshots *ev = ctx->evals;
    const long long every = cfg->eval_every;
    double shared[2] = {c->offset_s,
                        ev && every > 0 && sh.resume_step % every == 0 &&
                            (ev->n == 0 || ev->step[ev->n - 1] < sh.resume_step)};
    MPI_TRY(e, MPI_Bcast(shared, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    c->offset_s = shared[0];
    c->is_point_due = shared[1] != 0;
    for (size_t i = 0; i < ctx->losses.len; i++) ctx->losses.items[i].end_s -= c->offset_s;
    for (int i = 0; ctx->evals && i < ctx->evals->n; i++) ctx->evals->at_s[i] -= c->offset_s;
    return 0;
}

bool checkpoint_point_due(const struct real_ctx *ctx, double *at_s)
{
    const struct checkpointer *c = ctx->ckpt;
    if (!c || !c->is_point_due) return false;
    *at_s = c->resumed_run_s - c->offset_s;   /* on this job's clock: rank 0's */
    return true;
}

double checkpoint_clock_offset_s(const struct real_ctx *ctx)
{
    return ctx->ckpt ? ctx->ckpt->offset_s : 0;
}

void checkpoint_close(struct real_ctx *ctx, bool is_success)
{
    struct checkpointer *c = ctx->ckpt;
    if (!c) return;
    /* a failed run's temporary checkpoints are kept, and said where, for a
     * --resume; with none written there is nothing to keep */
    if (c->is_temporary && ctx->rank == 0 && c->dir[0]) {
        if (is_success || c->n_written == 0) checkpoint_remove_tree(c->dir, 1);
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

int checkpoint_updates_resumed(const struct real_ctx *ctx, int64_t *updates, struct err *e)
{
    *updates = 0;
    /* an asynchronous server's version counts the pushes it applied to its
     * shard (core/ps_policy.h), each an update as the analysis counts them;
     * a synchronous server's counts rounds, one a step like a worker's */
    const struct checkpoint_server *was = checkpoint_resumed_server(ctx);
    int64_t mine = was && policy_is_async(ctx->p->policy) ? was->version : 0;
    int64_t servers = 0;
    MPI_TRY(e, MPI_Reduce(&mine, &servers, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD));
    if (ctx->rank == 0) *updates = policy_is_async(ctx->p->policy) ? servers : ctx->first_step;
    return 0;
}

void checkpoint_stats(const struct real_ctx *ctx, double *seconds, int *count)
{
    *seconds = ctx->ckpt ? ctx->ckpt->spent_s : 0;
    *count = ctx->ckpt ? ctx->ckpt->n_written : 0;
}

/* Who holds the current parameters, gathering them on rank 0, and the
 * parameter file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileio.h"
#include "params.h"
#include "real_internal.h"

static const char params_magic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'P', '1'};

int params_owner(const struct plan *p, int layer, bool is_final)
{
    if (is_final)
        for (int r = p->n_workers; r < p->n_ranks; r++)
            if (p->ranks[r].shard_lo <= layer && layer < p->ranks[r].shard_hi) return r;
    for (int r = 0; r < p->n_workers; r++) {
        const struct plan_rank *pr = &p->ranks[r];
        for (size_t i = 0; i < pr->ops.len; i++) {
            const struct op *o = &pr->ops.items[i];
            if ((o->kind == OP_UPDATE || o->kind == OP_PULL) && o->lo <= layer && layer < o->hi)
                return r;
        }
    }
    return -1;
}

/* One message per layer not on rank 0: simple, and a model has few layers.
 * A GPU rank's parameters travel through a host copy (real/stage.h). */
static int gather_layer(struct real_ctx *x, int l, int owner, struct stage *host, struct err *e)
{
    struct mlp *m = x->m;
    float *w = m->params + mlp_param_offset(m, l);
    int n = (int)mlp_param_count(m, l, l + 1);
    size_t bytes = (size_t)n * sizeof(float);
    if (x->rank == owner) {
        const float *h = stage_out(x->dev, host, w, bytes, e);
        if (!h) return e->code;
        REAL_MPI(e, MPI_Send(h, n, MPI_FLOAT, 0, l, x->params_comm));
    } else if (x->rank == 0) {
        float *h = stage_in(x->dev, host, w, bytes, e);
        if (!h) return e->code;
        REAL_MPI(e, MPI_Recv(h, n, MPI_FLOAT, owner, l, x->params_comm, MPI_STATUS_IGNORE));
        stage_in_done(x->dev, host, w, bytes);
    }
    return 0;
}

int params_gather(struct real_ctx *x, bool is_final, struct err *e)
{
    const struct plan *p = x->p;
    struct stage host = {0};
    int rc = 0;
    for (int l = 0; l < x->m->n_layers && rc == 0; l++) {
        int owner = params_owner(p, l, is_final);
        if (owner < 0)
            rc = err_set(e, ERR_RUN, "no rank updates layer %d: the plan never trains it", l);
        else if (owner != 0)
            rc = gather_layer(x, l, owner, &host, e);
    }
    stage_release(&host);
    return rc == 0 ? x->dev->sync(e) : rc;
}

int params_save(const char *path, const float *params, int64_t n, struct err *e)
{
    size_t bytes = sizeof params_magic + sizeof n + (size_t)n * sizeof(float);
    char *buf = XCALLOC(e, bytes, 1);
    if (!buf) return ERR_NOMEM;
    memcpy(buf, params_magic, sizeof params_magic);
    memcpy(buf + sizeof params_magic, &n, sizeof n);
    memcpy(buf + sizeof params_magic + sizeof n, params, (size_t)n * sizeof(float));
    int rc = file_write_atomic(path, buf, bytes, e);
    free(buf);
    return rc < 0 ? err_prefix(e, "--save-params") : 0;
}

int params_load(const char *path, float **out, int64_t *n, struct err *e)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, ERR_INPUT, "%s: cannot open (%s)", path, strerror(errno));
    char magic[8];
    int64_t count = 0;
    int rc = 0;
    if (fread(magic, 1, sizeof magic, f) != sizeof magic || memcmp(magic, params_magic, 8) ||
        fread(&count, sizeof count, 1, f) != 1 || count < 0 || count > (int64_t)1 << 34) {
        rc = err_set(e, ERR_INPUT, "%s: not a strata parameter file (see real/params.h)", path);
    } else if (!(*out = malloc((size_t)count * sizeof(float) + 1))) {
        rc = err_set(e, ERR_NOMEM, "%s: out of memory for %lld parameters", path, (long long)count);
    } else if (fread(*out, sizeof(float), (size_t)count, f) != (size_t)count || fgetc(f) != EOF) {
        rc = err_set(e, ERR_INPUT, "%s: holds more or fewer than its %lld parameters", path,
                     (long long)count);
    }
    fclose(f);
    if (rc < 0) {
        free(*out);
        *out = NULL;
        return rc;
    }
    *n = count;
    return 0;
}

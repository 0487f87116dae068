/* Parameter copies at evaluation points (real/eval_snapshots.h). */
#include <stdlib.h>
#include <string.h>

#include "eval_snapshots.h"

static int resize(struct eval_snapshots *s, int cap, int64_t n_params, struct err *e)
{
    if (s->n_params && s->n_params != n_params)
        return err_set(e, ERR_RUN, "eval snapshots: a model of %lld parameters after one of %lld",
                       (long long)n_params, (long long)s->n_params);
    float *params = realloc(s->params, (size_t)cap * (size_t)n_params * sizeof *params);
    if (!params) return err_set(e, ERR_NOMEM, "out of memory keeping the parameters of %d "
                                "evaluation points (--eval-every)", s->n + 1);
    s->params = params;
    int64_t *step = realloc(s->step, (size_t)cap * sizeof *step);
    if (step) s->step = step;
    double *at_s = step ? realloc(s->at_s, (size_t)cap * sizeof *at_s) : NULL;
    if (at_s) s->at_s = at_s;
    if (!step || !at_s) return err_set(e, ERR_NOMEM, "out of memory");
    s->cap = cap;
    s->n_params = n_params;
    return 0;
}

int eval_snapshots_reserve(struct eval_snapshots *s, int n, int64_t n_params, struct err *e)
{
    if (n <= s->cap) return 0;
    int had = s->cap;
    TRY(resize(s, n, n_params, e));
    memset(s->params + (size_t)had * (size_t)n_params, 0,
           (size_t)(n - had) * (size_t)n_params * sizeof *s->params);
    return 0;
}

int eval_snapshots_take(struct eval_snapshots *s, const struct device *dev, const struct mlp *m,
                        int64_t step, double at_s, struct err *e)
{
    if (s->n == s->cap) TRY(resize(s, s->cap ? 2 * s->cap : 4, m->n_params, e));
    /* straight into host memory: a memcpy on the cpu device, a copy down
     * from a GPU's */
    dev->copy(s->params + (size_t)s->n * (size_t)s->n_params, m->params,
              (size_t)m->n_params * sizeof(float), DEV_D2H);
    TRY(dev->sync(e));
    s->step[s->n] = step;
    s->at_s[s->n] = at_s;
    s->n++;
    return 0;
}

int eval_snapshots_add(struct eval_snapshots *s, const void *params, int64_t n_params, int64_t step,
                       double at_s, struct err *e)
{
    if (s->n == s->cap) TRY(resize(s, s->cap ? 2 * s->cap : 4, n_params, e));
    if (n_params != s->n_params)
        return err_set(e, ERR_RUN, "eval snapshots: a model of %lld parameters after one of %lld",
                       (long long)n_params, (long long)s->n_params);
    memcpy(s->params + (size_t)s->n * (size_t)n_params, params, (size_t)n_params * sizeof(float));
    s->step[s->n] = step;
    s->at_s[s->n] = at_s;
    s->n++;
    return 0;
}

int eval_snapshots_load(const struct eval_snapshots *s, int i, const struct device *dev,
                        struct mlp *m, struct err *e)
{
    if (i < 0 || i >= s->n || m->n_params != s->n_params)
        return err_set(e, ERR_RUN, "eval snapshots: no snapshot %d of this model", i);
    dev->copy(m->params, s->params + (size_t)i * (size_t)s->n_params,
              (size_t)s->n_params * sizeof(float), DEV_H2D);
    return dev->sync(e);
}

void eval_snapshots_release(struct eval_snapshots *s)
{
    free(s->params);
    free(s->step);
    free(s->at_s);
    memset(s, 0, sizeof *s);
}

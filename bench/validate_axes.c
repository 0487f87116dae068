/* The matrix's axes from the command line (see validate_axes.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "validate_axes.h"

/* A piece that continues the element before it: key=value with no kind: */
static bool is_continuation(const char *piece, size_t len)
{
    const char *eq = memchr(piece, '=', len), *colon = memchr(piece, ':', len);
    return eq && !colon;
}

int validate_split_list(const char *opt, const char *text, char (*out)[VALIDATE_SPEC_BYTES],
                        int cap, int *n, struct err *e)
{
    *n = 0;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0)
            return err_set(e, ERR_INPUT, "%s: '%.80s' has an empty element (write a comma "
                           "list such as a,b,c)", opt, text);
        if (*n > 0 && is_continuation(p, len)) {
            char *last = out[*n - 1];
            size_t have = strlen(last);
            if (have + 1 + len >= VALIDATE_SPEC_BYTES)
                return err_set(e, ERR_INPUT, "%s: '%.60s...' is too long (at most %d "
                               "characters an element)", opt, last, VALIDATE_SPEC_BYTES - 1);
            last[have] = ',';
            memcpy(last + have + 1, p, len);
            last[have + 1 + len] = '\0';
        } else {
            if (*n == cap)
                return err_set(e, ERR_INPUT, "%s: more than %d elements in '%.60s...' (at most "
                               "%d)", opt, cap, text, cap);
            if (len >= VALIDATE_SPEC_BYTES)
                return err_set(e, ERR_INPUT, "%s: '%.60s...' is too long (at most %d characters "
                               "an element)", opt, p, VALIDATE_SPEC_BYTES - 1);
            memcpy(out[*n], p, len);
            out[*n][len] = '\0';
            ++*n;
        }
        if (!end) return 0;
        p = end + 1;
    }
}

/* One element of --np-list: an integer from 1 to the --np row's maximum. */
static int parse_np(const char *opt, const char *word, int *np, struct err *e)
{
    const struct opt_spec *o = config_find("np");
    long long max = o ? (long long)o->max : 65536;
    char *end;
    errno = 0;
    long long v = strtoll(word, &end, 10);
    if (!isdigit((unsigned char)word[0]) || *end)
        return err_set(e, ERR_INPUT, "%s: '%s' is not an integer (1 to %lld)", opt, word, max);
    if (errno == ERANGE || v < 1 || v > max)
        return err_set(e, ERR_INPUT, "%s: %s is not allowed (1 to %lld)", opt, word, max);
    *np = (int)v;
    return 0;
}

/* An axis comes from its list option (--models a,b) when that is set, else
 * from its one-value option (--model a), so that a plain run's scenario is a
 * matrix of one. *opt: the option it came from, for messages. */
static int split_axis(const struct config *cfg, const char *list_opt, const char *list_text,
                      const char *one_opt, const char *one_text, const char **opt,
                      char (*out)[VALIDATE_SPEC_BYTES], int *n, struct err *e)
{
    bool is_list = config_is_set(cfg, list_opt + strlen("--"));
    *opt = is_list ? list_opt : one_opt;
    return validate_split_list(*opt, is_list ? list_text : one_text, out, VALIDATE_MAX_AXIS, n, e);
}

static int parse_models(const struct config *cfg, struct validate_axes *ax, struct err *e)
{
    const char *opt;
    TRY(split_axis(cfg, "--models", cfg->models, "--model", cfg->model, &opt, ax->models,
                   &ax->n_models, e));
    for (int i = 0; i < ax->n_models; i++) {
        TRY_CTX(e, workload_parse(ax->models[i], &ax->workloads[i], e), "%s: '%s'", opt,
                ax->models[i]);
        /* every cell is also run for real, and real runs train mlp: models
         * only (real/prepare.c): refused here, not once per cell and row */
        if (!ax->workloads[i]->is_mlp)
            return err_set(e, ERR_INPUT, "%s: '%s' is described by sizes only; validate runs "
                           "every cell for real too, and real runs train an mlp: model (e.g. "
                           "mlp:784-256-128-10 or a preset fmnist-*); `strata compare` or "
                           "`strata sim` time it", opt, ax->models[i]);
    }
    return 0;
}

static int parse_nps(const struct config *cfg, struct validate_axes *ax, struct err *e)
{
    if (config_is_set(cfg, "np-list") && config_is_set(cfg, "np"))
        return err_set(e, ERR_INPUT, "--np %lld and --np-list %.80s: give one of them (--np "
                       "2,4 is the list 2,4)", cfg->np, cfg->np_list);
    if (config_is_set(cfg, "np-list")) {
        char words[VALIDATE_MAX_AXIS][VALIDATE_SPEC_BYTES];
        int n = 0;
        TRY(validate_split_list("--np", cfg->np_list, words, VALIDATE_MAX_AXIS, &n, e));
        for (int i = 0; i < n; i++) {
            TRY(parse_np("--np", words[i], &ax->np[i], e));
            for (int j = 0; j < i; j++)
                if (ax->np[j] == ax->np[i])
                    return err_set(e, ERR_INPUT, "--np: %d comes twice in '%s'", ax->np[i],
                                   cfg->np_list);
        }
        ax->n_np = n;
        return 0;
    }
    ax->np[0] = (int)(config_is_set(cfg, "np") && cfg->np > 0 ? cfg->np : cfg->devices);
    ax->n_np = 1;
    return 0;
}

/* Every rank a straggler spec names must compute at every np of the matrix. */
static int check_ranks(const char *opt, const struct validate_axes *ax, int s, struct err *e)
{
    const struct straggler_spec *sp = &ax->straggler_specs[s];
    for (int k = 0; sp->kind == STRAG_SLOW && k < sp->n_slow; k++)
        for (int i = 0; i < ax->n_np; i++)
            if (sp->slow_rank[k] >= ax->np[i])
                return err_set(e, ERR_INPUT, "%s: '%s' slows rank %d, which does not exist at "
                               "--np %d (ranks 0 to %d compute); drop that np or name a rank "
                               "below %d", opt, ax->stragglers[s], sp->slow_rank[k], ax->np[i],
                               ax->np[i] - 1, ax->np[i]);
    return 0;
}

static int parse_stragglers(const struct config *cfg, struct validate_axes *ax, struct err *e)
{
    const char *opt;
    TRY(split_axis(cfg, "--stragglers", cfg->stragglers, "--straggler", cfg->straggler, &opt,
                   ax->stragglers, &ax->n_stragglers, e));
    for (int i = 0; i < ax->n_stragglers; i++) {
        /* straggler_parse's message names --straggler and the forms */
        TRY_CTX(e, straggler_parse(ax->stragglers[i], &ax->straggler_specs[i], e), "%s: '%s'",
                opt, ax->stragglers[i]);
        for (int j = 0; j < i; j++)
            if (!strcmp(ax->stragglers[j], ax->stragglers[i]))
                return err_set(e, ERR_INPUT, "%s: '%s' comes twice", opt, ax->stragglers[i]);
        TRY(check_ranks(opt, ax, i, e));
    }
    return 0;
}

int validate_axes_parse(const struct config *cfg, struct validate_axes *ax, struct err *e)
{
    memset(ax, 0, sizeof *ax);
    ax->repeat = (int)cfg->repeat;
    TRY(parse_models(cfg, ax, e));
    TRY(parse_nps(cfg, ax, e));
    return parse_stragglers(cfg, ax, e);
}

void validate_axes_release(struct validate_axes *ax)
{
    for (int i = 0; i < VALIDATE_MAX_AXIS; i++) {
        workload_free(ax->workloads[i]);
        ax->workloads[i] = NULL;
    }
}

/* Plans from Chakra traces for a run: see bench/chakra_source.h. */
#include <stdlib.h>
#include <string.h>

#include "../core/ps_policy.h"
#include "chakra_source.h"

#define CHAKRA_PREFIX "chakra:"

static int dir_of(const char *spec, const char **dir, struct err *e)
{
    size_t n = strlen(CHAKRA_PREFIX);
    if (strncmp(spec, CHAKRA_PREFIX, n) || !spec[n])
        return err_set(e, ERR_INPUT, "--workload: '%s' is not allowed (chakra:DIR, a directory "
                       "of Chakra traces NAME.RANK.et)", spec);
    *dir = spec + n;
    return 0;
}

/* The strategy's build: the traces read again, on each call (twice a run
 * at most: the run, and a restart's replay), so that no state outlives
 * chakra_source_open. */
static int replay_build(const struct strategy *s, const struct config *c,
                        const struct workload *wl, struct plan **out, struct err *e)
{
    (void)s;   /* its plan is the traces', named as they are */
    const char *dir = NULL;
    TRY(dir_of(c->workload, &dir, e));
    struct chakra_trace t;
    int rc = chakra_trace_read(dir, &t, e);
    if (rc == 0) rc = chakra_trace_plan(&t, wl, (int)c->batch, out, NULL, e);
    chakra_trace_release(&t);
    if (rc == 0 && (*out)->n_workers != c->devices) {
        /* --on-failure shrink asks for the plan on fewer workers: a trace
         * holds one job's ranks only */
        rc = err_set(e, ERR_INPUT, "--workload: the traces in %s hold %d workers; they cannot "
                     "be rebuilt for %lld (use --on-failure restart%s)", dir,
                     (*out)->n_workers, c->devices,
                     policy_is_async((*out)->policy) ? " or continue" : "");
        plan_free(*out);
        *out = NULL;
    }
    return rc;
}

/* src->notes from src->left_out. */
static int make_notes(struct chakra_source *src, struct err *e)
{
    for (size_t i = 0; i < src->left_out.len; i++) {
        const struct chakra_left_out *lo = &src->left_out.items[i];
        char line[256];
        snprintf(line, sizeof line, "%lld node%s of type %s not modelled: left out (the nodes "
                 "after %s wait for what %s waited for)", lo->count, lo->count == 1 ? "" : "s",
                 lo->what, lo->count == 1 ? "it" : "them", lo->count == 1 ? "it" : "they");
        char *copy = strdup(line);
        if (!copy || vec_push(&src->notes, copy) < 0) {
            free(copy);
            return err_set(e, ERR_NOMEM, "out of memory");
        }
    }
    return 0;
}

int chakra_source_open(struct config *cfg, struct workload **wl, struct chakra_source *src,
                       struct err *e)
{
    memset(src, 0, sizeof *src);
    const char *dir = NULL;
    TRY(dir_of(cfg->workload, &dir, e));
    struct chakra_trace t;
    struct plan *p = NULL;
    struct workload *traced = NULL;
    int rc = chakra_trace_read(dir, &t, e);
    if (rc == 0 && t.is_strata) {
        rc = chakra_trace_options(&t, cfg, e);
        if (rc == 0) rc = workload_parse(cfg->model, &traced, e);
    } else if (rc == 0) {
        unsigned char was_set[sizeof cfg->is_set];   /* set for the trace, not by the user */
        memcpy(was_set, &cfg->is_set, sizeof was_set);
        char devices[32];
        snprintf(devices, sizeof devices, "%d", t.n_files);
        rc = config_set(cfg, "devices", devices, OPTG_SCENARIO, e);
        if (rc == 0) rc = config_set(cfg, "model", cfg->workload, OPTG_SCENARIO, e);
        memcpy(&cfg->is_set, was_set, sizeof was_set);
        if (rc == 0) rc = chakra_workload_placeholder(cfg->workload, &traced, e);
    }
    /* read once here for the left-out nodes and to fail before the run */
    if (rc == 0) rc = chakra_trace_plan(&t, traced, (int)cfg->batch, &p, &src->left_out, e);
    if (rc == 0 && config_is_set(cfg, "strategy") &&
        strcmp(cfg->strategy, chakra_trace_strategy(&t)))
        rc = err_set(e, ERR_INPUT, "--strategy: %s was given, but the traces in %s are a plan "
                     "of %s; leave --strategy out (the plan comes from the traces)",
                     cfg->strategy, dir, chakra_trace_strategy(&t));
    if (rc == 0) rc = make_notes(src, e);
    if (rc == 0) {
        snprintf(src->strategy_name, sizeof src->strategy_name, "%s", chakra_trace_strategy(&t));
        snprintf(cfg->strategy, sizeof cfg->strategy, "%s", src->strategy_name);
        src->is_strata = t.is_strata;
        src->n_ranks = p->n_ranks;
        /* the registry's strategy of that name, when there is one, says
         * which options it reads (checks such as --dp's ask) */
        struct err not_found = {0};
        const struct strategy *own =
            t.is_strata ? strategy_find(src->strategy_name, &not_found) : NULL;
        src->strategy = (struct strategy){
            .name = src->strategy_name,
            .summary = own ? own->summary : "the plan of Chakra traces (--workload)",
            .options = own ? own->options : "",
            .policy = p->policy,
            .build = replay_build,
        };
        workload_free(*wl);
        *wl = traced;
        traced = NULL;
    }
    plan_free(p);
    workload_free(traced);
    chakra_trace_release(&t);
    return rc;
}

void chakra_source_release(struct chakra_source *src)
{
    vec_free(&src->left_out);
    for (size_t i = 0; i < src->notes.len; i++) free(src->notes.items[i]);
    vec_free(&src->notes);
}

void chakra_source_print_left_out(FILE *out, const char *prefix,
                                  const struct chakra_source *src)
{
    for (size_t i = 0; i < src->notes.len; i++)
        fprintf(out, "%swarning: %s\n", prefix, src->notes.items[i]);
}

/* Running a lab's scenarios and reading their reports (bench/lab_run.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/budget.h"
#include "../core/lab_expr.h"
#include "lab_run.h"
#include "run.h"
#include "run_numerics.h"

/* The options a lab's scenario may set: those of `strata compare` and
 * `strata sim`, without files written (a lab prints, it does not save). */
#define LAB_GROUPS                                                                          \
    (OPTG_SCENARIO | OPTG_COMPARE | OPTG_STRATEGY | OPTG_RUN | OPTG_SIM | OPTG_DISTURB |      \
     OPTG_TRAIN | OPTG_EXEC | OPTG_LAUNCH | OPTG_LIMITS)

const char *lab_option_value(const struct lab *lab, const struct lab_option *o, char *buf,
                                size_t n)
{
    return config_value_beside(lab->path, o->key, o->value, buf, n);
}

/* A key a [run] cannot take, said with where it belongs: the header's
 * keys, the mode, argv's -f and --help, and options of other commands.
 * config_set called "title" "--title: unknown option (did you mean
 * --file?)" and "file" "(did you mean --file?)". */
static int misplaced_key(const struct lab *lab, const struct lab_run *run,
                         const struct lab_option *o, struct err *e)
{
    static const char *const header[] = {"title", "claim", "predict", "real"};
    for (size_t i = 0; i < sizeof header / sizeof header[0]; i++)
        if (!strcmp(o->key, header[i]))
            return err_set(e, ERR_INPUT, "lab file %s:%ld: '%s' is a header key: it goes "
                           "before the first section, not in [run %s]", lab->path, o->lineno,
                           o->key, run->name);
    /* lab_run takes the mode from `strata lab --mode`: a run's own
     * mode = real was accepted, simulated, and printed as --mode real */
    if (!strcmp(o->key, "mode"))
        return err_set(e, ERR_INPUT, "lab file %s:%ld: mode: not an option of a [run]: a lab "
                       "is simulated, or run for real by `strata lab NAME --mode real` when "
                       "its header says real = yes", lab->path, o->lineno);
    if (!strcmp(o->key, "file") || !strcmp(o->key, "help"))
        return err_set(e, ERR_INPUT, "lab file %s:%ld: %s: not an option of a [run] (-f and "
                       "--help are the command line's; a run sets its options one a line)",
                       lab->path, o->lineno, o->key);
    /* config_set's "not an option of this command (see --help)" sent the
     * teacher to `strata lab --help`, which lists no scenario option */
    const struct opt_spec *spec = config_find(o->key);
    bool is_compares =
        spec && (spec->groups & (OPTG_OUTPUT | OPTG_PLOT | OPTG_HTML | OPTG_JOBS));
    if (spec && !(spec->groups & LAB_GROUPS))
        return err_set(e, ERR_INPUT, "lab file %s:%ld: --%s: not an option of a lab's [run], "
                       "which takes the scenario options of strata compare and sim and writes "
                       "no file (%s)", lab->path, o->lineno, o->key,
                       is_compares ? "add it to the run's printed `strata compare` command"
                                   : "`strata compare --help` lists them");
    return 0;
}

/* The run's options into r->cfg, each error naming the lab file's line. */
static int load_config(const struct lab *lab, const struct lab_run *run, struct config *cfg,
                       struct err *e)
{
    config_init(cfg);
    for (size_t i = 0; i < run->options.len; i++) {
        const struct lab_option *o = &run->options.items[i];
        char path[4096];
        TRY(misplaced_key(lab, run, o, e));
        TRY_CTX(e, config_set(cfg, o->key, lab_option_value(lab, o, path, sizeof path), LAB_GROUPS,
                              e),
                "lab file %s:%ld", lab->path, o->lineno);
        config_mark_file_line(cfg, o->key, lab->path, o->lineno);
    }
    return 0;
}

/* An error of a run: about an option its section set, it names the line,
 * as a scenario file's errors do ("lab file 01.lab:11: --devices: ...",
 * config_err_locate), like the values load_config refuses itself; else
 * the lab and the run ("lab NAME, [run RUN]: ..."). Returns e->code. */
static int run_error(const struct lab *lab, const struct lab_run *run, const struct config *cfg,
                     struct err *e)
{
    config_err_locate(cfg, e);
    size_t n = strlen(cfg->scenario_path);
    if (n && !strncmp(e->msg, cfg->scenario_path, n) && e->msg[n] == ':') {
        char located[ERR_MSG_BYTES];
        memcpy(located, e->msg, sizeof located);
        return err_set(e, e->code, "lab file %s", located);
    }
    return err_prefix(e, "lab %s, [run %s]", lab->name, run->name);
}

/* One strategy named by strategy = ... runs alone; else the list. */
static bool is_strategy_spec(const struct config *cfg)
{
    return config_is_set(cfg, "strategy") && !config_is_set(cfg, "strategies");
}

static const char *strategies_spec(const struct config *cfg)
{
    return is_strategy_spec(cfg) ? cfg->strategy : cfg->strategies;
}

/* The strategies the run names; a fault names the key the section set
 * (strategy = nope is "--strategy: 'nope' ...", not --strategies, which
 * it does not hold), so that run_error finds its line. */
static int parse_strategies(const struct config *cfg, const struct strategy **list, size_t *n,
                            struct err *e)
{
    static const char list_key[] = "--strategies:";
    int rc = strategy_parse_list(strategies_spec(cfg), list, n, e);
    if (rc < 0 && is_strategy_spec(cfg) && !strncmp(e->msg, list_key, sizeof list_key - 1)) {
        char rest[ERR_MSG_BYTES];
        snprintf(rest, sizeof rest, "%s", e->msg + sizeof list_key - 1);
        return err_set(e, rc, "--strategy:%s", rest);
    }
    return rc;
}

/* Every report of the run as JSON, for lookups by path. */
static int keep_json(struct lab_run_result *r, struct err *e)
{
    if (!(r->reports = XCALLOC(e, (size_t)r->c.n + 1, sizeof *r->reports))) return ERR_NOMEM;
    for (int i = 0; i < r->c.n; i++)
        if (!(r->reports[i] = report_to_json(r->c.reports[i])))
            return err_set(e, ERR_NOMEM, "out of memory");
    if (!(r->baseline = report_to_json(r->c.base))) return err_set(e, ERR_NOMEM, "out of memory");
    return 0;
}

static int run_one(const struct lab *lab, const struct lab_run *run, bool is_real,
                   struct run_numerics *numerics, struct lab_run_result *r, struct err *e)
{
    r->run = run;
    r->is_real = is_real;
    TRY(load_config(lab, run, &r->cfg, e));
    if (workload_parse(r->cfg.model, &r->wl, e) < 0)
        return err_prefix(e, "--model"), run_error(lab, run, &r->cfg, e);
    const char *spec = strategies_spec(&r->cfg);
    struct budget_plan plan;   /* the largest of theirs */
    strategy_plan_size_spec(spec, &r->cfg, r->wl, &plan);
    if (budget_check(&r->cfg, r->wl, LAB_GROUPS, &plan, e) < 0)
        return run_error(lab, run, &r->cfg, e);
    const struct strategy **list = XCALLOC(e, strategy_count, sizeof *list);
    if (!list) return ERR_NOMEM;
    size_t n = 0;
    int rc = parse_strategies(&r->cfg, list, &n, e);
    if (rc == 0 && is_real) {
        int np = (int)(config_is_set(&r->cfg, "np") ? r->cfg.np : r->cfg.devices);
        rc = compare_run_real(&r->cfg, r->wl, list, (int)n, np, NULL, NULL, &r->c, e);
    } else if (rc == 0) {
        rc = compare_run_sim(&r->cfg, r->wl, list, (int)n, 0, numerics, NULL, NULL, &r->c, e);
    }
    free(list);
    if (rc < 0) return run_error(lab, run, &r->cfg, e);
    /* A lab's figures come from every strategy it names: one that did not
     * run leaves its expressions nothing to read, so the lab fails here,
     * with the reason, rather than later with "unknown strategy". */
    if (r->c.n_notes)
        return err_set(e, r->c.n_failed ? ERR_RUN : ERR_INPUT, "lab %s, [run %s]: %s", lab->name,
                       run->name, r->c.notes[0]);
    return keep_json(r, e);
}

int lab_check_mode(const struct lab *lab, bool is_real, struct err *e)
{
    if (is_real && !lab->has_real)
        return err_set(e, ERR_INPUT, "lab %s has no real version (--mode sim only; labs with "
                       "'real = yes' run for real)", lab->name);
    return 0;
}

int lab_run(const struct lab *lab, bool is_real, lab_progress_fn progress, void *ctx,
            struct lab_result *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    out->lab = lab;
    TRY(lab_check_mode(lab, is_real, e));
    TRY(lab_check_exprs(lab, e));
    if (!(out->runs = XCALLOC(e, lab->runs.len, sizeof *out->runs))) return ERR_NOMEM;
    struct run_numerics *numerics = run_numerics_create(e);
    if (!numerics) return ERR_NOMEM;
    int rc = 0;
    for (size_t i = 0; i < lab->runs.len && rc == 0; i++) {
        if (progress) progress(ctx, lab->runs.items[i].name, (int)i, (int)lab->runs.len);
        out->n++;
        rc = run_one(lab, &lab->runs.items[i], is_real, numerics, &out->runs[i], e);
    }
    run_numerics_free(numerics);
    return rc;
}

void lab_result_release(struct lab_result *r)
{
    if (!r) return;
    for (int i = 0; i < r->n; i++) {
        struct lab_run_result *x = &r->runs[i];
        for (int j = 0; x->reports && j < x->c.n; j++) cJSON_Delete(x->reports[j]);
        free(x->reports);
        cJSON_Delete(x->baseline);
        compare_release(&x->c);
        workload_free(x->wl);
        config_release(&x->cfg);
    }
    free(r->runs);
    memset(r, 0, sizeof *r);
}

/* --- lookups ---------------------------------------------------------- */

/* The next '.'-separated word of *rest into buf; false at the end. */
static bool next_word(const char **rest, char *buf, size_t n)
{
    if (!**rest) return false;
    const char *dot = strchr(*rest, '.');
    size_t len = dot ? (size_t)(dot - *rest) : strlen(*rest);
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), *rest);
    *rest += len + (dot ? 1 : 0);
    return true;
}

/* The figures a report's JSON does not hold (bench/lab_run.h). */
static bool derived(const struct lab_run_result *r, int who, const char *field, double *v)
{
    if (!strcmp(field, "speedup")) {
        *v = who < 0 ? 1.0 : r->c.speedup[who];
        return true;
    }
    if (!strcmp(field, "exceeds_memory")) {
        const struct sim_run *s = who < 0 ? &r->c.sim_base : r->c.sim_runs ? r->c.sim_runs[who]
                                                                          : NULL;
        *v = s ? (double)run_exceeds_memory(s) : NAN;
        return true;
    }
    if (!strcmp(field, "pushes")) {
        const struct report *rep = who < 0 ? r->c.base : r->c.reports[who];
        double total = 0;
        for (int i = 0; i < rep->staleness.n_histogram; i++)
            total += (double)rep->staleness.histogram[i];
        *v = total;
        return true;
    }
    return false;
}

/* Follows path (words joined by '.') from j: object keys, or array
 * indices (negative from the end). */
static int follow(const cJSON *j, const char *path, const char *name, double *v, struct err *e)
{
    char word[128];
    const char *rest = path;
    while (next_word(&rest, word, sizeof word)) {
        if (cJSON_IsArray(j)) {
            char *end;
            errno = 0;
            long i = strtol(word, &end, 10);
            int len = cJSON_GetArraySize(j);
            if (*end || end == word)
                return err_set(e, ERR_INPUT, "%s: '%s' indexes an array: a number", name, word);
            if (i < 0) i += len;
            if (i < 0 || i >= len)
                return err_set(e, ERR_INPUT, "%s: index %s outside the %d elements", name, word,
                               len);
            j = cJSON_GetArrayItem(j, (int)i);
        } else if (cJSON_IsObject(j)) {
            const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, word);
            /* A null section ("failure": null, "final": null) has no fields:
             * its figures are NaN, not unknown. */
            if (!k && cJSON_IsNull(j)) break;
            /* "speedup-1": the minus read as part of the name (labs/README.md) */
            if (!k)
                return err_set(e, ERR_INPUT, "%s: the report has no field '%s'%s", name, word,
                               strchr(word, '-') ? " (a '-' inside a name is part of it: write a "
                                                   "minus with spaces around it)" : "");
            j = k;
        } else if (cJSON_IsNull(j)) {
            break;
        } else {
            return err_set(e, ERR_INPUT, "%s: '%s' is below a number", name, word);
        }
    }
    if (cJSON_IsNull(j)) *v = NAN;
    else if (cJSON_IsNumber(j)) *v = j->valuedouble;
    else if (cJSON_IsBool(j)) *v = cJSON_IsTrue(j) ? 1 : 0;
    else return err_set(e, ERR_INPUT, "%s: not a number (an object, list or text)", name);
    return 0;
}

/* A figure's name cut into RUN (run_name), WHO (who) and FIELD (*field,
 * the rest of name). */
static int split_figure(const char *name, char *run_name, char *who, size_t n,
                        const char **field, struct err *e)
{
    const char *rest = name;
    if (!next_word(&rest, run_name, n) || !next_word(&rest, who, n) || !*rest)
        return err_set(e, ERR_INPUT, "%s: a figure is RUN.STRATEGY.FIELD "
                       "(eight.mirrored.step_time_s.mean)", name);
    *field = rest;
    return 0;
}

static int no_run(const char *name, const char *run_name, struct err *e)
{
    return err_set(e, ERR_INPUT, "%s: the lab has no [run %s]", name, run_name);
}

static int no_strategy(const char *name, const char *run_name, const char *who, struct err *e)
{
    return err_set(e, ERR_INPUT, "%s: [run %s] ran no strategy '%s' (add it to its "
                   "strategies, or name 'baseline')", name, run_name, who);
}

int lab_result_lookup(void *ctx, const char *name, double *value, struct err *e)
{
    const struct lab_result *res = ctx;
    char run_name[128], who[128];
    const char *rest = NULL;   /* split_figure sets it; gcc -O3 (Release) cannot tell */
    TRY(split_figure(name, run_name, who, sizeof run_name, &rest, e));
    const struct lab_run_result *r = NULL;
    for (int i = 0; i < res->n && !r; i++)
        if (!strcmp(res->runs[i].run->name, run_name)) r = &res->runs[i];
    if (!r) return no_run(name, run_name, e);
    int idx = -2;
    if (!strcmp(who, "baseline")) idx = -1;
    for (int i = 0; i < r->c.n && idx == -2; i++)
        if (!strcmp(r->c.reports[i]->strategy, who)) idx = i;
    if (idx == -2) return no_strategy(name, run_name, who, e);
    if (derived(r, idx, rest, value)) return 0;
    return follow(idx < 0 ? r->baseline : r->reports[idx], rest, name, value, e);
}

/* --- checks before the runs ---------------------------------------------- */

/* The strategies each run of a lab will run, read from its options. */
struct lab_names {
    const struct lab *lab;
    const struct strategy **lists;   /* [runs.len * strategy_count] */
    size_t *n;                       /* [runs.len] */
    int n_figures;                   /* figures the expression read */
};

/* A lab_lookup_fn that knows the names but no values: every figure whose
 * RUN and WHO exist reads as NaN, which no expression refuses. */
static int names_lookup(void *ctx, const char *name, double *value, struct err *e)
{
    struct lab_names *names = ctx;
    names->n_figures++;
    char run_name[128], who[128];
    const char *field;
    TRY(split_figure(name, run_name, who, sizeof run_name, &field, e));
    size_t run = names->lab->runs.len;
    for (size_t i = 0; i < names->lab->runs.len && run == names->lab->runs.len; i++)
        if (!strcmp(names->lab->runs.items[i].name, run_name)) run = i;
    if (run == names->lab->runs.len) return no_run(name, run_name, e);
    bool is_known = !strcmp(who, "baseline");
    for (size_t i = 0; i < names->n[run] && !is_known; i++)
        is_known = !strcmp(names->lists[run * strategy_count + i]->name, who);
    if (!is_known) return no_strategy(name, run_name, who, e);
    *value = NAN;
    return 0;
}

static int check_lines(const struct lab *lab, struct lab_names *names, struct err *e)
{
    for (size_t i = 0; i < lab->explain.len; i++) {
        char *text;
        TRY_CTX(e, lab_render(lab->explain.items[i].text, names_lookup, names, &text, e),
                "lab file %s:%ld", lab->path, lab->explain.items[i].lineno);
        free(text);
    }
    for (size_t i = 0; i < lab->checks.len; i++) {
        struct lab_check c;
        names->n_figures = 0;
        TRY_CTX(e, lab_check_eval(lab->checks.items[i].text, names_lookup, names, &c, e),
                "lab file %s:%ld", lab->path, lab->checks.items[i].lineno);
        /* "0.5 < 0.6" (a figure left out, a placeholder for one) held on
         * every run: a check must read the run to test the claim */
        if (!names->n_figures)
            return err_set(e, ERR_INPUT, "lab file %s:%ld: '%s' names no figure: it holds or "
                           "fails whatever the run shows (compare RUN.WHO.FIELD with a number "
                           "or another figure)", lab->path, lab->checks.items[i].lineno,
                           lab->checks.items[i].text);
    }
    return 0;
}

int lab_check_exprs(const struct lab *lab, struct err *e)
{
    struct lab_names names = {.lab = lab};
    size_t n_runs = lab->runs.len;
    names.lists = XCALLOC(e, n_runs * strategy_count + 1, sizeof *names.lists);
    names.n = XCALLOC(e, n_runs + 1, sizeof *names.n);
    int rc = names.lists && names.n ? 0 : ERR_NOMEM;
    for (size_t i = 0; i < n_runs && rc == 0; i++) {
        const struct lab_run *run = &lab->runs.items[i];
        struct config cfg;
        rc = load_config(lab, run, &cfg, e);
        if (rc == 0 &&
            (rc = parse_strategies(&cfg, names.lists + i * strategy_count, &names.n[i], e)) < 0)
            run_error(lab, run, &cfg, e);
        config_release(&cfg);
    }
    if (rc == 0) rc = check_lines(lab, &names, e);
    free(names.lists);
    free(names.n);
    return rc;
}

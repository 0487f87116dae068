#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/fileio.h"
#include "../core/ps_policy.h"
#include "../plots/timeline_text.h"
#include "../strategies/strategy.h"
#include "outputs.h"
#include "scenario.h"

/* A step: digits alone, at most 18 so that it fits (sscanf's %lld also took
 * " 1", "+1", and overflowed on many digits). Moves *p past them. */
static bool take_step(const char **p, long long *step)
{
    size_t n = strspn(*p, "0123456789");
    if (n == 0 || n > 18) return false;
    *step = strtoll(*p, NULL, 10);
    *p += n;
    return true;
}

int outputs_timeline_steps(const struct config *cfg, int64_t *first, int64_t *last,
                           struct err *e)
{
    *first = 0;
    *last = OUTPUTS_TIMELINE_STEPS - 1;
    const char *v = cfg->timeline_steps;
    if (!v[0]) return 0;
    long long a, b;
    const char *p = v;
    bool is_a_b = take_step(&p, &a) && *p++ == ':' && take_step(&p, &b) && *p == '\0';
    if (!is_a_b || a > b || b >= cfg->steps)
        return err_set(e, ERR_INPUT, "--timeline-steps: '%s' is not allowed (A:B, steps from 0 "
                       "with 0 <= A <= B < --steps %lld)", v, cfg->steps);
    *first = a;
    *last = b;
    return 0;
}

void outputs_window_of(const struct sim_run *run, int64_t first, int64_t last, double *begin_s,
                       double *end_s)
{
    int n_ranks = run->plan->n_ranks;
    bool is_async = policy_is_async(run->plan->policy);
    size_t n_spans;
    const struct span *spans = run_drawn_spans(run, &n_spans);
    *begin_s = *end_s = 0;
    double *rank_end = calloc((size_t)(n_ranks > 0 ? n_ranks : 1), sizeof *rank_end);
    if (!rank_end) return;   /* out of memory: an empty window, "nothing to draw" */
    bool any = false;
    for (size_t i = 0; i < n_spans; i++) {
        const struct span *s = &spans[i];
        if (s->step < first || s->step > last || !(s->end_s > s->start_s)) continue;
        if (!any || s->start_s < *begin_s) *begin_s = s->start_s;
        any = true;
        if (s->step == last && s->rank >= 0 && s->rank < n_ranks && s->end_s > rank_end[s->rank])
            rank_end[s->rank] = s->end_s;
    }
    bool has_end = false;
    for (int r = 0; r < n_ranks; r++) {
        if (rank_end[r] <= 0) continue;
        if (!has_end || (is_async ? rank_end[r] < *end_s : rank_end[r] > *end_s))
            *end_s = rank_end[r];
        has_end = true;
    }
    free(rank_end);
    /* from 0 when the window starts the run: the first op's wait shows */
    if (first == 0) *begin_s = 0;
}

int outputs_keep_steps(const struct config *cfg)
{
    if (cfg->trace_path[0]) return -1;
    bool is_plotted = cfg->plot_dir[0] || cfg->plot_terminal || cfg->html_path[0];
    int64_t first, last;
    struct err e = {0};
    if (outputs_timeline_steps(cfg, &first, &last, &e) < 0) last = OUTPUTS_TIMELINE_STEPS - 1;
    return cfg->timeline || is_plotted ? (int)last + 1 : 0;
}

/* An output on one of the command's input files would replace what it
 * reads (`strata replay --json t.json t.json` replaced its trace with the
 * replay): the files named as arguments, -f's scenario, --hostfile's, and
 * --cluster's when it is a file. */
static int check_not_input(const struct config *cfg, const char *option, const char *path,
                           struct err *e)
{
    for (int i = 0; i < cfg->n_positional; i++)
        if (file_is_same_path(path, cfg->positional[i]))
            return err_set(e, ERR_INPUT, "%s: '%s' is also a file this command reads: give the "
                           "output a path of its own", option, path);
    struct stat st;
    const struct {
        const char *option, *path;
    } inputs[] = {{"-f", cfg->scenario_path}, {"--hostfile", cfg->hostfile},
                  {"--cluster", stat(cfg->cluster, &st) == 0 ? cfg->cluster : ""}};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++)
        if (inputs[i].path[0] && file_is_same_path(path, inputs[i].path))
            return err_set(e, ERR_INPUT, "%s: '%s' is also the file of %s, which this command "
                           "reads: give the output a path of its own", option, path,
                           inputs[i].option);
    return 0;
}

/* Every output, with the option that names it; the directories last. */
struct output {
    const char *option, *path;
};
enum { N_OUTPUTS = 8, FIRST_OUTPUT_DIR = N_OUTPUTS - 2 };

static void outputs_of(const struct config *cfg, struct output outs[N_OUTPUTS])
{
    const struct output all[N_OUTPUTS] = {
        {"--json", cfg->json_path},        {"--csv", cfg->csv_path},
        {"--trace", cfg->trace_path},      {"--html", cfg->html_path},
        {"--save-params", cfg->save_params}, {"--output", cfg->output},
        {"--plot", cfg->plot_dir},         {"--chakra", cfg->chakra_dir},
    };
    memcpy(outs, all, sizeof all);
}

int outputs_check(const struct config *cfg, struct err *e)
{
    struct output outs[N_OUTPUTS];
    outputs_of(cfg, outs);
    /* One path for two outputs: the second written would replace the first
     * (or, a directory, refuse to be made where the file is). */
    for (int i = 0; i < N_OUTPUTS; i++)
        for (int j = 0; j < i; j++)
            if (outs[i].path[0] && outs[j].path[0] && file_is_same_path(outs[i].path, outs[j].path))
                return err_set(e, ERR_INPUT, "%s: '%s' is also the path of %s: give each output "
                               "a path of its own", outs[i].option, outs[i].path,
                               outs[j].option);
    for (int i = 0; i < N_OUTPUTS; i++) {
        if (!outs[i].path[0]) continue;
        TRY(check_not_input(cfg, outs[i].option, outs[i].path, e));
        if (i < FIRST_OUTPUT_DIR)
            TRY_CTX(e, file_check_writable(outs[i].path, e), "%s", outs[i].option);
        else
            TRY_CTX(e, file_check_dir_writable(outs[i].path, true, e), "%s", outs[i].option);
    }
    /* --timeline-steps alone drew nothing and said nothing */
    bool draws = cfg->timeline || cfg->plot_dir[0] || cfg->plot_terminal || cfg->html_path[0];
    if (cfg->timeline_steps[0] && !draws)
        return err_set(e, ERR_INPUT, "--timeline-steps %.40s: it picks the steps that --timeline, "
                       "--plot and --html draw, and none was given", cfg->timeline_steps);
    int64_t first, last;
    return outputs_timeline_steps(cfg, &first, &last, e);
}

/* "out/t.json" + "mirrored" -> "out/t.mirrored.json" */
static void per_strategy_path(const char *path, const char *name, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) dot = path + strlen(path);
    snprintf(buf, n, "%.*s.%s%s", (int)(dot - path), path, name, dot);
}

void outputs_trace_path(const struct config *cfg, const char *strategy, int n_asked, char *buf,
                        size_t n)
{
    if (n_asked == 1) snprintf(buf, n, "%s", cfg->trace_path);
    else per_strategy_path(cfg->trace_path, strategy, buf, n);
}

/* One strategy's trace path against the other outputs (--trace's own path
 * is not written when there are several), the inputs, and the traces
 * before it (paths[0..k)). */
static int check_trace_path(const struct config *cfg, const char *strategy, const char *path,
                            char (*paths)[OUTPUTS_TRACE_PATH_BYTES], int k, struct err *e)
{
    struct output outs[N_OUTPUTS];
    outputs_of(cfg, outs);
    for (int j = 0; j < N_OUTPUTS; j++)
        if (outs[j].path[0] && strcmp(outs[j].option, "--trace") &&
            file_is_same_path(path, outs[j].path))
            return err_set(e, ERR_INPUT, "--trace %s: %s's trace, '%s', is also the path of %s: "
                           "give each output a path of its own", cfg->trace_path, strategy, path,
                           outs[j].option);
    for (int j = 0; j < k; j++)
        if (file_is_same_path(path, paths[j]))
            return err_set(e, ERR_INPUT, "--trace %s: %s's trace, '%s', is also the path of "
                           "another strategy's trace: give --trace another name",
                           cfg->trace_path, strategy, path);
    TRY_CTX(e, check_not_input(cfg, "--trace", path, e), "%s's trace", strategy);
    TRY_CTX(e, file_check_writable(path, e), "--trace (%s's trace)", strategy);
    return 0;
}

int outputs_check_traces(const struct config *cfg, const char *const *strategies, int n,
                         struct err *e)
{
    if (!cfg->trace_path[0] || n < 2) return 0;   /* one: --trace's path, outputs_check's */
    char (*paths)[OUTPUTS_TRACE_PATH_BYTES] = XCALLOC(e, (size_t)n, sizeof *paths);
    if (!paths) return ERR_NOMEM;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        outputs_trace_path(cfg, strategies[i], n, paths[i], sizeof paths[i]);
        rc = check_trace_path(cfg, strategies[i], paths[i], paths, i, e);
    }
    free(paths);
    return rc;
}

int outputs_write_reports(const struct config *cfg, const struct report *const *reports, int n,
                          const double *speedup, struct err *e)
{
    int rc = 0;
    if (cfg->json_path[0]) {
        rc = n == 1 ? report_write_json_speedup(reports[0], speedup, cfg->json_path, e)
                    : report_write_compare_json(reports, n, speedup, cfg->json_path, e);
        if (rc < 0) err_prefix(e, "--json");
    }
    if (rc == 0 && cfg->csv_path[0]) {
        rc = report_write_csv(reports, n, speedup, cfg->csv_path, e);
        if (rc < 0) err_prefix(e, "--csv");
    }
    return rc;
}

int outputs_write(const struct config *cfg, struct sim_run *const *runs, int n, int n_asked,
                  const double *speedup, struct err *e)
{
    if (cfg->json_path[0] || cfg->csv_path[0]) {
        /* n + 1: a comparison where nothing ran still writes its document */
        const struct report **reports = XCALLOC(e, (size_t)n + 1, sizeof *reports);
        if (!reports) return ERR_NOMEM;
        for (int i = 0; i < n; i++) reports[i] = &runs[i]->report;
        int rc = outputs_write_reports(cfg, reports, n, speedup, e);
        free(reports);
        TRY(rc);
    }
    if (cfg->trace_path[0])
        for (int i = 0; i < n; i++) {
            char path[OUTPUTS_TRACE_PATH_BYTES];
            /* named by what was asked, not by what ran: a list's one
             * strategy that fitted still gets its suffix */
            outputs_trace_path(cfg, runs[i]->report.strategy, n_asked, path, sizeof path);
            const struct trace_scenario sc = {.mode = "sim", .cfg = runs[i]->report.config,
                                              .config_groups = runs[i]->report.config_groups,
                                              .steps = runs[i]->cfg.steps};
            TRY_CTX(e, trace_write_chrome(&runs[i]->trace, runs[i]->plan, &sc, path, e),
                    "--trace");
            if (runs[i]->trace.n_dropped)
                fprintf(stderr, "strata: --trace %s: kept the first %lld spans, left out %lld "
                        "(use fewer --steps for a whole trace)\n", path,
                        (long long)runs[i]->trace.spans.len, (long long)runs[i]->trace.n_dropped);
        }
    return 0;
}

void outputs_timeline(const struct sim_run *run)
{
    size_t n_spans;
    const struct span *spans = run_drawn_spans(run, &n_spans);
    int64_t first, last;
    struct err e = {0};
    if (outputs_timeline_steps(&run->cfg, &first, &last, &e) < 0) {   /* checked before the run */
        first = 0;
        last = OUTPUTS_TIMELINE_STEPS - 1;
    }
    /* failures (continue's death too) come with the run's marks */
    struct timeline_view v = {.dead_rank = -1, .marks = &run->marks};
    outputs_window_of(run, first, last, &v.begin_s, &v.end_s);
    /* On the ideal cluster, one time unit a column when it fits: the
     * textbook picture, as `strata schedule` draws it. */
    int cols = timeline_width();
    double len = v.end_s - v.begin_s;
    if (run->cluster.is_ideal && len + 18 < cols) cols = (int)len + 18;
    if (run->cfg.timeline_steps[0])
        printf("\n%s, steps %lld to %lld (%.4g to %.4g %s): ", run->report.strategy,
               (long long)first, (long long)last, v.begin_s, v.end_s,
               run->cluster.is_ideal ? "units" : "s");
    else
        printf("\n%s, first %d steps: ", run->report.strategy, OUTPUTS_TIMELINE_STEPS);
    timeline_print_view(stdout, spans, n_spans, run->plan->n_ranks, &v, cols, 64,
                        run->cluster.is_ideal ? "units" : "s");
}

void outputs_warn_memory(FILE *out, const char *indent, const struct report *r,
                         const struct cluster *cl)
{
    char peak[32], cap[32];
    format_bytes((double)r->memory_bytes_per_device.peak, peak, sizeof peak);
    format_bytes((double)cl->device.mem_bytes, cap, sizeof cap);
    /* what shrinks a device's share is the strategy's own knob: a
     * pipeline's microbatches, model parallelism's replicas, data
     * parallelism's batch per device */
    const struct strategy *st = strategy_find(r->strategy, &(struct err){0});
    const char *what = !st ? "more devices or a smaller --batch"
                       : strategy_reads(st, "microbatches") ? "more --microbatches or more devices"
                       : strategy_reads(st, "dp") ? "more devices, --dp or a smaller --batch"
                                                  : "more devices, a smaller --batch or a pipeline";
    fprintf(out, "%swarning: %s needs %s per device, more than the %s of a %s device: this plan "
                 "would not fit (%s would).\n",
            indent, r->strategy, peak, cap, cl->name, what);
}

void outputs_note_ideal(FILE *out, const struct sim_run *run)
{
    if (run->cluster.is_ideal)
        fprintf(out, "ideal cluster: a layer costs one unit per microbatch whatever its size, so "
               "speedups here\nare not meaningful; it is for schedules and closed forms.\n");
}

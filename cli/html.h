/* --html FILE: the report page of a command's run (plots/html_page.h),
 * made of the JSON document its --json writes, the figures its plots draw
 * (gnuplot's SVG, drawn into a temporary directory and inlined) and the
 * timelines of simulated runs. One call per command, after its other
 * outputs; errors name --html. */
#ifndef STRATA_CLI_HTML_H
#define STRATA_CLI_HTML_H

#include "../bench/run.h"
#include "../plots/plots.h"

/* Writes a command's JSON document to path (its --json writer). */
typedef int (*html_json_fn)(const void *ctx, const char *path, struct err *e);

struct html_run {
    const char *command;            /* "compare", "sweep", ... */
    const char *scenario;           /* one line, the page's subtitle and the plots' title */
    html_json_fn write_json;        /* the document, written as --json writes it */
    const void *json_ctx;
    struct sim_run *const *runs;    /* simulated runs whose timelines are drawn; NULL */
    int n_runs;
    const char *const *notes;       /* [n_notes] lines under the table */
    int n_notes;
    /* The figures, drawn as the command's --plot draws them (into o->dir);
     * NULL: as `strata plot` draws them from the document. */
    int (*draw)(const void *ctx, const struct plot_opts *o, struct err *e);
    const void *draw_ctx;
};

/* The page of r to cfg->html_path; nothing when --html was not given. */
int html_write(const struct config *cfg, const struct html_run *r, struct err *e);

/* The common case: one report (a report document) or several (a compare
 * document), as --json writes them. */
int html_write_reports(const struct config *cfg, const char *command, const char *scenario,
                       const struct report *const *rs, int n, struct sim_run *const *runs,
                       int n_runs, const char *const *notes, int n_notes, struct err *e);

/* compare's page (simulated or is_real): its reports, the timelines of
 * its simulated runs, and as notes the baseline and what did not run. */
struct compare;
int html_write_compare(const struct config *cfg, const char *scenario, const struct compare *c,
                       bool is_real, struct err *e);

/* strata plot: the page of the documents cfg's positional files hold. */
int html_write_files(const struct config *cfg, const char *command, const char *scenario,
                     struct err *e);

#endif

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
    const char *description;        /* the model, as the terminal's header says it; NULL */
    const char *notes_text;         /* the notes under the terminal's table (cli/notes.h) */
    html_json_fn write_json;        /* the document, written as --json writes it */
    const void *json_ctx;
    struct sim_run *const *runs;    /* simulated runs whose timelines are drawn; NULL */
    int n_runs;
    const char *const *notes;       /* [n_notes] more notes, a line each */
    int n_notes;
    /* The figures, drawn as the command's --plot draws them (into o->dir);
     * NULL: as `strata plot` draws them from the document. */
    int (*draw)(const void *ctx, const struct plot_opts *o, struct err *e);
    const void *draw_ctx;
};

/* The page of r to cfg->html_path; nothing when --html was not given. */
int html_write(const struct config *cfg, const struct html_run *r, struct err *e);

/* The common case: the page of r whose document is one report (a report
 * document) or several (a compare document, each with speedup[i] when
 * speedup is not NULL), as --json writes them; r's write_json and json_ctx
 * are set here. */
int html_write_reports(const struct config *cfg, struct html_run r,
                       const struct report *const *rs, int n, const double *speedup,
                       struct err *e);

/* strata plot: the page of the documents cfg's positional files hold. */
int html_write_files(const struct config *cfg, const char *command, const char *scenario,
                     struct err *e);

#endif

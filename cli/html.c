/* --html FILE: the documents and figures of a run gathered into one page.
 * The figures are drawn by the same plot code as --plot and `strata plot`,
 * into a temporary directory that is removed afterwards, whatever happens
 * (and on a signal: core/temp_files). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/fileio.h"
#include "../core/temp_files.h"
#include "../plots/gnuplot.h"
#include "../plots/html_page.h"
#include "html.h"
#include "outputs.h"
#include "plot.h"

#define PATH_BYTES (CONFIG_PATH_BYTES + 256)

/* --- The temporary directory ---------------------------------------------- */

struct workdir {
    char path[PATH_BYTES];
    int slot;
};

static int workdir_make(struct workdir *w, struct err *e)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(w->path, sizeof w->path, "%s/strata-html-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(w->path))
        return err_set(e, ERR_IO, "cannot create a temporary directory '%s' for the page's "
                       "figures: %s (set TMPDIR to a writable directory)", w->path,
                       strerror(errno));
    w->slot = temp_files_track(w->path, true);
    return 0;
}

/* Removes what the plots left (files only: their staging directories are
 * gone by the time they return) and the directory. */
static void workdir_remove(struct workdir *w)
{
    DIR *d = opendir(w->path);
    if (d) {
        struct dirent *de;
        char path[PATH_BYTES + 256];
        while ((de = readdir(d)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", w->path, de->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(w->path);
    temp_files_forget(w->slot);
}

/* --- The page ---------------------------------------------------------------- */

struct page_docs {
    int n;
    char **texts;              /* [n], owned */
    size_t *lens;
    struct report_doc *parsed; /* [n], owned */
    struct html_doc *docs;     /* [n]: texts and sources */
};

static void page_docs_release(struct page_docs *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->texts ? p->texts[i] : NULL);
        if (p->parsed) report_doc_release(&p->parsed[i]);
    }
    free(p->texts);
    free(p->lens);
    free(p->parsed);
    free(p->docs);
}

static int page_docs_alloc(struct page_docs *p, int n, struct err *e)
{
    p->n = n;
    p->texts = XCALLOC(e, (size_t)n, sizeof *p->texts);
    p->lens = XCALLOC(e, (size_t)n, sizeof *p->lens);
    p->parsed = XCALLOC(e, (size_t)n, sizeof *p->parsed);
    p->docs = XCALLOC(e, (size_t)n, sizeof *p->docs);
    return p->texts && p->lens && p->parsed && p->docs ? 0 : ERR_NOMEM;
}

/* Document i from path, shown as source. */
static int page_docs_read(struct page_docs *p, int i, const char *path, const char *source,
                          struct err *e)
{
    TRY(json_slurp(path, &p->texts[i], &p->lens[i], e));
    TRY(report_doc_parse(p->texts[i], p->lens[i], source, &p->parsed[i], e));
    p->docs[i] = (struct html_doc){source, p->texts[i], p->lens[i]};
    return 0;
}

/* The figures of the run (its own drawing, or the documents') and the
 * runs' timelines, into dir; those left out, and why, on notes; the names
 * of the documents' figures, as drawn, in names[n_names]. */
static int draw(const struct config *cfg, const char *dir, const struct html_run *r,
                const struct page_docs *d, FILE *notes, char *names, size_t n_names,
                struct err *e)
{
    const char *scenario = r->scenario;
    struct sim_run *const *runs = r->runs;
    int n_runs = r->n_runs;
    struct plot_opts o = {dir, false, scenario, .is_sparing = true};
    if (r->draw) TRY(r->draw(r->draw_ctx, &o, e));
    else TRY(plot_documents(&o, d->parsed, d->n, names, n_names, notes, e));
    if (n_runs == 0) return 0;
    int64_t step_a, step_b;
    TRY(outputs_timeline_steps(cfg, &step_a, &step_b, e));
    char title[600];
    snprintf(title, sizeof title, "steps %lld to %lld; %s", (long long)step_a, (long long)step_b,
             scenario);
    o.title = title;
    return plot_run_timelines(&o, runs, n_runs, step_a, step_b, names, n_names, e);
}

static int write_page(const struct config *cfg, const struct html_run *r, const char *dir,
                      const struct page_docs *d, struct err *e)
{
    char gnuplot[PATH_BYTES], why[PATH_BYTES + 200], names[1024] = "";
    char *left_out = NULL;
    size_t left_out_len = 0;
    bool has_gnuplot = gnuplot_find(gnuplot, sizeof gnuplot);
    if (has_gnuplot) {
        FILE *notes = open_memstream(&left_out, &left_out_len);   /* NULL: not said */
        int rc = draw(cfg, dir, r, d, notes, names, sizeof names, e);
        if (notes) fclose(notes);
        if (rc < 0) {
            free(left_out);
            return rc;
        }
    } else
        snprintf(why, sizeof why, "No plots: they need gnuplot, and none was found (%s). "
                 "Install it (Debian: apt install gnuplot-nox) and run the command again; the "
                 "table and the data above are complete without it.", gnuplot);
    struct html_page page = {
        .command = r->command, .scenario = r->scenario, .description = r->description,
        .notes_text = r->notes_text, .notes = r->notes,
        .n_notes = r->n_notes, .docs = d->docs, .n_docs = d->n,
        .figure_dir = has_gnuplot ? dir : NULL, .no_figures_why = has_gnuplot ? NULL : why,
        .figure_notes = left_out, .figure_order = names,
    };
    int rc = html_page_write(&page, cfg->html_path, e);
    free(left_out);
    return rc;
}

/* The page of documents read from files[0..n) (written by r->write_json
 * into the work directory when files is NULL). */
static int write_from(const struct config *cfg, const struct html_run *r,
                      const char *const *files, int n, struct err *e)
{
    struct workdir w;
    TRY(workdir_make(&w, e));
    struct page_docs d = {0};
    char doc_path[PATH_BYTES + 16];
    snprintf(doc_path, sizeof doc_path, "%s/report.json", w.path);
    int rc = page_docs_alloc(&d, files ? n : 1, e);
    if (rc == 0 && !files) rc = r->write_json(r->json_ctx, doc_path, e);
    for (int i = 0; rc == 0 && i < d.n; i++)
        rc = page_docs_read(&d, i, files ? files[i] : doc_path, files ? files[i] : r->command, e);
    if (rc == 0) rc = write_page(cfg, r, w.path, &d, e);
    page_docs_release(&d);
    workdir_remove(&w);
    return rc < 0 ? err_prefix(e, "--html") : 0;
}

int html_write(const struct config *cfg, const struct html_run *r, struct err *e)
{
    if (!cfg->html_path[0]) return 0;
    return write_from(cfg, r, NULL, 0, e);
}

struct reports {
    const struct report *const *rs;
    int n;
    const double *speedup;
};

static int write_reports(const void *ctx, const char *path, struct err *e)
{
    const struct reports *r = ctx;
    return r->n == 1 ? report_write_json_speedup(r->rs[0], r->speedup, path, e)
                     : report_write_compare_json(r->rs, r->n, r->speedup, path, e);
}

int html_write_reports(const struct config *cfg, struct html_run r,
                       const struct report *const *rs, int n, const double *speedup,
                       struct err *e)
{
    struct reports ctx = {rs, n, speedup};
    r.write_json = write_reports;
    r.json_ctx = &ctx;
    return html_write(cfg, &r, e);
}

int html_write_files(const struct config *cfg, const char *command, const char *scenario,
                     struct err *e)
{
    if (!cfg->html_path[0]) return 0;
    struct html_run r = {.command = command, .scenario = scenario};
    return write_from(cfg, &r, (const char *const *)cfg->positional, cfg->n_positional, e);
}

/* The report page (--html FILE): one self-contained HTML file holding a
 * run's scenario, its table with a legend, its notes, every figure its
 * plots drew (gnuplot's SVG, inlined), the timelines with a zoom, and the
 * JSON documents themselves for reuse. Nothing is loaded from elsewhere:
 * the page's Content-Security-Policy forbids it, so a browser proves it.
 *
 * The table is built from the JSON documents, not from the structs that
 * made them: what a reader sees is what the embedded JSON says, and each
 * number's cell names the JSON path it shows (data-json="reports[2].
 * step_time_s.mean", relative to its document), its scale (data-scale:
 * 1e6 for a time shown in µs, 100 for a share shown in %) and its document
 * (data-doc), so a test can check the two against each other. */
#ifndef STRATA_PLOTS_HTML_PAGE_H
#define STRATA_PLOTS_HTML_PAGE_H

#include <stddef.h>
#include <stdio.h>

#include "../core/err.h"

/* One JSON document of the page, as its writer wrote it. */
struct html_doc {
    const char *source;     /* what it is: "compare", or the file it was read from */
    const char *json;       /* its text, [json_len]; valid JSON (ERR_INPUT otherwise) */
    size_t json_len;
};

struct html_page {
    const char *command;          /* "compare", "sim", ... : the heading */
    const char *scenario;         /* one line: devices, cluster, batch, model, stragglers */
    const char *description;      /* the model, as the terminal's header says it; NULL */
    const char *notes_text;       /* the notes under the terminal's table, as printed; NULL */
    const char *const *notes;     /* [n_notes] more notes, a line each */
    int n_notes;
    const struct html_doc *docs;  /* [n_docs] */
    int n_docs;
    const char *figure_dir;       /* its *.svg are inlined, by name; NULL: none drawn */
    const char *no_figures_why;   /* shown instead of figures when set (no gnuplot, say) */
    const char *figure_notes;     /* the figures left out and why, as the plots said it; NULL */
    const char *figure_order;     /* the figures' names in the order the terminal lists them
                                   * ("convergence, staleness"): those first, the rest by
                                   * name; NULL or "": all by name */
};

/* Writes the page to path atomically (core/fileio). ERR_INPUT when a
 * document is not JSON, ERR_IO, ERR_NOMEM. Same inputs, same bytes. */
int html_page_write(const struct html_page *page, const char *path, struct err *e);

/* --- Pieces, for html_page.c and html_table.c --------------------------- */

/* s with & < > " ' as character references: safe in text and in quoted
 * attributes. */
void html_escape(FILE *out, const char *s);

/* Text as the terminal prints its notes, each item as a <li>: an item
 * starts at a line that is not indented, or whose text starts with "note:",
 * "not run:", "warning:", "failed:" or "no baseline"; an indented line
 * goes on the item before it (joined by a space); blank lines part items. */
void html_note_items(FILE *out, const char *text);

/* The table of every report found in the documents (an object with
 * "strategy" and "step_time_s"), a row each, with a legend of the columns
 * shown; under it, a replay document's per-rank table (id strata-ranks),
 * as its terminal prints it. ERR_INPUT when a document does not parse. */
int html_table_write(FILE *out, const struct html_doc *docs, int n_docs, struct err *e);

#endif

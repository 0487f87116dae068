/* The report page: the frame (head, style, script), the figures read from
 * the plots' directory, and the documents embedded as JSON. The table is
 * html_table.c's. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileio.h"
#include "../core/vec.h"
#include "html_page.h"

#define PATH_BYTES 4200

/* Nothing from elsewhere: no script, style, image, font or frame of
 * another origin, and no fetch. A browser then refuses any such load and
 * says so in its console, which the browser test reads. */
#define CSP "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; " \
            "img-src data:"

/* A page for a screen, a phone (the table scrolls by itself, the figures
 * shrink to the width) and paper (no buttons, figures kept whole). */
static const char style[] =
    "body{font:15px/1.45 system-ui,sans-serif;color:#1d1d1d;max-width:1200px;"
    "margin:0 auto;padding:0 1em 2em}\n"
    "h1{font-size:1.5em;margin:.8em 0 .2em}h2{font-size:1.2em;margin:1.4em 0 .4em;"
    "border-bottom:1px solid #ccc}\n"
    ".scenario{color:#444;margin:0}\n"
    ".scroll{overflow-x:auto}\n"
    "table{border-collapse:collapse;font-variant-numeric:tabular-nums}\n"
    "th,td{padding:.2em .6em;border-bottom:1px solid #e2e2e2;white-space:nowrap;text-align:left}\n"
    "th{background:#f3f3f3}.num{text-align:right}tbody tr:nth-child(even){background:#fafafa}\n"
    "dl.legend{display:grid;grid-template-columns:repeat(auto-fill,minmax(26em,1fr));"
    "gap:.1em 1.5em;font-size:.85em;color:#333}\n"
    "dl.legend div{display:flex;gap:.6em}dl.legend dt{font-weight:600;min-width:6.5em}"
    "dl.legend dd{margin:0}\n"
    "figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.3em}\n"
    "figure svg{display:block;width:100%;height:auto;background:#fff}\n"
    ".pan{overflow-x:auto;border:1px solid #ddd}\n"
    ".zoom button{font:inherit;min-width:2.4em;margin-right:.3em}\n"
    "code{background:#f3f3f3;padding:0 .2em}\n"
    "#strata-errors:empty{display:none}#strata-errors{color:#a00}\n"
    "@media (max-width:600px){body{font-size:14px;padding:0 .5em}}\n"
    "@media print{body{max-width:none;font-size:11px}.zoom{display:none}"
    ".pan,.scroll{overflow:visible;border:0}figure{break-inside:avoid}"
    "figure svg{width:100%!important}}\n";

/* The timelines' zoom: each press doubles or halves the drawing's width in
 * its scrolling frame (text and boxes grow together, the frame scrolls).
 * Errors of this script land in #strata-errors as well as the console;
 * data-strata-ready says it ran to its end. */
static const char script[] =
    "(function(){\n"
    "  var list=document.getElementById('strata-errors');\n"
    "  window.addEventListener('error',function(ev){var li=document.createElement('li');"
    "li.textContent=String(ev.message||ev);list.appendChild(li);});\n"
    "  var zooms=document.querySelectorAll('.zoom');\n"
    "  for(var i=0;i<zooms.length;i++)(function(bar){\n"
    "    var svg=bar.parentNode.querySelector('svg'),level=1,shown=bar.querySelector('output');\n"
    "    bar.addEventListener('click',function(ev){\n"
    "      var how=ev.target.getAttribute('data-zoom');if(!how||!svg)return;\n"
    "      level=how==='in'?Math.min(level*2,64):how==='out'?Math.max(level/2,1):1;\n"
    "      svg.style.width=(100*level)+'%';shown.textContent=level+'\\u00d7';\n"
    "    });\n"
    "  })(zooms[i]);\n"
    "  document.body.setAttribute('data-strata-ready','1');\n"
    "})();\n";

/* s[0..n) escaped as html_escape does. */
static void escape_n(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) switch (s[i]) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(s[i], out);
        }
}

void html_escape(FILE *out, const char *s)
{
    if (s) escape_n(out, s, strlen(s));
}

/* Does the line (its indentation skipped) start an item of its own? */
static bool starts_note(const char *line, size_t indent)
{
    static const char *const heads[] = {"note:", "not run:", "warning:", "failed:",
                                        "no baseline"};
    if (indent == 0) return true;
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        if (!strncmp(line + indent, heads[i], strlen(heads[i]))) return true;
    return false;
}

void html_note_items(FILE *out, const char *text)
{
    bool is_open = false;
    for (const char *line = text; line && *line;) {
        size_t len = strcspn(line, "\n"), indent = strspn(line, " ");
        if (indent >= len) {   /* blank: the item ends */
            if (is_open) fputs("</li>\n", out);
            is_open = false;
        } else {
            bool is_new = !is_open || starts_note(line, indent);
            if (is_open && is_new) fputs("</li>\n", out);
            fputs(is_new ? "<li>" : " ", out);
            is_open = true;
            escape_n(out, line + indent, len - indent);
        }
        line += len + (line[len] == '\n');
    }
    if (is_open) fputs("</li>\n", out);
}

/* JSON inside <script>: '<' as \u003c, so that no "</script>" or "<!--" in a
 * string (a strategy name, a path) ends the element early; '>' and '&' too,
 * for good measure. These three occur in valid JSON only inside strings,
 * where the escape reads back as the character. */
static void embed_json(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) switch (s[i]) {
        case '<': fputs("\\u003c", out); break;
        case '>': fputs("\\u003e", out); break;
        case '&': fputs("\\u0026", out); break;
        default: fputc(s[i], out);
        }
}

/* --- Figures -------------------------------------------------------------- */

typedef VEC(char *) name_vec;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(name_vec *v)
{
    for (size_t i = 0; i < v->len; i++) free(v->items[i]);
    vec_free(v);
}

/* The *.svg of dir, sorted: the page does not depend on readdir's order. */
static int list_svgs(const char *dir, name_vec *out, struct err *e)
{
    DIR *d = opendir(dir);
    if (!d) return err_set(e, ERR_IO, "cannot read the figures in '%s': %s", dir, strerror(errno));
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len < 5 || strcmp(de->d_name + len - 4, ".svg")) continue;
        char *name = strdup(de->d_name);
        if (!name || vec_push(out, name) < 0) {
            free(name);
            rc = err_set(e, ERR_NOMEM, "out of memory listing the figures");
        }
    }
    closedir(d);
    if (rc == 0 && out->len) qsort(out->items, out->len, sizeof *out->items, by_name);
    return rc;
}

static int read_whole(const char *path, char **text, struct err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, ERR_IO, "cannot read the figure '%s': %s", path, strerror(errno));
    VEC(char) buf = {0};
    char chunk[8192];
    size_t n;
    int rc = 0;
    while (rc == 0 && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (vec_reserve(&buf, buf.len + n + 1) < 0) rc = ERR_NOMEM;
        else memcpy(buf.items + buf.len, chunk, n), buf.len += n;
    if (rc == 0 && ferror(f)) rc = err_set(e, ERR_IO, "cannot read the figure '%s'", path);
    else if (rc == 0 && vec_reserve(&buf, buf.len + 1) < 0) rc = ERR_NOMEM;
    fclose(f);
    if (rc == ERR_NOMEM) err_set(e, ERR_NOMEM, "out of memory reading the figure '%s'", path);
    if (rc < 0) {
        vec_free(&buf);
        return rc;
    }
    buf.items[buf.len] = '\0';
    *text = buf.items;
    return 0;
}

/* gnuplot's SVG, inlined: from its <svg> on (the XML prolog and doctype
 * are not HTML), with every id and reference to one prefixed, since every
 * figure gnuplot draws names its canvas and markers alike. */
static void inline_svg(FILE *out, const char *svg, int figure)
{
    static const char *const refs[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
    const char *p = strstr(svg, "<svg");
    if (!p) return;
    while (*p) {
        size_t k = 0, len = 0;
        for (; k < sizeof refs / sizeof refs[0]; k++)
            if (!strncmp(p, refs[k], len = strlen(refs[k]))) break;
        if (k < sizeof refs / sizeof refs[0]) {
            fprintf(out, "%.*sf%d-", (int)len, p, figure);
            p += len;
        } else {
            fputc(*p++, out);
        }
    }
}

static bool is_timeline(const char *name)
{
    return !strncmp(name, "timeline-", 9);
}

/* The figures of one kind (timelines or the others), each in a <figure>. */
static int write_figures(FILE *out, const char *dir, const name_vec *names, bool timelines,
                         struct err *e)
{
    for (size_t i = 0; i < names->len; i++) {
        const char *name = names->items[i];
        if (is_timeline(name) != timelines) continue;
        char path[PATH_BYTES], *svg = NULL;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        TRY(read_whole(path, &svg, e));
        /* "timeline-ps-async.svg" is captioned "ps-async" under Timelines */
        const char *caption = timelines ? name + 9 : name;
        char shown[256];
        snprintf(shown, sizeof shown, "%.*s", (int)(strlen(caption) - 4), caption);
        fputs("<figure>\n<figcaption>", out);
        html_escape(out, shown);
        fputs("</figcaption>\n", out);
        if (timelines)
            fputs("<div class=\"zoom\"><button type=\"button\" data-zoom=\"out\">−</button>"
                  "<button type=\"button\" data-zoom=\"in\">+</button><button type=\"button\" "
                  "data-zoom=\"fit\">fit</button> <output>1×</output></div>\n<div class=\"pan\">",
                  out);
        inline_svg(out, svg, (int)i);
        fputs(timelines ? "</div>\n</figure>\n" : "\n</figure>\n", out);
        free(svg);
    }
    return 0;
}

/* names (sorted) put in order's order: each figure order lists ("a, b"),
 * then the others as they were. */
static void order_figures(name_vec *names, const char *order)
{
    size_t front = 0;
    for (const char *o = order; o && *o;) {
        o += strspn(o, ", ");
        size_t len = strcspn(o, ",");
        for (size_t i = front; len && i < names->len; i++) {
            char *name = names->items[i];
            if (strlen(name) != len + 4 || strncmp(name, o, len) || strcmp(name + len, ".svg"))
                continue;
            memmove(&names->items[front + 1], &names->items[front],
                    (i - front) * sizeof *names->items);
            names->items[front++] = name;
            break;
        }
        o += len;
    }
}

static int write_figure_sections(FILE *out, const struct html_page *p, struct err *e)
{
    name_vec names = {0};
    if (p->figure_dir && list_svgs(p->figure_dir, &names, e) < 0) {
        names_free(&names);
        return e->code;
    }
    order_figures(&names, p->figure_order);   /* as the terminal lists them */
    bool has_timelines = false, has_plots = false;
    for (size_t i = 0; i < names.len; i++)
        *(is_timeline(names.items[i]) ? &has_timelines : &has_plots) = true;
    fputs("<section id=\"plots\">\n<h2>Plots</h2>\n", out);
    if (p->figure_notes && *p->figure_notes) {
        fputs("<ul class=\"note\">\n", out);
        html_note_items(out, p->figure_notes);
        fputs("</ul>\n", out);
    }
    if (p->no_figures_why) {
        fputs("<p class=\"note\">", out);
        html_escape(out, p->no_figures_why);
        fputs("</p>\n", out);
    } else if (!has_plots) {
        fputs("<p>This run drew no plots.</p>\n", out);
    }
    int rc = write_figures(out, p->figure_dir, &names, false, e);
    fputs("</section>\n", out);
    if (rc == 0 && has_timelines) {
        fputs("<section id=\"timelines\">\n<h2>Timelines</h2>\n<p>A row per rank and stream, "
              "a box per op coloured by its kind; white is idle. + and − zoom in time; the "
              "frame scrolls.</p>\n", out);
        rc = write_figures(out, p->figure_dir, &names, true, e);
        fputs("</section>\n", out);
    }
    names_free(&names);
    return rc;
}

/* --- The page ---------------------------------------------------------------- */

static void write_head(FILE *out, const struct html_page *p)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"" CSP "\">\n"
          "<meta name=\"generator\" content=\"strata\">\n<title>strata ", out);
    html_escape(out, p->command);
    if (p->scenario && *p->scenario) {
        fputs(": ", out);
        html_escape(out, p->scenario);
    }
    fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n", style);
}

static void write_notes(FILE *out, const struct html_page *p)
{
    bool has_text = p->notes_text && p->notes_text[strspn(p->notes_text, " \n")];
    if (p->n_notes == 0 && !has_text) return;
    fputs("<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n", out);
    if (has_text) html_note_items(out, p->notes_text);
    for (int i = 0; i < p->n_notes; i++) {
        fputs("<li>", out);
        html_escape(out, p->notes[i]);
        fputs("</li>\n", out);
    }
    fputs("</ul>\n</section>\n", out);
}

static void write_docs(FILE *out, const struct html_page *p)
{
    fputs("<section id=\"data\">\n<h2>Data</h2>\n<p>The report", out);
    fputs(p->n_docs == 1 ? " is" : "s are", out);
    fputs(" embedded in this page as JSON, as <code>--json</code> writes it: in a browser's "
          "console, <code>JSON.parse(document.getElementById('strata-doc-0').textContent)"
          "</code>; <code>strata help metrics</code> defines each field.</p>\n<ul>\n", out);
    for (int i = 0; i < p->n_docs; i++) {
        fprintf(out, "<li><code>strata-doc-%d</code>: ", i);
        html_escape(out, p->docs[i].source);
        fputs("</li>\n", out);
    }
    fputs("</ul>\n</section>\n", out);
    for (int i = 0; i < p->n_docs; i++) {
        fprintf(out, "<script type=\"application/json\" id=\"strata-doc-%d\" data-source=\"", i);
        html_escape(out, p->docs[i].source);
        fputs("\">\n", out);
        embed_json(out, p->docs[i].json, p->docs[i].json_len);
        fputs("\n</script>\n", out);
    }
}

int html_page_write(const struct html_page *p, const char *path, struct err *e)
{
    struct file_stream s;
    TRY(file_stream_open(&s, path, e));
    FILE *out = s.f;
    write_head(out, p);
    fputs("<body>\n<header>\n<h1>strata ", out);
    html_escape(out, p->command);
    fputs("</h1>\n<p class=\"scenario\">", out);
    html_escape(out, p->scenario ? p->scenario : "");
    fputs("</p>\n", out);
    if (p->description && *p->description) {
        fputs("<p class=\"scenario\">", out);
        html_escape(out, p->description);
        fputs("</p>\n", out);
    }
    fputs("</header>\n<ul id=\"strata-errors\"></ul>\n"
          "<section id=\"results\">\n<h2>Results</h2>\n", out);
    int rc = html_table_write(out, p->docs, p->n_docs, e);
    fputs("</section>\n", out);
    write_notes(out, p);
    if (rc == 0) rc = write_figure_sections(out, p, e);
    write_docs(out, p);
    fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", script);
    if (rc < 0) {   /* nothing written: the stream's memory goes, e keeps its message */
        fclose(s.f);
        free(s.buf);
        return rc;
    }
    return file_stream_commit(&s, path, e);
}

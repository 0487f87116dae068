/* The report page (--html FILE, plots/html_page.h, cli/html.c) without a
 * browser: what it escapes, what it embeds, that its table says what its
 * JSON says, that it loads nothing from elsewhere, that it is the same for
 * the same seed, and how --html is refused. test_html_browser.c loads the
 * pages in Chromium. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plots/html_page.h"
#include "helpers.h"
#include "html_check.h"

TEST_SUITE_WITH_TMP_DIR(html, .timeout = 120);

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

/* A strategy name and a source that would end the <script> early or open a
 * tag, were they not escaped. */
Test(html, page_escapes_what_it_shows_and_embeds)
{
    const char *json = "{\"strata_compare\": 1, \"reports\": [{\"strategy\": "
                       "\"x</script><b>&'\\\"\", \"mode\": \"sim\", \"devices\": 2, "
                       "\"step_time_s\": {\"mean\": 0.25, \"p50\": 0.25, \"p99\": 0.5}}]}";
    struct html_doc doc = {"odd <name> & \"quotes\".json", json, strlen(json)};
    const char *notes[] = {"a note with <i>markup</i>"};
    struct html_page page = {.command = "compare", .scenario = "2 devices of <cluster>",
                             .notes = notes, .n_notes = 1, .docs = &doc, .n_docs = 1,
                             .no_figures_why = "no figures"};
    struct err e = {0};
    const char *path = test_tmp_path("p.html");
    cr_assert_eq(html_page_write(&page, path, &e), 0, "%s", e.msg);
    char *html = test_slurp(path);
    /* the page's own two scripts end; nothing else does */
    cr_expect_eq(count(html, "</script>"), 2, "a </script> of the data got through");
    cr_expect_null(strstr(html, "<b>"));
    cr_expect_null(strstr(html, "<i>"));
    cr_expect_null(strstr(html, "<cluster>"));
    cr_expect_not_null(strstr(html, "x&lt;/script&gt;&lt;b&gt;&amp;&#39;&quot;"), "the table's cell");
    cr_expect_not_null(strstr(html, "odd &lt;name&gt; &amp; &quot;quotes&quot;.json"));
    cr_expect_not_null(strstr(html, "2 devices of &lt;cluster&gt;"));
    /* the embedded document reads back as written */
    cJSON *back = page_doc(html, 0), *orig = cJSON_Parse(json);
    cr_assert_not_null(back, "the embedded JSON does not parse");
    cr_expect(cJSON_Compare(back, orig, true), "the embedded JSON differs from the document");
    /* devices; 0.25 s and 0.5 s shown in ms as 250 and 500; the other
     * columns are empty, the report having no such fields */
    cr_expect_eq(page_check_numbers(html), 3);
    cr_expect_not_null(strstr(html, "data-scale=\"1000\">250</td>"));
    cJSON_Delete(back);
    cJSON_Delete(orig);
    free(html);
}

/* A malformed document is refused, and no page is left behind. */
Test(html, malformed_document_writes_no_page)
{
    struct html_doc doc = {"bad.json", "{\"strata_report\": ", 18};
    struct html_page page = {.command = "plot", .docs = &doc, .n_docs = 1};
    struct err e = {0};
    const char *path = test_tmp_path("bad.html");
    cr_expect_eq(html_page_write(&page, path, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "bad.json"), "%s", e.msg);
    FILE *f = fopen(path, "r");
    cr_expect_null(f, "a page was written for a malformed document");
    if (f) fclose(f);
}

/* compare's page: its embedded document is --json's, every number of its
 * table is that document's, and each strategy has its timeline. */
Test(html, compare_page_is_its_json)
{
    const char *page = test_tmp_path("c.html"), *json = test_tmp_path("c.json");
    struct run r = RUN("compare", "--strategies", "mirrored,pipeline-1f1b,ps-async", "--steps",
                       "3", "--html", page, "--json", json);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *html = test_slurp(page);
    cJSON *embedded = page_doc(html, 0), *written = read_json(json);
    cr_assert_not_null(embedded);
    cr_expect(cJSON_Compare(embedded, written, true), "the page's JSON is not --json's");
    /* 3 reports, 12 numeric columns each (of the optional ones only the
     * speedup has a number: no numerics, no failure) */
    cr_expect_eq(page_check_numbers(html), 3 * 12);
    cr_expect_eq(count(html, "class=\"zoom\""), 3, "a zoomable timeline per strategy");
    cr_expect_not_null(strstr(html, "<li>speedup: samples applied per second over the baseline"),
                       "the baseline note");
    cJSON_Delete(embedded);
    cJSON_Delete(written);
    free(html);
}

/* The page of a 3-step sim of strategy, written to test_tmp_dir/name
 * (caller frees). */
static char *sim_page(const char *strategy, const char *name)
{
    const char *page = test_tmp_path(name);
    expect_ok(RUN("sim", "--strategy", strategy, "--steps", "3", "--html", page), strategy);
    return test_slurp(page);
}

/* Nothing outside the file: no link, no src, no URL but the SVG namespaces,
 * and a Content-Security-Policy that forbids loading any (the browser test
 * shows a browser keeps to it). */
Test(html, page_loads_nothing_from_elsewhere)
{
    char *html = sim_page("ps-async", "s.html");
    cr_expect_not_null(strstr(html, "http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"));
    cr_expect_null(strstr(html, "<link"));
    cr_expect_null(strstr(html, " src="));
    cr_expect_null(strstr(html, "<?xml"), "gnuplot's prolog is not HTML");
    int urls = count(html, "http://") + count(html, "https://");
    int namespaces = count(html, "http://www.w3.org/");
    cr_expect_eq(urls, namespaces, "%d URLs, %d of them SVG namespaces", urls, namespaces);
    cr_expect_gt(count(html, "<svg"), 1, "the plots and the timeline inlined");
    free(html);
}

Test(html, same_seed_same_page)
{
    const char *a = test_tmp_path("a.html"), *b = test_tmp_path("b.html");
    for (int i = 0; i < 2; i++) {
        struct run r = RUN("sim", "--strategy", "pipeline-gpipe", "--steps", "3", "--straggler",
                           "exp:0.2", "--html", i ? b : a);
        cr_assert_eq(r.status, 0, "%s", r.err);
        run_free(&r);
    }
    size_t na, nb;
    char *pa = test_slurp_n(a, &na), *pb = test_slurp_n(b, &nb);
    cr_expect(na == nb && !memcmp(pa, pb, na), "two runs of one seed made different pages");
    free(pa);
    free(pb);
}

/* Without gnuplot: the table and the data, and a line saying what the
 * plots need. */
Test(html, page_without_gnuplot_says_so)
{
    setenv("STRATA_GNUPLOT", "/nonexistent/gnuplot", 1);
    char *html = sim_page("mirrored", "n.html");
    cr_expect_not_null(strstr(html, "they need gnuplot"));
    cr_expect_null(strstr(html, "<svg"));
    cr_expect_eq(page_check_numbers(html), 12, "11 and the speedup sim's document carries");
    free(html);
}

/* `strata plot` of two documents: both embedded, named by their files
 * (escaped), and the table holds the reports of both. */
Test(html, plot_page_of_two_documents)
{
    const char *a = test_tmp_path("one & <two>.json"), *b = test_tmp_path("sweep.json");
    struct run r = RUN("sim", "--strategy", "mirrored", "--steps", "3", "--json", a);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN("sweep", "--devices", "1,2", "--strategies", "mirrored", "--steps", "3", "--json", b);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    const char *page = test_tmp_path("p.html");
    r = RUN("plot", a, b, "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *html = test_slurp(page);
    cr_expect_not_null(strstr(html, "one &amp; &lt;two&gt;.json"));
    cr_expect_null(strstr(html, "<two>"));
    /* one report with its speedup, then two sweep points with speedup,
     * efficiency and batch, and the sweep's baseline with its batch */
    cr_expect_eq(page_check_numbers(html), 12 + 2 * 14 + 12);
    cr_expect_not_null(strstr(html, "<td>mirrored (baseline)</td>"));
    cr_expect_not_null(strstr(html, "<figcaption>speedup</figcaption>"), "the sweep's figure");
    free(html);
}

/* `strata plot`'s page had its figures by file name (efficiency, speedup,
 * staleness); the terminal lists them as drawn (convergence, staleness,
 * speedup, efficiency): the page now shows them in that order (the empty
 * convergence figure it leaves out, saying so). */
Test(html, plot_page_has_the_figures_in_the_terminals_order)
{
    const char *a = test_tmp_path("po-sim.json"), *b = test_tmp_path("po-sweep.json");
    const char *dir = test_tmp_path("po-plots"), *page = test_tmp_path("po.html");
    expect_ok(RUN("sweep", "--devices", "1,2", "--strategies", "mirrored", "--steps", "2",
                  "--json", b), "sweep --json");
    expect_ok(RUN("sim", "--strategy", "ps-async", "--devices", "4", "--steps", "3", "--json", a),
              "sim --json");
    struct run r = RUN("plot", b, a, "--plot", dir, "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *list = strstr(r.out, "plots in ");
    cr_assert_not_null(list, "%s", r.out);
    list = strstr(list, ": ");
    cr_assert_not_null(list, "%s", r.out);
    char *html = test_slurp(page);
    int n = 0;
    const char *at = html;
    for (const char *name = list + 2; *name && *name != ' ' && *name != '(';) {
        size_t len = strcspn(name, ", (\n");
        char caption[96];
        snprintf(caption, sizeof caption, "<figcaption>%.*s</figcaption>", (int)len, name);
        const char *found = strstr(html, caption);
        if (!strncmp(name, "convergence", len)) {   /* empty: on the page, a note says so */
            cr_expect_null(found, "the empty convergence figure is on the page");
            cr_expect_not_null(strstr(html, "<li>note: no convergence plot: "));
        } else {
            cr_expect(found && found > at, "%.*s: not after the figure before it", (int)len, name);
            if (found) at = found;
            n++;
        }
        name += len;
        name += strspn(name, ", ");
    }
    cr_expect_eq(n, 3, "staleness, speedup, efficiency: %s", r.out);
    free(html);
    run_free(&r);
}

/* --html alone draws for the page only, which leaves the empty
 * convergence figure out: the terminal said it was drawn empty. */
Test(html, plot_html_alone_says_what_the_page_does)
{
    const char *b = test_tmp_path("pa-sweep.json"), *page = test_tmp_path("pa.html");
    expect_ok(RUN("sweep", "--devices", "1,2", "--strategies", "mirrored", "--steps", "2",
                  "--json", b), "sweep --json");
    struct run r = RUN("plot", b, "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "note: no convergence plot: no loss curve"), "%s", r.out);
    cr_expect_null(strstr(r.out, "convergence plot is empty"), "%s", r.out);
    char *html = test_slurp(page);
    cr_expect_not_null(strstr(html, "<li>note: no convergence plot: "));
    free(html);
    run_free(&r);
}

Test(html, refusals_name_the_option)
{
    const char *p = test_tmp_path("x.html");
    expect_refused(RUN("sim", "--html", p, "--json", p), "--html", "--json");
    expect_refused(RUN("compare", "--html", "/nonexistent-dir/x.html"), "--html",
                   "/nonexistent-dir");
    /* schedule runs nothing: it has no page */
    expect_refused(RUN("schedule", "--html", p), "--html", NULL);
}

/* A sweep's page has the figures its --plot draws: the speedup over the
 * varied option even when that is not --devices (which `strata plot`
 * could not tell from the document alone). */
Test(html, sweep_page_has_its_speedup_figure)
{
    const char *page = test_tmp_path("sw.html");
    struct run r = RUN("sweep", "--vary", "batch=64,128", "--strategies", "mirrored", "--steps",
                       "2", "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *html = test_slurp(page);
    cr_expect_not_null(strstr(html, "<figcaption>speedup</figcaption>"));
    cr_expect_not_null(strstr(html, "<figcaption>efficiency</figcaption>"));
    cr_expect_gt(page_check_numbers(html), 0);
    free(html);
}

/* s as html_escape writes it (caller frees): what to look for in a page. */
static char *escaped(const char *s)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    cr_assert_not_null(f);
    html_escape(f, s);
    fclose(f);
    return buf;
}

/* The page's Notes section, [at, end). */
struct page_notes {
    const char *at, *end;
};

static struct page_notes page_notes_of(const char *html)
{
    const char *at = strstr(html, "<section id=\"notes\">");
    cr_assert_not_null(at, "the page has no Notes section");
    const char *end = strstr(at, "</section>");
    cr_assert_not_null(end, "the page's Notes section is not closed");
    return (struct page_notes){at, end};
}

/* Whether the terminal's text [line, line + len) is in the page's notes,
 * escaped as the page writes it; with is_item, at the start of an item. */
static bool in_notes(struct page_notes n, const char *line, size_t len, bool is_item)
{
    char *text = strndup(line, len), *want = escaped(text);
    const char *at = strstr(n.at, want);
    bool found = at && at < n.end && (!is_item || !strncmp(at - 4, "<li>", 4));
    free(want);
    free(text);
    return found;
}

/* Every note the terminal printed under its table ("  note: ...",
 * "  not run: ..."; a note's first line, which the page keeps whole) is on
 * the page, in its Notes section; returns how many. */
static int expect_terminal_notes_on_page(const char *out, const char *html)
{
    struct page_notes notes = page_notes_of(html);
    int n = 0;
    for (const char *line = out; *line; line += strcspn(line, "\n"), line += *line == '\n') {
        int len = (int)strcspn(line, "\n");
        if (strncmp(line, "  note: ", 8) && strncmp(line, "  not run: ", 11)) continue;
        cr_expect(in_notes(notes, line + 2, (size_t)len - 2, false),
                  "the terminal's note is not on the page: %.*s", len - 2, line + 2);
        n++;
    }
    return n;
}

/* compare's page says what the terminal says: the model under the scenario,
 * each strategy's speedup (carried by the document), the notes under the
 * table (a plan's --chunks 1, rows alike, an option only real runs read);
 * and it leaves out the convergence figure no run drew a line in, saying
 * why. */
Test(html, compare_page_says_what_the_terminal_says)
{
    const char *page = test_tmp_path("cn.html"), *json = test_tmp_path("cn.json");
    struct run r = RUN("compare", "--devices", "4", "--model", "mlp:784-32-32-32-10",
                       "--strategies", "mirrored,ps-async,pipeline-1f1b,pipeline-interleaved",
                       "--steps", "4", "--np", "3", "--html", page, "--json", json, "-j1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page);
    cr_expect_not_null(strstr(html, "<p class=\"scenario\">mlp:784-32-32-32-10: 4 layers"),
                       "the model, as the terminal's header says it");
    cr_expect_not_null(strstr(html, "<th class=\"num\">speedup</th>"));
    cr_expect_not_null(strstr(html, "data-json=\"reports[3].speedup\""));
    cr_expect_eq(page_check_numbers(html), 4 * 12, "12 numeric columns, the speedup one");
    cr_expect_not_null(strstr(r.out, "  note: pipeline-interleaved: --chunks 1"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "ran exactly alike"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "  note: --np 3: read by real runs only"), "%s", r.out);
    cr_expect_geq(expect_terminal_notes_on_page(r.out, html), 3);
    cr_expect_not_null(strstr(html, "<li>speedup: samples applied per second over the "
                                    "baseline (simulated): mirrored on one device, no "
                                    "servers, the same model"),
                       "the baseline note, its two lines one item");
    cr_expect_null(strstr(html, "<figcaption>convergence</figcaption>"),
                   "an empty convergence figure");
    cr_expect_not_null(strstr(html, "no convergence plot: no loss curve in these reports"));
    free(html);
    run_free(&r);
}

/* With --numerics the convergence figure has lines, and is drawn. */
Test(html, compare_page_with_numerics_has_its_convergence)
{
    const char *page = test_tmp_path("cv.html");
    expect_ok(RUN("compare", "--strategies", "mirrored,ps-async", "--steps", "3", "--numerics",
                  "--html", page), "compare --numerics");
    char *html = test_slurp(page);
    cr_expect_not_null(strstr(html, "<figcaption>convergence</figcaption>"));
    cr_expect_null(strstr(html, "no convergence plot"));
    free(html);
}

/* sim's page: its notes (around the table on the terminal) and its model. */
Test(html, sim_page_has_the_terminal_notes)
{
    const char *page = test_tmp_path("sn.html");
    struct run r = RUN("sim", "--strategy", "pipeline-interleaved", "--devices", "4", "--model",
                       "mlp:784-32-32-32-10", "--staleness", "3", "--steps", "2", "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page);
    cr_expect_not_null(strstr(html, "<li>note: --chunks 1: the default 2 chunks"));
    cr_expect_not_null(strstr(html, "<li>note: pipeline-interleaved does not read --staleness 3"));
    cr_expect_not_null(strstr(html, "<p class=\"scenario\">mlp:784-32-32-32-10: 4 layers"));
    free(html);
    run_free(&r);
}

/* sweep's page: what did not run, and why, and the option it did not read. */
Test(html, sweep_page_has_the_terminal_notes)
{
    const char *page = test_tmp_path("swn.html");
    struct run r = RUN("sweep", "--devices", "1,8", "--strategies", "mirrored,pipeline-gpipe",
                       "--model", "mlp:784-32-32-32-10", "--steps", "2", "--np", "2", "--html",
                       page, "-j1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page);
    cr_expect_not_null(strstr(r.out, "  not run: pipeline-gpipe at devices=8"), "%s", r.out);
    cr_expect_eq(expect_terminal_notes_on_page(r.out, html), 2);
    free(html);
    run_free(&r);
}

/* No number of the page's first table is in e-notation (1.25434e+07; a
 * share of float noise, 4.4e-15, shows as 0). */
static void expect_no_e_notation(const char *html)
{
    const char *body = strstr(html, "<tbody>"), *end = strstr(html, "</tbody>");
    cr_assert(body && end);
    for (const char *td = strstr(body, "<td class=\"num\""); td && td < end;
         td = strstr(td + 1, "<td class=\"num\"")) {
        const char *text = strchr(td, '>') + 1;
        size_t len = strcspn(text, "<");
        cr_expect(!memchr(text, 'e', len), "a cell in e-notation: %.*s", (int)len, text);
    }
}

/* A simulated trace of mirrored on 4 devices whose rank 1 is 3x slow,
 * written to the test's file `name`: what the replay pages replay. */
static const char *straggler_trace(const char *name)
{
    const char *trace = test_tmp_path(name);
    expect_ok(RUN("sim", "--strategy", "mirrored", "--devices", "4", "--model",
                  "mlp:784-32-32-32-10", "--straggler", "slow:1=3", "--steps", "5", "--trace",
                  trace), "sim --trace");
    return trace;
}

/* replay's page: the what-if row says what it asked and shows its change
 * (whatif.change), not the replay's error; a share that is float noise
 * (a replay of a simulated trace: error 4.4e-15) shows as 0. */
Test(html, replay_page_shows_the_whatif_change)
{
    const char *trace = straggler_trace("rt.json"), *page = test_tmp_path("rp.html");
    struct run r = RUN("replay", trace, "--without-stragglers", "--strategy", "pipeline-1f1b",
                       "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page);
    cr_expect_not_null(strstr(html, "<td>pipeline-1f1b (what-if: without stragglers, as "
                                    "pipeline-1f1b)</td>"));
    cr_expect_eq(count(html, "data-json=\"whatif.change\""), 1, "the what-if row's change");
    cr_expect_eq(count(html, "data-json=\"error\""), 2, "the error of measured and replayed");
    cr_expect_gt(page_check_numbers(html), 0);
    expect_no_e_notation(html);
    free(html);
    run_free(&r);
}

/* The page's notes as the terminal printed them: an item a note, its
 * indented lines joined; shares of float noise (and a negative one) as 0. */
Test(html, notes_text_and_noise)
{
    const char *json = "{\"strata_compare\": 1, \"reports\": [{\"strategy\": \"a\", "
                       "\"mode\": \"sim\", \"devices\": 2, \"step_time_s\": {\"mean\": 0.25, "
                       "\"p50\": 0.25, \"p99\": 0.5}, \"speedup\": 1.5, \"breakdown\": "
                       "{\"compute\": 0.999999, \"comm\": 2.2e-16, \"idle\": -1e-17}}]}";
    struct html_doc doc = {"c.json", json, strlen(json)};
    struct html_page page = {.command = "compare", .docs = &doc, .n_docs = 1,
                             .description = "mlp:1-2: a <model>",
                             .notes_text = "\nspeedup: over\n  the baseline.\n  note: x ran\n"
                                           "  alike.\n\nwarning: y\n  not run: z\n",
                             .no_figures_why = "no figures"};
    struct err e = {0};
    const char *path = test_tmp_path("nt.html");
    cr_assert_eq(html_page_write(&page, path, &e), 0, "%s", e.msg);
    char *html = test_slurp(path);
    cr_expect_not_null(strstr(html, "<ul>\n<li>speedup: over the baseline.</li>\n"
                                    "<li>note: x ran alike.</li>\n<li>warning: y</li>\n"
                                    "<li>not run: z</li>\n</ul>"), "%s", strstr(html, "<ul>"));
    cr_expect_not_null(strstr(html, "mlp:1-2: a &lt;model&gt;"));
    cr_expect_not_null(strstr(html, "data-json=\"reports[0].speedup\" data-scale=\"1\">1.5<"));
    cr_expect_not_null(strstr(html, "reports[0].breakdown.compute\" data-scale=\"100\">100<"));
    cr_expect_not_null(strstr(html, "reports[0].breakdown.comm\" data-scale=\"100\">0<"));
    cr_expect_not_null(strstr(html, "reports[0].breakdown.idle\" data-scale=\"100\">0<"));
    cr_expect_eq(page_check_numbers(html), 7);
    free(html);
}

/* sim printed a speedup (0.07x for mirrored on 8 devices of a100-pcie-eth)
 * with no line saying over what: compare names its baseline and the
 * baseline's step time under the table (docs/metrics.md: "The line under
 * each table names the baseline"); sim now does too, terminal and page.
 * slow:3=2 has no rank 3 on one device: the baseline runs without it. */
Test(html, sim_names_the_baseline_of_its_speedup)
{
    const char *page = test_tmp_path("sb.html");
    struct run r = RUN("sim", "--strategy", "mirrored", "--devices", "8", "--cluster",
                       "a100-pcie-eth", "--straggler", "slow:3=2", "--steps", "3", "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *note = "speedup: samples applied per second over the baseline (simulated): "
                       "mirrored on one device, no servers,\n  the same model, batch and "
                       "cluster, stragglers none: ";
    cr_expect_not_null(strstr(r.out, note), "%s", r.out);
    char *html = test_slurp(page);
    cr_expect_not_null(strstr(html, "<li>speedup: samples applied per second over the "
                                    "baseline (simulated): mirrored on one device"), "the page");
    cr_expect_not_null(strstr(html, "compare's and sim's, mirrored on one device"),
                       "the column's legend names sim's baseline too");
    free(html);
    run_free(&r);
    /* a --vary sweep's efficiency is not speedup / ideal: its speedup is
     * over the first value; the legend says both ways */
    page = test_tmp_path("sbv.html");
    expect_ok(RUN("sweep", "--vary", "straggler=none,exp:0.5", "--strategies", "mirrored",
                  "--steps", "2", "--html", page), "sweep --vary straggler");
    html = test_slurp(page);
    cr_expect_not_null(strstr(html, "a sweep of another value's, samples/s over devices x one "
                                    "device's"), "the efficiency legend");
    free(html);
}

/* sim's page left out figures and lines its terminal prints: the speedup
 * column (the single report's document had no speedup: now it carries it,
 * as a compare document's reports do, and so does --json), the lines under
 * the table (steps simulated and memory, the staleness histogram), and it
 * showed 12543402 samples/s as 1.25434e+07. */
Test(html, sim_page_has_the_terminals_speedup_details_and_whole_counts)
{
    const char *page = test_tmp_path("sd.html"), *json = test_tmp_path("sd.json");
    struct run r = RUN("sim", "--strategy", "ps-async", "--devices", "1", "--steps", "3",
                       "--html", page, "--json", json);
    /* one mirrored device: 12543402.3 samples/s on the terminal */
    const char *fast = test_tmp_path("sf.html");
    expect_ok(RUN("sim", "--strategy", "mirrored", "--devices", "1", "--steps", "3", "--html",
                  fast), "sim mirrored on one device");
    char *fast_html = test_slurp(fast);
    cr_expect_not_null(strstr(fast_html, "data-scale=\"1\">12543402<"), "samples/s in whole "
                       "digits");
    cr_expect_null(strstr(fast_html, "e+07"), "a count in e-notation");
    free(fast_html);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page), *doc = test_slurp(json);
    cr_expect_not_null(strstr(r.out, "speedup"), "%s", r.out);
    cr_expect_not_null(strstr(html, "<th class=\"num\">speedup</th>"));
    cr_expect_not_null(strstr(html, "data-json=\"speedup\""), "the speedup cell");
    cr_expect_not_null(strstr(doc, "\"speedup\":"), "--json holds the speedup too");
    cr_expect_not_null(strstr(r.out, "3 steps in "), "%s", r.out);
    cr_expect_not_null(strstr(html, "<li>3 steps in "), "the details line, a note of the page");
    cr_expect_not_null(strstr(html, "<li>staleness of applied pushes"), "the histogram");
    expect_no_e_notation(html);
    cr_expect_gt(page_check_numbers(html), 0);
    free(html);
    free(doc);
    run_free(&r);
}

/* --- A terminal table held against the page's ------------------------------ */

enum { MAX_CELLS = 32, CELL_TEXT = 64 };

/* The cells of a terminal table's line: parted by two spaces or more (a
 * cell such as "41.824 us" holds one). Returns how many. */
static int terminal_cells(const char *line, char cells[][CELL_TEXT])
{
    int n = 0;
    size_t len = strcspn(line, "\n");
    for (size_t i = 0; i < len && n < MAX_CELLS;) {
        while (i < len && line[i] == ' ') i++;
        size_t start = i;
        while (i < len && !(line[i] == ' ' && (i + 1 >= len || line[i + 1] == ' '))) i++;
        if (i > start) snprintf(cells[n++], CELL_TEXT, "%.*s", (int)(i - start), line + start);
    }
    return n;
}

/* The cells of the page's <tr> that starts at tr (a heading's unit, " (µs)",
 * kept). Returns how many. */
static int page_cells(const char *tr, char cells[][CELL_TEXT])
{
    const char *end = strstr(tr, "</tr>");
    int n = 0;
    for (const char *c = strstr(tr, "<t"); c && c < end && n < MAX_CELLS; c = strstr(c + 1, "<t")) {
        if ((c[2] != 'd' && c[2] != 'h') || (c[3] != '>' && c[3] != ' ')) continue;   /* <thead> */
        const char *text = strchr(c, '>') + 1;
        snprintf(cells[n++], CELL_TEXT, "%.*s", (int)strcspn(text, "<"), text);
    }
    return n;
}

/* Seconds per unit of a time's unit ("us", "µs", "ms", "s"); 1 otherwise
 * (a share in %, a speedup's ×, a count). */
static double unit_s(const char *unit)
{
    return !strcmp(unit, "us") || !strcmp(unit, "µs") ? 1e-6 : !strcmp(unit, "ms") ? 1e-3 : 1;
}

/* The terminal's cell and the page's agree: text the same; a number within
 * half the terminal's last digit and the page's 4 significant digits
 * (page_unit: the page's heading's unit, "" for none). */
static void expect_same_value(const char *term, const char *page, const char *page_unit,
                              const char *where)
{
    char *end;
    double t = strtod(term, &end);
    if (end == term || !strcmp(term, "-")) {
        cr_expect_str_eq(page, term, "%s: the page shows '%s', the terminal '%s'", where, page, term);
        return;
    }
    const char *dot = strchr(term, '.');
    int decimals = dot && dot < end ? (int)(end - dot - 1) : 0;
    while (*end == ' ') end++;
    char unit[16];
    snprintf(unit, sizeof unit, "%.*s", (int)strcspn(end, "%\xc3"), end);   /* not % or × */
    double scale = unit_s(unit), p = strtod(page, NULL) * unit_s(page_unit);
    double tolerance = 0.5 * pow(10, -decimals) * scale + 5e-4 * fabs(p) + 1e-12;
    cr_expect(fabs(t * scale - p) <= tolerance, "%s: the page shows %s %s, the terminal %s",
              where, page, page_unit, term);
}

/* sweep's page lacked columns of its terminal table: batch, the value of the
 * varied option (here --straggler) and the time lost to a failure. Every
 * terminal column now has a page column of the same name ("step time" is
 * the page's "step mean"), and each point's row the same values. */
Test(html, sweep_page_has_the_terminals_columns_and_values)
{
    const char *page = test_tmp_path("swc.html");
    struct run r = RUN("sweep", "--vary", "straggler=none,exp:0.2", "--strategies", "mirrored",
                       "--devices", "2", "--batch", "96", "--steps", "4", "--fail", "1@2",
                       "--on-failure", "restart", "--html", page, "-j1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page);
    const char *head = strstr(r.out, "\nstrategy ");
    cr_assert_not_null(head, "%s", r.out);
    char term_head[MAX_CELLS][CELL_TEXT], page_head[MAX_CELLS][CELL_TEXT];
    int n_term = terminal_cells(head + 1, term_head);
    int n_page = page_cells(strstr(html, "<thead><tr>"), page_head);
    cr_assert_eq(n_term, 11, "%s", r.out);
    int at[MAX_CELLS];   /* the page's column of each terminal column */
    char units[MAX_CELLS][CELL_TEXT];
    for (int c = 0; c < n_term; c++) {
        const char *want = !strcmp(term_head[c], "step time") ? "step mean" : term_head[c];
        at[c] = -1;
        for (int k = 0; k < n_page && at[c] < 0; k++) {
            size_t len = strcspn(page_head[k], "(");
            while (len && page_head[k][len - 1] == ' ') len--;
            if (strlen(want) == len && !strncmp(page_head[k], want, len)) {
                at[c] = k;
                const char *u = strchr(page_head[k], '(');
                snprintf(units[c], CELL_TEXT, "%.*s", u ? (int)strcspn(u + 1, ")") : 0,
                         u ? u + 1 : "");
            }
        }
        cr_expect_geq(at[c], 0, "the terminal's column '%s' is not on the page", term_head[c]);
    }
    const char *line = strstr(head + 1, "\n") + 1;   /* the rule under the heading */
    const char *tr = strstr(html, "<tbody>");
    for (int i = 0; i < 2; i++) {
        line = strchr(line, '\n') + 1;
        tr = strstr(tr + 1, "<tr>");
        cr_assert(*line && tr);
        char term[MAX_CELLS][CELL_TEXT], cells[MAX_CELLS][CELL_TEXT];
        cr_assert_eq(terminal_cells(line, term), n_term, "%s", line);
        cr_assert_eq(page_cells(tr, cells), n_page);
        for (int c = 0; c < n_term; c++) {
            if (at[c] < 0) continue;
            char where[96];
            snprintf(where, sizeof where, "point %d, %.60s", i, term_head[c]);
            expect_same_value(term[c], cells[at[c]], units[c], where);
        }
    }
    cr_expect_not_null(strstr(html, "<td>exp:0.2</td>"), "the straggler value, as text");
    cr_expect_gt(page_check_numbers(html), 0);
    free(html);
    run_free(&r);
}

/* sim's page of a run that failed: the failure summary the terminal prints
 * under its table (how many, which rank when, what the policy did, the time
 * lost and the goodput), an item each in the Notes, and the table's time
 * lost and goodput held against the document. */
Test(html, sim_page_has_the_failure_summary)
{
    const char *page = test_tmp_path("sf.html");
    struct run r = RUN("sim", "--fail", "1@3", "--on-failure", "restart", "--checkpoint-every",
                       "2", "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page);
    struct page_notes notes = page_notes_of(html);
    const char *summary = strstr(r.out, "failures (--on-failure restart): 1, the first of rank 1");
    cr_assert_not_null(summary, "%s", r.out);
    /* the summary's lines, to the end of the output, each an item of the page */
    int n_lines = 0;
    for (const char *line = summary; *line; line += strcspn(line, "\n"), line += *line == '\n') {
        int len = (int)strcspn(line, "\n");
        cr_expect(in_notes(notes, line, (size_t)len, true),
                  "the terminal's failure line is not an item of the page's notes: %.*s", len,
                  line);
        n_lines++;
    }
    cr_expect_eq(n_lines, 3, "the count, what restart did, the time lost: %s", summary);
    cr_expect_not_null(strstr(html, "data-json=\"failure.lost_s\""), "the time lost column");
    cr_expect_not_null(strstr(html, "data-json=\"failure.goodput\""), "the goodput column");
    cr_expect_gt(page_check_numbers(html), 12);
    free(html);
    run_free(&r);
}

/* A run with a dead worker has a down share, which the terminal's table
 * shows beside compute, comm and idle; the page's table left it out, so
 * its shares summed to less than 100% (ps-async, --fail 1@5: 29.57 +
 * 31.1 + 19.46 = 80.13%, the 19.87% of down missing). Without a death,
 * no down column, as on the terminal. */
Test(html, page_shows_the_down_share_the_terminal_shows)
{
    const char *page = test_tmp_path("down.html");
    struct run r = RUN("sim", "--strategy", "ps-async", "--fail", "1@5", "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "  down  "), "the terminal's down column: %s", r.out);
    run_free(&r);
    char *html = test_slurp(page);
    cr_expect_not_null(strstr(html, "data-json=\"breakdown.down\""), "no down column");
    cr_expect_gt(page_check_numbers(html), 12);
    free(html);

    r = RUN("sim", "--strategy", "ps-async", "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_null(strstr(r.out, "  down  "), "%s", r.out);
    run_free(&r);
    html = test_slurp(page);
    cr_expect_null(strstr(html, "data-json=\"breakdown.down\""), "a down column of zeros");
    free(html);
}

/* replay's page lacked the lines under its terminal's tables: the what-if's
 * step time against the measured run and the replay, and what the
 * straggler cost the job; each is an item of the page's notes. */
Test(html, replay_page_has_the_whatif_and_straggler_lines)
{
    const char *trace = straggler_trace("rw.json"), *page = test_tmp_path("rw.html");
    struct run r = RUN("replay", trace, "--without-stragglers", "--scale", "8", "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page);
    struct page_notes notes = page_notes_of(html);
    int n = 0;
    for (const char *line = r.out; *line; line += strcspn(line, "\n"), line += *line == '\n') {
        if (strncmp(line, "what-if (", 9) && strncmp(line, "rank 1 cost this job", 20)) continue;
        int len = (int)strcspn(line, "\n");
        cr_expect(in_notes(notes, line, (size_t)len, true), "not an item of the page's notes: %.*s",
                  len, line);
        n++;
    }
    cr_expect_eq(n, 2, "the what-if and the straggler lines: %s", r.out);
    free(html);
    run_free(&r);
}

/* Every line the terminal printed above its first blank line (a replay's
 * header: what was replayed, how, the run's clocks and cores) is an item
 * of the page's notes; returns how many. */
static int expect_header_lines_as_notes(const char *out, const char *html)
{
    struct page_notes notes = page_notes_of(html);
    int n = 0;
    for (const char *line = out; *line && *line != '\n'; line += strcspn(line, "\n") + 1) {
        int len = (int)strcspn(line, "\n");
        cr_expect(in_notes(notes, line, (size_t)len, true),
                  "the terminal's header line is not an item of the page's notes: %.*s", len, line);
        n++;
    }
    return n;
}

/* replay's page lacked its terminal's header and per-rank table: the
 * header lines are now items of its notes, and the per-rank table (end
 * measured and replayed, error, compute, straggler cost) a table of the
 * page with the terminal's columns, in its order, and each rank's values. */
Test(html, replay_page_has_the_header_and_per_rank_table)
{
    const char *trace = test_tmp_path("rpr.json"), *page = test_tmp_path("rpr.html");
    expect_ok(RUN("sim", "--strategy", "mirrored", "--devices", "4", "--steps", "4",
                  "--straggler", "slow:1=3", "--trace", trace), "sim --trace");
    struct run r = RUN("replay", trace, "--without-stragglers", "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page);
    cr_expect_eq(expect_header_lines_as_notes(r.out, html), 2, "%s", r.out);

    const char *head = strstr(r.out, "\nrank ");
    const char *table = strstr(html, "<table id=\"strata-ranks\">");
    cr_assert_not_null(head, "%s", r.out);
    cr_assert_not_null(table, "the page has no per-rank table");
    char term_head[MAX_CELLS][CELL_TEXT], page_head[MAX_CELLS][CELL_TEXT];
    int n_term = terminal_cells(head + 1, term_head);
    cr_assert_eq(n_term, 7, "%s", r.out);   /* rank, 2 ends, error, 2 computes, straggler cost */
    cr_assert_eq(page_cells(strstr(table, "<thead><tr>"), page_head), n_term);
    char units[MAX_CELLS][CELL_TEXT];
    for (int c = 0; c < n_term; c++) {   /* "end measured (µs)": the name, then the unit */
        size_t len = strcspn(page_head[c], "(");
        while (len && page_head[c][len - 1] == ' ') len--;
        cr_expect(strlen(term_head[c]) == len && !strncmp(page_head[c], term_head[c], len),
                  "column %d: the page's '%s', the terminal's '%s'", c, page_head[c],
                  term_head[c]);
        const char *u = strchr(page_head[c], '(');
        snprintf(units[c], CELL_TEXT, "%.*s", u ? (int)strcspn(u + 1, ")") : 0, u ? u + 1 : "");
    }
    const char *line = head + 1, *tr = strstr(table, "<tbody>");
    for (int i = 0; i < 4; i++) {
        line = strchr(line, '\n') + 1;
        tr = strstr(tr + 1, "<tr>");
        cr_assert(*line && tr, "rank %d", i);
        char term[MAX_CELLS][CELL_TEXT], cells[MAX_CELLS][CELL_TEXT];
        cr_assert_eq(terminal_cells(line, term), n_term, "%s", line);
        cr_assert_eq(page_cells(tr, cells), n_term);
        for (int c = 0; c < n_term; c++) {
            char where[96];
            snprintf(where, sizeof where, "rank %d, %.60s", i, term_head[c]);
            expect_same_value(term[c], cells[c], units[c], where);
        }
    }
    cr_expect_gt(page_check_numbers(html), 0);
    free(html);
    run_free(&r);
}

/* validate's page lacked every line around its terminal's tables: the
 * scenario, the machine's load, each cell's heading (with its Kendall
 * tau-b) and the summary (the errors' median and p90, the ranking's
 * agreement, the staleness TVD); each is now a note of the page's own. Real MPI
 * jobs: the smallest matrix, one cell, one run a row. */
Test(html, validate_page_has_the_lines_around_its_tables, .timeout = 240)
{
    const char *page = test_tmp_path("val.html");
    struct run r = RUN("validate", "--cluster", "cpu-loopback", "--strategies", "mirrored,ps-async",
                       "--np", "2", "--steps", "3", "--model", "mlp:784-32-10", "--repeat", "1",
                       "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page);
    struct page_notes notes = page_notes_of(html);
    static const char *const heads[] = {"predicted on ", "load (", "cell 1 of 1: ", "summary over ",
                                        "  |step-time error|: ", "  ranking agreement",
                                        "  staleness TVD"};
    int n = 0;
    for (const char *line = r.out; *line; line += strcspn(line, "\n"), line += *line == '\n')
        for (size_t k = 0; k < sizeof heads / sizeof heads[0]; k++) {
            if (strncmp(line, heads[k], strlen(heads[k]))) continue;
            size_t indent = strspn(line, " ");
            char *text = strndup(line + indent, strcspn(line, "\n") - indent), *want = escaped(text);
            char item[1024];   /* a note of its own: the summary's items were one note */
            snprintf(item, sizeof item, "<li>%s</li>", want);
            const char *at = strstr(notes.at, item);
            cr_expect(at && at < notes.end, "not a note of its own on the page: %s", text);
            free(want);
            free(text);
            n++;
        }
    cr_expect_eq(n, 7, "each line looked for, once: %s", r.out);

    /* The explanation under the summary, wrapped at column 0 on the
     * terminal, is one note (it was a note a line): its lines joined. */
    const char *expl = strstr(r.out, "\nstep time: ");
    cr_assert_not_null(expl, "%s", r.out);
    const char *expl_end = strstr(expl, "disjoint).\n");
    cr_assert_not_null(expl_end, "%s", r.out);
    char *joined = strndup(expl + 1, (size_t)(expl_end + strlen("disjoint).") - expl - 1));
    for (char *c = joined; *c; c++)
        if (*c == '\n') *c = ' ';
    char *expl_want = escaped(joined), item[1024];
    snprintf(item, sizeof item, "<li>%s</li>", expl_want);
    cr_expect_not_null(strstr(notes.at, item), "the explanation is not one note: %s", joined);
    free(expl_want);
    free(joined);

    /* The terminal's last column, a row's staleness TVD (after its last
     * '|'; blank for mirrored), is a column of the page's table too: each
     * of the row's reports, (predicted) and (measured), shows it. */
    const char *table = strstr(html, "<table id=\"strata-table\">");
    cr_assert_not_null(table, "the page has no table");
    char head[MAX_CELLS][CELL_TEXT], cells[MAX_CELLS][CELL_TEXT];
    int n_head = page_cells(strstr(table, "<thead><tr>"), head), tvd = -1;
    for (int c = 0; c < n_head; c++)
        if (!strcmp(head[c], "staleness TVD")) tvd = c;
    cr_assert_geq(tvd, 0, "the page's table has no staleness TVD column");
    int n_tvd = 0;
    for (const char *name = "mirrored"; name; name = strcmp(name, "ps-async") ? "ps-async" : NULL) {
        char want[32];
        snprintf(want, sizeof want, "\n%s ", name);
        const char *line = strstr(r.out, want);
        cr_assert_not_null(line, "no row of %s: %s", name, r.out);
        line++;
        const char *bar = line, *end = line + strcspn(line, "\n");
        for (const char *b = line; (b = memchr(b, '|', (size_t)(end - b))); b++) bar = b + 1;
        char term[CELL_TEXT];
        snprintf(term, sizeof term, "%.*s", (int)(end - bar - strspn(bar, " ")),
                 bar + strspn(bar, " "));
        snprintf(want, sizeof want, "<td>%s (", name);
        for (const char *tr = strstr(table, want); tr && tr < strstr(table, "</table>");
             tr = strstr(tr + 1, want)) {
            cr_assert_eq(page_cells(tr, cells), n_head);
            expect_same_value(term, cells[tvd], "", name);
            n_tvd++;
        }
    }
    cr_expect_eq(n_tvd, 4, "two rows, two reports each");
    cr_expect_gt(page_check_numbers(html), 0);
    free(html);
    run_free(&r);
}

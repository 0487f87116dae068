/* Checks of a report page (plots/html_page.h) that the page's own tests and
 * the browser test share: the embedded documents read back, and every
 * number of the table held against the JSON path its cell names. Works on
 * the page as written and on the DOM a browser dumps (both keep the
 * attributes and the script text as they are). Header-only: the two test
 * files include it. */
#ifndef STRATA_TESTS_HTML_CHECK_H
#define STRATA_TESTS_HTML_CHECK_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

/* The document embedded as strata-doc-<index> (caller deletes), or NULL. */
static cJSON *page_doc(const char *html, int index)
{
    char id[48];
    snprintf(id, sizeof id, "id=\"strata-doc-%d\"", index);
    const char *at = strstr(html, id);
    if (!at || !(at = strchr(at, '>'))) return NULL;
    const char *end = strstr(++at, "</script>");
    return end ? cJSON_ParseWithLength(at, (size_t)(end - at)) : NULL;
}

/* The value at path ("points[1].report.step_time_s.mean") in root, or NULL. */
static const cJSON *page_json_at(const cJSON *root, const char *path)
{
    const cJSON *j = root;
    while (j && *path) {
        if (*path == '[') {
            j = cJSON_GetArrayItem(j, (int)strtol(path + 1, (char **)&path, 10));
            path += *path == ']';
        } else {
            size_t n = strcspn(path, ".[");
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)n, path);
            j = cJSON_GetObjectItemCaseSensitive(j, key);
            path += n;
        }
        if (*path == '.') path++;
    }
    return j;
}

/* The value of attribute name in the tag that starts at tag, into buf. */
static bool page_attr(const char *tag, const char *name, char *buf, size_t n)
{
    const char *end = strchr(tag, '>');
    char pat[64];
    snprintf(pat, sizeof pat, " %s=\"", name);
    const char *at = strstr(tag, pat);
    if (!at || !end || at > end) return false;
    at += strlen(pat);
    const char *q = strchr(at, '"');
    if (!q) return false;
    snprintf(buf, n, "%.*s", (int)(q - at), at);
    return true;
}

/* Every table cell with a data-json path: its text, divided by its
 * data-scale, against the number at that path of its document. The page
 * shows 4 significant digits (7 for counts), so they agree within half a
 * unit of the 4th digit: relative 5e-4, checked at 1e-3; and shares (shown
 * in %, data-scale 100) to 0.01 points, so within 0.005 of them too.
 * Returns the cells checked; each mismatch fails the test with the path
 * and both numbers. */
static int page_check_numbers(const char *html)
{
    cJSON *docs[8] = {0};
    int n_docs = 0;
    while (n_docs < 8 && (docs[n_docs] = page_doc(html, n_docs))) n_docs++;
    cr_assert(n_docs > 0, "the page embeds no JSON document (strata-doc-0)");
    int n_cells = 0;
    double worst = 0;
    for (const char *td = strstr(html, "<td "); td; td = strstr(td + 1, "<td ")) {
        char doc[16], path[256], scale[64];
        if (!page_attr(td, "data-json", path, sizeof path)) continue;
        cr_assert(page_attr(td, "data-doc", doc, sizeof doc) &&
                  page_attr(td, "data-scale", scale, sizeof scale),
                  "cell %s has no data-doc or data-scale", path);
        int d = atoi(doc);
        cr_assert(d >= 0 && d < n_docs, "cell %s names document %d of %d", path, d, n_docs);
        const cJSON *v = page_json_at(docs[d], path);
        cr_assert(cJSON_IsNumber(v), "cell %s: no number at that path of document %d", path, d);
        const char *text = strchr(td, '>') + 1;
        char *end;
        double shown = strtod(text, &end);
        cr_assert(end != text && *end == '<', "cell %s shows '%.20s', not a number", path, text);
        double expected = v->valuedouble * strtod(scale, NULL);
        double err = fabs(shown - expected) / fmax(fabs(expected), 1e-300);
        if (expected == 0) err = fabs(shown);
        bool is_share = strtod(scale, NULL) == 100;
        if (is_share && fabs(shown - expected) <= 0.005 + 1e-9) err = 0;
        if (err > worst) worst = err;
        cr_expect(err <= 1e-3, "cell %s shows %.17g, the JSON says %.17g (x %s)", path, shown,
                  expected, scale);
        n_cells++;
    }
    cr_log_info("%d table cells checked against the JSON; largest relative difference %.2g",
                n_cells, worst);
    for (int i = 0; i < n_docs; i++) cJSON_Delete(docs[i]);
    return n_cells;
}

#endif

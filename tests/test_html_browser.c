/* The report page in a real browser: Debian's headless Chromium
 * (chromium-headless-shell, or chromium; $STRATA_BROWSER names another)
 * loads the page of each command that takes --html and
 *  - logs nothing to its console: no script error, and no load refused by
 *    the page's Content-Security-Policy (which forbids any from elsewhere);
 *    Chromium's --enable-logging=stderr writes every console message as a
 *    line with ":CONSOLE" in it;
 *  - runs the page's script to its end (data-strata-ready on <body>), with
 *    no error caught in #strata-errors;
 *  - shows in its DOM (--dump-dom) the table numbers of the embedded JSON
 *    (html_check.h);
 *  - draws a screenshot that is not blank: many colours, not all white
 *    (the PNG decoded here with zlib).
 * Without a browser every test is skipped, saying so (ctest reports the
 * test as skipped: CMakeLists.txt), never passed. tools/test installs
 * chromium-headless-shell (tools/setup --browser). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "helpers.h"
#include "html_check.h"

TEST_SUITE_WITH_TMP_DIR(browser, .timeout = 300);

/* The browser to run: $STRATA_BROWSER, else the first of the names in PATH. */
static bool find_browser(char *buf, size_t n)
{
    const char *env = getenv("STRATA_BROWSER");
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return access(env, X_OK) == 0;
    }
    static const char *const names[] = {"chromium-headless-shell", "chromium", "chromium-browser"};
    const char *path = getenv("PATH");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        for (const char *p = path ? path : ""; *p;) {
            size_t len = strcspn(p, ":");
            snprintf(buf, n, "%.*s/%s", (int)len, p, names[i]);
            if (len && access(buf, X_OK) == 0) return true;
            p += len + (p[len] == ':');
        }
    return false;
}

static const char *browser_or_skip(void)
{
    static char browser[512];
    if (!find_browser(browser, sizeof browser))
        cr_skip_test("no headless Chromium (chromium-headless-shell or chromium in PATH, or "
                     "$STRATA_BROWSER): Debian: apt install chromium-headless-shell, or "
                     "tools/setup --browser");
    return browser;
}

/* Runs the browser headless on page with one action (--dump-dom, or
 * --screenshot=FILE); its profile in the test's directory. At most 120 s. */
static struct run browse(const char *browser, const char *page, const char *action)
{
    char url[600], profile[200];
    snprintf(url, sizeof url, "file://%s", page);
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", test_tmp_dir);
    const char *argv[] = {"timeout", "120", browser, "--headless", "--no-sandbox",
                          "--disable-gpu", "--hide-scrollbars", "--window-size=1000,1400",
                          "--enable-logging=stderr", "--v=0", profile, action, url, NULL};
    return run_argv(argv);
}

/* --- A PNG's pixels, enough to tell a blank screenshot from a page ----------- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* The 8-bit RGB or RGBA pixels of png[0..n) (not interlaced: Chromium's
 * screenshots are not) into *px, bytes_per_px in *bpp. */
static void png_decode(const unsigned char *png, size_t n, unsigned char **px, uint32_t *w,
                       uint32_t *h, int *bpp)
{
    cr_assert(n > 8 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8), "not a PNG");
    unsigned char *idat = NULL;
    size_t n_idat = 0;
    *w = *h = 0;
    *bpp = 0;
    for (size_t i = 8; i + 12 <= n;) {
        uint32_t len = be32(png + i);
        const unsigned char *type = png + i + 4, *data = png + i + 8;
        cr_assert(i + 12 + len <= n, "a PNG chunk runs past the end");
        if (!memcmp(type, "IHDR", 4)) {
            *w = be32(data), *h = be32(data + 4);
            cr_assert(data[8] == 8 && (data[9] == 2 || data[9] == 6) && data[12] == 0,
                      "PNG of depth %d, colour type %d, interlace %d: not 8-bit RGB(A)",
                      data[8], data[9], data[12]);
            *bpp = data[9] == 6 ? 4 : 3;
        } else if (!memcmp(type, "IDAT", 4)) {
            idat = realloc(idat, n_idat + len);
            cr_assert_not_null(idat);
            memcpy(idat + n_idat, data, len);
            n_idat += len;
        }
        i += 12 + len;
    }
    cr_assert(*w > 0 && *h > 0 && *bpp > 0 && n_idat > 0, "PNG without IHDR or IDAT");
    size_t stride = (size_t)*w * (size_t)*bpp;
    uLongf raw_n = (uLongf)((stride + 1) * *h);
    unsigned char *raw = malloc(raw_n);
    cr_assert_not_null(raw);
    cr_assert_eq(uncompress(raw, &raw_n, idat, n_idat), Z_OK, "the PNG's data does not inflate");
    cr_assert_eq(raw_n, (stride + 1) * *h);
    free(idat);
    /* undo each row's filter (PNG spec, 9: None, Sub, Up, Average, Paeth) */
    *px = calloc(stride * *h, 1);
    cr_assert_not_null(*px);
    for (uint32_t y = 0; y < *h; y++) {
        const unsigned char *in = raw + y * (stride + 1) + 1;
        unsigned char *out = *px + y * stride, *up = y ? out - stride : NULL;
        int filter = in[-1];
        for (size_t x = 0; x < stride; x++) {
            int a = x >= (size_t)*bpp ? out[x - (size_t)*bpp] : 0, b = up ? up[x] : 0,
                c = up && x >= (size_t)*bpp ? up[x - (size_t)*bpp] : 0;
            int pred = filter == 0 ? 0 : filter == 1 ? a : filter == 2 ? b
                     : filter == 3 ? (a + b) / 2 : paeth(a, b, c);
            cr_assert(filter <= 4, "PNG row filter %d", filter);
            out[x] = (unsigned char)(in[x] + pred);
        }
    }
    free(raw);
}

/* A screenshot of page: its distinct colours (counted up to 2048) and
 * its share of pixels that are not white. */
static void screenshot_stats(const char *browser, const char *page, int *n_colours,
                             double *non_white_share)
{
    char action[300];
    const char *shot = test_tmp_path("shot.png");
    snprintf(action, sizeof action, "--screenshot=%s", shot);
    struct run r = browse(browser, page, action);
    cr_assert_eq(r.status, 0, "the browser failed on the screenshot: %s", r.err);
    run_free(&r);
    size_t n;
    unsigned char *png = (unsigned char *)test_slurp_n(shot, &n), *px;
    uint32_t w, h;
    int bpp = 0;
    png_decode(png, n, &px, &w, &h, &bpp);
    /* distinct colours in a small open-addressed set (4096 slots: plenty
     * to count past the threshold) */
    enum { SLOTS = 4096 };
    uint32_t *seen = calloc(SLOTS, sizeof *seen);
    int colours = 0;
    size_t non_white = 0, total = (size_t)w * h;
    for (size_t i = 0; i < total; i++) {
        const unsigned char *p = px + i * (size_t)bpp;
        uint32_t rgb = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
        if (rgb != 0xffffff) non_white++;
        uint32_t key = rgb + 1, slot = (rgb * 2654435761u) % SLOTS;
        while (colours < SLOTS / 2 && seen[slot] && seen[slot] != key) slot = (slot + 1) % SLOTS;
        if (colours < SLOTS / 2 && !seen[slot]) seen[slot] = key, colours++;
    }
    cr_log_info("%s: %ux%u screenshot, %d colours (counted up to %d), %.1f%% not white", page,
                w, h, colours, SLOTS / 2, 100.0 * (double)non_white / (double)total);
    *n_colours = colours;
    *non_white_share = (double)non_white / (double)total;
    free(seen);
    free(px);
    free(png);
}

/* The page's DOM as the browser built it: no console message, the script
 * ran to its end, and the table's numbers are the JSON's. */
static void expect_clean_dom(const char *browser, const char *page, int min_cells)
{
    struct run r = browse(browser, page, "--dump-dom");
    cr_assert_eq(r.status, 0, "the browser failed: %s", r.err);
    const char *console = strstr(r.err, ":CONSOLE"), *line = console;
    while (line && line > r.err && line[-1] != '\n') line--;
    cr_expect_null(console, "the browser's console says: %.*s",
                   line ? (int)strcspn(line, "\n") : 0, line ? line : "");
    cr_expect_not_null(strstr(r.out, "data-strata-ready=\"1\""), "the page's script did not finish");
    cr_expect_not_null(strstr(r.out, "<ul id=\"strata-errors\"></ul>"),
                       "the page caught an error");
    cr_expect_geq(page_check_numbers(r.out), min_cells);
    run_free(&r);
}

/* Not blank: more than 16 colours, and at least 2% of the pixels not
 * white (a blank or failed page is one colour: see blank_page_is_seen). */
static void check_page(const char *browser, const char *page, int min_cells)
{
    expect_clean_dom(browser, page, min_cells);
    int colours;
    double non_white;
    screenshot_stats(browser, page, &colours, &non_white);
    cr_expect_gt(colours, 16, "the screenshot has %d colours: blank?", colours);
    cr_expect_gt(non_white, 0.02, "the screenshot is almost all white");
}

/* The checks can fail: a script error reaches the console log, and an
 * empty page's screenshot is one colour. */
Test(browser, console_errors_and_blank_pages_are_seen)
{
    const char *b = browser_or_skip();
    const char *page = test_tmp_file("bad.html", "<!DOCTYPE html><html><body>"
                                     "<script>no_such_function();</script></body></html>");
    struct run r = browse(b, page, "--dump-dom");
    cr_expect_not_null(strstr(r.err, ":CONSOLE"), "a script error did not reach the log:\n%s",
                       r.err);
    cr_expect_not_null(strstr(r.err, "no_such_function"));
    run_free(&r);
    int colours;
    double non_white;
    screenshot_stats(b, page, &colours, &non_white);
    cr_expect_leq(colours, 16);
    cr_expect_leq(non_white, 0.02);
}

static void make_page(const char *const *args)
{
    struct run r = run_strata(args);
    cr_assert_eq(r.status, 0, "strata %s failed: %s", args[0], r.err);
    run_free(&r);
}

#define PAGE(...) make_page((const char *const[]){__VA_ARGS__, NULL})

Test(browser, compare_page)
{
    const char *b = browser_or_skip(), *page = test_tmp_path("compare.html");
    PAGE("compare", "--steps", "3", "--html", page);
    check_page(b, page, 9 * 11);   /* every strategy that fits the default scenario */
}

Test(browser, sim_page)
{
    const char *b = browser_or_skip(), *page = test_tmp_path("sim.html");
    PAGE("sim", "--strategy", "pipeline-1f1b", "--steps", "3", "--straggler", "exp:0.1",
         "--numerics", "--model", "mlp:784-32-32-32-10", "--data", "synthetic", "--html", page);
    check_page(b, page, 11 + 2);   /* with the final loss and accuracy */
}

Test(browser, sweep_page)
{
    const char *b = browser_or_skip(), *page = test_tmp_path("sweep.html");
    PAGE("sweep", "--devices", "1,2,4", "--strategies", "mirrored,ps-sync", "--steps", "3",
         "--html", page);
    check_page(b, page, 6 * 13);
}

Test(browser, plot_page)
{
    const char *b = browser_or_skip(), *json = test_tmp_path("c.json"),
               *page = test_tmp_path("plot.html");
    PAGE("compare", "--strategies", "ps-async,ps-ssp", "--steps", "3", "--json", json);
    PAGE("plot", json, "--html", page);
    check_page(b, page, 2 * 11);
}

/* The real ones: small MPI jobs on 2 ranks. */
static const char *const small_real[] = {"--steps", "3", "--model", "mlp:784-16-10", "--data",
                                         "synthetic", "--batch", "16"};

Test(browser, real_page)
{
    const char *b = browser_or_skip(), *page = test_tmp_path("real.html");
    PAGE("real", "--strategy", "ps-sync", "--np", "2", small_real[0], small_real[1],
         small_real[2], small_real[3], small_real[4], small_real[5], small_real[6],
         small_real[7], "--html", page);
    check_page(b, page, 11 + 2);   /* with the final loss and accuracy */
}

Test(browser, validate_page)
{
    const char *b = browser_or_skip(), *page = test_tmp_path("validate.html");
    PAGE("validate", "--cluster", "cpu-loopback", "--np", "2", "--strategies", "mirrored",
         small_real[0], small_real[1], small_real[2], small_real[3], small_real[4],
         small_real[5], small_real[6], small_real[7], "--html", page);
    check_page(b, page, 2 * 11 + 3);   /* predicted and measured, and the row's numbers */
}

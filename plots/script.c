#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "script.h"

void script_begin(struct text *gp, const char *name, const char *what)
{
    text_printf(gp,
                "# strata: %s, from the data in %s.dat.\n"
                "# Draw it again in this directory:  gnuplot %s.gp   (PNG and SVG files)\n"
                "#   or in the terminal:            gnuplot -e \"term='dumb'\" %s.gp\n"
                "if (!exists(\"term\")) term = \"files\"\n"
                "if (!exists(\"cols\")) cols = 100\n"
                "formats = (term eq \"dumb\") ? \"dumb\" : \"png svg\"\n",
                what, name, name, name);
}

void script_figure_begin(struct text *gp, const char *fig, int width_px, int height_px,
                         int lines)
{
    /* pngcairo draws anti-aliased lines and is the better PNG; gnuplot built
     * without cairo has only libgd's png, so the script asks which it has. */
    text_printf(gp,
                "\ndo for [fmt in formats] {\n"
                "    if (fmt eq \"png\") {\n"
                "        if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
                "            set terminal pngcairo size %d,%d font \"sans,10\"\n"
                "        } else {\n"
                "            set terminal png size %d,%d\n"
                "        }\n"
                "        set output '%s.png'\n"
                "    }\n"
                "    if (fmt eq \"svg\") {\n"
                "        set terminal svg size %d,%d dynamic font \"sans,10\"\n"
                "        set output '%s.svg'\n"
                "    }\n"
                "    if (fmt eq \"dumb\") {\n"
                "        set terminal dumb size cols,%d\n"
                "        set output\n"
                "    }\n"
                "    reset\n"
                /* Names like ps_async or h100_ib must print as written, not
                 * as subscripts: no enhanced-text markup anywhere. */
                "    set termoption noenhanced\n"
                "    set encoding utf8\n",
                width_px, height_px, width_px, height_px, fig, width_px, height_px, fig, lines);
}

void script_figure_end(struct text *gp)
{
    text_printf(gp, "    set output\n}\n");
}

/* gnuplot centres a title line and cuts what the figure cannot hold at
 * both ends: a sweep's scenario of 190 characters lost its first and last
 * words on a 1000-pixel figure, which holds about 140. A longer scenario is
 * broken after "; " (else ", ", else a space) into lines of at most this. */
enum { TITLE_LINE_CHARS = 110 };

/* The length of s's next title line: all of it, or up to and with the
 * last separator that keeps the line within TITLE_LINE_CHARS. */
static size_t title_line_len(const char *s)
{
    size_t left = strlen(s);
    if (left <= TITLE_LINE_CHARS) return left;
    static const char *const seps[] = {"; ", ", ", " "};
    for (size_t k = 0; k < sizeof seps / sizeof seps[0]; k++) {
        size_t best = 0, n = strlen(seps[k]);
        for (const char *p = strstr(s, seps[k]); p && (size_t)(p - s) + n <= TITLE_LINE_CHARS;
             p = strstr(p + 1, seps[k]))
            best = (size_t)(p - s) + n;
        if (best) return best;
    }
    size_t cut = TITLE_LINE_CHARS;   /* no separator: cut, not inside a UTF-8 character */
    while (cut > 1 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
    return cut;
}

void script_title(struct text *gp, const char *what, const char *lead, const char *scenario)
{
    text_printf(gp, "    set %s ", what);
    text_quoted(gp, lead);
    char line[TITLE_LINE_CHARS + 1];
    for (const char *p = scenario ? scenario : ""; *p;) {
        size_t n = title_line_len(p);
        snprintf(line, sizeof line, "%.*s", (int)n, p);
        for (size_t end = strlen(line); end > 0 && line[end - 1] == ' '; end--)
            line[end - 1] = '\0';
        text_printf(gp, " . \"\\n\" . ");
        text_quoted(gp, line);
        p += n;
    }
    text_printf(gp, "\n");
}

void script_figure_titled(struct text *gp, const char *fig, int width_px, int height_px,
                          int lines, const char *lead, const char *scenario)
{
    script_figure_begin(gp, fig, width_px, height_px, lines);
    script_title(gp, "title", lead, scenario);
}

struct time_unit time_unit_for(double max_s)
{
    if (max_s >= 1) return (struct time_unit){"s", 1};
    if (max_s >= 1e-3) return (struct time_unit){"ms", 1e3};
    if (max_s > 0) return (struct time_unit){"µs", 1e6};
    return (struct time_unit){"s", 1};
}

static const char *mode_of(const struct report *r)
{
    return r->mode ? r->mode : "";
}

/* Do a and b come from one strategy, run the same way, on as many devices:
 * a legend of strategy, mode and devices alone cannot tell them apart? */
static bool same_series(const struct report *a, const struct report *b)
{
    return !strcmp(mode_of(a), mode_of(b)) && !strcmp(a->strategy, b->strategy) &&
           a->devices == b->devices;
}

/* A config value as the legend shows it: text as it is, numbers and flags
 * as JSON writes them. */
static void value_text(const cJSON *v, char *buf, size_t size)
{
    if (cJSON_IsString(v)) {
        snprintf(buf, size, "%s", v->valuestring);
        return;
    }
    char *t = cJSON_PrintUnformatted(v);
    snprintf(buf, size, "%s", t ? t : "?");
    cJSON_free(t);
}

/* Appends ", KEY VALUE" to buf for each option of r's config (in the
 * config's order) whose value differs in another report of the same series
 * (same_series), so that every report of the series names the same
 * options; false when none does or the configs are unknown. O(n) configs
 * built: a plot holds tens of reports. */
static bool options_that_differ(const struct report *const *rs, int n, int i, char *buf,
                                size_t size)
{
    const struct report *r = rs[i];
    if (!r->config) return false;
    cJSON *mine = report_config_to_json(r->config, r->config_groups);
    cJSON *others = cJSON_CreateArray();
    for (int j = 0; mine && others && j < n; j++)
        if (j != i && same_series(rs[j], r) && rs[j]->config)
            cJSON_AddItemToArray(others, report_config_to_json(rs[j]->config,
                                                               rs[j]->config_groups));
    size_t at = strlen(buf);
    bool found = false;
    const cJSON *v;
    cJSON_ArrayForEach(v, mine) {
        bool differs = false;
        const cJSON *theirs;
        cJSON_ArrayForEach(theirs, others) {
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(theirs, v->string);
            if (!w || !cJSON_Compare(v, w, true)) differs = true;
        }
        if (!differs || at >= size) continue;
        char text[96];
        value_text(v, text, sizeof text);
        int k = snprintf(buf + at, size - at, ", %s %s", v->string, text);
        at = k < 0 ? size : at + (size_t)k;
        found = true;
    }
    cJSON_Delete(others);
    cJSON_Delete(mine);
    return found;
}

void series_name(const struct report *const *rs, int n, int i, char *buf, size_t size)
{
    bool modes_mix = false, strategy_repeats = false, devices_repeat = false;
    int ordinal = 1;   /* r's place among the reports of its series */
    const struct report *r = rs[i];
    for (int j = 0; j < n; j++) {
        if (strcmp(mode_of(rs[j]), mode_of(r))) modes_mix = true;
        else if (j != i && !strcmp(rs[j]->strategy, r->strategy)) strategy_repeats = true;
        if (j != i && same_series(rs[j], r)) {
            devices_repeat = true;
            if (j < i) ordinal++;
        }
    }
    int k = snprintf(buf, size, "%s", r->strategy);
    if (modes_mix && k >= 0 && (size_t)k < size) k += snprintf(buf + k, size - (size_t)k, " (%s)", mode_of(r));
    if (strategy_repeats && k >= 0 && (size_t)k < size)
        k += snprintf(buf + k, size - (size_t)k, ", %d device%s", r->devices,
                      r->devices == 1 ? "" : "s");
    /* Two runs alike so far (two stragglers, seeds, step counts): the
     * options that tell them apart, else their order, never one name twice. */
    if (devices_repeat && k >= 0 && (size_t)k < size && !options_that_differ(rs, n, i, buf, size))
        snprintf(buf + k, size - (size_t)k, ", #%d", ordinal);
}

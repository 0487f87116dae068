#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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

void script_title(struct text *gp, const char *what, const char *lead, const char *scenario)
{
    text_printf(gp, "    set %s ", what);
    text_quoted(gp, lead);
    if (scenario && *scenario) {
        text_printf(gp, " . \"\\n\" . ");
        text_quoted(gp, scenario);
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

void series_name(const struct report *const *rs, int n, int i, char *buf, size_t size)
{
    bool modes_mix = false, strategy_repeats = false;
    const struct report *r = rs[i];
    for (int j = 0; j < n; j++) {
        if (strcmp(mode_of(rs[j]), mode_of(r))) modes_mix = true;
        else if (j != i && !strcmp(rs[j]->strategy, r->strategy)) strategy_repeats = true;
    }
    int k = snprintf(buf, size, "%s", r->strategy);
    if (modes_mix && k >= 0 && (size_t)k < size) k += snprintf(buf + k, size - (size_t)k, " (%s)", mode_of(r));
    if (strategy_repeats && k >= 0 && (size_t)k < size)
        snprintf(buf + k, size - (size_t)k, ", %d device%s", r->devices, r->devices == 1 ? "" : "s");
}

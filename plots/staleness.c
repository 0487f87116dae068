/* staleness.*: how many versions behind each applied update was: a push
 * to a server, or pipelined-steps' own update of a gradient K-1 steps old
 * (docs/metrics.md); a bar per staleness and report: the price of
 * asynchrony. */
#include <stdio.h>

#include "render.h"
#include "script.h"

#define NAME_BYTES 160

/* gnuplot's fill patterns after the solid first fill: hatched one way, the
 * other, crossed, then sparser; distinct in grey and in print. */
static const int fill_patterns[] = {0 /* solid */, 4, 5, 1, 6, 7, 2};
#define N_FILLS ((int)(sizeof fill_patterns / sizeof fill_patterns[0]))

static int64_t total_pushes(const struct report *r)
{
    int64_t total = 0;
    for (int k = 0; k < r->staleness.n_histogram; k++) total += r->staleness.histogram[k];
    return total;
}

int plot_staleness(const struct report *const *rs, int n, const struct plot_opts *o,
                   struct err *e)
{
    const char *name = "staleness";
    int m = 0, max_k = 0;
    for (int i = 0; i < n; i++)
        if (total_pushes(rs[i]) > 0) {
            m++;
            if (rs[i]->staleness.n_histogram - 1 > max_k) max_k = rs[i]->staleness.n_histogram - 1;
        }
    if (m == 0)
        return err_set(e, ERR_INPUT, "staleness plot: no report has a staleness histogram "
                       "(only parameter servers and pipelined-steps count staleness)");

    struct text dat = {0}, gp = {0};
    text_printf(&dat, "# strata staleness data: a block per report (gnuplot's index), a line "
                      "per staleness: versions_behind gradients percent_of_gradients\n");
    /* It counts applied gradients: a push to a server, or pipelined-steps'
     * own step. Not updates: ps-sync's 240 pushes of 60 steps on 4 workers
     * make 60 updates, and the figure's "240 updates" read against the
     * table's 60. */
    script_begin(&gp, name, "staleness of applied gradients, bars per run");
    script_figure_titled(&gp, name, 1200, 700, 30,
                         "Staleness of applied gradients (pushes to a server, "
                         "pipelined-steps' own; versions behind when applied)", o->title);
    /* The key beside the bars, not over them: a run's bars can stand
     * anywhere (pipelined-steps' all at 1, ps-async's on 32 devices at 31),
     * and `strata plot` of a sweep's --json has a series a point: its 23
     * rows covered the right third of the bars. */
    text_printf(&gp, "    set xlabel 'staleness (versions behind)'\n"
                     "    set ylabel 'gradients (%% of a run''s applied gradients)'\n"
                     "    set xrange [-0.5:%d.5]\n    set yrange [0:*]\n"
                     "    set offsets 0, 0, graph 0.05, 0\n"
                     "    set key outside right top\n"
                     "    set style fill solid 0.85 border lc rgb '#303030'\n",
                max_k);
    if (max_k <= 40) text_printf(&gp, "    set xtics 1\n");
    /* m bars share each unit of x: bar b sits at k + (b - (m-1)/2) w. */
    double w = 0.8 / m;
    text_printf(&gp, "    set boxwidth %g absolute\n", w);
    int block = 0;
    for (int i = 0; i < n; i++) {
        const struct report *r = rs[i];
        int64_t total = total_pushes(r);
        if (total == 0) continue;
        char title[NAME_BYTES];
        series_name(rs, n, i, title, sizeof title);
        text_printf(&dat, "%s# index %d: %s (%lld applied gradients, mean %.4g, max %lld)\n",
                    block ? "\n\n" : "", block, title, (long long)total, r->staleness.mean,
                    (long long)r->staleness.max);
        for (int k = 0; k < r->staleness.n_histogram; k++)
            text_printf(&dat, "%d %lld %.10g\n", k, (long long)r->staleness.histogram[k],
                        100.0 * (double)r->staleness.histogram[k] / (double)total);
        /* lt i + 1: a report's colour in every figure. A bar has no dash or
         * point to tell it by, and colour alone is not enough: gnuplot's
         * colours repeat after 8 (a compare of every strategy drew ps-async
         * and pipelined-steps in one), and in grey ps-async's sky blue and
         * ps-ssp's orange are one grey. So each series drawn has its fill
         * too, by its place in this figure (a colour follows the report, a
         * fill need not): solid, then hatchings, 7 fills, so the first 7
         * series differ in grey whatever their colours. */
        text_printf(&gp, "%s'%s.dat' index %d using ($1%+g):3 with boxes lt %d",
                    block ? ", \\\n         " : "    plot ", name, block,
                    (block - (m - 1) / 2.0) * w, i + 1);
        if (block % N_FILLS)
            text_printf(&gp, " fs pattern %d border lc rgb '#303030'",
                        fill_patterns[block % N_FILLS]);
        text_printf(&gp, " title ");
        text_quoted(&gp, title);
        block++;
    }
    text_printf(&gp, "\n");
    script_figure_end(&gp);
    int rc = plot_render(o, name, &dat, &gp, e);
    return rc;
}

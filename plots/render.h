/* From a plot's data and script to its files and its drawing: the one path
 * every plot function ends in. */
#ifndef STRATA_PLOTS_RENDER_H
#define STRATA_PLOTS_RENDER_H

#include "../core/err.h"
#include "plots.h"
#include "text.h"

/* Writes name.dat and name.gp into o->dir (made when missing, one level),
 * runs gnuplot there for the PNG and SVG files, and, with o->terminal, once
 * more for the dumb terminal on stdout. With o->terminal and no o->dir the
 * files live in a temporary directory, removed afterwards. Without gnuplot:
 * one line on stderr, and 0. An out-of-memory text is ERR_NOMEM. Frees dat
 * and gp, whatever the outcome: every plot ends here. */
int plot_render(const struct plot_opts *o, const char *name, struct text *dat, struct text *gp,
                struct err *e);

#endif

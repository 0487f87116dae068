/* gnuplot as a child process: found in PATH (or $STRATA_GNUPLOT), run
 * without a shell in the directory of its script. */
#ifndef STRATA_PLOTS_GNUPLOT_H
#define STRATA_PLOTS_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>

/* The gnuplot to run, as an absolute path in buf: $STRATA_GNUPLOT when set
 * (a path, or a name looked up in PATH), else "gnuplot" in PATH. False when
 * there is none; buf then says what was looked for. */
bool gnuplot_find(char *buf, size_t n);

/* Runs `gnuplot [-e EXPR] SCRIPT` in directory dir. With is_terminal the
 * child writes to our stdout (the dumb terminal's drawing); otherwise its
 * stdout joins its stderr, which is captured: the last bytes of it land in
 * tail (n_tail bytes, NUL-terminated). Returns gnuplot's exit status, 128 +
 * the signal that killed it, or -1 with errno when it could not be started. */
int gnuplot_run(const char *gnuplot, const char *dir, const char *expr, const char *script,
                bool is_terminal, char *tail, size_t n_tail);

#endif

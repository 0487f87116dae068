#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fileio.h"
#include "gnuplot.h"
#include "render.h"

#define PATH_BYTES 4200

/* Makes dir when it is missing: one level, as `mkdir DIR` would, so that a
 * typo in a parent is reported rather than built. */
static int ensure_dir(const char *dir, struct err *e)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return 0;
        return err_set(e, ERR_INPUT, "'%s' exists and is not a directory: give a directory "
                       "for the plots", dir);
    }
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return 0;
    if (errno == ENOENT)
        return err_set(e, ERR_INPUT, "cannot create directory '%s': its parent does not exist "
                       "(strata makes one level; create the parent first)", dir);
    if (errno == ENOTDIR)
        return err_set(e, ERR_INPUT, "cannot create directory '%s': a part of its path is not "
                       "a directory", dir);
    if (errno == EACCES || errno == EROFS)
        return err_set(e, ERR_INPUT, "cannot create directory '%s': %s (give a directory you "
                       "can write to)", dir, strerror(errno));
    return err_set(e, ERR_IO, "cannot create directory '%s': %s", dir, strerror(errno));
}

/* dir + "/" + name + ext, without doubling a trailing slash of dir. */
static void join(char *buf, size_t n, const char *dir, const char *name, const char *ext)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    snprintf(buf, n, "%.*s/%s%s", (int)len, dir, name, ext);
}

static int write_text(const char *dir, const char *name, const char *ext, const struct text *t,
                      struct err *e)
{
    char path[PATH_BYTES];
    join(path, sizeof path, dir, name, ext);
    return file_write_atomic(path, t->s ? t->s : "", t->len, e);
}

/* Width of the terminal drawing: $COLUMNS when it is sensible, else 100. */
static int terminal_cols(void)
{
    const char *env = getenv("COLUMNS");
    int w = env ? atoi(env) : 0;
    if (w < 60) w = 100;
    return w > 240 ? 240 : w;
}

static int run(const char *gnuplot, const char *dir, const char *name, bool is_terminal,
               struct err *e)
{
    char script[PATH_BYTES], expr[64], tail[600];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(expr, sizeof expr, "term='dumb'; cols=%d", terminal_cols());
    int status = gnuplot_run(gnuplot, dir, is_terminal ? expr : NULL, script, is_terminal, tail,
                             sizeof tail);
    if (status == 0) return 0;
    char path[PATH_BYTES];
    join(path, sizeof path, dir, name, ".gp");
    if (status < 0)
        return err_set(e, ERR_RUN, "cannot run %s on '%s': %s", gnuplot, path, strerror(errno));
    /* gnuplot's last words name the line of the script and what was wrong. */
    size_t len = strlen(tail);
    while (len && (tail[len - 1] == '\n' || tail[len - 1] == ' ')) tail[--len] = '\0';
    return err_set(e, ERR_RUN, "gnuplot failed on '%s' (exit status %d)%s%s", path, status,
                   len ? ": " : " and said nothing", tail);
}

/* The temporary directory of a terminal-only drawing, and its removal. */
static int make_temp_dir(char *dir, size_t n, struct err *e)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, n, "%s/strata-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir)) return 0;
    return err_set(e, ERR_IO, "cannot create a temporary directory '%s' for --plot-terminal: "
                   "%s (set TMPDIR to a writable directory)", dir, strerror(errno));
}

static void remove_temp_dir(const char *dir, const char *name)
{
    static const char *const exts[] = {".dat", ".gp"};
    char path[PATH_BYTES];
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        join(path, sizeof path, dir, name, exts[i]);
        unlink(path);
    }
    rmdir(dir);
}

static int render(const struct plot_opts *o, const char *name, const struct text *dat,
                  const struct text *gp, struct err *e)
{
    if (dat->is_failed || gp->is_failed)
        return err_set(e, ERR_NOMEM, "out of memory writing the %s plot", name);
    bool has_dir = o->dir && o->dir[0];
    if (!has_dir && !o->terminal) return 0;
    char dir[PATH_BYTES];
    if (has_dir) {
        snprintf(dir, sizeof dir, "%s", o->dir);
        TRY(ensure_dir(dir, e));
    } else {
        TRY(make_temp_dir(dir, sizeof dir, e));
    }
    char gnuplot[PATH_BYTES];
    int rc = write_text(dir, name, ".dat", dat, e);
    if (rc == 0) rc = write_text(dir, name, ".gp", gp, e);
    if (rc < 0) goto out;
    if (!gnuplot_find(gnuplot, sizeof gnuplot)) {
        /* Not an error: the data is the product, the pictures a convenience. */
        if (has_dir) {
            char gp_path[PATH_BYTES];
            join(gp_path, sizeof gp_path, dir, name, ".gp");
            fprintf(stderr, "strata: no gnuplot (%s): wrote %s and its data but no PNG or SVG; "
                    "install gnuplot (Debian: apt install gnuplot-nox) and run `cd %s && "
                    "gnuplot %s.gp`\n", gnuplot, gp_path, dir, name);
        } else {
            fprintf(stderr, "strata: no gnuplot (%s): cannot draw the %s plot in the terminal; "
                    "install gnuplot (Debian: apt install gnuplot-nox)\n", gnuplot, name);
        }
        goto out;
    }
    if (has_dir) rc = run(gnuplot, dir, name, false, e);
    if (rc == 0 && o->terminal) rc = run(gnuplot, dir, name, true, e);
out:
    if (!has_dir) remove_temp_dir(dir, name);
    return rc;
}

int plot_render(const struct plot_opts *o, const char *name, struct text *dat, struct text *gp,
                struct err *e)
{
    int rc = render(o, name, dat, gp, e);
    text_free(dat);
    text_free(gp);
    return rc;
}

/* A plot's files: NAME.dat and NAME.gp written into the directory whole
 * (core/fileio), and the figures gnuplot draws from them made in a staging
 * directory inside it, each moved into place only when gnuplot succeeded
 * and the file is whole: a full disk or a failing gnuplot leaves no cut PNG
 * or empty SVG, and a signal removes the staging directory (temp_files). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fileio.h"
#include "../core/temp_files.h"
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

/* Runs gnuplot on name.gp in dir; a failure names the script as in
 * shown_dir, where the user finds it. */
static int run(const char *gnuplot, const char *dir, const char *shown_dir, const char *name,
               bool is_terminal, struct err *e)
{
    char script[PATH_BYTES], expr[64], tail[600];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(expr, sizeof expr, "term='dumb'; cols=%d", terminal_cols());
    int status = gnuplot_run(gnuplot, dir, is_terminal ? expr : NULL, script, is_terminal, tail,
                             sizeof tail);
    if (status == 0) return 0;
    char path[PATH_BYTES];
    join(path, sizeof path, shown_dir, name, ".gp");
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

/* Whether gnuplot finished path: a PNG ends with its IEND chunk, an SVG with
 * </svg>; gnuplot exits 0 even when a full disk cut its output short. Other
 * files are taken as they are. */
static bool is_whole(const char *path)
{
    static const unsigned char png_end[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D',
                                              0xAE, 0x42, 0x60, 0x82};
    size_t len = strlen(path);
    bool is_png = len > 4 && !strcmp(path + len - 4, ".png");
    bool is_svg = len > 4 && !strcmp(path + len - 4, ".svg");
    if (!is_png && !is_svg) return true;
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    unsigned char tail[64];
    size_t n = 0;
    if (fseek(f, -(long)sizeof tail, SEEK_END) < 0) rewind(f);  /* shorter than tail */
    n = fread(tail, 1, sizeof tail, f);
    fclose(f);
    if (is_png) return n >= sizeof png_end && !memcmp(tail + n - sizeof png_end, png_end,
                                                      sizeof png_end);
    while (n && (tail[n - 1] == '\n' || tail[n - 1] == ' ' || tail[n - 1] == '\r')) n--;
    return n >= 6 && !memcmp(tail + n - 6, "</svg>", 6);
}

/* A staging directory "DIR/.NAME.tmp.XXXXXX": inside DIR, so that its files
 * reach DIR by rename, on the same file system. */
static int make_staging(const char *dir, const char *name, char *buf, size_t n, int *slot,
                        struct err *e)
{
    char pattern[128];
    snprintf(pattern, sizeof pattern, ".%.80s.tmp.XXXXXX", name);
    join(buf, n, dir, pattern, "");
    if (!mkdtemp(buf))
        return err_set(e, errno == EACCES || errno == EROFS ? ERR_INPUT : ERR_IO,
                       "cannot create a directory for the %s plot in '%s': %s", name, dir,
                       strerror(errno));
    *slot = temp_files_track(buf, true);
    return 0;
}

/* Removes the staging directory and what is left in it (flat: files only). */
static void remove_staging(const char *staging, int slot)
{
    DIR *d = opendir(staging);
    if (d) {
        struct dirent *de;
        char path[PATH_BYTES];
        while ((de = readdir(d)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                join(path, sizeof path, staging, de->d_name, "");
                unlink(path);
            }
        closedir(d);
    }
    rmdir(staging);
    temp_files_forget(slot);
}

/* Moves every figure gnuplot drew in staging (all but NAME.dat and NAME.gp)
 * into dir, after checking that each is whole. */
static int publish_figures(const char *staging, const char *dir, const char *name,
                           struct err *e)
{
    DIR *d = opendir(staging);
    if (!d) return err_set(e, ERR_IO, "cannot read '%s': %s", staging, strerror(errno));
    char dat[PATH_BYTES], gp[PATH_BYTES];
    snprintf(dat, sizeof dat, "%s.dat", name);
    snprintf(gp, sizeof gp, "%s.gp", name);
    /* Every figure is checked before any is moved: all of them or none. */
    int rc = 0;
    struct dirent *de;
    char from[PATH_BYTES], to[PATH_BYTES];
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        rewinddir(d);
        while (rc == 0 && (de = readdir(d))) {
            if (de->d_name[0] == '.' || !strcmp(de->d_name, dat) || !strcmp(de->d_name, gp))
                continue;
            join(from, sizeof from, staging, de->d_name, "");
            join(to, sizeof to, dir, de->d_name, "");
            if (pass == 0 && !is_whole(from))
                rc = err_set(e, ERR_IO, "gnuplot left '%s' incomplete (a full disk?); nothing "
                             "of the %s plot's figures was kept", to, name);
            if (pass == 1) rc = file_publish(from, to, e);
        }
    }
    closedir(d);
    return rc;
}

/* NAME.dat and NAME.gp into DIR, and the figures drawn from them. */
static int render_in_dir(const struct plot_opts *o, const char *dir, const char *name,
                         const struct text *dat, const struct text *gp, struct err *e)
{
    TRY(write_text(dir, name, ".dat", dat, e));
    TRY(write_text(dir, name, ".gp", gp, e));
    char gnuplot[PATH_BYTES];
    if (!gnuplot_find(gnuplot, sizeof gnuplot)) {
        /* Not an error: the data is the product, the pictures a convenience. */
        char gp_path[PATH_BYTES];
        join(gp_path, sizeof gp_path, dir, name, ".gp");
        fprintf(stderr, "strata: no gnuplot (%s): wrote %s and its data but no PNG or SVG; "
                "install gnuplot (Debian: apt install gnuplot-nox) and run `cd %s && "
                "gnuplot %s.gp`\n", gnuplot, gp_path, dir, name);
        return 0;
    }
    char staging[PATH_BYTES];
    int slot = -1;
    TRY(make_staging(dir, name, staging, sizeof staging, &slot, e));
    int rc = write_text(staging, name, ".dat", dat, e);
    if (rc == 0) rc = write_text(staging, name, ".gp", gp, e);
    if (rc == 0) {
        /* Errors name the script in dir, which the user can run again. */
        rc = run(gnuplot, staging, dir, name, false, e);
    }
    if (rc == 0 && o->terminal) rc = run(gnuplot, staging, dir, name, true, e);
    if (rc == 0) rc = publish_figures(staging, dir, name, e);
    remove_staging(staging, slot);
    return rc;
}

/* A terminal-only drawing: the files in a temporary directory, removed. */
static int render_in_terminal(const char *name, const struct text *dat, const struct text *gp,
                              struct err *e)
{
    char dir[PATH_BYTES], gnuplot[PATH_BYTES];
    if (!gnuplot_find(gnuplot, sizeof gnuplot)) {
        fprintf(stderr, "strata: no gnuplot (%s): cannot draw the %s plot in the terminal; "
                "install gnuplot (Debian: apt install gnuplot-nox)\n", gnuplot, name);
        return 0;
    }
    TRY(make_temp_dir(dir, sizeof dir, e));
    int slot = temp_files_track(dir, true);
    int rc = write_text(dir, name, ".dat", dat, e);
    if (rc == 0) rc = write_text(dir, name, ".gp", gp, e);
    if (rc == 0) rc = run(gnuplot, dir, dir, name, true, e);
    remove_temp_dir(dir, name);
    temp_files_forget(slot);
    return rc;
}

static int render(const struct plot_opts *o, const char *name, const struct text *dat,
                  const struct text *gp, struct err *e)
{
    if (dat->is_failed || gp->is_failed)
        return err_set(e, ERR_NOMEM, "out of memory writing the %s plot", name);
    if (o->dir && o->dir[0]) {
        TRY(ensure_dir(o->dir, e));
        return render_in_dir(o, o->dir, name, dat, gp, e);
    }
    return o->terminal ? render_in_terminal(name, dat, gp, e) : 0;
}

int plot_render(const struct plot_opts *o, const char *name, struct text *dat, struct text *gp,
                struct err *e)
{
    int rc = render(o, name, dat, gp, e);
    text_free(dat);
    text_free(gp);
    return rc;
}

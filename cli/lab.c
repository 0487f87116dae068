/* strata lab: the course. Lists the labs of labs/ in course order, runs one
 * (its claim, the question to answer first, its scenarios, an explanation
 * computed from this run), or checks its claim for an autograder (--check:
 * exit 0 when this run shows it, 1 when not). The labs are files
 * (core/lab_file.h, labs/README.md); bench/lab_run runs them. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bench/lab_run.h"
#include "../core/config.h"
#include "../core/lab_expr.h"
#include "../core/lab_file.h"
#include "../core/table_notes.h"
#include "commands.h"
#include "scenario.h"

#ifndef STRATA_LABS_DIR
#define STRATA_LABS_DIR "labs"
#endif

struct lab_args {
    const char *name;      /* NULL: list the labs */
    const char *dir;       /* --labs DIR */
    bool is_check;
    bool is_real;
    const char *mode;      /* --mode as given, NULL when not */
};

static void print_usage(const struct command *self, FILE *out)
{
    fprintf(out, "usage: strata lab [NAME] [--check] [--mode sim|real] [--labs DIR]\n\n%s\n",
            self->about);
}

/* The value of option word w (argv[*i]): after its '=' (--labs=DIR, as
 * every other command takes it), else the next word. */
static int take_value(int argc, char **argv, int *i, const char *name, const char *allowed,
                      const char **value, struct err *e)
{
    const char *w = argv[*i];
    size_t n = strlen(name);
    if (w[n] == '=') {
        *value = w + n + 1;
        return 0;
    }
    if (*i + 1 >= argc)
        return err_set(e, ERR_INPUT, "%s: needs a value (%s)", name, allowed);
    *value = argv[++*i];
    return 0;
}

/* Is w option `name`, alone or as name=VALUE? */
static bool is_option(const char *w, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(w, name, n) && (w[n] == '\0' || w[n] == '=');
}

static int parse_args(const struct command *self, int argc, char **argv, struct lab_args *a,
                      struct err *e)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
            print_usage(self, stdout);
            return CONFIG_HELP;
        } else if (!strcmp(w, "--check")) {
            a->is_check = true;
        } else if (is_option(w, "--check")) {
            return err_set(e, ERR_INPUT, "--check: takes no value ('%s' given)", w + 8);
        } else if (is_option(w, "--labs")) {
            TRY(take_value(argc, argv, &i, "--labs", "a directory of NN-name.lab files", &a->dir,
                           e));
        } else if (is_option(w, "--mode")) {
            const char *v = NULL;   /* take_value sets it; gcc -O3 (Release) cannot tell */
            TRY(take_value(argc, argv, &i, "--mode", "sim or real", &v, e));
            if (strcmp(v, "real") && strcmp(v, "sim"))
                return err_set(e, ERR_INPUT, "--mode: '%s' is not allowed (sim, real)", v);
            a->is_real = !strcmp(v, "real");
            a->mode = v;
        } else if (w[0] == '-') {
            return err_set(e, ERR_INPUT, "unknown option '%s' (--check, --mode, --labs; a lab's "
                           "scenario options live in its file)", w);
        } else if (a->name) {
            return err_set(e, ERR_INPUT, "one lab at a time ('%s' and '%s')", a->name, w);
        } else {
            a->name = w;
        }
    }
    /* the list runs nothing: what would check or run a lab needs one */
    if (!a->name && (a->is_check || a->mode)) {
        char given[32];
        snprintf(given, sizeof given, "%s%s%s%s", a->is_check ? "--check" : "",
                 a->is_check && a->mode ? " " : "", a->mode ? "--mode " : "",
                 a->mode ? a->mode : "");
        return err_set(e, ERR_INPUT, "%s: needs a lab NAME (`strata lab NAME %s`); without one, "
                       "strata lab lists the labs", given, given);
    }
    return 0;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* --labs, else ./labs (a checkout's), else the source tree's. */
static const char *labs_dir(const struct lab_args *a)
{
    if (a->dir) return a->dir;
    return is_dir("labs") ? "labs" : STRATA_LABS_DIR;
}

/* "03-stragglers" for "03-stragglers", "stragglers" or "3". */
static bool matches(const char *path, const char *want)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base) - 4;   /* without ".lab" */
    const char *dash = strchr(base, '-');
    const char *tail = dash && (size_t)(dash - base) < n ? dash + 1 : base;
    size_t tail_n = n - (size_t)(tail - base);
    if (strlen(want) == n && !strncmp(base, want, n)) return true;
    if (strlen(want) == tail_n && !strncmp(tail, want, tail_n)) return true;
    /* "3" or "03": the course number */
    char *end;
    long k = strtol(want, &end, 10);
    return !*end && end != want && dash && strtol(base, NULL, 10) == k;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A file name "07-async-noise.lab": the file of the current directory, else
 * the one of the labs directory (as "07-async-noise" finds it there). */
static int find_lab_file(const struct lab_args *a, char **path, struct err *e)
{
    const char *dir = labs_dir(a);
    if (is_file(a->name)) {
        *path = strdup(a->name);
    } else {
        size_t bytes = strlen(dir) + strlen(a->name) + 2;
        if ((*path = malloc(bytes))) snprintf(*path, bytes, "%s/%s", dir, a->name);
        if (*path && !is_file(*path)) {
            free(*path);
            *path = NULL;
            return err_set(e, ERR_INPUT, "no lab file '%s' in the current directory or in %s "
                           "(`strata lab` lists the labs of %s)", a->name, dir, dir);
        }
    }
    return *path ? 0 : err_set(e, ERR_NOMEM, "out of memory");
}

/* The lab file NAME names: a path to a .lab file, a file name of the
 * current directory or the labs directory, or a lab of that directory. */
static int find_lab(const struct lab_args *a, char **path, struct err *e)
{
    size_t len = strlen(a->name);
    if (strchr(a->name, '/')) {
        *path = strdup(a->name);
        return *path ? 0 : err_set(e, ERR_NOMEM, "out of memory");
    }
    if (len > 4 && !strcmp(a->name + len - 4, ".lab")) return find_lab_file(a, path, e);
    char **paths;
    size_t n;
    TRY(lab_list_dir(labs_dir(a), &paths, &n, e));
    /* Two labs of one number (a teacher's new 07-x.lab beside 07-async-
     * noise.lab): `strata lab 7` ran the first in name order and never
     * said the other existed. */
    const char *found = NULL, *other = NULL;
    for (size_t i = 0; i < n && !other; i++)
        if (matches(paths[i], a->name)) *(found ? &other : &found) = paths[i];
    int rc = 0;
    if (other)
        rc = err_set(e, ERR_INPUT, "'%s' names two labs of %s, %s and %s: name one by its "
                     "file's name", a->name, labs_dir(a), found, other);
    else if (!found)
        rc = err_set(e, ERR_INPUT, "no lab '%s' in %s (`strata lab` lists them)", a->name,
                     labs_dir(a));
    else if (!(*path = strdup(found)))
        rc = err_set(e, ERR_NOMEM, "out of memory");
    lab_paths_free(paths, n);
    return rc;
}

static int list_labs(const struct lab_args *a, struct err *e)
{
    char **paths;
    size_t n;
    TRY(lab_list_dir(labs_dir(a), &paths, &n, e));
    if (!n) {
        lab_paths_free(paths, n);
        return err_set(e, ERR_INPUT, "no labs in %s: a lab is a file named NN-name.lab "
                       "(labs/README.md); --labs DIR names the directory that holds them",
                       labs_dir(a));
    }
    printf("The course: each lab states a claim, asks you to predict, runs it and explains\n"
           "the result from the run's own numbers (%s, in course order).\n\n", labs_dir(a));
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct lab lab;
        if ((rc = lab_load(paths[i], &lab, e)) == 0)
            printf("  %-22s %s%s\n", lab.name, lab.title, lab.has_real ? " (also --mode real)"
                                                                        : "");
        lab_free(&lab);
    }
    lab_paths_free(paths, n);
    if (rc == 0)
        printf("\n`strata lab NAME` runs one (NAME, its number or its name without the\n"
               "number); `strata lab NAME --check` tests its claim on this run (exit 0 or 1).\n");
    return rc;
}

/* The command that runs one scenario of the lab by hand: with --mode real
 * when the lab ran for real, else it would print a simulation's table
 * under a measured one. */
static void print_run_command(const struct lab *lab, const struct lab_run_result *r,
                              bool is_real)
{
    const struct lab_run *run = r->run;
    printf("run %s: strata compare", run->name);
    for (size_t i = 0; i < run->options.len; i++) {
        const struct lab_option *o = &run->options.items[i];
        /* A flag takes no value on the command line: "--numerics", or
         * nothing when the file says false. */
        const struct opt_spec *spec = config_find(o->key);
        if (spec && spec->type == OPT_FLAG) {
            if (strcmp(o->value, "false")) printf(" --%s", o->key);
            continue;
        }
        /* compare refuses --strategy: a run's strategy = X is its list of
         * one (bench/lab_run.c), and is not read beside a strategies = */
        const char *key = o->key;
        if (!strcmp(key, "strategy")) {
            if (config_is_set(&r->cfg, "strategies")) continue;
            key = "strategies";
        }
        char buf[4096];
        const char *value = lab_option_value(lab, o, buf, sizeof buf);
        const char *quote = strpbrk(value, " ;|&") ? "'" : "";
        printf(" --%s %s%s%s", key, quote, value, quote);
    }
    puts(is_real ? " --mode real" : "");
}

static void show_progress(void *ctx, const char *run, int i, int n)
{
    (void)ctx;
    fprintf(stderr, "\rrunning %-16s (%d of %d)", run, i + 1, n);
}

/* The explanation from this run, printed when is_shown. --check renders it
 * unseen: a FIELD the report does not have is found only after the runs,
 * and an autograder's check passed on a lab whose explanation then failed
 * for every student (exit 2). */
static int print_explanation(const struct lab *lab, struct lab_result *res, bool is_shown,
                             struct err *e)
{
    for (size_t i = 0; i < lab->explain.len; i++) {
        char *text;
        TRY_CTX(e, lab_render(lab->explain.items[i].text, lab_result_lookup, res, &text, e),
                "lab file %s:%ld", lab->path, lab->explain.items[i].lineno);
        if (is_shown) printf("%s\n", text);
        free(text);
    }
    return 0;
}

/* A side's value as the explanation prints it: n/a when not a number. */
static const char *check_value(double v, char *buf, size_t n)
{
    if (!isfinite(v)) return "n/a";
    snprintf(buf, n, "%.4g", v);
    return buf;
}

/* Each check with both sides' values; *holds = all hold. A side that is
 * n/a says why a check fails: it printed "(nan > 0.5)", and a teacher who
 * left out numerics = true read it as the claim failing. */
static int print_checks(const struct lab *lab, struct lab_result *res, bool *holds,
                        struct err *e)
{
    *holds = true;
    for (size_t i = 0; i < lab->checks.len; i++) {
        struct lab_check c;
        char lhs[32], rhs[32];
        TRY_CTX(e, lab_check_eval(lab->checks.items[i].text, lab_result_lookup, res, &c, e),
                "lab file %s:%ld", lab->path, lab->checks.items[i].lineno);
        printf("  %-4s %s   (%s %s %s)\n", c.holds ? "ok" : "FAIL", lab->checks.items[i].text,
               check_value(c.lhs, lhs, sizeof lhs), c.op, check_value(c.rhs, rhs, sizeof rhs));
        if (!isfinite(c.lhs) || !isfinite(c.rhs))
            printf("       n/a: a figure this run did not measure (final.* needs numerics = "
                   "true, failure.* a failure), or a division by zero\n");
        *holds = *holds && c.holds;
    }
    return 0;
}

static int run_lab(const struct lab_args *a, const struct lab *lab, struct err *e)
{
    /* refused before the claim is shown: a refusal prints nothing else, and
     * a typo in an expression is not found after every run's table */
    TRY(lab_check_mode(lab, a->is_real, e));
    TRY(lab_check_exprs(lab, e));
    printf("lab %s: %s\n\nclaim: %s\n", lab->name, lab->title, lab->claim);
    if (!a->is_check) printf("predict: %s\n", lab->predict);
    putchar('\n');
    fflush(stdout);
    struct lab_result res;
    bool progress = isatty(STDERR_FILENO);
    int rc = lab_run(lab, a->is_real, progress ? show_progress : NULL, NULL, &res, e);
    if (progress) fprintf(stderr, "\r%40s\r", "");
    bool holds = false;
    for (int i = 0; rc == 0 && !a->is_check && i < res.n; i++) {
        const struct lab_run_result *r = &res.runs[i];
        print_run_command(lab, r, a->is_real);
        report_print_table(stdout, r->c.reports, r->c.n, r->c.speedup);
        if (i == res.n - 1) table_legend_print(stdout, r->c.reports, r->c.n);   /* once */
        putchar('\n');
    }
    if (rc == 0 && !a->is_check) {
        fputs("what happened:\n", stdout);
        rc = print_explanation(lab, &res, true, e);
        putchar('\n');
    } else if (rc == 0) {
        rc = print_explanation(lab, &res, false, e);
    }
    if (rc == 0) {
        printf("check (%s):\n", a->is_real ? "measured" : "simulated");
        rc = print_checks(lab, &res, &holds, e);
    }
    if (rc == 0)
        printf("%s\n", holds ? "the claim holds on this run." : "the claim does NOT hold on this run.");
    lab_result_release(&res);
    return rc < 0 ? rc : holds ? 0 : 1;
}

int cmd_lab(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct lab_args a;
    int rc = parse_args(self, argc, argv, &a, &e);
    if (rc == CONFIG_HELP) return 0;
    if (rc == 0 && !a.name) rc = list_labs(&a, &e);
    if (rc < 0 || !a.name) return rc < 0 ? scenario_fail(self, &e) : 0;
    char *path = NULL;
    struct lab lab = {0};
    int status;
    if ((rc = find_lab(&a, &path, &e)) == 0 && (rc = lab_load(path, &lab, &e)) == 0)
        rc = run_lab(&a, &lab, &e);
    fflush(stdout);
    /* 1: the claim did not hold (an autograder's "fail"), not an error */
    status = rc < 0 ? scenario_fail(self, &e) : rc;
    lab_free(&lab);
    free(path);
    return status;
}

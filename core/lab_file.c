/* Reading lab files (core/lab_file.h). The format is a scenario file with
 * sections: header keys, then [run NAME] blocks of options, an [explain]
 * template and [check] lines; labs/README.md describes it for teachers. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_file.h"
#include "lines.h"

enum section { SEC_HEADER, SEC_RUN, SEC_EXPLAIN, SEC_CHECK };

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

static char *dup_or_fail(const char *s, struct err *e)
{
    char *d = strdup(s);
    if (!d) err_set(e, ERR_NOMEM, "out of memory");
    return d;
}

/* "key = value" into its halves (trimmed, in place); ERR_INPUT without '='. */
static int split_assignment(char *s, char **key, char **value, struct err *e)
{
    char *eq = strchr(s, '=');
    if (!eq) return err_set(e, ERR_INPUT, "'%s' is not 'key = value'", s);
    *eq = '\0';
    *key = trim(s);
    *value = trim(eq + 1);
    if (!**key) return err_set(e, ERR_INPUT, "a line '= %s' names no key", *value);
    /* A quoted value, as scenario files allow: the quotes go. */
    size_t n = strlen(*value);
    if (n >= 2 && (*value)[0] == '"' && (*value)[n - 1] == '"') {
        (*value)[n - 1] = '\0';
        (*value)++;
    }
    return 0;
}

static int set_header(struct lab *lab, char *s, struct err *e)
{
    char *key, *value;
    TRY(split_assignment(s, &key, &value, e));
    char **slot = !strcmp(key, "title")     ? &lab->title
                  : !strcmp(key, "claim")   ? &lab->claim
                  : !strcmp(key, "predict") ? &lab->predict
                                            : NULL;
    if (!strcmp(key, "real")) {
        if (strcmp(value, "yes") && strcmp(value, "no"))
            return err_set(e, ERR_INPUT, "real = '%s': yes or no", value);
        lab->has_real = !strcmp(value, "yes");
        return 0;
    }
    if (!slot)
        return err_set(e, ERR_INPUT, "unknown key '%s' before the first section (title, claim, "
                       "predict, real; scenario options go in a [run NAME] section)", key);
    if (*slot) return err_set(e, ERR_INPUT, "'%s' given twice", key);
    /* the header is printed before anything runs: a {figure} in it was
     * printed as written, braces and all */
    const char *open = strchr(value, '{');
    if (open && strchr(open, '}'))
        return err_set(e, ERR_INPUT, "%s: '%s' has a placeholder, but the %s is shown before "
                       "the run: figures go in [explain]", key, value, key);
    return (*slot = dup_or_fail(value, e)) ? 0 : ERR_NOMEM;
}

/* A run's name is an expression's first word: letters, digits, '_'. */
static bool is_run_name(const char *s)
{
    if (!*s || isdigit((unsigned char)*s)) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return false;
    return true;
}

static int open_section(struct lab *lab, char *s, long lineno, enum section *sec, struct err *e)
{
    size_t n = strlen(s);
    if (s[n - 1] != ']') return err_set(e, ERR_INPUT, "'%s': a section ends with ']'", s);
    s[n - 1] = '\0';
    char *name = trim(s + 1);
    if (!strcmp(name, "explain")) {
        *sec = SEC_EXPLAIN;
        return 0;
    }
    if (!strcmp(name, "check")) {
        *sec = SEC_CHECK;
        return 0;
    }
    if (strncmp(name, "run", 3) || !isspace((unsigned char)name[3]))
        return err_set(e, ERR_INPUT, "unknown section [%s] (sections: [run NAME], [explain], "
                       "[check])", name);
    char *run_name = trim(name + 3);
    if (!is_run_name(run_name))
        return err_set(e, ERR_INPUT, "[run %s]: a run's name is letters, digits and '_', "
                       "not starting with a digit", run_name);
    for (size_t i = 0; i < lab->runs.len; i++)
        if (!strcmp(lab->runs.items[i].name, run_name))
            return err_set(e, ERR_INPUT, "[run %s] given twice", run_name);
    struct lab_run run = {.lineno = lineno};
    if (!(run.name = dup_or_fail(run_name, e))) return ERR_NOMEM;
    if (vec_push(&lab->runs, run) < 0) {
        free(run.name);
        return err_set(e, ERR_NOMEM, "out of memory");
    }
    *sec = SEC_RUN;
    return 0;
}

static int add_option(struct lab_run *run, char *s, long lineno, struct err *e)
{
    char *key, *value;
    TRY(split_assignment(s, &key, &value, e));
    /* a second value would win unseen, as a scenario file's would */
    for (size_t i = 0; i < run->options.len; i++)
        if (!strcmp(run->options.items[i].key, key))
            return err_set(e, ERR_INPUT, "'%s' given twice in [run %s] (first on line %ld)", key,
                           run->name, run->options.items[i].lineno);
    struct lab_option o = {.lineno = lineno};
    o.key = dup_or_fail(key, e);
    o.value = o.key ? dup_or_fail(value, e) : NULL;
    if (!o.value || vec_push(&run->options, o) < 0) {
        free(o.key);
        free(o.value);
        return err_set(e, ERR_NOMEM, "out of memory");
    }
    return 0;
}

static int add_line(struct lab *lab, enum section sec, const char *s, long lineno,
                    struct err *e)
{
    struct lab_line l = {.lineno = lineno};
    if (!(l.text = dup_or_fail(s, e))) return ERR_NOMEM;
    if (vec_push(sec == SEC_EXPLAIN ? &lab->explain : &lab->checks, l) < 0) {
        free(l.text);
        return err_set(e, ERR_NOMEM, "out of memory");
    }
    return 0;
}

/* One line of the file. Explanation lines keep their inner spacing (and
 * blank lines, as paragraph breaks); elsewhere '#' starts a comment. */
static int load_line(struct lab *lab, char *line, long lineno, enum section *sec,
                     struct err *e)
{
    if (line[0] == '#') return 0;
    if (*sec == SEC_EXPLAIN && line[0] != '[') {
        size_t n = strlen(line);
        while (n && isspace((unsigned char)line[n - 1])) line[--n] = '\0';
        return add_line(lab, *sec, line, lineno, e);
    }
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *s = trim(line);
    if (!*s) return 0;
    if (s[0] == '[') return open_section(lab, s, lineno, sec, e);
    switch (*sec) {
    case SEC_HEADER: return set_header(lab, s, e);
    case SEC_RUN: return add_option(&lab->runs.items[lab->runs.len - 1], s, lineno, e);
    case SEC_CHECK: return add_line(lab, *sec, s, lineno, e);
    case SEC_EXPLAIN: break;
    }
    return 0;
}

/* What every lab must have, said once the whole file is read. */
static int check_complete(const struct lab *lab, struct err *e)
{
    const char *missing = !lab->title     ? "title"
                          : !lab->claim   ? "claim"
                          : !lab->predict ? "predict"
                                          : NULL;
    if (missing) return err_set(e, ERR_INPUT, "no '%s = ...' line", missing);
    if (!lab->runs.len) return err_set(e, ERR_INPUT, "no [run NAME] section: nothing to run");
    if (!lab->checks.len)
        return err_set(e, ERR_INPUT, "no [check] lines: the claim cannot be tested");
    for (size_t i = 0; i < lab->runs.len; i++)
        if (!lab->runs.items[i].options.len)
            return err_set(e, ERR_INPUT, "[run %s] (line %ld) sets no option",
                           lab->runs.items[i].name, lab->runs.items[i].lineno);
    return 0;
}

static int set_names(struct lab *lab, const char *path, struct err *e)
{
    if (!(lab->path = dup_or_fail(path, e))) return ERR_NOMEM;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!(lab->name = dup_or_fail(base, e))) return ERR_NOMEM;
    size_t n = strlen(lab->name);
    if (n > 4 && !strcmp(lab->name + n - 4, ".lab")) lab->name[n - 4] = '\0';
    return 0;
}

int lab_load(const char *path, struct lab *lab, struct err *e)
{
    memset(lab, 0, sizeof *lab);
    TRY(set_names(lab, path, e));
    FILE *f = fopen(path, "r");
    if (!f) return err_set(e, ERR_INPUT, "lab file '%s': cannot open: %s", path, strerror(errno));
    if (lines_is_directory(f)) {
        fclose(f);
        return err_set(e, ERR_INPUT, "lab file '%s': a directory, not a lab file (strata lab "
                       "--labs DIR lists the labs of a directory)", path);
    }
    struct lines *r = malloc(sizeof *r);
    if (!r) {
        fclose(f);
        return err_set(e, ERR_NOMEM, "lab file '%s': out of memory", path);
    }
    lines_open(r, f);
    enum section sec = SEC_HEADER;
    char *line;
    int rc;
    while ((rc = lines_next(r, &line, e)) > 0)
        if ((rc = load_line(lab, line, r->lineno, &sec, e)) < 0) break;
    /* Blank lines before the next section are spacing, not text. */
    while (lab->explain.len && !lab->explain.items[lab->explain.len - 1].text[0])
        free(lab->explain.items[--lab->explain.len].text);
    if (rc < 0)
        err_prefix(e, "lab file %s:%ld", path, r->lineno);
    else if ((rc = check_complete(lab, e)) < 0)
        err_prefix(e, "lab file %s", path);
    free(r);
    fclose(f);
    return rc < 0 ? rc : 0;
}

static void free_lines(struct lab_line *l, size_t n)
{
    for (size_t i = 0; i < n; i++) free(l[i].text);
}

void lab_free(struct lab *lab)
{
    if (!lab) return;
    free(lab->path);
    free(lab->name);
    free(lab->title);
    free(lab->claim);
    free(lab->predict);
    for (size_t i = 0; i < lab->runs.len; i++) {
        struct lab_run *run = &lab->runs.items[i];
        for (size_t j = 0; j < run->options.len; j++) {
            free(run->options.items[j].key);
            free(run->options.items[j].value);
        }
        vec_free(&run->options);
        free(run->name);
    }
    vec_free(&lab->runs);
    free_lines(lab->explain.items, lab->explain.len);
    vec_free(&lab->explain);
    free_lines(lab->checks.items, lab->checks.len);
    vec_free(&lab->checks);
    memset(lab, 0, sizeof *lab);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int lab_list_dir(const char *dir, char ***paths, size_t *n, struct err *e)
{
    *paths = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return err_set(e, ERR_INPUT, "labs directory '%s': %s", dir, strerror(errno));
    VEC(char *) found = {0};
    int rc = 0;
    struct dirent *ent;
    while (rc == 0 && (ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (len <= 4 || strcmp(ent->d_name + len - 4, ".lab") || ent->d_name[0] == '.') continue;
        size_t bytes = strlen(dir) + len + 2;
        char *p = malloc(bytes);
        if (!p || vec_push(&found, p) < 0) {
            free(p);
            rc = err_set(e, ERR_NOMEM, "out of memory");
            break;
        }
        snprintf(p, bytes, "%s/%s", dir, ent->d_name);
    }
    closedir(d);
    if (rc < 0) {
        lab_paths_free(found.items, found.len);
        return rc;
    }
    if (found.len) qsort(found.items, found.len, sizeof *found.items, by_name);
    *paths = found.items;
    *n = found.len;
    return 0;
}

void lab_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
}

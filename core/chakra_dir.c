/* A directory of Chakra traces read, and what a strata trace's metadata
 * says of its scenario: see core/chakra_plan.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra_plan.h"

/* Bounds on what a directory may hold: a rank count the plan can take, and
 * a file size read whole into memory. */
#define CHAKRA_MAX_RANKS 1048576
#define CHAKRA_MAX_FILE_BYTES (1LL << 30)

/* --- the directory ------------------------------------------------------------ */

struct et_entry {
    long rank;
    char name[256];
};

typedef VEC(struct et_entry) et_entries;

static int cmp_entry(const void *a, const void *b)
{
    const struct et_entry *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* "NAME.RANK.et" into its parts; false for other names. */
static bool parse_et_name(const char *file, struct et_entry *out)
{
    size_t n = strlen(file);
    if (n < 6 || strcmp(file + n - 3, ".et")) return false;
    size_t end = n - 3, dot = end;
    while (dot > 0 && file[dot - 1] >= '0' && file[dot - 1] <= '9') dot--;
    if (dot == end || dot < 2 || file[dot - 1] != '.' || end - dot > 7) return false;
    if (dot - 1 >= sizeof out->name) return false;
    memcpy(out->name, file, dot - 1);
    out->name[dot - 1] = '\0';
    out->rank = strtol(file + dot, NULL, 10);
    return true;
}

static int read_whole(const char *path, unsigned char **data, size_t *n, struct err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            if ((long long)cap > CHAKRA_MAX_FILE_BYTES + 1) {
                rc = err_set(e, ERR_INPUT, "%s: larger than %lld bytes, more than strata reads",
                             path, CHAKRA_MAX_FILE_BYTES);
                break;
            }
            unsigned char *grown = realloc(buf, cap);
            if (!grown) {
                rc = err_set(e, ERR_NOMEM, "out of memory reading %s", path);
                break;
            }
            buf = grown;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) rc = err_set(e, ERR_IO, "%s: read error", path);
            break;
        }
    }
    fclose(f);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    *data = buf;
    *n = len;
    return 0;
}

void chakra_trace_release(struct chakra_trace *t)
{
    if (!t) return;
    for (int r = 0; r < t->n_files; r++) chakra_file_release(&t->files[r]);
    free(t->files);
    t->files = NULL;
    t->n_files = 0;
}

static int64_t meta_int(const struct chakra_file *f, const char *name, int64_t def)
{
    return chakra_attr_int(&f->attrs, name, def);
}

static int list_entries(const char *dir, et_entries *entries, struct err *e)
{
    DIR *d = opendir(dir);
    if (!d)
        return err_set(e, ERR_INPUT, "--workload: cannot read directory '%s': %s", dir,
                       strerror(errno));
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d))) {
        struct et_entry en;
        size_t n = strlen(de->d_name);
        if (n < 3 || strcmp(de->d_name + n - 3, ".et")) continue;   /* not a trace */
        if (!parse_et_name(de->d_name, &en))
            rc = err_set(e, ERR_INPUT, "--workload: %s/%s is not named NAME.RANK.et", dir,
                         de->d_name);
        else if (vec_push(entries, en) < 0)
            rc = err_set(e, ERR_NOMEM, "out of memory listing %s", dir);
    }
    closedir(d);
    return rc;
}

/* strata_strategy names the run in every table, report and page, and a
 * plan keeps 31 bytes of it: a strategy's name as strata spells them
 * (letters, digits, '-', '_', '.'), never a terminal's escape. */
static int check_strategy_label(const struct chakra_trace *t, struct err *e)
{
    const struct chakra_attr *a = chakra_attr_find(&t->files[0].attrs, "strata_strategy");
    const char *s = a && a->kind == CHAKRA_ATTR_STRING ? a->s : NULL;
    size_t len = s ? strlen(s) : 0;
    bool is_name = len >= 1 && len < sizeof ((struct plan *)0)->strategy &&
                   strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") ==
                       len;
    if (is_name) return 0;
    char path[CONFIG_PATH_BYTES + 300];
    chakra_trace_path(t, 0, path, sizeof path);
    if (!s)
        return err_set(e, ERR_INPUT, "--workload: %s: the metadata says strata_plan 1 but has "
                       "no strata_strategy string", path);
    return err_set(e, ERR_INPUT, "--workload: %s: metadata strata_strategy '%.64s' is not a "
                   "strategy's name (1 to %zu letters, digits, '-', '_' or '.')", path, s,
                   sizeof ((struct plan *)0)->strategy - 1);
}

int chakra_trace_read(const char *dir, struct chakra_trace *t, struct err *e)
{
    memset(t, 0, sizeof *t);
    snprintf(t->dir, sizeof t->dir, "%s", dir);
    et_entries entries = {0};
    int rc = list_entries(dir, &entries, e);
    if (rc == 0 && entries.len == 0)
        rc = err_set(e, ERR_INPUT, "--workload: %s holds no Chakra traces (NAME.RANK.et files)",
                     dir);
    if (rc == 0 && entries.len > CHAKRA_MAX_RANKS)
        rc = err_set(e, ERR_INPUT, "--workload: %s holds %zu traces, more than %d ranks", dir,
                     entries.len, CHAKRA_MAX_RANKS);
    if (rc == 0) qsort(entries.items, entries.len, sizeof *entries.items, cmp_entry);
    for (size_t i = 0; rc == 0 && i < entries.len; i++) {
        if (strcmp(entries.items[i].name, entries.items[0].name))
            rc = err_set(e, ERR_INPUT, "--workload: %s holds traces of '%s' and of '%s': keep "
                         "one workload a directory", dir, entries.items[0].name,
                         entries.items[i].name);
        else if (entries.items[i].rank != (long)i)
            rc = err_set(e, ERR_INPUT, "--workload: %s: %s.%zu.et is missing (the traces go "
                         "to rank %ld: one file a rank, from 0)", dir, entries.items[0].name, i,
                         entries.items[entries.len - 1].rank);
    }
    if (rc == 0) {
        snprintf(t->name, sizeof t->name, "%s", entries.items[0].name);
        t->files = calloc(entries.len, sizeof *t->files);
        if (!t->files) rc = err_set(e, ERR_NOMEM, "out of memory reading %s", dir);
    }
    for (size_t r = 0; rc == 0 && r < entries.len; r++) {
        char path[CONFIG_PATH_BYTES + 300];
        snprintf(path, sizeof path, "%s/%s.%zu.et", dir, t->name, r);
        unsigned char *data = NULL;
        size_t n = 0;
        rc = read_whole(path, &data, &n, e);
        if (rc == 0) rc = chakra_decode(data, n, path, &t->files[r], e);
        free(data);
        if (rc == 0) t->n_files = (int)r + 1;
    }
    vec_free(&entries);
    if (rc < 0) return rc;
    t->is_strata = meta_int(&t->files[0], "strata_plan", 0) == 1;
    for (int r = 1; r < t->n_files; r++)
        if ((meta_int(&t->files[r], "strata_plan", 0) == 1) != t->is_strata)
            return err_set(e, ERR_INPUT, "--workload: %s: %s.%d.et and %s.0.et come from "
                           "different tools (only one says strata_plan)", dir, t->name, r,
                           t->name);
    return t->is_strata ? check_strategy_label(t, e) : 0;
}

const char *chakra_trace_strategy(const struct chakra_trace *t)
{
    const struct chakra_attr *a =
        t->n_files ? chakra_attr_find(&t->files[0].attrs, "strata_strategy") : NULL;
    return t->is_strata && a && a->kind == CHAKRA_ATTR_STRING ? a->s : "chakra";
}

void chakra_trace_path(const struct chakra_trace *t, int r, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s.%d.et", t->dir, t->name, r);
}

int chakra_trace_options(const struct chakra_trace *t, struct config *cfg, struct err *e)
{
    if (!t->is_strata) return 0;
    /* the options are rank 0's metadata: its errors name that file */
    char path[CONFIG_PATH_BYTES + 300];
    chakra_trace_path(t, 0, path, sizeof path);
    /* the options are the trace's, not the command line's: a user's value
     * that differs would be silently ignored, so it is refused */
    unsigned char was_set[sizeof cfg->is_set];   /* what the user gave, kept as it was */
    memcpy(was_set, &cfg->is_set, sizeof was_set);
    const chakra_attrs *attrs = &t->files[0].attrs;
    for (size_t i = 0; i < attrs->len; i++) {
        const struct chakra_attr *a = &attrs->items[i];
        if (strcmp(a->name, "strata_option") || a->kind != CHAKRA_ATTR_STRING) continue;
        char key[64];
        const char *eq = strchr(a->s, '=');
        if (!eq || (size_t)(eq - a->s) >= sizeof key)
            return err_set(e, ERR_INPUT, "--workload: %s: metadata strata_option '%s' is not "
                           "NAME=VALUE", path, a->s);
        memcpy(key, a->s, (size_t)(eq - a->s));
        key[eq - a->s] = '\0';
        const struct opt_spec *o = config_find(key);
        if (!o || !(o->groups & OPTG_SCENARIO))
            return err_set(e, ERR_INPUT, "--workload: %s: metadata strata_option '%s' names no "
                           "scenario option of this strata", path, a->s);
        char mine[CONFIG_PATH_BYTES];
        config_format(cfg, o, mine, sizeof mine);
        if (config_is_set(cfg, key) && strcmp(mine, eq + 1))
            return err_set(e, ERR_INPUT, "--%s: %s was given, but the traces in %s were built "
                           "with %s; leave --%s out (the plan comes from the traces)", key,
                           mine, t->dir, eq + 1, key);
        TRY_CTX(e, config_set(cfg, key, eq + 1, OPTG_SCENARIO, e),
                "--workload: %s: metadata strata_option '%s'", path, a->s);
    }
    memcpy(&cfg->is_set, was_set, sizeof was_set);
    return 0;
}

int chakra_workload_placeholder(const char *spec, struct workload **out, struct err *e)
{
    struct workload *w = calloc(1, sizeof *w);
    struct layer *l = calloc(1, sizeof *l);
    if (!w || !l) {
        free(w);
        free(l);
        return err_set(e, ERR_NOMEM, "out of memory for a trace's workload");
    }
    snprintf(w->spec, sizeof w->spec, "%s", spec);
    snprintf(w->canonical, sizeof w->canonical, "%s", spec);
    w->n_layers = 1;
    w->layers = l;
    w->elem_bytes = 4;
    *out = w;
    return 0;
}

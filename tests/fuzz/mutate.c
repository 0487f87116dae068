/* The mutator and the corpus of tests/fuzz/mutate.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../helpers.h"
#include "mutate.h"

size_t fuzz_cases(size_t fallback)
{
    const char *s = getenv("STRATA_FUZZ_CASES");
    if (!s || !*s) return fallback;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    cr_assert(!*end && v > 0, "STRATA_FUZZ_CASES='%s' is not a count of cases", s);
    return (size_t)v;
}

uint64_t fuzz_seed(void)
{
    const char *s = getenv("STRATA_FUZZ_SEED");
    if (!s || !*s) return 1;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    cr_assert(!*end, "STRATA_FUZZ_SEED='%s' is not a number", s);
    return v;
}

/* ---- the corpus --------------------------------------------------------- */

void fuzz_corpus_add(struct fuzz_corpus *c, const char *bytes, size_t len, const char *name)
{
    struct fuzz_input *grown = realloc(c->items, (c->n + 1) * sizeof *grown);
    cr_assert_not_null(grown, "out of memory");
    c->items = grown;
    struct fuzz_input *in = &c->items[c->n++];
    in->bytes = malloc(len + 1);
    cr_assert_not_null(in->bytes, "out of memory");
    memcpy(in->bytes, bytes, len);
    in->bytes[len] = '\0';
    in->len = len;
    snprintf(in->name, sizeof in->name, "%s", name);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct fuzz_input *)a)->name, ((const struct fuzz_input *)b)->name);
}

struct fuzz_corpus fuzz_corpus_load(const char *parser)
{
    struct fuzz_corpus c = {0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tests/corpus/%s", STRATA_SOURCE_DIR, parser);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "no corpus directory %s", dir);
    for (struct dirent *de; (de = readdir(d));) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        size_t n;
        char *bytes = test_slurp_n(path, &n);
        char name[256];
        snprintf(name, sizeof name, "corpus/%s/%.200s", parser, de->d_name);
        fuzz_corpus_add(&c, bytes, n, name);
        free(bytes);
    }
    closedir(d);
    cr_assert(c.n > 0, "the corpus %s is empty: it needs seeds", dir);
    qsort(c.items, c.n, sizeof *c.items, by_name);
    return c;
}

void fuzz_corpus_free(struct fuzz_corpus *c)
{
    for (size_t i = 0; i < c->n; i++) free(c->items[i].bytes);
    free(c->items);
    *c = (struct fuzz_corpus){0};
}

/* ---- mutations ---------------------------------------------------------- */

/* A growable byte buffer: the mutant under construction. */
struct buf {
    char *b;
    size_t len, cap;
};

static void buf_reserve(struct buf *x, size_t need)
{
    if (need + 1 <= x->cap) return;
    size_t cap = x->cap ? x->cap : 64;
    while (cap < need + 1) cap *= 2;
    x->b = realloc(x->b, cap);
    cr_assert_not_null(x->b, "out of memory");
    x->cap = cap;
}

/* Replaces x[at .. at+del) with ins[0..n). */
static void buf_splice(struct buf *x, size_t at, size_t del, const char *ins, size_t n)
{
    if (x->len + n - del > FUZZ_MAX_BYTES) return;   /* keep mutants bounded */
    buf_reserve(x, x->len - del + n);
    memmove(x->b + at + n, x->b + at + del, x->len - at - del);
    if (n) memcpy(x->b + at, ins, n);
    x->len = x->len - del + n;
}

static uint64_t below(uint64_t *rng, uint64_t n)
{
    return n ? test_rng_next(rng) % n : 0;
}

/* What parsers of numbers, options and documents trip over: the edges of
 * int32, int64 and double, non-numbers, separators of each format. */
static const char *const tokens[] = {
    "0", "-0", "1", "-1", "0.5", "1e308", "-1e308", "1e309", "1e999", "5e-324", "1e-300",
    "2147483647", "2147483648", "-2147483649", "4294967295", "4294967296",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "18446744073709551616", "1048575", "1048577", "nan", "NaN", "inf", "-inf", "Infinity",
    "0x10", "1e", ".", "+", "--", "=", "==", "\"", "\"\"", "#", ",", ",,", ":", "::", "@",
    "@s", "s", "=,", "\\", "\\u0000", "\\ud800", "null", "true", "false", "[]", "{}", "[[",
    "{\"a\":", "]", "}", "\x1b[31m", "\r", "\t", " ", "\n", "\n\n",
};

/* One mutation of x; other is a second input for splices across inputs. */
static void mutate_once(struct buf *x, const struct fuzz_input *other, uint64_t *rng)
{
    size_t at = (size_t)below(rng, x->len + 1);
    size_t span = x->len - at;
    switch (below(rng, 11)) {
    case 0:   /* flip a bit */
        if (x->len) x->b[at % x->len] ^= (char)(1u << below(rng, 8));
        break;
    case 1: { /* a byte set to an interesting value */
        static const unsigned char bytes[] = {0, 0xff, 0x7f, 0x80, 0x1b, '\n', '=', '"', ',', '-'};
        if (x->len) x->b[at % x->len] = (char)bytes[below(rng, sizeof bytes)];
        break;
    }
    case 2:   /* truncate */
        x->len = at;
        break;
    case 3:   /* delete a run */
        buf_splice(x, at, (size_t)below(rng, span < 64 ? span + 1 : 64), NULL, 0);
        break;
    case 4: { /* duplicate a run of this input elsewhere in it */
        size_t from = (size_t)below(rng, x->len + 1), n = (size_t)below(rng, 128);
        if (from + n > x->len) n = x->len - from;
        char *copy = malloc(n + 1);
        cr_assert_not_null(copy);
        memcpy(copy, x->b + from, n);
        buf_splice(x, at, 0, copy, n);
        free(copy);
        break;
    }
    case 5: { /* splice: a run of another input replaces the tail or a run */
        size_t from = (size_t)below(rng, other->len + 1), n = (size_t)below(rng, 256);
        if (from + n > other->len) n = other->len - from;
        buf_splice(x, at, below(rng, 2) ? span : (size_t)below(rng, span + 1),
                   other->bytes + from, n);
        break;
    }
    case 6:
    case 7: { /* a token inserted, or replacing a run (a number by a huge one) */
        const char *t = tokens[below(rng, sizeof tokens / sizeof *tokens)];
        size_t del = 0;
        if (below(rng, 2)) while (at + del < x->len && del < 24 &&
                                  strchr("0123456789.eE+-", x->b[at + del])) del++;
        buf_splice(x, at, del, t, strlen(t));
        break;
    }
    case 8: { /* a long line: a byte repeated */
        static const char fill[] = "A9 =,.-\"";
        size_t n = (size_t)1 << below(rng, 17);   /* 1 B to 64 KiB */
        char *run = malloc(n);
        cr_assert_not_null(run);
        memset(run, fill[below(rng, sizeof fill - 1)], n);
        buf_splice(x, at, 0, run, n);
        free(run);
        break;
    }
    case 9:   /* a NUL byte inserted */
        buf_splice(x, at, 0, "", 1);
        break;
    case 10: { /* a 32-bit big-endian edge value (binary formats' sizes) */
        static const uint32_t edges[] = {0, 1, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0x00000803u,
                                         0x00000801u, 0x10000u};
        uint32_t v = edges[below(rng, sizeof edges / sizeof *edges)];
        char be[4] = {(char)(v >> 24), (char)(v >> 16), (char)(v >> 8), (char)v};
        size_t del = span < 4 ? span : 4;
        buf_splice(x, at, del, be, 4);
        break;
    }
    }
}

void fuzz_mutate(const struct fuzz_corpus *c, uint64_t *rng, struct fuzz_input *out)
{
    const struct fuzz_input *base = &c->items[below(rng, c->n)];
    struct buf x = {0};
    buf_reserve(&x, base->len);
    memcpy(x.b, base->bytes, base->len);
    x.len = base->len;
    for (int k = 0, n = 1 + (int)below(rng, 4); k < n; k++)
        mutate_once(&x, &c->items[below(rng, c->n)], rng);
    buf_reserve(&x, x.len);
    x.b[x.len] = '\0';
    out->bytes = x.b;
    out->len = x.len;
    snprintf(out->name, sizeof out->name, "a mutant of %.200s", base->name);
}

/* ---- files -------------------------------------------------------------- */

void fuzz_write_file(const char *path, const char *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(bytes, 1, len, f), len, "cannot write %s", path);
    cr_assert_eq(fclose(f), 0, "cannot write %s", path);
}

static void last_path(const char *parser, char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/strata-fuzz-last-%s", parser);
}

void fuzz_save_last(const char *parser, const struct fuzz_input *in)
{
    char path[256];
    last_path(parser, path, sizeof path);
    fuzz_write_file(path, in->bytes, in->len);
}

void fuzz_clear_last(const char *parser)
{
    char path[256];
    last_path(parser, path, sizeof path);
    remove(path);
}

/* What the test files share: a file's whole contents, and temporary
 * directories. Header-only (static inline) because every tests/test_*.c is
 * its own executable. */
#ifndef STRATA_TESTS_HELPERS_H
#define STRATA_TESTS_HELPERS_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The bytes of path, NUL-terminated (caller frees); their count in *n when n
 * is not NULL. Fails the test when the file cannot be read. */
static inline char *test_slurp_n(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap + 1);
    cr_assert_not_null(buf);
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            buf = realloc(buf, (cap *= 2) + 1);
            cr_assert_not_null(buf);
        }
    }
    cr_assert(!ferror(f), "cannot read %s", path);
    fclose(f);
    buf[len] = '\0';
    if (n) *n = len;
    return buf;
}

static inline char *test_slurp(const char *path)
{
    return test_slurp_n(path, NULL);
}

/* Makes a fresh directory /tmp/strata-test-WHAT-XXXXXX into dir (capacity n). */
static inline void test_make_dir(char *dir, size_t n, const char *what)
{
    snprintf(dir, n, "/tmp/strata-test-%s-XXXXXX", what);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp %s: %s", dir, strerror(errno));
}

/* Removes dir and everything in it. */
static inline void test_remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
}

#endif

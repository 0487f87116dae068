/* real/params.c: the --save-params file read back (params_load), its
 * malformed forms refused naming the file and what is wrong. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../real/params.h"
#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(params);

/* A file of the header's magic, count and n_floats floats. */
static const char *write_params_file(const char *name, const char *magic, int64_t count,
                                     int n_floats)
{
    const char *path = test_tmp_path(name);
    FILE *f = fopen(path, "wb");
    cr_assert(f, "%s", path);
    fwrite(magic, 1, 8, f);
    fwrite(&count, sizeof count, 1, f);
    for (int i = 0; i < n_floats; i++) {
        float x = (float)i * 0.5f;
        fwrite(&x, sizeof x, 1, f);
    }
    fclose(f);
    return path;
}

Test(params, saved_parameters_read_back_the_same)
{
    const float p[3] = {1.5f, -2.0f, 0.25f};
    const char *path = test_tmp_path("p.params");
    struct err e = {0};
    cr_assert_eq(params_save(path, p, 3, &e), 0, "%s", e.msg);
    float *q = NULL;
    int64_t n = 0;
    cr_assert_eq(params_load(path, &q, &n, &e), 0, "%s", e.msg);
    cr_expect_eq(n, 3);
    cr_expect_eq(memcmp(p, q, sizeof p), 0, "the floats as written");
    free(q);
}

Test(params, a_damaged_header_is_refused_before_it_is_allocated)
{
    /* a count of 2^34 in a file of 3 floats asked malloc for 64 GiB (ASan
     * aborted: out of memory); 0 parameters was accepted, and gpu_speed
     * compare then read parameter 0 of an empty block */
    static const struct { const char *magic; int64_t count; int n_floats; const char *must_say; } bad[] = {
        {"STRATAP1", (int64_t)1 << 34, 3, "17179869184 parameters its header counts take"},
        {"STRATAP1", 0, 0, "counts 0 parameters (1 to 17179869184 allowed)"},
        {"STRATAP1", -1, 3, "counts -1 parameters"},
        {"STRATAP1", 4, 3, "28 bytes, but the 4 parameters"},
        {"STRATAP1", 2, 3, "28 bytes, but the 2 parameters"},
        {"STRATAQ1", 3, 3, "does not begin with STRATAP1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = write_params_file("bad.params", bad[i].magic, bad[i].count,
                                             bad[i].n_floats);
        float *q = NULL;
        int64_t n = -1;
        struct err e = {0};
        cr_expect_eq(params_load(path, &q, &n, &e), ERR_INPUT, "case %zu is refused", i);
        cr_expect_null(q);
        cr_expect_eq(n, 0);
        cr_expect(strstr(e.msg, path) && strstr(e.msg, bad[i].must_say),
                  "case %zu: '%s' names the file and says '%s'", i, e.msg, bad[i].must_say);
    }
    /* a file that ends inside its count */
    const char *path = test_tmp_file("short.params", "STRATAP1\001\0");
    float *q = NULL;
    int64_t n = 0;
    struct err e = {0};
    cr_expect_eq(params_load(path, &q, &n, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "ends inside its header"), "%s", e.msg);
}

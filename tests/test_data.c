/* nn/data.c: the IDX loader, the synthetic set and the sampler.
 *
 * Fashion-MNIST's expected counts, labels and pixel sums were read from the
 * installed files with Python's gzip module (an independent decoder). Broken
 * files are crafted in a temporary directory, one kind of damage each; every
 * one must give ERR_INPUT with a message naming the file. Sampler checks
 * follow the contract of nn/data.h: a step is B consecutive positions of the
 * epoch's permutation, split over workers then microbatches, first parts one
 * larger. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "../nn/data.h"
#include "helpers.h"

/* ---- crafting IDX files --------------------------------------------------- */

/* A small valid set: TR_N training and TE_N test images of ROWS x COLS, pixel
 * byte (i * 7 + j) mod 256, labels i mod N_LABELS. */
enum { ROWS = 4, COLS = 3, TR_N = 20, TE_N = 10, N_LABELS = 5 };

static const char *const BASES[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                     "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};

/* Writes bytes to path, through gzip when is_gzip. */
static void write_bytes(const char *path, const void *bytes, size_t n, int is_gzip)
{
    if (is_gzip) {
        gzFile gz = gzopen(path, "wb");
        cr_assert_not_null(gz, "gzopen %s", path);
        cr_assert_eq(gzwrite(gz, bytes, (unsigned)n), (int)n, "gzwrite %s", path);
        cr_assert_eq(gzclose(gz), Z_OK);
        return;
    }
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "fopen %s", path);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* An IDX image: big-endian header of magic and sizes, then the body. The
 * caller frees it; its length is in *n. */
static uint8_t *idx_bytes(uint32_t magic, const uint32_t *dims, int n_dims, const uint8_t *body,
                          size_t body_bytes, size_t *n)
{
    *n = 4 + 4 * (size_t)n_dims + body_bytes;
    uint8_t *b = malloc(*n ? *n : 1);
    cr_assert_not_null(b);
    uint32_t words[4] = {magic, 0, 0, 0};
    for (int d = 0; d < n_dims; d++) words[d + 1] = dims[d];
    for (int w = 0; w <= n_dims; w++)
        for (int k = 0; k < 4; k++) b[4 * w + k] = (uint8_t)(words[w] >> (24 - 8 * k));
    if (body_bytes) memcpy(b + 4 + 4 * n_dims, body, body_bytes);
    return b;
}

/* The body of a valid file of the small set: which = 0..3 as BASES. */
static uint8_t *valid_body(int which, size_t *n)
{
    int count = which < 2 ? TR_N : TE_N;
    int is_images = which % 2 == 0;
    *n = (size_t)count * (is_images ? ROWS * COLS : 1);
    uint8_t *body = malloc(*n);
    cr_assert_not_null(body);
    for (size_t i = 0; i < *n; i++)
        body[i] = is_images ? (uint8_t)((i * 7 + (size_t)which) % 256) : (uint8_t)(i % N_LABELS);
    return body;
}

/* Writes file `which` of the small set into dir, plain or gzip'd; its
 * path is left in path. */
static void write_valid(const char *dir, int which, int is_gzip, char *path, size_t path_bytes)
{
    size_t body_n, n;
    uint8_t *body = valid_body(which, &body_n);
    int is_images = which % 2 == 0;
    uint32_t dims[3] = {(uint32_t)(which < 2 ? TR_N : TE_N), ROWS, COLS};
    uint8_t *b = idx_bytes(is_images ? 0x803 : 0x801, dims, is_images ? 3 : 1, body, body_n, &n);
    snprintf(path, path_bytes, "%s/%s%s", dir, BASES[which], is_gzip ? ".gz" : "");
    write_bytes(path, b, n, is_gzip);
    free(b);
    free(body);
}

/* A fresh directory holding the whole small set; gzip_mask bit k gzips file k. */
static void write_set(char *dir, size_t dir_bytes, int gzip_mask)
{
    test_make_dir(dir, dir_bytes, "data");
    char path[512];
    for (int k = 0; k < 4; k++) write_valid(dir, k, gzip_mask >> k & 1, path, sizeof path);
}

/* Writes a valid set into a fresh dir (gzip_mask as write_set) and returns
 * the bytes of its file `which` (caller frees), their count in *n, and that
 * file's path. */
static char *set_with_file(char *dir, size_t dir_bytes, int gzip_mask, int which, char *path,
                           size_t path_bytes, size_t *n)
{
    write_set(dir, dir_bytes, gzip_mask);
    snprintf(path, path_bytes, "%s/%s%s", dir, BASES[which],
             (gzip_mask >> which) & 1 ? ".gz" : "");
    return test_slurp_n(path, n);
}

/* Replaces dir's file `which` with the given bytes: gzip'd into name.gz when
 * is_gzip is 1, as they are into name.gz when it is 2 (damaged gzip data),
 * as they are into name when 0. Its path goes to path. */
static void replace_file(const char *dir, int which, const void *bytes, size_t n, int is_gzip,
                         char *path, size_t path_bytes)
{
    char old[512];
    snprintf(old, sizeof old, "%s/%s", dir, BASES[which]);
    remove(old);
    snprintf(old, sizeof old, "%s/%s.gz", dir, BASES[which]);
    remove(old);
    snprintf(path, path_bytes, "%s/%s%s", dir, BASES[which], is_gzip ? ".gz" : "");
    write_bytes(path, bytes, n, is_gzip == 1);
}

/* Loading dir must fail with ERR_INPUT, a message holding `names` and each
 * of up to two further fragments, and *out left empty. */
static void expect_input_error(const char *dir, const char *names, const char *what1,
                               const char *what2)
{
    struct data d;
    memset(&d, 0xab, sizeof d);   /* data_load must clear it */
    struct err e = {0};
    int rc = data_load(dir, 1, &d, &e);
    cr_log_info("%s", e.msg);
    cr_assert_eq(rc, ERR_INPUT, "rc %d, message: %s", rc, e.msg);
    cr_assert_eq(e.code, ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, names), "message should name '%s': %s", names, e.msg);
    const char *whats[2] = {what1, what2};
    for (int k = 0; k < 2; k++)
        if (whats[k])
            cr_assert_not_null(strstr(e.msg, whats[k]), "message should say '%s': %s", whats[k],
                               e.msg);
    cr_assert_null(d.train.x);
    cr_assert_null(d.train.y);
    cr_assert_null(d.test.x);
    cr_assert_null(d.test.y);
    data_release(&d);
}

/* Writes a file `which` of the small set, with the header and body given. */
static void write_crafted(const char *dir, int which, uint32_t magic, const uint32_t *dims,
                          int n_dims, const uint8_t *body, size_t body_n, char *path,
                          size_t path_bytes)
{
    size_t n;
    uint8_t *b = idx_bytes(magic, dims, n_dims, body, body_n, &n);
    replace_file(dir, which, b, n, 0, path, path_bytes);
    free(b);
}

static struct data load_ok(const char *spec, uint64_t seed)
{
    struct data d;
    struct err e = {0};
    int rc = data_load(spec, seed, &d, &e);
    cr_assert_eq(rc, 0, "data_load('%s'): %s", spec, e.msg);
    return d;
}

/* ---- Fashion-MNIST -------------------------------------------------------- */

Test(data, fashion_mnist_loads_with_its_published_counts)
{
    struct stat st;
    if (stat(DATA_DEFAULT_DIR, &st) != 0) {
        /* Not installed: the message must say how to get it. */
        struct data d;
        struct err e = {0};
        cr_assert_eq(data_load("fashion-mnist", 1, &d, &e), ERR_INPUT);
        cr_assert_not_null(strstr(e.msg, "dataset-fashion-mnist"), "%s", e.msg);
        cr_assert_not_null(strstr(e.msg, "--data synthetic"), "%s", e.msg);
        cr_skip_test("%s is not installed; checked its message only", DATA_DEFAULT_DIR);
    }
    struct data d = load_ok("fashion-mnist", 1);
    cr_assert_eq(d.train.n, 60000);
    cr_assert_eq(d.test.n, 10000);
    cr_assert_eq(d.train.rows, 28);
    cr_assert_eq(d.train.cols, 28);
    cr_assert_eq(d.test.rows, 28);
    cr_assert_eq(data_features(&d.test), 784);
    cr_assert_eq(d.train.n_classes, 10);
    cr_assert_eq(d.test.n_classes, 10);
    cr_assert_not_null(strstr(d.train.source, "train-images-idx3-ubyte"), "%s", d.train.source);
    cr_assert_not_null(strstr(d.test.label_source, "t10k-labels-idx1-ubyte"), "%s",
                       d.test.label_source);

    /* Pixels: bytes 0..255 scaled to [0,1], both ends present. */
    float lo = 1, hi = 0;
    for (int64_t i = 0; i < d.train.n * 784; i++) {
        if (d.train.x[i] < lo) lo = d.train.x[i];
        if (d.train.x[i] > hi) hi = d.train.x[i];
    }
    cr_assert_eq(lo, 0.0f);
    cr_assert_eq(hi, 1.0f);
    /* Image 0: byte sum 76247, its maximum 255 at pixel 417 (Python gzip). */
    double sum = 0;
    for (int j = 0; j < 784; j++) sum += d.train.x[j];
    cr_assert_float_eq(sum, 76247.0 / 255.0, 1e-3, "image 0 sums to %f", sum);
    cr_assert_eq(d.train.x[417], 1.0f);

    /* Labels: the first ten of each split, and the balanced histograms
     * (6,000 per class in training, 1,000 in test). */
    const uint8_t train_first[10] = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
    const uint8_t test_first[10] = {9, 2, 1, 1, 6, 1, 4, 6, 5, 7};
    cr_assert_arr_eq(d.train.y, train_first, 10);
    cr_assert_arr_eq(d.test.y, test_first, 10);
    int64_t train_hist[10] = {0}, test_hist[10] = {0};
    for (int64_t i = 0; i < d.train.n; i++) train_hist[d.train.y[i]]++;
    for (int64_t i = 0; i < d.test.n; i++) test_hist[d.test.y[i]]++;
    for (int c = 0; c < 10; c++) {
        cr_assert_eq(train_hist[c], 6000, "train class %d: %ld", c, (long)train_hist[c]);
        cr_assert_eq(test_hist[c], 1000, "test class %d: %ld", c, (long)test_hist[c]);
    }
    struct err e = {0};
    cr_assert_eq(data_check_model(&d, 784, 10, &e), 0, "%s", e.msg);
    data_release(&d);
    data_release(&d);   /* a released struct is zeroed: releasing again is harmless */
}

Test(data, empty_spec_means_fashion_mnist)
{
    struct stat st;
    if (stat(DATA_DEFAULT_DIR, &st) != 0) cr_skip_test("%s is not installed", DATA_DEFAULT_DIR);
    struct data a = load_ok("", 1), b = load_ok(DATA_DEFAULT_DIR, 1);
    cr_assert_eq(a.test.n, b.test.n);
    cr_assert_arr_eq(a.test.y, b.test.y, (size_t)a.test.n);
    cr_assert_arr_eq(a.test.x, b.test.x, (size_t)a.test.n * 784 * sizeof(float));
    data_release(&a);
    data_release(&b);
}

/* ---- a directory of IDX files -------------------------------------------- */

Test(data, plain_gzip_and_mixed_files_load_identically)
{
    char plain[64], gz[64], mixed[64];
    write_set(plain, sizeof plain, 0x0);
    write_set(gz, sizeof gz, 0xf);
    write_set(mixed, sizeof mixed, 0x5);   /* both images files gzip'd, labels plain */
    struct data a = load_ok(plain, 1), b = load_ok(gz, 1), c = load_ok(mixed, 1);
    struct data *all[3] = {&a, &b, &c};
    for (int k = 0; k < 3; k++) {
        struct data *d = all[k];
        cr_assert_eq(d->train.n, TR_N);
        cr_assert_eq(d->test.n, TE_N);
        cr_assert_eq(d->train.rows, ROWS);
        cr_assert_eq(d->train.cols, COLS);
        cr_assert_eq(d->train.n_classes, N_LABELS);
        cr_assert_eq(d->test.n_classes, N_LABELS);
        cr_assert_arr_eq(d->train.x, a.train.x, TR_N * ROWS * COLS * sizeof(float));
        cr_assert_arr_eq(d->test.x, a.test.x, TE_N * ROWS * COLS * sizeof(float));
        cr_assert_arr_eq(d->train.y, a.train.y, TR_N);
        cr_assert_arr_eq(d->test.y, a.test.y, TE_N);
    }
    cr_assert_not_null(strstr(b.train.source, ".gz"), "%s", b.train.source);
    cr_assert_not_null(strstr(c.train.source, ".gz"), "%s", c.train.source);
    cr_assert_null(strstr(c.train.label_source, ".gz"), "%s", c.train.label_source);

    /* Values: byte/255 exactly as written, labels i mod 5. */
    size_t n;
    uint8_t *body = valid_body(0, &n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(a.train.x[i], (float)body[i] / 255.0f, "pixel %zu", i);
    free(body);
    for (int i = 0; i < TE_N; i++) cr_assert_eq(a.test.y[i], i % N_LABELS);
    data_release(&a);
    data_release(&b);
    data_release(&c);
    test_remove_dir(plain);
    test_remove_dir(gz);
    test_remove_dir(mixed);
}

Test(data, plain_file_is_read_when_both_plain_and_gzip_exist)
{
    char dir[64], path[512];
    write_set(dir, sizeof dir, 0x0);
    write_bytes(strcat(strcpy(path, dir), "/train-images-idx3-ubyte.gz"), "junk", 4, 0);
    struct data d = load_ok(dir, 1);
    cr_assert_null(strstr(d.train.source, ".gz"), "%s", d.train.source);
    data_release(&d);
    test_remove_dir(dir);
}

Test(data, missing_directory_names_it_and_the_expected_files)
{
    char dir[64], path[512];
    test_make_dir(dir, sizeof dir, "data");
    snprintf(path, sizeof path, "%s/nowhere", dir);
    expect_input_error(path, path, "train-images-idx3-ubyte", "--data synthetic");
    test_remove_dir(dir);
}

Test(data, a_file_given_as_the_directory_is_rejected)
{
    char dir[64], path[512];
    write_set(dir, sizeof dir, 0x0);
    snprintf(path, sizeof path, "%s/%s", dir, BASES[0]);
    expect_input_error(path, path, "not a directory", NULL);
    test_remove_dir(dir);
}

Test(data, each_missing_file_is_named)
{
    for (int k = 0; k < 4; k++) {
        char dir[64], path[512];
        write_set(dir, sizeof dir, 0x0);
        snprintf(path, sizeof path, "%s/%s", dir, BASES[k]);
        cr_assert_eq(remove(path), 0);
        char both[128];
        snprintf(both, sizeof both, "neither %s nor %s.gz", BASES[k], BASES[k]);
        expect_input_error(dir, dir, both, "t10k-labels-idx1-ubyte");
        test_remove_dir(dir);
    }
}

Test(data, bad_magic_numbers_are_rejected)
{
    char dir[64], path[512];
    size_t n;
    uint8_t *body = valid_body(0, &n);
    const uint32_t dims[3] = {TR_N, ROWS, COLS};
    struct {
        uint32_t magic;
        const char *says;
    } cases[] = {
        {0x00000801, "wrong number of dimensions"},   /* a labels magic on images */
        {0x00000d03, "not unsigned bytes"},           /* floats (type 0x0d) */
        {0x504b0803, "not an IDX file"},   /* "PK": a zip archive */
        {0x00000804, "wrong number of dimensions"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        write_set(dir, sizeof dir, 0x0);
        write_crafted(dir, 0, cases[c].magic, dims, 3, body, n, path, sizeof path);
        expect_input_error(dir, path, "bad magic number", cases[c].says);
        test_remove_dir(dir);
    }
    /* An images file where labels belong. */
    write_set(dir, sizeof dir, 0x0);
    write_crafted(dir, 1, 0x803, dims, 3, body, n, path, sizeof path);
    expect_input_error(dir, path, "0x00000803", "0x00000801");
    test_remove_dir(dir);
    free(body);
}

Test(data, wrong_dimension_count_is_rejected)
{
    char dir[64], path[512];
    uint8_t body[TR_N * 2] = {0};
    const uint32_t dims[3] = {TR_N, 2, 0};
    write_set(dir, sizeof dir, 0x0);
    write_crafted(dir, 1, 0x802, dims, 2, body, sizeof body, path, sizeof path);
    expect_input_error(dir, path, "1 dimension of unsigned bytes", "wrong number of dimensions");
    test_remove_dir(dir);
}

Test(data, zero_and_huge_sizes_are_rejected_without_allocating_them)
{
    char dir[64], path[512];
    uint8_t body[64] = {0};
    /* A size of 0. */
    const uint32_t zero[3] = {TR_N, 0, COLS};
    write_set(dir, sizeof dir, 0x0);
    write_crafted(dir, 0, 0x803, zero, 3, body, 0, path, sizeof path);
    expect_input_error(dir, path, "dimension 2", "is 0");
    test_remove_dir(dir);
    /* Over 2^31 - 1. */
    const uint32_t big[3] = {0x80000000u, ROWS, COLS};
    write_set(dir, sizeof dir, 0x0);
    write_crafted(dir, 0, 0x803, big, 3, body, sizeof body, path, sizeof path);
    expect_input_error(dir, path, "dimension 1", "2147483648");
    test_remove_dir(dir);
    /* Three sizes of 2^31 - 1 multiply past any memory. */
    const uint32_t overflow[3] = {0x7fffffffu, 0x7fffffffu, 0x7fffffffu};
    write_set(dir, sizeof dir, 0x0);
    write_crafted(dir, 0, 0x803, overflow, 3, body, sizeof body, path, sizeof path);
    expect_input_error(dir, path, "multiply", NULL);
    test_remove_dir(dir);
    /* 10^12 bytes claimed, 64 present: truncated, read as it arrives. */
    const uint32_t claimed[3] = {1000000, 1000, 1000};
    write_set(dir, sizeof dir, 0x0);
    write_crafted(dir, 0, 0x803, claimed, 3, body, sizeof body, path, sizeof path);
    expect_input_error(dir, path, "truncated", "1000000000000 bytes");
    test_remove_dir(dir);
}

Test(data, truncated_files_are_rejected)
{
    for (int which = 0; which < 4; which++) {
        char dir[64], path[512];
        size_t n;
        char *bytes = set_with_file(dir, sizeof dir, 0x0, which, path, sizeof path, &n);
        /* One byte short: the data is cut. */
        replace_file(dir, which, bytes, n - 1, 0, path, sizeof path);
        expect_input_error(dir, path, "truncated", which % 2 ? "labels" : "images");
        /* Cut inside the header. */
        replace_file(dir, which, bytes, 6, 0, path, sizeof path);
        expect_input_error(dir, path, "truncated", "header");
        /* The same cut, gzip'd: zlib reads it fine, the length check catches it. */
        replace_file(dir, which, bytes, n - 1, 1, path, sizeof path);
        expect_input_error(dir, path, "truncated", NULL);
        free(bytes);
        test_remove_dir(dir);
    }
}

Test(data, trailing_bytes_are_rejected)
{
    for (int which = 0; which < 4; which++) {
        char dir[64], path[512];
        size_t n;
        char *bytes = set_with_file(dir, sizeof dir, 0x0, which, path, sizeof path, &n);
        char *longer = calloc(n + 3, 1);
        cr_assert_not_null(longer);
        memcpy(longer, bytes, n);
        replace_file(dir, which, longer, n + 3, which == 3, path, sizeof path);
        expect_input_error(dir, path, "3 bytes follow", NULL);
        free(longer);
        free(bytes);
        test_remove_dir(dir);
    }
}

Test(data, empty_files_are_rejected)
{
    for (int which = 0; which < 4; which++) {
        char dir[64], path[512];
        write_set(dir, sizeof dir, 0x0);
        replace_file(dir, which, "", 0, 0, path, sizeof path);
        expect_input_error(dir, path, "empty", NULL);
        test_remove_dir(dir);
    }
}

Test(data, image_and_label_counts_must_match)
{
    char dir[64], path[512];
    uint8_t labels[TE_N + 1] = {0};
    const uint32_t dims[1] = {TE_N + 1};
    write_set(dir, sizeof dir, 0x0);
    write_crafted(dir, 3, 0x801, dims, 1, labels, sizeof labels, path, sizeof path);
    char images[512];
    snprintf(images, sizeof images, "%s/%s", dir, BASES[2]);
    expect_input_error(dir, path, images, "10 images but");
    test_remove_dir(dir);
}

Test(data, train_and_test_shapes_must_match)
{
    char dir[64], path[512];
    uint8_t body[TE_N * COLS * ROWS] = {0};
    const uint32_t dims[3] = {TE_N, COLS, ROWS};   /* 3x4 instead of 4x3 */
    write_set(dir, sizeof dir, 0x0);
    write_crafted(dir, 2, 0x803, dims, 3, body, sizeof body, path, sizeof path);
    expect_input_error(dir, path, "3x4", "4x3");
    test_remove_dir(dir);
}

Test(data, a_test_label_beyond_the_training_labels_is_rejected)
{
    char dir[64], path[512];
    uint8_t labels[TE_N] = {0, 1, 2, 3, 4, 200, 0, 1, 2, 3};
    const uint32_t dims[1] = {TE_N};
    write_set(dir, sizeof dir, 0x0);
    write_crafted(dir, 3, 0x801, dims, 1, labels, sizeof labels, path, sizeof path);
    expect_input_error(dir, path, "label 200 at item 5", "up to 4");
    test_remove_dir(dir);
}

/* A training label of 200 makes 201 classes as far as the files go; a model
 * with 10 outputs must be told, naming the labels file and the item. */
Test(data, a_label_beyond_the_models_outputs_is_rejected)
{
    char dir[64], path[512];
    uint8_t labels[TR_N];
    for (int i = 0; i < TR_N; i++) labels[i] = (uint8_t)(i % 10);
    labels[13] = 200;
    const uint32_t dims[1] = {TR_N};
    write_set(dir, sizeof dir, 0x0);
    write_crafted(dir, 1, 0x801, dims, 1, labels, sizeof labels, path, sizeof path);
    struct data d = load_ok(dir, 1);
    cr_assert_eq(d.train.n_classes, 201);
    struct err e = {0};
    cr_assert_eq(data_check_model(&d, ROWS * COLS, 10, &e), ERR_INPUT);
    cr_log_info("%s", e.msg);
    cr_assert_not_null(strstr(e.msg, path), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "label 200 at item 13"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "10 outputs"), "%s", e.msg);
    cr_assert_eq(data_check_model(&d, ROWS * COLS, 201, &e), 0, "%s", e.msg);
    /* The inputs must match too. */
    cr_assert_eq(data_check_model(&d, 784, 201, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "12 features"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "784 inputs"), "%s", e.msg);
    data_release(&d);
    test_remove_dir(dir);
}

Test(data, corrupt_gzip_files_are_rejected)
{
    for (int which = 0; which < 4; which += 3) {
        char dir[64], path[512];
        size_t n;
        char *bytes = set_with_file(dir, sizeof dir, 0xf, which, path, sizeof path, &n);
        cr_assert_gt(n, 24);
        /* Damaged deflate data: zlib detects it (bad block or CRC). */
        char *bad = malloc(n);
        cr_assert_not_null(bad);
        memcpy(bad, bytes, n);
        for (size_t i = 12; i < n - 8; i++) bad[i] ^= 0x5a;
        replace_file(dir, which, bad, n, 2, path, sizeof path);
        expect_input_error(dir, path, "gzip", NULL);
        /* Only the CRC damaged: the data inflates but does not check. */
        memcpy(bad, bytes, n);
        bad[n - 8] ^= 0x01;
        replace_file(dir, which, bad, n, 2, path, sizeof path);
        expect_input_error(dir, path, "gzip", NULL);
        /* The gzip stream cut short. */
        replace_file(dir, which, bytes, n / 2, 2, path, sizeof path);
        expect_input_error(dir, path, NULL, NULL);
        /* Only the gzip header. */
        replace_file(dir, which, bytes, 10, 2, path, sizeof path);
        expect_input_error(dir, path, NULL, NULL);
        free(bad);
        free(bytes);
        test_remove_dir(dir);
    }
}

/* Every prefix of a valid gzip'd file, and every single-byte change of a
 * plain one, must give 0 or ERR_INPUT (never a crash; sanitizers watch). */
Test(data, no_prefix_or_byte_flip_crashes_the_loader)
{
    char dir[64], path[512];
    size_t n;
    char *plain = set_with_file(dir, sizeof dir, 0x0, 2, path, sizeof path, &n);
    int rejected = 0, accepted = 0;
    for (size_t i = 0; i < n; i++)
        for (int bit = 0; bit < 8; bit += 3) {
            plain[i] ^= (char)(1 << bit);
            replace_file(dir, 2, plain, n, 0, path, sizeof path);
            plain[i] ^= (char)(1 << bit);
            struct data d;
            struct err e = {0};
            int rc = data_load(dir, 1, &d, &e);
            cr_assert(rc == 0 || rc == ERR_INPUT, "byte %zu bit %d: rc %d %s", i, bit, rc, e.msg);
            rc == 0 ? accepted++ : rejected++;
            if (rc == 0) cr_assert(i >= 16, "a changed header byte %zu was accepted", i);
            data_release(&d);
        }
    cr_log_info("byte flips: %d rejected (header), %d accepted (pixels)", rejected, accepted);
    replace_file(dir, 2, plain, n, 1, path, sizeof path);
    char *gz = test_slurp_n(path, &n);
    for (size_t cut = 0; cut < n; cut++) {
        replace_file(dir, 2, gz, cut, 2, path, sizeof path);
        struct data d;
        struct err e = {0};
        cr_assert_eq(data_load(dir, 1, &d, &e), ERR_INPUT, "prefix %zu of %zu accepted", cut, n);
        cr_assert_not_null(strstr(e.msg, path), "%s", e.msg);
    }
    free(gz);
    free(plain);
    test_remove_dir(dir);
}

/* ---- the synthetic set ---------------------------------------------------- */

Test(data, synthetic_has_its_documented_sizes)
{
    struct data d = load_ok("synthetic", 42);
    cr_assert_eq(d.train.n, 12000);
    cr_assert_eq(d.test.n, 2000);
    cr_assert_eq(d.train.rows, 28);
    cr_assert_eq(d.train.cols, 28);
    cr_assert_eq(d.test.n_classes, 10);
    cr_assert_not_null(strstr(d.train.source, "synthetic (seed 42)"), "%s", d.train.source);
    int64_t hist[10] = {0};
    for (int64_t i = 0; i < d.test.n; i++) hist[d.test.y[i]]++;
    for (int c = 0; c < 10; c++) cr_assert_eq(hist[c], 200);
    for (int64_t i = 0; i < d.train.n * 784; i++)
        cr_assert(d.train.x[i] >= 0 && d.train.x[i] <= 1, "pixel %ld = %f", (long)i, d.train.x[i]);
    struct err e = {0};
    cr_assert_eq(data_check_model(&d, 784, 10, &e), 0, "%s", e.msg);
    data_release(&d);
}

Test(data, synthetic_is_deterministic_for_a_seed_and_differs_across_seeds)
{
    struct data a = load_ok("synthetic", 7), b = load_ok("synthetic", 7);
    struct data c = load_ok("synthetic", 8);
    size_t bytes = (size_t)a.train.n * 784 * sizeof(float);
    cr_assert_arr_eq(a.train.x, b.train.x, bytes);
    cr_assert_arr_eq(a.test.x, b.test.x, (size_t)a.test.n * 784 * sizeof(float));
    cr_assert_arr_eq(a.train.y, b.train.y, (size_t)a.train.n);
    int64_t same = 0;
    for (int64_t i = 0; i < a.train.n * 784; i++) same += a.train.x[i] == c.train.x[i];
    /* Only clamped pixels (exactly 0 or 1 in both) may agree by chance. */
    cr_assert_lt(same, a.train.n * 784 / 10, "%ld of the pixels equal across seeds", (long)same);
    /* Train and test are different draws. */
    cr_assert(memcmp(a.train.x, a.test.x, (size_t)a.test.n * 784 * sizeof(float)) != 0);
    data_release(&a);
    data_release(&b);
    data_release(&c);
}

/* Learnable but not trivial: the nearest class mean of the training set (a
 * linear rule, no training) classifies most test samples, and its errors
 * fall mostly within the families that share a pattern (c and c + 5). */
Test(data, synthetic_is_learnable_but_not_trivial)
{
    struct data d = load_ok("synthetic", 3);
    static double mean[10][784];
    int64_t count[10] = {0};
    for (int64_t i = 0; i < d.train.n; i++) {
        count[d.train.y[i]]++;
        for (int j = 0; j < 784; j++) mean[d.train.y[i]][j] += d.train.x[i * 784 + j];
    }
    for (int c = 0; c < 10; c++)
        for (int j = 0; j < 784; j++) mean[c][j] /= (double)count[c];
    int correct = 0, sibling_errors = 0;
    for (int64_t i = 0; i < d.test.n; i++) {
        int best = 0;
        double best_dist = 1e300;
        for (int c = 0; c < 10; c++) {
            double dist = 0;
            for (int j = 0; j < 784; j++) {
                double diff = d.test.x[i * 784 + j] - mean[c][j];
                dist += diff * diff;
            }
            if (dist < best_dist) best_dist = dist, best = c;
        }
        correct += best == d.test.y[i];
        sibling_errors += best != d.test.y[i] && best % 5 == d.test.y[i] % 5;
    }
    double accuracy = (double)correct / (double)d.test.n;
    cr_log_info("nearest class mean: test accuracy %.4f, %d of %ld errors between siblings",
                accuracy, sibling_errors, (long)(d.test.n - correct));
    cr_assert_gt(accuracy, 0.90);
    cr_assert_lt(accuracy, 1.0, "every test sample classified: the set is trivial");
    cr_assert_geq(2 * sibling_errors, (int)(d.test.n - correct));
    data_release(&d);
}

Test(data, unknown_specs_are_directories)
{
    expect_input_error("synthetic-ish", "--data synthetic-ish", "No such file", NULL);
}

/* ---- the sampler ---------------------------------------------------------- */

static struct sampler sampler_ok(int64_t n, int64_t batch, uint64_t seed)
{
    struct sampler s;
    struct err e = {0};
    cr_assert_eq(sampler_init(&s, n, batch, seed, &e), 0, "%s", e.msg);
    return s;
}

/* Indices of one (step, w, W, m, M), checked to be as many as the split says. */
static int64_t indices_ok(struct sampler *s, int64_t step, int w, int W, int m, int M,
                          int64_t *idx)
{
    int64_t count = -1;
    struct err e = {0};
    cr_assert_eq(sampler_indices(s, step, w, W, m, M, idx, &count, &e), 0, "%s", e.msg);
    cr_assert_leq(count, sampler_max_count(s->batch, W, M));
    return count;
}

Test(sampler, steps_per_epoch_drop_the_tail)
{
    cr_assert_eq(sampler_steps_per_epoch(60000, 64), 937);   /* 60000 = 937 x 64 + 32 */
    cr_assert_eq(sampler_steps_per_epoch(60000, 256), 234);
    cr_assert_eq(sampler_steps_per_epoch(10, 10), 1);
    cr_assert_eq(sampler_steps_per_epoch(10, 1), 10);
    cr_assert_eq(sampler_steps_per_epoch(10, 11), 0);
    cr_assert_eq(sampler_steps_per_epoch(10, 0), 0);
    struct sampler s = sampler_ok(100, 30, 1);   /* 3 steps, 10 dropped */
    cr_assert_eq(sampler_epoch(&s, 2), 0);
    cr_assert_eq(sampler_epoch(&s, 3), 1);
    cr_assert_eq(sampler_epoch(&s, 9), 3);
    sampler_release(&s);
    sampler_release(&s);
}

Test(sampler, splits_are_as_even_as_possible_first_parts_larger)
{
    int64_t off, count;
    const int64_t want_count[3] = {4, 3, 3}, want_off[3] = {0, 4, 7};   /* 10 over 3 */
    for (int i = 0; i < 3; i++) {
        sampler_split(10, i, 3, &off, &count);
        cr_assert_eq(count, want_count[i]);
        cr_assert_eq(off, want_off[i]);
    }
    sampler_split(3, 3, 4, &off, &count);   /* 3 over 4: the last part is empty */
    cr_assert_eq(count, 0);
    cr_assert_eq(off, 3);
    cr_assert_eq(sampler_max_count(10, 3, 1), 4);
    cr_assert_eq(sampler_max_count(10, 3, 3), 2);   /* 4 over 3 microbatches: 2, 1, 1 */
    cr_assert_eq(sampler_max_count(256, 4, 4), 16);
    cr_assert_eq(sampler_max_count(3, 4, 2), 1);
}

/* For many (B, W, M), the workers' microbatches of a step, in order, are
 * exactly that step's slice of the permutation: the one-worker indices. */
Test(sampler, workers_and_microbatches_partition_each_step)
{
    const int64_t n = 103;
    const int64_t batches[] = {1, 7, 10, 32, 37, 103};
    const int shapes[][2] = {{1, 1}, {2, 1}, {1, 4}, {3, 2}, {4, 4}, {5, 3}, {8, 1}};
    int64_t whole[103], part[103], joined[103];
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
        int64_t B = batches[b];
        struct sampler s = sampler_ok(n, B, 2024);
        for (int64_t step = 0; step < 3 * sampler_steps_per_epoch(n, B); step += 1 + step / 3) {
            cr_assert_eq(indices_ok(&s, step, 0, 1, 0, 1, whole), B);
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
                int W = shapes[k][0], M = shapes[k][1];
                int64_t len = 0;
                for (int w = 0; w < W; w++) {
                    int64_t w_off, w_count;
                    sampler_split(B, w, W, &w_off, &w_count);
                    cr_assert_eq(w_count, B / W + (w < B % W), "B %ld W %d w %d", (long)B, W, w);
                    cr_assert_eq(w_off, len);
                    for (int m = 0; m < M; m++) {
                        int64_t c = indices_ok(&s, step, w, W, m, M, part);
                        cr_assert_eq(c, w_count / M + (m < w_count % M),
                                     "B %ld W %d M %d w %d m %d: %ld", (long)B, W, M, w, m,
                                     (long)c);
                        memcpy(joined + len, part, (size_t)c * sizeof *part);
                        len += c;
                    }
                }
                cr_assert_eq(len, B);
                cr_assert_arr_eq(joined, whole, (size_t)B * sizeof *whole,
                                 "B %ld W %d M %d step %ld", (long)B, W, M, (long)step);
            }
        }
        sampler_release(&s);
    }
}

/* The steps of an epoch take disjoint slices; with the tail that is dropped
 * they make up a permutation of 0..n-1. */
Test(sampler, an_epochs_steps_are_disjoint_and_drop_a_tail)
{
    const int64_t n = 100, B = 30;
    struct sampler s = sampler_ok(n, B, 5);
    int seen[100] = {0};
    int64_t buf[30];
    for (int64_t step = 3; step < 6; step++) {   /* epoch 1 */
        cr_assert_eq(indices_ok(&s, step, 0, 1, 0, 1, buf), B);
        for (int i = 0; i < B; i++) {
            cr_assert(buf[i] >= 0 && buf[i] < n);
            cr_assert_eq(seen[buf[i]]++, 0, "sample %ld twice in an epoch", (long)buf[i]);
        }
    }
    int unseen = 0;
    for (int i = 0; i < n; i++) unseen += !seen[i];
    cr_assert_eq(unseen, n % B);
    sampler_release(&s);
}

/* With B = n a step is a whole epoch: each is a permutation, and no two of
 * 20 epochs are the same one. */
Test(sampler, every_epoch_is_reshuffled)
{
    enum { N = 50, EPOCHS = 20 };
    struct sampler s = sampler_ok(N, N, 11);
    static int64_t perm[EPOCHS][N];
    for (int ep = 0; ep < EPOCHS; ep++) {
        cr_assert_eq(indices_ok(&s, ep, 0, 1, 0, 1, perm[ep]), N);
        int seen[N] = {0};
        for (int i = 0; i < N; i++) seen[perm[ep][i]]++;
        for (int i = 0; i < N; i++) cr_assert_eq(seen[i], 1, "epoch %d", ep);
        for (int prev = 0; prev < ep; prev++)
            cr_assert(memcmp(perm[prev], perm[ep], sizeof perm[ep]) != 0, "epochs %d and %d", prev,
                      ep);
    }
    sampler_release(&s);
}

/* The indices are a pure function of the inputs: a second sampler asked in
 * another order, across epochs, answers the same; another seed does not. */
Test(sampler, the_same_inputs_give_the_same_indices)
{
    struct sampler a = sampler_ok(1000, 64, 99), b = sampler_ok(1000, 64, 99),
                   c = sampler_ok(1000, 64, 100);
    const int64_t steps[] = {0, 15, 16, 47, 3, 200, 16, 0};   /* 15 steps an epoch */
    int64_t x[64], y[64], z[64];
    int differ = 0;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        int64_t step = steps[i], rev = steps[sizeof steps / sizeof steps[0] - 1 - i];
        for (int w = 0; w < 3; w++) {
            int64_t k = indices_ok(&a, step, w, 3, 1, 2, x);
            indices_ok(&b, rev, w, 3, 1, 2, y);   /* b visits the steps backwards */
            int64_t k2 = indices_ok(&b, step, w, 3, 1, 2, y);
            indices_ok(&c, step, w, 3, 1, 2, z);
            cr_assert_eq(k, k2);
            cr_assert_arr_eq(x, y, (size_t)k * sizeof *x, "step %ld worker %d", (long)step, w);
            differ += memcmp(x, z, (size_t)k * sizeof *x) != 0;
        }
    }
    cr_assert_eq(differ, 3 * 8, "another seed gave the same indices %d times", 3 * 8 - differ);
    sampler_release(&a);
    sampler_release(&b);
    sampler_release(&c);
}

/* Fisher-Yates with unbiased draws puts each sample first equally often:
 * over 20,000 epochs of 10 samples, each count is 2,000 +- 4 sigma
 * (sigma = sqrt(20000 x 0.1 x 0.9) = 42). */
Test(sampler, shuffles_are_uniform)
{
    struct sampler s = sampler_ok(10, 10, 3);
    int first[10] = {0};
    int64_t idx[10];
    for (int ep = 0; ep < 20000; ep++) {
        indices_ok(&s, ep, 0, 1, 0, 1, idx);
        first[idx[0]]++;
    }
    int worst = 0;
    for (int i = 0; i < 10; i++)
        if (abs(first[i] - 2000) > worst) worst = abs(first[i] - 2000);
    cr_log_info("largest deviation from 2000 firsts: %d (tolerance 168)", worst);
    cr_assert_leq(worst, 168);
    sampler_release(&s);
}

Test(sampler, bad_arguments_are_input_errors)
{
    struct sampler s;
    struct err e = {0};
    cr_assert_eq(sampler_init(&s, 100, 101, 1, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "--batch 101"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "1 to 100"), "%s", e.msg);
    cr_assert_eq(sampler_init(&s, 100, 0, 1, &e), ERR_INPUT);
    cr_assert_null(s.perm);
    s = sampler_ok(100, 10, 1);
    int64_t idx[10], count = 5;
    cr_assert_eq(sampler_indices(&s, -1, 0, 1, 0, 1, idx, &count, &e), ERR_INPUT);
    cr_assert_eq(count, 0);
    cr_assert_eq(sampler_indices(&s, 0, 2, 2, 0, 1, idx, &count, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "worker 2 of 2"), "%s", e.msg);
    cr_assert_eq(sampler_indices(&s, 0, 0, 0, 0, 1, idx, &count, &e), ERR_INPUT);
    cr_assert_eq(sampler_indices(&s, 0, 0, 1, -1, 1, idx, &count, &e), ERR_INPUT);
    cr_assert_not_null(strstr(e.msg, "microbatch -1 of 1"), "%s", e.msg);
    cr_assert_eq(sampler_indices(&s, 0, 0, 1, 0, 0, idx, &count, &e), ERR_INPUT);
    sampler_release(&s);
    cr_assert_eq(sampler_indices(&s, 0, 0, 1, 0, 1, idx, &count, &e), ERR_INPUT);
}

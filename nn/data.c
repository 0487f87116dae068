/* Loading IDX files and the synthetic set; the sampler.
 *
 * IDX (http://yann.lecun.com/exdb/mnist/): a big-endian header, then the
 * array. Header: 0x00 0x00, element type (0x08 = unsigned byte), number of
 * dimensions D, then D 32-bit sizes. Images are D = 3 (n, rows, cols), labels
 * D = 1 (n). Files are read through zlib's gzread, which reads gzip'd and
 * plain files alike; the array is read in chunks as it arrives, so a header
 * that claims more than the file holds costs no more memory than the file. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "../core/vec.h"
#include "data.h"

#define READ_CHUNK_BYTES (1u << 20)
#define TRAILING_COUNT_LIMIT (16u << 20)   /* trailing bytes counted before "more than" */

static const char *const FILE_NAMES =
    "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and "
    "t10k-labels-idx1-ubyte (each plain or with .gz)";

/* ---- random numbers: splitmix64 (Steele, Lea, Flood 2014) ----------------- */

/* One stream: a 64-bit counter and a cached second normal of Box-Muller. */
struct rng {
    uint64_t state;
    int has_spare;
    double spare;
};

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A stream per (seed, purpose, index): the inputs are mixed before use, so
 * neighbouring seeds or epochs give unrelated streams. */
static struct rng rng_make(uint64_t seed, uint64_t purpose, uint64_t index)
{
    struct rng r = {0};
    r.state = mix64(mix64(seed ^ mix64(purpose)) + 0x9e3779b97f4a7c15ull * (index + 1));
    return r;
}

static uint64_t rng_next(struct rng *r)
{
    return mix64(r->state += 0x9e3779b97f4a7c15ull);
}

/* Uniform in [0, bound), bound >= 1, without modulo bias: draws below
 * 2^64 mod bound are rejected (fewer than one in 2^32 for bound < 2^32). */
static uint64_t rng_below(struct rng *r, uint64_t bound)
{
    uint64_t threshold = (0 - bound) % bound;   /* 2^64 mod bound */
    for (;;) {
        uint64_t x = rng_next(r);
        if (x >= threshold) return x % bound;
    }
}

/* Uniform in (0, 1]: 53 random bits. */
static double rng_unit(struct rng *r)
{
    return (double)((rng_next(r) >> 11) + 1) * 0x1p-53;
}

/* Standard normal, Box-Muller: two per pair of uniforms. */
static double rng_normal(struct rng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double radius = sqrt(-2.0 * log(rng_unit(r)));
    double angle = 6.283185307179586 * rng_unit(r);   /* 2 pi */
    r->spare = radius * sin(angle);
    r->has_spare = 1;
    return radius * cos(angle);
}

enum { STREAM_PROTOTYPES = 1, STREAM_TRAIN, STREAM_TEST, STREAM_EPOCH };

/* ---- IDX files ------------------------------------------------------------- */

/* What idx_read found: the sizes and the array's bytes. */
struct idx {
    int n_dims;
    uint32_t dims[3];
    uint8_t *body;        /* [body_bytes] */
    size_t body_bytes;
};

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* gzread of up to want bytes into buf, looping over short reads; the bytes
 * read, or ERR_INPUT when zlib reports damage (a corrupt or cut gzip stream). */
static int64_t read_some(gzFile gz, void *buf, size_t want, const char *path, struct err *e)
{
    size_t got = 0;
    while (got < want) {
        size_t ask = want - got < READ_CHUNK_BYTES ? want - got : READ_CHUNK_BYTES;
        int n = gzread(gz, (unsigned char *)buf + got, (unsigned)ask);
        int errnum = Z_OK;
        const char *why = gzerror(gz, &errnum);
        if (n < 0 || (errnum != Z_OK && errnum != Z_STREAM_END)) {
            size_t path_len = strlen(path);   /* zlib's message starts "path: " */
            if (strncmp(why, path, path_len) == 0 && strncmp(why + path_len, ": ", 2) == 0)
                why += path_len + 2;
            if (errnum == Z_ERRNO)
                return err_set(e, ERR_INPUT, "%s: cannot read: %s", path, strerror(errno));
            return err_set(e, ERR_INPUT,
                           "%s: the gzip data is corrupt or cut short (zlib: %s); "
                           "download the file again",
                           path, why);
        }
        if (n == 0) break;   /* end of file */
        got += (size_t)n;
    }
    return (int64_t)got;
}

/* Reads the IDX file at path, which must hold unsigned bytes in want_dims
 * dimensions (kind names them for messages: "images", "labels"). Checks the
 * magic number, that no size is 0, that the sizes' product does not overflow,
 * and that the data is exactly as long as the header says. */
static int idx_read(const char *path, int want_dims, const char *kind, struct idx *out,
                    struct err *e)
{
    memset(out, 0, sizeof *out);
    const uint32_t want_magic = 0x00000800u | (uint32_t)want_dims;
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        int saved = errno;
        return err_set(e, saved == ENOMEM ? ERR_NOMEM : ERR_INPUT, "%s: cannot open: %s", path,
                       saved ? strerror(saved) : "zlib could not open it");
    }
    int rc = 0;
    VEC(uint8_t) body = {0};
    unsigned char head[4 + 4 * 3];
    size_t head_bytes = 4 + 4 * (size_t)want_dims;

    int64_t got = read_some(gz, head, head_bytes, path, e);
    if (got < 0) { rc = (int)got; goto done; }
    if (got == 0) {
        rc = err_set(e, ERR_INPUT,
                     "%s: the file is empty; an IDX %s file (magic 0x%08" PRIx32 ") was "
                     "expected: download it again",
                     path, kind, want_magic);
        goto done;
    }
    if (got < 4) goto truncated_header;
    uint32_t magic = be32(head);
    if (magic != want_magic) {
        const char *what = head[0] || head[1] ? "this is not an IDX file"
                           : head[2] != 0x08  ? "its elements are not unsigned bytes (type 0x08)"
                                              : "it has the wrong number of dimensions";
        rc = err_set(e, ERR_INPUT,
                     "%s: bad magic number 0x%08" PRIx32 " (IDX %s need 0x%08" PRIx32 ", "
                     "%d dimension%s of unsigned bytes): %s; is it the right file?",
                     path, magic, kind, want_magic, want_dims, want_dims == 1 ? "" : "s", what);
        goto done;
    }
    if ((size_t)got < head_bytes) goto truncated_header;

    /* Sizes: each in 1..2^31-1; their product, the array's bytes, must fit
     * in a size_t and leave room for the floats the pixels become. */
    const uint64_t limit = SIZE_MAX / sizeof(float);
    uint64_t bytes = 1;
    out->n_dims = want_dims;
    for (int d = 0; d < want_dims; d++) {
        uint32_t size = be32(head + 4 + 4 * d);
        if (size == 0 || size > INT32_MAX) {
            rc = err_set(e, ERR_INPUT,
                         "%s: dimension %d of the header is %" PRIu32 " (1 to %d allowed); "
                         "the file is damaged: download it again",
                         path, d + 1, size, INT32_MAX);
            goto done;
        }
        if (bytes > limit / size) {
            rc = err_set(e, ERR_INPUT,
                         "%s: the header's sizes multiply to more than %" PRIu64 " bytes; "
                         "the file is damaged: download it again",
                         path, limit);
            goto done;
        }
        bytes *= size;
        out->dims[d] = size;
    }

    /* The array, in chunks as it arrives. */
    while (body.len < bytes) {
        size_t want = bytes - body.len < READ_CHUNK_BYTES ? bytes - body.len : READ_CHUNK_BYTES;
        if ((rc = vec_reserve(&body, body.len + want)) < 0) {
            err_set(e, rc, "%s: out of memory reading %" PRIu64 " bytes", path, bytes);
            goto done;
        }
        if ((got = read_some(gz, body.items + body.len, want, path, e)) < 0) {
            rc = (int)got;
            goto done;
        }
        body.len += (size_t)got;
        if ((size_t)got < want) break;
    }
    if (body.len < bytes) {
        rc = err_set(e, ERR_INPUT,
                     "%s: truncated: the header declares %" PRIu64 " bytes of %s data but the "
                     "file holds only %zu; download it again",
                     path, bytes, kind, body.len);
        goto done;
    }
    /* Nothing may follow: count what does, up to a limit. */
    unsigned char scratch[4096];
    uint64_t trailing = 0;
    while (trailing < TRAILING_COUNT_LIMIT) {
        if ((got = read_some(gz, scratch, sizeof scratch, path, e)) < 0) {
            rc = (int)got;
            goto done;
        }
        if (got == 0) break;
        trailing += (uint64_t)got;
    }
    if (trailing > 0) {
        rc = err_set(e, ERR_INPUT,
                     "%s: %s%" PRIu64 " bytes follow the %" PRIu64 " bytes of %s data its "
                     "header declares; the file is damaged or not what its header says",
                     path, trailing >= TRAILING_COUNT_LIMIT ? "at least " : "", trailing, bytes,
                     kind);
        goto done;
    }
    out->body = body.items;
    out->body_bytes = body.len;
    body.items = NULL;

done:;
    int close_rc = gzclose_r(gz);
    if (rc == 0 && close_rc != Z_OK) {
        rc = err_set(e, ERR_INPUT,
                     "%s: the gzip stream ends in the middle (zlib error %d); download the "
                     "file again",
                     path, close_rc);
    }
    vec_free(&body);
    if (rc < 0) {
        free(out->body);
        memset(out, 0, sizeof *out);
    }
    return rc;

truncated_header:
    rc = err_set(e, ERR_INPUT,
                 "%s: truncated: the file ends inside its IDX header (%" PRId64 " of %zu bytes); "
                 "download it again",
                 path, got, head_bytes);
    goto done;
}

/* dir/base when it is a file, else dir/base.gz when that is; 0, or ERR_INPUT
 * naming both and the files a data directory needs. */
static int find_file(const char *dir, const char *base, char *path, size_t path_bytes,
                     struct err *e)
{
    static const char *const suffixes[2] = {"", ".gz"};
    for (int i = 0; i < 2; i++) {
        int n = snprintf(path, path_bytes, "%s/%s%s", dir, base, suffixes[i]);
        if (n < 0 || (size_t)n >= path_bytes)
            return err_set(e, ERR_INPUT, "%s: the path is too long (over %zu bytes)", dir,
                           path_bytes - 1);
        struct stat st;
        if (stat(path, &st) == 0) {
            if (S_ISREG(st.st_mode)) return 0;
            return err_set(e, ERR_INPUT, "%s: not a regular file", path);
        }
    }
    return err_set(e, ERR_INPUT, "%s: neither %s nor %s.gz is there; a data directory holds %s",
                   dir, base, base, FILE_NAMES);
}

/* One split from its images and labels files in dir. */
static int load_split(const char *dir, const char *images_base, const char *labels_base,
                      struct dataset *out, struct err *e)
{
    struct idx images = {0}, labels = {0};
    int rc;
    if ((rc = find_file(dir, images_base, out->source, sizeof out->source, e)) < 0) goto fail;
    if ((rc = find_file(dir, labels_base, out->label_source, sizeof out->label_source, e)) < 0)
        goto fail;
    if ((rc = idx_read(out->source, 3, "images", &images, e)) < 0) goto fail;
    if ((rc = idx_read(out->label_source, 1, "labels", &labels, e)) < 0) goto fail;
    if (labels.dims[0] != images.dims[0]) {
        rc = err_set(e, ERR_INPUT,
                     "%s holds %" PRIu32 " images but %s holds %" PRIu32 " labels; the two "
                     "files must belong to the same set",
                     out->source, images.dims[0], out->label_source, labels.dims[0]);
        goto fail;
    }
    out->n = images.dims[0];
    out->rows = (int)images.dims[1];
    out->cols = (int)images.dims[2];
    if (!(out->x = XCALLOC(e, images.body_bytes, sizeof *out->x))) {
        rc = ERR_NOMEM;
        goto fail;
    }
    float scale[256];   /* byte -> [0,1], exactly byte/255 rounded once */
    for (int v = 0; v < 256; v++) scale[v] = (float)v / 255.0f;
    for (size_t i = 0; i < images.body_bytes; i++) out->x[i] = scale[images.body[i]];
    out->y = labels.body;   /* the label bytes are the labels */
    labels.body = NULL;
    int max_label = 0;
    for (int64_t i = 0; i < out->n; i++)
        if (out->y[i] > max_label) max_label = out->y[i];
    out->n_classes = max_label + 1;
    free(images.body);
    return 0;
fail:
    free(images.body);
    free(labels.body);
    free(out->x);
    out->x = NULL;
    return rc;
}

static void dataset_release(struct dataset *s)
{
    free(s->x);
    free(s->y);
    memset(s, 0, sizeof *s);
}

/* Both splits from dir; is_default changes what a missing directory says. */
static int load_dir(const char *dir, int is_default, struct data *out, struct err *e)
{
    struct stat st;
    int found = stat(dir, &st) == 0;
    if (!found || !S_ISDIR(st.st_mode)) {
        const char *why = found ? "not a directory" : strerror(errno);
        if (is_default)
            return err_set(e, ERR_INPUT,
                           "%s: %s: the Fashion-MNIST data set is not installed; install the "
                           "Debian package dataset-fashion-mnist (tools/setup does) or use "
                           "--data DIR / --data synthetic",
                           dir, why);
        return err_set(e, ERR_INPUT,
                       "--data %s: %s; give a directory that holds %s, or --data fashion-mnist "
                       "or --data synthetic",
                       dir, why, FILE_NAMES);
    }
    int rc;
    if ((rc = load_split(dir, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", &out->train,
                         e)) < 0)
        return rc;
    if ((rc = load_split(dir, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", &out->test,
                         e)) < 0)
        return rc;
    struct dataset *tr = &out->train, *te = &out->test;
    if (te->rows != tr->rows || te->cols != tr->cols)
        return err_set(e, ERR_INPUT,
                       "%s holds %dx%d images but %s holds %dx%d; training and test images "
                       "must have one shape",
                       te->source, te->rows, te->cols, tr->source, tr->rows, tr->cols);
    for (int64_t i = 0; i < te->n; i++)
        if (te->y[i] >= tr->n_classes)
            return err_set(e, ERR_INPUT,
                           "%s: label %d at item %" PRId64 ", but the training labels (%s) "
                           "go up to %d only; the files do not belong together",
                           te->label_source, te->y[i], i, tr->label_source, tr->n_classes - 1);
    te->n_classes = tr->n_classes;
    return 0;
}

/* ---- the synthetic set ------------------------------------------------------
 *
 * 10 classes of 28x28 "images", 12,000 training and 2,000 test samples, the
 * labels balanced (sample i has label i mod 10). Class c's prototype is
 *     p_c = 0.5 + A_FAMILY * g_(c mod 5) + A_OWN * u_c
 * with g and u random +-1 patterns: classes c and c+5 form a family that
 * shares g, so they differ only by the weaker u (as a shirt and a T-shirt do
 * in Fashion-MNIST). A sample is clamp(0.5 + k (p_c - 0.5) + NOISE z, 0, 1),
 * k ~ U(0.7, 1.3) a contrast per sample, z standard normal per pixel.
 * Sibling means differ by 2 A_OWN on about half the 784 pixels, a distance
 * sqrt(392) 2 A_OWN = 1.39 against per-pixel noise 0.25: the best rule still
 * errs on ~Phi(-1.39 / 0.5) = 0.3% of sibling pairs, and a learner must find
 * that direction among 784 noisy ones. Calibration (784-128-10 ReLU MLP, SGD
 * with momentum 0.9, lr 0.05, batch 64, seeds 1, 3, 7): 0.90-0.94 test
 * accuracy after one epoch, 0.96-0.98 after three. Everything comes from the
 * seed. */
enum { SYN_CLASSES = 10, SYN_FAMILIES = 5, SYN_SIDE = 28 };
enum { SYN_TRAIN = 12000, SYN_TEST = 2000 };
static const double SYN_A_FAMILY = 0.06, SYN_A_OWN = 0.035, SYN_NOISE = 0.25;
static const double SYN_CONTRAST_LO = 0.7, SYN_CONTRAST_HI = 1.3;

static int synth_split(const float *proto, int64_t n, uint64_t seed, uint64_t stream,
                       struct dataset *out, struct err *e)
{
    const int features = SYN_SIDE * SYN_SIDE;
    out->n = n;
    out->rows = out->cols = SYN_SIDE;
    out->n_classes = SYN_CLASSES;
    snprintf(out->source, sizeof out->source, "synthetic (seed %" PRIu64 ")", seed);
    memcpy(out->label_source, out->source, sizeof out->source);
    if (!(out->x = XCALLOC(e, (size_t)n * features, sizeof *out->x))) return ERR_NOMEM;
    if (!(out->y = XCALLOC(e, (size_t)n, sizeof *out->y))) return ERR_NOMEM;
    struct rng r = rng_make(seed, stream, 0);
    for (int64_t i = 0; i < n; i++) {
        int c = (int)(i % SYN_CLASSES);
        out->y[i] = (uint8_t)c;
        double k = SYN_CONTRAST_LO + (SYN_CONTRAST_HI - SYN_CONTRAST_LO) * rng_unit(&r);
        const float *p = proto + (size_t)c * features;
        float *x = out->x + (size_t)i * features;
        for (int j = 0; j < features; j++) {
            double v = 0.5 + k * (p[j] - 0.5) + SYN_NOISE * rng_normal(&r);
            x[j] = (float)(v < 0 ? 0 : v > 1 ? 1 : v);
        }
    }
    return 0;
}

static int load_synthetic(uint64_t seed, struct data *out, struct err *e)
{
    const int features = SYN_SIDE * SYN_SIDE;
    float *proto = XCALLOC(e, (size_t)SYN_CLASSES * features, sizeof *proto);
    float *family = XCALLOC(e, (size_t)SYN_FAMILIES * features, sizeof *family);
    int rc = ERR_NOMEM;
    if (!proto || !family) goto done;
    struct rng r = rng_make(seed, STREAM_PROTOTYPES, 0);
    for (int i = 0; i < SYN_FAMILIES * features; i++)
        family[i] = (rng_next(&r) >> 63) ? 1.0f : -1.0f;
    for (int c = 0; c < SYN_CLASSES; c++)
        for (int j = 0; j < features; j++) {
            double own = (rng_next(&r) >> 63) ? 1.0 : -1.0;
            proto[c * features + j] =
                (float)(0.5 + SYN_A_FAMILY * family[(c % SYN_FAMILIES) * features + j] +
                        SYN_A_OWN * own);
        }
    if ((rc = synth_split(proto, SYN_TRAIN, seed, STREAM_TRAIN, &out->train, e)) < 0) goto done;
    rc = synth_split(proto, SYN_TEST, seed, STREAM_TEST, &out->test, e);
done:
    free(proto);
    free(family);
    return rc;
}

/* ---- the data set ------------------------------------------------------------ */

int data_load(const char *spec, uint64_t seed, struct data *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    int rc;
    if (!spec || !*spec || strcmp(spec, "fashion-mnist") == 0)
        rc = load_dir(DATA_DEFAULT_DIR, 1, out, e);
    else if (strcmp(spec, "synthetic") == 0)
        rc = load_synthetic(seed, out, e);
    else
        rc = load_dir(spec, 0, out, e);
    if (rc < 0) data_release(out);
    return rc;
}

void data_release(struct data *d)
{
    if (!d) return;
    dataset_release(&d->train);
    dataset_release(&d->test);
}

int64_t data_features(const struct dataset *s)
{
    return (int64_t)s->rows * s->cols;
}

int data_check_model(const struct data *d, int64_t n_inputs, int n_outputs, struct err *e)
{
    const struct dataset *tr = &d->train;
    if (data_features(tr) != n_inputs)
        return err_set(e, ERR_INPUT,
                       "%s: samples have %dx%d = %" PRId64 " features but the model takes %" PRId64
                       " inputs; make the model's first layer %" PRId64,
                       tr->source, tr->rows, tr->cols, data_features(tr), n_inputs,
                       data_features(tr));
    const struct dataset *splits[2] = {&d->train, &d->test};
    for (int s = 0; s < 2; s++)
        for (int64_t i = 0; i < splits[s]->n; i++)
            if (splits[s]->y[i] >= n_outputs)
                return err_set(e, ERR_INPUT,
                               "%s: label %d at item %" PRId64 ", but the model has %d outputs "
                               "(classes 0 to %d); make its last layer %d, or check the file",
                               splits[s]->label_source, splits[s]->y[i], i, n_outputs,
                               n_outputs - 1, tr->n_classes);
    return 0;
}

/* ---- the sampler ------------------------------------------------------------- */

int64_t sampler_steps_per_epoch(int64_t n, int64_t batch)
{
    return batch < 1 || batch > n ? 0 : n / batch;
}

int sampler_init(struct sampler *s, int64_t n, int64_t batch, uint64_t seed, struct err *e)
{
    memset(s, 0, sizeof *s);
    if (n < 1 || batch < 1 || batch > n)
        return err_set(e, ERR_INPUT,
                       "--batch %" PRId64 ": the training set has %" PRId64 " samples "
                       "(1 to %" PRId64 " allowed)",
                       batch, n, n);
    if ((uint64_t)n > SIZE_MAX / sizeof *s->perm)
        return err_set(e, ERR_NOMEM, "sampler: %" PRId64 " samples do not fit in memory", n);
    if (!(s->perm = XCALLOC(e, (size_t)n, sizeof *s->perm))) return ERR_NOMEM;
    s->n = n;
    s->batch = batch;
    s->seed = seed;
    s->epoch = -1;
    return 0;
}

void sampler_release(struct sampler *s)
{
    if (!s) return;
    free(s->perm);
    memset(s, 0, sizeof *s);
}

int64_t sampler_epoch(const struct sampler *s, int64_t step)
{
    int64_t steps = sampler_steps_per_epoch(s->n, s->batch);
    return steps ? step / steps : 0;
}

void sampler_split(int64_t total, int i, int parts, int64_t *offset, int64_t *count)
{
    int64_t q = total / parts, r = total % parts;
    *count = q + (i < r);
    *offset = i * q + (i < r ? i : r);
}

int64_t sampler_max_count(int64_t batch, int n_workers, int n_micro)
{
    int64_t per_worker = (batch + n_workers - 1) / n_workers;
    return (per_worker + n_micro - 1) / n_micro;
}

/* Fisher-Yates (Knuth's Algorithm P) over 0..n-1, from (seed, epoch) alone. */
static void shuffle_epoch(struct sampler *s, int64_t epoch)
{
    struct rng r = rng_make(s->seed, STREAM_EPOCH, (uint64_t)epoch);
    for (int64_t i = 0; i < s->n; i++) s->perm[i] = i;
    for (int64_t i = s->n - 1; i > 0; i--) {
        int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1);
        int64_t t = s->perm[i];
        s->perm[i] = s->perm[j];
        s->perm[j] = t;
    }
    s->epoch = epoch;
}

int sampler_indices(struct sampler *s, int64_t step, int w, int n_workers, int m, int n_micro,
                    int64_t *idx, int64_t *count, struct err *e)
{
    *count = 0;
    if (!s->perm) return err_set(e, ERR_INPUT, "sampler: not initialised (sampler_init)");
    if (step < 0) return err_set(e, ERR_INPUT, "sampler: step %" PRId64 " is negative", step);
    if (n_workers < 1 || w < 0 || w >= n_workers)
        return err_set(e, ERR_INPUT, "sampler: worker %d of %d is out of range (0 to %d)", w,
                       n_workers, n_workers - 1);
    if (n_micro < 1 || m < 0 || m >= n_micro)
        return err_set(e, ERR_INPUT, "sampler: microbatch %d of %d is out of range (0 to %d)", m,
                       n_micro, n_micro - 1);
    int64_t steps = sampler_steps_per_epoch(s->n, s->batch);
    int64_t epoch = step / steps;
    if (epoch != s->epoch) shuffle_epoch(s, epoch);
    int64_t w_off, w_count, m_off, m_count;
    sampler_split(s->batch, w, n_workers, &w_off, &w_count);
    sampler_split(w_count, m, n_micro, &m_off, &m_count);
    const int64_t *from = s->perm + (step % steps) * s->batch + w_off + m_off;
    memcpy(idx, from, (size_t)m_count * sizeof *idx);
    *count = m_count;
    return 0;
}

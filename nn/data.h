/* Training data: IDX files (the MNIST format, plain or gzip'd) or a seeded
 * synthetic set, and the sampler that gives each data-parallel worker and
 * microbatch its samples for a step.
 *
 *   struct data d;
 *   struct err e = {0};
 *   if (data_load("fashion-mnist", seed, &d, &e) < 0) ...;   // e.msg says why
 *   struct sampler s;
 *   if (sampler_init(&s, d.train.n, batch, seed, &e) < 0) ...;
 *   int64_t idx[...], k;                    // sampler_max_count(...) entries
 *   if (sampler_indices(&s, step, w, n_workers, m, n_micro, idx, &k, &e) < 0) ...;
 *   // rows d.train.x + idx[i] * data_features(&d.train), labels d.train.y[idx[i]]
 *   sampler_release(&s);
 *   data_release(&d);
 *
 * Data specs (--data):
 *   "" or "fashion-mnist"  the Debian package dataset-fashion-mnist, in
 *                          DATA_DEFAULT_DIR
 *   "synthetic"            made in memory from the seed: 10 classes of 28x28,
 *                          12,000 train / 2,000 test (see data.c)
 *   anything else          a directory holding the four MNIST file names,
 *                          each plain or with .gz (plain is read when both
 *                          exist); write "./synthetic" for a directory of
 *                          that name
 *
 * Every failure to load is ERR_INPUT (exit 2) with a message that names the
 * file, says what is wrong with it and what to do; ERR_NOMEM when memory runs
 * out. Nothing a file holds can crash the loader. */
#ifndef STRATA_NN_DATA_H
#define STRATA_NN_DATA_H

#include <stdint.h>

#include "../core/err.h"

#define DATA_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"
#define DATA_SOURCE_BYTES 512

/* One split (train or test). Labels lie in [0, n_classes). */
struct dataset {
    int64_t n;                             /* samples, > 0 */
    int rows, cols;                        /* image shape; a sample has rows*cols features */
    int n_classes;                         /* max training label + 1 (1..256), in both splits */
    float *x;                              /* [n][rows*cols] row-major, pixels byte/255 in [0,1] */
    uint8_t *y;                            /* [n] labels; test labels lie below n_classes too */
    char source[DATA_SOURCE_BYTES];        /* the images file read, or "synthetic (seed S)" */
    char label_source[DATA_SOURCE_BYTES];  /* the labels file read, or "synthetic (seed S)" */
};

/* A data set: its two splits, the same image shape in both. */
struct data {
    struct dataset train, test;
};

/* Loads spec (see above) into *out; 0, or ERR_INPUT / ERR_NOMEM with *out left empty. */
int data_load(const char *spec, uint64_t seed, struct data *out, struct err *e);

/* Frees what data_load made and zeroes *d; accepts NULL and a zeroed struct. */
void data_release(struct data *d);

/* Features per sample: rows * cols. */
int64_t data_features(const struct dataset *s);

/* Checks that a model with n_inputs inputs and n_outputs classes fits d: 0, or
 * ERR_INPUT naming the file and the first label (or shape) that does not fit. */
int data_check_model(const struct data *d, int64_t n_inputs, int n_outputs, struct err *e);

/* The sampler. Each epoch is a permutation of the n training samples, drawn
 * from (seed, epoch) alone by a splitmix64-driven Fisher-Yates shuffle, so
 * every epoch is reshuffled and every worker computes the same one without
 * communication. Step s of epoch s / steps_per_epoch takes the global batch of
 * B consecutive positions (s mod steps_per_epoch) * B ... + B of that
 * permutation. The tail of each epoch, n mod B samples, is dropped (PyTorch's
 * drop_last): every step has exactly B samples, and a different tail is
 * dropped each epoch. The batch is split over W workers as evenly as
 * possible, the first B mod W workers taking one more, in order; a worker's
 * part is split over its M microbatches the same way. The indices are thus a
 * pure function of (seed, step, w, W, m, M, B, n); the struct only caches the
 * current epoch's permutation, so it is not shared between threads, and a
 * query from another epoch costs an O(n) reshuffle (0.3 ms at n = 60,000):
 * workers that drift across an epoch boundary each keep their own sampler. */
struct sampler {
    int64_t n;        /* training samples */
    int64_t batch;    /* global batch B, 1..n */
    uint64_t seed;
    int64_t epoch;    /* the epoch whose permutation perm holds; -1 before the first */
    int64_t *perm;    /* [n] */
};

/* Prepares a sampler of n samples, global batch `batch`; 0, or ERR_INPUT when
 * batch is not in 1..n, ERR_NOMEM. */
int sampler_init(struct sampler *s, int64_t n, int64_t batch, uint64_t seed, struct err *e);

/* Frees the sampler's permutation and zeroes it; accepts NULL and a zeroed struct. */
void sampler_release(struct sampler *s);

/* Full batches in an epoch: floor(n / batch), the tail dropped; 0 unless 1 <= batch <= n. */
int64_t sampler_steps_per_epoch(int64_t n, int64_t batch);

/* Epoch of a step: step / sampler_steps_per_epoch (0 for an uninitialised sampler). */
int64_t sampler_epoch(const struct sampler *s, int64_t step);

/* Part i of `total` items split into `parts` >= 1, the first total mod parts
 * one larger: its *offset and *count. */
void sampler_split(int64_t total, int i, int parts, int64_t *offset, int64_t *count);

/* The most indices sampler_indices returns for any w, m: ceil(ceil(batch / W) / M); W, M >= 1. */
int64_t sampler_max_count(int64_t batch, int n_workers, int n_micro);

/* Writes the sample indices of worker w of n_workers, microbatch m of n_micro,
 * at step (>= 0) into idx (room for sampler_max_count) and their number into
 * *count (0 when B < W*M leaves this part empty); 0, or ERR_INPUT for an
 * argument out of range. */
int sampler_indices(struct sampler *s, int64_t step, int w, int n_workers, int m, int n_micro,
                    int64_t *idx, int64_t *count, struct err *e);

#endif

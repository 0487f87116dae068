/* A seeded mutation fuzzer's two halves: the mutator (bit flips, byte
 * changes, truncation, deletions, splices within one input and across two,
 * huge and special numbers, long lines, NUL bytes) and the corpus on disk
 * (tests/corpus/<parser>/: the seeds every run starts from, and every input
 * that ever failed, run as they are on each run).
 *
 * The same seed gives the same cases, so a failure is found again by
 * running again; the input that was running is also saved (fuzz_save_last)
 * so that a crash leaves it behind for the corpus. */
#ifndef STRATA_TESTS_FUZZ_MUTATE_H
#define STRATA_TESTS_FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

/* One input: bytes, not necessarily NUL-terminated (a NUL is kept after
 * them so text parsers may read it as a string). */
struct fuzz_input {
    char *bytes;     /* [len + 1], owned */
    size_t len;
    char name[256];  /* the corpus file, or "case N" */
};

struct fuzz_corpus {
    struct fuzz_input *items;
    size_t n;
};

/* Cases a parser's test runs: STRATA_FUZZ_CASES when set (a soak:
 * STRATA_FUZZ_CASES=100000), else `fallback`. */
size_t fuzz_cases(size_t fallback);

/* The run's seed: STRATA_FUZZ_SEED when set, else 1. */
uint64_t fuzz_seed(void);

/* Every regular file of STRATA_SOURCE_DIR/tests/corpus/<parser>, sorted by
 * name (so runs are the same whatever readdir's order). Fails the test
 * when the directory is missing or empty. */
struct fuzz_corpus fuzz_corpus_load(const char *parser);
void fuzz_corpus_free(struct fuzz_corpus *c);

/* Appends a copy of bytes[0..len) named name. */
void fuzz_corpus_add(struct fuzz_corpus *c, const char *bytes, size_t len, const char *name);

/* A mutant of one of c's inputs (1 to 4 mutations; a splice takes a second
 * input), drawn from *rng. The caller frees out->bytes. Mutants are kept
 * below FUZZ_MAX_BYTES. */
#define FUZZ_MAX_BYTES (1u << 20)
void fuzz_mutate(const struct fuzz_corpus *c, uint64_t *rng, struct fuzz_input *out);

/* Writes in to /tmp/strata-fuzz-last-<parser> before a case runs: a crash
 * leaves the input that caused it there (copy it into tests/corpus/<parser>/). */
void fuzz_save_last(const char *parser, const struct fuzz_input *in);
/* Removes that file once every case passed. */
void fuzz_clear_last(const char *parser);

/* Writes bytes[0..len) to path (created or truncated); fails the test when
 * it cannot. */
void fuzz_write_file(const char *path, const char *bytes, size_t len);

#endif

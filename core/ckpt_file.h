/* The checkpoint file: one rank's state at a step boundary of a real run,
 * in a small self-describing binary format. Pure bytes in memory, no MPI
 * and no files, so that a fuzzer can feed the reader anything
 * (real/checkpoint.c writes and reads the files).
 *
 * Layout, little-endian (the host order of every machine strata targets):
 *
 *   offset  bytes  field
 *   0       8      magic "STRATACK"
 *   8       4      uint32 format version, CKPT_VERSION
 *   12      4      uint32 0 (reserved)
 *   16      8      uint64 payload bytes P
 *   24      P      records, back to back, each:
 *                    uint32 tag (enum ckpt_tag), uint32 0 (reserved),
 *                    uint64 length L, then L bytes, zero-padded to a
 *                    multiple of 8 (so every record starts 8-aligned)
 *   24+P    4      uint32 CRC-32 (IEEE 802.3, the zlib/PNG one) of bytes 0 .. 24+P
 *
 * The file is exactly 28 + P bytes: anything shorter is truncated, anything
 * longer has trailing bytes. A CRC-32 catches every error burst of up to 32
 * bits, so any single damaged byte anywhere is caught, the header's
 * included. The records must tile the payload exactly, each tag at most
 * once; unknown tags are refused (a newer writer bumps the version).
 *
 * The CKPT_IDENT record is text, "key=value" lines, naming the run the file
 * belongs to (struct ckpt_ident); a resume compares it with its own run and
 * names the first field that differs. */
#ifndef STRATA_CKPT_FILE_H
#define STRATA_CKPT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "report.h"

#define CKPT_MAGIC "STRATACK"
#define CKPT_VERSION 2u          /* what this build writes */
#define CKPT_VERSION_OLDEST 1u   /* what it still reads: version 1 had no CKPT_CLOCK,
                                  * CKPT_LOSSES or CKPT_EVALS (a run resumed from one
                                  * has its curves from the resume point on) */
#define CKPT_HEADER_BYTES 24
#define CKPT_TRAILER_BYTES 4

/* ORDER CKPT_TAG: what a record holds. */
enum ckpt_tag {
    CKPT_IDENT = 1,   /* text: the run it belongs to (struct ckpt_ident) */
    CKPT_PARAMS,      /* float32[n_params]: the rank's whole parameter block */
    CKPT_MOMENTUM,    /* float32[n_params]: its momentum block */
    CKPT_RNG,         /* the rank's straggler stream: gsl_rng state bytes */
    CKPT_SAMPLER,     /* int64[3]: epoch, position in the epoch (steps), steps per epoch */
    CKPT_LINKS,       /* worker: int64 pairs (server rank, shard version last read) */
    CKPT_SERVER,      /* server: int64 version, round, n_workers, then last_applied[n_workers] */
    CKPT_CLOCK,       /* double[2]: the run's clock at the save (seconds of training since
                       * its step 0, as its report counts them), and CLOCK_MONOTONIC then */
    CKPT_LOSSES,      /* worker: its training losses so far, struct step_loss[] (32 bytes
                       * each: int64 step, double end_s on the run's clock, double
                       * loss_sum, int64 n_samples) */
    CKPT_EVALS,       /* rank 0: --eval-every's points taken and not yet evaluated:
                       * int64 n, int64 n_params, int64 step[n], double at_s[n] (the
                       * run's clock), float32 params[n * n_params] */
    CKPT_N_TAGS
};

/* What identifies a run: a checkpoint of another run is refused. */
struct ckpt_ident {
    char strategy[64];
    char model[256];
    char data[4096];
    int64_t workers, servers, batch, microbatches, seed;
    /* --chunks, --dp, --inflight as the strategy uses them: 1 for one that
     * does not read the option (and in files written before they were
     * recorded, whose strategies then could not have used them) */
    int64_t chunks, dp, inflight;
    double lr, momentum, weight_decay;
    int64_t n_params;
    int64_t rank, n_ranks;   /* the rank that wrote the file, of how many */
    int64_t step;            /* the next step to run: steps 0 .. step-1 are done */
};

/* CRC-32 (reflected polynomial 0xEDB88320) of n bytes, continuing from crc
 * (0 to start). */
uint32_t ckpt_crc32(uint32_t crc, const void *data, size_t n);

/* ---- writing ----------------------------------------------------------- */

/* A file built in memory: add records, then finish. */
struct ckpt_writer {
    unsigned char *buf;
    size_t len, cap;
    bool has[CKPT_N_TAGS];
    int failed;        /* ERR_NOMEM once an append could not grow buf */
};

void ckpt_writer_init(struct ckpt_writer *w);
/* Appends record tag (each tag once). ERR_NOMEM, or ERR_RUN for a repeated tag. */
int ckpt_writer_add(struct ckpt_writer *w, enum ckpt_tag tag, const void *data, size_t n,
                    struct err *e);
/* The same, the record's bytes being parts[0 .. n_parts) one after another
 * (a large record is never first copied whole). */
int ckpt_writer_add_parts(struct ckpt_writer *w, enum ckpt_tag tag, const void *const *parts,
                          const size_t *sizes, int n_parts, struct err *e);
int ckpt_writer_add_ident(struct ckpt_writer *w, const struct ckpt_ident *id, struct err *e);
/* The whole file in w->buf[0 .. w->len): header and CRC filled in. */
int ckpt_writer_finish(struct ckpt_writer *w, struct err *e);
void ckpt_writer_release(struct ckpt_writer *w);

/* ---- reading ----------------------------------------------------------- */

/* A checked file's records: pointers into the caller's buffer. */
struct ckpt_view {
    const unsigned char *data[CKPT_N_TAGS];   /* NULL: the record is absent */
    uint64_t len[CKPT_N_TAGS];
};

/* Checks n bytes as a checkpoint file (magic, version, size, CRC, records)
 * and points v at its records. ERR_INPUT "NAME: what is wrong" otherwise;
 * never reads outside buf. */
int ckpt_parse(const void *buf, size_t n, const char *name, struct ckpt_view *v, struct err *e);

/* Decodes a CKPT_IDENT record. ERR_INPUT naming `name` when it is missing or
 * malformed. */
int ckpt_ident_read(const struct ckpt_view *v, const char *name, struct ckpt_ident *id,
                    struct err *e);

/* Compares a file's identity with this run's: 0, or ERR_INPUT "NAME: written by
 * a run with --FIELD X; this run has Y" for the first field that differs.
 * The workers' count may be smaller in this run when may_shrink (a
 * data-parallel plan relaunched on fewer workers); rank, n_ranks and step
 * are not compared. */
int ckpt_ident_match(const struct ckpt_ident *file, const struct ckpt_ident *run, bool may_shrink,
                     const char *name, struct err *e);

/* ---- what a run carries across a resume ------------------------------ */

/* A CKPT_CLOCK record: 0 with its two times; 1 when the file has none
 * (format version 1); ERR_INPUT naming `name` when it is malformed. */
int ckpt_clock_read(const struct ckpt_view *v, const char *name, double *run_s,
                    double *monotonic_s, struct err *e);

/* A CKPT_LOSSES record, copied into *out (n entries, the caller frees;
 * NULL and 0 when absent). Each entry's step must lie in [0, before) and
 * its times, sums and counts be ones a run gives. */
int ckpt_losses_read(const struct ckpt_view *v, const char *name, int64_t before,
                     struct step_loss **out, size_t *n, struct err *e);

/* A CKPT_EVALS record: n points of n_params parameters, their steps
 * ascending in [1, before], their times finite. step and at_s are copies
 * (the caller frees them with ckpt_evals_release); params points into the
 * view's buffer, n * n_params floats, to be read with memcpy. n is 0 when
 * the record is absent. */
struct ckpt_evals {
    int64_t n;
    int64_t *step;
    double *at_s;
    const unsigned char *params;
};
int ckpt_evals_read(const struct ckpt_view *v, const char *name, int64_t n_params, int64_t before,
                    struct ckpt_evals *out, struct err *e);
void ckpt_evals_release(struct ckpt_evals *ev);

#endif

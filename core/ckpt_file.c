/* The checkpoint file format (core/ckpt_file.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_file.h"
#include "text_append.h"

/* ---- CRC-32 ------------------------------------------------------------- */

/* Bitwise, a byte at a time through a 256-entry table built on first use:
 * checkpoints are megabytes, written every many steps, so table speed
 * (about 1 GB/s) is plenty. The table is a pure function of the polynomial,
 * so building it twice (two threads) writes the same values. */
static uint32_t crc_table[256];
static int crc_table_ready;

static void crc_table_build(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    crc_table_ready = 1;
}

uint32_t ckpt_crc32(uint32_t crc, const void *data, size_t n)
{
    if (!crc_table_ready) crc_table_build();
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

/* ---- writing ------------------------------------------------------------ */

void ckpt_writer_init(struct ckpt_writer *w)
{
    memset(w, 0, sizeof *w);
}

void ckpt_writer_release(struct ckpt_writer *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

static int append(struct ckpt_writer *w, const void *data, size_t n, struct err *e)
{
    if (w->failed) return w->failed;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n) cap *= 2;
        unsigned char *grown = realloc(w->buf, cap);
        if (!grown) return w->failed = err_set(e, ERR_NOMEM, "out of memory for a checkpoint");
        w->buf = grown;
        w->cap = cap;
    }
    if (n) {
        if (data) memcpy(w->buf + w->len, data, n);
        else memset(w->buf + w->len, 0, n);
    }
    w->len += n;
    return 0;
}

int ckpt_writer_add_parts(struct ckpt_writer *w, enum ckpt_tag tag, const void *const *parts,
                          const size_t *sizes, int n_parts, struct err *e)
{
    if ((int)tag < 1 || tag >= CKPT_N_TAGS || w->has[tag])
        return err_set(e, ERR_RUN, "checkpoint: record %d written twice or unknown", (int)tag);
    /* the header's room, reserved by the first record */
    if (w->len == 0) TRY(append(w, NULL, CKPT_HEADER_BYTES, e));
    uint32_t head[2] = {(uint32_t)tag, 0};
    uint64_t len = 0;
    for (int k = 0; k < n_parts; k++) len += sizes[k];
    TRY(append(w, head, sizeof head, e));
    TRY(append(w, &len, sizeof len, e));
    for (int k = 0; k < n_parts; k++) TRY(append(w, parts[k], sizes[k], e));
    TRY(append(w, NULL, (size_t)((8 - len % 8) % 8), e));
    w->has[tag] = true;
    return 0;
}

int ckpt_writer_add(struct ckpt_writer *w, enum ckpt_tag tag, const void *data, size_t n,
                    struct err *e)
{
    return ckpt_writer_add_parts(w, tag, &data, &n, 1, e);
}

int ckpt_writer_add_ident(struct ckpt_writer *w, const struct ckpt_ident *id, struct err *e)
{
    char text[8192];
    int n = snprintf(text, sizeof text,
                     "strategy=%s\nmodel=%s\ndata=%s\nworkers=%" PRId64 "\nservers=%" PRId64
                     "\nbatch=%" PRId64 "\nmicrobatches=%" PRId64 "\nseed=%" PRId64
                     "\nchunks=%" PRId64 "\ndp=%" PRId64 "\ninflight=%" PRId64
                     "\nlr=%.17g\nmomentum=%.17g\nweight-decay=%.17g\nparams=%" PRId64
                     "\nrank=%" PRId64 "\nranks=%" PRId64 "\nstep=%" PRId64 "\n",
                     id->strategy, id->model, id->data, id->workers, id->servers, id->batch,
                     id->microbatches, id->seed, id->chunks, id->dp, id->inflight, id->lr,
                     id->momentum, id->weight_decay, id->n_params, id->rank, id->n_ranks,
                     id->step);
    if (n < 0 || (size_t)n >= sizeof text)
        return err_set(e, ERR_RUN, "checkpoint: the run's identity is too long to record");
    return ckpt_writer_add(w, CKPT_IDENT, text, (size_t)n, e);
}

int ckpt_writer_finish(struct ckpt_writer *w, struct err *e)
{
    if (w->len == 0) TRY(append(w, NULL, CKPT_HEADER_BYTES, e));
    if (w->failed) return w->failed;
    uint32_t version = CKPT_VERSION, reserved = 0;
    uint64_t payload = w->len - CKPT_HEADER_BYTES;
    memcpy(w->buf, CKPT_MAGIC, 8);
    memcpy(w->buf + 8, &version, 4);
    memcpy(w->buf + 12, &reserved, 4);
    memcpy(w->buf + 16, &payload, 8);
    uint32_t crc = ckpt_crc32(0, w->buf, w->len);
    return append(w, &crc, sizeof crc, e);
}

/* ---- reading ------------------------------------------------------------ */

int ckpt_parse(const void *buf, size_t n, const char *name, struct ckpt_view *v, struct err *e)
{
    memset(v, 0, sizeof *v);
    const unsigned char *b = buf;
    if (n < 8 || memcmp(b, CKPT_MAGIC, 8) != 0)
        return err_set(e, ERR_INPUT, "%s: not a strata checkpoint (no \"" CKPT_MAGIC
                       "\" magic at its start)", name);
    if (n < CKPT_HEADER_BYTES + CKPT_TRAILER_BYTES)
        return err_set(e, ERR_INPUT, "%s: truncated: %zu bytes, shorter than a checkpoint's "
                       "header", name, n);
    uint32_t version, reserved, crc_file;
    uint64_t payload;
    memcpy(&version, b + 8, 4);
    memcpy(&reserved, b + 12, 4);
    memcpy(&payload, b + 16, 8);
    if (version < CKPT_VERSION_OLDEST || version > CKPT_VERSION)
        return err_set(e, ERR_INPUT, "%s: checkpoint format version %" PRIu32 "; this strata "
                       "reads versions %u to %u", name, version, CKPT_VERSION_OLDEST,
                       CKPT_VERSION);
    uint64_t expected = payload + CKPT_HEADER_BYTES + CKPT_TRAILER_BYTES;
    if (payload > (uint64_t)n || expected != (uint64_t)n)
        return err_set(e, ERR_INPUT, "%s: %s: the header says %" PRIu64 " bytes, the file has "
                       "%zu", name, payload > (uint64_t)n || expected > (uint64_t)n
                       ? "truncated" : "trailing bytes", payload > (uint64_t)n ? payload : expected, n);
    memcpy(&crc_file, b + n - 4, 4);
    uint32_t crc = ckpt_crc32(0, b, n - 4);
    if (crc != crc_file)
        return err_set(e, ERR_INPUT, "%s: corrupt: CRC-32 0x%08" PRIx32 " of its contents, the "
                       "file says 0x%08" PRIx32, name, crc, crc_file);
    if (reserved != 0)
        return err_set(e, ERR_INPUT, "%s: reserved header field is %" PRIu32 ", not 0", name,
                       reserved);
    size_t at = CKPT_HEADER_BYTES, end = n - CKPT_TRAILER_BYTES;
    while (at < end) {
        if (end - at < 16)
            return err_set(e, ERR_INPUT, "%s: a record header at byte %zu runs past the "
                           "payload", name, at);
        uint32_t head[2];
        uint64_t len;
        memcpy(head, b + at, 8);
        memcpy(&len, b + at + 8, 8);
        at += 16;
        uint64_t padded = len + (8 - len % 8) % 8;
        if (len > end - at || padded > end - at)
            return err_set(e, ERR_INPUT, "%s: record %" PRIu32 " of %" PRIu64 " bytes runs past "
                           "the payload", name, head[0], len);
        if (head[0] < 1 || head[0] >= CKPT_N_TAGS || head[1] != 0)
            return err_set(e, ERR_INPUT, "%s: unknown record %" PRIu32 " at byte %zu", name,
                           head[0], at - 16);
        if (v->data[head[0]])
            return err_set(e, ERR_INPUT, "%s: record %" PRIu32 " appears twice", name, head[0]);
        v->data[head[0]] = b + at;
        v->len[head[0]] = len;
        at += (size_t)padded;
    }
    return 0;
}

/* The value of "key=" in text (NUL-terminated), up to its line's end, into
 * out (capacity n). */
static bool text_field(const char *text, const char *key, char *out, size_t n)
{
    size_t klen = strlen(key);
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        if (len > klen && !strncmp(line, key, klen) && line[klen] == '=') {
            size_t vlen = len - klen - 1;
            if (vlen >= n) return false;
            memcpy(out, line + klen + 1, vlen);
            out[vlen] = '\0';
            return true;
        }
        line = eol ? eol + 1 : NULL;
    }
    return false;
}

static bool int_field(const char *text, const char *key, int64_t *out)
{
    char s[64], *end;
    if (!text_field(text, key, s, sizeof s) || !s[0]) return false;
    long long x = strtoll(s, &end, 10);
    *out = (int64_t)x;
    return *end == '\0';
}

/* A field newer files record: absent, it is 1 (what the older writers'
 * strategies used); present, it must be a whole number. */
static bool int_field_or_1(const char *text, const char *key, int64_t *out)
{
    char s[64];
    if (!text_field(text, key, s, sizeof s)) {
        *out = 1;
        return true;
    }
    return int_field(text, key, out);
}

static bool real_field(const char *text, const char *key, double *out)
{
    char s[64], *end;
    if (!text_field(text, key, s, sizeof s) || !s[0]) return false;
    *out = strtod(s, &end);
    return *end == '\0';
}

int ckpt_ident_read(const struct ckpt_view *v, const char *name, struct ckpt_ident *id,
                    struct err *e)
{
    memset(id, 0, sizeof *id);
    if (!v->data[CKPT_IDENT])
        return err_set(e, ERR_INPUT, "%s: has no identity record", name);
    size_t n = (size_t)v->len[CKPT_IDENT];
    char *text = malloc(n + 1);
    if (!text) return err_set(e, ERR_NOMEM, "out of memory reading %s", name);
    memcpy(text, v->data[CKPT_IDENT], n);
    text[n] = '\0';
    bool ok = strlen(text) == n && text_field(text, "strategy", id->strategy, sizeof id->strategy) &&
              text_field(text, "model", id->model, sizeof id->model) &&
              text_field(text, "data", id->data, sizeof id->data) &&
              int_field(text, "workers", &id->workers) && int_field(text, "servers", &id->servers) &&
              int_field(text, "batch", &id->batch) &&
              int_field(text, "microbatches", &id->microbatches) &&
              int_field(text, "seed", &id->seed) && int_field_or_1(text, "chunks", &id->chunks) &&
              int_field_or_1(text, "dp", &id->dp) &&
              int_field_or_1(text, "inflight", &id->inflight) && real_field(text, "lr", &id->lr) &&
              real_field(text, "momentum", &id->momentum) &&
              real_field(text, "weight-decay", &id->weight_decay) &&
              int_field(text, "params", &id->n_params) && int_field(text, "rank", &id->rank) &&
              int_field(text, "ranks", &id->n_ranks) && int_field(text, "step", &id->step);
    free(text);
    if (!ok || id->step < 0 || id->n_params < 0 || id->rank < 0 || id->rank >= id->n_ranks)
        return err_set(e, ERR_INPUT, "%s: its identity record is malformed", name);
    return 0;
}

/* x as the fewest digits that read back as x: "0.1", not %.17g's
 * "0.10000000000000001" (which told a user that --lr 0.1 was not 0.1). */
static const char *shortest(char *buf, size_t n, double x)
{
    text_double_shortest(buf, n, x);
    return buf;
}

int ckpt_ident_match(const struct ckpt_ident *file, const struct ckpt_ident *run, bool may_shrink,
                     const char *name, struct err *e)
{
    char a[32], b[32];
#define TEXT(field, option)                                                                      \
    if (strcmp(file->field, run->field))                                                         \
        return err_set(e, ERR_INPUT, "%s: written by a run with --" option " %s; this run has %s", \
                       name, file->field, run->field);
#define NUM(field, option, fmt)                                                                  \
    if (file->field != run->field)                                                               \
        return err_set(e, ERR_INPUT, "%s: written by a run with --" option " %" fmt "; this run " \
                       "has %" fmt, name, file->field, run->field);
    TEXT(strategy, "strategy")
    TEXT(model, "model")
    NUM(n_params, "model (parameters)", PRId64)
    TEXT(data, "data")
    if (!(may_shrink ? run->workers <= file->workers : run->workers == file->workers))
        return err_set(e, ERR_INPUT, "%s: written by a run of %" PRId64 " workers; this run has "
                       "%" PRId64 "%s", name, file->workers, run->workers,
                       may_shrink ? " (a data-parallel run may resume on fewer, not more)"
                                  : " (only data-parallel plans resume on another count)");
    NUM(servers, "servers", PRId64)
    NUM(batch, "batch", PRId64)
    NUM(microbatches, "microbatches", PRId64)
    NUM(seed, "seed", PRId64)
    NUM(chunks, "chunks", PRId64)
    NUM(dp, "dp", PRId64)
    NUM(inflight, "inflight", PRId64)
#define REAL(field, option)                                                                      \
    if (file->field != run->field)                                                               \
        return err_set(e, ERR_INPUT, "%s: written by a run with --" option " %s; this run has %s", \
                       name, shortest(a, sizeof a, file->field), shortest(b, sizeof b, run->field));
    REAL(lr, "lr")
    REAL(momentum, "momentum")
    REAL(weight_decay, "weight-decay")
#undef TEXT
#undef NUM
#undef REAL
    return 0;
}

/* ---- what a run carries across a resume -------------------------------- */

_Static_assert(sizeof(struct step_loss) == 32, "CKPT_LOSSES holds struct step_loss as 32 bytes");

int ckpt_clock_read(const struct ckpt_view *v, const char *name, double *run_s,
                    double *monotonic_s, struct err *e)
{
    double t[2];
    if (!v->data[CKPT_CLOCK]) return 1;
    if (v->len[CKPT_CLOCK] != sizeof t)
        return err_set(e, ERR_INPUT, "%s: its clock record is %" PRIu64 " bytes, not %zu", name,
                       v->len[CKPT_CLOCK], sizeof t);
    memcpy(t, v->data[CKPT_CLOCK], sizeof t);
    if (!(t[0] >= 0 && t[0] < 1e15 && t[1] >= 0 && t[1] < 1e15))
        return err_set(e, ERR_INPUT, "%s: its clock record holds %g and %g s, not the times of a "
                       "run", name, t[0], t[1]);
    *run_s = t[0];
    *monotonic_s = t[1];
    return 0;
}

int ckpt_losses_read(const struct ckpt_view *v, const char *name, int64_t before,
                     struct step_loss **out, size_t *n, struct err *e)
{
    *out = NULL;
    *n = 0;
    if (!v->data[CKPT_LOSSES]) return 0;
    uint64_t len = v->len[CKPT_LOSSES];
    if (len % sizeof **out != 0)
        return err_set(e, ERR_INPUT, "%s: its losses record is %" PRIu64 " bytes, not a "
                       "multiple of %zu", name, len, sizeof **out);
    size_t count = (size_t)(len / sizeof **out);
    struct step_loss *all = XCALLOC(e, count + 1, sizeof *all);
    if (!all) return ERR_NOMEM;
    memcpy(all, v->data[CKPT_LOSSES], (size_t)len);
    for (size_t i = 0; i < count; i++) {
        const struct step_loss *l = &all[i];
        if (l->step < 0 || l->step >= before || !(l->end_s >= -1e15 && l->end_s < 1e15) ||
            !isfinite(l->loss_sum) || l->n_samples < 0) {
            err_set(e, ERR_INPUT, "%s: loss %zu (step %" PRId64 ", %g s, sum %g over %" PRId64
                    " samples) is not one a run before step %" PRId64 " gives", name, i, l->step,
                    l->end_s, l->loss_sum, l->n_samples, before);
            free(all);
            return ERR_INPUT;
        }
    }
    *out = all;
    *n = count;
    return 0;
}

void ckpt_evals_release(struct ckpt_evals *ev)
{
    free(ev->step);
    free(ev->at_s);
    memset(ev, 0, sizeof *ev);
}

int ckpt_evals_read(const struct ckpt_view *v, const char *name, int64_t n_params, int64_t before,
                    struct ckpt_evals *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    if (!v->data[CKPT_EVALS]) return 0;
    const unsigned char *d = v->data[CKPT_EVALS];
    uint64_t len = v->len[CKPT_EVALS];
    int64_t head[2];
    if (len < sizeof head)
        return err_set(e, ERR_INPUT, "%s: its evaluation points record is malformed", name);
    memcpy(head, d, sizeof head);
    /* n below 2^24 and n_params the model's: the product of the sizes
     * below cannot overflow 64 bits */
    if (head[0] < 0 || head[0] > (1 << 24) || head[1] != n_params || n_params <= 0 ||
        n_params > ((int64_t)1 << 36))
        return err_set(e, ERR_INPUT, "%s: its evaluation points record holds %" PRId64
                       " points of %" PRId64 " parameters; this model has %" PRId64, name,
                       head[0], head[1], n_params);
    uint64_t n = (uint64_t)head[0];
    if (len != sizeof head + n * (sizeof(int64_t) + sizeof(double) + (uint64_t)n_params * 4))
        return err_set(e, ERR_INPUT, "%s: its evaluation points record is %" PRIu64 " bytes, "
                       "not what %" PRIu64 " points take", name, len, n);
    out->step = XCALLOC(e, n + 1, sizeof *out->step);
    out->at_s = out->step ? XCALLOC(e, n + 1, sizeof *out->at_s) : NULL;
    if (!out->at_s) {
        ckpt_evals_release(out);
        return ERR_NOMEM;
    }
    memcpy(out->step, d + sizeof head, n * sizeof *out->step);
    memcpy(out->at_s, d + sizeof head + n * sizeof *out->step, n * sizeof *out->at_s);
    for (uint64_t i = 0; i < n; i++)
        if (out->step[i] < 1 || out->step[i] > before || (i > 0 && out->step[i] <= out->step[i - 1]) ||
            !(out->at_s[i] >= -1e15 && out->at_s[i] < 1e15)) {
            err_set(e, ERR_INPUT, "%s: evaluation point %" PRIu64 " (step %" PRId64 ", %g s) is "
                    "not one of a run before step %" PRId64 ", in order", name, i, out->step[i],
                    out->at_s[i], before);
            ckpt_evals_release(out);
            return ERR_INPUT;
        }
    out->n = (int64_t)n;
    out->params = d + sizeof head + n * (sizeof *out->step + sizeof *out->at_s);
    return 0;
}

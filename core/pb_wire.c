/* Protocol Buffers' wire format: see core/pb_wire.h. */
#include <stdlib.h>
#include <string.h>

#include "pb_wire.h"

/* A varint holds 7 bits a byte: 64 bits need at most 10 bytes. */
#define PB_MAX_VARINT_BYTES 10

void pb_buf_free(struct pb_buf *b)
{
    if (!b) return;
    free(b->data);
    *b = (struct pb_buf){0};
}

int pb_buf_status(const struct pb_buf *b, struct err *e)
{
    return b->is_failed ? err_set(e, ERR_NOMEM, "out of memory encoding a protobuf message") : 0;
}

static void put_raw(struct pb_buf *b, const void *data, size_t n)
{
    if (b->is_failed) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *grown = realloc(b->data, cap);
        if (!grown) {
            b->is_failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, data, n);
    b->len += n;
}

void pb_put_varint(struct pb_buf *b, uint64_t v)
{
    uint8_t bytes[PB_MAX_VARINT_BYTES];
    size_t n = 0;
    do {
        uint8_t low = v & 0x7f;
        v >>= 7;
        bytes[n++] = (uint8_t)(low | (v ? 0x80 : 0));
    } while (v);
    put_raw(b, bytes, n);
}

static void put_key(struct pb_buf *b, uint32_t field, enum pb_wire_type t)
{
    pb_put_varint(b, ((uint64_t)field << 3) | (uint64_t)t);
}

void pb_put_uint64(struct pb_buf *b, uint32_t field, uint64_t v)
{
    put_key(b, field, PB_VARINT);
    pb_put_varint(b, v);
}

void pb_put_int64(struct pb_buf *b, uint32_t field, int64_t v)
{
    pb_put_uint64(b, field, (uint64_t)v);
}

void pb_put_bool(struct pb_buf *b, uint32_t field, bool v)
{
    pb_put_uint64(b, field, v ? 1 : 0);
}

void pb_put_double(struct pb_buf *b, uint32_t field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t le[8];   /* fixed64 is little-endian whatever the host */
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)(bits >> (8 * i));
    put_key(b, field, PB_I64);
    put_raw(b, le, sizeof le);
}

void pb_put_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t n)
{
    put_key(b, field, PB_LEN);
    pb_put_varint(b, n);
    put_raw(b, data, n);
}

void pb_put_string(struct pb_buf *b, uint32_t field, const char *s)
{
    pb_put_bytes(b, field, s, strlen(s));
}

void pb_put_message(struct pb_buf *b, uint32_t field, const struct pb_buf *inner)
{
    if (inner->is_failed) b->is_failed = true;
    pb_put_bytes(b, field, inner->data, inner->len);
}

void pb_put_delimited(struct pb_buf *b, const struct pb_buf *msg)
{
    if (msg->is_failed) b->is_failed = true;
    pb_put_varint(b, msg->len);
    put_raw(b, msg->data, msg->len);
}

/* --- reading ------------------------------------------------------------------ */

static int read_varint(struct pb_reader *r, uint64_t *v, const char *what, struct err *e)
{
    size_t at = (size_t)(r->p - r->start);
    uint64_t out = 0;
    for (int i = 0; i < PB_MAX_VARINT_BYTES; i++) {
        if (r->p >= r->end)
            return err_set(e, ERR_INPUT, "%s: a varint at byte %zu runs past the end (truncated)",
                           what, at);
        uint8_t byte = *r->p++;
        /* the 10th byte holds bit 63 only */
        if (i == PB_MAX_VARINT_BYTES - 1 && byte > 1)
            return err_set(e, ERR_INPUT, "%s: the varint at byte %zu overflows 64 bits", what, at);
        out |= (uint64_t)(byte & 0x7f) << (7 * i);
        if (!(byte & 0x80)) {
            *v = out;
            return 0;
        }
    }
    return err_set(e, ERR_INPUT, "%s: the varint at byte %zu is longer than 10 bytes", what, at);
}

static int read_fixed(struct pb_reader *r, int n_bytes, uint64_t *v, const char *what,
                      struct err *e)
{
    if (r->end - r->p < n_bytes)
        return err_set(e, ERR_INPUT, "%s: a %d-byte field at byte %zu runs past the end", what,
                       n_bytes, (size_t)(r->p - r->start));
    uint64_t out = 0;
    for (int i = 0; i < n_bytes; i++) out |= (uint64_t)r->p[i] << (8 * i);
    r->p += n_bytes;
    *v = out;
    return 0;
}

static int read_len(struct pb_reader *r, const uint8_t **data, size_t *len, const char *what,
                    struct err *e)
{
    uint64_t n;
    TRY(read_varint(r, &n, what, e));
    if (n > (uint64_t)(r->end - r->p))
        return err_set(e, ERR_INPUT, "%s: a length of %llu bytes at byte %zu runs past the end "
                       "(%zu bytes left)", what, (unsigned long long)n,
                       (size_t)(r->p - r->start), (size_t)(r->end - r->p));
    *data = r->p;
    *len = (size_t)n;
    r->p += n;
    return 0;
}

int pb_next_field(struct pb_reader *r, struct pb_field *f, const char *what, struct err *e)
{
    if (r->p >= r->end) return 0;
    size_t at = (size_t)(r->p - r->start);
    uint64_t key;
    TRY(read_varint(r, &key, what, e));
    uint64_t number = key >> 3;
    if (number == 0 || number > 0x1fffffff)
        return err_set(e, ERR_INPUT, "%s: field number %llu at byte %zu is not allowed (1 to "
                       "2^29-1)", what, (unsigned long long)number, at);
    *f = (struct pb_field){.number = (uint32_t)number, .wire_type = (enum pb_wire_type)(key & 7)};
    switch (key & 7) {
    case PB_VARINT:
        return read_varint(r, &f->value, what, e) < 0 ? e->code : 1;
    case PB_I64:
        return read_fixed(r, 8, &f->value, what, e) < 0 ? e->code : 1;
    case PB_LEN:
        return read_len(r, &f->data, &f->len, what, e) < 0 ? e->code : 1;
    case PB_I32:
        return read_fixed(r, 4, &f->value, what, e) < 0 ? e->code : 1;
    default:
        return err_set(e, ERR_INPUT, "%s: wire type %u of field %llu at byte %zu is not read "
                       "(groups are deprecated; 6 and 7 do not exist)", what,
                       (unsigned)(key & 7), (unsigned long long)number, at);
    }
}

int pb_next_delimited(struct pb_reader *r, struct pb_reader *msg, const char *what,
                      struct err *e)
{
    if (r->p >= r->end) return 0;
    const uint8_t *data = NULL;
    size_t len = 0;
    TRY(read_len(r, &data, &len, what, e));
    *msg = pb_reader_of(data, len);
    return 1;
}

int pb_next_packed_varint(struct pb_reader *r, uint64_t *v, const char *what, struct err *e)
{
    if (r->p >= r->end) return 0;
    TRY(read_varint(r, v, what, e));
    return 1;
}

double pb_bits_to_double(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

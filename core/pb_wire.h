/* Protocol Buffers' wire format, the small part strata needs to write and
 * read Chakra execution traces (core/chakra.h): varints, 64-bit fields,
 * length-delimited fields, and streams of length-prefixed messages (what
 * protobuf's writeDelimitedTo writes, one message after another).
 * Encoding: https://protobuf.dev/programming-guides/encoding/.
 *
 * The writer appends to a growing buffer and remembers a failed allocation
 * (sticky, like the plan builders), so a message is built without a check
 * per field and checked once. The reader never reads past its end: every
 * malformed input (a varint longer than 10 bytes, a length past the end, a
 * deprecated group, an unknown wire type) is an ERR_INPUT naming the byte
 * offset. */
#ifndef STRATA_PB_WIRE_H
#define STRATA_PB_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum pb_wire_type { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* --- writing ------------------------------------------------------------------ */

struct pb_buf {
    uint8_t *data;
    size_t len, cap;
    bool is_failed;   /* an allocation failed: the contents are incomplete */
};

void pb_buf_free(struct pb_buf *b);
/* 0, or ERR_NOMEM when an append failed since the buffer was made. */
int pb_buf_status(const struct pb_buf *b, struct err *e);

void pb_put_varint(struct pb_buf *b, uint64_t v);
/* Fields: the key (number << 3 | wire type), then the value. */
void pb_put_uint64(struct pb_buf *b, uint32_t field, uint64_t v);
/* int32 and int64 alike: two's complement in 64 bits, so a negative value
 * takes 10 bytes (what protobuf does for int32 too). */
void pb_put_int64(struct pb_buf *b, uint32_t field, int64_t v);
void pb_put_bool(struct pb_buf *b, uint32_t field, bool v);
void pb_put_double(struct pb_buf *b, uint32_t field, double v);
void pb_put_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t n);
void pb_put_string(struct pb_buf *b, uint32_t field, const char *s);
/* A nested message (or packed repeated scalars): field, length, then
 * inner's bytes. */
void pb_put_message(struct pb_buf *b, uint32_t field, const struct pb_buf *inner);
/* One message of a delimited stream: its length as a varint, then it. */
void pb_put_delimited(struct pb_buf *b, const struct pb_buf *msg);

/* --- reading ------------------------------------------------------------------ */

struct pb_reader {
    const uint8_t *start, *p, *end;   /* start: for offsets in messages */
};

struct pb_field {
    uint32_t number;
    enum pb_wire_type wire_type;
    uint64_t value;         /* PB_VARINT; PB_I64 and PB_I32: the raw bits */
    const uint8_t *data;    /* PB_LEN: the bytes, len of them */
    size_t len;
};

static inline struct pb_reader pb_reader_of(const void *data, size_t n)
{
    const uint8_t *p = data;
    return (struct pb_reader){p, p, p + n};
}

/* The next field of a message: 1 and *f filled, 0 at the message's end, or
 * ERR_INPUT ("what" names the message in the error: "node 3"). */
int pb_next_field(struct pb_reader *r, struct pb_field *f, const char *what, struct err *e);

/* The next message of a delimited stream: 1 with *msg over its bytes, 0 at
 * the stream's end, or ERR_INPUT. */
int pb_next_delimited(struct pb_reader *r, struct pb_reader *msg, const char *what,
                      struct err *e);

/* The next varint of a packed repeated field's bytes: 1, 0 at the end, or
 * ERR_INPUT. */
int pb_next_packed_varint(struct pb_reader *r, uint64_t *v, const char *what, struct err *e);

/* A PB_I64 field's bits as a double. */
double pb_bits_to_double(uint64_t bits);

#endif

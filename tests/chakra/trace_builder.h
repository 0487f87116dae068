/* Hand-written Chakra traces for the tests, encoded with core/pb_wire: the
 * few nodes a test needs, with the attributes ASTRA-sim's feeder reads
 * (core/chakra.h), as another tool would write them (no strata_*). */
#ifndef STRATA_TESTS_CHAKRA_TRACE_BUILDER_H
#define STRATA_TESTS_CHAKRA_TRACE_BUILDER_H

#include <stdint.h>
#include <stdio.h>

#include "../../core/chakra.h"
#include "../../core/pb_wire.h"

/* A node: type, its dependencies (data_deps, up to 4; -1 ends), duration. */
struct tb_node {
    uint64_t id, type, duration_micros;
    int64_t deps[4];
    int64_t num_ops, comm_src, comm_dst, comm_tag, comm_size, comm_type;   /* -1: absent */
};

static inline void tb_attr_int(struct pb_buf *node, const char *name, uint32_t field, int64_t v)
{
    struct pb_buf a = {0};
    pb_put_string(&a, 1, name);
    pb_put_int64(&a, field, v);
    pb_put_message(node, 10, &a);
    pb_buf_free(&a);
}

/* Writes nodes[0..n) as path: metadata (version only), then each node. */
static inline void tb_write(const char *path, const struct tb_node *nodes, int n)
{
    struct pb_buf out = {0}, meta = {0};
    pb_put_string(&meta, 1, CHAKRA_VERSION);
    pb_put_delimited(&out, &meta);
    pb_buf_free(&meta);
    for (int i = 0; i < n; i++) {
        const struct tb_node *x = &nodes[i];
        struct pb_buf node = {0};
        pb_put_uint64(&node, 1, x->id);
        pb_put_string(&node, 2, "hand-written");
        pb_put_uint64(&node, 3, x->type);
        for (int k = 0; k < 4 && x->deps[k] >= 0; k++)   /* unpacked: both forms are legal */
            pb_put_uint64(&node, 5, (uint64_t)x->deps[k]);
        if (x->duration_micros) pb_put_uint64(&node, 7, x->duration_micros);
        if (x->num_ops >= 0) tb_attr_int(&node, "num_ops", 9, x->num_ops);
        if (x->comm_src >= 0) tb_attr_int(&node, "comm_src", 7, x->comm_src);
        if (x->comm_dst >= 0) tb_attr_int(&node, "comm_dst", 7, x->comm_dst);
        if (x->comm_tag >= 0) tb_attr_int(&node, "comm_tag", 7, x->comm_tag);
        if (x->comm_size >= 0) tb_attr_int(&node, "comm_size", 9, x->comm_size);
        if (x->comm_type >= 0) tb_attr_int(&node, "comm_type", 9, x->comm_type);
        pb_put_delimited(&out, &node);
        pb_buf_free(&node);
    }
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(out.data, 1, out.len, f), out.len);
    fclose(f);
    pb_buf_free(&out);
}

/* Initialisers: every optional field absent. */
#define TB_NONE .num_ops = -1, .comm_src = -1, .comm_dst = -1, .comm_tag = -1, \
                .comm_size = -1, .comm_type = -1
#define TB_DEPS(...) .deps = {__VA_ARGS__, -1}
#define TB_NO_DEPS .deps = {-1}

#endif

/* Chakra execution traces (MLCommons, github.com/mlcommons/chakra, the
 * schema schema/protobuf/et_def.proto, package ChakraProtoMsg; a copy lies
 * in tests/chakra/): the format ASTRA-sim reads and PyTorch's execution
 * traces convert to. A trace is one file per rank, NAME.RANK.et, each a
 * delimited stream (core/pb_wire.h): one GlobalMetadata, then one Node per
 * message. This header is the decoded form and the names the schema gives;
 * core/chakra_write.c writes a plan as traces, core/chakra_plan.c reads
 * traces into a plan. docs/chakra.md says which op becomes which node.
 *
 * Attribute names and the types ASTRA-sim's feeder reads them as
 * (src/feeder/et_feeder_node.cpp): num_ops int64, tensor_size uint64,
 * comm_type int64 (enum chakra_coll_type), comm_size int64, comm_src,
 * comm_dst and comm_tag int32, pg_name string. strata's own attributes, which
 * make a round trip exact, start with "strata_". */
#ifndef STRATA_CHAKRA_H
#define STRATA_CHAKRA_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "vec.h"

/* The schema's NodeType and CollectiveCommType values, each with the name
 * the schema gives it: X(NAME, value). The enums and the name tables
 * (chakra_decode.c) are made from these lists, so the two cannot drift. */
#define CHAKRA_NODE_TYPES(X)                                                        \
    X(INVALID_NODE, 0) X(METADATA_NODE, 1) X(MEM_LOAD_NODE, 2) X(MEM_STORE_NODE, 3) \
    X(COMP_NODE, 4) X(COMM_SEND_NODE, 5) X(COMM_RECV_NODE, 6) X(COMM_COLL_NODE, 7)
#define CHAKRA_COLL_TYPES(X)                                                        \
    X(ALL_REDUCE, 0) X(REDUCE, 1) X(ALL_GATHER, 2) X(GATHER, 3) X(SCATTER, 4)       \
    X(BROADCAST, 5) X(ALL_TO_ALL, 6) X(REDUCE_SCATTER, 7)                           \
    X(REDUCE_SCATTER_BLOCK, 8) X(BARRIER, 9)

#define CHAKRA_ENUM_VALUE_(name, value) CHAKRA_##name = value,
enum chakra_node_type { CHAKRA_NODE_TYPES(CHAKRA_ENUM_VALUE_) };
enum chakra_coll_type { CHAKRA_COLL_TYPES(CHAKRA_ENUM_VALUE_) };
#undef CHAKRA_ENUM_VALUE_

/* "COMP_NODE", "ALL_REDUCE": the schema's names; NULL for a value it lacks. */
const char *chakra_node_type_name(uint64_t type);
const char *chakra_coll_type_name(int64_t type);

/* The version strata writes in GlobalMetadata (the schema's, as Chakra's
 * converters write it). */
#define CHAKRA_VERSION "0.0.4"

/* An AttributeProto, its value folded into the few shapes strata reads:
 * every integer field (int32, int64, uint*, sint*, fixed*, sfixed*, bool) as
 * an int64; double and float as a double; string and bytes as a string;
 * the integer lists as a list. Other values (float and string lists) are
 * kept as CHAKRA_ATTR_OTHER: present, unread. */
enum chakra_attr_kind {
    CHAKRA_ATTR_OTHER,
    CHAKRA_ATTR_INT,
    CHAKRA_ATTR_DOUBLE,
    CHAKRA_ATTR_STRING,
    CHAKRA_ATTR_INT_LIST,
};

struct chakra_attr {
    char *name;
    enum chakra_attr_kind kind;
    int64_t i;
    double d;
    char *s;
    VEC(int64_t) list;
};

typedef VEC(struct chakra_attr) chakra_attrs;

struct chakra_node {
    uint64_t id;
    char *name;
    uint64_t type;             /* enum chakra_node_type, or a value the schema lacks */
    VEC(int64_t) ctrl_deps;    /* ids (uint64 in the schema) of nodes of the same file */
    VEC(int64_t) data_deps;
    uint64_t duration_micros;  /* 0: not given */
    chakra_attrs attrs;
};

/* One rank's file, decoded. */
struct chakra_file {
    char *version;
    chakra_attrs attrs;        /* GlobalMetadata's */
    VEC(struct chakra_node) nodes;
};

/* Decodes a whole .et file's bytes; `path` names it in errors. ERR_INPUT
 * for malformed bytes (naming the node and byte), ERR_NOMEM. *out is
 * released on failure. */
int chakra_decode(const void *data, size_t n, const char *path, struct chakra_file *out,
                  struct err *e);
void chakra_file_release(struct chakra_file *f);

/* The first attribute called name, or NULL. */
const struct chakra_attr *chakra_attr_find(const chakra_attrs *attrs, const char *name);
/* The integer value of the first attribute called name, or def when there
 * is none or it is not an integer. */
int64_t chakra_attr_int(const chakra_attrs *attrs, const char *name, int64_t def);

#endif

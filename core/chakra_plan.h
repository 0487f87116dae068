/* Chakra execution traces read into a plan (core/chakra.h): a directory of
 * NAME.RANK.et files, one per rank, becomes the plan of one step that every
 * executor and disturbance of strata runs. docs/chakra.md gives the mapping.
 * core/chakra_dir.c reads the directory and the metadata's scenario;
 * core/chakra_plan.c turns the nodes into ops.
 *
 * Traces strata wrote (core/chakra_write.h; their metadata says
 * strata_plan) come back as the very plan written, server policy, groups
 * and scenario options included. Other traces (PyTorch's, through
 * chakra_converter) are read node by node: each rank's nodes in dependency
 * order (ctrl_deps and data_deps), COMP nodes on the compute stream, sends,
 * receives and collectives on the communication stream; what strata cannot
 * model is left out and counted, the nodes after it waiting for what it
 * waited for. */
#ifndef STRATA_CHAKRA_PLAN_H
#define STRATA_CHAKRA_PLAN_H

#include <stdbool.h>

#include "chakra.h"
#include "config.h"
#include "err.h"
#include "plan.h"
#include "workload.h"

struct chakra_trace {
    char dir[CONFIG_PATH_BYTES];
    char name[256];              /* NAME of NAME.RANK.et */
    int n_files;
    struct chakra_file *files;   /* [n_files], file r is rank r */
    bool is_strata;              /* written by strata: its plan comes back exactly */
};

/* Nodes left out of a plan, counted by what they are: "MEM_LOAD_NODE",
 * "COMM_COLL_NODE ALL_TO_ALL", "node type 12". */
struct chakra_left_out {
    char what[64];
    long long count;
};
typedef VEC(struct chakra_left_out) chakra_left_outs;

/* Reads every NAME.RANK.et of dir (one NAME, ranks 0..N-1 each once).
 * ERR_INPUT naming the file for a missing or malformed one; release t
 * with chakra_trace_release whatever the result. */
int chakra_trace_read(const char *dir, struct chakra_trace *t, struct err *e);
void chakra_trace_release(struct chakra_trace *t);

/* DIR/NAME.RANK.et, the file of rank r, into buf: what an error about
 * that file (its metadata, its nodes) names. */
void chakra_trace_path(const struct chakra_trace *t, int r, char *buf, size_t n);

/* A strata trace's scenario options (--model, --devices, ...), set in cfg
 * as its config_set would. Nothing for other traces. */
int chakra_trace_options(const struct chakra_trace *t, struct config *cfg, struct err *e);

/* The strategy name that built a strata trace, or "chakra". */
const char *chakra_trace_strategy(const struct chakra_trace *t);

/* The workload of a trace strata did not write: one layer of no size
 * (the trace's ops carry their own FLOPs, bytes and times), spec "spec". */
int chakra_workload_placeholder(const char *spec, struct workload **out, struct err *e);

/* t's plan over wl (for a strata trace: the workload of its --model; else
 * chakra_workload_placeholder's); batch: samples a step, for traces that
 * do not say. Nodes left out are counted in *left_out (may be NULL),
 * sorted by name. The plan is checked (core/plan_check): a trace whose
 * sends, receives or collectives do not match is ERR_INPUT with the first
 * defect. */
int chakra_trace_plan(const struct chakra_trace *t, const struct workload *wl, int batch,
                      struct plan **out, chakra_left_outs *left_out, struct err *e);

#endif

/* How strategies cut one step: samples over workers or microbatches, whole
 * layers over stages or servers, and the option checks those cuts need.
 * Every message names the option, the value and what is allowed. */
#ifndef STRATA_PARTITION_H
#define STRATA_PARTITION_H

#include "../core/budget.h"
#include "../core/config.h"
#include "../core/err.h"
#include "../core/workload.h"

/* Share i of `total` items cut into `parts` as evenly as possible: the first
 * total % parts shares get one item more (10 over 3: 4, 3, 3). */
int partition_share(int total, int parts, int i);

/* Cuts layers [0, n_layers) with costs cost[] (>= 0) into n_parts
 * contiguous ranges of at least one layer each, minimising the largest
 * range's cost. Of the optimal cuts it returns the one whose earlier ranges
 * are longest (so the result is unique). Fills bounds[0 .. n_parts]:
 * range i is [bounds[i], bounds[i+1]). Needs 1 <= n_parts <= n_layers.
 * 0 or ERR_NOMEM. */
int partition_layers(const double *cost, int n_layers, int n_parts, int *bounds,
                     struct err *e);

/* partition_layers with each layer's forward + backward FLOPs per sample:
 * pipeline and model-parallel stages. */
int partition_stages(const struct workload *wl, int n_stages, int *bounds, struct err *e);

/* partition_layers with each layer's parameter count: server shards. */
int partition_shards(const struct workload *wl, int n_servers, int *bounds, struct err *e);

/* --devices and --batch as ints, within what a plan can hold. */
int partition_check_devices_batch(const struct config *c, int *n_devices, int *batch,
                                  struct err *e);

/* Data parallelism: every one of n_devices workers needs a sample of batch. */
int partition_check_data_parallel(int n_devices, int batch, struct err *e);

/* Layer parallelism: every one of n_stages stages needs a whole layer.
 * `what` names the strategy family in the message ("model parallelism"). */
int partition_check_stages(int n_stages, const struct workload *wl, const char *what,
                           struct err *e);

/* --microbatches as an int within 1 .. batch (and the plan's tag limit). */
int partition_check_microbatches(const struct config *c, int batch, int *n_microbatches,
                                 struct err *e);

/* --bucket-mb as a cap in bytes (>= 0; 0 = one bucket of everything). */
int partition_check_bucket_mb(const struct config *c, double *cap_bytes, struct err *e);

/* The first layer of the gradient bucket that ends at layer `hi`, of layers
 * [0, hi): buckets fill in backward order (from the last layer down) and
 * close once their gradient bytes reach cap_bytes; a layer larger than the
 * cap is a bucket alone. A cap of 0 makes one bucket of everything. */
int partition_bucket_lo(const struct workload *wl, int hi, double cap_bytes);

/* The same within a stage whose layers start at `floor`: never below it. */
int partition_bucket_lo_from(const struct workload *wl, int floor, int hi, double cap_bytes);

/* The gradient buckets of layers [floor, hi) under c's --bucket-mb (as
 * partition_bucket_lo_from cuts them): what a plan's op count bounds
 * take; hi - floor, a bucket a layer, when --bucket-mb is not allowed. */
int partition_n_buckets(const struct config *c, const struct workload *wl, int floor, int hi);

/* The plan_size (struct strategy) of a data-parallel plan over c's
 * --devices workers: per worker, ops_per_bucket ops for each bucket of the
 * whole model and other_ops more; on one device, its 3 ops (forward,
 * backward, update). */
void partition_bucketed_plan_size(const struct config *c, const struct workload *wl,
                                  double ops_per_bucket, double other_ops,
                                  struct budget_plan *out);

#endif

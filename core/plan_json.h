/* A plan as JSON, for `strata schedule --json` and for scripts:
 * { "strata_plan": 1, "strategy", "model", "workers", "servers", "batch",
 *   "microbatches", "policy", "policy_arg", "grad_slots" (when > 1), "groups": [[ranks]],
 *   "ranks": [ { "rank", "role": "worker"|"server", "shard": [lo,hi] (servers),
 *                "ops": [ { "index", "op", "stream", "lo", "hi", "mb", "samples",
 *                           "peer", "group", "lag", "tag", "bytes", "flops", "deps" } ] } ] }
 * Fields that do not apply to an op are left out. */
#ifndef STRATA_PLAN_JSON_H
#define STRATA_PLAN_JSON_H

#include <cjson/cJSON.h>

#include "plan.h"

#define PLAN_JSON_VERSION 1

/* The plan as a cJSON tree (caller deletes it), or NULL when out of memory. */
cJSON *plan_to_json(const struct plan *p);

/* "ACT@2/mb3": a tag for people. */
void plan_tag_format(uint32_t tag, char *buf, size_t n);

/* "compute" or "comm". */
const char *plan_stream_name(int stream);

#endif

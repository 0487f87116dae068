/* The event queue of the discrete-event simulator: a 4-ary min-heap ordered
 * by (time, insertion sequence), so events at equal times pop in the order
 * they were pushed and every run is deterministic. Events are small values
 * stored in the heap's array: no allocation per event once the array has
 * grown to the run's peak. */
#ifndef STRATA_DES_H
#define STRATA_DES_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/vec.h"

struct des_event {
    double time_s;
    uint64_t seq;     /* insertion order: the tie-break */
    int32_t kind;     /* what happens; the simulator's own enum */
    int32_t a;        /* e.g. a rank or a link */
    int64_t b;        /* e.g. an op index, a flow, a generation */
};

struct des {
    VEC(struct des_event) heap;
    uint64_t next_seq;
    uint64_t n_pushed;
};

void des_init(struct des *q);
void des_release(struct des *q);
/* 0, ERR_NOMEM, or ERR_RUN when time_s is NaN (a bug in whoever computed
 * it: the caller names the op in its message). */
int des_push(struct des *q, double time_s, int32_t kind, int32_t a, int64_t b);
/* Removes the earliest event into *out; false when empty. */
bool des_pop(struct des *q, struct des_event *out);
static inline bool des_empty(const struct des *q) { return q->heap.len == 0; }

#endif

/* The event queue of the discrete-event simulator: events pop in (time,
 * insertion sequence) order, so events at equal times pop in the order they
 * were pushed and every run is deterministic. Two kinds of store hold them:
 * a few FIFO lanes, each holding events pushed in that order already (each
 * no earlier than its lane's last), which is how a simulation in lock-step
 * pushes nearly all of its events, O(1) each; and a 4-ary min-heap for the
 * rest. A pop takes the earliest of the fronts. Events are small values
 * stored in arrays: no allocation per event once they have grown to the
 * run's peak. */
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

/* A FIFO lane: a ring of cap events (a power of 2, or 0). */
struct des_lane {
    struct des_event *ev;
    size_t head, len, cap;
};

enum { DES_LANES = 4 };

struct des {
    VEC(struct des_event) heap;
    struct des_lane lanes[DES_LANES];
    double back_s[DES_LANES];   /* each lane's last time; -INFINITY when empty */
    size_t n_in_lanes;
    int last_lane;            /* the lane the last push went to */
    int pop_lane;             /* the lane the last pop took from; -1: the heap */
    uint64_t next_seq;
    uint64_t n_pushed;
    uint64_t n_moves;         /* heap levels sifted through, for the scaling test */
};

void des_init(struct des *q);
void des_release(struct des *q);
/* 0, ERR_NOMEM, or ERR_RUN when time_s is NaN (a bug in whoever computed
 * it: the caller names the op in its message). */
int des_push(struct des *q, double time_s, int32_t kind, int32_t a, int64_t b);
/* Removes the earliest event into *out; false when empty. */
bool des_pop(struct des *q, struct des_event *out);
/* The event d places behind the front of the lane the last pop took from,
 * or NULL (the pop came from the heap, or the lane holds no more than d).
 * A hint for prefetching what a coming event will touch, not an order: a
 * lane's events pop in order, but other lanes' and the heap's may come
 * between them. */
static inline const struct des_event *des_ahead(const struct des *q, size_t d)
{
    if (q->pop_lane < 0) return NULL;
    const struct des_lane *l = &q->lanes[q->pop_lane];
    return d < l->len ? &l->ev[(l->head + d) & (l->cap - 1)] : NULL;
}

/* Room for n more pushes, so that none of them can fail for memory: 0 or
 * ERR_NOMEM. */
int des_reserve(struct des *q, size_t n);
/* Events pending. */
static inline size_t des_len(const struct des *q) { return q->heap.len + q->n_in_lanes; }
static inline bool des_empty(const struct des *q) { return des_len(q) == 0; }

#endif

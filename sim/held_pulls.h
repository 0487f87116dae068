/* The pulls a parameter server's policy holds back, keyed by the step (the
 * policy's round) each one ends, so that when the policy's bound moves
 * (ps_server_pull_bound) the pulls it frees are found without looking at
 * those it still holds: O(log h) per pull held (h held), whatever the
 * number of workers, instead of a pass over every held pull after every
 * push. Freed pulls come out in the order they were held, which is the
 * order the simulator answers them in (a pass over an arrival-ordered list
 * did the same). */
#ifndef STRATA_HELD_PULLS_H
#define STRATA_HELD_PULLS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/vec.h"

struct held_pull {
    int64_t round;   /* ready once the bound is above it */
    uint64_t seq;    /* holding order */
    int32_t g;       /* the PULL op */
};

struct held_pulls {
    VEC(struct held_pull) heap;   /* min-heap on (round, seq); freed ones parked past len */
    uint64_t next_seq;
};

/* Holds PULL g until the bound exceeds `round`. 0 or ERR_NOMEM. */
int held_pulls_add(struct held_pulls *h, int64_t round, int32_t g);

/* Frees every held pull whose round is below `bound`: *out points at them
 * in holding order, valid until the next held_pulls_add. Returns how many. */
size_t held_pulls_free_below(struct held_pulls *h, int64_t bound, const struct held_pull **out);

/* Forgets every held pull (a restart). */
static inline void held_pulls_clear(struct held_pulls *h) { h->heap.len = 0; }

void held_pulls_release(struct held_pulls *h);

#endif

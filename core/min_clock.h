/* The slowest of n clocks that only tick forward by one: what ssp's bound
 * asks of a parameter server ("has every live worker pushed step s - K?")
 * after every push, in O(1) rather than a scan of the workers.
 *
 * The live clocks are grouped by value into buckets kept in a list sorted
 * by value (the scheme of O(1) LFU caches): a tick moves a clock to the
 * next bucket, which is the one after its own or a new one inserted there;
 * the minimum is the first bucket. Removing a clock (a retired worker) takes
 * it out of its bucket. Every operation is O(1); the n buckets are made
 * once, so nothing allocates after min_clock_init. */
#ifndef STRATA_MIN_CLOCK_H
#define STRATA_MIN_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

struct min_clock_bucket {
    int64_t value;        /* the clocks in it read this */
    int32_t count;        /* live clocks in it; 0 = on the free list */
    int32_t prev, next;   /* neighbours by value (-1 none); next links the free list too */
};

struct min_clock {
    int n;                          /* clocks */
    int n_live;                     /* not removed */
    int32_t *bucket_of;             /* [n]: clock i's bucket; -1 once removed */
    struct min_clock_bucket *b;     /* [n]: at most one bucket per live clock */
    int32_t first;                  /* bucket of the smallest live value; -1 when none */
    int32_t free_first;             /* first unused bucket; -1 when none */
};

/* n >= 0 clocks, all live and reading 0. 0 or ERR_NOMEM. */
int min_clock_init(struct min_clock *c, int n, struct err *e);
void min_clock_release(struct min_clock *c);

/* Every clock live again and reading `value`. */
void min_clock_reset(struct min_clock *c, int64_t value);

/* Live clock i goes from its value v to v + 1. */
void min_clock_tick(struct min_clock *c, int i);

/* Clock i stops counting; removing it twice is a no-op. */
void min_clock_remove(struct min_clock *c, int i);

/* The smallest live clock's value; INT64_MAX when none is live. */
static inline int64_t min_clock_min(const struct min_clock *c)
{
    return c->first >= 0 ? c->b[c->first].value : INT64_MAX;
}

#endif

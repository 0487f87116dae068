/* The slowest of n clocks (see min_clock.h): buckets of equal values in a
 * list sorted by value.
 *
 * Invariants: every live clock is in exactly one bucket, whose value it
 * reads; the list holds the nonempty buckets in strictly increasing value;
 * the rest are on the free list. There are never more nonempty buckets than
 * live clocks, so n buckets always suffice: a tick that needs a new bucket
 * leaves its old one nonempty, and the tick's clock fills the new one. */
#include <stdlib.h>

#include "min_clock.h"

int min_clock_init(struct min_clock *c, int n, struct err *e)
{
    *c = (struct min_clock){.first = -1, .free_first = -1};
    if (n < 0) return err_set(e, ERR_INPUT, "min_clock: %d clocks (0 or more)", n);
    size_t size = n > 0 ? (size_t)n : 1;
    c->bucket_of = XCALLOC(e, size, sizeof *c->bucket_of);
    c->b = XCALLOC(e, size, sizeof *c->b);
    if (!c->bucket_of || !c->b) {
        min_clock_release(c);
        return ERR_NOMEM;
    }
    c->n = n;
    min_clock_reset(c, 0);
    return 0;
}

void min_clock_release(struct min_clock *c)
{
    if (!c) return;
    free(c->bucket_of);
    free(c->b);
    *c = (struct min_clock){.first = -1, .free_first = -1};
}

void min_clock_reset(struct min_clock *c, int64_t value)
{
    c->n_live = c->n;
    for (int i = 0; i < c->n; i++) {
        c->bucket_of[i] = 0;
        c->b[i] = (struct min_clock_bucket){.next = i + 1 < c->n ? i + 1 : -1};
    }
    if (c->n == 0) {
        c->first = c->free_first = -1;
        return;
    }
    /* bucket 0 holds every clock; 1 .. n - 1 are free */
    c->b[0] = (struct min_clock_bucket){value, c->n, -1, -1};
    c->first = 0;
    c->free_first = c->n > 1 ? 1 : -1;
}

/* Takes empty bucket k out of the sorted list and onto the free list. */
static void unlink_bucket(struct min_clock *c, int32_t k)
{
    struct min_clock_bucket *b = &c->b[k];
    if (b->prev >= 0) c->b[b->prev].next = b->next;
    else c->first = b->next;
    if (b->next >= 0) c->b[b->next].prev = b->prev;
    b->prev = -1;
    b->next = c->free_first;
    c->free_first = k;
}

void min_clock_tick(struct min_clock *c, int i)
{
    int32_t k = c->bucket_of[i];
    if (k < 0) return;   /* removed: it counts no more */
    struct min_clock_bucket *b = &c->b[k];
    int64_t v = b->value + 1;
    int32_t nx = b->next;
    if (nx >= 0 && c->b[nx].value == v) {
        /* the next bucket reads v + 1 already: join it */
        c->b[nx].count++;
        c->bucket_of[i] = nx;
        if (--b->count == 0) unlink_bucket(c, k);
    } else if (b->count == 1) {
        /* alone, and nothing reads v + 1: the bucket itself moves on */
        b->value = v;
    } else {
        /* a new bucket right after this one */
        int32_t f = c->free_first;
        c->free_first = c->b[f].next;
        c->b[f] = (struct min_clock_bucket){v, 1, k, nx};
        if (nx >= 0) c->b[nx].prev = f;
        b->next = f;
        b->count--;
        c->bucket_of[i] = f;
    }
}

void min_clock_remove(struct min_clock *c, int i)
{
    int32_t k = c->bucket_of[i];
    if (k < 0) return;
    c->bucket_of[i] = -1;
    c->n_live--;
    if (--c->b[k].count == 0) unlink_bucket(c, k);
}

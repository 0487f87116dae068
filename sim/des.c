/* The event queue: FIFO lanes for events that arrive in order, and a 4-ary
 * min-heap in one growable array for the others.
 *
 * A lane takes an event no earlier than its last one; the event's seq is
 * larger than every seq before it, so each lane stays in (time, seq) order
 * and its front is its earliest. A lock-step run (every rank ending an op
 * at t and starting the next, to end at t + d) pushes in time order. One
 * FIFO is not enough: a collective that ends after the wave of op ends it
 * overlaps sits at the FIFO's tail, and the whole next wave would go to the
 * heap (mirrored on 100,000 ranks: 4.8 sifts an event). So an event goes to
 * the lane of the last push when it can follow there, else to the lane
 * whose last event is the latest not after it (the greedy that keeps the
 * fewest lanes busy, as patience sorting does), else to the heap. With 100,000 ranks of mirrored the heap had held 100,000 events at
 * equal times, each pop walking its full depth (18% of the run under perf).
 *
 * Node i has children 4i+1 .. 4i+4. Four children instead of two halve the
 * depth a pop walks down, and the four are adjacent in memory (two cache
 * lines): with thousands of ranks' events pending at once, pops dominated
 * the run (47% of a 4,096-rank mirrored simulation under perf); with four
 * children that run went from 1.27 s to 1.17 s (build/sim_speed mirrored). Both sifts move a hole instead of swapping: the moving event
 * is held in a local and written once, where it lands. */
#include <math.h>
#include <stdlib.h>

#include "des.h"

/* Two events to a 64-byte cache line. */
_Static_assert(sizeof(struct des_event) == 32, "struct des_event grew");

/* Strict (time, seq) order. seq is unique, so no two events compare equal
 * and equal times pop in the order they were pushed. */
static inline bool before(const struct des_event *x, const struct des_event *y)
{
    return x->time_s < y->time_s || (x->time_s == y->time_s && x->seq < y->seq);
}

void des_init(struct des *q)
{
    q->heap.items = NULL;
    q->heap.len = q->heap.cap = 0;
    for (int k = 0; k < DES_LANES; k++) {
        q->lanes[k] = (struct des_lane){0};
        q->back_s[k] = -INFINITY;
    }
    q->n_in_lanes = 0;
    q->last_lane = 0;
    q->pop_lane = -1;
    q->next_seq = 0;
    q->n_pushed = 0;
    q->n_moves = 0;
}

void des_release(struct des *q)
{
    vec_free(&q->heap);
    for (int k = 0; k < DES_LANES; k++) free(q->lanes[k].ev);
    des_init(q);
}

/* Room in lane l's ring for `need` events: the ring grows to a power of 2
 * and is unwrapped into the new array. */
static int lane_reserve(struct des_lane *l, size_t need)
{
    if (need <= l->cap) return 0;
    size_t cap = l->cap ? l->cap : 64;
    while (cap < need) cap *= 2;
    struct des_event *f = malloc(cap * sizeof *f);
    if (!f) return ERR_NOMEM;
    for (size_t k = 0; k < l->len; k++) f[k] = l->ev[(l->head + k) & (l->cap - 1)];
    free(l->ev);
    l->ev = f;
    l->cap = cap;
    l->head = 0;
    return 0;
}

int des_reserve(struct des *q, size_t n)
{
    if (q->heap.len + n > q->heap.cap && vec_reserve(&q->heap, q->heap.len + n) < 0)
        return ERR_NOMEM;
    for (int k = 0; k < DES_LANES; k++) {
        struct des_lane *l = &q->lanes[k];
        if (l->len + n > l->cap && lane_reserve(l, l->len + n) < 0) return ERR_NOMEM;
    }
    return 0;
}

int des_push(struct des *q, double time_s, int32_t kind, int32_t a, int64_t b)
{
    /* A NaN compares false with everything and would break the heap order
     * silently; it can only come from a bug in whoever computed the time. */
    if (isnan(time_s)) return ERR_RUN;
    struct des_event ev = {.time_s = time_s, .seq = q->next_seq, .kind = kind, .a = a, .b = b};

    /* the lane the last push went to, when the event can follow there
     * (a wave of op ends: every push), else the lane whose last event is
     * the latest at or before time_s (an empty one only when none is) */
    int best = -1;
    if (q->back_s[q->last_lane] <= time_s) {
        best = q->last_lane;   /* an empty lane reads -INFINITY: it takes anything */
    } else {
        double best_s = -INFINITY;
        for (int k = 0; k < DES_LANES; k++)
            if (q->back_s[k] <= time_s && (best < 0 || q->back_s[k] > best_s)) {
                best = k;
                best_s = q->back_s[k];
            }
    }
    if (best >= 0) {
        struct des_lane *l = &q->lanes[best];
        if (l->len == l->cap && lane_reserve(l, l->len + 1) < 0) return ERR_NOMEM;
        q->last_lane = best;
        q->back_s[best] = time_s;
        l->ev[(l->head + l->len++) & (l->cap - 1)] = ev;
        q->n_in_lanes++;
        q->next_seq++;
        q->n_pushed++;
        return 0;
    }

    if (q->heap.len == q->heap.cap && vec_reserve(&q->heap, q->heap.len + 1) < 0)
        return ERR_NOMEM;
    q->next_seq++;
    q->n_pushed++;

    /* Sift up: move parents down into the hole until ev fits. */
    struct des_event *h = q->heap.items;
    size_t i = q->heap.len++;
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (!before(&ev, &h[parent])) break;
        h[i] = h[parent];
        i = parent;
        q->n_moves++;
    }
    h[i] = ev;
    return 0;
}

bool des_pop(struct des *q, struct des_event *out)
{
    size_t n = q->heap.len;
    struct des_event *h = q->heap.items;
    if (q->n_in_lanes > 0) {
        /* the earliest front of the lanes, then against the heap's top */
        struct des_lane *first = NULL;
        for (int k = 0; k < DES_LANES; k++) {
            struct des_lane *l = &q->lanes[k];
            if (l->len && (!first || before(&l->ev[l->head], &first->ev[first->head]))) first = l;
        }
        if (n == 0 || before(&first->ev[first->head], &h[0])) {
            *out = first->ev[first->head];
            first->head = (first->head + 1) & (first->cap - 1);
            if (--first->len == 0) q->back_s[first - q->lanes] = -INFINITY;
            q->n_in_lanes--;
            q->pop_lane = (int)(first - q->lanes);
            return true;
        }
    }
    if (n == 0) return false;
    q->pop_lane = -1;
    *out = h[0];
    n = --q->heap.len;
    if (n == 0) return true;

    /* The last event fills the hole left at the root: sift it down, moving
     * the earlier child up while that child is before it. */
    struct des_event last = h[n];
    size_t i = 0;
    for (;;) {
        size_t first = 4 * i + 1;
        if (first >= n) break;
        size_t end = first + 4 < n ? first + 4 : n;
        size_t c = first;
        for (size_t k = first + 1; k < end; k++)
            if (before(&h[k], &h[c])) c = k;
        if (!before(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
        q->n_moves++;
    }
    h[i] = last;
    return true;
}

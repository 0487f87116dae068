/* A binary min-heap over a plain array, made for one element type by
 * BINARY_HEAP(prefix, type, before): the network's per-link transfers and
 * the held pulls share this code, each with its own order. Functions are
 * generated rather than given a comparison pointer so that `before` is
 * inlined: these heaps sit on the simulator's hot path.
 *
 * Both sift with a hole (the moved element is written once, at the end), and
 * both return the levels moved, the work measure sim_speed reports.
 *
 *   prefix_push(a, &len, x): inserts x; room for one more must be reserved.
 *   prefix_pop_to_tail(a, &len): removes the earliest element and parks it
 *     in the slot just vacated, a[len] (the new len), still inside the
 *     array: a run of pops leaves the popped elements in a[len .. old len),
 *     latest-popped first. len must be above 0. */
#ifndef STRATA_SIM_BINARY_HEAP_H
#define STRATA_SIM_BINARY_HEAP_H

#include <stddef.h>

#define BINARY_HEAP(prefix, type, before)                                          \
    static inline size_t prefix##_push(type *a, size_t *len, type x)               \
    {                                                                              \
        size_t i = (*len)++, moved = 0;                                            \
        while (i > 0) {                                                            \
            size_t parent = (i - 1) / 2;                                           \
            if (!before(&x, &a[parent])) break;                                    \
            a[i] = a[parent];                                                      \
            i = parent;                                                            \
            moved++;                                                               \
        }                                                                          \
        a[i] = x;                                                                  \
        return moved;                                                              \
    }                                                                              \
                                                                                   \
    static inline size_t prefix##_pop_to_tail(type *a, size_t *len)                \
    {                                                                              \
        size_t n = --*len, i = 0, moved = 0;                                       \
        type top = a[0], last = a[n];                                              \
        for (;;) {                                                                 \
            size_t c = 2 * i + 1;                                                  \
            if (c >= n) break;                                                     \
            if (c + 1 < n && before(&a[c + 1], &a[c])) c++;                        \
            if (!before(&a[c], &last)) break;                                      \
            a[i] = a[c];                                                           \
            i = c;                                                                 \
            moved++;                                                               \
        }                                                                          \
        if (n > 0) a[i] = last;                                                    \
        a[n] = top;                                                                \
        return moved;                                                              \
    }

#endif

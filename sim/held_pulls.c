/* Held pulls (see held_pulls.h): a binary min-heap on (round, seq).
 *
 * Freeing pops the heap's earliest entries while their round is below the
 * bound and parks each in the slot the pop just vacated (items[len], still
 * inside the array), as network.c does with finished transfers; the run of
 * freed entries is then put in seq order in place. When the bound moves by
 * one round, as it does on every push that moves it, the freed pulls share
 * one round and pop in seq order already: reversing the run is all it
 * takes. A larger move (a retirement) may free several rounds, which are
 * sorted: O(k log k) for k freed, each pull freed once. */
#include <stdbool.h>
#include <stdlib.h>

#include "binary_heap.h"
#include "held_pulls.h"

static inline bool held_before(const struct held_pull *x, const struct held_pull *y)
{
    return x->round < y->round || (x->round == y->round && x->seq < y->seq);
}

BINARY_HEAP(held_heap, struct held_pull, held_before)

int held_pulls_add(struct held_pulls *h, int64_t round, int32_t g)
{
    if (vec_reserve(&h->heap, h->heap.len + 1) < 0) return ERR_NOMEM;
    struct held_pull x = {round, h->next_seq++, g};
    held_heap_push(h->heap.items, &h->heap.len, x);
    return 0;
}

static int by_seq(const void *x, const void *y)
{
    uint64_t a = ((const struct held_pull *)x)->seq, b = ((const struct held_pull *)y)->seq;
    return (a > b) - (a < b);
}

size_t held_pulls_free_below(struct held_pulls *h, int64_t bound, const struct held_pull **out)
{
    size_t old_len = h->heap.len;
    while (h->heap.len > 0 && h->heap.items[0].round < bound)
        held_heap_pop_to_tail(h->heap.items, &h->heap.len);
    struct held_pull *run = h->heap.items + h->heap.len;
    size_t k = old_len - h->heap.len;
    *out = run;
    if (k < 2) return k;
    /* latest-popped first: reverse into pop order, (round, seq) */
    for (size_t i = 0, j = k - 1; i < j; i++, j--) {
        struct held_pull t = run[i];
        run[i] = run[j];
        run[j] = t;
    }
    if (run[0].round != run[k - 1].round) qsort(run, k, sizeof *run, by_seq);
    return k;
}

void held_pulls_release(struct held_pulls *h)
{
    vec_free(&h->heap);
    h->next_seq = 0;
}

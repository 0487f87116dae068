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

#include "held_pulls.h"

static inline bool held_before(const struct held_pull *x, const struct held_pull *y)
{
    return x->round < y->round || (x->round == y->round && x->seq < y->seq);
}

int held_pulls_add(struct held_pulls *h, int64_t round, int32_t g)
{
    if (vec_reserve(&h->heap, h->heap.len + 1) < 0) return ERR_NOMEM;
    struct held_pull x = {round, h->next_seq++, g};
    struct held_pull *a = h->heap.items;
    size_t i = h->heap.len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!held_before(&x, &a[parent])) break;
        a[i] = a[parent];
        i = parent;
    }
    a[i] = x;
    return 0;
}

/* Removes the earliest entry and parks it at items[len] (the new len). */
static void pop_to_tail(struct held_pulls *h)
{
    struct held_pull *a = h->heap.items;
    size_t n = --h->heap.len;
    struct held_pull top = a[0], last = a[n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && held_before(&a[c + 1], &a[c])) c++;
        if (!held_before(&a[c], &last)) break;
        a[i] = a[c];
        i = c;
    }
    if (n > 0) a[i] = last;
    a[n] = top;
}

static int by_seq(const void *x, const void *y)
{
    uint64_t a = ((const struct held_pull *)x)->seq, b = ((const struct held_pull *)y)->seq;
    return (a > b) - (a < b);
}

size_t held_pulls_free_below(struct held_pulls *h, int64_t bound, const struct held_pull **out)
{
    size_t old_len = h->heap.len;
    while (h->heap.len > 0 && h->heap.items[0].round < bound) pop_to_tail(h);
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

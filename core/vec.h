/* A growable array: the one way arrays grow in strata.
 *
 *   VEC(struct op) ops = {0};
 *   if (vec_push(&ops, op) < 0) ...;     // ops.items[0 .. ops.len)
 *   vec_free(&ops);
 *
 * Capacity doubles, so n pushes cost O(n) copies in all. */
#ifndef STRATA_VEC_H
#define STRATA_VEC_H

#include <stddef.h>
#include <stdlib.h>

#include "err.h"

#define VEC(T) struct { T *items; size_t len, cap; }

/* Makes room for `need` elements of elem_bytes each; 0 or ERR_NOMEM. */
int vec_reserve_(void **items, size_t *cap, size_t need, size_t elem_bytes);

#define vec_reserve(v, need) \
    vec_reserve_((void **)&(v)->items, &(v)->cap, (need), sizeof *(v)->items)

/* Appends x; 0 or ERR_NOMEM (the vector is unchanged then). */
#define vec_push(v, x) \
    (vec_reserve((v), (v)->len + 1) < 0 ? ERR_NOMEM : ((v)->items[(v)->len++] = (x), 0))

#define vec_free(v) \
    do { free((v)->items); (v)->items = NULL; (v)->len = (v)->cap = 0; } while (0)

#endif

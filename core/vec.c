#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "vec.h"

int vec_reserve_(void **items, size_t *cap, size_t need, size_t elem_bytes)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 8;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem_bytes) return ERR_NOMEM;
        n *= 2;
    }
    void *p = realloc(*items, n * elem_bytes);
    if (!p) return ERR_NOMEM;
    *items = p;
    *cap = n;
    return 0;
}

/* Host staging (real/stage.h). */
#include <stdlib.h>

#include "stage.h"

static void *grow(struct stage *s, size_t bytes, struct err *e)
{
    if (s->host && s->cap >= bytes) return s->host;
    /* the old contents are not needed: free before allocating the larger one */
    free(s->host);
    s->cap = 0;
    if (!(s->host = malloc(bytes ? bytes : 1))) {
        err_set(e, ERR_NOMEM, "out of memory for a host copy of %zu bytes of device memory", bytes);
        return NULL;
    }
    s->cap = bytes;
    return s->host;
}

const void *stage_out(const struct device *dev, struct stage *s, const void *p, size_t bytes,
                      struct err *e)
{
    if (dev->is_host_memory) return p;
    void *h = grow(s, bytes, e);
    if (h) dev->copy(h, p, bytes, DEV_D2H);
    return h;
}

void *stage_in(const struct device *dev, struct stage *s, void *p, size_t bytes, struct err *e)
{
    return dev->is_host_memory ? p : grow(s, bytes, e);
}

void stage_in_done(const struct device *dev, const struct stage *s, void *p, size_t bytes)
{
    if (!dev->is_host_memory && p != s->host) dev->copy(p, s->host, bytes, DEV_H2D);
}

void stage_release(struct stage *s)
{
    free(s->host);
    s->host = NULL;
    s->cap = 0;
}

/* Host copies of device memory (real/host_copy.h). */
#include <stdlib.h>

#include "host_copy.h"

static void *grow(struct host_copy *c, size_t bytes, struct err *e)
{
    if (c->host && c->cap >= bytes) return c->host;
    /* the old contents are not needed: free before allocating the larger one */
    free(c->host);
    c->cap = 0;
    if (!(c->host = malloc(bytes ? bytes : 1))) {
        err_set(e, ERR_NOMEM, "out of memory for a host copy of %zu bytes of device memory", bytes);
        return NULL;
    }
    c->cap = bytes;
    return c->host;
}

const void *host_copy_out(const struct device *dev, struct host_copy *c, const void *p,
                          size_t bytes, struct err *e)
{
    if (dev->is_host_memory) return p;
    void *h = grow(c, bytes, e);
    if (h) dev->copy(h, p, bytes, DEV_D2H);
    return h;
}

void *host_copy_in(const struct device *dev, struct host_copy *c, void *p, size_t bytes,
                   struct err *e)
{
    return dev->is_host_memory ? p : grow(c, bytes, e);
}

void host_copy_in_done(const struct device *dev, const struct host_copy *c, void *p,
                       size_t bytes)
{
    if (!dev->is_host_memory && p != c->host) dev->copy(p, c->host, bytes, DEV_H2D);
}

void host_copy_release(struct host_copy *c)
{
    free(c->host);
    c->host = NULL;
    c->cap = 0;
}

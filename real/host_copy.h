/* Host copies of device memory: MPI reads and writes host memory, so a
 * device whose memory is not the host's (cuda; nn/device.h is_host_memory)
 * lends its buffers to MPI through host copies. On cpu the device pointer
 * is the host pointer and nothing is copied.
 *
 * A struct host_copy is one reusable host buffer, grown to the largest
 * transfer it has carried; its owner keeps it across steps (a buffer per
 * PUSH/PULL op, a pool in the mpi comm). Copies go through dev->copy, which
 * returns when a host copy is done (its failures are the next dev->sync's). */
#ifndef STRATA_REAL_HOST_COPY_H
#define STRATA_REAL_HOST_COPY_H

#include <stddef.h>

#include "../core/err.h"
#include "../nn/device.h"

struct host_copy {
    void *host;
    size_t cap;    /* bytes */
};

/* For MPI to send `bytes` of device memory at p: p itself where dev's
 * memory is the host's; else c's buffer holding a copy of it. NULL and
 * ERR_NOMEM when the buffer cannot grow. */
const void *host_copy_out(const struct device *dev, struct host_copy *c, const void *p,
                          size_t bytes, struct err *e);

/* For MPI to receive `bytes` meant for device memory p: p itself, or c's
 * buffer (contents undefined); host_copy_in_done then copies them to p. */
void *host_copy_in(const struct device *dev, struct host_copy *c, void *p, size_t bytes,
                   struct err *e);
void host_copy_in_done(const struct device *dev, const struct host_copy *c, void *p,
                       size_t bytes);

void host_copy_release(struct host_copy *c);   /* accepts a zeroed one */

#endif

/* Host staging: MPI reads and writes host memory, so a device whose memory
 * is not the host's (cuda; nn/device.h is_host_memory) lends its buffers to
 * MPI through host copies. On cpu the device pointer is the host pointer
 * and nothing is copied, so the cpu path is what it was before staging.
 *
 * A stage is one reusable host buffer, grown to the largest transfer it has
 * carried; its owner keeps it across steps (a buffer per PUSH/PULL op, a
 * pool in the mpi comm). Copies go through dev->copy, which returns when a
 * host copy is done (its failures are the next dev->sync's). */
#ifndef STRATA_REAL_STAGE_H
#define STRATA_REAL_STAGE_H

#include <stddef.h>

#include "../core/err.h"
#include "../nn/device.h"

struct stage {
    void *host;
    size_t cap;    /* bytes */
};

/* For MPI to send `bytes` of device memory at p: p itself where dev's
 * memory is the host's; else s's buffer holding a copy of it. NULL and
 * ERR_NOMEM when the buffer cannot grow. */
const void *stage_out(const struct device *dev, struct stage *s, const void *p, size_t bytes,
                      struct err *e);

/* For MPI to receive `bytes` meant for device memory p: p itself, or s's
 * buffer (contents undefined); stage_in_done then copies them to p. */
void *stage_in(const struct device *dev, struct stage *s, void *p, size_t bytes, struct err *e);
void stage_in_done(const struct device *dev, const struct stage *s, void *p, size_t bytes);

void stage_release(struct stage *s);   /* accepts a zeroed stage */

#endif

/* Shared links: concurrent transfers through one link split its bandwidth
 * equally (processor sharing), so a parameter server's NIC, which every
 * worker's push and pull crosses, becomes the bottleneck it is in practice.
 *
 * Each link keeps a virtual clock V that advances at bw / n_active bytes per
 * second: a transfer of n bytes entering at V0 finishes when V reaches V0 + n.
 * Only the link's next finishing transfer has an event in the queue, so an
 * arrival or a departure costs O(log n), not O(n) re-timings; an event made
 * stale by a later start is recognised by the link's generation counter.
 * The receiver has the data latency_s after the last byte leaves the link. */
#ifndef STRATA_NETWORK_H
#define STRATA_NETWORK_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/err.h"
#include "des.h"

struct network;

/* n_links links, all with infinite bandwidth and no latency until set. Link
 * events use des kind `event_kind` (the simulator's number for them). */
struct network *network_create(int n_links, int32_t event_kind, struct err *e);
void network_free(struct network *n);

/* bw > 0 (INFINITY: free), latency >= 0; network_start rejects other values.
 * Set a link while it is idle: a busy link's transfers are not re-timed. A
 * link out of range is ignored. */
void network_set_link(struct network *n, int link, double bw_bytes_per_s, double latency_s);

/* Starts moving `bytes` through `link` at time now_s. When it has arrived,
 * network_on_event hands back `cookie` (the simulator's handle for it). A
 * link of infinite bandwidth, or a transfer of 0 bytes, arrives at
 * now_s + latency without slowing the link's other transfers. Transfers that
 * finish on one link at the same instant (to rounding: see network.c) are
 * handed back at the same time, in the order they were started.
 * 0, ERR_NOMEM, or ERR_RUN for a caller's bug: a link out of range, bytes < 0,
 * a NaN now_s or one before the link's last event, a link whose bandwidth is
 * not > 0 or whose latency is not >= 0. */
int network_start(struct network *n, struct des *q, double now_s, int link, int64_t bytes,
                  int64_t cookie);

/* Handles an event of the network's kind popped at time ev->time_s. Returns
 * 1 with *cookie set when a transfer has arrived; 0 for a stale or internal
 * event; ERR_NOMEM when the queue could not grow (nothing has changed then),
 * ERR_RUN for an event that is not the network's. Every arrival has its own
 * event, so one call hands back at most one cookie and nothing is pending
 * between calls. The events, all of kind event_kind:
 *   a = link >= 0, b = the link's generation: the link's earliest transfer
 *     finishes; stale (0) when a later start re-timed the link.
 *   a = -1 - link, b = cookie: that transfer's last byte has crossed the link
 *     and its latency; returns 1. */
int network_on_event(struct network *n, struct des *q, const struct des_event *ev,
                     int64_t *cookie);

/* Per-link heap levels moved and transfers handed back so far: the
 * network's share of the simulator's work counter (simulate.h). */
uint64_t network_touched(const struct network *n);

/* Transfers currently sharing link (for tests and diagnostics). */
int network_active(const struct network *n, int link);

#endif

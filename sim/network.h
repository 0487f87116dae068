/* Shared links: concurrent transfers through one link split its bandwidth
 * equally (processor sharing), so a parameter server's NIC, which every
 * worker's push and pull crosses, becomes the bottleneck it is in practice.
 *
 * Each link keeps a virtual clock V that advances at bw / n_active bytes per
 * second: a transfer of n bytes entering at V0 finishes when V reaches V0 + n.
 * Only the link's next finishing transfer has an event in the queue, so an
 * arrival or a departure costs O(log n), not O(n) re-timings; an event made
 * stale by a later arrival is recognised by the link's generation counter.
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

void network_set_link(struct network *n, int link, double bw_bytes_per_s, double latency_s);

/* Starts moving `bytes` through `link` at time now_s. When it has arrived,
 * network_on_event hands back `cookie` (the simulator's handle for it). A
 * link of infinite bandwidth finishes it at now_s + latency. 0 or ERR_NOMEM. */
int network_start(struct network *n, struct des *q, double now_s, int link, int64_t bytes,
                  int64_t cookie);

/* Handles an event of the network's kind popped at time ev->time_s. Returns
 * true with *cookie set when a transfer has arrived; false for a stale or
 * internal event. */
bool network_on_event(struct network *n, struct des *q, const struct des_event *ev,
                      int64_t *cookie);

/* Transfers currently sharing link (for tests and diagnostics). */
int network_active(const struct network *n, int link);

#endif

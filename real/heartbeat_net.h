/* Heartbeats over the network, for jobs that span hosts (`strata real
 * --hostfile`): a rank on another machine cannot write a file the
 * supervisor reads, nor be tied to its pid. So the supervisor listens on a
 * TCP port, passes its address to the ranks ($STRATA_SUPERVISOR, forwarded
 * by mpirun -x), and each rank connects and sends its heartbeat record
 * (real/heartbeat.h) on every put: one send of sizeof(struct
 * heartbeat_wire) bytes a step.
 *
 * The supervisor keeps the newest record of each rank in the job's
 * heartbeat directory, as a rank on this machine writes it, so the watch
 * (real/job_watch.h) reads it there; the rank's CLOCK_MONOTONIC times are
 * shifted onto the supervisor's clock by the smallest (arrival - sent_s)
 * seen on the connection (NTP's idea: the least delayed message is the
 * truest; its error is one network delay, well below the poll's 100 ms).
 * A connection closed by a rank that had not said it was done is its
 * death, seen at once (the peer's kernel closes a killed process's socket);
 * a host that vanishes without closing it (power, cable) is found by the
 * timeout instead. Tie-to-supervisor the other way: a rank whose
 * connection closes (the supervisor is gone) ends itself (SIGKILL), as a
 * rank on this machine dies with its launcher.
 *
 * Records travel in host byte order: every host of one job runs the same
 * binary on one architecture; a record whose magic is wrong is refused. */
#ifndef STRATA_HEARTBEAT_NET_H
#define STRATA_HEARTBEAT_NET_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "../core/err.h"
#include "heartbeat.h"

/* The supervisor's endpoint, "ADDR:PORT", in a supervised multi-host job. */
#define HEARTBEAT_NET_ENV "STRATA_SUPERVISOR"

/* One message: the record and the sender's CLOCK_MONOTONIC as it sent it. */
struct heartbeat_wire {
    struct heartbeat_record rec;
    double sent_s;
};

/* --- a rank's side --- */

struct hbnet_link;

/* Connects to endpoint ("ADDR:PORT", IPv4, IPv6 in brackets, or a name)
 * and starts the thread that ends this process when the supervisor closes
 * the connection. ERR_IO naming $STRATA_SUPERVISOR when it cannot connect
 * (the supervisor is gone, or its address is not reachable from here). */
int hbnet_link_open(const char *endpoint, struct hbnet_link **out, struct err *e);

/* Sends rec, stamped now. Never blocks unless must_arrive (last words,
 * DONE): a beat that finds the socket's buffer full is dropped, as a failed
 * write of a file heartbeat is. */
void hbnet_link_send(struct hbnet_link *l, const struct heartbeat_record *rec, bool must_arrive);

/* Closes the connection (after a last send) without ending the process. NULL ok. */
void hbnet_link_close(struct hbnet_link *l);

/* --- the supervisor's side --- */

struct hbnet_listener;

/* --supervisor-address: text ("" = the address this host's name resolves
 * to) made numeric into numeric[0..n). ERR_INPUT naming the option, the
 * value and what is allowed when it does not resolve or is not this
 * host's (it cannot be bound). */
int hbnet_resolve_address(const char *text, char *numeric, size_t n, struct err *e);

/* Listens on an ephemeral port of address (numeric, hbnet_resolve_address)
 * for the n_ranks ranks of one job, whose newest records it keeps in
 * hb_dir/rank-R (heartbeat_read reads them). ERR_IO when it cannot. */
int hbnet_listen(const char *address, int n_ranks, const char *hb_dir,
                 struct hbnet_listener **out, struct err *e);

/* "ADDR:PORT", for $STRATA_SUPERVISOR. */
const char *hbnet_endpoint(const struct hbnet_listener *l);

/* The descriptors to poll for input (the listening socket and each open
 * connection) into pfds[0..max); how many. */
int hbnet_pollfds(const struct hbnet_listener *l, struct pollfd *pfds, int max);

/* Accepts new connections and reads what arrived, without blocking; each
 * whole record written to its rank's file. true when a rank's connection
 * closed in this call (a death to look at now). */
bool hbnet_pump(struct hbnet_listener *l);

/* Whether rank's connection is closed (it was open once), and when it
 * closed (CLOCK_MONOTONIC) in *closed_s. */
bool hbnet_is_closed(const struct hbnet_listener *l, int rank, double *closed_s);

/* Closes every connection (the ranks end themselves) and the socket. NULL ok. */
void hbnet_listener_free(struct hbnet_listener *l);

#endif

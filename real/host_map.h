/* Which host each rank of a real run ran on: the report's "hosts" map
 * (core/report.h), and the line the terminal shows of it. A host is what
 * MPI_Get_processor_name says (the node's host name under Open MPI and
 * MPICH), so ranks on one machine share one, whatever address mpirun
 * reached it by. */
#ifndef STRATA_REAL_HOST_MAP_H
#define STRATA_REAL_HOST_MAP_H

#include <stddef.h>

#include <mpi.h>

#include "../core/err.h"
#include "../core/report.h"

/* Collective over comm: every rank's processor name gathered to comm's rank
 * 0, which sets r->rank_hosts (one a rank of comm, in rank order) and
 * r->has_hosts; other ranks leave r as it is. ERR_RUN when MPI fails,
 * ERR_NOMEM on rank 0 when the map cannot be allocated (the other ranks
 * return 0: the caller agrees on the outcome, mpi_check_agree). */
int host_map_gather(MPI_Comm comm, struct report *r, struct err *e);

/* How many distinct hosts r->rank_hosts names (0 when it has none). */
int host_map_count(const struct report *r);

/* "2 hosts: host-a (ranks 0-1), host-b (ranks 2-3)" into buf[0..n) (cut to
 * fit, always NUL-terminated when n > 0): runs of consecutive ranks as
 * ranges, hosts in the order of their first rank. "" when r has no hosts. */
void host_map_describe(const struct report *r, char *buf, size_t n);

#endif

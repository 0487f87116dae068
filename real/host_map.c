/* The report's host map: processor names gathered to rank 0, and said in
 * one line. */
#include "host_map.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>   /* sysconf: the host's cores */
#include <string.h>

#include "../core/text_append.h"
#include "mpi_check.h"

int host_map_gather(MPI_Comm comm, struct report *r, struct err *e)
{
    int rank = 0, n_ranks = 0, len = 0;
    MPI_TRY(e, MPI_Comm_rank(comm, &rank));
    MPI_TRY(e, MPI_Comm_size(comm, &n_ranks));
    /* fixed-size records: one MPI_Gather, no lengths to exchange first */
    char mine[MPI_MAX_PROCESSOR_NAME];
    memset(mine, 0, sizeof mine);
    MPI_TRY(e, MPI_Get_processor_name(mine, &len));
    struct rank_host me = {{0}, 0};
    /* a longer name is cut: REPORT_HOST_BYTES is what a report keeps */
    snprintf(me.name, sizeof me.name, "%.*s", (int)sizeof me.name - 1, mine[0] ? mine : "unknown");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    me.cores = cores > 0 && cores <= (1L << 30) ? (int)cores : 0;
    struct rank_host *all = NULL;
    bool is_short = false;   /* rank 0 without the memory still joins the gather */
    if (rank == 0) {
        all = calloc((size_t)n_ranks, sizeof *all);
        is_short = !all;
    }
    int rc = MPI_Gather(&me, (int)sizeof me, MPI_BYTE, is_short ? NULL : all, (int)sizeof me,
                        MPI_BYTE, 0, comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return mpi_check_fail(e, rc, "MPI_Gather(processor names)", __FILE__, __LINE__);
    }
    if (rank != 0) return 0;
    if (is_short)
        return err_set(e, ERR_NOMEM, "out of memory for the host names of %d ranks", n_ranks);
    free(r->rank_hosts);
    r->rank_hosts = all;
    r->n_rank_hosts = n_ranks;
    r->has_hosts = true;
    return 0;
}

/* Whether rank i's host was named by an earlier rank. */
static bool seen_before(const struct report *r, int i)
{
    for (int k = 0; k < i; k++)
        if (!strcmp(r->rank_hosts[k].name, r->rank_hosts[i].name)) return true;
    return false;
}

int host_map_count(const struct report *r)
{
    int n = 0;
    for (int i = 0; r->has_hosts && i < r->n_rank_hosts; i++) n += !seen_before(r, i);
    return n;
}

void host_map_describe(const struct report *r, char *buf, size_t n)
{
    if (n == 0) return;
    buf[0] = '\0';
    int n_hosts = host_map_count(r);
    if (n_hosts == 0) return;
    size_t used = 0;
    text_appendf(buf, n, &used, "%d host%s:", n_hosts, n_hosts == 1 ? "" : "s");
    /* O(ranks x hosts), as host_map_count: a line for people, not a hot path */
    int listed = 0;
    for (int i = 0; i < r->n_rank_hosts; i++) {
        if (seen_before(r, i)) continue;
        const char *name = r->rank_hosts[i].name;
        int n_on_host = 0;
        for (int k = i; k < r->n_rank_hosts; k++) n_on_host += !strcmp(r->rank_hosts[k].name, name);
        text_appendf(buf, n, &used, "%s %s (rank%s ", listed++ ? "," : "", name,
               n_on_host == 1 ? "" : "s");
        bool is_first = true;
        for (int k = i; k < r->n_rank_hosts; k++) {
            if (strcmp(r->rank_hosts[k].name, name)) continue;
            int last = k;   /* a run of consecutive ranks on this host: k..last */
            while (last + 1 < r->n_rank_hosts && !strcmp(r->rank_hosts[last + 1].name, name))
                last++;
            text_appendf(buf, n, &used, is_first ? "" : ",");
            if (last > k) text_appendf(buf, n, &used, "%d-%d", k, last);
            else text_appendf(buf, n, &used, "%d", k);
            is_first = false;
            k = last;
        }
        text_appendf(buf, n, &used, ")");
    }
}

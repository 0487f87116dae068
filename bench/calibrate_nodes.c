/* calibrate on several hosts: the ranks grouped by node, and the links
 * inside a node and between nodes timed apart (calibrate.h, calib_nodes). */
#include <stdbool.h>
#include <string.h>

#include <mpi.h>

#include "../real/mpi_check.h"
#include "calibrate.h"
#include "calibrate_links.h"

int calib_nodes_split(struct calib_nodes *nd, struct err *e)
{
    memset(nd, 0, sizeof *nd);
    nd->intra_peer = nd->inter_peer = -1;
    int rank = 0, n_ranks = 0;
    MPI_TRY(e, MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_TRY(e, MPI_Comm_size(MPI_COMM_WORLD, &n_ranks));
    /* a node: the ranks that can share memory (MPI-3), which is how MPI
     * itself tells shared memory from the network */
    MPI_Comm node;
    MPI_TRY(e, MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                                   &node));
    int node_rank = 0, node_size = 0;
    int rc = MPI_Comm_rank(node, &node_rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(node, &node_size);
    /* the lowest world rank of this node names it */
    int leader = rank;
    if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    if (rc != MPI_SUCCESS)
        return mpi_check_fail(e, rc, "grouping the ranks by node", __FILE__, __LINE__);
    int is_leader = node_rank == 0, most = 0;
    MPI_TRY(e, MPI_Allreduce(&is_leader, &nd->n_nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_TRY(e, MPI_Allreduce(&node_size, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    nd->devices_per_node = most;
    /* rank 0's peers: the lowest other rank of its node, of another node */
    int same = leader == 0 && rank != 0 ? rank : n_ranks;
    int other = leader != 0 ? rank : n_ranks;
    int peers[2] = {same, other}, lowest[2];
    MPI_TRY(e, MPI_Allreduce(peers, lowest, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    nd->intra_peer = lowest[0] < n_ranks ? lowest[0] : -1;
    nd->inter_peer = lowest[1] < n_ranks ? lowest[1] : -1;
    nd->has_intra = nd->intra_peer >= 0;
    int size0 = node_size;
    MPI_TRY(e, MPI_Bcast(&size0, 1, MPI_INT, 0, MPI_COMM_WORLD));
    nd->node_of_rank0_size = size0;
    return 0;
}

/* The communicators the two all-reduces run on: rank 0's node
 * (MPI_COMM_NULL on the other nodes' ranks, which sleep meanwhile: on a
 * machine with fewer cores than ranks, as tools/two-hosts makes, their
 * polling would slow the node timed; on a cluster the nodes are
 * independent anyway), and the nodes' leaders (MPI_COMM_NULL elsewhere). */
static int split_comms(MPI_Comm *node, MPI_Comm *leaders, struct err *e)
{
    int rank = 0, node_rank = 0, leader = 0;
    MPI_TRY(e, MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_Comm mine;
    MPI_TRY(e, MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                                   &mine));
    int rc = MPI_Comm_rank(mine, &node_rank);
    if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, mine);
    MPI_Comm_free(&mine);
    if (rc != MPI_SUCCESS)
        return mpi_check_fail(e, rc, "grouping the ranks by node", __FILE__, __LINE__);
    MPI_TRY(e, MPI_Comm_split(MPI_COMM_WORLD, leader == 0 ? 0 : MPI_UNDEFINED, rank, node));
    MPI_TRY(e, MPI_Comm_split(MPI_COMM_WORLD, node_rank == 0 ? 0 : MPI_UNDEFINED, rank, leaders));
    return 0;
}

int calib_nodes_measure(struct calib_nodes *nd, int64_t max_bytes, struct calib_comm *world,
                        struct err *e)
{
    if (nd->n_nodes < 2 || nd->inter_peer < 0)
        return err_set(e, ERR_INPUT, "calibrate: the links between nodes need ranks on 2 nodes "
                       "or more; this job is on %d", nd->n_nodes);
    MPI_Comm node = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
    int rc = split_comms(&node, &leaders, e);
    /* one class after the other, never both at once: a class's times are
     * its own. Every rank takes part in each (collective over the world). */
    if (rc == 0 && nd->has_intra)
        rc = calib_links_measure(MPI_COMM_WORLD, 0, nd->intra_peer, node, max_bytes, &nd->intra, e);
    if (rc == 0) rc = nd->has_intra ? calib_links_fit(&nd->intra, e) : 0;
    if (rc == 0)
        rc = calib_links_measure(MPI_COMM_WORLD, 0, nd->inter_peer, leaders, max_bytes,
                                 &nd->inter, e);
    if (rc == 0) rc = calib_links_fit(&nd->inter, e);
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
    if (leaders != MPI_COMM_NULL) MPI_Comm_free(&leaders);
    TRY(rc);
    int n_ranks = world->n_ranks;
    *world = nd->has_intra ? nd->intra : nd->inter;
    world->n_ranks = n_ranks;
    return 0;
}

void calib_profile_nodes(const struct calib_nodes *nd, struct cluster *out)
{
    if (nd->n_nodes < 2) return;
    const struct calib_comm *in = nd->has_intra ? &nd->intra : &nd->inter;
    out->intra = (struct link_profile){.latency_s = in->latency_s,
                                       .bw_bytes_per_s = in->bw_bytes_per_s};
    out->inter = (struct link_profile){.latency_s = nd->inter.latency_s,
                                       .bw_bytes_per_s = nd->inter.bw_bytes_per_s};
    out->devices_per_node = nd->devices_per_node;
    out->measured_nodes = nd->n_nodes;
    out->allreduce_gamma_s_per_byte = in->gamma_s_per_byte;
}

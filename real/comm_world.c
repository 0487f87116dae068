/* The MPI communicators of a plan (real/comm_world.h). */
#include <stdlib.h>

#include "comm_world.h"
#include "mpi_check.h"

/* Plan group g's communicator, on its members only. Collective over the
 * members: groups are created in plan order, and the group index as tag
 * keeps concurrent creations apart. *sub is the caller's to free. */
static int make_group(struct comm *c, MPI_Group world, const struct plan_group *pg, int g,
                      MPI_Group *sub, struct err *e)
{
    MPI_TRY(e, MPI_Group_incl(world, pg->n_ranks, pg->ranks, sub));
    MPI_TRY(e, MPI_Comm_create_group(c->world, *sub, g, &c->groups[g]));
    MPI_TRY(e, MPI_Comm_set_errhandler(c->groups[g], MPI_ERRORS_RETURN));
    return 0;
}

/* Every plan group's communicator where this rank is a member;
 * MPI_COMM_NULL elsewhere. world is the caller's to free. */
static int make_groups(struct comm *c, const struct plan *p, MPI_Group world, struct err *e)
{
    for (int g = 0; g < c->n_groups; g++) {
        const struct plan_group *pg = &p->groups.items[g];
        bool is_member = false;
        for (int i = 0; i < pg->n_ranks; i++) is_member |= pg->ranks[i] == c->rank;
        if (!is_member) continue;
        MPI_Group sub = MPI_GROUP_NULL;
        int rc = make_group(c, world, pg, g, &sub, e);
        if (sub != MPI_GROUP_NULL) MPI_Group_free(&sub);
        TRY(rc);
    }
    return 0;
}

int comm_world_open(struct comm *c, const struct plan *p, struct err *e)
{
    MPI_TRY(e, MPI_Comm_dup(MPI_COMM_WORLD, &c->world));
    c->is_open = true;
    MPI_TRY(e, MPI_Comm_set_errhandler(c->world, MPI_ERRORS_RETURN));
    MPI_TRY(e, MPI_Comm_rank(c->world, &c->rank));
    MPI_TRY(e, MPI_Comm_size(c->world, &c->n_ranks));
    int *ub = NULL, flag = 0;
    MPI_TRY(e, MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    c->tag_ub = flag && ub ? *ub : 32767;   /* 32767: the least the standard allows */

    c->n_groups = (int)p->groups.len;
    c->groups = XCALLOC(e, (size_t)c->n_groups + 1, sizeof *c->groups);
    if (!c->groups) return ERR_NOMEM;
    for (int g = 0; g < c->n_groups; g++) c->groups[g] = MPI_COMM_NULL;
    MPI_Group world;
    MPI_TRY(e, MPI_Comm_group(c->world, &world));
    int rc = make_groups(c, p, world, e);
    MPI_Group_free(&world);
    return rc;
}

void comm_world_close(struct comm *c)
{
    for (int g = 0; g < c->n_groups && c->groups; g++)
        if (c->groups[g] != MPI_COMM_NULL) MPI_Comm_free(&c->groups[g]);
    free(c->groups);
    c->groups = NULL;
    if (c->is_open) MPI_Comm_free(&c->world);
    c->is_open = false;
}

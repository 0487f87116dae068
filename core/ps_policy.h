/* Parameter-server policies: their list and properties (PS_POLICIES, which
 * every executor, the checker and the commands ask instead of naming
 * policies), and the one piece of logic that decides, for a
 * server holding one shard, which pushes are applied, which dropped, and
 * when a pull may be answered. sim/ runs it in virtual time and real/ in an
 * MPI rank, so both mean the same thing by "sync", "async", "ssp:K" and
 * "backup:B".
 *
 * Versions: the server's version counts the updates applied to its shard.
 * A worker's gradient is computed from the version it last pulled
 * (version_read); it is applied at version_applied (the version just before
 * it takes effect). staleness = version_applied - version_read: the updates
 * other workers made in between.
 *   sync      round r gathers the step-r push of every worker, then applies
 *             them as one update: every push has staleness 0
 *   backup:B  like sync, but round r closes with the first n - B pushes; the
 *             later ones of round r are dropped (Chen et al., 2016, "Revisiting
 *             Distributed Synchronous SGD")
 *   async     each push is applied on arrival; pulls never wait (Hogwild-style
 *             parameter server; with n identical workers staleness -> n - 1)
 *   ssp:K     async, but worker w's pull after its step s waits until every
 *             worker has pushed step s - K (Ho et al., 2013, "More Effective
 *             Distributed ML via a Stale Synchronous Parallel Parameter Server")
 *
 * Retired workers (ps_server_retire): a worker that is gone holds nothing
 * back. "Every worker" above then means every live worker: ssp's bound is on
 * the slowest live worker, a sync round closes when every live worker has
 * pushed it, and backup:B closes with the first min(n - B, live) pushes of
 * live workers. */
#ifndef STRATA_PS_POLICY_H
#define STRATA_PS_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "min_clock.h"

/* ORDER POLICY: the one list of server policies and their properties.
 * X(name, text, has_servers, is_async, has_rounds, is_exact, arg, meaning)
 *   has_servers  the plan has parameter-server ranks (every policy but none)
 *   is_async     workers run at their own pace: the job's work (--steps S:
 *                S x n_workers pushes of batch / n_workers samples) is shared
 *                out among them as they become free, not S steps each; a
 *                failed worker's peers carry on
 *   has_rounds   a pull waits for a round of pushes (one per worker, or the
 *                first n - B of them): servers gather a round, then apply it
 *   is_exact     every step applies the gradient of the whole global batch,
 *                so training follows the one-device step sequence
 *   arg          the name of plan->policy_arg in "ssp:K", or NULL: none */
#define PS_POLICIES(X)                                                                      \
    X(NONE, "none", false, false, false, true, NULL, "no parameter servers")                  \
    X(SYNC, "sync", true, false, true, true, NULL,                                            \
      "wait for every worker's push, average, then answer pulls")                             \
    X(ASYNC, "async", true, true, false, false, NULL,                                         \
      "apply each push on arrival; pulls never wait")                                         \
    X(SSP, "ssp", true, true, false, false, "K",                                              \
      "async, but a pull waits while its worker is more than K steps ahead of the slowest")   \
    X(BACKUP, "backup", true, false, true, false, "B",                                        \
      "sync on the first n_workers - B pushes of a step; the rest are dropped")

enum server_policy {
#define PS_POLICY_ENUM(name, text, has_servers, is_async, has_rounds, is_exact, arg, meaning) \
    POLICY_##name,
    PS_POLICIES(PS_POLICY_ENUM)
#undef PS_POLICY_ENUM
    POLICY_N_KINDS
};

struct policy_info {
    const char *name;      /* "ssp": as plans, reports and `strata schedule` spell it */
    bool has_servers, is_async, has_rounds, is_exact;   /* see PS_POLICIES */
    const char *arg;       /* "K", or NULL when the policy takes no argument */
    const char *meaning;   /* one line, for `strata schedule` and docs */
};

/* Indexed by enum server_policy; generated from PS_POLICIES so it cannot drift. */
extern const struct policy_info policy_infos[POLICY_N_KINDS];

static inline bool policy_is_async(enum server_policy p)
{
    return policy_infos[p].is_async;
}

/* Pushes a round of a has_rounds policy keeps when n workers push to the
 * server: all n, or backup's first n - arg. */
int policy_round_quorum(enum server_policy p, int arg, int n);

struct ps_server {
    enum server_policy policy;
    int arg;                  /* SSP: bound K; BACKUP: dropped pushes B */
    int n_workers;            /* workers that push to this server */
    int64_t version;          /* updates applied so far */
    int64_t round;            /* sync/backup: the step being gathered */
    int n_in_round;           /* sync/backup: live workers' pushes counted in the round */
    int n_live;               /* workers not retired */
    int64_t *pushed;          /* [n_workers]: steps each worker has pushed (its clock) */
    bool *is_retired;         /* [n_workers]: gone (ps_server_retire) */
    struct min_clock slowest; /* the live workers' pushed[], for ssp's bound in O(1) */
    int64_t max_lead;         /* async, ssp: the most steps a pusher was beyond the
                               * slowest live worker; ssp's pulls wait only past K */
};

enum ps_action {
    PS_APPLIED,   /* applied now, as its own update (async, ssp) */
    PS_GATHERED,  /* counted in the round; the round is still open */
    PS_ROUND,     /* counted, and it closed the round: the round's update is applied now */
    PS_DROPPED,   /* too late for its round (backup) */
};

struct ps_push_result {
    enum ps_action action;
    int64_t version_applied;  /* -1 when dropped */
};

int ps_server_init(struct ps_server *s, enum server_policy policy, int arg, int n_workers,
                   struct err *e);
void ps_server_release(struct ps_server *s);

/* Worker w (0-based among this server's workers) pushes the gradient of its
 * step `step`, computed from version_read. */
struct ps_push_result ps_server_push(struct ps_server *s, int w, int64_t step,
                                     int64_t version_read);

/* May worker w's pull that ends its step `step` be answered now? The same
 * as step < ps_server_pull_bound(s): no policy treats workers differently. */
bool ps_server_pull_ready(const struct ps_server *s, int w, int64_t step);

/* Pulls that end a step below the bound may be answered now, the others
 * not yet: sync and backup, the round being gathered; ssp, the slowest live
 * worker's clock + K; async (and ssp with no live worker), INT64_MAX. The
 * bound only moves when a push is PS_APPLIED or PS_ROUND, on a retirement
 * and on ps_server_rewind, so a caller holding pulls keyed by step answers
 * them in order of key without asking again for each. O(1). */
int64_t ps_server_pull_bound(const struct ps_server *s);

/* Worker w is gone: it no longer holds back ssp pulls or sync rounds, and its
 * later pushes are dropped. A push it made to the open sync/backup round no
 * longer counts towards closing it. If the live workers' pushes already meet
 * the smaller quorum, the round closes now (its update is applied, as on
 * PS_ROUND): answer waiting pulls again after a retirement. Retiring a worker
 * twice, or every worker, is allowed. */
void ps_server_retire(struct ps_server *s, int w);

/* Back to a checkpoint: version `version`, every worker live and at clock
 * `round` (pushed that many rounds), the open round `round` with no push
 * gathered. A synchronous restart (sim/) does this to every server. */
void ps_server_rewind(struct ps_server *s, int64_t version, int64_t round);

#endif

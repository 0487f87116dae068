/* Parameter-server policy: which pushes a server applies, gathers or drops,
 * and when a pull may be answered (see ps_policy.h for the versions and the
 * four policies).
 *
 * Protocol the callers keep (sim/simulate.c and real/ both do):
 *   - each worker pushes its steps in order, once each: step == pushed[w];
 *   - a worker pushes step s only after its pull that ended step s - 1 was
 *     ready. Under sync and backup that pull needs round > s - 1, so a push
 *     never runs ahead of the round being gathered (step <= round).
 * A push that breaks it is a bug of the caller: it fails an assert in debug
 * builds and is PS_DROPPED, changing nothing, otherwise (the result type has
 * no error to report, and counting it would corrupt the round). A retired
 * worker's push is not a bug (it may have been on its way): it is dropped. */
#include <assert.h>
#include <stdlib.h>

#include "ps_policy.h"

const struct policy_info policy_infos[POLICY_N_KINDS] = {
#define PS_POLICY_INFO(name, text, has_servers, is_async, has_rounds, is_exact, arg, meaning) \
    {text, has_servers, is_async, has_rounds, is_exact, arg, meaning},
    PS_POLICIES(PS_POLICY_INFO)
#undef PS_POLICY_INFO
};

int policy_round_quorum(enum server_policy p, int arg, int n)
{
    return p == POLICY_BACKUP ? n - arg : n;
}

int ps_server_init(struct ps_server *s, enum server_policy policy, int arg, int n_workers,
                   struct err *e)
{
    *s = (struct ps_server){0};
    if (n_workers < 1)
        return err_set(e, ERR_INPUT,
                       "parameter server: %d workers is not allowed (at least 1)", n_workers);
    switch (policy) {
    case POLICY_SYNC:
    case POLICY_ASYNC:
        arg = 0;   /* no argument: ignored */
        break;
    case POLICY_SSP:
        if (arg < 0)
            return err_set(e, ERR_INPUT,
                           "parameter server: ssp:%d is not allowed (the staleness bound K "
                           "is >= 0; ssp:0 is lock-step)", arg);
        break;
    case POLICY_BACKUP:
        if (arg < 0 || arg >= n_workers)
            return err_set(e, ERR_INPUT,
                           "parameter server: backup:%d with %d workers is not allowed (0 to "
                           "%d pushes dropped: at least one push must close a round)",
                           arg, n_workers, n_workers - 1);
        break;
    default:
        return err_set(e, ERR_INPUT,
                       "parameter server: policy %d is not a server policy (sync, async, "
                       "ssp:K, backup:B)", (int)policy);
    }
    int64_t *pushed = XCALLOC(e, (size_t)n_workers, sizeof *pushed);
    bool *is_retired = XCALLOC(e, (size_t)n_workers, sizeof *is_retired);
    if (!pushed || !is_retired || min_clock_init(&s->slowest, n_workers, e) < 0) {
        free(pushed);
        free(is_retired);
        min_clock_release(&s->slowest);
        return ERR_NOMEM;
    }
    s->policy = policy;
    s->arg = arg;
    s->n_workers = n_workers;
    s->n_live = n_workers;
    s->pushed = pushed;
    s->is_retired = is_retired;
    return 0;
}

void ps_server_release(struct ps_server *s)
{
    if (!s) return;
    free(s->pushed);
    free(s->is_retired);
    min_clock_release(&s->slowest);
    *s = (struct ps_server){0};
}

/* Live pushes a round of sync/backup needs before it closes: backup's first
 * n - B, but never more than the live workers can make. */
static int round_quorum(const struct ps_server *s)
{
    int n = policy_round_quorum(s->policy, s->arg, s->n_workers);
    return n < s->n_live ? n : s->n_live;
}

/* The round has its quorum: its update is applied now. An empty round never
 * closes (nothing to apply), even when no worker is left. */
static bool close_round_if_full(struct ps_server *s)
{
    if (s->n_in_round == 0 || s->n_in_round < round_quorum(s)) return false;
    s->version += 1;
    s->round += 1;
    s->n_in_round = 0;
    return true;
}

struct ps_push_result ps_server_push(struct ps_server *s, int w, int64_t step,
                                     int64_t version_read)
{
    (void)version_read;   /* staleness is the caller's: version_applied - version_read */
    const struct ps_push_result dropped = {PS_DROPPED, -1};
    if (w >= 0 && w < s->n_workers && s->is_retired[w]) return dropped;
    bool in_protocol = w >= 0 && w < s->n_workers && step == s->pushed[w];
    assert(in_protocol && "a worker pushes its steps in order, once each");
    if (!in_protocol) return dropped;

    switch (s->policy) {
    case POLICY_ASYNC:
    case POLICY_SSP: {
        /* Applied on arrival, as its own update. */
        s->pushed[w] = step + 1;
        min_clock_tick(&s->slowest, w);
        /* its pull for this step is answered at once while pushed[w] is
         * at most K beyond the slowest (ps_server_pull_bound) */
        int64_t lead = s->pushed[w] - min_clock_min(&s->slowest);
        if (lead > s->max_lead) s->max_lead = lead;
        struct ps_push_result r = {PS_APPLIED, s->version};
        s->version += 1;
        return r;
    }
    case POLICY_SYNC:
    case POLICY_BACKUP: {
        assert(step <= s->round && "a push never runs ahead of the round (pull first)");
        if (step > s->round) return dropped;
        s->pushed[w] = step + 1;
        min_clock_tick(&s->slowest, w);
        if (step < s->round) return dropped;   /* its round closed without it (backup) */
        /* Every push of a round is applied at the version before the round's
         * update, which stays put while the round gathers. */
        struct ps_push_result r = {PS_GATHERED, s->version};
        s->n_in_round++;
        if (close_round_if_full(s)) r.action = PS_ROUND;
        return r;
    }
    default:
        return dropped;   /* not initialised: ps_server_init refuses other policies */
    }
}

bool ps_server_pull_ready(const struct ps_server *s, int w, int64_t step)
{
    (void)w;   /* no policy treats workers differently */
    return step < ps_server_pull_bound(s);
}

int64_t ps_server_pull_bound(const struct ps_server *s)
{
    switch (s->policy) {
    case POLICY_ASYNC:
        return INT64_MAX;
    case POLICY_SYNC:
    case POLICY_BACKUP:
        /* The step's round has closed: its update is in the parameters. */
        return s->round;
    case POLICY_SSP: {
        /* Worker w, having pushed step s, may pull when every worker has
         * pushed step s - K, i.e. when
         *
         *     min_v pushed[v] >= s - K + 1        (pushed[v] counts steps)
         *
         * that is s < min_v pushed[v] + K. The worker then computes step
         * s + 1, so with clocks c_v = pushed[v] no worker ever computes a
         * step more than K ahead of the slowest worker's clock:
         * (s + 1) - min_v c_v <= K. K = 0 is lock-step: every worker must
         * have pushed step s, exactly sync's round s. The minimum is over
         * live workers (min_clock, O(1)); with none left nothing holds the
         * pull back. */
        int64_t slowest = min_clock_min(&s->slowest);
        return slowest == INT64_MAX ? INT64_MAX : slowest + s->arg;
    }
    default:
        return INT64_MIN;   /* not initialised: never ready */
    }
}

void ps_server_retire(struct ps_server *s, int w)
{
    assert(w >= 0 && w < s->n_workers && "a worker of this server");
    if (w < 0 || w >= s->n_workers || s->is_retired[w]) return;
    s->is_retired[w] = true;
    s->n_live -= 1;
    min_clock_remove(&s->slowest, w);
    if (!policy_infos[s->policy].has_rounds) return;
    /* pushed[w] > round: w's push of the open round was counted; it counts no
     * more, and the round may now be full without it. */
    if (s->pushed[w] > s->round) s->n_in_round -= 1;
    close_round_if_full(s);
}

void ps_server_rewind(struct ps_server *s, int64_t version, int64_t round)
{
    s->version = version;
    s->round = round;
    s->n_in_round = 0;
    s->n_live = s->n_workers;
    for (int w = 0; w < s->n_workers; w++) {
        s->pushed[w] = round;
        s->is_retired[w] = false;
    }
    min_clock_reset(&s->slowest, round);
}

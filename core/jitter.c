/* Op-time jitter (see jitter.h): one log-normal ratio per compute op, from
 * one random stream per rank. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "jitter.h"
#include "straggler.h"

/* Added to the run seed of straggler_streams_create: another SplitMix64
 * sequence than the stragglers' (the fraction of sqrt(2), as SHA-2's first
 * constant; any odd constant far from a small multiple of the golden-ratio
 * step would do). */
#define JITTER_SEED_SALT 0x6a09e667f3bcc909ull

struct jitter {
    struct jitter_spec spec;
    int n_ranks;
    gsl_rng **rng;   /* [n_ranks] */
};

bool jitter_is_set(const struct jitter_spec *s)
{
    return s && (s->forward_sigma > 0 || s->backward_sigma > 0 || s->update_sigma > 0);
}

static int check_sigma(const char *key, double sigma, struct err *e)
{
    if (isfinite(sigma) && sigma >= 0 && sigma <= JITTER_MAX_SIGMA) return 0;
    return err_set(e, ERR_INPUT, "%s: %g is not allowed (a log-normal sigma from 0 to %g; 0 = "
                   "no spread)", key, sigma, JITTER_MAX_SIGMA);
}

struct jitter *jitter_create(const struct jitter_spec *s, uint64_t seed, int n_ranks,
                             struct err *e)
{
    if (n_ranks < 1) {
        err_set(e, ERR_INPUT, "jitter: %d ranks is not allowed (at least 1)", n_ranks);
        return NULL;
    }
    if (check_sigma("jitter_forward_sigma", s->forward_sigma, e) < 0 ||
        check_sigma("jitter_backward_sigma", s->backward_sigma, e) < 0 ||
        check_sigma("jitter_update_sigma", s->update_sigma, e) < 0)
        return NULL;
    struct jitter *j = XCALLOC(e, 1, sizeof *j);
    if (!j) return NULL;
    j->spec = *s;
    j->n_ranks = n_ranks;
    if (!(j->rng = straggler_streams_create(seed + JITTER_SEED_SALT, n_ranks, "jitter", e)))
        goto fail;
    return j;
fail:
    jitter_free(j);
    return NULL;
}

void jitter_free(struct jitter *j)
{
    if (!j) return;
    straggler_streams_free(j->rng, j->n_ranks);
    free(j);
}

double jitter_compute_s(struct jitter *j, int rank, enum op_kind kind, double base_s)
{
    if (!j) return base_s;
    assert(rank >= 0 && rank < j->n_ranks && "jitter: rank outside the run");
    if (rank < 0 || rank >= j->n_ranks) return base_s;
    /* zero-bubble's halves of a backward are backward work */
    bool is_backward = kind == OP_BACKWARD || kind == OP_BACKWARD_INPUT ||
                       kind == OP_BACKWARD_WEIGHT;
    double sigma = kind == OP_FORWARD ? j->spec.forward_sigma
                   : is_backward      ? j->spec.backward_sigma
                   : kind == OP_UPDATE ? j->spec.update_sigma
                                       : 0;
    if (!(sigma > 0)) return base_s;
    /* E[LogNormal(zeta, sigma)] = exp(zeta + sigma^2/2) = 1 for zeta = -sigma^2/2 */
    return base_s * gsl_ran_lognormal(j->rng[rank], -0.5 * sigma * sigma, sigma);
}

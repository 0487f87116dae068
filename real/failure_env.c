/* STRATA_FAILURE, the supervisor's measurements for the relaunched job
 * (failure_env.h). */
#include "failure_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int failure_env_format(const struct failure_note *n, char *buf, size_t len, struct err *e)
{
    /* %.17g: the clocks go through text and come back the same doubles */
    int w = snprintf(buf, len,
                     "rank=%d;time_s=%.17g;policy=%s;n_failures=%d;detect_s=%.17g;"
                     "relaunch_s=%.17g;redone_s=%.17g;steps_redone=%lld;relaunch_at_s=%.17g;"
                     "first_start_s=%.17g;checkpoint_s=%.17g",
                     n->rank, n->time_s, failure_policy_names[n->policy], n->n_failures,
                     n->detect_s, n->relaunch_s, n->redone_s, (long long)n->steps_redone,
                     n->relaunch_at_s, n->first_start_s, n->checkpoint_s);
    if (w < 0 || (size_t)w >= len)
        return err_set(e, ERR_INPUT, "%s: %d bytes do not fit %zu", FAILURE_ENV, w, len);
    return 0;
}

/* One number from text (all of it); false when it is not one. */
static bool number(const char *text, double *out)
{
    char *end = NULL;
    *out = strtod(text, &end);
    return end != text && *end == '\0';
}

static int take(struct failure_note *n, const char *key, const char *value, struct err *e)
{
    if (!strcmp(key, "policy")) {
        for (int k = FAILURE_RESTART; k <= FAILURE_CONTINUE; k++)
            if (!strcmp(value, failure_policy_names[k])) {
                n->policy = (enum failure_policy)k;
                return 0;
            }
        return err_set(e, ERR_INPUT, "%s: policy=%s is not restart, shrink or continue",
                       FAILURE_ENV, value);
    }
    double v = 0;
    if (!number(value, &v))
        return err_set(e, ERR_INPUT, "%s: %s=%s is not a number", FAILURE_ENV, key, value);
    if (!strcmp(key, "rank")) n->rank = (int)v;
    else if (!strcmp(key, "time_s")) n->time_s = v;
    else if (!strcmp(key, "n_failures")) n->n_failures = (int)v;
    else if (!strcmp(key, "detect_s")) n->detect_s = v;
    else if (!strcmp(key, "relaunch_s")) n->relaunch_s = v;
    else if (!strcmp(key, "redone_s")) n->redone_s = v;
    else if (!strcmp(key, "steps_redone")) n->steps_redone = (int64_t)v;
    else if (!strcmp(key, "relaunch_at_s")) n->relaunch_at_s = v;
    else if (!strcmp(key, "first_start_s")) n->first_start_s = v;
    else if (!strcmp(key, "checkpoint_s")) n->checkpoint_s = v;
    return 0;
}

int failure_env_parse(const char *text, struct failure_note *n, struct err *e)
{
    memset(n, 0, sizeof *n);
    char buf[1024];
    if (strlen(text) >= sizeof buf)
        return err_set(e, ERR_INPUT, "%s: longer than %zu bytes", FAILURE_ENV, sizeof buf - 1);
    strcpy(buf, text);
    for (char *pair = buf, *next; pair && *pair; pair = next) {
        next = strchr(pair, ';');
        if (next) *next++ = '\0';
        char *eq = strchr(pair, '=');
        if (!eq)
            return err_set(e, ERR_INPUT, "%s: '%.40s' is not key=value", FAILURE_ENV, pair);
        *eq = '\0';
        TRY(take(n, pair, eq + 1, e));
    }
    if (n->n_failures < 1)
        return err_set(e, ERR_INPUT, "%s: n_failures must be 1 or more", FAILURE_ENV);
    return 0;
}

int failure_env_report(struct report *r, double start_s, double makespan_s,
                       double own_checkpoint_s, struct err *e)
{
    const char *text = getenv(FAILURE_ENV);
    if (!text || !*text) return 0;
    struct failure_note n;
    TRY(failure_env_parse(text, &n, e));
    double last_relaunch_s = start_s > n.relaunch_at_s ? start_s - n.relaunch_at_s : 0;
    r->failure.happened = true;
    r->failure.has_first = true;
    r->failure.rank = n.rank;
    r->failure.time_s = n.time_s;
    r->failure.policy = failure_policy_names[n.policy];
    r->failure.n_failures = n.n_failures;
    r->failure.detect_s = n.detect_s;
    r->failure.relaunch_s = n.relaunch_s + last_relaunch_s;
    r->failure.redone_s = n.redone_s;
    r->failure.steps_redone = (int)n.steps_redone;
    r->failure.checkpoint_s = n.checkpoint_s + own_checkpoint_s;
    r->failure.has_workers_after = true;
    r->failure.workers_after = r->devices;
    r->failure.lost_s = r->failure.detect_s + r->failure.relaunch_s + r->failure.redone_s;
    /* the whole run: from the first job's aligned start to this one's end;
     * goodput as docs/metrics.md and the simulator (sim/failures.c) have
     * it, (T - lost_s - checkpoint_s) / T: time spent writing checkpoints
     * is not work either (it was left in, so a real run's goodput read
     * higher than a simulated one of the same time line) */
    double total_s = start_s - n.first_start_s + makespan_s;
    r->failure.goodput =
        total_s > 0 ? 1 - (r->failure.lost_s + r->failure.checkpoint_s) / total_s : 0;
    if (r->failure.goodput < 0) r->failure.goodput = 0;
    return 0;
}

/* Between entries of STRATA_USER_OPTIONS: ASCII's unit separator. */
#define OPTION_SEP '\x1f'

int failure_env_format_options(const struct config *cfg, const char *const *names, int n,
                               char *buf, size_t len, struct err *e)
{
    size_t at = 0;
    if (len) buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        const struct opt_spec *o = config_find(names[i]);
        if (!o) return err_set(e, ERR_INPUT, "%s: no option --%s", USER_OPTIONS_ENV, names[i]);
        char value[4200];
        config_format(cfg, o, value, sizeof value);
        int w = snprintf(buf + at, len - at, "%s%s=%s", i ? "\x1f" : "", names[i], value);
        if (w < 0 || (size_t)w >= len - at)
            return err_set(e, ERR_INPUT, "%s: the options do not fit %zu bytes", USER_OPTIONS_ENV,
                           len);
        at += (size_t)w;
    }
    return 0;
}

bool failure_env_overrides(const char *name)
{
    const char *text = getenv(USER_OPTIONS_ENV);
    size_t n = strlen(name);
    for (const char *entry = text; entry && *entry;) {
        if (!strncmp(entry, name, n) && entry[n] == '=') return true;
        const char *next = strchr(entry, OPTION_SEP);
        entry = next ? next + 1 : NULL;
    }
    return false;
}

int failure_env_restore_options(struct config *cfg, struct err *e)
{
    const char *text = getenv(USER_OPTIONS_ENV);
    if (!text || !*text) return 0;
    char *buf = XCALLOC(e, strlen(text) + 1, 1);
    if (!buf) return ERR_NOMEM;
    strcpy(buf, text);
    int rc = 0;
    for (char *entry = buf, *next; rc == 0 && entry; entry = next) {
        next = strchr(entry, OPTION_SEP);
        if (next) *next++ = '\0';
        char *eq = strchr(entry, '=');
        if (!eq) {
            rc = err_set(e, ERR_INPUT, "%s: '%.40s' is not name=value", USER_OPTIONS_ENV, entry);
            break;
        }
        *eq = '\0';
        rc = config_set(cfg, entry, eq + 1, ~0u, e);
    }
    free(buf);
    return rc;
}

/* core/failure_policy.c: --on-failure's default and what each policy
 * needs of a plan (core/failure_policy.h), on plans the strategies build. */
#include <criterion/criterion.h>
#include <string.h>

#include "../core/failure_policy.h"
#include "../core/workload.h"
#include "../strategies/strategy.h"

static struct plan *build(const char *strategy, int devices)
{
    static struct workload *wl;   /* borrowed by the plans; one for the process */
    struct err e = {0};
    if (!wl) cr_assert_eq(workload_parse("mlp:16-8-8-4", &wl, &e), 0, "%s", e.msg);
    struct config c;
    config_init(&c);
    snprintf(c.strategy, sizeof c.strategy, "%s", strategy);
    c.devices = devices;
    c.batch = 32;
    c.microbatches = 2;
    const struct strategy *st = strategy_find(strategy, &e);
    cr_assert_not_null(st, "%s", e.msg);
    struct plan *p = NULL;
    cr_assert_eq(strategy_build(st, &c, wl, &p, &e), 0, "%s: %s", strategy, e.msg);
    return p;
}

/* want: the policy, or -1 = refused with a message naming --on-failure,
 * the value and the strategy */
static void expect(const char *strategy, int devices, const char *text, int want)
{
    struct plan *p = build(strategy, devices);
    enum failure_policy got = FAILURE_RESTART;
    struct err e = {0};
    int rc = failure_policy_resolve(text, p, &got, &e);
    if (want < 0) {
        cr_expect_eq(rc, ERR_INPUT, "%s, %d devices, --on-failure %s was accepted", strategy,
                     devices, text);
        cr_expect(strstr(e.msg, "--on-failure") && strstr(e.msg, text) && strstr(e.msg, strategy),
                  "%s: message '%s'", strategy, e.msg);
    } else {
        cr_expect_eq(rc, 0, "%s --on-failure %s: %s", strategy, text, e.msg);
        cr_expect_eq((int)got, want, "%s --on-failure %s: %s, want %s", strategy, text,
                     failure_policy_names[got], failure_policy_names[want]);
    }
    plan_free(p);
}

Test(failure_policy, auto_is_continue_for_asynchronous_servers_and_restart_otherwise)
{
    expect("ps-async", 2, "auto", FAILURE_CONTINUE);
    expect("ps-ssp", 2, "", FAILURE_CONTINUE);
    const char *sync[] = {"mirrored", "ps-sync", "model", "pipeline-gpipe", "pipeline-1f1b"};
    for (size_t i = 0; i < sizeof sync / sizeof *sync; i++) expect(sync[i], 2, "auto", FAILURE_RESTART);
    /* one worker: continue would go on with none (the run failed, exit 1) */
    expect("ps-async", 1, "auto", FAILURE_RESTART);
}

Test(failure_policy, continue_needs_asynchronous_servers)
{
    const char *sync[] = {"mirrored", "ps-sync", "model", "pipeline-gpipe", "pipeline-1f1b"};
    for (size_t i = 0; i < sizeof sync / sizeof *sync; i++) expect(sync[i], 2, "continue", -1);
    expect("ps-async", 2, "continue", FAILURE_CONTINUE);
    expect("ps-async", 1, "continue", -1);   /* no survivor: "has one worker" */
    /* each refusal gives its plan's own reason */
    const struct { const char *strategy, *why; } reasons[] = {
        {"mirrored", "its all-reduce needs every member"},
        {"ps-sync", "its synchronous round needs every worker's push"},
        {"pipeline-1f1b", "it splits the model over its ranks"},
        {"mirrored-zero1", "it shards its optimizer state"},
    };
    for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++) {
        struct plan *p = build(reasons[i].strategy, 2);
        enum failure_policy got;
        struct err e = {0};
        cr_expect_eq(failure_policy_resolve("continue", p, &got, &e), ERR_INPUT);
        cr_expect_not_null(strstr(e.msg, reasons[i].why), "%s: %s", reasons[i].strategy, e.msg);
        plan_free(p);
    }
}

Test(failure_policy, shrink_needs_replicas_and_a_survivor)
{
    expect("mirrored", 2, "shrink", FAILURE_SHRINK);
    expect("ps-sync", 3, "shrink", FAILURE_SHRINK);
    expect("ps-async", 2, "shrink", FAILURE_SHRINK);
    expect("model", 2, "shrink", -1);
    expect("pipeline-gpipe", 2, "shrink", -1);
    expect("pipeline-1f1b", 2, "shrink", -1);
    expect("mirrored", 1, "shrink", -1);
}

Test(failure_policy, restart_applies_to_every_strategy_and_other_words_are_refused)
{
    const char *all[] = {"mirrored", "ps-sync", "ps-async", "ps-ssp", "model", "pipeline-gpipe", "pipeline-1f1b"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) expect(all[i], 2, "restart", FAILURE_RESTART);
    struct plan *p = build("mirrored", 2);
    enum failure_policy got;
    struct err e = {0};
    cr_expect_eq(failure_policy_resolve("reboot", p, &got, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "'reboot'") && strstr(e.msg, "restart, shrink, continue"), "%s", e.msg);
    plan_free(p);
}

/* A server's death: only restart can follow it (shrink and continue go on
 * without a dead worker; a server alone holds its shard). ps-sync on 3
 * workers has its server at rank 3. */
Test(failure_policy, a_servers_death_can_only_be_restarted)
{
    struct plan *p = build("ps-sync", 3);
    cr_assert_eq(p->n_workers, 3);
    struct err e = {0};
    cr_expect_eq(failure_policy_check_rank(FAILURE_RESTART, p, 3, &e), 0, "%s", e.msg);
    for (int k = FAILURE_SHRINK; k <= FAILURE_CONTINUE; k++) {
        e = (struct err){0};
        cr_expect_eq(failure_policy_check_rank((enum failure_policy)k, p, 2, &e), 0,
                     "a worker under %s: %s", failure_policy_names[k], e.msg);
        cr_expect_eq(failure_policy_check_rank((enum failure_policy)k, p, 3, &e), ERR_INPUT,
                     "the server under %s was accepted", failure_policy_names[k]);
        cr_expect(strstr(e.msg, "--fail") && strstr(e.msg, "rank 3 is a parameter server") &&
                      strstr(e.msg, failure_policy_names[k]) && strstr(e.msg, "restart"),
                  "%s", e.msg);
    }
    plan_free(p);
}

/* A refusal gives the true reason (pipelined-steps was said to split the
 * model, which it does not: it is mirrored with gradients in flight) ... */
static void expect_shrink_reason(const char *strategy, const char *reason)
{
    struct plan *p = build(strategy, 2);
    enum failure_policy got;
    struct err e = {0};
    cr_expect_eq(failure_policy_resolve("shrink", p, &got, &e), ERR_INPUT, "%s", strategy);
    cr_expect_not_null(strstr(e.msg, reason), "%s: want '%s' in: %s", strategy, reason, e.msg);
    plan_free(p);
}

Test(failure_policy, shrink_refusals_give_the_strategys_own_reason)
{
    expect_shrink_reason("pipelined-steps", "gradients in flight");
    expect_shrink_reason("mirrored-zero1", "shards its optimizer state");
    expect_shrink_reason("model", "splits the model");
    expect_shrink_reason("pipeline-1f1b", "splits the model");
    struct plan *p = build("pipelined-steps", 2);
    enum failure_policy got;
    struct err e = {0};
    cr_expect_eq(failure_policy_resolve("shrink", p, &got, &e), ERR_INPUT);
    cr_expect_null(strstr(e.msg, "splits"), "%s", e.msg);
    plan_free(p);
}

/* ... and suggests only policies the strategy accepts: "use restart or
 * shrink" to a pipeline, which refuses shrink, was a dead end. Every
 * policy after "use " in a refusal of every strategy is resolved again. */
Test(failure_policy, refusals_suggest_only_policies_the_strategy_accepts)
{
    const char *refused[] = {"shrink", "continue"};
    for (size_t i = 0; i < strategy_count; i++)
        for (size_t k = 0; k < 2; k++) {
            const char *name = strategy_registry[i].name;
            struct plan *p = build(name, 2);
            enum failure_policy got;
            struct err e = {0};
            if (failure_policy_resolve(refused[k], p, &got, &e) == 0) {
                plan_free(p);
                continue;
            }
            const char *use = strstr(e.msg, "; use ");
            cr_expect_not_null(use, "%s, %s: no suggestion: %s", name, refused[k], e.msg);
            for (int pol = 0; use && pol < 3; pol++)
                if (strstr(use, failure_policy_names[pol])) {
                    struct err e2 = {0};
                    cr_expect_eq(failure_policy_resolve(failure_policy_names[pol], p, &got, &e2),
                                 0, "%s refuses %s, and suggests %s, which it refuses too: %s",
                                 name, refused[k], failure_policy_names[pol], e2.msg);
                }
            plan_free(p);
        }
}

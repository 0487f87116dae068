/* strata compare: several strategies, one scenario, one table.
 *
 * The simulator is not built yet, so the table shows what the plans
 * themselves say: whether each one is valid, its size, what it hands to
 * communication, and its pipeline bubble at unit cost. It says so on the
 * terminal rather than print times it did not measure. */
#include <stdio.h>

#include "../core/plan_check.h"
#include "../strategies/strategy.h"
#include "scenario.h"

/* One row; a scenario that does not fit a strategy (more stages than
 * layers, say) is that row's note, not the whole comparison's failure. */
static int compare_one(const struct strategy *st, const struct scenario *s, char *note,
                       size_t note_bytes)
{
    struct err e = {0};
    struct plan *p = NULL;
    struct plan_verdict v;
    struct plan_times t = {0};
    int rc = strategy_build(st, &s->cfg, s->wl, &p, &e);
    if (rc == 0) rc = plan_check(p, &v, &e);
    if (rc == 0 && !v.is_valid)
        rc = err_set(&e, ERR_RUN, "INVALID plan (a bug in strata): rank %d op %d: %s",
                     v.defects[0].rank, v.defects[0].op, v.defects[0].msg);
    if (rc == 0) rc = plan_unit_run(p, &t, &e);
    if (rc < 0) {
        printf("%-16s  %s\n", st->name, rc == ERR_INPUT ? "does not fit (see below)" : "FAILED");
        snprintf(note, note_bytes, "%s: %s", st->name, e.msg);
    } else {
        char ranks[32], comm[32];
        if (p->n_servers)
            snprintf(ranks, sizeof ranks, "%d+%d", p->n_workers, p->n_servers);
        else
            snprintf(ranks, sizeof ranks, "%d", p->n_workers);
        format_bytes((double)plan_comm_bytes(p), comm, sizeof comm);
        printf("%-16s  %7s  %8lld  %11s  %11.1f%%  valid\n", st->name, ranks,
               (long long)plan_n_ops(p), comm, 100 * plan_unit_bubble(p, &t));
    }
    plan_times_release(&t);
    plan_free(p);
    return rc;
}

int cmd_compare(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct scenario s;
    const struct strategy *list[64];
    size_t n = 0;
    int status = 0;

    int rc = scenario_load(&s, self, argc, argv, &e);
    if (rc == 0) rc = strategy_parse_list(s.cfg.strategies, list, &n, &e);
    if (rc != 0) {
        status = rc == CONFIG_HELP ? 0 : scenario_fail(self, &e);
        goto out;
    }

    char desc[512];
    workload_describe(s.wl, desc, sizeof desc);
    printf("%zu strateg%s, %s\nbatch %lld per step on %lld devices, %lld microbatches for "
           "pipelines\n\n",
           n, n == 1 ? "y" : "ies", desc, s.cfg.batch, s.cfg.devices, s.cfg.microbatches);
    printf("note: the simulator is not built yet, so there are no step times here. Each\n"
           "strategy's plan is built, checked (no unmatched message, no deadlock) and run at\n"
           "unit cost (forward 1 unit per layer, backward 2, communication free).\n"
           "`strata schedule --strategy NAME` shows one plan op by op.\n\n");
    printf("%-16s  %7s  %8s  %11s  %12s  %s\n", "strategy", "ranks", "ops/step", "comm/step",
           "unit bubble", "plan");
    char notes[64][ERR_MSG_BYTES + 32];
    int n_notes = 0, n_failed = 0, n_unfit = 0;
    for (size_t i = 0; i < n; i++) {
        rc = compare_one(list[i], &s, notes[n_notes], sizeof notes[n_notes]);
        if (rc < 0) {
            n_notes++;
            if (rc == ERR_INPUT) n_unfit++; else n_failed++;
        }
    }
    if (n_notes) puts("");
    for (int i = 0; i < n_notes; i++) printf("  %s\n", notes[i]);
    puts("\nranks: workers (+ parameter servers). comm/step: bytes handed to communication per "
         "step,\nall ranks together. unit bubble: idle share of the workers' compute at unit "
         "cost.");
    /* Every strategy unfit for this scenario means the scenario is the problem. */
    status = n_failed ? 1 : (size_t)n_unfit == n ? 2 : 0;
out:
    scenario_release(&s);
    return status;
}

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/run_numerics.h"
#include "../core/budget.h"
#include "../core/failure_policy.h"
#include "../core/straggler.h"
#include "../core/text_append.h"
#include "../sim/cluster.h"
#include "../strategies/strategy.h"
#include "outputs.h"
#include "scenario.h"

/* Whether this process is an MPI rank other than 0 (Open MPI's, PMI's or
 * PMIx's rank variable says so). Rank 0 writes every output file, on its
 * own host; the other ranks may sit on hosts that do not see its
 * directories (strata real --hostfile), so they do not check them. */
static bool is_rank_beyond_0(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return strcmp(v, "0") != 0;
    }
    return false;
}

/* What scenario_load checks once the options are read: the options the
 * command refuses, --model, the memory budget and the outputs. */
static int check_loaded(struct scenario *s, const struct command *cmd, struct err *e)
{
    TRY(command_refuse_options(cmd, &s->cfg, e));
    /* --fail's form once, as --straggler's: each strategy or point of a
     * compare, sweep or validate would refuse it again ("not run" a line
     * each), and a real compare only after its baseline job */
    struct failure_spec fail;
    if (cmd->groups & OPTG_DISTURB) TRY(failure_parse(s->cfg.fail, &fail, e));
    TRY_CTX(e, workload_parse(s->cfg.model, &s->wl, e), "--model");
    /* Before anything is built: a run the machine cannot hold is refused now,
     * and so is an output that could not be written at the end. Its plan is
     * the largest of the strategies a comparison runs, or --strategy's. */
    struct budget_plan plan;
    strategy_plan_size_spec((cmd->groups & OPTG_COMPARE) ? s->cfg.strategies : s->cfg.strategy,
                            &s->cfg, s->wl, &plan);
    TRY(budget_check(&s->cfg, s->wl, cmd->groups, &plan, e));
    return is_rank_beyond_0() ? 0 : outputs_check(&s->cfg, e);
}

int scenario_load(struct scenario *s, const struct command *cmd, int argc, char **argv,
                  struct err *e)
{
    memset(s, 0, sizeof *s);
    config_init(&s->cfg);
    int rc = config_parse_args(&s->cfg, argc, argv, cmd->groups, e);
    if (rc == CONFIG_HELP) {
        command_print_help(cmd, stdout);
        return CONFIG_HELP;
    }
    TRY(rc);
    if (s->cfg.n_positional > 0 && s->cfg.first_after_dashes == 0)
        return err_set(e, ERR_INPUT, "unexpected argument '%s' after '--' (words after '--' "
                       "are arguments, not options, and strata %s takes no arguments; put "
                       "options before '--')", s->cfg.positional[0], cmd->name);
    if (s->cfg.n_positional > 0)
        return err_set(e, ERR_INPUT, "unexpected argument '%s' (options start with --; see "
                       "strata %s --help)", s->cfg.positional[0], cmd->name);
    /* values their consumers check (--model ...) named with the file's line */
    rc = check_loaded(s, cmd, e);
    if (rc < 0) config_err_locate(&s->cfg, e);
    return rc;
}

void scenario_release(struct scenario *s)
{
    workload_free(s->wl);
    s->wl = NULL;
    config_release(&s->cfg);
}

int scenario_start(struct scenario *s, const struct command *cmd, int argc, char **argv,
                   int *status)
{
    struct err e = {0};
    int rc = scenario_load(s, cmd, argc, argv, &e);
    if (rc == 0 && !(s->strategy = strategy_find(s->cfg.strategy, &e))) {
        config_err_locate(&s->cfg, &e);
        rc = -1;
    }
    if (rc == 0) return 0;
    *status = rc == CONFIG_HELP ? 0 : scenario_fail(cmd, &e);
    return -1;
}

void scenario_print_notes(FILE *out, const struct strategy *st, const struct config *cfg,
                          const struct plan *p, const char *after)
{
    if (p->note[0]) fprintf(out, "note: %s\n%s", p->note, after);
    char unread[1024];
    strategy_unread_note(st, cfg, unread, sizeof unread);
    if (unread[0]) fprintf(out, "note: %s does not read %s\n%s", st->name, unread, after);
}

bool scenario_note_no_failure(FILE *out, const struct config *cfg, const char *lead,
                              const char *after)
{
    const bool has_policy = config_is_set(cfg, "on-failure") && strcmp(cfg->on_failure, "auto");
    const bool has_commits = config_is_set(cfg, "commit-every");
    /* a simulated rank fails only where --fail or --mtbf says (a real one
     * may die of itself, and the supervisor answers by the policy) */
    if ((!has_policy && !has_commits) || cfg->fail[0] || cfg->mtbf_hours > 0) return false;
    char given[96] = "";
    size_t used = 0;
    if (has_policy) text_appendf(given, sizeof given, &used, "--on-failure %s", cfg->on_failure);
    if (has_commits)
        text_appendf(given, sizeof given, &used, "%s--commit-every %lld", used ? ", " : "",
                     cfg->commit_every);
    fprintf(out, "%s %s: no failure is scheduled (--fail R@STEP or --mtbf HOURS), so nothing "
            "reads %s\n%s", lead, given, has_policy && has_commits ? "them" : "it", after);
    return true;
}

void scenario_note_failure_options(FILE *out, const struct config *cfg, const struct plan *p,
                                   bool is_simulated, const char *after)
{
    if (is_simulated && scenario_note_no_failure(out, cfg, "note:", after)) return;
    const bool has_commits = config_is_set(cfg, "commit-every");
    enum failure_policy policy;
    if (!has_commits || failure_policy_resolve(cfg->on_failure, p, &policy, NULL) < 0) return;
    /* commits are what shrink goes back to; a real continue relaunches the
     * survivors from them too, a simulated one carries on without */
    const bool reads_commits =
        policy == FAILURE_SHRINK || (!is_simulated && policy == FAILURE_CONTINUE);
    if (!reads_commits)
        fprintf(out, "note: --commit-every %lld: read only by --on-failure shrink%s, and this "
                "run's policy is %s%s\n%s",
                cfg->commit_every, is_simulated ? "" : " and continue",
                failure_policy_names[policy],
                policy == FAILURE_RESTART ? " (--checkpoint-every sets what a restart goes back to)"
                                          : "",
                after);
}

void scenario_note_unread(FILE *out, const struct config *cfg, unsigned groups,
                          const char *why)
{
    scenario_note_unread_as(out, cfg, groups, why, "  note:", "");
}

void scenario_note_unread_as(FILE *out, const struct config *cfg, unsigned groups,
                             const char *why, const char *lead, const char *after)
{
    /* read off the table, not through config_to_args: a note allocates
     * nothing, so it cannot fail */
    bool any = false;
    for (size_t i = 0; i < config_n_options; i++) {
        const struct opt_spec *o = &config_options[i];
        if (!(o->groups & groups) || !config_is_set(cfg, o->name)) continue;
        /* a value as typed, escaped: a note never drives the terminal */
        char value[CONFIG_PATH_BYTES + 32], shown[4 * CONFIG_PATH_BYTES];
        config_format(cfg, o, value, sizeof value);
        err_escape(shown, sizeof shown, value);
        fprintf(out, "%s --%s", any ? "" : lead, o->name);
        if (o->type != OPT_FLAG) fprintf(out, " %s", shown[0] ? shown : "''");   /* --device '' */
        else if (strcmp(value, "true")) fprintf(out, "=%s", value);
        any = true;
    }
    if (any) fprintf(out, ": %s\n%s", why, after);
}

void scenario_note_unread_by_all(FILE *out, const struct strategy *const *list, size_t n,
                                 const struct config *cfg, const char *verb)
{
    char unread[1024];
    strategy_list_unread_note(list, n, cfg, unread, sizeof unread);
    if (unread[0]) fprintf(out, "  note: no strategy %s reads %s\n", verb, unread);
}

void scenario_note_tf32_unread(FILE *out, const struct config *cfg, const char *lead,
                                const char *after)
{
    /* TF32 is a mode of the cuda device's matrix products (nn/device.h);
     * the cpu device computes in fp32 whatever it is told */
    if (!cfg->tf32 || !strcmp(cfg->device, "cuda")) return;
    char device[4 * sizeof cfg->device];
    err_escape(device, sizeof device, cfg->device);
    fprintf(out, "%s --tf32: read by --device cuda only; --device %s computes in fp32\n%s", lead,
            device, after);
}

void scenario_note_free_checkpoints(FILE *out, const struct config *cfg,
                                    const struct cluster *cl, const char *given,
                                    const char *lead, const char *after)
{
    /* 0 (or infinite) bandwidth is free (sim/cluster.h): without failures
     * the interval then changes nothing, which a run cannot show without a
     * word; with them, only what a failure redoes */
    const double bw = cl->ckpt_write_bw_bytes_per_s;
    if (bw > 0 && isfinite(bw)) return;
    const bool has_failures = cfg->fail[0] || cfg->mtbf_hours > 0;
    fprintf(out, "%s %s: %s prices a checkpoint at 0 s (its profile sets no "
            "ckpt_write_bw_bytes_per_s), so %s; `strata calibrate` measures one, "
            "labs/failures.profile sets one\n%s", lead, given, cl->name,
            has_failures ? "the interval sets only what a failure redoes"
                         : "the interval changes nothing here",
            after);
}

void scenario_note_training_unread(FILE *out, const struct config *cfg, const char *lead,
                                   const char *after)
{
    /* --target-accuracy above 0 turns the arithmetic on itself */
    if (run_wants_numerics(cfg)) return;
    scenario_note_unread_as(out, cfg, OPTG_TRAIN,
                            "read only when the arithmetic runs (--numerics, or "
                            "--target-accuracy above 0) or for real; this simulation times the "
                            "steps alone", lead, after);
}

int scenario_fail(const struct command *cmd, const struct err *e)
{
    /* A failure that set no error (a code passed up without err_set) is
     * still a failure: never exit 0, never print an empty reason. */
    if (e->code == ERR_OK || !e->msg[0]) {
        fprintf(stderr, "strata %s: failed without saying why (a bug in strata: please report "
                "the command)%s%s\n", cmd->name, e->msg[0] ? ": " : "", e->msg);
        return e->code == ERR_OK ? 1 : err_exit_status(e->code);
    }
    fprintf(stderr, "strata %s: %s\n", cmd->name, e->msg);
    return err_exit_status(e->code);
}

int scenario_fail_in(const struct command *cmd, const struct scenario *s, struct err *e)
{
    config_err_locate(&s->cfg, e);
    return scenario_fail(cmd, e);
}

void format_bytes(double bytes, char *buf, size_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024 && u < 5) bytes /= 1024, u++;
    if (u == 0)
        snprintf(buf, n, "%.0f B", bytes);
    else
        snprintf(buf, n, "%.*f %s", bytes < 10 ? 2 : bytes < 100 ? 1 : 0, bytes, units[u]);
}

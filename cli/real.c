/* strata real: one strategy, executed. Outside an MPI job it checks the
 * options, then relaunches itself under mpirun with the ranks the plan
 * needs; inside one (mpirun -np N strata real ...) it runs on the ranks it
 * has, and rank 0 prints the report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/straggler_detect.h"
#include "../nn/data.h"
#include "../nn/device.h"
#include "../plots/timeline_text.h"
#include "../real/checkpoint.h"
#include "../real/comm.h"
#include "../real/failure_env.h"
#include "../real/host_map.h"
#include "../real/job.h"
#include "../real/launch.h"
#include "../real/real.h"
#include "../real/supervise.h"
#include "../strategies/strategy.h"
#include "../core/table_notes.h"
#include "html.h"
#include "outputs.h"
#include "scenario.h"

/* cpus_max: the most CPUs any rank may run on (binding_of). */
static void print_header(const struct config *cfg, const struct plan *p,
                         const struct real_result *res, const struct workload *wl, int cpus_max)
{
    char desc[512];
    workload_describe(wl, desc, sizeof desc);
    printf("%s on %d MPI rank%s", p->strategy, p->n_workers, p->n_workers == 1 ? "" : "s");
    if (p->n_servers) printf(" + %d server%s", p->n_servers, p->n_servers == 1 ? "" : "s");
    if (cpus_max == 1) printf(", each bound to a core");
    else if (cpus_max > 1) printf(", not bound (each may run on %d cores)", cpus_max);
    else printf(", binding unknown");
    printf(", %s\n%s; batch %d, %lld steps of %s\n\n", res->device, desc, p->batch,
           (long long)res->steps, cfg->data);
    const struct strategy *st = strategy_find(cfg->strategy, &(struct err){0});
    if (st) scenario_print_notes(stdout, st, cfg, p, "\n");   /* as sim says them */
    scenario_note_failure_options(stdout, cfg, p, false, "\n");
    scenario_note_tf32_unread(stdout, cfg, "note:", "\n");
}

/* Collective: the most CPUs a rank of the job may run on (real/job.h),
 * -1 when a rank cannot tell. --bind in the report's config becomes what
 * was found (core when every rank has one CPU). */
static int binding_of(struct config *cfg, int *cpus_max, struct err *e)
{
    TRY(job_cpus_most(cpus_max, e));
    if (*cpus_max >= 1) snprintf(cfg->bind, sizeof cfg->bind, "%s", *cpus_max == 1 ? "core" : "none");
    return 0;
}

/* are_commits: the supervisor had the job write shrink's or continue's
 * commits as its checkpoints (--commit-every, in memory); the user's
 * --checkpoint-dir, if any, got none. */
static void print_details(const struct real_result *res, bool are_commits)
{
    const struct report *r = &res->report;
    printf("\nwall time %.3g s", res->makespan_s);
    /* the curves go on from step 1 (the checkpoint carried them) */
    if (res->first_step > 0)
        printf(" (steps %lld to %lld: resumed at step %lld)", (long long)res->first_step + 1,
               (long long)res->steps, (long long)res->first_step);
    if (r->n_loss_curve > 0)
        printf("; training loss %.4f at step %lld, %.4f at step %lld", r->loss_curve[0].loss,
               (long long)r->loss_curve[0].step + 1,
               r->loss_curve[r->n_loss_curve - 1].loss,
               (long long)r->loss_curve[r->n_loss_curve - 1].step + 1);
    if (r->has_final)
        printf("\ntest accuracy %.4f, test loss %.4f", r->final.test_accuracy, r->final.loss);
    for (int i = 0; i + 1 < r->n_accuracy_curve; i++)
        printf("%s step %lld: %.4f", i ? "," : "\n  accuracy during training:",
               (long long)r->accuracy_curve[i].step, r->accuracy_curve[i].accuracy);
    putchar('\n');
    char hosts[1024];
    host_map_describe(r, hosts, sizeof hosts);
    if (hosts[0]) printf("ranks on %s\n", hosts);
    if (res->n_checkpoints > 0)
        printf("%s: %d written, %.3f s\n", are_commits ? "commits (in memory)" : "checkpoints",
               res->n_checkpoints, res->checkpoint_s);
    if (r->failure.happened && r->failure.checkpoint_s > res->checkpoint_s)
        printf("checkpoints and commits of the whole run (every job): %.3f s\n",
               r->failure.checkpoint_s);
    if (r->staleness.n_histogram > 0) {
        /* pushes to servers, or (steps in flight) a worker's own late updates */
        const struct strategy *st = strategy_find(r->strategy, &(struct err){0});
        printf("staleness of applied %s: mean %.2f, max %lld\n",
               st && !strategy_has_servers(st) ? "updates" : "pushes", r->staleness.mean,
               (long long)r->staleness.max);
    }
}

/* What the failures cost (real/supervise.h measured them; the makespan
 * above is the last job's). */
static void print_failure(const struct report *r)
{
    if (!r->failure.happened) return;
    printf("failure: rank %d, %.3g s into its job; --on-failure %s; %d failure%s; time lost "
           "%.3g s (detection %.3g s, relaunch %.3g s, redone work %.3g s, %d step%s redone); "
           "goodput %.1f%%", r->failure.rank, r->failure.time_s, r->failure.policy,
           r->failure.n_failures, r->failure.n_failures == 1 ? "" : "s", r->failure.lost_s,
           r->failure.detect_s, r->failure.relaunch_s, r->failure.redone_s,
           r->failure.steps_redone, r->failure.steps_redone == 1 ? "" : "s",
           100 * r->failure.goodput);
    if (r->failure.has_workers_after)
        printf("; ended with %d worker%s", r->failure.workers_after,
               r->failure.workers_after == 1 ? "" : "s");
    if (r->has_final) printf("; test accuracy still reached %.4f", r->final.test_accuracy);
    putchar('\n');
}

static int write_outputs(const struct config *cfg, const struct plan *p,
                         const struct real_result *res, struct err *e)
{
    if (cfg->json_path[0]) TRY_CTX(e, report_write_json(&res->report, cfg->json_path, e), "--json");
    const struct report *rows[] = {&res->report};
    if (cfg->csv_path[0]) TRY_CTX(e, report_write_csv(rows, 1, NULL, cfg->csv_path, e), "--csv");
    const struct trace_scenario sc = {.mode = "real", .cfg = res->report.config,
                                      .config_groups = res->report.config_groups,
                                      .steps = res->steps,
                                      .hosts = res->report.rank_hosts,
                                      .n_hosts = res->report.has_hosts ? res->report.n_rank_hosts : 0,
                                      .has_clock_error = true,
                                      .clock_error_s = res->clock_error_s};
    if (cfg->trace_path[0])
        TRY_CTX(e, trace_write_chrome(&res->trace, p, &sc, cfg->trace_path, e), "--trace");
    char scenario[CONFIG_PATH_BYTES + 256];
    snprintf(scenario, sizeof scenario, "%s on %d MPI rank%s, %s, batch %d, %lld steps of %s",
             p->strategy, p->n_workers, p->n_workers == 1 ? "" : "s", res->device, p->batch,
             (long long)res->steps, cfg->data);
    return html_write_reports(cfg, (struct html_run){.command = "real", .scenario = scenario},
                              rows, 1, NULL, e);
}

static void print_timeline(const struct plan *p, const struct real_result *res)
{
    const struct trace *t = &res->trace;
    double t_end = 0;
    for (size_t i = 0; i < t->spans.len; i++)
        if (t->spans.items[i].end_s > t_end) t_end = t->spans.items[i].end_s;
    printf("\n%s, first steps: ", p->strategy);
    timeline_print(stdout, t->spans.items, t->spans.len, p->n_ranks, t_end, timeline_width(), 64,
                   "s");
}

/* Under the user's own mpirun with neither --np nor --devices: the job's
 * ranks are the devices (less the servers of a ps-* strategy). */
static int take_job_size(struct config *cfg, int size, struct err *e)
{
    if (config_is_set(cfg, "np") || config_is_set(cfg, "devices")) return 0;
    const struct strategy *st = strategy_find(cfg->strategy, e);
    if (!st) return e->code;
    long long servers = strategy_has_servers(st) ? cfg->servers : 0;
    if (size - servers < 1)
        return err_set(e, ERR_INPUT, "%s with --servers %lld needs more than the job's %d MPI "
                       "processes", st->name, servers, size);
    cfg->devices = size - servers;
    return 0;
}

/* Inside the MPI job (MPI initialised): every rank runs, rank 0 reports. */
static int run_rank(const struct command *self, struct scenario *s, const struct plan *p,
                    const struct plan_index *ix, int rank)
{
    const char *progress = getenv("STRATA_PROGRESS");
    struct real_setup setup = {
        .cfg = &s->cfg, .wl = s->wl, .ix = ix, .keep_steps = outputs_keep_steps(&s->cfg),
        .show_progress = (progress && !strcmp(progress, "1")) || isatty(STDERR_FILENO),
    };
    struct real_result res = {0};
    struct err e = {0};
    int status = 0;
    int cpus_max = -1;
    int rc = binding_of(&s->cfg, &cpus_max, &e);
    if (rc == 0) rc = real_run(&setup, &res, &e);
    /* the report's config is the user's, not the supervisor's overrides */
    if (rc == 0) rc = failure_env_restore_options(&s->cfg, &e);
    if (rank == 0) {
        if (rc == 0) {
            print_header(&s->cfg, p, &res, s->wl, cpus_max);
            const struct report *rows[] = {&res.report};
            report_print_table(stdout, rows, 1, NULL);
            table_legend_print(stdout, rows, 1);
            print_details(&res, failure_env_overrides("checkpoint-every"));
            straggler_print(stdout, NULL, res.report.paces, res.report.n_paces);
            print_failure(&res.report);
            if (s->cfg.timeline) print_timeline(p, &res);
            rc = write_outputs(&s->cfg, p, &res, &e);
        }
        if (rc < 0) status = scenario_fail(self, &e);
        fflush(stdout);
    } else if (rc < 0) {
        status = err_exit_status(rc);
    }
    real_result_release(&res);
    return status;
}

/* Outside: check what can be checked here, then become the MPI job. */
static int launch(const struct command *self, struct scenario *s, const struct plan *p,
                  int argc, char **argv)
{
    struct err e = {0};
    struct data d = {0};
    /* a missing data set says so once, here, not once per rank */
    if (device_check(s->cfg.device, &e) < 0 || comm_check(s->cfg.comm, &e) < 0 ||
        checkpoint_check(&s->cfg, p, &e) < 0 ||
        checkpoint_check_dir(&s->cfg, supervise_writes_commits(&s->cfg, p), &e) < 0 ||
        data_load(s->cfg.data, (uint64_t)s->cfg.seed, &d, &e) < 0 ||
        data_check_model(&d, s->wl->layers[0].in, (int)s->wl->n_classes, &e) < 0) {
        data_release(&d);
        return scenario_fail_in(self, s, &e);
    }
    int64_t steps = real_steps(&s->cfg, d.train.n);
    data_release(&d);
    /* a --resume of another run, or a damaged one, is said here, before
     * any rank starts (else each rank says it and mpirun aborts the job) */
    if (checkpoint_check_resume(&s->cfg, p, workload_params(s->wl, 0, s->wl->n_layers), steps,
                                &e) < 0)
        return scenario_fail_in(self, s, &e);
    int exit_code = 0;
    struct supervise_job job = {.command = self->name, .argc = argc, .argv = argv,
                                .cfg = &s->cfg, .p = p, .show_progress = isatty(STDERR_FILENO),
                                .steps = steps};
    if (supervise_run(&job, &exit_code, &e) < 0) return scenario_fail(self, &e);
    return exit_code;
}

int cmd_real(const struct command *self, int argc, char **argv)
{
    struct err e = {0};
    struct scenario s;
    struct plan *p = NULL;
    struct plan_index *ix = NULL;
    int status = 0;
    int rc = scenario_load(&s, self, argc, argv, &e);
    const bool is_rank = rc == 0 && launch_is_mpi_rank();
    int rank = 0, n_ranks = 0;
    if (is_rank && job_init(&rank, &n_ranks, &e) < 0) {
        status = scenario_fail(self, &e);
        scenario_release(&s);
        return status;
    }
    if (is_rank) rc = take_job_size(&s.cfg, n_ranks, &e);
    if (rc == 0) rc = real_prepare(&s.cfg, s.wl, &p, &ix, &e);
    if (rc == 0) rc = supervise_check_fail(&s.cfg, p, &e);
    if (rc != 0)
        status = rc == CONFIG_HELP ? 0 : scenario_fail_in(self, &s, &e);
    else if (is_rank)
        status = run_rank(self, &s, p, ix, rank);
    else
        status = launch(self, &s, p, argc, argv);
    if (is_rank) job_finalize();
    plan_index_free(ix);
    plan_free(p);
    scenario_release(&s);
    return status;
}

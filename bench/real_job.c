#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/temp_files.h"
#include "../real/launch.h"
#include "../real/real.h"
#include "real_job.h"

/* The options a job takes from the scenario; --devices becomes --np, and
 * --save-params stays with the user's own `strata real` runs. */
/* OPTG_LAUNCH: --bind reaches the job; its --np is job_argv's own. */
/* OPTG_LIMITS: a raised --max-memory holds in the job too. */
#define JOB_GROUPS                                                                          \
    (OPTG_SCENARIO | OPTG_RUN | OPTG_TRAIN | OPTG_EXEC | OPTG_DISTURB | OPTG_LAUNCH | OPTG_LIMITS)

static bool is_kept(const char *word)
{
    return strcmp(word, "--devices") && strcmp(word, "--save-params") && strcmp(word, "--np");
}

/* --checkpoint-dir and --resume name a directory per job, DIR/STRATEGY-npN,
 * so that the jobs of one compare or sweep keep their checkpoints apart and
 * the same command with --resume DIR finds each its own. */
static bool is_per_job_dir(const char *word)
{
    return !strcmp(word, "--checkpoint-dir") || !strcmp(word, "--resume");
}

/* argv of `strata real` for the job; NULL-terminated, the strings borrowed
 * from self, opts, np_text, json and dirs (room for 2 paths of
 * LAUNCH_PATH_BYTES) except the array itself. */
static char **job_argv(char *self, char *strategy, char *np_text, char **opts, int n_opts,
                       char *json, char (*dirs)[LAUNCH_PATH_BYTES], struct err *e)
{
    char **argv = XCALLOC(e, (size_t)n_opts + 10, sizeof *argv);
    if (!argv) return NULL;
    int k = 0;
    argv[k++] = self;
    argv[k++] = (char *)"real";
    argv[k++] = (char *)"--strategy";
    argv[k++] = strategy;
    argv[k++] = (char *)"--np";
    argv[k++] = np_text;
    /* (--name, value) pairs, but a flag (--tf32, of OPTG_EXEC) is its name
     * alone: read as a pair, it took the next option's name for its value */
    int n_dirs = 0;
    for (int i = 0; i < n_opts; i++) {
        const struct opt_spec *o = config_find(opts[i] + 2);
        const bool has_value = !(o && o->type == OPT_FLAG) && i + 1 < n_opts;
        if (is_kept(opts[i])) {
            argv[k++] = opts[i];
            if (has_value) argv[k++] = opts[i + 1];
            if (has_value && is_per_job_dir(opts[i]) && opts[i + 1][0] && n_dirs < 2) {
                snprintf(dirs[n_dirs], LAUNCH_PATH_BYTES, "%s/%s-np%s", opts[i + 1], strategy,
                         np_text);
                argv[k - 1] = dirs[n_dirs++];
            }
        }
        if (has_value) i++;
    }
    argv[k++] = (char *)"--json";
    argv[k++] = json;
    return argv;
}

/* Would `strata real` take this scenario for this strategy? */
static int check_fits(const struct config *cfg, const struct workload *wl, const char *strategy,
                      int np, struct err *e)
{
    struct config one = *cfg;
    one.positional = NULL;
    one.n_positional = 0;
    snprintf(one.strategy, sizeof one.strategy, "%s", strategy);
    one.devices = one.np = np;   /* as the job's --np will say */
    struct plan *p = NULL;
    int rc = real_prepare(&one, wl, &p, NULL, e);
    plan_free(p);
    return rc;
}

int real_job_run(const struct config *cfg, const struct workload *wl, const char *strategy,
                 int np, const char *strata_bin, struct report_doc *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    TRY(check_fits(cfg, wl, strategy, np, e));
    char self[LAUNCH_PATH_BYTES], json[] = "/tmp/strata-job-XXXXXX", np_text[32], name[64];
    if (strata_bin) snprintf(self, sizeof self, "%s", strata_bin);
    else TRY(launch_self_path("strata", self, sizeof self, e));
    int fd = mkstemp(json);
    if (fd < 0) return err_set(e, ERR_IO, "cannot make a temporary file in /tmp for a report");
    close(fd);
    /* removed on SIGTERM too, which ends the job first (launch_run) */
    int slot = temp_files_track(json, false);
    snprintf(np_text, sizeof np_text, "%d", np);
    snprintf(name, sizeof name, "%s", strategy);

    char **opts = NULL, **argv = NULL, dirs[2][LAUNCH_PATH_BYTES];
    int n_opts = 0, exit_code = 0;
    int rc = config_to_args(cfg, JOB_GROUPS, &opts, &n_opts, e);
    if (rc == 0 && !(argv = job_argv(self, name, np_text, opts, n_opts, json, dirs, e)))
        rc = ERR_NOMEM;
    if (rc == 0) rc = launch_run(argv, "/dev/null", &exit_code, e);
    if (rc == 0 && exit_code != 0)
        rc = err_set(e, exit_code == 2 ? ERR_INPUT : ERR_RUN,
                     "`strata real --strategy %s --np %d` exited with status %d (its message is "
                     "above)", strategy, np, exit_code);
    if (rc == 0) rc = report_doc_read(json, out, e);
    if (rc == 0 && out->n != 1) {
        report_doc_release(out);
        rc = err_set(e, ERR_RUN, "the job of %s wrote %d reports, not one", strategy, out->n);
    }
    unlink(json);
    temp_files_forget(slot);
    free(argv);
    config_args_free(opts);
    return rc;
}

/* Every numeric option at the ends of its range (core/config's table), and
 * the smallest positive value of those that start at 0, through `strata sim`
 * and `strata schedule`: each run exits 0, or 2 with a message; never a
 * crash, never a time that is NaN or infinite in the report (issue 15:
 * item 4). The budget (core/budget.h) is what keeps the largest values
 * from running for hours: they are refused before anything is built. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(extremes, .timeout = 600);

/* Options that only real runs read, or that launch processes. */
static bool is_skipped(const struct opt_spec *o)
{
    static const char *const skip[] = {"np", "timeout", "jobs", "repeat"};
    for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
        if (!strcmp(o->name, skip[i])) return true;
    return false;
}

/* The report's times: finite numbers, where a writer puts null for a
 * non-finite one. */
static void expect_finite_times(const char *json_path, const char *what)
{
    cJSON *doc = read_json(json_path);
    const char *keys[][2] = {{"step_time_s", "mean"}, {"step_time_s", "p99"},
                             {"throughput_samples_per_s", NULL}};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, keys[i][0]);
        if (v && keys[i][1]) v = cJSON_GetObjectItemCaseSensitive(v, keys[i][1]);
        cr_expect(cJSON_IsNumber(v) && isfinite(v->valuedouble), "%s: %s%s%s is %s", what,
                  keys[i][0], keys[i][1] ? "." : "", keys[i][1] ? keys[i][1] : "",
                  v ? cJSON_PrintUnformatted(v) : "missing");
    }
    cJSON_Delete(doc);
}

/* `strata CMD --NAME VALUE` (sim: with 2 steps unless NAME is steps, a
 * JSON report, and the arithmetic on a small model when the option is a
 * training one): 0 with finite times, or 2 with a message. */
static void run_extreme(const char *cmd, const struct opt_spec *o, const char *value)
{
    const char *name = o ? o->name : "straggler";
    char flag[80], what[200];
    snprintf(flag, sizeof flag, "--%s", name);
    const char *json = test_tmp_path("r.json");
    remove(json);
    bool is_sim = !strcmp(cmd, "sim");
    const char *args[16];
    int n = 0;
    args[n++] = cmd;
    args[n++] = flag;
    args[n++] = value;
    if (is_sim) {
        args[n++] = "--json";
        args[n++] = json;
        if (strcmp(name, "steps")) args[n++] = "--steps", args[n++] = "2";
        if (o && (o->groups & OPTG_TRAIN) && strcmp(name, "epochs"))
            args[n++] = "--numerics", args[n++] = "--data", args[n++] = "synthetic",
            args[n++] = "--model", args[n++] = "mlp:784-16-10";
    }
    args[n] = NULL;
    snprintf(what, sizeof what, "strata %s %s %s%s", cmd, flag, value,
             n > 7 ? " --numerics" : "");
    struct run r = run_strata(args);
    cr_expect(r.status == 0 || r.status == 2, "%s: status %d (-1 = a signal); stderr: %s", what,
              r.status, r.err);
    if (r.status == 2)
        cr_expect(strlen(r.err) > strlen("strata sim: ") + 4, "%s: exit 2 with no message: '%s'",
                  what, r.err);
    if (r.status == 0 && is_sim) expect_finite_times(json, what);
    cr_log_info("%s: %d %.200s", what, r.status, r.err);
    run_free(&r);
}

static void format_bound(const struct opt_spec *o, double v, char *buf, size_t n)
{
    if (o->type == OPT_INT) snprintf(buf, n, "%lld", (long long)v);
    else snprintf(buf, n, "%.17g", v);
}

/* Every numeric option of the command's groups at min, max, and just above
 * min when min is 0 (the smallest rate or fraction a user can give). */
static void sweep_extremes(const char *cmd, unsigned groups)
{
    int n = 0;
    for (size_t i = 0; i < config_n_options; i++) {
        const struct opt_spec *o = &config_options[i];
        if (!(o->groups & groups) || is_skipped(o)) continue;
        if (o->type != OPT_INT && o->type != OPT_REAL) continue;
        char v[64];
        format_bound(o, o->min, v, sizeof v);
        run_extreme(cmd, o, v);
        format_bound(o, o->max, v, sizeof v);
        run_extreme(cmd, o, v);
        if (o->min == 0) {
            run_extreme(cmd, o, o->type == OPT_INT ? "1" : "1e-9");
            if (o->type == OPT_REAL) run_extreme(cmd, o, "5e-324");
        }
        n++;
    }
    cr_assert_gt(n, 5, "too few numeric options found for %s", cmd);
}

/* The groups of `strata sim` and `strata schedule` (cli/main.c's table). */
Test(extremes, every_numeric_option_of_sim_at_its_ends)
{
    sweep_extremes("sim", OPTG_SCENARIO | OPTG_STRATEGY | OPTG_RUN | OPTG_SIM | OPTG_DISTURB |
                              OPTG_TRAIN | OPTG_LIMITS);
}

Test(extremes, every_numeric_option_of_schedule_at_its_ends)
{
    sweep_extremes("schedule", OPTG_SCENARIO | OPTG_STRATEGY | OPTG_LIMITS);
}

/* The disturbances at the ends of theirs (core/straggler.h). */
Test(extremes, stragglers_at_their_ends)
{
    static const char *const models[] = {
        "exp:0", "exp:1000000", "lognormal:0", "lognormal:10", "slow:0=1", "slow:0=1000000",
        "slow:3=1000000,2=1000000", "pause:0:0", "pause:1:1000000", "pause:1:5e-324",
    };
    for (size_t i = 0; i < sizeof models / sizeof *models; i++)
        run_extreme("sim", NULL, models[i]);
}

/* Goodput planning: Young's and Daly's optimum checkpoint intervals, the
 * first-order goodput, and the model a set of reports implies (goodput.h
 * states the assumptions). */
#include <math.h>

#include "goodput.h"

static bool is_positive(double x)
{
    return isfinite(x) && x > 0;
}

double goodput_job_mtbf_s(double device_mtbf_s, long long n_devices)
{
    if (!is_positive(device_mtbf_s) || n_devices < 1) return NAN;
    return device_mtbf_s / (double)n_devices;
}

double goodput_young_interval_s(double checkpoint_s, double job_mtbf_s)
{
    if (!is_positive(job_mtbf_s) || !(checkpoint_s >= 0)) return NAN;
    return sqrt(2 * checkpoint_s * job_mtbf_s);
}

double goodput_daly_interval_s(double checkpoint_s, double job_mtbf_s)
{
    double young = goodput_young_interval_s(checkpoint_s, job_mtbf_s);
    if (!isfinite(young)) return NAN;
    double x = checkpoint_s / (2 * job_mtbf_s);
    if (x >= 1) return job_mtbf_s;
    return young * (1 + sqrt(x) / 3 + x / 9) - checkpoint_s;
}

double goodput_first_order(double interval_s, double checkpoint_s, double restart_s,
                           double job_mtbf_s)
{
    if (!is_positive(interval_s) || !is_positive(job_mtbf_s)) return NAN;
    return 1 - checkpoint_s / interval_s - interval_s / (2 * job_mtbf_s) - restart_s / job_mtbf_s;
}

double goodput_steps_to_s(double steps, double step_s)
{
    return steps * step_s;
}

double goodput_s_to_steps(double interval_s, double step_s)
{
    return is_positive(step_s) ? interval_s / step_s : NAN;
}

/* The run's time: every compute rank ran --steps steps of --batch samples,
 * at the throughput measured over the whole run, failures and all. */
static double run_time_s(const struct report *r)
{
    const struct config *c = r->config;
    if (!c || c->steps <= 0 || !is_positive(r->throughput_samples_per_s)) return NAN;
    return (double)c->steps * (double)c->batch / r->throughput_samples_per_s;
}

bool goodput_informs_model(const struct report *r)
{
    return r && r->failure.happened;
}

bool goodput_model_of(const struct report *const *rs, int n, struct goodput_model *m)
{
    *m = (struct goodput_model){.step_s = NAN, .job_mtbf_s = NAN};
    double ckpt_s = 0, n_ckpts = 0, restart_s = 0, time_s = 0, mtbf_s = NAN;
    for (int i = 0; i < n; i++) {
        const struct report *r = rs[i];
        const struct config *c = r->config;
        /* The least median: checkpoints and redone steps only slow a step. */
        if (is_positive(r->step_time_s.p50) && !(r->step_time_s.p50 >= m->step_s))
            m->step_s = r->step_time_s.p50;
        if (c && c->mtbf_hours > 0 && !isfinite(mtbf_s))
            mtbf_s = goodput_job_mtbf_s(c->mtbf_hours * 3600, r->devices);
        if (c && c->checkpoint_every > 0 && c->steps > 0) {
            ckpt_s += r->failure.checkpoint_s;
            n_ckpts += (double)((c->steps - 1) / c->checkpoint_every);
        }
        if (r->failure.happened && r->failure.n_failures > 0) {
            m->n_failures += r->failure.n_failures;
            restart_s += r->failure.detect_s + r->failure.relaunch_s;
        }
        /* Runs that no failure hit count too: the rate is over all the time. */
        double t = run_time_s(r);
        if (isfinite(t)) time_s += t;
    }
    if (!isfinite(m->step_s)) return false;
    m->checkpoint_s = n_ckpts > 0 ? ckpt_s / n_ckpts : 0;
    m->restart_s = m->n_failures > 0 ? restart_s / m->n_failures : 0;
    if (isfinite(mtbf_s)) {
        m->job_mtbf_s = mtbf_s;
    } else if (m->n_failures > 0 && time_s > 0) {
        m->job_mtbf_s = time_s / m->n_failures;
        m->is_mtbf_observed = true;
    }
    return true;
}

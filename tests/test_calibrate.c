/* bench/calibrate.c: the link fit, nccl-tests' bandwidths, the compute
 * measurement on the cpu device, the profile, and `strata calibrate` as a
 * user runs it (an MPI job of 2 ranks) writing a profile that cluster_load
 * reads back. Expected values: the fit's closed form on exact points, the
 * bus-bandwidth factor 2(n-1)/n of nccl-tests' doc/PERFORMANCE.md, and the
 * FLOPs core/plan.c counts. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gsl/gsl_cdf.h>

#include "../bench/calibrate.h"
#include "../bench/calibrate_failure.h"
#include "../core/faults.h"
#include "../sim/cluster.h"

/* ---- the fit ------------------------------------------------------------ */

Test(calibrate, fit_recovers_alpha_and_beta_from_exact_points)
{
    /* t = 2 us + bytes / 5 GB/s at 8 B .. 32 MiB, as calibrate's sizes */
    int64_t bytes[16];
    double t[16];
    int n = 0;
    for (int64_t b = 8; b <= ((int64_t)32 << 20); b *= 4, n++) {
        bytes[n] = b;
        t[n] = 2e-6 + (double)b / 5e9;
    }
    double alpha = 0, beta = 0;
    struct err e = {0};
    cr_assert_eq(calib_fit_link(bytes, t, n, &alpha, &beta, &e), 0, "%s", e.msg);
    cr_expect_float_eq(alpha, 2e-6, 1e-12, "alpha %.6g, want 2e-6 (diff %.3g)", alpha, alpha - 2e-6);
    cr_expect_float_eq(beta / 5e9, 1.0, 1e-9, "beta %.6g, want 5e9", beta);
}

Test(calibrate, fit_weighs_sizes_by_relative_error)
{
    /* Two points 10% apart from the line of alpha 1 us, beta 1 GB/s: one
     * small one 10% slow, one large one 10% fast. A relative fit keeps
     * both within about 10%; plain least squares would put the whole
     * residual on the small point (alpha off by orders of magnitude). */
    int64_t bytes[] = {8, 1000, 1 << 20, 1 << 24};
    double t[4];
    for (int i = 0; i < 4; i++) t[i] = 1e-6 + (double)bytes[i] / 1e9;
    t[0] *= 1.1;
    t[3] *= 0.9;
    double alpha = 0, beta = 0;
    struct err e = {0};
    cr_assert_eq(calib_fit_link(bytes, t, 4, &alpha, &beta, &e), 0, "%s", e.msg);
    double worst = 0;
    for (int i = 0; i < 4; i++) {
        double off = fabs((alpha + (double)bytes[i] / beta) / t[i] - 1);
        if (off > worst) worst = off;
    }
    cr_expect_lt(worst, 0.12, "worst relative miss %.3f (margin: the 10%% planted)", worst);
    cr_expect(alpha > 0.5e-6 && alpha < 2e-6, "alpha %.3g, want about 1e-6", alpha);
}

Test(calibrate, fit_without_latency_sets_alpha_to_zero)
{
    /* times proportional to bytes but bent so the best line has a negative
     * intercept: alpha is clamped to 0, beta fitted alone */
    int64_t bytes[] = {1000, 2000, 4000};
    double t[] = {0.5e-6, 1.9e-6, 4.0e-6};
    double alpha = -1, beta = 0;
    struct err e = {0};
    cr_assert_eq(calib_fit_link(bytes, t, 3, &alpha, &beta, &e), 0, "%s", e.msg);
    cr_expect_eq(alpha, 0.0);
    cr_expect(beta > 0 && isfinite(beta));
}

Test(calibrate, fit_rejects_too_few_points_and_bad_times)
{
    int64_t bytes[] = {8, 64};
    double zero[] = {1e-6, 0}, nan_t[] = {1e-6, NAN}, flat[] = {1e-6, 1e-6};
    double a, b;
    struct err e = {0};
    cr_expect_eq(calib_fit_link(bytes, zero, 1, &a, &b, &e), ERR_INPUT);
    cr_expect_eq(calib_fit_link(bytes, zero, 2, &a, &b, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "want > 0"), "%s", e.msg);
    cr_expect_eq(calib_fit_link(bytes, nan_t, 2, &a, &b, &e), ERR_INPUT);
    /* the same time for 8 B and 64 B: no bandwidth, alpha alone would fit
     * but beta must be > 0 and finite for the profile */
    int rc = calib_fit_link(bytes, flat, 2, &a, &b, &e);
    cr_expect(rc == ERR_INPUT || (b > 0 && isfinite(b)), "rc %d, beta %g", rc, b);
}

Test(calibrate, gamma_fit_recovers_the_reduction_from_exact_all_reduce_times)
{
    /* all-reduce times made by the ring formula with gamma 3e-10 s/B */
    int64_t bytes[8];
    double t[8];
    int n = 0;
    for (int64_t b = 1024; n < 8; b *= 4, n++) {
        bytes[n] = b;
        t[n] = calib_ring_s(1e-6, 1e10, 3e-10, 2, b);
    }
    /* 2 ranks: 2 (alpha + n / (2 beta)) + n/2 gamma */
    cr_expect_float_eq(t[0], 2 * (1e-6 + 1024 / 2e10) + 512 * 3e-10, 1e-18);
    double g = calib_fit_gamma(bytes, t, n, 2, 1e-6, 1e10);
    cr_expect_float_eq(g / 3e-10, 1.0, 1e-9, "gamma %.6g, want 3e-10", g);
    /* times the transfers alone explain: no gamma, never a negative one */
    for (int i = 0; i < n; i++) t[i] = calib_ring_s(1e-6, 1e10, 0, 2, bytes[i]) * 0.9;
    cr_expect_eq(calib_fit_gamma(bytes, t, n, 2, 1e-6, 1e10), 0.0);
}

/* ---- bandwidths ------------------------------------------------------------ */

Test(calibrate, bus_bandwidth_is_nccl_tests_factor)
{
    cr_expect_float_eq(calib_algbw(1000000, 1e-3), 1e9, 1e-3);
    cr_expect_eq(calib_algbw(1000, 0), 0.0);
    /* 2(n-1)/n: 1 for 2 ranks, 1.75 for 8 */
    cr_expect_float_eq(calib_busbw_allreduce(4e9, 2), 4e9, 1e-3);
    cr_expect_float_eq(calib_busbw_allreduce(4e9, 8), 7e9, 1e-3);
    cr_expect_eq(calib_busbw_allreduce(4e9, 1), 0.0);
}

/* ---- compute ------------------------------------------------------------------ */

Test(calibrate, compute_counts_the_plans_flops_and_measures_positive_times)
{
    struct workload *wl = NULL;
    struct err e = {0};
    cr_assert_eq(workload_parse("mlp:64-32-10", &wl, &e), 0, "%s", e.msg);
    struct calib_compute c;
    cr_assert_eq(calib_measure_compute(test_cpu(1), wl, NULL, 16, 1, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(c.rows, 16);
    cr_assert_eq(c.n_layers, 2);
    /* core/workload.c: forward 2 in out + out a sample; backward the same
     * plus 2 in out for the input gradient, except on layer 0 */
    cr_expect_float_eq(c.layers[0].fwd_flops, 16.0 * (2 * 64 * 32 + 32), 1e-9);
    cr_expect_float_eq(c.layers[0].bwd_flops, 16.0 * (2 * 64 * 32 + 32), 1e-9);
    cr_expect_float_eq(c.layers[1].bwd_flops, 16.0 * (4 * 32 * 10 + 10), 1e-9);
    for (int l = 0; l < 2; l++)
        cr_expect(c.layers[l].fwd_s > 0 && c.layers[l].bwd_s > 0, "layer %d: %g %g s", l,
                  c.layers[l].fwd_s, c.layers[l].bwd_s);
    /* UPDATE: 5 arrays of the (64*32+32 + 32*10+10) parameters, 4 bytes each */
    cr_expect_eq(c.update_bytes, 5 * 4 * (64 * 32 + 32 + 32 * 10 + 10));
    cr_expect(isfinite(c.flops_per_s) && c.flops_per_s > 0, "flops_per_s %g", c.flops_per_s);
    cr_expect(isfinite(c.mem_bw_bytes_per_s) && c.mem_bw_bytes_per_s > 0);
    cr_expect(c.op_overhead_s > 0 && c.op_overhead_s < 1e-3, "overhead %g s", c.op_overhead_s);
    /* the step's ops: the sums of the layers' FLOPs, fixed rows (no data) */
    cr_expect(!c.is_gathered);
    cr_expect_float_eq(c.fwd_flops, c.layers[0].fwd_flops + c.layers[1].fwd_flops, 1e-9);
    cr_expect(c.fwd_s > 0 && c.bwd_s > 0 && c.update_s > 0);
    cr_expect_float_eq(c.flops_per_s, (c.fwd_flops + c.bwd_flops) / (c.fwd_s + c.bwd_s), 1e-6);
    workload_free(wl);
}

Test(calibrate, compute_gathers_its_inputs_from_the_data_set)
{
    struct data d = {0};
    struct err e = {0};
    cr_assert_eq(data_load("synthetic", 1, &d, &e), 0, "%s", e.msg);
    struct workload *wl = NULL;
    cr_assert_eq(workload_parse("mlp:784-16-10", &wl, &e), 0, "%s", e.msg);
    struct calib_compute c;
    cr_assert_eq(calib_measure_compute(test_cpu(1), wl, &d.train, 32, 1, &c, &e), 0, "%s", e.msg);
    cr_expect(c.is_gathered);
    cr_expect(c.fwd_s > 0 && isfinite(c.flops_per_s) && c.flops_per_s > 0);
    /* more rows than the data set has is refused, naming the limit */
    cr_expect_eq(calib_measure_compute(test_cpu(1), wl, &d.train, (int)d.train.n + 1, 1, &c, &e),
                 ERR_INPUT);
    workload_free(wl);
    data_release(&d);
}

Test(calibrate, compute_rejects_a_sizes_only_model_and_no_rows)
{
    struct workload *wl = NULL;
    struct err e = {0};
    cr_assert_eq(workload_parse("transformer:layers=2,hidden=64,seq=16,vocab=100", &wl, &e), 0,
                 "%s", e.msg);
    struct calib_compute c;
    cr_expect_eq(calib_measure_compute(test_cpu(1), wl, NULL, 8, 1, &c, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "--model"), "%s", e.msg);
    workload_free(wl);
    cr_assert_eq(workload_parse("mlp:8-4", &wl, &e), 0);
    cr_expect_eq(calib_measure_compute(test_cpu(1), wl, NULL, 0, 1, &c, &e), ERR_INPUT);
    workload_free(wl);
}

/* ---- the spread of op times ------------------------------------------------- */

/* n times at the normal's quantiles (i + 0.5) / n, times a median of 1 ms:
 * a log-normal sample with no sampling noise, whose fit must give sigma
 * back up to the quartiles' discretisation (1001 points: under 0.5%). */
static void lognormal_points(double *t, int n, double sigma)
{
    for (int i = 0; i < n; i++)
        t[i] = 1e-3 * exp(sigma * gsl_cdf_ugaussian_Pinv((i + 0.5) / n));
}

Test(calibrate, fit_sigma_recovers_a_lognormal_and_ignores_a_few_stalls)
{
    enum { N = 1001 };
    static double t[N];
    lognormal_points(t, N, 0.08);
    double sigma = calib_fit_sigma(t, N);
    cr_expect(fabs(sigma / 0.08 - 1) < 0.005, "sigma %.5f, want 0.08", sigma);
    /* 3% of the steps preempted for 20 times the op (another tenant): the
     * interquartile range hardly moves (the log's standard deviation would
     * go from 0.08 to about 0.53) */
    lognormal_points(t, N, 0.08);
    for (int i = 0; i < N; i += 33) t[i] *= 20;
    double with_stalls = calib_fit_sigma(t, N);
    fprintf(stderr, "fit sigma: %.5f on a log-normal of 0.08, %.5f with 3%% stalls of 20x "
            "(tolerance 10%%)\n", sigma, with_stalls);
    cr_expect(fabs(with_stalls / 0.08 - 1) < 0.1, "with stalls: sigma %.5f", with_stalls);
    /* no spread, too few points, and a sigma beyond a profile's bound */
    for (int i = 0; i < N; i++) t[i] = 1e-3;
    cr_expect_eq(calib_fit_sigma(t, N), 0);
    double three[3] = {1, 2, 3};
    cr_expect_eq(calib_fit_sigma(three, 3), 0);
    lognormal_points(t, N, 5);
    cr_expect_eq(calib_fit_sigma(t, N), JITTER_MAX_SIGMA);
}

/* ---- the profile --------------------------------------------------------------- */

Test(calibrate, profile_takes_the_measurements_and_round_trips)
{
    struct calib_compute c = {.flops_per_s = 7.5e10, .mem_bw_bytes_per_s = 3.2e10,
                              .op_overhead_s = 1.5e-7, .fwd_sigma = 0.03, .bwd_sigma = 0.05,
                              .update_sigma = 0.2, .n_timeshare = 3,
                              .timeshare_slowdown = {0.95, 1, 1.4}};
    struct calib_comm m = {.latency_s = 5e-7, .bw_bytes_per_s = 8e9, .gamma_s_per_byte = 4e-10};
    struct cluster p;
    calib_profile(&c, &m, 2, (int64_t)12 << 30, "calibrated-test", &p);
    /* one machine: one node that holds any number of ranks on its 2 cores */
    cr_expect_eq(p.devices_per_node, 1024);
    cr_expect_eq(p.cores_per_node, 2);
    cr_expect_eq(p.allreduce_gamma_s_per_byte, 4e-10);
    cr_expect_eq(p.device.flops_per_s, 7.5e10);
    cr_expect_eq(p.device.mem_bw_bytes_per_s, 3.2e10);
    cr_expect_eq(p.device.op_overhead_s, 1.5e-7);
    cr_expect_eq(p.intra.latency_s, 5e-7);
    cr_expect_eq(p.inter.bw_bytes_per_s, 8e9);
    char dir[64], path[128];
    test_make_dir(dir, sizeof dir, "calibrate");
    snprintf(path, sizeof path, "%s/p.profile", dir);
    struct err e = {0};
    cr_assert_eq(cluster_write(&p, path, &e), 0, "%s", e.msg);
    struct cluster back;
    cr_assert_eq(cluster_load(path, &back, &e), 0, "%s", e.msg);
    cr_expect_eq(back.device.flops_per_s, p.device.flops_per_s);
    cr_expect_eq(back.intra.bw_bytes_per_s, p.intra.bw_bytes_per_s);
    cr_expect_eq(back.device.mem_bytes, p.device.mem_bytes);
    cr_expect_eq(back.devices_per_node, p.devices_per_node);
    cr_expect_eq(back.jitter.forward_sigma, 0.03);
    cr_expect_eq(back.jitter.backward_sigma, 0.05);
    cr_expect_eq(back.jitter.update_sigma, 0.2);
    cr_assert_eq(back.n_timeshare, 3);
    cr_expect_eq(back.timeshare_slowdown[0], 0.95);
    cr_expect_eq(back.timeshare_slowdown[2], 1.4);
    test_remove_dir(dir);
}

/* ---- strata calibrate ------------------------------------------------------------ */

static bool is_positive(double x)
{
    return isfinite(x) && x > 0;
}

Test(calibrate, strata_calibrate_writes_a_profile_that_loads_with_the_measured_numbers,
     .timeout = 300)
{
    char dir[64], path[128];
    test_make_dir(dir, sizeof dir, "calibrate-cli");
    snprintf(path, sizeof path, "%s/local.profile", dir);
    struct run r = RUN("calibrate", "-o", path, "--model", "mlp:784-32-10", "--batch", "32",
                       "--data", "synthetic");
    cr_assert_eq(r.status, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", r.status, r.out, r.err);
    cr_expect_not_null(strstr(r.out, "busbw"), "no bandwidth table:\n%s", r.out);
    cr_expect_not_null(strstr(r.out, "16 samples an op"), "--batch 32 over 2 ranks:\n%s", r.out);
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect(!c.is_ideal);
    cr_expect(is_positive(c.device.flops_per_s), "flops_per_s %g", c.device.flops_per_s);
    cr_expect(is_positive(c.device.mem_bw_bytes_per_s));
    cr_expect(is_positive(c.device.op_overhead_s));
    cr_expect(c.device.mem_bytes > 0);
    cr_expect(is_positive(c.intra.bw_bytes_per_s) && is_positive(c.inter.bw_bytes_per_s));
    cr_expect(isfinite(c.intra.latency_s) && c.intra.latency_s >= 0);
    cr_expect(c.cores_per_node >= 1, "cores_per_node %d", c.cores_per_node);
    cr_expect(isfinite(c.allreduce_gamma_s_per_byte) && c.allreduce_gamma_s_per_byte >= 0);
    /* op times vary on any machine; the sigma is what the file carries */
    cr_expect(jitter_is_set(&c.jitter), "no spread measured");
    /* time-sharing: 1 .. cores + 2 processes, relative to the 2 ranks that
     * measured the compute together (so entry 2 is 1 exactly) */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cr_expect_eq(c.n_timeshare, cores + 2 < CLUSTER_MAX_TIMESHARE ? cores + 2
                                                                  : CLUSTER_MAX_TIMESHARE);
    cr_expect_eq(c.timeshare_slowdown[1], 1);
    for (int k = 0; k < c.n_timeshare; k++)
        cr_expect(is_positive(c.timeshare_slowdown[k]), "entry %d: %g", k + 1,
                  c.timeshare_slowdown[k]);
    cr_expect_not_null(strstr(r.out, "-> timeshare_slowdown"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "-> jitter_*_sigma"), "%s", r.out);
    /* the failure costs, measured (calibrate_failure.h) and read back as
     * the simulator prices a failure with them */
    cr_expect(is_positive(c.ckpt_write_bw_bytes_per_s), "%g", c.ckpt_write_bw_bytes_per_s);
    cr_expect(is_positive(c.ckpt_read_bw_bytes_per_s), "%g", c.ckpt_read_bw_bytes_per_s);
    /* the relaunch, timed at 1 .. cores + 1 ranks (at most 4), each > 0 */
    cr_expect_eq(c.restart_s_at_ranks.n, calib_relaunch_counts(cores), "%d points",
                 c.restart_s_at_ranks.n);
    for (int i = 0; i < c.restart_s_at_ranks.n; i++)
        cr_expect(c.restart_s_at_ranks.ranks[i] == i + 1 &&
                      is_positive(c.restart_s_at_ranks.s[i]),
                  "point %d: %d ranks %g s", i, c.restart_s_at_ranks.ranks[i],
                  c.restart_s_at_ranks.s[i]);
    cr_expect(isfinite(c.detect_s) && c.detect_s >= 0, "detect_s %g", c.detect_s);
    struct failure_costs costs = cluster_failure_costs(&c, (int64_t)1 << 20);
    cr_expect(is_positive(costs.checkpoint_s) && is_positive(costs.load_s));
    cr_expect_eq(failure_relaunch_s(&costs, 1), c.restart_s_at_ranks.s[0]);
    cr_expect_eq(costs.detect_s, c.detect_s);
    cr_expect_not_null(strstr(r.out, "-> restart_s_at_ranks"), "%s", r.out);
    /* the numbers loaded are the ones printed: the file is the printed text */
    char *text = test_slurp(path);
    cr_expect_not_null(strstr(r.out, text), "the file is not what was printed:\n%s\n---\n%s",
                       text, r.out);
    free(text);
    run_free(&r);
    test_remove_dir(dir);
}

/* Options of calibrate's groups that its profile does not depend on were
 * taken and said nothing (--steps, --epochs, --lr, --resume, ...). No
 * launcher is to be found, so nothing is measured: the note comes first. */
Test(calibrate, options_the_profile_does_not_depend_on_are_noted, .timeout = 120)
{
    setenv("STRATA_MPIRUN", "/nonexistent/mpirun", 1);
    struct run r = RUN("calibrate", "--data", "synthetic", "--model", "mlp:784-4-10", "--steps",
                       "3", "--resume", "/nonexistent");
    unsetenv("STRATA_MPIRUN");
    cr_expect_not_null(strstr(r.out, "note: --steps 3, --resume /nonexistent: calibrate's "
                              "profile does not depend on them"), "stdout: %s", r.out);
    run_free(&r);
}

Test(calibrate, strata_calibrate_bad_input_exits_2_before_measuring, .timeout = 300)
{
    struct run r = RUN("calibrate", "-o", "/nonexistent-dir/x.profile");
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.err, "-o"), "%s", r.err);
    run_free(&r);
    r = RUN("calibrate", "--model", "transformer:layers=2,hidden=64,seq=16,vocab=100");
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.err, "--model"), "%s", r.err);
    run_free(&r);
    r = RUN("calibrate", "--strategy", "mirrored");
    cr_expect_eq(r.status, 2, "calibrate takes no --strategy; stderr: %s", r.err);
    run_free(&r);
    /* --np ran 2 ranks whatever it said on one machine */
    const char *nps[] = {"1", "3"};
    for (size_t i = 0; i < 2; i++) {
        r = RUN("calibrate", "--np", nps[i]);
        cr_expect_eq(r.status, 2, "--np %s; stderr: %s", nps[i], r.err);
        cr_expect_not_null(strstr(r.err, "--np"), "%s", r.err);
        run_free(&r);
    }
}

/* ---- the failure costs ---------------------------------------------------------- */

Test(calibrate, checkpoint_io_times_a_checkpoints_bytes_and_leaves_nothing_behind)
{
    char dir[64];
    test_make_dir(dir, sizeof dir, "calibrate-io");
    struct calib_failure f = {0};
    struct err e = {0};
    cr_assert_eq(calib_measure_checkpoint_io(dir, 100000, 3, &f, &e), 0, "%s", e.msg);
    cr_expect_str_eq(f.dir, dir);
    cr_expect_eq(f.state_bytes, 100000);
    cr_expect_eq(f.n_io, 3);
    cr_expect(is_positive(f.write_s) && is_positive(f.ckpt_write_bw_bytes_per_s));
    /* bandwidth = bytes / the median time */
    cr_expect_float_eq(f.ckpt_write_bw_bytes_per_s * f.write_s, 100000, 1e-6);
    /* rmdir removes only an empty directory: nothing was left in it */
    cr_expect_eq(rmdir(dir), 0, "%s is not empty", dir);
    test_remove_dir(dir);
    cr_expect_eq(calib_measure_checkpoint_io("/nonexistent-dir", 10, 1, &f, &e), ERR_IO);
    cr_expect_not_null(strstr(e.msg, "/nonexistent-dir"), "%s", e.msg);
}

/* A save that fails part way (each save renames its rank file, then its
 * MANIFEST, into place) leaves nothing behind either: failing the third
 * save's first rename once left the first save's directory in /dev/shm,
 * since only the newest two were removed. */
Test(calibrate, checkpoint_io_that_fails_part_way_leaves_nothing_behind)
{
    for (long nth = 1; nth <= 8; nth++) {
        char dir[64];
        test_make_dir(dir, sizeof dir, "calibrate-io-fault");
        struct calib_failure f = {0};
        struct err e = {0};
        faults_arm(FAULT_RENAME, nth);
        int rc = calib_measure_checkpoint_io(dir, 100000, 4, &f, &e);
        faults_disarm();
        cr_expect_lt(rc, 0, "rename #%ld failed, yet the timing succeeded", nth);
        cr_expect_eq(rmdir(dir), 0, "rename #%ld failed: %s is not empty", nth, dir);
        test_remove_dir(dir);
    }
}

/* The path of the first entry of dir named prefix* into out, when there is one. */
static bool entry_named(const char *dir, const char *prefix, char *out, size_t n)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    bool found = false;
    for (struct dirent *de; !found && (de = readdir(d));)
        if (!strncmp(de->d_name, prefix, strlen(prefix))) {
            snprintf(out, n, "%s/%s", dir, de->d_name);
            found = true;
        }
    closedir(d);
    return found;
}

/* A child times a million saves; once its first step directory is there,
 * sig comes: the handler (core/temp_files) must remove the timing
 * directory, its saves and their files, and the child die of sig. Left
 * behind, each was a checkpoint's size in /dev/shm. */
static void killed_while_timing_leaves_nothing(int sig)
{
    char dir[64];
    test_make_dir(dir, sizeof dir, "calibrate-io-killed");
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        struct calib_failure f = {0};
        struct err e = {0};
        calib_measure_checkpoint_io(dir, 100000, 1000000, &f, &e);
        _exit(0);   /* not reached in the test's time */
    }
    char calib[256], save[512];
    bool is_saving = false;
    for (double t0 = test_now_s(); !is_saving && test_now_s() - t0 < 30; test_sleep_s(0.005))
        is_saving = entry_named(dir, "strata-calib-", calib, sizeof calib) &&
                    entry_named(calib, "step-", save, sizeof save);
    kill(pid, sig);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(is_saving, "the child never started saving");
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == sig,
              "the child must die of signal %d as it would without the handler", sig);
    cr_expect_eq(rmdir(dir), 0, "signal %d left %s behind in %s", sig,
                 entry_named(dir, "strata-calib-", calib, sizeof calib) ? calib : "entries", dir);
    test_remove_dir(dir);
}

Test(calibrate, checkpoint_io_killed_by_sigterm_or_sigint_leaves_nothing_behind)
{
    killed_while_timing_leaves_nothing(SIGTERM);
    killed_while_timing_leaves_nothing(SIGINT);
}

Test(calibrate, state_bytes_are_the_parameters_and_their_momentum)
{
    struct workload *wl = NULL;
    struct err e = {0};
    cr_assert_eq(workload_parse("mlp:784-32-10", &wl, &e), 0, "%s", e.msg);
    /* (784 x 32 + 32) + (32 x 10 + 10) floats, twice */
    cr_expect_eq(calib_state_bytes(wl), 2 * 4 * (784 * 32 + 32 + 32 * 10 + 10));
    workload_free(wl);
}

Test(calibrate, failure_env_round_trips_and_refuses_bad_text)
{
    struct calib_failure f = {.n_runs = 2, .detect_s = 0.05}, g = {0};
    f.relaunch = (struct relaunch_points){
        .n = 3, .ranks = {1, 2, 3}, .s = {0.6123456789, 0.684, 0.91}};
    char text[512];
    struct err e = {0};
    cr_assert_eq(calib_failure_format(&f, text, sizeof text, &e), 0, "%s", e.msg);
    cr_assert_eq(calib_failure_parse(text, &g, &e), 0, "%s", e.msg);
    cr_expect(g.n_runs == 2 && g.detect_s == f.detect_s && g.relaunch.n == 3, "%s", text);
    for (int i = 0; i < 3; i++)
        cr_expect(g.relaunch.ranks[i] == f.relaunch.ranks[i] && g.relaunch.s[i] == f.relaunch.s[i],
                  "point %d of %s", i, text);
    const char *bad[] = {"", "runs=0;relaunch_s_at_ranks=1:1;detect_s=0",
                         "runs=1;relaunch_s_at_ranks=1:-1;detect_s=0",
                         "runs=1;relaunch_s_at_ranks=2:1,1:1;detect_s=0",
                         "runs=1;relaunch_s_at_ranks=;detect_s=0",
                         "runs=1;relaunch_s_at_ranks=1:1;detect_s=0;x",
                         "runs=1;relaunch_2_s=1;relaunch_3_s=1;detect_s=0",
                         "runs=1;restart_s=1;detect_s=0", "relaunch_s_at_ranks=1:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(calib_failure_parse(bad[i], &g, &e), ERR_INPUT, "'%s'", bad[i]);
        cr_expect_not_null(strstr(e.msg, CALIB_FAILURE_ENV), "%s", e.msg);
    }
}

/* Ranks up to the cores start side by side, one more queues: 1 .. cores + 1
 * ranks are timed, at most CALIB_RELAUNCH_MAX_RANKS (this machine, 2
 * cores: 1, 2 and 3). */
Test(calibrate, relaunch_is_timed_from_one_rank_to_one_past_the_cores)
{
    cr_expect_eq(calib_relaunch_counts(1), 2);
    cr_expect_eq(calib_relaunch_counts(2), 3);
    cr_expect_eq(calib_relaunch_counts(16), CALIB_RELAUNCH_MAX_RANKS);
    cr_expect_eq(calib_relaunch_counts(0), 3, "unknown cores: taken as 2");
    /* the profile carries the points and prices with them alone */
    struct calib_failure f = {.n_runs = 1, .detect_s = 0.07};
    f.relaunch = (struct relaunch_points){.n = 3, .ranks = {1, 2, 3}, .s = {0.65, 0.684, 0.91}};
    struct cluster c = {.restart_s = 9, .restart_per_rank_s = 9};
    calib_failure_profile(&f, &c);
    struct failure_costs costs = cluster_failure_costs(&c, 1);
    cr_expect_float_eq(failure_relaunch_s(&costs, 1), 0.65, 1e-12);
    cr_expect_float_eq(failure_relaunch_s(&costs, 3), 0.91, 1e-12);
    cr_expect_eq(c.restart_s, 0, "the line of older profiles is not written beside the points");
}

/* nn/mlp.c on the cpu device: layout, initialisation, gradients against
 * finite differences, the stage and microbatch identities that pipelines
 * and data parallelism rely on, the update, and learning. Where a
 * comparison is not exact, the tolerance is stated and the largest
 * difference seen is logged (llm.c's test_gpt2 does the same). */
#include <criterion/criterion.h>

#include "helpers.h"
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/workload.h"
#include "../nn/device.h"
#include "../nn/mlp.h"

/* ---- helpers ----------------------------------------------------------- */

static struct mlp *make(const char *spec, uint64_t seed)
{
    struct err e = {0};
    struct workload *w = NULL;
    cr_assert_eq(workload_parse(spec, &w, &e), 0, "%s: %s", spec, e.msg);
    struct mlp *m = NULL;
    cr_assert_eq(mlp_create(w, test_cpu(0), seed, &m, &e), 0, "%s: %s", spec, e.msg);
    workload_free(w);
    return m;
}

static struct mlp_act *act(const struct mlp *m, int max_n)
{
    struct err e = {0};
    struct mlp_act *a = NULL;
    cr_assert_eq(mlp_act_create(m, max_n, &a, &e), 0, "%s", e.msg);
    return a;
}

/* n samples of m's input size, standard normal, and labels uniform over the
 * classes, from seed (caller frees). */
static void make_data(const struct mlp *m, int n, unsigned long seed, float **x, int32_t **y)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    int features = m->sizes[0], classes = m->sizes[m->n_layers];
    *x = malloc((size_t)n * features * sizeof **x);
    *y = malloc((size_t)n * sizeof **y);
    cr_assert(*x && *y);
    for (int i = 0; i < n * features; i++) (*x)[i] = (float)gsl_ran_gaussian(r, 1.0);
    for (int i = 0; i < n; i++) (*y)[i] = (int32_t)gsl_rng_uniform_int(r, (unsigned long)classes);
    gsl_rng_free(r);
}

/* Asserts that call succeeds; the call names OK's struct err as e_. */
#define OK(call)                                                    \
    do {                                                            \
        struct err e_ = {0};                                        \
        cr_assert_eq((call), 0, "%s: %s", #call, e_.msg);           \
    } while (0)

/* forward [0, L) + loss + backward [0, L) for n samples; returns the loss sum. */
static double full_step(struct mlp *m, struct mlp_act *a, const float *x, const int32_t *y,
                        int n)
{
    double loss;
    OK(mlp_forward(m, a, 0, m->n_layers, x, n, NULL, &e_));
    OK(mlp_loss(m, a, y, n, &loss, &e_));
    OK(mlp_backward(m, a, 0, m->n_layers, a->dlogits, n, NULL, &e_));
    return loss;
}

/* ---- construction and layout ------------------------------------------- */

/* A model made from spec and seed, activations for n samples, and n samples
 * of data from data_seed: where the gradient and step tests start. */
struct net {
    struct mlp *m;
    struct mlp_act *a;
    float *x;     /* (n, inputs) */
    int32_t *y;   /* (n) */
};

static struct net net_open(const char *spec, uint64_t seed, int n, unsigned long data_seed)
{
    struct net s = {.m = make(spec, seed)};
    s.a = act(s.m, n);
    make_data(s.m, n, data_seed, &s.x, &s.y);
    return s;
}

static void net_close(struct net *s)
{
    free(s->x);
    free(s->y);
    mlp_act_free(s->a);
    mlp_free(s->m);
}

/* A net and a twin of its model (the same spec and seed: the same
 * parameters, its own gradients) with activations for twin_n samples. */
struct twins {
    struct net net;
    struct mlp *twin;
    struct mlp_act *twin_a;
};

static struct twins twins_open(const char *spec, uint64_t seed, int n, unsigned long data_seed,
                               int twin_n)
{
    struct twins t = {.net = net_open(spec, seed, n, data_seed), .twin = make(spec, seed)};
    t.twin_a = act(t.twin, twin_n);
    return t;
}

static void twins_close(struct twins *t)
{
    mlp_act_free(t->twin_a);
    mlp_free(t->twin);
    net_close(&t->net);
}

Test(mlp, a_sizes_only_workload_is_refused)
{
    struct err e = {0};
    struct workload *w = NULL;
    cr_assert_eq(workload_parse("transformer:layers=2,hidden=64,seq=16,vocab=100", &w, &e), 0,
                 "%s", e.msg);
    struct mlp *m = (struct mlp *)&e;   /* must come back NULL */
    cr_expect_eq(mlp_create(w, test_cpu(0), 1, &m, &e), ERR_INPUT);
    cr_expect_null(m);
    cr_expect_not_null(strstr(e.msg, "sizes-only model"), "%s", e.msg);
    cr_expect_not_null(strstr(e.msg, "mlp:"), "no example in: %s", e.msg);
    workload_free(w);
}

/* 784*256+256 = 200960, 256*128+128 = 32896, 128*10+10 = 1290; 235146 in all,
 * the count core/workload.c gives. */
Test(mlp, one_block_layer_by_layer_weights_then_bias)
{
    struct err e = {0};
    struct workload *w = NULL;
    cr_assert_eq(workload_parse("mlp:784-256-128-10", &w, &e), 0);
    struct mlp *m = NULL;
    cr_assert_eq(mlp_create(w, test_cpu(0), 1, &m, &e), 0, "%s", e.msg);
    cr_expect_eq(m->n_params, 235146);
    cr_expect_eq(m->n_params, workload_params(w, 0, 3));
    cr_expect_eq(mlp_param_offset(m, 0), 0);
    cr_expect_eq(mlp_param_offset(m, 1), 200960);
    cr_expect_eq(mlp_param_offset(m, 2), 200960 + 32896);
    cr_expect_eq(mlp_param_offset(m, 3), 235146);
    for (int lo = 0; lo < 3; lo++)
        for (int hi = lo + 1; hi <= 3; hi++)
            cr_expect_eq(mlp_param_count(m, lo, hi), workload_params(w, lo, hi), "[%d,%d)", lo,
                         hi);
    cr_expect_eq(mlp_weight(m, m->params, 1), m->params + 200960);
    cr_expect_eq(mlp_bias(m, m->params, 1), m->params + 200960 + 256 * 128);
    cr_expect_eq(mlp_bias(m, m->grads, 2) + 10, m->grads + m->n_params);
    mlp_free(m);
    mlp_free(NULL);
    workload_free(w);
}

/* Layer 0 has 200704 weights drawn with std sqrt(2/784) = 0.050508; the
 * sample std of so many normals is within 1% of it with overwhelming
 * probability (its relative standard error is 1/sqrt(2N) = 0.16%). The last
 * layer is linear: std sqrt(1/128) = 0.088388, 1280 draws, within 6%
 * (about three standard errors of 2.0%). */
Test(mlp, he_initialisation_seeded_biases_zero)
{
    struct mlp *m = make("mlp:784-256-128-10", 42), *same = make("mlp:784-256-128-10", 42),
               *other = make("mlp:784-256-128-10", 43);
    cr_expect_eq(memcmp(m->params, same->params, (size_t)m->n_params * sizeof(float)), 0,
                 "the same seed gave different models");
    cr_expect_neq(memcmp(m->params, other->params, (size_t)m->n_params * sizeof(float)), 0);
    const struct { int layer; double std, tol; } want[] = {
        {0, sqrt(2.0 / 784), 0.01}, {1, sqrt(2.0 / 256), 0.02}, {2, sqrt(1.0 / 128), 0.06}};
    for (int i = 0; i < 3; i++) {
        int l = want[i].layer, in = m->sizes[l], out = m->sizes[l + 1];
        const float *w = mlp_weight(m, m->params, l), *b = mlp_bias(m, m->params, l);
        double s = 0, s2 = 0;
        for (int k = 0; k < in * out; k++) s += w[k], s2 += (double)w[k] * w[k];
        double mean = s / (in * out), sd = sqrt(s2 / (in * out) - mean * mean);
        cr_log_info("layer %d: weight std %.6f, want %.6f", l, sd, want[i].std);
        cr_expect(fabs(sd / want[i].std - 1) < want[i].tol, "layer %d: std %.6f, want %.6f", l,
                  sd, want[i].std);
        for (int k = 0; k < out; k++) cr_expect_eq(b[k], 0.0f);
    }
    for (int64_t i = 0; i < m->n_params; i++)
        if (m->grads[i] != 0 || m->momentum[i] != 0)
            cr_assert_fail("gradient or momentum %lld not zero at start", (long long)i);
    mlp_free(m);
    mlp_free(same);
    mlp_free(other);
}

Test(mlp, ranges_and_sizes_out_of_bounds_are_refused)
{
    struct mlp *m = make("mlp:7-5-4-3", 1);
    struct mlp_act *a = act(m, 4), *tiny = NULL;
    float x[5 * 7] = {0};
    struct err e = {0};
    cr_expect_eq(mlp_forward(m, a, 0, 3, x, 5, NULL, &e), ERR_INPUT, "5 samples into 4");
    cr_expect_not_null(strstr(e.msg, "1 to 4"), "%s", e.msg);
    cr_expect_eq(mlp_forward(m, a, 2, 2, x, 1, NULL, &e), ERR_INPUT);
    cr_expect_eq(mlp_forward(m, a, 0, 4, x, 1, NULL, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "[0, 4)"), "%s", e.msg);
    cr_expect_eq(mlp_act_create(m, 0, &tiny, &e), ERR_INPUT);
    cr_expect_null(tiny);
    OK(mlp_forward(m, a, 0, 3, x, 2, NULL, &e_));
    cr_expect_eq(mlp_backward(m, a, 0, 3, a->dlogits, 3, NULL, &e), ERR_INPUT,
                 "backward of 3 after a forward of 2");
    mlp_act_free(a);
    mlp_act_free(NULL);
    mlp_free(m);
}

/* ---- gradients against finite differences ------------------------------ */

/* The loss sum of mlp m's architecture with parameters p (double, m's
 * layout) on n samples, computed here in double from the definitions: an
 * independent reference for mlp.c's float forward. */
static double ref_loss_of(const struct mlp *m, const double *p, const float *x,
                          const double *x_double, const int32_t *y, int n)
{
    double cur[64], next[64], loss = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < m->sizes[0]; j++)
            cur[j] = x_double ? x_double[i * m->sizes[0] + j] : x[i * m->sizes[0] + j];
        for (int l = 0; l < m->n_layers; l++) {
            int in = m->sizes[l], out = m->sizes[l + 1];
            const double *w = p + m->offset[l], *b = w + in * out;
            for (int o = 0; o < out; o++) {
                double s = b[o];
                for (int k = 0; k < in; k++) s += cur[k] * w[k * out + o];
                next[o] = l < m->n_layers - 1 && s < 0 ? 0 : s;
            }
            memcpy(cur, next, (size_t)out * sizeof *cur);
        }
        int classes = m->sizes[m->n_layers];
        double mx = cur[0], z = 0;
        for (int c = 1; c < classes; c++) mx = fmax(mx, cur[c]);
        for (int c = 0; c < classes; c++) z += exp(cur[c] - mx);
        loss += log(z) - (cur[y[i]] - mx);
    }
    return loss;
}

static double ref_loss(const struct mlp *m, const double *p, const float *x, const int32_t *y,
                       int n)
{
    return ref_loss_of(m, p, x, NULL, y, n);
}

/* Every weight and bias gradient of mlp:7-5-4-3 on a batch of 6 against
 * central differences (f(p+h) - f(p-h)) / 2h of the double reference, h =
 * 1e-5: truncation error ~h^2 and rounding ~1e-16/h, both ~1e-10, so the
 * reference is exact to far below float. Tolerance: |g - fd| <= 1e-5
 * max(|fd|, 0.01): float's ~1e-7 per operation over a few dozen operations,
 * with a floor for gradients near zero. The forward's loss must equal the reference's to 1e-6. */
Test(mlp, gradients_match_central_differences_in_double)
{
    struct net net = net_open("mlp:7-5-4-3", 7, 6, 11);
    /* nudge the biases off zero so that they matter to the check too */
    for (int l = 0; l < 3; l++)
        for (int o = 0; o < net.m->sizes[l + 1]; o++)
            mlp_bias(net.m, net.m->params, l)[o] = 0.1f * (o - 1);
    double loss = full_step(net.m, net.a, net.x, net.y, 6);

    double *p = malloc((size_t)net.m->n_params * sizeof *p);
    cr_assert_not_null(p);
    for (int64_t i = 0; i < net.m->n_params; i++) p[i] = net.m->params[i];
    double ref = ref_loss(net.m, p, net.x, net.y, 6);
    cr_expect(fabs(loss - ref) < 1e-6 * fabs(ref), "loss %.9f, reference %.9f", loss, ref);

    const double h = 1e-5;
    double worst = 0, worst_abs = 0;
    for (int64_t i = 0; i < net.m->n_params; i++) {
        double keep = p[i];
        p[i] = keep + h;
        double up = ref_loss(net.m, p, net.x, net.y, 6);
        p[i] = keep - h;
        double down = ref_loss(net.m, p, net.x, net.y, 6);
        p[i] = keep;
        double fd = (up - down) / (2 * h), g = net.m->grads[i];
        double rel = fabs(g - fd) / fmax(fabs(fd), 0.01);
        cr_expect(rel <= 1e-5, "parameter %lld: backward %.9g, finite difference %.9g",
                  (long long)i, g, fd);
        worst = fmax(worst, rel);
        worst_abs = fmax(worst_abs, fabs(g - fd));
    }
    cr_log_info("gradient check, %lld parameters of mlp:7-5-4-3, batch 6: largest difference "
                "%.3g (relative, tolerance 1e-5), %.3g absolute; loss %.9f vs %.9f",
                (long long)net.m->n_params, worst, worst_abs, loss, ref);
    free(p);
    net_close(&net);
}

/* The same check through mlp.c's own float forward, so that forward and
 * backward are held against each other with no reference between them. In
 * float a step h = 1e-2 is needed (rounding ~6e-8 |f| / h); a parameter
 * whose step flips a ReLU is skipped (the difference straddles a kink; there
 * the backward's one-sided answer is right and fd is not). Tolerance:
 * |g - fd| <= 2e-3 max(|fd|, 0.01) + 1e-4: truncation (h^2/6 times the
 * third derivative) ~1e-5, rounding ~1e-6 / 2h ~ 5e-5 absolute. */
Test(mlp, gradients_match_central_differences_through_the_float_forward)
{
    struct net net = net_open("mlp:7-5-4-3", 5, 6, 13);
    full_step(net.m, net.a, net.x, net.y, 6);
    /* the ReLU pattern of the unperturbed forward: x[1] and x[2] (6 x 5, 6 x 4) */
    char mask[2][30];
    for (int l = 1; l <= 2; l++)
        for (int k = 0; k < 6 * net.m->sizes[l]; k++) mask[l - 1][k] = net.a->x[l][k] > 0;

    const float h = 1e-2f;
    double worst = 0, worst_abs = 0;
    int skipped = 0;
    for (int64_t i = 0; i < net.m->n_params; i++) {
        float keep = net.m->params[i];
        double f[2];
        bool flipped = false;
        for (int s = 0; s < 2; s++) {
            net.m->params[i] = keep + (s ? -h : h);
            OK(mlp_forward(net.m, net.a, 0, 3, net.x, 6, NULL, &e_));
            OK(mlp_loss(net.m, net.a, net.y, 6, &f[s], &e_));
            for (int l = 1; l <= 2; l++)
                for (int k = 0; k < 6 * net.m->sizes[l]; k++)
                    flipped |= (net.a->x[l][k] > 0) != mask[l - 1][k];
        }
        net.m->params[i] = keep;
        if (flipped) {
            skipped++;
            continue;
        }
        double fd = (f[0] - f[1]) / (2.0 * h), g = net.m->grads[i];
        double rel = fabs(g - fd) / fmax(fabs(fd), 0.01);
        cr_expect(fabs(g - fd) <= 2e-3 * fmax(fabs(fd), 0.01) + 1e-4,
                  "parameter %lld: backward %.7g, finite difference %.7g", (long long)i, g, fd);
        worst = fmax(worst, rel);
        worst_abs = fmax(worst_abs, fabs(g - fd));
    }
    cr_expect(skipped <= net.m->n_params / 10, "%d of %lld parameters straddled a ReLU kink",
              skipped, (long long)net.m->n_params);
    cr_log_info("float gradient check, h = 1e-2: largest difference %.3g relative, %.3g "
                "absolute (tolerance 2e-3 relative + 1e-4), %d of %lld parameters skipped at a "
                "kink", worst, worst_abs, skipped, (long long)net.m->n_params);
    net_close(&net);
}

static bool same_floats(const float *a, const float *b, int64_t n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* ---- the backward in two halves (zero-bubble pipelines) ------------------ */

/* The split backward of mlp:7-5-4-3 on a batch of 6, against central
 * differences of the double reference (h = 1e-5, as above): the input half
 * B's input gradient against differences in the inputs, the weight half W's
 * gradients against differences in the parameters, with the tolerance of
 * gradients_match_central_differences_in_double. B must leave the gradient
 * block alone (W is what accumulates), and B + W must give what the whole
 * backward gives: the input gradient bit for bit (the same operations),
 * the weight gradients to 1e-6 relative (the bias gradient is summed in
 * another order). */
Test(mlp, split_backward_matches_central_differences_and_the_whole_backward)
{
    struct twins t = twins_open("mlp:7-5-4-3", 7, 6, 11, 6);
    struct net *net = &t.net;
    struct mlp *m = net->m, *whole = t.twin;
    struct mlp_act *a_whole = t.twin_a;
    for (int l = 0; l < 3; l++)
        for (int o = 0; o < m->sizes[l + 1]; o++) {
            mlp_bias(m, m->params, l)[o] = 0.1f * (o - 1);
            mlp_bias(whole, whole->params, l)[o] = 0.1f * (o - 1);
        }
    float din[6 * 7], din_whole[6 * 7];
    double loss;
    OK(mlp_forward(whole, a_whole, 0, 3, net->x, 6, NULL, &e_));
    OK(mlp_loss(whole, a_whole, net->y, 6, &loss, &e_));
    OK(mlp_backward(whole, a_whole, 0, 3, a_whole->dlogits, 6, din_whole, &e_));

    OK(mlp_forward(m, net->a, 0, 3, net->x, 6, NULL, &e_));
    OK(mlp_loss(m, net->a, net->y, 6, &loss, &e_));
    OK(mlp_backward_input(m, net->a, 0, 3, net->a->dlogits, 6, din, &e_));
    for (int64_t i = 0; i < m->n_params; i++)
        cr_assert_eq(m->grads[i], 0.0f, "the input half wrote gradient %lld", (long long)i);
    OK(mlp_backward_weight(m, net->a, 0, 3, 6, &e_));
    cr_expect(same_floats(din, din_whole, 6 * 7), "input gradients differ from the whole "
                                                    "backward's");

    double *p = malloc((size_t)m->n_params * sizeof *p), xd[6 * 7];
    cr_assert_not_null(p);
    for (int64_t i = 0; i < m->n_params; i++) p[i] = m->params[i];
    for (int i = 0; i < 6 * 7; i++) xd[i] = net->x[i];
    const double h = 1e-5;
    double worst_w = 0, worst_x = 0, worst_whole = 0;
    for (int64_t i = 0; i < m->n_params; i++) {
        double keep = p[i];
        p[i] = keep + h;
        double up = ref_loss(m, p, net->x, net->y, 6);
        p[i] = keep - h;
        double down = ref_loss(m, p, net->x, net->y, 6);
        p[i] = keep;
        double fd = (up - down) / (2 * h), g = m->grads[i], gw = whole->grads[i];
        double rel = fabs(g - fd) / fmax(fabs(fd), 0.01);
        cr_expect(rel <= 1e-5, "parameter %lld: weight half %.9g, finite difference %.9g",
                  (long long)i, g, fd);
        double rel_whole = fabs(g - gw) / fmax(fabs(gw), 1e-3);
        cr_expect(rel_whole <= 1e-6, "parameter %lld: weight half %.9g, whole backward %.9g",
                  (long long)i, g, gw);
        worst_w = fmax(worst_w, rel);
        worst_whole = fmax(worst_whole, rel_whole);
    }
    for (int i = 0; i < 6 * 7; i++) {
        double keep = xd[i];
        xd[i] = keep + h;
        double up = ref_loss_of(m, p, NULL, xd, net->y, 6);
        xd[i] = keep - h;
        double down = ref_loss_of(m, p, NULL, xd, net->y, 6);
        xd[i] = keep;
        double fd = (up - down) / (2 * h), rel = fabs(din[i] - fd) / fmax(fabs(fd), 0.01);
        cr_expect(rel <= 1e-5, "input %d: input half %.9g, finite difference %.9g", i, din[i],
                  fd);
        worst_x = fmax(worst_x, rel);
    }
    cr_log_info("split backward of mlp:7-5-4-3, batch 6: largest difference from finite "
                "differences %.3g (weights), %.3g (inputs) relative, tolerance 1e-5; from the "
                "whole backward %.3g relative, tolerance 1e-6",
                worst_w, worst_x, worst_whole);
    free(p);
    twins_close(&t);
}

/* Stages compose for the halves too: B of [1,3) then of [0,1) (a pipeline's
 * two stages, one microbatch's activations), then W of each stage in any
 * order, give the whole model's gradients. W with no B of its layers since
 * the last forward is refused: its kept gradients would be another
 * microbatch's. */
Test(mlp, split_backward_composes_over_stages_and_refuses_a_weight_half_owed_nothing)
{
    struct twins t = twins_open("mlp:7-5-4-3", 3, 6, 17, 6);
    struct net *net = &t.net;
    struct mlp *m = net->m, *whole = t.twin;
    struct mlp_act *a_whole = t.twin_a;
    float back[6 * 5];
    double loss;
    struct err e = {0};
    full_step(whole, a_whole, net->x, net->y, 6);

    OK(mlp_forward(m, net->a, 0, 3, net->x, 6, NULL, &e_));
    cr_expect_eq(mlp_backward_weight(m, net->a, 0, 1, 6, &e), ERR_INPUT,
                 "a weight half before any input half");
    cr_expect(strstr(e.msg, "mlp_backward_input"), "the message says what to run: %s", e.msg);
    OK(mlp_loss(m, net->a, net->y, 6, &loss, &e_));
    OK(mlp_backward_input(m, net->a, 1, 3, net->a->dlogits, 6, back, &e_));
    OK(mlp_backward_input(m, net->a, 0, 1, back, 6, NULL, &e_));
    OK(mlp_backward_weight(m, net->a, 0, 1, 6, &e_));
    OK(mlp_backward_weight(m, net->a, 1, 3, 6, &e_));
    double worst = 0;
    for (int64_t i = 0; i < m->n_params; i++) {
        double rel = fabs((double)m->grads[i] - whole->grads[i]) /
                     fmax(fabs((double)whole->grads[i]), 1e-3);
        cr_expect(rel <= 1e-6, "parameter %lld: %.9g by halves, %.9g whole", (long long)i,
                  m->grads[i], whole->grads[i]);
        worst = fmax(worst, rel);
    }
    cr_log_info("stages by halves against the whole backward: largest difference %.3g "
                "relative (tolerance 1e-6)", worst);

    OK(mlp_forward(m, net->a, 0, 3, net->x, 6, NULL, &e_));
    cr_expect_eq(mlp_backward_weight(m, net->a, 0, 3, 6, &e), ERR_INPUT,
                 "a weight half after a new forward");
    twins_close(&t);
}

/* ---- stages and microbatches ------------------------------------------- */

/* A pipeline's two stages, [0,1) and [1,3), do the same operations in the
 * same order as the whole model: the outputs, input gradients and weight
 * gradients are bit for bit the same. */
Test(mlp, stage_split_gives_the_same_bits)
{
    /* the whole model with 6 samples; the split one, a twin, on their x and y */
    struct twins t = twins_open("mlp:7-5-4-3", 3, 6, 17, 6);
    struct mlp *whole = t.net.m, *split = t.twin;
    struct mlp_act *a = t.net.a, *s0 = t.twin_a, *s1 = act(split, 6);
    const float *x = t.net.x;
    const int32_t *y = t.net.y;
    float din_whole[6 * 7], din_split[6 * 7], boundary[6 * 5], back[6 * 5], logits[6 * 3];
    double l_whole, l_split;

    OK(mlp_forward(whole, a, 0, 3, x, 6, logits, &e_));
    OK(mlp_loss(whole, a, y, 6, &l_whole, &e_));
    OK(mlp_backward(whole, a, 0, 3, a->dlogits, 6, din_whole, &e_));

    /* stage 0 on its own act, its output "sent" to stage 1's act */
    OK(mlp_forward(split, s0, 0, 1, x, 6, boundary, &e_));
    OK(mlp_forward(split, s1, 1, 3, boundary, 6, NULL, &e_));
    OK(mlp_loss(split, s1, y, 6, &l_split, &e_));
    OK(mlp_backward(split, s1, 1, 3, s1->dlogits, 6, back, &e_));
    OK(mlp_backward(split, s0, 0, 1, back, 6, din_split, &e_));

    cr_expect_eq(l_whole, l_split);
    cr_expect(same_floats(logits, s1->x[3], 6 * 3), "logits differ");
    cr_expect(same_floats(din_whole, din_split, 6 * 7), "input gradients differ");
    cr_expect(same_floats(whole->grads, split->grads, whole->n_params), "weight gradients differ");
    mlp_act_free(s1);
    twins_close(&t);
}

/* Gradients are sums: two microbatches of 3 accumulate the gradient of one
 * batch of 6. Only the order of additions differs (x^T dy over 6 rows vs 3
 * + 3), so agreement is to float rounding: |a - b| <= 1e-6 max(|a|, |b|,
 * 1e-3 gmax), gmax the largest gradient (the floor because a sum that
 * cancels to near zero has no meaningful relative error). Loss sums add the
 * same way. */
Test(mlp, two_microbatches_of_three_sum_to_one_batch_of_six)
{
    /* one model steps on all 6 samples, its twin on 3 and 3 */
    struct twins t = twins_open("mlp:7-5-4-3", 9, 6, 19, 3);
    struct mlp *one = t.net.m, *two = t.twin;
    struct mlp_act *a6 = t.net.a, *a3 = t.twin_a;
    const float *x = t.net.x;
    const int32_t *y = t.net.y;
    double l6 = full_step(one, a6, x, y, 6);
    double l3 = full_step(two, a3, x, y, 3) + full_step(two, a3, x + 3 * 7, y + 3, 3);
    cr_expect(fabs(l6 - l3) <= 1e-6 * fabs(l6), "loss %.9f vs %.9f", l6, l3);

    double gmax = 0, worst = 0;
    for (int64_t i = 0; i < one->n_params; i++) gmax = fmax(gmax, fabs(one->grads[i]));
    for (int64_t i = 0; i < one->n_params; i++) {
        double p = one->grads[i], q = two->grads[i], big = fmax(fabs(p), fabs(q));
        double rel = fabs(p - q) / fmax(big, 1e-3 * gmax);
        cr_expect(rel <= 1e-6, "gradient %lld: batch of 6 %.9g, 3 + 3 %.9g", (long long)i, p, q);
        worst = fmax(worst, rel);
    }
    cr_log_info("3 + 3 vs 6: largest relative gradient difference %.3g (tolerance 1e-6), loss "
                "%.9f vs %.9f", worst, l6, l3);
    twins_close(&t);
}

/* A pipeline keeps microbatches in flight: forward 0, forward 1, backward 0,
 * backward 1 (GPipe's order) on two acts must give the same gradients, bit
 * for bit, as forward-backward 0 then forward-backward 1 on one act. */
Test(mlp, microbatches_in_flight_keep_their_own_activations)
{
    struct mlp *seq = make("mlp:7-5-4-3", 21), *fly = make("mlp:7-5-4-3", 21);
    struct mlp_act *a = act(seq, 3), *mb0 = act(fly, 3), *mb1 = act(fly, 3);
    float *x;
    int32_t *y;
    make_data(seq, 6, 23, &x, &y);
    full_step(seq, a, x, y, 3);
    full_step(seq, a, x + 21, y + 3, 3);

    double loss;
    OK(mlp_forward(fly, mb0, 0, 3, x, 3, NULL, &e_));
    OK(mlp_loss(fly, mb0, y, 3, &loss, &e_));
    OK(mlp_forward(fly, mb1, 0, 3, x + 21, 3, NULL, &e_));
    OK(mlp_loss(fly, mb1, y + 3, 3, &loss, &e_));
    OK(mlp_backward(fly, mb0, 0, 3, mb0->dlogits, 3, NULL, &e_));
    OK(mlp_backward(fly, mb1, 0, 3, mb1->dlogits, 3, NULL, &e_));
    cr_expect(same_floats(seq->grads, fly->grads, seq->n_params));
    free(x);
    free(y);
    mlp_act_free(a);
    mlp_act_free(mb0);
    mlp_act_free(mb1);
    mlp_free(seq);
    mlp_free(fly);
}

Test(mlp, zero_grad_and_sgd_step_touch_only_their_layers)
{
    struct net net = net_open("mlp:7-5-4-3", 2, 6, 29);
    full_step(net.m, net.a, net.x, net.y, 6);
    int64_t lo = mlp_param_offset(net.m, 1), hi = mlp_param_offset(net.m, 2), n = net.m->n_params;
    float *before = malloc((size_t)n * sizeof *before), *grads = malloc((size_t)n * sizeof *grads);
    cr_assert(before && grads);
    memcpy(before, net.m->params, (size_t)n * sizeof *before);
    memcpy(grads, net.m->grads, (size_t)n * sizeof *grads);

    /* layer 1 only, lr 0.5, no momentum history: w -= 0.5 (g / 6 + 0.1 w) */
    mlp_sgd_step(net.m, 1, 2, 0.5f, 0.9f, 0.1f, 1.0f / 6);
    for (int64_t i = 0; i < n; i++) {
        if (i >= lo && i < hi) {
            float gi = (1.0f / 6) * grads[i] + 0.1f * before[i];
            float want = before[i] - 0.5f * gi;
            cr_expect(fabsf(net.m->params[i] - want) <= 1e-6f * fmaxf(1, fabsf(want)),
                      "param %lld: %.9g, want %.9g", (long long)i, net.m->params[i], want);
            cr_expect(fabsf(net.m->momentum[i] - gi) <= 1e-7f * fmaxf(1, fabsf(gi)));
        } else {
            cr_expect_eq(net.m->params[i], before[i], "param %lld outside layer 1 moved",
                         (long long)i);
            cr_expect_eq(net.m->momentum[i], 0.0f);
        }
    }
    cr_expect(same_floats(net.m->grads, grads, n), "the step changed the gradients");
    mlp_zero_grad(net.m, 1, 2);
    for (int64_t i = 0; i < n; i++)
        cr_expect_eq(net.m->grads[i], i >= lo && i < hi ? 0.0f : grads[i], "gradient %lld",
                     (long long)i);
    free(before);
    free(grads);
    net_close(&net);
}

/* ---- learning and evaluation ------------------------------------------- */

/* XOR of the signs: 64 points with |coordinates| in [0.2, 1], label 1 when
 * the signs differ. No linear model separates it; a hidden layer does. */
static void xor_set(int n, float *x, int32_t *y)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 31);
    for (int i = 0; i < n; i++) {
        float u = (float)(0.2 + 0.8 * gsl_rng_uniform(r));
        float v = (float)(0.2 + 0.8 * gsl_rng_uniform(r));
        x[2 * i] = (i & 1) ? u : -u;
        x[2 * i + 1] = (i & 2) ? v : -v;
        y[i] = ((i & 1) != 0) != ((i & 2) != 0);
    }
    gsl_rng_free(r);
}

/* 300 full-batch steps of SGD (lr 0.1, momentum 0.9) on XOR with
 * mlp:2-16-2: the mean loss starts near log 2 = 0.69 and must fall at least
 * 20-fold; then the set is memorised, so evaluate gives accuracy 1. */
Test(mlp, sgd_learns_xor_and_evaluate_sees_it)
{
    enum { N = 64 };
    float x[N * 2];
    int32_t y[N];
    xor_set(N, x, y);
    struct mlp *m = make("mlp:2-16-2", 4);
    struct mlp_act *a = act(m, N);
    double first = 0, last = 0;
    for (int step = 0; step < 300; step++) {
        mlp_zero_grad(m, 0, m->n_layers);
        double loss = full_step(m, a, x, y, N) / N;
        mlp_sgd_step(m, 0, m->n_layers, 0.1f, 0.9f, 0, 1.0f / N);
        if (step == 0) first = loss;
        last = loss;
    }
    cr_log_info("XOR, mlp:2-16-2, 300 steps: mean loss %.4f -> %.5f (%.0f-fold; want >= 20)",
                first, last, first / last);
    cr_expect(last * 20 <= first, "loss %.4f -> %.4f", first, last);

    double acc, mean;
    OK(mlp_evaluate(m, x, y, N, &acc, &mean, &e_));
    cr_expect_eq(acc, 1.0, "accuracy %.4f on the training set", acc);
    cr_expect(mean < first / 20, "evaluate's mean loss %.5f", mean);
    mlp_act_free(a);
    mlp_free(m);
}

/* Evaluate in batches of 256: the 64 XOR points repeated 10 times (640
 * samples: batches of 256, 256, 128) give the accuracy and mean loss of the
 * 64, which a single mlp_loss over them gives too. */
Test(mlp, evaluate_in_batches_agrees_with_one_pass)
{
    enum { N = 64, R = 10 };
    float x[N * 2], *xr = malloc(sizeof(float) * N * 2 * R);
    int32_t y[N], *yr = malloc(sizeof(int32_t) * N * R);
    cr_assert(xr && yr);
    xor_set(N, x, y);
    for (int k = 0; k < R; k++) {
        memcpy(xr + k * N * 2, x, sizeof x);
        memcpy(yr + k * N, y, sizeof y);
    }
    struct mlp *m = make("mlp:2-16-2", 8);
    struct mlp_act *a = act(m, N);
    double loss;
    OK(mlp_forward(m, a, 0, 2, x, N, NULL, &e_));
    OK(mlp_loss(m, a, y, N, &loss, &e_));
    int correct = 0;
    for (int i = 0; i < N; i++) correct += (a->x[2][2 * i + 1] > a->x[2][2 * i]) == (y[i] == 1);
    double acc, mean;
    OK(mlp_evaluate(m, xr, yr, N * R, &acc, &mean, &e_));
    cr_expect(fabs(acc - (double)correct / N) < 1e-12, "accuracy %.4f, want %d/%d", acc,
              correct, N);
    cr_expect(fabs(mean - loss / N) <= 1e-12 * fabs(mean), "mean loss %.12f, want %.12f", mean,
              loss / N);
    for (int64_t i = 0; i < m->n_params; i++)
        cr_assert_eq(m->grads[i], 0.0f, "evaluate touched gradient %lld", (long long)i);

    struct err e = {0};
    yr[300] = 2;
    cr_expect_eq(mlp_evaluate(m, xr, yr, N * R, &acc, &mean, &e), ERR_INPUT);
    cr_expect_not_null(strstr(e.msg, "label 2 of sample 300"), "%s", e.msg);
    cr_expect_eq(mlp_evaluate(m, xr, yr, 0, &acc, &mean, &e), ERR_INPUT);
    free(xr);
    free(yr);
    mlp_act_free(a);
    mlp_free(m);
}

/* ---- speed ------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Samples/s of one rank's whole step (zero_grad, forward, loss, backward,
 * SGD) on mlp:784-256-128-10 at batches 64 and 256, one BLAS thread: the
 * best of 5 windows of at least 0.1 s after a warm-up step. Logged, not
 * asserted. For a clean figure run it alone:
 *   build/test_mlp --filter 'mlp/step_speed*' --verbose */
Test(mlp, step_speed_on_the_fmnist_model)
{
    struct net net = net_open("mlp:784-256-128-10", 1, 256, 37);
    for (size_t i = 0; i < 256 * 784; i++) net.x[i] = fabsf(net.x[i]) / 4;   /* pixel-like, >= 0 */
    const int batches[2] = {64, 256};
    for (int bi = 0; bi < 2; bi++) {
        int n = batches[bi];
        double best = 0;
        for (int trial = 0; trial < 6; trial++) {
            int steps = 0;
            double t0 = now_s(), t;
            do {
                mlp_zero_grad(net.m, 0, 3);
                full_step(net.m, net.a, net.x, net.y, n);
                mlp_sgd_step(net.m, 0, 3, 0.01f, 0.9f, 0, 1.0f / n);
                steps++;
            } while ((t = now_s() - t0) < 0.1);
            if (trial > 0) best = fmax(best, steps * n / t);   /* trial 0 warms up */
        }
        cr_log_info("mlp:784-256-128-10, one rank, batch %d: %.0f samples/s (one step: "
                    "forward, loss, backward, SGD)", n, best);
    }
    net_close(&net);
}

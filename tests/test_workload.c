/* core/workload.c: parsing, per-layer sizes and the range sums. Every
 * expected number below was worked out by hand from the published formulas
 * (restated in the header comment of core/workload.c); the comment beside
 * each says which formula and shows the arithmetic. FLOP counts are sums of
 * integers below 2^53, so they are compared exactly (margin 0). */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../core/plan.h"
#include "../core/workload.h"

static struct workload *parse_ok(const char *spec)
{
    struct err e = {0};
    struct workload *w = NULL;
    int rc = workload_parse(spec, &w, &e);
    cr_assert_eq(rc, 0, "'%s' rejected (%d): %s", spec, rc, e.msg);
    cr_assert_not_null(w);
    return w;
}

/* spec must be rejected as ERR_INPUT with a message that contains `needle`
 * (the bad part, quoted as the message quotes it). */
static void expect_bad(const char *spec, const char *needle)
{
    static struct workload sentinel;
    struct err e = {0};
    struct workload *w = &sentinel;   /* workload_parse must reset it to NULL */
    int rc = workload_parse(spec, &w, &e);
    cr_expect_eq(rc, ERR_INPUT, "'%.60s': rc %d, want ERR_INPUT (%d)", spec, rc, ERR_INPUT);
    cr_expect_eq(e.code, ERR_INPUT, "'%.60s': e.code %d", spec, e.code);
    cr_expect_null(w, "'%.60s': *out not NULL on failure", spec);
    cr_expect_not_null(strstr(e.msg, needle), "'%.60s': message does not contain \"%s\": %s",
                       spec, needle, e.msg);
    if (rc == 0) workload_free(w);
}

#define expect_exact(got, want)                                                       \
    cr_expect((double)(got) == (double)(want), "%s = %.17g, want %.17g (exact)", #got, \
              (double)(got), (double)(want))

/* ---- mlp:784-256-128-10 --------------------------------------------------
 * Dense in -> out: params in*out+out; forward 2*in*out+out; backward
 * 2*in*out+out, plus 2*in*out (input gradient) except for layer 0; output
 * out*4 bytes; saved (in+out)*4 bytes. */

Test(workload, mlp_layers_match_the_dense_formulas)
{
    struct workload *w = parse_ok("mlp:784-256-128-10");
    cr_assert_eq(w->n_layers, 3);
    static const struct {
        int64_t in, out, params;
        double fwd, bwd;
        int64_t out_bytes, saved_bytes;
    } want[] = {
        /* 784*256+256 = 200960; 2*784*256+256 = 401664; layer 0 has no dx: bwd = fwd;
         * out 256*4 = 1024; saved (784+256)*4 = 4160 */
        {784, 256, 200960, 401664, 401664, 1024, 4160},
        /* 256*128+128 = 32896; 2*256*128+128 = 65664; bwd 65664 + 2*256*128 = 131200;
         * out 128*4 = 512; saved (256+128)*4 = 1536 */
        {256, 128, 32896, 65664, 131200, 512, 1536},
        /* 128*10+10 = 1290; 2*128*10+10 = 2570; bwd 2570 + 2560 = 5130;
         * out 10*4 = 40; saved (128+10)*4 = 552 */
        {128, 10, 1290, 2570, 5130, 40, 552},
    };
    for (int i = 0; i < 3; i++) {
        const struct layer *l = &w->layers[i];
        cr_expect_eq(l->kind, LAYER_DENSE, "layer %d kind", i);
        cr_expect_eq(l->in, want[i].in, "layer %d in", i);
        cr_expect_eq(l->out, want[i].out, "layer %d out", i);
        cr_expect_eq(l->params, want[i].params, "layer %d params %" PRId64, i, l->params);
        expect_exact(l->fwd_flops_per_sample, want[i].fwd);
        expect_exact(l->bwd_flops_per_sample, want[i].bwd);
        cr_expect_eq(l->out_bytes_per_sample, want[i].out_bytes, "layer %d out bytes", i);
        cr_expect_eq(l->saved_bytes_per_sample, want[i].saved_bytes, "layer %d saved bytes", i);
    }
    workload_free(w);
}

Test(workload, mlp_workload_facts)
{
    struct workload *w = parse_ok("mlp:784-256-128-10");
    cr_expect(w->is_mlp);
    cr_expect_eq(w->elem_bytes, 4, "fp32");
    cr_expect_eq(w->in_bytes_per_sample, 784 * 4, "one 784-pixel fp32 image = 3136 bytes");
    cr_expect_eq(w->n_classes, 10);
    cr_expect_str_eq(w->spec, "mlp:784-256-128-10");
    cr_expect_str_eq(w->canonical, "mlp:784-256-128-10");
    workload_free(w);
}

Test(workload, mlp_range_sums_add_the_layers_in_lo_hi)
{
    struct workload *w = parse_ok("mlp:784-256-128-10");
    /* params: 200960 + 32896 + 1290 = 235146 */
    cr_expect_eq(workload_params(w, 0, 3), 235146);
    cr_expect_eq(workload_params(w, 0, 1), 200960);
    cr_expect_eq(workload_params(w, 1, 3), 32896 + 1290);   /* 34186 */
    cr_expect_eq(workload_params(w, 0, 2), 200960 + 32896); /* 233856 */
    cr_expect_eq(workload_params(w, 2, 3), 1290);
    cr_expect_eq(workload_params(w, 1, 1), 0, "an empty range sums to 0");
    /* forward: 401664 + 65664 + 2570 = 469898 */
    expect_exact(workload_fwd_flops(w, 0, 3), 469898);
    expect_exact(workload_fwd_flops(w, 1, 3), 65664 + 2570);   /* 68234 */
    expect_exact(workload_fwd_flops(w, 0, 1), 401664);
    expect_exact(workload_fwd_flops(w, 2, 2), 0);
    /* backward: 401664 + 131200 + 5130 = 537994 */
    expect_exact(workload_bwd_flops(w, 0, 3), 537994);
    expect_exact(workload_bwd_flops(w, 1, 3), 131200 + 5130);  /* 136330 */
    expect_exact(workload_bwd_flops(w, 0, 2), 401664 + 131200); /* 532864 */
    /* bytes of parameters = params * 4 (fp32): 235146*4 = 940584 */
    cr_expect_eq(workload_param_bytes(w, 0, 3), 940584);
    cr_expect_eq(workload_param_bytes(w, 1, 2), 32896 * 4);   /* 131584 */
    cr_expect_eq(workload_param_bytes(w, 3, 3), 0);
    workload_free(w);
}

Test(workload, mlp_boundary_bytes_are_the_input_then_each_layer_output)
{
    struct workload *w = parse_ok("mlp:784-256-128-10");
    cr_expect_eq(workload_boundary_bytes(w, 0), 3136, "input 784*4");
    cr_expect_eq(workload_boundary_bytes(w, 1), 1024, "layer 0 output 256*4");
    cr_expect_eq(workload_boundary_bytes(w, 2), 512, "layer 1 output 128*4");
    cr_expect_eq(workload_boundary_bytes(w, 3), 40, "logits 10*4");
    workload_free(w);
}

/* ---- transformer:layers=24,hidden=2048,seq=1024,vocab=50257 ----------------
 * h = 2048, s = 1024, V = 50257, default heads a = h/64 = 32.
 *   h^2 = 4,194,304; s*h = 2,097,152 = 2^21. */
#define TF_1B3 "transformer:layers=24,hidden=2048,seq=1024,vocab=50257"

Test(workload, transformer_has_embedding_blocks_and_head)
{
    struct workload *w = parse_ok(TF_1B3);
    cr_assert_eq(w->n_layers, 26, "embedding + 24 blocks + head");
    cr_expect_eq(w->layers[0].kind, LAYER_EMBEDDING);
    for (int i = 1; i <= 24; i++) cr_expect_eq(w->layers[i].kind, LAYER_BLOCK, "layer %d", i);
    cr_expect_eq(w->layers[25].kind, LAYER_HEAD);
    cr_expect_not(w->is_mlp);
    cr_expect_eq(w->elem_bytes, 2, "bf16");
    cr_expect_eq(w->in_bytes_per_sample, 1024 * 4, "s int32 token ids");
    cr_expect_eq(w->n_classes, 50257);
    workload_free(w);
}

Test(workload, transformer_block_matches_megatron_and_korthikanti)
{
    struct workload *w = parse_ok(TF_1B3);
    for (int i = 1; i <= 24; i++) {
        const struct layer *b = &w->layers[i];
        /* 12h^2 + 13h = 12*4,194,304 + 13*2048 = 50,331,648 + 26,624 = 50,358,272 */
        cr_expect_eq(b->params, 50358272, "block %d params %" PRId64, i, b->params);
        /* Narayanan et al. SC'21: 24*s*h^2 + 4*s^2*h
         *   = 24*1024*4,194,304 (3*2^35 = 103,079,215,104) + 4*2^20*2^11 (2^33 = 8,589,934,592)
         *   = 111,669,149,696; backward twice that = 223,338,299,392 */
        expect_exact(b->fwd_flops_per_sample, 111669149696.0);
        expect_exact(b->bwd_flops_per_sample, 223338299392.0);
        /* Korthikanti et al. 2022 eq. 1: s*h*(34 + 5*a*s/h)
         *   = 2^21 * (34 + 5*32*1024/2048) = 2^21 * (34 + 80) = 239,075,328 */
        cr_expect_eq(b->saved_bytes_per_sample, 239075328, "block %d saved %" PRId64, i,
                     b->saved_bytes_per_sample);
        /* output s*h bf16 = 2^21*2 = 4,194,304 */
        cr_expect_eq(b->out_bytes_per_sample, 4194304);
    }
    workload_free(w);
}

Test(workload, transformer_embedding_and_head_match_the_formulas)
{
    struct workload *w = parse_ok(TF_1B3);
    const struct layer *emb = &w->layers[0], *head = &w->layers[25];
    /* embedding V*h + s*h = 50257*2048 + 1024*2048 = 102,926,336 + 2,097,152 = 105,023,488 */
    cr_expect_eq(emb->params, 105023488, "embedding params %" PRId64, emb->params);
    expect_exact(emb->fwd_flops_per_sample, 0);   /* a lookup */
    cr_expect_eq(emb->out_bytes_per_sample, 4194304, "s*h*2");
    /* head V*h + 2h = 102,926,336 + 4096 = 102,930,432 */
    cr_expect_eq(head->params, 102930432, "head params %" PRId64, head->params);
    /* forward 2*s*h*V = 2^22 * 50257 = 210,793,136,128; backward 4*s*h*V = 421,586,272,256 */
    expect_exact(head->fwd_flops_per_sample, 210793136128.0);
    expect_exact(head->bwd_flops_per_sample, 421586272256.0);
    /* saved s*h*2 + s*V*4 = 4,194,304 + 205,852,672 = 210,046,976 */
    cr_expect_eq(head->saved_bytes_per_sample, 210046976);
    /* boundaries: 0 is the token ids (s*4), 1 the embedding output, 25 the last block's */
    cr_expect_eq(workload_boundary_bytes(w, 0), 4096);
    cr_expect_eq(workload_boundary_bytes(w, 1), 4194304);
    cr_expect_eq(workload_boundary_bytes(w, 25), 4194304);
    workload_free(w);
}

Test(workload, transformer_totals_are_the_1_3b_scale)
{
    struct workload *w = parse_ok(TF_1B3);
    /* 24 blocks: 24 * 50,358,272 = 1,208,598,528
     * total = 1,208,598,528 + 105,023,488 + 102,930,432 = 1,416,552,448 (untied head).
     * With the head tied to the embedding (only its final layer-norm, 2h = 4096):
     * 1,208,598,528 + 105,023,488 + 4096 = 1,313,626,112, the "1.3B" of GPT-3 XL
     * (24 layers, d_model 2048; Brown et al. 2020, table 2.1). */
    int64_t total = workload_params(w, 0, 26);
    cr_expect_eq(total, 1416552448, "total %" PRId64, total);
    cr_expect_eq(workload_params(w, 1, 25), 1208598528);
    cr_expect_eq(workload_params(w, 0, 25) + 2 * 2048, 1313626112, "tied count");
    cr_expect_eq(workload_param_bytes(w, 0, 26), 2 * 1416552448LL, "bf16");
    /* forward: 24 * 111,669,149,696 + 210,793,136,128 = 2,890,852,728,832 */
    expect_exact(workload_fwd_flops(w, 0, 26), 2890852728832.0);
    /* backward: 24 * 223,338,299,392 + 421,586,272,256 = 5,781,705,457,664 */
    expect_exact(workload_bwd_flops(w, 0, 26), 5781705457664.0);
    workload_free(w);
}

Test(workload, transformer_default_heads_are_hidden_over_64_and_canonical_says_so)
{
    struct workload *w = parse_ok(TF_1B3);
    cr_expect_str_eq(w->canonical,
                     "transformer:layers=24,hidden=2048,seq=1024,vocab=50257,heads=32");
    cr_expect_str_eq(w->spec, TF_1B3);
    workload_free(w);
    /* heads=16: s*h*(34 + 5*16*1024/2048) = 2^21 * 74 = 155,189,248 */
    w = parse_ok(TF_1B3 ",heads=16");
    cr_expect_str_eq(w->canonical,
                     "transformer:layers=24,hidden=2048,seq=1024,vocab=50257,heads=16");
    cr_expect_eq(w->layers[1].saved_bytes_per_sample, 155189248);
    workload_free(w);
    /* key order does not matter; the canonical form fixes it */
    w = parse_ok("transformer:vocab=50257,heads=32,seq=1024,hidden=2048,layers=24");
    cr_expect_str_eq(w->canonical,
                     "transformer:layers=24,hidden=2048,seq=1024,vocab=50257,heads=32");
    workload_free(w);
}

Test(workload, gpt2_small_reproduces_the_published_124m_when_tied)
{
    struct workload *w = parse_ok("gpt2-small");
    cr_assert_eq(w->n_layers, 14);
    /* h = 768, L = 12, s = 1024, V = 50257, heads 768/64 = 12 (GPT-2 small has 12)
     * block 12*589,824 + 13*768 = 7,077,888 + 9,984 = 7,087,872; x12 = 85,054,464
     * embedding 50257*768 + 1024*768 = 38,597,376 + 786,432 = 39,383,808
     * tied: 85,054,464 + 39,383,808 + final LN 1536 = 124,439,808, the published
     *   GPT-2 small count (Hugging Face "gpt2": 124,439,808)
     * untied head adds V*h = 38,597,376: 163,037,184 */
    cr_expect_eq(workload_params(w, 1, 13), 85054464);
    cr_expect_eq(w->layers[0].params, 39383808);
    cr_expect_eq(workload_params(w, 0, 13) + 2 * 768, 124439808, "tied count");
    cr_expect_eq(workload_params(w, 0, 14), 163037184, "untied total %" PRId64,
                 workload_params(w, 0, 14));
    cr_expect_str_eq(w->canonical, "transformer:layers=12,hidden=768,seq=1024,vocab=50257,heads=12");
    workload_free(w);
}

Test(workload, gpt2_xl_and_gpt3_175b_reproduce_their_published_sizes_when_tied)
{
    /* GPT-2 XL: h = 1600, L = 48; block 12*2,560,000 + 20,800 = 30,740,800; x48 = 1,475,558,400;
     * embedding 50257*1600 + 1024*1600 = 82,049,600; tied + LN 3200 = 1,557,611,200
     * (Hugging Face "gpt2-xl": 1,557,611,200) */
    struct workload *w = parse_ok("gpt2-xl");
    cr_expect_eq(workload_params(w, 0, 49) + 2 * 1600, 1557611200LL);
    workload_free(w);
    /* GPT-3 175B: h = 12288, L = 96; block 12*150,994,944 + 159,744 = 1,812,099,072;
     * x96 = 173,961,510,912; embedding (50257+2048)*12288 = 642,723,840;
     * tied + LN 24,576 = 174,604,259,328 (the "175B", Brown et al. 2020) */
    w = parse_ok("gpt3-175b");
    cr_expect_eq(workload_params(w, 0, 97) + 2 * 12288, 174604259328LL);
    workload_free(w);
}

/* ---- presets --------------------------------------------------------------- */

Test(workload, every_preset_parses_and_equals_its_spec)
{
    cr_assert_gt(workload_n_presets, 0);
    for (size_t i = 0; i < workload_n_presets; i++) {
        const struct workload_preset *p = &workload_presets[i];
        struct workload *by_name = parse_ok(p->name), *by_spec = parse_ok(p->spec);
        cr_expect_str_eq(by_name->spec, p->name, "%s: spec keeps what was given", p->name);
        cr_expect_str_eq(by_name->canonical, by_spec->canonical, "%s", p->name);
        cr_expect_eq(by_name->n_layers, by_spec->n_layers, "%s", p->name);
        cr_expect_eq(by_name->is_mlp, by_spec->is_mlp, "%s", p->name);
        cr_expect_eq(workload_params(by_name, 0, by_name->n_layers),
                     workload_params(by_spec, 0, by_spec->n_layers), "%s", p->name);
        expect_exact(workload_fwd_flops(by_name, 0, by_name->n_layers),
                     workload_fwd_flops(by_spec, 0, by_spec->n_layers));
        cr_expect_not_null(p->summary, "%s has no summary", p->name);
        workload_free(by_name);
        workload_free(by_spec);
    }
}

/* ---- errors ---------------------------------------------------------------- */

Test(workload, bad_mlp_specs_are_input_errors_quoting_the_bad_part)
{
    expect_bad("mlp:784-x-10", "'x'");
    expect_bad("mlp:784", "'mlp:784'");
    expect_bad("mlp:784", "at least one layer");
    expect_bad("mlp:", "layer size ''");
    expect_bad("mlp:784--10", "layer size ''");
    expect_bad("mlp:784--10", "'mlp:784--10'");
    expect_bad("mlp:-784-10", "'mlp:-784-10'");
    expect_bad("mlp:784-10-", "'mlp:784-10-'");
    expect_bad("mlp:0-10", "'0'");
    expect_bad("mlp:784-99999999999999999999-10", "'99999999999999999999'");
    expect_bad("mlp:784-16777217-10", "'16777217'");   /* one past the 2^24 width bound */
}

Test(workload, bad_model_names_and_lengths_are_input_errors)
{
    expect_bad("foo", "'foo'");
    expect_bad("foo", "fmnist-small");   /* lists the presets */
    expect_bad("", "empty");
    char long_spec[301];
    memset(long_spec, '7', sizeof long_spec - 1);
    memcpy(long_spec, "mlp:", 4);
    long_spec[300] = '\0';
    expect_bad(long_spec, "300");
}

Test(workload, bad_transformer_specs_are_input_errors_quoting_the_bad_part)
{
    expect_bad("transformer:layers=2", "hidden=");
    expect_bad("transformer:", "layers=");
    expect_bad("transformer:layers=2,hidden=64,seq=8,vocab=10,bogus=1", "'bogus'");
    expect_bad("transformer:layers=2,layers=3,hidden=64,seq=8,vocab=10", "'layers' given twice");
    expect_bad("transformer:layers=2,hidden=64,seq=8,vocab=10,heads=5", "heads=5");
    expect_bad("transformer:layers=2,hidden=64,seq=8,vocab=10,", "trailing comma");
    expect_bad("transformer:layers=x,hidden=64,seq=8,vocab=10", "layers='x'");
    expect_bad("transformer:layers=2,hidden,seq=8,vocab=10", "'hidden'");
    expect_bad("transformer:layers=2,hidden=64,seq=8,vocab=10,heads=0", "heads='0'");
}

/* ---- layer limits: boundaries are tagged with 11 bits (plan.h) --------------- */

Test(workload, transformer_layers_stop_at_the_boundary_tag_limit)
{
    /* 2045 blocks + embedding + head = 2047 layers = PLAN_MAX_BOUNDARY (0x7ff) */
    struct workload *w = parse_ok("transformer:layers=2045,hidden=64,seq=8,vocab=10");
    cr_expect_eq(w->n_layers, PLAN_MAX_BOUNDARY);
    workload_free(w);
    expect_bad("transformer:layers=2046,hidden=64,seq=8,vocab=10", "layers='2046'");
}

Test(workload, mlp_of_2048_layers_is_rejected_and_the_longest_that_fits_is_accepted)
{
    /* 2048 layers need 2049 widths: "mlp:" + "1-1-...-1" = 4 + 4097 characters, far past
     * the 255 the spec holds, so the 2047-layer limit cannot be reached by an MLP spec:
     * the longest that fits has 126 widths (4 + 2*126-1 = 255 chars), 125 layers. */
    static char spec[4 + 2 * 2049];
    strcpy(spec, "mlp:1");
    for (int i = 1; i < 2049; i++) strcat(spec, "-1");
    expect_bad(spec, "too long");
    spec[4 + 2 * 2048 - 1] = '\0';   /* 2048 widths: 2047 layers, 4099 characters */
    expect_bad(spec, "too long");
    spec[4 + 2 * 126 - 1] = '\0';    /* 126 widths */
    cr_assert_eq(strlen(spec), 255);
    struct workload *w = parse_ok(spec);
    cr_expect_eq(w->n_layers, 125);
    workload_free(w);
    spec[255] = '-', spec[256] = '1', spec[257] = '\0';
    expect_bad(spec, "257");
}

/* ---- describe ---------------------------------------------------------------- */

Test(workload, describe_names_the_model_its_layers_and_parameters)
{
    struct workload *w = parse_ok("fmnist-small");
    char buf[256], digits[256];
    workload_describe(w, buf, sizeof buf);
    /* the count may be written with thousands separators: compare without commas */
    size_t n = 0;
    for (const char *c = buf; *c; c++)
        if (*c != ',') digits[n++] = *c;
    digits[n] = '\0';
    cr_expect_not_null(strstr(buf, "mlp:784-256-128-10"), "%s", buf);
    cr_expect_not_null(strstr(buf, "3 layers"), "%s", buf);
    cr_expect_not_null(strstr(digits, "235146"), "%s", buf);
    workload_free(w);

    w = parse_ok(TF_1B3);
    workload_describe(w, buf, sizeof buf);
    n = 0;
    for (const char *c = buf; *c; c++)
        if (*c != ',') digits[n++] = *c;
    digits[n] = '\0';
    cr_expect_not_null(strstr(buf, "26 layers"), "%s", buf);
    cr_expect_not_null(strstr(digits, "1416552448"), "%s", buf);
    workload_free(w);
}

/* ---- size limits ------------------------------------------------------------ */

/* Regression: these specs were accepted, and their byte counts overflowed
 * int64_t: the block's saved activations s*h*(34 + 5*a*s/h) at s = h = a = 2^24
 * are 2.36e22 bytes (a double->int64 conversion out of range, read back as
 * INT64_MIN), and 2045 blocks at h = 2^24 hold 6.9e18 parameters, whose bf16
 * bytes (1.38e19) overflowed in workload_param_bytes. */
Test(workload, sizes_past_2_to_53_bytes_are_refused_not_overflowed)
{
    expect_bad("transformer:layers=1,hidden=16777216,seq=16777216,vocab=16777216,"
               "heads=16777216", "too large: the activations one block saves");
    expect_bad("transformer:layers=2045,hidden=16777216,seq=8,vocab=10", "too large: parameters");
    /* MLP edge, fp32: 7 layers 2^24 -> 2^24 hold 7*(2^48 + 2^24)*4 bytes < 2^53, accepted;
     * 8 layers hold 2^53 + 2^29 bytes, refused. */
    const char *seven = "mlp:16777216-16777216-16777216-16777216-16777216-16777216-16777216-"
                        "16777216";
    struct workload *w = parse_ok(seven);
    cr_expect_eq(w->n_layers, 7);
    cr_expect_eq(workload_param_bytes(w, 0, 7), 7 * ((1LL << 48) + (1LL << 24)) * 4);
    workload_free(w);
    expect_bad("mlp:16777216-16777216-16777216-16777216-16777216-16777216-16777216-16777216-"
               "16777216", "too large: parameters");
    /* the largest preset stays well inside: 175,221,817,344 params, 350 GB in bf16 */
    w = parse_ok("gpt3-175b");
    cr_expect_eq(workload_param_bytes(w, 0, w->n_layers), 2 * 175221817344LL);
    workload_free(w);
}

/* Regression: gpt3-2.7b had no heads=, so it got the default 2560/64 = 40;
 * GPT-3 2.7B has 32 heads of 80 (Brown et al. 2020, table 2.1). Heads only
 * change the saved activations: s*h*(34 + 5*a*s/h) = 2048*2560*(34 + 5*32*2048/2560)
 * = 5,242,880 * 162 = 849,346,560 bytes (with 40 heads: 1,017,118,720). */
Test(workload, gpt3_2_7b_preset_has_the_published_32_heads)
{
    struct workload *w = parse_ok("gpt3-2.7b");
    cr_expect_str_eq(w->canonical,
                     "transformer:layers=32,hidden=2560,seq=2048,vocab=50257,heads=32");
    cr_expect_eq(w->layers[1].saved_bytes_per_sample, 849346560, "%" PRId64,
                 w->layers[1].saved_bytes_per_sample);
    /* 32*(12*2560^2 + 13*2560) + (50257+2048)*2560 + 2*2560 = 2,651,553,280 tied: "2.7B" */
    cr_expect_eq(workload_params(w, 0, 33) + 2 * 2560, 2651553280LL);
    workload_free(w);
}

/* Regression: fmnist-deep's summary said 334k parameters; it has
 * 784*256+256 + 2*(256*256+256) + 256*10+10 = 200,960 + 131,584 + 2,570 = 335,114.
 * The MLP summaries state layers and a rounded count; both are checked here
 * against the hand-computed totals. */
Test(workload, mlp_preset_summaries_state_their_layers_and_parameters)
{
    static const struct {
        const char *name, *layers, *rounded;
        int64_t params;
    } want[] = {
        {"fmnist-small", "3 layers", "235k", 235146},   /* 200,960 + 32,896 + 1,290 */
        {"fmnist-deep", "4 layers", "335k", 335114},
        /* 784*4096+4096 + 2*(4096^2+4096) + 4096*10+10
         * = 3,215,360 + 33,562,624 + 40,970 = 36,818,954 */
        {"fmnist-large", "4 layers", "37M", 36818954},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct workload_preset *p = NULL;
        for (size_t j = 0; j < workload_n_presets; j++)
            if (!strcmp(workload_presets[j].name, want[i].name)) p = &workload_presets[j];
        cr_assert_not_null(p, "no preset %s", want[i].name);
        struct workload *w = parse_ok(p->name);
        cr_expect_eq(workload_params(w, 0, w->n_layers), want[i].params, "%s", p->name);
        cr_expect_not_null(strstr(p->summary, want[i].layers), "%s: %s", p->name, p->summary);
        cr_expect_not_null(strstr(p->summary, want[i].rounded), "%s: '%s' lacks %s", p->name,
                           p->summary, want[i].rounded);
        workload_free(w);
    }
}

/* Regression: the MLP canonical form was the spec as typed, so two spellings
 * of one model ("mlp:0784-256-128-010" and "mlp:784-256-128-10") had different
 * canonical strings, while transformers were already normalised. */
Test(workload, mlp_canonical_form_is_normalised)
{
    struct workload *w = parse_ok("mlp:0784-0256-128-010");
    cr_expect_str_eq(w->canonical, "mlp:784-256-128-10");
    cr_expect_str_eq(w->spec, "mlp:0784-0256-128-010", "spec keeps what was given");
    cr_expect_eq(workload_params(w, 0, 3), 235146);
    workload_free(w);
    w = parse_ok("transformer:layers=024,hidden=02048,seq=1024,vocab=50257,heads=032");
    cr_expect_str_eq(w->canonical,
                     "transformer:layers=24,hidden=2048,seq=1024,vocab=50257,heads=32");
    workload_free(w);
}

/* Regression: when hidden is not a multiple of 64 the default heads = hidden/64
 * may not divide it, and the message blamed "heads=3", which the user never
 * wrote. It now says the default failed and names a heads= that works: for
 * hidden = 200 the default is 200/64 = 3, and the largest divisor of 200 not
 * above 3 is 2. */
Test(workload, default_heads_that_do_not_divide_hidden_are_explained)
{
    expect_bad("transformer:layers=2,hidden=200,seq=8,vocab=10", "default");
    expect_bad("transformer:layers=2,hidden=200,seq=8,vocab=10", "heads=2");
    struct workload *w = parse_ok("transformer:layers=2,hidden=200,seq=8,vocab=10,heads=2");
    cr_expect_str_eq(w->canonical, "transformer:layers=2,hidden=200,seq=8,vocab=10,heads=2");
    workload_free(w);
    /* hidden = 192 = 3*64: the default 3 divides it */
    w = parse_ok("transformer:layers=2,hidden=192,seq=8,vocab=10");
    cr_expect_str_eq(w->canonical, "transformer:layers=2,hidden=192,seq=8,vocab=10,heads=3");
    workload_free(w);
    /* hidden below 64: one head */
    w = parse_ok("transformer:layers=2,hidden=48,seq=8,vocab=10");
    cr_expect_str_eq(w->canonical, "transformer:layers=2,hidden=48,seq=8,vocab=10,heads=1");
    workload_free(w);
}

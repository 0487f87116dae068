/* core/ckpt_file: the checkpoint format written and read back, and every
 * damaged form of it refused: each truncation, each single-byte change of
 * the header and of the records (the CRC-32 catches any one changed byte),
 * trailing bytes, and identities that differ from the run's. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ckpt_file.h"

static struct ckpt_ident sample_ident(void)
{
    struct ckpt_ident id = {.workers = 2, .servers = 1, .batch = 64, .microbatches = 4,
                            .seed = 7, .lr = 0.05, .momentum = 0.9, .weight_decay = 1e-4,
                            .n_params = 6, .rank = 1, .n_ranks = 3, .step = 10};
    strcpy(id.strategy, "ps-sync");
    strcpy(id.model, "mlp:2-2");
    strcpy(id.data, "synthetic");
    return id;
}

/* A small file: identity, 6 params, 6 momentum values, 3 odd-sized bytes. */
static void make_file(struct ckpt_writer *w)
{
    struct err e = {0};
    const float params[6] = {1, 2, 3, 4, 5, 6}, momentum[6] = {-1, -2, -3, -4, -5, -6};
    struct ckpt_ident id = sample_ident();
    ckpt_writer_init(w);
    cr_assert_eq(ckpt_writer_add_ident(w, &id, &e), 0, "%s", e.msg);
    cr_assert_eq(ckpt_writer_add(w, CKPT_PARAMS, params, sizeof params, &e), 0, "%s", e.msg);
    cr_assert_eq(ckpt_writer_add(w, CKPT_MOMENTUM, momentum, sizeof momentum, &e), 0, "%s", e.msg);
    cr_assert_eq(ckpt_writer_add(w, CKPT_RNG, "abc", 3, &e), 0, "%s", e.msg);
    cr_assert_eq(ckpt_writer_finish(w, &e), 0, "%s", e.msg);
}

Test(ckpt_file, crc32_matches_the_standard_check_value)
{
    /* the CRC-32 check value of "123456789" (IEEE 802.3, as zlib's crc32) */
    cr_expect_eq(ckpt_crc32(0, "123456789", 9), 0xCBF43926u);
    /* continuing a CRC over two pieces gives the whole's */
    cr_expect_eq(ckpt_crc32(ckpt_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
}

Test(ckpt_file, round_trip_gives_back_every_record_and_the_identity)
{
    struct ckpt_writer w;
    make_file(&w);
    struct ckpt_view v;
    struct err e = {0};
    cr_assert_eq(ckpt_parse(w.buf, w.len, "f.ckpt", &v, &e), 0, "%s", e.msg);
    cr_assert_eq(v.len[CKPT_PARAMS], 6 * sizeof(float));
    cr_expect_eq(((const float *)(const void *)v.data[CKPT_PARAMS])[5], 6.0f);
    cr_expect_eq(((const float *)(const void *)v.data[CKPT_MOMENTUM])[0], -1.0f);
    cr_assert_eq(v.len[CKPT_RNG], 3);
    cr_expect_eq(memcmp(v.data[CKPT_RNG], "abc", 3), 0);
    cr_expect_null(v.data[CKPT_SERVER], "a record never written is absent");
    struct ckpt_ident id, want = sample_ident();
    cr_assert_eq(ckpt_ident_read(&v, "f.ckpt", &id, &e), 0, "%s", e.msg);
    cr_expect_str_eq(id.strategy, "ps-sync");
    cr_expect_str_eq(id.model, "mlp:2-2");
    cr_expect_eq(id.lr, want.lr, "lr round-trips exactly (%%.17g)");
    cr_expect_eq(id.weight_decay, want.weight_decay);
    cr_expect_eq(id.step, 10);
    cr_expect_eq(id.rank, 1);
    cr_expect_eq(ckpt_ident_match(&id, &want, false, "f.ckpt", &e), 0, "%s", e.msg);
    ckpt_writer_release(&w);
}

Test(ckpt_file, every_truncation_is_refused_as_truncated_or_not_a_checkpoint)
{
    struct ckpt_writer w;
    make_file(&w);
    for (size_t n = 0; n < w.len; n++) {
        struct ckpt_view v;
        struct err e = {0};
        int rc = ckpt_parse(w.buf, n, "f.ckpt", &v, &e);
        cr_assert_eq(rc, ERR_INPUT, "a file cut to %zu of %zu bytes was accepted", n, w.len);
        cr_assert(strstr(e.msg, "f.ckpt") && (strstr(e.msg, "truncated") || strstr(e.msg, "magic")),
                  "cut to %zu bytes: %s", n, e.msg);
    }
    ckpt_writer_release(&w);
}

Test(ckpt_file, every_single_byte_change_is_refused)
{
    struct ckpt_writer w;
    make_file(&w);
    unsigned char *copy = malloc(w.len);
    cr_assert_not_null(copy);
    /* every byte (header, records, CRC), each changed by two patterns */
    const unsigned char flips[] = {0x01, 0xFF};
    for (size_t i = 0; i < w.len; i++)
        for (int k = 0; k < 2; k++) {
            memcpy(copy, w.buf, w.len);
            copy[i] ^= flips[k];
            struct ckpt_view v;
            struct err e = {0};
            cr_assert_eq(ckpt_parse(copy, w.len, "f.ckpt", &v, &e), ERR_INPUT,
                         "byte %zu of %zu xor 0x%02x was accepted", i, w.len, flips[k]);
            cr_assert(strstr(e.msg, "f.ckpt"), "%s", e.msg);
        }
    free(copy);
    ckpt_writer_release(&w);
}

Test(ckpt_file, trailing_bytes_are_refused)
{
    struct ckpt_writer w;
    make_file(&w);
    unsigned char *longer = calloc(w.len + 8, 1);
    cr_assert_not_null(longer);
    memcpy(longer, w.buf, w.len);
    struct ckpt_view v;
    struct err e = {0};
    cr_expect_eq(ckpt_parse(longer, w.len + 8, "f.ckpt", &v, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "trailing"), "%s", e.msg);
    free(longer);
    ckpt_writer_release(&w);
}

Test(ckpt_file, another_version_is_refused_naming_both)
{
    struct ckpt_writer w;
    make_file(&w);
    uint32_t version = CKPT_VERSION + 1;
    memcpy(w.buf + 8, &version, 4);
    struct ckpt_view v;
    struct err e = {0};
    cr_expect_eq(ckpt_parse(w.buf, w.len, "f.ckpt", &v, &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "version 3") && strstr(e.msg, "versions 1 to 2"), "%s", e.msg);
    ckpt_writer_release(&w);
}

Test(ckpt_file, a_record_written_twice_is_a_writer_error)
{
    struct ckpt_writer w;
    ckpt_writer_init(&w);
    struct err e = {0};
    cr_assert_eq(ckpt_writer_add(&w, CKPT_RNG, "x", 1, &e), 0);
    cr_expect_lt(ckpt_writer_add(&w, CKPT_RNG, "y", 1, &e), 0);
    ckpt_writer_release(&w);
}

Test(ckpt_file, a_mismatched_identity_names_the_option_and_both_values)
{
    struct ckpt_ident file = sample_ident(), run = sample_ident();
    struct err e = {0};
    strcpy(run.strategy, "mirrored");
    cr_expect_eq(ckpt_ident_match(&file, &run, true, "f.ckpt", &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "f.ckpt") && strstr(e.msg, "--strategy ps-sync") &&
              strstr(e.msg, "mirrored"), "%s", e.msg);
    run = sample_ident();
    run.seed = 8;
    cr_expect_eq(ckpt_ident_match(&file, &run, true, "f.ckpt", &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "--seed 7"), "%s", e.msg);
    /* fewer workers: only when the plan may shrink; more: never */
    run = sample_ident();
    run.workers = 1;
    cr_expect_eq(ckpt_ident_match(&file, &run, true, "f.ckpt", &e), 0, "%s", e.msg);
    cr_expect_eq(ckpt_ident_match(&file, &run, false, "f.ckpt", &e), ERR_INPUT);
    run.workers = 3;
    cr_expect_eq(ckpt_ident_match(&file, &run, true, "f.ckpt", &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "2 workers"), "%s", e.msg);
}

/* Real options read as typed: --lr 0.1 was said "0.10000000000000001",
 * which reads as if it were not the 0.1 the user gave; values that differ
 * only past 15 digits still print apart. */
Test(ckpt_file, a_mismatched_rate_reads_as_typed)
{
    struct ckpt_ident file = sample_ident(), run = sample_ident();
    struct err e = {0};
    run.lr = 0.1;
    cr_expect_eq(ckpt_ident_match(&file, &run, false, "f.ckpt", &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "--lr 0.05; this run has 0.1") && !strstr(e.msg, "0.1000"), "%s",
              e.msg);
    run = sample_ident();
    run.momentum = 0.9 + 1e-15;
    cr_expect_eq(ckpt_ident_match(&file, &run, false, "f.ckpt", &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "--momentum 0.9; this run has 0.90000000000000"), "%s", e.msg);
}

/* --chunks, --dp and --inflight are part of the identity: a resume with
 * another value is refused naming the option and both values */
Test(ckpt_file, chunks_dp_and_inflight_must_match_too)
{
    struct ckpt_ident file = sample_ident();
    file.chunks = 2;
    file.dp = 2;
    file.inflight = 3;
    struct err e = {0};
    struct ckpt_ident run = file;
    cr_expect_eq(ckpt_ident_match(&file, &run, false, "f.ckpt", &e), 0, "%s", e.msg);
    run.chunks = 4;
    cr_expect_eq(ckpt_ident_match(&file, &run, false, "f.ckpt", &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "--chunks 2") && strstr(e.msg, "has 4"), "%s", e.msg);
    run = file;
    run.dp = 1;
    cr_expect_eq(ckpt_ident_match(&file, &run, false, "f.ckpt", &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "--dp 2"), "%s", e.msg);
    run = file;
    run.inflight = 2;
    cr_expect_eq(ckpt_ident_match(&file, &run, false, "f.ckpt", &e), ERR_INPUT);
    cr_expect(strstr(e.msg, "--inflight 3") && strstr(e.msg, "has 2"), "%s", e.msg);
}

/* An identity written before they were recorded reads them as 1; one with
 * a value that is not a whole number is malformed */
Test(ckpt_file, identity_without_chunks_dp_inflight_reads_them_as_one)
{
    const char *texts[] = {
        "strategy=mirrored\nmodel=mlp:2-2\ndata=synthetic\nworkers=2\nservers=0\nbatch=64\n"
        "microbatches=1\nseed=7\nlr=0.05\nmomentum=0.9\nweight-decay=0\nparams=6\nrank=0\n"
        "ranks=2\nstep=4\n",
        "strategy=mirrored\nmodel=mlp:2-2\ndata=synthetic\nworkers=2\nservers=0\nbatch=64\n"
        "microbatches=1\nseed=7\ninflight=two\nlr=0.05\nmomentum=0.9\nweight-decay=0\n"
        "params=6\nrank=0\nranks=2\nstep=4\n"};
    for (int k = 0; k < 2; k++) {
        struct ckpt_writer w;
        struct err e = {0};
        ckpt_writer_init(&w);
        cr_assert_eq(ckpt_writer_add(&w, CKPT_IDENT, texts[k], strlen(texts[k]), &e), 0);
        cr_assert_eq(ckpt_writer_finish(&w, &e), 0, "%s", e.msg);
        struct ckpt_view v;
        cr_assert_eq(ckpt_parse(w.buf, w.len, "old.ckpt", &v, &e), 0, "%s", e.msg);
        struct ckpt_ident id;
        int rc = ckpt_ident_read(&v, "old.ckpt", &id, &e);
        if (k == 0) {
            cr_assert_eq(rc, 0, "%s", e.msg);
            cr_expect(id.chunks == 1 && id.dp == 1 && id.inflight == 1);
        } else {
            cr_expect_eq(rc, ERR_INPUT);
            cr_expect(strstr(e.msg, "malformed"), "%s", e.msg);
        }
        ckpt_writer_release(&w);
    }
}

/* ---- what a resume carries: the clock, losses, evaluation points ---------- */

/* A file with the history records of a run at step 10 of a 6-parameter
 * model: the clock, two losses, two --eval-every points (parts as a
 * checkpoint writes them). `bad` changes one thing: 1 a loss of step 10,
 * 2 the points out of order, 3 a point of 5 parameters. */
static void make_history_file(struct ckpt_writer *w, int bad)
{
    struct err e = {0};
    struct ckpt_ident id = sample_ident();
    ckpt_writer_init(w);
    cr_assert_eq(ckpt_writer_add_ident(w, &id, &e), 0, "%s", e.msg);
    double clock[2] = {1.5, 1234.25};
    cr_assert_eq(ckpt_writer_add(w, CKPT_CLOCK, clock, sizeof clock, &e), 0, "%s", e.msg);
    struct step_loss losses[2] = {{.step = 0, .end_s = 0.1, .loss_sum = 147.2, .n_samples = 64},
                                  {.step = bad == 1 ? 10 : 9, .end_s = 1.4, .loss_sum = 60.8,
                                   .n_samples = 64}};
    cr_assert_eq(ckpt_writer_add(w, CKPT_LOSSES, losses, sizeof losses, &e), 0, "%s", e.msg);
    int64_t head[2] = {2, bad == 3 ? 5 : 6};
    int64_t steps[2] = {5, bad == 2 ? 5 : 10};
    double at_s[2] = {0.7, 1.5};
    float params[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    const void *parts[] = {head, steps, at_s, params};
    size_t sizes[] = {sizeof head, sizeof steps, sizeof at_s,
                      (size_t)(2 * head[1]) * sizeof(float)};
    cr_assert_eq(ckpt_writer_add_parts(w, CKPT_EVALS, parts, sizes, 4, &e), 0, "%s", e.msg);
    cr_assert_eq(ckpt_writer_finish(w, &e), 0, "%s", e.msg);
}

Test(ckpt_file, history_round_trips)
{
    struct ckpt_writer w;
    make_history_file(&w, 0);
    struct ckpt_view v;
    struct err e = {0};
    cr_assert_eq(ckpt_parse(w.buf, w.len, "h.ckpt", &v, &e), 0, "%s", e.msg);
    double run_s = 0, monotonic_s = 0;
    cr_assert_eq(ckpt_clock_read(&v, "h.ckpt", &run_s, &monotonic_s, &e), 0, "%s", e.msg);
    cr_expect(run_s == 1.5 && monotonic_s == 1234.25);
    struct step_loss *losses = NULL;
    size_t n = 0;
    cr_assert_eq(ckpt_losses_read(&v, "h.ckpt", 10, &losses, &n, &e), 0, "%s", e.msg);
    cr_assert_eq(n, 2);
    cr_expect(losses[1].step == 9 && losses[1].end_s == 1.4 && losses[1].loss_sum == 60.8 &&
              losses[1].n_samples == 64);
    free(losses);
    struct ckpt_evals ev;
    cr_assert_eq(ckpt_evals_read(&v, "h.ckpt", 6, 10, &ev, &e), 0, "%s", e.msg);
    cr_assert_eq(ev.n, 2);
    cr_expect(ev.step[0] == 5 && ev.step[1] == 10 && ev.at_s[1] == 1.5);
    float last;
    memcpy(&last, ev.params + 11 * sizeof last, sizeof last);
    cr_expect_eq(last, 12.0f, "the second point's last parameter");
    ckpt_evals_release(&ev);
    ckpt_writer_release(&w);
}

/* A version-1 file (no history) reads as one without it: a resume from it
 * has its curves from the resume point, as before. */
Test(ckpt_file, a_file_without_history_has_none)
{
    struct ckpt_writer w;
    make_file(&w);
    uint32_t version = 1;
    memcpy(w.buf + 8, &version, 4);
    uint32_t crc = ckpt_crc32(0, w.buf, w.len - 4);
    memcpy(w.buf + w.len - 4, &crc, 4);
    struct ckpt_view v;
    struct err e = {0};
    cr_assert_eq(ckpt_parse(w.buf, w.len, "old.ckpt", &v, &e), 0, "%s", e.msg);
    double run_s, monotonic_s;
    cr_expect_eq(ckpt_clock_read(&v, "old.ckpt", &run_s, &monotonic_s, &e), 1);
    struct step_loss *losses = NULL;
    size_t n = 5;
    cr_expect_eq(ckpt_losses_read(&v, "old.ckpt", 10, &losses, &n, &e), 0);
    cr_expect(!losses && n == 0);
    struct ckpt_evals ev;
    cr_expect_eq(ckpt_evals_read(&v, "old.ckpt", 6, 10, &ev, &e), 0);
    cr_expect_eq(ev.n, 0);
    ckpt_writer_release(&w);
}

Test(ckpt_file, history_a_resume_could_not_use_is_refused_naming_it)
{
    const char *says[] = {NULL, "loss 1 (step 10", "evaluation point 1 (step 5",
                          "2 points of 5 parameters; this model has 6"};
    for (int bad = 1; bad <= 3; bad++) {
        struct ckpt_writer w;
        make_history_file(&w, bad);
        struct ckpt_view v;
        struct err e = {0};
        cr_assert_eq(ckpt_parse(w.buf, w.len, "h.ckpt", &v, &e), 0, "%s", e.msg);
        struct step_loss *losses = NULL;
        size_t n = 0;
        struct ckpt_evals ev;
        int rc = ckpt_losses_read(&v, "h.ckpt", 10, &losses, &n, &e);
        if (bad == 1) cr_expect(!losses && n == 0, "nothing is handed back");
        free(losses);
        if (rc == 0) rc = ckpt_evals_read(&v, "h.ckpt", 6, 10, &ev, &e);
        cr_expect_eq(rc, ERR_INPUT, "case %d", bad);
        cr_expect(strstr(e.msg, "h.ckpt") && strstr(e.msg, says[bad]), "case %d: %s", bad, e.msg);
        ckpt_writer_release(&w);
    }
}

/* Every parser of strata fuzzed in-process: options, scenario files,
 * cluster profiles, IDX files, report documents, traces, straggler/failure and
 * model specs, checkpoint files and Chakra execution traces. Each parser first
 * runs its corpus (tests/corpus/<parser>/: seeds and every input that ever
 * failed), then fuzz_cases(2000) seeded mutants of it (STRATA_FUZZ_CASES=100000
 * for a soak, STRATA_FUZZ_SEED for other cases). Each case must give 0 or a
 * clean error: a negative code a parser may give (bad input, out of memory, a
 * read that failed), the same code in the struct err, and a message that is
 * not empty and holds no control character (the terminal shows messages). A
 * crash or a sanitizer report (tools/test --sanitize) fails the test; the
 * input that was running is then in /tmp/strata-fuzz-last-<parser>. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/chakra_plan.h"
#include "../core/ckpt_file.h"
#include "../core/config.h"
#include "../core/straggler.h"
#include "../core/trace_read.h"
#include "../core/workload.h"
#include "../nn/data.h"
#include "../sim/cluster.h"
#include "fuzz/mutate.h"
#include "fuzz/targets.h"
#include "helpers.h"

#define FUZZ_DEFAULT_CASES 2000

/* Runs one input through a parser: its return code, e filled on failure. */
typedef int (*fuzz_target)(const struct fuzz_input *in, struct err *e);

static bool is_clean_message(const char *msg)
{
    if (!*msg) return false;
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return false;
    return true;
}

/* The parser's name for messages while a case runs. */
static const char *current_parser = "";

static void check_result(const struct fuzz_input *in, int rc, const struct err *e)
{
    if (rc >= 0) return;
    bool is_parse_code = rc == ERR_INPUT || rc == ERR_NOMEM || rc == ERR_IO;
    cr_assert(is_parse_code && e->code == rc && is_clean_message(e->msg),
              "%s, %s (%zu bytes): rc %d, err code %d, message '%s' (the input is in "
              "/tmp/strata-fuzz-last-%s)",
              current_parser, in->name, in->len, rc, e->code, e->msg, current_parser);
}

static void check_case(const struct fuzz_input *in, fuzz_target run)
{
    struct err e = {0};
    check_result(in, run(in, &e), &e);
}

/* The corpus as it is, then the mutants; extra seeds (made in code) join
 * the corpus first when add_seeds is not NULL. */
static void fuzz_parser(const char *parser, fuzz_target run,
                        void (*add_seeds)(struct fuzz_corpus *c))
{
    current_parser = parser;
    struct fuzz_corpus c = fuzz_corpus_load(parser);
    if (add_seeds) add_seeds(&c);
    for (size_t i = 0; i < c.n; i++) {
        fuzz_save_last(parser, &c.items[i]);
        check_case(&c.items[i], run);
    }
    /* One stream per parser, so adding a parser leaves the others' cases. */
    uint64_t rng = fuzz_seed();
    for (const char *p = parser; *p; p++) rng = rng * 131 + (unsigned char)*p;
    size_t n = fuzz_cases(FUZZ_DEFAULT_CASES);
    for (size_t i = 0; i < n; i++) {
        struct fuzz_input in;
        fuzz_mutate(&c, &rng, &in);
        fuzz_save_last(parser, &in);
        check_case(&in, run);
        free(in.bytes);
    }
    fuzz_clear_last(parser);
    fuzz_corpus_free(&c);
}

TestSuite(fuzz, .timeout = 600);

/* For the parsers that read files: the case's input written to dir/name,
 * that path in path[0..cap). */
static void put_input(char *path, size_t cap, const char *dir, const char *name,
                      const struct fuzz_input *in)
{
    snprintf(path, cap, "%s/%s", dir, name);
    fuzz_write_file(path, in->bytes, in->len);
}

/* ---- options: argv and the values parsed later ----------------------------- */

/* One word a line; a NUL ends its word early, as it would in argv. */
static int run_args(const struct fuzz_input *in, struct err *e)
{
    enum { MAX_WORDS = 512 };
    char *copy = malloc(in->len + 1), *argv[MAX_WORDS];
    cr_assert_not_null(copy);
    memcpy(copy, in->bytes, in->len + 1);
    int argc = 0;
    for (char *p = copy; argc < MAX_WORDS;) {
        argv[argc++] = p;
        char *nl = memchr(p, '\n', (size_t)(copy + in->len - p));
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    /* -f FILE would read whatever file a mutant names: the scenario test
     * fuzzes files; here -f reads nothing. */
    for (int i = 0; i < argc; i++)
        if (!strncmp(argv[i], "-f", 2) || !strncmp(argv[i], "--file", 6)) argv[i] = "--";
    struct config c;
    config_init(&c);
    int rc = config_parse_args(&c, argc, argv, ~0u, e);
    if (rc == 0) rc = fuzz_target_option_values(&c, e);
    config_release(&c);
    free(copy);
    return rc;
}

Test(fuzz, options_on_the_command_line)
{
    fuzz_parser("args", run_args, NULL);
}

/* ---- scenario files --------------------------------------------------------- */

static char scenario_dir[64];

static int run_scenario(const struct fuzz_input *in, struct err *e)
{
    char path[128];
    put_input(path, sizeof path, scenario_dir, "scenario.conf", in);
    return fuzz_target_scenario_file(path, e);
}

Test(fuzz, scenario_files)
{
    test_make_dir(scenario_dir, sizeof scenario_dir, "fuzz-scenario");
    fuzz_parser("scenario", run_scenario, NULL);
    test_remove_dir(scenario_dir);
}

/* ---- cluster profiles ------------------------------------------------------- */

static char cluster_dir[64];

static int run_cluster(const struct fuzz_input *in, struct err *e)
{
    char path[128];
    put_input(path, sizeof path, cluster_dir, "profile.txt", in);
    return fuzz_target_cluster_file(path, e);
}

/* Every preset as the profile file it would be. */
static void add_presets(struct fuzz_corpus *c)
{
    static char text[CLUSTER_TEXT_BYTES];
    for (size_t i = 0; i < cluster_n_presets; i++) {
        size_t n = cluster_format(&cluster_presets[i], text, sizeof text);
        cr_assert_lt(n, sizeof text);
        char name[96];
        snprintf(name, sizeof name, "preset %s", cluster_presets[i].name);
        fuzz_corpus_add(c, text, n, name);
    }
}

Test(fuzz, cluster_profiles)
{
    test_make_dir(cluster_dir, sizeof cluster_dir, "fuzz-cluster");
    fuzz_parser("cluster", run_cluster, add_presets);
    test_remove_dir(cluster_dir);
}

/* ---- IDX files --------------------------------------------------------------- */

/* A data directory of four valid files (the corpus's seeds); each case puts
 * its mutant in the place of one of them, then puts the valid one back. */
static char idx_dir[64];
static struct fuzz_input idx_images, idx_labels;
static uint64_t idx_rng = 7;

static void idx_put(const char *base, const struct fuzz_input *in, bool is_gz)
{
    char plain[160], gz[160];
    snprintf(plain, sizeof plain, "%s/%s", idx_dir, base);
    snprintf(gz, sizeof gz, "%s/%s.gz", idx_dir, base);
    remove(is_gz ? plain : gz);
    fuzz_write_file(is_gz ? gz : plain, in->bytes, in->len);
}

static int run_idx(const struct fuzz_input *in, struct err *e)
{
    bool is_labels = strstr(in->name, "/labels-") != NULL;
    bool is_gz = strstr(in->name, ".gz") != NULL;
    bool is_test = test_rng_next(&idx_rng) % 3 == 0;
    const char *base = is_labels ? (is_test ? "t10k-labels-idx1-ubyte" : "train-labels-idx1-ubyte")
                                 : (is_test ? "t10k-images-idx3-ubyte" : "train-images-idx3-ubyte");
    idx_put(base, in, is_gz);
    struct data d;
    int rc = data_load(idx_dir, 1, &d, e);
    if (rc == 0) data_release(&d);
    idx_put(base, is_labels ? &idx_labels : &idx_images, false);
    return rc;
}

Test(fuzz, idx_files)
{
    test_make_dir(idx_dir, sizeof idx_dir, "fuzz-idx");
    char path[512];
    snprintf(path, sizeof path, "%s/tests/corpus/idx/images-seed.idx", STRATA_SOURCE_DIR);
    idx_images.bytes = test_slurp_n(path, &idx_images.len);
    snprintf(path, sizeof path, "%s/tests/corpus/idx/labels-seed.idx", STRATA_SOURCE_DIR);
    idx_labels.bytes = test_slurp_n(path, &idx_labels.len);
    idx_put("train-images-idx3-ubyte", &idx_images, false);
    idx_put("t10k-images-idx3-ubyte", &idx_images, false);
    idx_put("train-labels-idx1-ubyte", &idx_labels, false);
    idx_put("t10k-labels-idx1-ubyte", &idx_labels, false);
    fuzz_parser("idx", run_idx, NULL);
    free(idx_images.bytes);
    free(idx_labels.bytes);
    test_remove_dir(idx_dir);
}

/* ---- report documents: report, compare, sweep, validate --------------------- */

static int run_report(const struct fuzz_input *in, struct err *e)
{
    return fuzz_target_report(in->bytes, in->len, e);
}

Test(fuzz, report_documents)
{
    fuzz_parser("report", run_report, NULL);
}

/* ---- strata traces (strata replay's input) ------------------------------------ */

static int run_trace(const struct fuzz_input *in, struct err *e)
{
    struct trace_doc d;
    int rc = trace_doc_parse(in->bytes, in->len, "fuzz.json", &d, e);
    trace_doc_release(&d);
    return rc;
}

Test(fuzz, trace_documents)
{
    fuzz_parser("trace", run_trace, NULL);
}

/* ---- --straggler and --fail ---------------------------------------------------- */

static int run_disturb(const struct fuzz_input *in, struct err *e)
{
    struct straggler_spec s;
    struct failure_spec f;
    int rc = straggler_parse(in->bytes, &s, e);
    if (rc == 0) {
        char text[256];
        straggler_format(&s, text, sizeof text);
    }
    /* The same text as --fail: both parsers must hold. */
    struct err fail_e = {0};
    check_result(in, failure_parse(in->bytes, &f, &fail_e), &fail_e);
    return rc;
}

Test(fuzz, straggler_and_failure_specs)
{
    fuzz_parser("disturb", run_disturb, NULL);
}

/* ---- --model ------------------------------------------------------------------ */

static int run_model(const struct fuzz_input *in, struct err *e)
{
    struct workload *w = NULL;
    int rc = workload_parse(in->bytes, &w, e);
    workload_free(w);
    return rc;
}

Test(fuzz, model_specs)
{
    fuzz_parser("model", run_model, NULL);
}

/* ---- checkpoint files (core/ckpt_file) ---------------------------------------- */


/* A CRC-32 guards every checkpoint, so almost every mutant would stop at
 * it: each case also runs with the CRC made right again, which lets the
 * mutant reach the records' checks. */
static int run_ckpt_as(const char *bytes, size_t len, struct err *e)
{
    struct ckpt_view v;
    int rc = ckpt_parse(bytes, len, "fuzz.ckpt", &v, e);
    if (rc < 0) return rc;
    struct ckpt_ident id;
    TRY(ckpt_ident_read(&v, "fuzz.ckpt", &id, e));
    /* what a resume carries, read as a resume of this file's run would */
    double run_s, monotonic_s;
    TRY(ckpt_clock_read(&v, "fuzz.ckpt", &run_s, &monotonic_s, e));
    struct step_loss *losses = NULL;
    size_t n = 0;
    TRY(ckpt_losses_read(&v, "fuzz.ckpt", id.step, &losses, &n, e));
    free(losses);
    struct ckpt_evals ev;
    TRY(ckpt_evals_read(&v, "fuzz.ckpt", id.n_params, id.step, &ev, e));
    float sum = 0, x;
    for (int64_t i = 0; i < ev.n * id.n_params; i++) {   /* every byte it points at */
        memcpy(&x, ev.params + (size_t)i * sizeof x, sizeof x);
        sum += x;
    }
    (void)sum;
    ckpt_evals_release(&ev);
    return 0;
}

static int run_ckpt(const struct fuzz_input *in, struct err *e)
{
    int rc = run_ckpt_as(in->bytes, in->len, e);
    if (in->len < CKPT_HEADER_BYTES + CKPT_TRAILER_BYTES) return rc;
    check_result(in, rc, e);
    char *fixed = malloc(in->len);
    cr_assert_not_null(fixed);
    memcpy(fixed, in->bytes, in->len);
    size_t body = in->len - CKPT_TRAILER_BYTES;
    uint32_t crc = ckpt_crc32(0, fixed, body);
    for (int i = 0; i < 4; i++) fixed[body + (size_t)i] = (char)(crc >> (8 * i));   /* little-endian */
    *e = (struct err){0};
    rc = run_ckpt_as(fixed, in->len, e);
    free(fixed);
    return rc;
}

Test(fuzz, checkpoint_files)
{
    fuzz_parser("ckpt", run_ckpt, NULL);
}

/* ---- Chakra execution traces (core/chakra_decode, core/chakra_plan) ----------- */

/* One rank's .et file: decoded, then (when it decodes) read into a plan as
 * `strata sim --workload` reads it, its scenario options and workload too. */
static int run_chakra(const struct fuzz_input *in, struct err *e)
{
    struct chakra_file f;
    TRY(chakra_decode(in->bytes, in->len, "fuzz.0.et", &f, e));
    struct chakra_trace t = {.dir = "fuzz", .name = "fuzz", .n_files = 1, .files = &f};
    const struct chakra_attr *mark = chakra_attr_find(&f.attrs, "strata_plan");
    t.is_strata = mark && mark->kind == CHAKRA_ATTR_INT && mark->i == 1;
    struct config c;
    config_init(&c);
    struct workload *w = NULL;
    struct plan *p = NULL;
    chakra_left_outs left = {0};
    int rc = chakra_trace_options(&t, &c, e);
    if (rc == 0)
        rc = t.is_strata ? workload_parse(c.model, &w, e)
                         : chakra_workload_placeholder("chakra:fuzz", &w, e);
    if (rc == 0) rc = chakra_trace_plan(&t, w, 64, &p, &left, e);
    plan_free(p);
    vec_free(&left);
    workload_free(w);
    config_release(&c);
    chakra_file_release(&f);
    return rc;
}

Test(fuzz, chakra_traces)
{
    fuzz_parser("chakra", run_chakra, NULL);
}

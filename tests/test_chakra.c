/* core/pb_wire.c, core/chakra_*.c and the commands around them: the wire
 * format against protobuf's documented encodings, the round trip (schedule
 * --chakra, then sim --workload gives the very report of the strategy's own
 * run, byte for byte), a hand-written trace of another tool with nodes
 * strata cannot model (counted, never dropped silently), and malformed
 * files refused with exit 2. protoc's outside check is test_chakra_protoc.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/chakra.h"
#include "../core/pb_wire.h"
#include "chakra/trace_builder.h"
#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(chakra, .timeout = 300);

/* --- the wire format ------------------------------------------------------------ */

/* protobuf.dev's encoding guide: 150 in field 1 is 08 96 01; 300 as a
 * varint is ac 02; -1 as an int64 takes ten bytes ending in 01. */
Test(chakra, varints_encode_as_protobuf_documents)
{
    struct pb_buf b = {0};
    pb_put_uint64(&b, 1, 150);
    pb_put_varint(&b, 300);
    pb_put_int64(&b, 2, -1);
    cr_assert_eq(b.len, 3 + 2 + 11);
    const uint8_t want[] = {0x08, 0x96, 0x01, 0xac, 0x02, 0x10, 0xff, 0xff, 0xff, 0xff,
                            0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    cr_assert_arr_eq(b.data, want, sizeof want);
    pb_buf_free(&b);
}

Test(chakra, fields_read_back_what_was_written)
{
    struct pb_buf b = {0};
    const uint64_t values[] = {0, 1, 127, 128, 16383, 16384, (uint64_t)1 << 63, UINT64_MAX};
    for (int i = 0; i < 8; i++) pb_put_uint64(&b, (uint32_t)(i + 1), values[i]);
    pb_put_double(&b, 100, -0.1);
    pb_put_string(&b, 536870911, "max field");
    struct pb_reader r = pb_reader_of(b.data, b.len);
    struct pb_field f;
    struct err e = {0};
    for (int i = 0; i < 8; i++) {
        cr_assert_eq(pb_next_field(&r, &f, "test", &e), 1, "%s", e.msg);
        cr_expect_eq(f.number, (uint32_t)(i + 1));
        cr_expect_eq(f.value, values[i], "value %d: %llu", i, (unsigned long long)f.value);
    }
    cr_assert_eq(pb_next_field(&r, &f, "test", &e), 1);
    cr_expect_eq(f.wire_type, PB_I64);
    cr_expect_eq(pb_bits_to_double(f.value), -0.1);   /* bits, so exactly */
    cr_assert_eq(pb_next_field(&r, &f, "test", &e), 1);
    cr_expect_eq(f.number, 536870911u);
    cr_expect_eq(f.len, 9u);
    cr_expect_eq(memcmp(f.data, "max field", 9), 0);
    cr_expect_eq(pb_next_field(&r, &f, "test", &e), 0);
    pb_buf_free(&b);
}

/* Each malformed message is ERR_INPUT with a message, never a read past
 * the end (the sanitizer builds would see it). */
Test(chakra, malformed_bytes_are_refused_not_overread)
{
    static const struct {
        const char *why;
        uint8_t bytes[16];
        size_t n;
    } cases[] = {
        {"runs past the end", {0x08, 0x96}, 2},                              /* varint cut */
        {"overflows 64 bits", {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                            0x01}, 12},
        {"overflows 64 bits", {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},
         11},
        {"past the end", {0x12, 0x05, 'a', 'b'}, 4},                          /* length */
        {"groups are deprecated", {0x0b, 0x0c}, 2},                           /* wire type 3 */
        {"not allowed", {0x00, 0x01}, 2},                                     /* field 0 */
        {"8-byte field", {0x09, 1, 2, 3}, 4},                                 /* fixed64 cut */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct pb_reader r = pb_reader_of(cases[i].bytes, cases[i].n);
        struct pb_field f;
        struct err e = {0};
        int rc;
        while ((rc = pb_next_field(&r, &f, "case", &e)) == 1) continue;
        cr_expect_eq(rc, ERR_INPUT, "case %zu: rc %d", i, rc);
        cr_expect_not_null(strstr(e.msg, cases[i].why), "case %zu: '%s'", i, e.msg);
    }
}

/* --- the round trip ------------------------------------------------------------- */

static void expect_same_files(const char *a, const char *b, const char *what)
{
    size_t na, nb;
    char *x = test_slurp_n(a, &na), *y = test_slurp_n(b, &nb);
    cr_expect(na == nb && memcmp(x, y, na) == 0, "%s: %s and %s differ", what, a, b);
    free(x);
    free(y);
}

/* The seven classic strategies, with stragglers drawn from the seed: the
 * report of the imported plan is the strategy's own, byte for byte (the
 * strategy's name, its options and ps-* servers' policy come back through
 * the metadata). */
Test(chakra, export_then_import_reproduces_every_classic_strategy)
{
    const char *strategies[] = {"mirrored", "ps-sync", "ps-async", "ps-ssp",
                                "model", "pipeline-gpipe", "pipeline-1f1b"};
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        const char *st = strategies[i];
        char dir[128];
        snprintf(dir, sizeof dir, "%s/%s", test_tmp_dir, st);
        char spec[160];
        snprintf(spec, sizeof spec, "chakra:%s", dir);
        struct run r = RUN("schedule", "--strategy", st, "--devices", "4", "--microbatches", "4",
                           "--staleness", "2", "--model", "mlp:64-64-64-64-10", "--chakra", dir);
        cr_assert_eq(r.status, 0, "%s: schedule --chakra: %s", st, r.err);
        run_free(&r);
        char *want = strdup(test_tmp_path("want.json")), *got = strdup(test_tmp_path("got.json"));
        r = RUN("sim", "--strategy", st, "--devices", "4", "--microbatches", "4", "--staleness",
                "2", "--model", "mlp:64-64-64-64-10", "--cluster", "cpu-loopback", "--straggler",
                "exp:0.5", "--steps", "6", "--json", want);
        cr_assert_eq(r.status, 0, "%s: %s", st, r.err);
        run_free(&r);
        r = RUN("sim", "--workload", spec, "--cluster", "cpu-loopback", "--straggler", "exp:0.5",
                "--steps", "6", "--json", got);
        cr_assert_eq(r.status, 0, "%s: sim --workload: %s", st, r.err);
        cr_expect_eq(r.err[0], '\0', "%s: a strata trace leaves nothing out: %s", st, r.err);
        run_free(&r);
        expect_same_files(want, got, st);
        free(want);
        free(got);
    }
}

/* The strategies beyond the seven, each with what makes its plan its own
 * (a plan field the traces must carry: groups of shards, chunks, split
 * backwards, steps in flight, replicas of stages), round-trip as well: a
 * new plan field that the traces do not carry fails here. */
Test(chakra, export_then_import_reproduces_the_other_strategies)
{
    static const char *const cases[][8] = {
        {"mirrored-zero1", "--devices", "4", NULL},
        {"pipeline-interleaved", "--devices", "2", "--chunks", "2", NULL},
        {"pipeline-zb", "--devices", "4", "--microbatches", "8", NULL},
        {"pipelined-steps", "--devices", "4", "--inflight", "2", NULL},
        {"pipeline-1f1b", "--devices", "4", "--dp", "2", NULL},
        {"ps-sync", "--devices", "4", "--servers", "2", "--backup-workers", "1", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *st = cases[i][0];
        char dir[160], spec[200];
        snprintf(dir, sizeof dir, "%s/other-%zu", test_tmp_dir, i);
        snprintf(spec, sizeof spec, "chakra:%s", dir);
        char *want = strdup(test_tmp_path("want.json")), *got = strdup(test_tmp_path("got.json"));
        const char *sched[24] = {"schedule", "--strategy", st, "--model", "mlp:64-64-64-64-10"};
        const char *own[32] = {"sim", "--strategy", st, "--model", "mlp:64-64-64-64-10",
                               "--cluster", "cpu-loopback", "--straggler", "exp:0.5",
                               "--steps", "6", "--json", want};
        int n_sched = 5, n_own = 13;
        for (int k = 1; cases[i][k]; k++) sched[n_sched++] = own[n_own++] = cases[i][k];
        sched[n_sched++] = "--chakra";
        sched[n_sched++] = dir;
        struct run r = run_strata(sched);
        cr_assert_eq(r.status, 0, "%s: schedule --chakra: %s", st, r.err);
        run_free(&r);
        r = run_strata(own);
        cr_assert_eq(r.status, 0, "%s: %s", st, r.err);
        run_free(&r);
        r = RUN("sim", "--workload", spec, "--cluster", "cpu-loopback", "--straggler", "exp:0.5",
                "--steps", "6", "--json", got);
        cr_assert_eq(r.status, 0, "%s: sim --workload: %s", st, r.err);
        run_free(&r);
        expect_same_files(want, got, st);
        free(want);
        free(got);
    }
}

/* Writes mirrored's traces on `devices` devices into test_tmp_dir/name, and
 * into spec the workload that reads them back ("chakra:DIR"). */
static void export_mirrored(const char *name, const char *devices, char *spec, size_t n)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/%s", test_tmp_dir, name);
    snprintf(spec, n, "chakra:%s", dir);
    expect_ok(RUN("schedule", "--strategy", "mirrored", "--devices", devices, "--chakra", dir),
              "schedule --chakra");
}

/* A failure and the restart it causes replay the same on the imported plan. */
Test(chakra, a_failure_on_the_imported_plan_is_the_same_failure)
{
    char spec[160];
    export_mirrored("mirrored", "4", spec, sizeof spec);
    char *want = strdup(test_tmp_path("want.json")), *got = strdup(test_tmp_path("got.json"));
    struct run r = RUN("sim", "--strategy", "mirrored", "--devices", "4", "--cluster", "cpu-loopback",
            "--fail", "1@0.05s", "--checkpoint-every", "5", "--steps", "30", "--json", want);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN("sim", "--workload", spec, "--cluster", "cpu-loopback", "--fail", "1@0.05s",
            "--checkpoint-every", "5", "--steps", "30", "--json", got);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    expect_same_files(want, got, "mirrored --fail");
    free(want);
    free(got);
}

/* A scenario option given beside the traces would be ignored: refused. */
Test(chakra, an_option_the_traces_already_fix_is_refused)
{
    char spec[160];
    export_mirrored("m", "2", spec, sizeof spec);
    expect_refused(RUN("sim", "--workload", spec, "--devices", "8"), "--devices", "leave");
    expect_refused(RUN("sim", "--workload", spec, "--strategy", "ps-sync"), "--strategy",
                   "leave");
    /* the same values as the traces' are no conflict */
    struct run same = RUN("sim", "--workload", spec, "--devices", "2", "--strategy", "mirrored",
                          "--steps", "2");
    cr_expect_eq(same.status, 0, "%s", same.err);
    run_free(&same);
}

/* --- another tool's trace --------------------------------------------------------- */

/* Two ranks as PyTorch's converter might leave them: rank 0 computes for
 * a recorded 100 us, loads memory, sends to rank 1; both all-reduce, both
 * run an all-to-all, rank 0 has a node of a type the schema lacks. Rank 1
 * computes 1e9 FLOPs (num_ops, no duration). */
static void write_foreign(const char *dir)
{
    mkdir(dir, 0777);
    const struct tb_node rank0[] = {
        {.id = 10, .type = CHAKRA_COMP_NODE, .duration_micros = 100, TB_NO_DEPS, TB_NONE},
        {.id = 11, .type = CHAKRA_MEM_LOAD_NODE, TB_DEPS(10), TB_NONE},
        {.id = 12, .type = CHAKRA_COMM_SEND_NODE, TB_DEPS(11), .num_ops = -1, .comm_src = 0,
         .comm_dst = 1, .comm_tag = 7, .comm_size = 1 << 20, .comm_type = -1},
        {.id = 13, .type = CHAKRA_COMM_COLL_NODE, TB_DEPS(12), .num_ops = -1, .comm_src = -1,
         .comm_dst = -1, .comm_tag = -1, .comm_size = 1 << 22, .comm_type = CHAKRA_ALL_REDUCE},
        {.id = 14, .type = CHAKRA_COMM_COLL_NODE, TB_DEPS(13), .num_ops = -1, .comm_src = -1,
         .comm_dst = -1, .comm_tag = -1, .comm_size = 4096, .comm_type = CHAKRA_ALL_TO_ALL},
        {.id = 15, .type = 12, TB_DEPS(14), TB_NONE},
    };
    const struct tb_node rank1[] = {
        /* listed before what it depends on: strata orders by dependencies */
        {.id = 3, .type = CHAKRA_COMM_RECV_NODE, TB_DEPS(1), .num_ops = -1, .comm_src = 0,
         .comm_dst = 1, .comm_tag = 7, .comm_size = 1 << 20, .comm_type = -1},
        {.id = 1, .type = CHAKRA_COMP_NODE, TB_NO_DEPS, .num_ops = 1000000000, .comm_src = -1,
         .comm_dst = -1, .comm_tag = -1, .comm_size = -1, .comm_type = -1},
        {.id = 4, .type = CHAKRA_COMM_COLL_NODE, TB_DEPS(3), .num_ops = -1, .comm_src = -1,
         .comm_dst = -1, .comm_tag = -1, .comm_size = 1 << 22, .comm_type = CHAKRA_ALL_REDUCE},
        {.id = 5, .type = CHAKRA_COMM_COLL_NODE, TB_DEPS(4), .num_ops = -1, .comm_src = -1,
         .comm_dst = -1, .comm_tag = -1, .comm_size = 4096, .comm_type = CHAKRA_ALL_TO_ALL},
    };
    char path[256];
    snprintf(path, sizeof path, "%s/torch.0.et", dir);
    tb_write(path, rank0, 6);
    snprintf(path, sizeof path, "%s/torch.1.et", dir);
    tb_write(path, rank1, 4);
}

Test(chakra, a_foreign_trace_runs_and_counts_what_it_leaves_out)
{
    char dir[128], spec[160];
    snprintf(dir, sizeof dir, "%s/torch", test_tmp_dir);
    snprintf(spec, sizeof spec, "chakra:%s", dir);
    write_foreign(dir);
    const char *json = test_tmp_path("foreign.json");
    struct run r = RUN("sim", "--workload", spec, "--steps", "3", "--json", json);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.err, "1 node of type MEM_LOAD_NODE not modelled: left out"),
                       "%s", r.err);
    cr_expect_not_null(strstr(r.err, "2 nodes of type COMM_COLL_NODE ALL_TO_ALL not modelled"),
                       "%s", r.err);
    cr_expect_not_null(strstr(r.err, "1 node of type node type 12 not modelled"), "%s", r.err);
    run_free(&r);
    cJSON *rep = read_json(json);
    cr_expect_str_eq(str_at(rep, "strategy"), "chakra");
    cr_expect_eq(num_at(rep, "devices", NULL), 2);
    /* rank 0's recorded 100 us bound the step from below: the time is the
     * trace's, not the roofline's (1e9 FLOPs are ~1 us on an H100) */
    double step_s = num_at(rep, "step_time_s", "mean");
    cr_expect(step_s >= 100e-6 && step_s < 1e-2, "step %g s", step_s);
    cJSON_Delete(rep);

    /* the report page says it too, among the notes under its table */
    const char *html = test_tmp_path("foreign.html");
    r = RUN("sim", "--workload", spec, "--steps", "3", "--html", html);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *page = test_slurp(html);
    cr_expect_not_null(strstr(page, "2 nodes of type COMM_COLL_NODE ALL_TO_ALL not modelled"));
    free(page);

    /* a straggler of the traced job: rank 0 three times slower, its 100 us
     * now 300 us */
    r = RUN("sim", "--workload", spec, "--steps", "3", "--straggler", "slow:0=3", "--json", json);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    rep = read_json(json);
    double slow_s = num_at(rep, "step_time_s", "mean");
    cr_expect(slow_s >= 300e-6 && slow_s > step_s + 150e-6, "step %g s, was %g s", slow_s,
              step_s);
    cJSON_Delete(rep);
}

/* --- refused input ---------------------------------------------------------------- */

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

Test(chakra, malformed_traces_exit_2_naming_the_file)
{
    char dir[128], spec[160], path[256];
    snprintf(dir, sizeof dir, "%s/bad", test_tmp_dir);
    snprintf(spec, sizeof spec, "chakra:%s", dir);
    mkdir(dir, 0777);
    expect_refused(RUN("sim", "--workload", spec), "holds no Chakra traces", NULL);
    expect_refused(RUN("sim", "--workload", "torch"), "--workload", "chakra:DIR");

    /* a length prefix longer than the file */
    snprintf(path, sizeof path, "%s/t.0.et", dir);
    write_bytes(path, "\x05\x0a\x01", 3);
    expect_refused(RUN("sim", "--workload", spec), "t.0.et", "runs past the end");
    /* a good metadata, then a node whose varint never ends */
    write_bytes(path, "\x00\x03\x08\xff\xff", 5);
    expect_refused(RUN("sim", "--workload", spec), "node 0", "truncated");
    /* rank 1 without rank 0 */
    remove(path);
    snprintf(path, sizeof path, "%s/t.1.et", dir);
    write_bytes(path, "\x00", 1);
    expect_refused(RUN("sim", "--workload", spec), "t.0.et is missing",
                   "the traces go to rank 1");   /* not "ranks go 0 to 0" */
    /* a send to a rank the trace lacks */
    remove(path);
    const struct tb_node lone[] = {
        {.id = 0, .type = CHAKRA_COMM_SEND_NODE, TB_NO_DEPS, .num_ops = -1, .comm_src = 0,
         .comm_dst = 5, .comm_tag = 0, .comm_size = 8, .comm_type = -1}};
    snprintf(path, sizeof path, "%s/t.0.et", dir);
    tb_write(path, lone, 1);
    expect_refused(RUN("sim", "--workload", spec), "comm_dst 5", "not another rank");
    /* a cycle */
    const struct tb_node cycle[] = {
        {.id = 0, .type = CHAKRA_COMP_NODE, TB_DEPS(1), TB_NONE},
        {.id = 1, .type = CHAKRA_COMP_NODE, TB_DEPS(0), TB_NONE}};
    tb_write(path, cycle, 2);
    expect_refused(RUN("sim", "--workload", spec), "cycle", NULL);
    /* a send nobody receives */
    const struct tb_node unmatched[] = {
        {.id = 0, .type = CHAKRA_COMM_SEND_NODE, TB_NO_DEPS, .num_ops = -1, .comm_src = 0,
         .comm_dst = 1, .comm_tag = 0, .comm_size = 8, .comm_type = -1}};
    tb_write(path, unmatched, 1);
    snprintf(path, sizeof path, "%s/t.1.et", dir);
    tb_write(path, NULL, 0);
    expect_refused(RUN("sim", "--workload", spec), "not a plan strata can run", NULL);
}

Test(chakra, schedule_chakra_refuses_a_directory_it_cannot_make)
{
    expect_refused(RUN("schedule", "--chakra", "/nonexistent-strata-dir/x"), "--chakra",
                   "/nonexistent");
}

/* A trace cannot be rebuilt for fewer workers, so --on-failure shrink
 * stops at the first failure; the message suggests restart, and continue
 * only to asynchronous servers: mirrored refuses continue. */
Test(chakra, shrink_on_traces_suggests_only_policies_the_plan_accepts)
{
    char spec[160];
    export_mirrored("m", "4", spec, sizeof spec);
    struct run r = RUN("sim", "--workload", spec, "--on-failure", "shrink", "--fail", "1@3");
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect_not_null(strstr(r.err, "use --on-failure restart)"), "%s", r.err);
    cr_expect_null(strstr(r.err, "continue"), "mirrored refuses continue: %s", r.err);
    run_free(&r);
}

/* Replaces the first `from` in the file at path with `to`, of the same
 * length, so that the protobuf framing stays valid. */
static void replace_in_file(const char *path, const char *from, const char *to)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    size_t len = strlen(from);
    cr_assert_eq(strlen(to), len);
    char *at = NULL;
    for (size_t i = 0; i + len <= n && !at; i++)
        if (!memcmp(buf + i, from, len)) at = buf + i;
    cr_assert_not_null(at, "%s holds '%s'", path, from);
    memcpy(at, to, len);
    write_bytes(path, buf, n);
}

/* The metadata is rank 0's file's (a server's shard its own): errors about
 * it named only the directory, leaving the user to guess which file. */
Test(chakra, damaged_metadata_names_the_file_and_the_field)
{
    char dir[128], spec[160], path[256];
    snprintf(dir, sizeof dir, "%s/meta", test_tmp_dir);
    snprintf(spec, sizeof spec, "chakra:%s", dir);
    static const struct { const char *file, *from, *to, *must_say; } bad[] = {
        {"ps-sync.0.et", "devices=2", "devicez=2", "metadata strata_option 'devicez=2' names no"},
        {"ps-sync.0.et", "devices=2", "devices=x", "metadata strata_option 'devices=x'"},
        {"ps-sync.0.et", "chunks=2", "chunks_2", "metadata strata_option 'chunks_2' is not"},
        {"ps-sync.0.et", "\x04sync", "\x04synk", "metadata strata_policy 'synk'"},
        /* the run's name in tables and pages: no terminal escape, no empty name */
        {"ps-sync.0.et", "\x07ps-sync", "\x07ps\x1bsync", "metadata strata_strategy 'ps\\x1bsync' is not"},
        {"ps-sync.0.et", "strata_strategy", "strata_strateg_", "has no strata_strategy"},
        {"ps-sync.2.et", "strata_shard", "strata_shart", "server rank 2's metadata has no "
                                                         "strata_shard"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct run r = RUN("schedule", "--strategy", "ps-sync", "--devices", "2", "--chakra", dir);
        cr_assert_eq(r.status, 0, "%s", r.err);
        run_free(&r);
        snprintf(path, sizeof path, "%s/%s", dir, bad[i].file);
        replace_in_file(path, bad[i].from, bad[i].to);
        expect_refused(RUN("sim", "--workload", spec), path, bad[i].must_say);
    }
}

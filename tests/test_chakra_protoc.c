/* The outside check of core/chakra_write.c: every message of strata's
 * Chakra traces, for the seven classic strategies, decodes with protobuf's
 * own compiler against the schema committed in third_party/chakra/et_def.proto
 * (`protoc --decode=ChakraProtoMsg.Node`, one length-delimited message at a
 * time), and a trace protoc encoded from text is one strata simulates.
 * Without protoc (Debian's protobuf-compiler, which tools/setup installs)
 * every test here is SKIPPED with that reason, never passed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/pb_wire.h"
#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(chakra_protoc, .timeout = 600);

#define SCHEMA_DIR STRATA_SOURCE_DIR "/third_party/chakra"

static void need_protoc(void)
{
    struct run r = run_argv((const char *const[]){"sh", "-c", "command -v protoc", NULL});
    bool has = r.status == 0;
    run_free(&r);
    if (!has)
        cr_skip_test("protoc is not installed (Debian's protobuf-compiler; tools/setup "
                     "installs it): the outside check of the Chakra traces did not run");
}

/* protoc's text form of one message of type `type` (a ChakraProtoMsg name);
 * the test fails when protoc refuses it. Caller frees. */
static char *protoc_decode(const char *type, const uint8_t *msg, size_t n)
{
    const char *bin = test_tmp_path("msg.bin");
    FILE *f = fopen(bin, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(msg, 1, n, f), n);
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "protoc -I '%s' --decode=ChakraProtoMsg.%s et_def.proto < '%s'",
             SCHEMA_DIR, type, bin);
    struct run r = run_argv((const char *const[]){"sh", "-c", cmd, NULL});
    cr_assert_eq(r.status, 0, "protoc --decode=%s refused a message: %s", type, r.err);
    char *out = r.out;
    r.out = NULL;
    run_free(&r);
    return out;
}

/* Decodes every message of path; counts node types and texts seen. */
struct seen {
    int n_nodes, n_comp, n_send, n_recv, n_coll, n_ps_comment;
    bool has_metadata_version;
};

static void decode_file(const char *path, struct seen *s)
{
    size_t n;
    char *data = test_slurp_n(path, &n);
    struct pb_reader stream = pb_reader_of(data, n), msg;
    struct err e = {0};
    int k = 0, rc;
    while ((rc = pb_next_delimited(&stream, &msg, path, &e)) == 1) {
        char *text = protoc_decode(k == 0 ? "GlobalMetadata" : "Node", msg.start,
                                   (size_t)(msg.end - msg.start));
        if (k == 0) {
            s->has_metadata_version = strstr(text, "version: \"0.0.4\"") != NULL;
        } else {
            s->n_nodes++;
            if (strstr(text, "type: COMP_NODE")) {
                s->n_comp++;
                cr_expect_not_null(strstr(text, "name: \"num_ops\""), "%s: %s", path, text);
                cr_expect_not_null(strstr(text, "name: \"tensor_size\""), "%s: %s", path, text);
            }
            if (strstr(text, "type: COMM_SEND_NODE")) s->n_send++;
            if (strstr(text, "type: COMM_RECV_NODE")) s->n_recv++;
            if (strstr(text, "type: COMM_SEND_NODE") || strstr(text, "type: COMM_RECV_NODE")) {
                cr_expect_not_null(strstr(text, "name: \"comm_src\""), "%s: %s", path, text);
                cr_expect_not_null(strstr(text, "name: \"comm_dst\""), "%s: %s", path, text);
                cr_expect_not_null(strstr(text, "name: \"comm_tag\""), "%s: %s", path, text);
            }
            if (strstr(text, "type: COMM_COLL_NODE")) {
                s->n_coll++;
                cr_expect_not_null(strstr(text, "name: \"comm_type\""), "%s: %s", path, text);
                cr_expect_not_null(strstr(text, "name: \"comm_size\""), "%s: %s", path, text);
            }
            if (strstr(text, "string_val: \"parameter-server ")) s->n_ps_comment++;
        }
        free(text);
        k++;
    }
    cr_assert_eq(rc, 0, "%s", e.msg);
    free(data);
}

Test(chakra_protoc, every_message_of_the_seven_strategies_decodes)
{
    need_protoc();
    static const struct {
        const char *name;
        int n_ranks;
        bool has_p2p, has_coll, has_servers;
    } cases[] = {
        {"mirrored", 2, false, true, false},       {"ps-sync", 3, true, false, true},
        {"ps-async", 3, true, false, true},        {"ps-ssp", 3, true, false, true},
        {"model", 2, true, false, false},          {"pipeline-gpipe", 2, true, false, false},
        {"pipeline-1f1b", 2, true, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char dir[160];
        snprintf(dir, sizeof dir, "%s/%s", test_tmp_dir, cases[i].name);
        struct run r = RUN("schedule", "--strategy", cases[i].name, "--devices", "2",
                           "--microbatches", "2", "--chakra", dir);
        cr_assert_eq(r.status, 0, "%s: %s", cases[i].name, r.err);
        run_free(&r);
        struct seen s = {0};
        for (int rank = 0; rank < cases[i].n_ranks; rank++) {
            char path[256];
            snprintf(path, sizeof path, "%s/%s.%d.et", dir, cases[i].name, rank);
            decode_file(path, &s);
            cr_expect(s.has_metadata_version, "%s: no version in the metadata", path);
        }
        cr_expect_gt(s.n_comp, 0, "%s", cases[i].name);
        /* every message is matched: as many sends as receives in the job */
        cr_expect_eq(s.n_send, s.n_recv, "%s: %d sends, %d receives", cases[i].name, s.n_send,
                     s.n_recv);
        cr_expect_eq(s.n_send > 0, cases[i].has_p2p, "%s: %d sends", cases[i].name, s.n_send);
        cr_expect_eq(s.n_coll > 0, cases[i].has_coll, "%s: %d collectives", cases[i].name,
                     s.n_coll);
        /* pushes and pulls say so, on the workers and on the server */
        if (cases[i].has_servers)
            cr_expect_eq(s.n_ps_comment, 2 * s.n_send, "%s: %d of %d", cases[i].name,
                         s.n_ps_comment, 2 * s.n_send);
        else
            cr_expect_eq(s.n_ps_comment, 0, "%s", cases[i].name);
    }
}

/* protoc --encode of a text trace, framed as writeDelimitedTo frames it. */
static void encode_into(FILE *out, const char *type, const char *text)
{
    const char *txt = test_tmp_file("msg.txt", text), *bin = test_tmp_path("msg.bin");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "protoc -I '%s' --encode=ChakraProtoMsg.%s et_def.proto < '%s' > '%s'",
             SCHEMA_DIR, type, txt, bin);
    struct run r = run_argv((const char *const[]){"sh", "-c", cmd, NULL});
    cr_assert_eq(r.status, 0, "protoc --encode: %s", r.err);
    run_free(&r);
    size_t n;
    char *msg = test_slurp_n(bin, &n);
    struct pb_buf len = {0};
    pb_put_varint(&len, n);
    cr_assert_eq(fwrite(len.data, 1, len.len, out), len.len);
    cr_assert_eq(fwrite(msg, 1, n, out), n);
    pb_buf_free(&len);
    free(msg);
}

Test(chakra_protoc, a_trace_protoc_encoded_is_simulated)
{
    need_protoc();
    char dir[160], spec[200], path[256];
    snprintf(dir, sizeof dir, "%s/job", test_tmp_dir);
    snprintf(spec, sizeof spec, "chakra:%s", dir);
    mkdir(dir, 0777);
    const char *const nodes[2][3] = {
        {"id: 1 name: \"matmul\" type: COMP_NODE duration_micros: 250",
         "id: 2 name: \"h2d\" type: MEM_LOAD_NODE data_deps: 1",
         "id: 3 name: \"ar\" type: COMM_COLL_NODE data_deps: 2 attr { name: \"comm_type\" "
         "int64_val: 0 } attr { name: \"comm_size\" int64_val: 67108864 }"},
        {"id: 1 name: \"matmul\" type: COMP_NODE attr { name: \"num_ops\" int64_val: 1000000000 }",
         "id: 3 name: \"ar\" type: COMM_COLL_NODE data_deps: 1 attr { name: \"comm_type\" "
         "int64_val: 0 } attr { name: \"comm_size\" int64_val: 67108864 }",
         NULL},
    };
    for (int rank = 0; rank < 2; rank++) {
        snprintf(path, sizeof path, "%s/job.%d.et", dir, rank);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        encode_into(f, "GlobalMetadata", "version: \"0.0.4\"");
        for (int k = 0; k < 3 && nodes[rank][k]; k++) encode_into(f, "Node", nodes[rank][k]);
        fclose(f);
    }
    const char *json = test_tmp_path("job.json");
    struct run r = RUN("sim", "--workload", spec, "--steps", "2", "--json", json);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.err, "1 node of type MEM_LOAD_NODE not modelled"), "%s", r.err);
    run_free(&r);
    cJSON *rep = read_json(json);
    /* rank 0's 250 us, then a 64 MiB all-reduce of two ranks */
    cr_expect_gt(num_at(rep, "step_time_s", "mean"), 250e-6);
    cJSON_Delete(rep);
}

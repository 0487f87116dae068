/* sim/cluster.c: presets, profile files (round trip and malformed input),
 * layout. Expected values come from the contract in sim/cluster.h, the
 * message formats of STYLE.md ("Errors are values"), and the profile text
 * written out in each test. */
#include <criterion/criterion.h>

#include "helpers.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/lines.h"
#include "../sim/cluster.h"

/* ---- helpers --------------------------------------------------------- */

/* Each test gets a fresh test_tmp_dir. */
TEST_SUITE_WITH_TMP_DIR(cluster);

/* A complete, valid profile: one key a line, line numbers 1 to 11. */
static const char *const valid_lines[] = {
    "name = test-box",                    /* 1 */
    "ideal = false",                      /* 2 */
    "flops_per_s = 1e12",                 /* 3 */
    "mem_bw_bytes_per_s = 2e11",          /* 4 */
    "op_overhead_s = 4e-6",               /* 5 */
    "mem_bytes = 17179869184",            /* 6 */
    "devices_per_node = 4",               /* 7 */
    "intra_latency_s = 1e-6",             /* 8 */
    "intra_bw_bytes_per_s = 1e11",        /* 9 */
    "inter_latency_s = 1e-5",             /* 10 */
    "inter_bw_bytes_per_s = 1.25e10",     /* 11 */
};
#define N_VALID ((int)(sizeof valid_lines / sizeof valid_lines[0]))

/* The valid profile with line `line` (1-based) replaced by `with` (NULL:
 * left out, "" kept as an empty line so later line numbers stay). */
static const char *profile_with(const char *file, int line, const char *with)
{
    static char text[2048];
    size_t used = 0;
    for (int i = 0; i < N_VALID; i++) {
        const char *l = i + 1 == line ? with : valid_lines[i];
        if (!l) continue;
        used += (size_t)snprintf(text + used, sizeof text - used, "%s\n", l);
    }
    return test_tmp_file(file, text);
}

/* The valid profile with the lines `extra` after it. */
static const char *profile_plus(const char *file, const char *extra)
{
    static char text[4096];
    text[0] = '\0';
    for (int i = 0; i < N_VALID; i++) {
        strcat(text, valid_lines[i]);
        strcat(text, "\n");
    }
    strcat(text, extra);
    return test_tmp_file(file, text);
}

static void expect_input_error(int rc, const struct err *e, const char *a, const char *b)
{
    cr_expect_eq(rc, ERR_INPUT, "rc %d, want ERR_INPUT (%d); message: %s", rc, ERR_INPUT, e->msg);
    cr_expect_eq(e->code, ERR_INPUT);
    cr_expect_not_null(strstr(e->msg, a), "message does not contain '%s': %s", a, e->msg);
    if (b) cr_expect_not_null(strstr(e->msg, b), "message does not contain '%s': %s", b, e->msg);
}

/* Loads the valid profile with line `line` replaced, expects ERR_INPUT naming
 * FILE:line and `fragment`. */
static void expect_bad_line(int line, const char *with, const char *fragment)
{
    const char *path = profile_with("bad.conf", line, with);
    char where[300];
    snprintf(where, sizeof where, "%s:%d: ", path, line);
    struct cluster c;
    struct err e = {0};
    expect_input_error(cluster_load(path, &c, &e), &e, where, fragment);
}

static bool same_bits(double a, double b) { return !memcmp(&a, &b, sizeof a); }

/* Every field a profile file carries, compared bit for bit. */
static void expect_same_profile(const struct cluster *a, const struct cluster *b)
{
    cr_expect_eq(a->is_ideal, b->is_ideal);
    cr_expect(same_bits(a->device.flops_per_s, b->device.flops_per_s), "flops %.17g vs %.17g",
              a->device.flops_per_s, b->device.flops_per_s);
    cr_expect(same_bits(a->device.mem_bw_bytes_per_s, b->device.mem_bw_bytes_per_s));
    cr_expect(same_bits(a->device.op_overhead_s, b->device.op_overhead_s));
    cr_expect_eq(a->device.mem_bytes, b->device.mem_bytes);
    cr_expect_eq(a->devices_per_node, b->devices_per_node);
    cr_expect(same_bits(a->intra.latency_s, b->intra.latency_s));
    cr_expect(same_bits(a->intra.bw_bytes_per_s, b->intra.bw_bytes_per_s));
    cr_expect(same_bits(a->inter.latency_s, b->inter.latency_s));
    cr_expect(same_bits(a->inter.bw_bytes_per_s, b->inter.bw_bytes_per_s),
              "inter bw %.17g vs %.17g", a->inter.bw_bytes_per_s, b->inter.bw_bytes_per_s);
    cr_expect_eq(a->cores_per_node, b->cores_per_node);
    cr_expect(same_bits(a->allreduce_gamma_s_per_byte, b->allreduce_gamma_s_per_byte));
    cr_expect(same_bits(a->jitter.forward_sigma, b->jitter.forward_sigma));
    cr_expect(same_bits(a->jitter.backward_sigma, b->jitter.backward_sigma));
    cr_expect(same_bits(a->jitter.update_sigma, b->jitter.update_sigma));
    cr_expect(same_bits(a->ckpt_write_bw_bytes_per_s, b->ckpt_write_bw_bytes_per_s));
    cr_expect(same_bits(a->ckpt_read_bw_bytes_per_s, b->ckpt_read_bw_bytes_per_s));
    cr_expect(same_bits(a->restart_s, b->restart_s));
    cr_expect(same_bits(a->restart_per_rank_s, b->restart_per_rank_s));
    cr_expect_eq(a->restart_s_at_ranks.n, b->restart_s_at_ranks.n);
    for (int i = 0; i < a->restart_s_at_ranks.n; i++)
        cr_expect(a->restart_s_at_ranks.ranks[i] == b->restart_s_at_ranks.ranks[i] &&
                      same_bits(a->restart_s_at_ranks.s[i], b->restart_s_at_ranks.s[i]),
                  "relaunch point %d", i);
    cr_expect(same_bits(a->detect_s, b->detect_s));
}

/* ---- presets --------------------------------------------------------- */

Test(cluster, presets_are_the_four_named_in_the_contract)
{
    const char *want[] = {"ideal", "h100-nvlink-ib", "a100-pcie-eth", "cpu-loopback"};
    cr_assert_eq(cluster_n_presets, 4);
    for (size_t i = 0; i < 4; i++) cr_expect_str_eq(cluster_presets[i].name, want[i]);
}

Test(cluster, every_preset_loads_by_name_with_positive_figures)
{
    for (size_t i = 0; i < cluster_n_presets; i++) {
        const char *name = cluster_presets[i].name;
        struct cluster c;
        struct err e = {0};
        cr_assert_eq(cluster_load(name, &c, &e), 0, "%s: %s", name, e.msg);
        cr_expect_str_eq(c.name, name);
        cr_expect_gt(c.device.flops_per_s, 0, "%s", name);
        cr_expect_gt(c.device.mem_bw_bytes_per_s, 0, "%s", name);
        cr_expect_geq(c.device.op_overhead_s, 0, "%s", name);
        cr_expect_gt(c.device.mem_bytes, 0, "%s", name);
        cr_expect_gt(c.devices_per_node, 0, "%s", name);
        cr_expect_geq(c.intra.latency_s, 0, "%s", name);
        cr_expect_geq(c.inter.latency_s, 0, "%s", name);
        cr_expect_gt(c.intra.bw_bytes_per_s, 0, "%s", name);
        cr_expect_gt(c.inter.bw_bytes_per_s, 0, "%s", name);
        cr_expect_eq(c.allreduce, ALLREDUCE_RING, "%s", name);
        if (c.is_ideal) continue;
        /* Real hardware: finite numbers, overheads and latencies that cost something. */
        cr_expect(isfinite(c.device.flops_per_s) && isfinite(c.device.mem_bw_bytes_per_s), "%s",
                  name);
        cr_expect(isfinite(c.intra.bw_bytes_per_s) && isfinite(c.inter.bw_bytes_per_s), "%s", name);
        cr_expect_gt(c.device.op_overhead_s, 0, "%s", name);
        cr_expect_gt(c.intra.latency_s, 0, "%s", name);
        /* Inside a node is never slower than between nodes. */
        cr_expect_geq(c.intra.bw_bytes_per_s, c.inter.bw_bytes_per_s, "%s", name);
        cr_expect_leq(c.intra.latency_s, c.inter.latency_s, "%s", name);
    }
}

Test(cluster, ideal_preset_has_free_links_and_eight_devices_a_node)
{
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load("ideal", &c, &e), 0, "%s", e.msg);
    cr_expect(c.is_ideal);
    cr_expect(isinf(c.intra.bw_bytes_per_s) && c.intra.bw_bytes_per_s > 0);
    cr_expect(isinf(c.inter.bw_bytes_per_s) && c.inter.bw_bytes_per_s > 0);
    cr_expect_eq(c.intra.latency_s, 0);
    cr_expect_eq(c.inter.latency_s, 0);
    cr_expect_eq(c.devices_per_node, 8);
}

Test(cluster, only_ideal_is_ideal)
{
    for (size_t i = 0; i < cluster_n_presets; i++)
        cr_expect_eq(cluster_presets[i].is_ideal, !strcmp(cluster_presets[i].name, "ideal"), "%s",
                     cluster_presets[i].name);
}

/* The sources quoted beside each figure in sim/cluster.c: a typo in an
 * exponent would change these by orders of magnitude. */
Test(cluster, gpu_presets_are_of_the_published_order)
{
    struct cluster h, a;
    struct err e = {0};
    cr_assert_eq(cluster_load("h100-nvlink-ib", &h, &e), 0);
    cr_assert_eq(cluster_load("a100-pcie-eth", &a, &e), 0);
    /* Sustained TF32: between 20% and 100% of 494.7 (H100) and 156 (A100) TFLOP/s. */
    cr_expect(h.device.flops_per_s > 0.2 * 494.7e12 && h.device.flops_per_s <= 494.7e12);
    cr_expect(a.device.flops_per_s > 0.2 * 156e12 && a.device.flops_per_s <= 156e12);
    cr_expect(h.device.mem_bw_bytes_per_s > 2e12 && h.device.mem_bw_bytes_per_s <= 3.35e12);
    cr_expect(a.device.mem_bw_bytes_per_s > 1e12 && a.device.mem_bw_bytes_per_s <= 1.935e12);
    cr_expect_eq(h.intra.bw_bytes_per_s, 450e9);   /* NVLink 4: 900 GB/s both ways */
    cr_expect_eq(h.inter.bw_bytes_per_s, 50e9);    /* NDR 400 Gb/s a GPU */
    cr_expect_eq(h.devices_per_node, 8);
    cr_expect_eq(a.inter.bw_bytes_per_s, 12e9);    /* 100 GbE */
    cr_expect_eq(h.device.mem_bytes, 80LL << 30);
}

Test(cluster, unknown_name_lists_the_presets)
{
    struct cluster c;
    struct err e = {0};
    int rc = cluster_load("foo", &c, &e);
    expect_input_error(rc, &e,
                       "--cluster: 'foo' is neither a preset (ideal, h100-nvlink-ib, "
                       "a100-pcie-eth, cpu-loopback) nor a readable file",
                       NULL);
    e = (struct err){0};
    expect_input_error(cluster_load("", &c, &e), &e, "--cluster: '' is neither a preset", NULL);
}

/* ---- profile files --------------------------------------------------- */

Test(cluster, valid_profile_loads_and_is_named_by_its_path)
{
    const char *path = profile_with("box.conf", 0, NULL);
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect_str_eq(c.name, path, "the path as given, not the file's name key");
    cr_expect_not(c.is_ideal);
    cr_expect_eq(c.device.flops_per_s, 1e12);
    cr_expect_eq(c.device.mem_bw_bytes_per_s, 2e11);
    cr_expect_eq(c.device.op_overhead_s, 4e-6);
    cr_expect_eq(c.device.mem_bytes, 17179869184LL);
    cr_expect_eq(c.devices_per_node, 4);
    cr_expect_eq(c.intra.latency_s, 1e-6);
    cr_expect_eq(c.intra.bw_bytes_per_s, 1e11);
    cr_expect_eq(c.inter.latency_s, 1e-5);
    cr_expect_eq(c.inter.bw_bytes_per_s, 1.25e10);
    cr_expect_eq(c.nodes, 0);
    cr_expect_eq(c.allreduce, ALLREDUCE_RING);
}

Test(cluster, comments_blank_lines_and_spacing_are_accepted)
{
    const char *path = test_tmp_file("spaced.conf",
                                  "# a hand-written profile\n"
                                  "\n"
                                  "   flops_per_s=1e12   # sustained\n"
                                  "mem_bw_bytes_per_s =\t2e11\n"
                                  "op_overhead_s = 0\n"
                                  "mem_bytes = 1024\n"
                                  "devices_per_node = 1\n"
                                  "intra_latency_s = 0\n"
                                  "intra_bw_bytes_per_s = inf   # a free link\n"
                                  "inter_latency_s = 2.5e-6\n"
                                  "inter_bw_bytes_per_s = 1e9\n"
                                  "ideal = true\n");
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect(c.is_ideal);
    cr_expect_eq(c.device.flops_per_s, 1e12);
    cr_expect_eq(c.device.op_overhead_s, 0);
    cr_expect(isinf(c.intra.bw_bytes_per_s));
    cr_expect_eq(c.inter.latency_s, 2.5e-6);
}

/* A profile saved with a UTF-8 byte order mark (an edited copy of a preset,
 * saved by Windows Notepad) failed with "bom.conf:1: expected 'key =
 * value', got '<the mark's invisible bytes>'". */
Test(cluster, byte_order_mark_before_the_first_key_is_dropped)
{
    const char *path = profile_with("bom.conf", 1, "\xef\xbb\xbf" "name = test-box");
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(c.device.flops_per_s, 1e12);
    /* only at the file's start: a mark elsewhere is a stray byte */
    path = test_tmp_file("mid.conf", "flops_per_s = 1e12\n\xef\xbb\xbf" "mem_bytes = 1\n");
    e = (struct err){0};
    expect_input_error(cluster_load(path, &c, &e), &e, "mid.conf:2:", "is not a key");
}

/* c written to test_tmp_dir/name and loaded back. */
static struct cluster round_trip(const struct cluster *c, const char *name)
{
    char saved[256];
    snprintf(saved, sizeof saved, "%s", test_tmp_path(name));
    struct err e = {0};
    struct cluster back;
    cr_assert_eq(cluster_write(c, saved, &e), 0, "%s: %s", saved, e.msg);
    cr_assert_eq(cluster_load(saved, &back, &e), 0, "%s: %s", saved, e.msg);
    return back;
}

Test(cluster, every_preset_round_trips_through_a_file_bit_for_bit)
{
    for (size_t i = 0; i < cluster_n_presets; i++) {
        const struct cluster *p = &cluster_presets[i];
        struct cluster back = round_trip(p, p->name);
        expect_same_profile(p, &back);
        cr_expect_str_eq(back.name, test_tmp_path(p->name));
    }
}

/* Numbers with no short decimal form: %.17g must carry every bit. */
Test(cluster, awkward_numbers_round_trip_bit_for_bit)
{
    struct cluster c = cluster_presets[1];
    c.device.flops_per_s = 1.0 / 3.0 * 1e14;
    c.device.mem_bw_bytes_per_s = nextafter(2e12, 3e12);
    c.device.op_overhead_s = 4.9406564584124654e-324;   /* the smallest subnormal */
    c.device.mem_bytes = INT64_MAX;
    c.intra.latency_s = 0.1 + 0.2;
    c.intra.bw_bytes_per_s = nextafter(1e30, 0);        /* just below the largest rate */
    c.inter.latency_s = 0;
    c.inter.bw_bytes_per_s = INFINITY;
    c.devices_per_node = 1024;
    c.cores_per_node = 1024;
    c.allreduce_gamma_s_per_byte = 1.0 / 3.0 * 1e-9;
    c.is_ideal = true;
    struct cluster back = round_trip(&c, "awkward.conf");
    expect_same_profile(&c, &back);
}

/* Layout is not part of a profile: writing after cluster_layout keeps the
 * laid-out devices per node, and the file loads with nodes unset. */
Test(cluster, written_profile_carries_the_laid_out_devices_per_node)
{
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load("h100-nvlink-ib", &c, &e), 0);
    cr_assert_eq(cluster_layout(&c, 12, 0, 4, "tree", &e), 0, "%s", e.msg);
    struct cluster back = round_trip(&c, "laid.conf");
    cr_expect_eq(back.devices_per_node, 4);
    cr_expect_eq(back.nodes, 0);
    cr_expect_eq(back.allreduce, ALLREDUCE_RING);
}

Test(cluster, written_name_cannot_break_the_file)
{
    struct cluster c = cluster_presets[3];
    snprintf(c.name, sizeof c.name, "box #2\nflops_per_s = 1");
    struct cluster back = round_trip(&c, "named.conf");
    expect_same_profile(&c, &back);
}

Test(cluster, directory_is_not_a_profile)
{
    struct cluster c;
    struct err e = {0};
    expect_input_error(cluster_load(test_tmp_dir, &c, &e), &e, test_tmp_dir,
                       "is a directory, not a profile file");
}

Test(cluster, write_into_a_missing_directory_fails_and_names_it)
{
    struct err e = {0};
    int rc = cluster_write(&cluster_presets[1], "/tmp/strata-no-such-dir/x.conf", &e);
    cr_expect_lt(rc, 0);
    cr_expect_not_null(strstr(e.msg, "/tmp/strata-no-such-dir"), "%s", e.msg);
}

Test(cluster, long_path_keeps_its_tail_in_the_name)
{
    char name[200];
    memset(name, 'a', 150);
    snprintf(name + 150, sizeof name - 150, ".conf");
    const char *path = profile_with(name, 0, NULL);
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(strlen(c.name), sizeof c.name - 1);
    cr_expect_eq(strncmp(c.name, "...", 3), 0, "%s", c.name);
    cr_expect_eq(strcmp(c.name + strlen(c.name) - 6, "a.conf"), 0, "%s", c.name);
}

/* The name is printed in every header and note: a path's control
 * characters are escaped in it, as error messages escape them, short or
 * long (then its tail still ends the name). */
Test(cluster, a_paths_control_characters_are_escaped_in_the_name)
{
    const char *path = profile_with("red\x1b[31m.conf", 0, NULL);
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect_not_null(strstr(c.name, "red\\x1b[31m.conf"), "%s", c.name);
    char name[200];
    memset(name, 'a', 150);
    snprintf(name + 150, sizeof name - 150, "\x07\x07.conf");
    path = profile_with(name, 0, NULL);
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(strlen(c.name), sizeof c.name - 1, "%s", c.name);
    cr_expect(!strchr(c.name, '\x07'), "%s", c.name);
    cr_expect_eq(strcmp(c.name + strlen(c.name) - 13, "\\x07\\x07.conf"), 0, "%s", c.name);
}

/* ---- malformed profiles ---------------------------------------------- */

Test(cluster, missing_key_is_named)
{
    const char *path = profile_with("missing.conf", 6, NULL);   /* no mem_bytes */
    struct cluster c;
    struct err e = {0};
    expect_input_error(cluster_load(path, &c, &e), &e, path, "missing mem_bytes");
}

Test(cluster, name_and_ideal_may_be_left_out)
{
    const char *path = profile_with("noname.conf", 1, NULL);
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    path = profile_with("noideal.conf", 2, NULL);
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect_not(c.is_ideal);
}

Test(cluster, empty_file_names_every_missing_key)
{
    const char *path = test_tmp_file("empty.conf", "");
    struct cluster c;
    struct err e = {0};
    expect_input_error(cluster_load(path, &c, &e), &e, path, "missing flops_per_s, ");
    cr_expect_not_null(strstr(e.msg, "inter_bw_bytes_per_s"), "%s", e.msg);
    path = test_tmp_file("comments.conf", "# nothing but\n\n   # comments\n");
    e = (struct err){0};
    expect_input_error(cluster_load(path, &c, &e), &e, path, "missing flops_per_s, ");
}

/* Malformed lines, each put in place of one line of the valid profile: the
 * error must name FILE:line and say what was wrong. The tests below each run
 * the rows of one kind of fault. */
enum bad_line_fault { UNKNOWN_KEY, NO_EQUALS, BAD_NUMBER, NEGATIVE, NO_VALUE_OR_TWICE, OVERFLOW };

static const struct bad_line {
    enum bad_line_fault fault;
    int line;
    const char *with, *want;
} bad_lines[] = {
    {UNKNOWN_KEY, 5, "op_overhead = 4e-6", "'op_overhead' is not a key of a cluster profile"},
    {UNKNOWN_KEY, 5, "op_overhead = 4e-6", "keys: name, ideal, flops_per_s"},
    {NO_EQUALS, 3, "flops_per_s 1e12", "expected 'key = value', got 'flops_per_s 1e12'"},
    {NO_EQUALS, 3, "= 1e12", "expected 'key = value'"},
    {BAD_NUMBER, 3, "flops_per_s = fast", "flops_per_s: 'fast' is not allowed (a number from 1 to 1e30)"},
    {BAD_NUMBER, 3, "flops_per_s = nan", "flops_per_s: 'nan' is not allowed"},
    {BAD_NUMBER, 3, "flops_per_s = inf", "flops_per_s: 'inf' is not allowed"},
    {BAD_NUMBER, 3, "flops_per_s = 1e999", "flops_per_s: '1e999' is not allowed"},
    {BAD_NUMBER, 3, "flops_per_s = 0x10", "flops_per_s: '0x10' is not allowed"},
    {BAD_NUMBER, 3, "flops_per_s = 1e12 2", "flops_per_s: '1e12 2' is not allowed"},
    {BAD_NUMBER, 3, "flops_per_s = 0", "flops_per_s: '0' is not allowed"},
    {BAD_NUMBER, 6, "mem_bytes = 1.5e10", "mem_bytes: '1.5e10' is not allowed (an integer > 0)"},
    {BAD_NUMBER, 6, "mem_bytes = 99999999999999999999", "mem_bytes: '99999999999999999999'"},
    {BAD_NUMBER, 7, "devices_per_node = 0", "devices_per_node: '0' is not allowed"},
    {BAD_NUMBER, 7, "devices_per_node = 1025", "devices_per_node: '1025' is not allowed"},
    {BAD_NUMBER, 2, "ideal = yes", "ideal: 'yes' is not allowed (true or false)"},
    {NEGATIVE, 9, "intra_bw_bytes_per_s = -1e11", "intra_bw_bytes_per_s: '-1e11' is not allowed"},
    {NEGATIVE, 11, "inter_bw_bytes_per_s = -inf", "inter_bw_bytes_per_s: '-inf' is not allowed"},
    {NEGATIVE, 10, "inter_latency_s = -1e-6", "inter_latency_s: '-1e-6' is not allowed"},
    {NEGATIVE, 5, "op_overhead_s = -0.5", "op_overhead_s: '-0.5' is not allowed"},
    {NO_VALUE_OR_TWICE, 4, "mem_bw_bytes_per_s =", "mem_bw_bytes_per_s: no value"},
    {NO_VALUE_OR_TWICE, 4, "flops_per_s = 2e12", "flops_per_s: set twice (first on line 3)"},
    /* issue 15, finding 3: values that made op times infinite and the run's NaN */
    {OVERFLOW, 3, "flops_per_s = 1e-300", "flops_per_s: '1e-300' is not allowed (a number from 1 to"},
    {OVERFLOW, 4, "mem_bw_bytes_per_s = 5e-324", "mem_bw_bytes_per_s: '5e-324' is not allowed"},
    {OVERFLOW, 5, "op_overhead_s = 1e308", "op_overhead_s: '1e308' is not allowed (a number of "
                                           "seconds from 0 to 1e6)"},
    {OVERFLOW, 9, "intra_bw_bytes_per_s = 1e31", "intra_bw_bytes_per_s: '1e31' is not allowed"},
    {OVERFLOW, 10, "inter_latency_s = 1000001", "inter_latency_s: '1000001' is not allowed"},
};

/* expect_bad_line on every row of `fault`. */
static void expect_bad_lines(enum bad_line_fault fault)
{
    int n = 0;
    for (size_t i = 0; i < sizeof bad_lines / sizeof *bad_lines; i++) {
        const struct bad_line *b = &bad_lines[i];
        if (b->fault != fault) continue;
        cr_log_info("line %d = '%s'", b->line, b->with);
        expect_bad_line(b->line, b->with, b->want);
        n++;
    }
    cr_assert_gt(n, 0, "no rows of fault %d", fault);
}

Test(cluster, unknown_key_names_file_line_and_lists_keys) { expect_bad_lines(UNKNOWN_KEY); }

Test(cluster, line_without_equals_names_file_line) { expect_bad_lines(NO_EQUALS); }

Test(cluster, bad_numbers_name_file_line_and_key) { expect_bad_lines(BAD_NUMBER); }

Test(cluster, negative_values_are_refused) { expect_bad_lines(NEGATIVE); }

Test(cluster, key_without_value_and_key_set_twice) { expect_bad_lines(NO_VALUE_OR_TWICE); }

Test(cluster, values_that_would_overflow_a_time_are_refused) { expect_bad_lines(OVERFLOW); }

/* issue 15, finding 8: --cluster /dev/zero read without end, then said
 * "missing flops_per_s"; a line past the limit is named. */
Test(cluster, endless_binary_or_long_lines_are_refused_naming_the_line)
{
    struct cluster c;
    struct err e = {0};
    expect_input_error(cluster_load("/dev/zero", &c, &e), &e, "/dev/zero:1: a NUL byte", NULL);
    char *text = malloc(LINES_MAX_BYTES + 64);
    cr_assert_not_null(text);
    strcpy(text, "# profile\n\nname = ");
    size_t at = strlen(text);
    memset(text + at, 'n', LINES_MAX_BYTES);
    strcpy(text + at + LINES_MAX_BYTES, "\n");
    const char *path = test_tmp_file("long.conf", text);
    e = (struct err){0};
    expect_input_error(cluster_load(path, &c, &e), &e, ":3: the line is longer than 4096 bytes",
                       NULL);
    free(text);
}

Test(cluster, failed_load_leaves_the_cluster_unchanged)
{
    struct cluster c = cluster_presets[1], before = c;
    struct err e = {0};
    const char *path = profile_with("half.conf", 11, "inter_bw_bytes_per_s = slow");
    cr_assert_lt(cluster_load(path, &c, &e), 0);
    cr_expect_eq(memcmp(&c, &before, sizeof c), 0);
}

/* ---- layout ---------------------------------------------------------- */

/* cluster_layout(c, n_ranks, nodes, devices_per_node, allreduce), which must
 * succeed, and the three fields it sets; `why` says where the numbers come
 * from. */
static void expect_layout(struct cluster *c, int n_ranks, long long nodes, long long per_node,
                          const char *allreduce, int want_per_node, int want_nodes,
                          enum allreduce_algo want_allreduce, const char *why)
{
    struct err e = {0};
    cr_assert_eq(cluster_layout(c, n_ranks, nodes, per_node, allreduce, &e), 0, "%s", e.msg);
    cr_expect_eq(c->devices_per_node, want_per_node, "devices_per_node: %s", why);
    cr_expect_eq(c->nodes, want_nodes, "nodes: %s", why);
    cr_expect_eq(c->allreduce, want_allreduce, "allreduce: %s", why);
}

Test(cluster, layout_fills_nodes_in_rank_order)
{
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load("h100-nvlink-ib", &c, &e), 0);
    expect_layout(&c, 20, 0, 0, "ring", 8, 3, ALLREDUCE_RING, "ceil(20 / 8) nodes of 8");
    cr_expect_eq(cluster_node_of(&c, 0), 0);
    cr_expect_eq(cluster_node_of(&c, 7), 0);
    cr_expect_eq(cluster_node_of(&c, 8), 1);
    cr_expect_eq(cluster_node_of(&c, 19), 2);
}

Test(cluster, layout_options_override_the_profile)
{
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load("a100-pcie-eth", &c, &e), 0);
    expect_layout(&c, 6, 5, 2, "hierarchical", 2, 5, ALLREDUCE_HIERARCHICAL,
                  "more nodes than needed is allowed");
    cr_expect_eq(cluster_node_of(&c, 5), 2);
    expect_layout(&c, 1, 0, 0, "tree", 2, 1, ALLREDUCE_TREE,
                  "the laid-out devices_per_node stays the profile's");
    cr_assert_eq(cluster_layout(&c, 3, 0, 0, NULL, &e), 0, "%s", e.msg);
    cr_expect_eq(c.allreduce, ALLREDUCE_RING, "NULL: the default");
}

Test(cluster, allreduce_names_match_the_enum)
{
    cr_expect_str_eq(allreduce_names[ALLREDUCE_RING], "ring");
    cr_expect_str_eq(allreduce_names[ALLREDUCE_TREE], "tree");
    cr_expect_str_eq(allreduce_names[ALLREDUCE_HIERARCHICAL], "hierarchical");
}

Test(cluster, too_few_nodes_says_how_many_are_needed)
{
    struct cluster c, before;
    struct err e = {0};
    cr_assert_eq(cluster_load("h100-nvlink-ib", &c, &e), 0);
    before = c;
    int rc = cluster_layout(&c, 20, 2, 0, "ring", &e);
    expect_input_error(rc, &e, "--nodes 2 holds 16 devices, the plan needs 20 ranks",
                       "--nodes 3 or more");
    cr_expect_eq(memcmp(&c, &before, sizeof c), 0, "unchanged on failure");
    e = (struct err){0};
    expect_input_error(cluster_layout(&c, 20, 4, 4, "ring", &e), &e,
                       "--nodes 4 holds 16 devices, the plan needs 20 ranks", NULL);
    cr_expect_eq(cluster_layout(&c, 20, 5, 4, "ring", &e), 0, "%s", e.msg);
}

Test(cluster, unknown_allreduce_is_named)
{
    struct cluster c, before;
    struct err e = {0};
    cr_assert_eq(cluster_load("ideal", &c, &e), 0);
    before = c;
    expect_input_error(cluster_layout(&c, 4, 0, 0, "butterfly", &e), &e,
                       "--allreduce: 'butterfly' is not one of ring, tree, hierarchical", NULL);
    cr_expect_eq(memcmp(&c, &before, sizeof c), 0);
    e = (struct err){0};
    expect_input_error(cluster_layout(&c, 4, 0, 0, "Ring", &e), &e, "--allreduce: 'Ring'", NULL);
}

Test(cluster, negative_options_and_empty_plans_are_refused)
{
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load("ideal", &c, &e), 0);
    expect_input_error(cluster_layout(&c, 4, -1, 0, "ring", &e), &e, "--nodes: -1", NULL);
    e = (struct err){0};
    expect_input_error(cluster_layout(&c, 4, 0, -2, "ring", &e), &e, "--devices-per-node: -2",
                       NULL);
    e = (struct err){0};
    expect_input_error(cluster_layout(&c, 0, 0, 0, "ring", &e), &e, "0 ranks", NULL);
}

/* ---- shared cores and the all-reduce's gamma (optional keys) ----------- */

Test(cluster, optional_keys_default_to_no_sharing_and_no_gamma)
{
    const char *path = profile_with("plain.conf", 0, NULL);
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(c.cores_per_node, 0);
    cr_expect_eq(c.allreduce_gamma_s_per_byte, 0);
    for (size_t i = 0; i < cluster_n_presets; i++) {
        cr_expect_eq(cluster_presets[i].cores_per_node, 0, "%s", cluster_presets[i].name);
        cr_expect_eq(cluster_presets[i].allreduce_gamma_s_per_byte, 0, "%s",
                     cluster_presets[i].name);
    }
}

Test(cluster, optional_keys_load_and_bad_ones_name_file_and_line)
{
    const char *path = profile_plus("shared.conf",
                                    "cores_per_node = 2\nallreduce_gamma_s_per_byte = 4e-10\n");
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(c.cores_per_node, 2);
    cr_expect_eq(c.allreduce_gamma_s_per_byte, 4e-10);
    expect_bad_line(7, "cores_per_node = -1", "cores_per_node: '-1' is not allowed");
    expect_bad_line(7, "cores_per_node = 1025", "an integer from 0 to 1024");
    expect_bad_line(7, "allreduce_gamma_s_per_byte = -1e-9",
                    "allreduce_gamma_s_per_byte: '-1e-9' is not allowed");
}

/* ---- what failures cost (optional keys) -------------------------------- */

/* Absent, the costs are free (every preset's), and a profile that prices
 * nothing is written without them; present, they load, price a state of
 * given bytes (a commit is a read and a write at memory bandwidth) and
 * round-trip bit for bit. */
Test(cluster, failure_cost_keys_default_to_free_and_round_trip)
{
    for (size_t i = 0; i < cluster_n_presets; i++) {
        struct failure_costs f = cluster_failure_costs(&cluster_presets[i], 1 << 30);
        cr_expect(f.checkpoint_s == 0 && f.load_s == 0 && f.detect_s == 0 &&
                  f.relaunch_s == 0, "%s prices failures", cluster_presets[i].name);
        char text[CLUSTER_TEXT_BYTES];
        cluster_format(&cluster_presets[i], text, sizeof text);
        cr_expect_null(strstr(text, "ckpt_"), "%s", text);
    }
#define COST_KEYS                                                          \
    "ckpt_write_bw_bytes_per_s = 2e9\nckpt_read_bw_bytes_per_s = inf\n" \
    "restart_s = 300\ndetect_s = 1.5\n"
    const char *path = profile_plus("costs.conf", COST_KEYS);
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    struct failure_costs f = cluster_failure_costs(&c, 4000000000);
    cr_expect_float_eq(f.checkpoint_s, 2, 1e-12);
    cr_expect_eq(f.load_s, 0, "inf reads for free");
    cr_expect_float_eq(f.commit_s, 2 * 4e9 / 2e11, 1e-12, "commit %g", f.commit_s);
    cr_expect_eq(f.relaunch_s, 300);
    cr_expect_eq(f.relaunch_per_rank_s, 0, "a profile from before it: restart_s prices any count");
    cr_expect_eq(f.detect_s, 1.5);
    struct cluster back = round_trip(&c, "costs-back.conf");
    expect_same_profile(&c, &back);

    /* calibrate's relaunch line: restart_s + restart_per_rank_s x ranks */
    path = profile_plus("costs-per-rank.conf", COST_KEYS "restart_per_rank_s = 0.125\n");
#undef COST_KEYS
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    f = cluster_failure_costs(&c, 4000000000);
    cr_expect_eq(f.relaunch_s, 300);
    cr_expect_eq(f.relaunch_per_rank_s, 0.125);
    back = round_trip(&c, "costs-per-rank-back.conf");
    expect_same_profile(&c, &back);
    expect_bad_line(7, "restart_per_rank_s = -1", "restart_per_rank_s: '-1' is not allowed");
    expect_bad_line(7, "restart_s = -1", "restart_s: '-1' is not allowed");
    expect_bad_line(7, "ckpt_write_bw_bytes_per_s = 0", "bytes/s from 1 to 1e30, or inf");
}

/* calibrate's relaunch points price a relaunch piecewise-linearly
 * (sim/failures.h, failure_relaunch_s): with 1:0.65, 2:0.684, 3:0.91 (the
 * quiet 2-core machine of docs/failures.md), 1, 2 and 3 ranks cost their points, 5
 * ranks the last segment continued: 0.91 + 2 x (0.91 - 0.684) = 1.362 s,
 * and 1.5 ranks half-way, 0.667 s; the old line keys, set beside them, are
 * not used. */
Test(cluster, relaunch_points_price_through_the_measured_counts)
{
    char text[2048] = "";
    for (int i = 0; i < N_VALID; i++) {
        strcat(text, valid_lines[i]);
        strcat(text, "\n");
    }
    strcat(text, "restart_s = 300\nrestart_per_rank_s = 7\n"
                 "restart_s_at_ranks = 1:0.65, 2:0.684,3:0.91\n");
    const char *path = test_tmp_file("points.conf", text);
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(c.restart_s_at_ranks.n, 3);
    struct failure_costs f = cluster_failure_costs(&c, 1);
    const struct { int ranks; double s; } want[] = {
        {1, 0.65}, {2, 0.684}, {3, 0.91}, {5, 0.91 + 2 * (0.91 - 0.684)}, {0, 0.65}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect_float_eq(failure_relaunch_s(&f, want[i].ranks), want[i].s, 1e-12,
                           "%d ranks: %.17g, want %.17g", want[i].ranks,
                           failure_relaunch_s(&f, want[i].ranks), want[i].s);
    struct cluster back = round_trip(&c, "points-back.conf");
    expect_same_profile(&c, &back);

    /* a last segment that noise tilted down does not go on down */
    struct failure_costs down = {.relaunch_at = {.n = 2, .ranks = {1, 2}, .s = {0.65, 0.645}}};
    cr_expect_float_eq(failure_relaunch_s(&down, 2), 0.645, 1e-12);
    cr_expect_float_eq(failure_relaunch_s(&down, 40), 0.645, 1e-12);
    /* one point prices any count */
    struct failure_costs one = {.relaunch_at = {.n = 1, .ranks = {2}, .s = {0.7}}};
    cr_expect_eq(failure_relaunch_s(&one, 1), 0.7);
    cr_expect_eq(failure_relaunch_s(&one, 9), 0.7);
    /* an old profile's line: restart_s + restart_per_rank_s x ranks */
    struct failure_costs line = {.relaunch_s = 0.2316, .relaunch_per_rank_s = 0.2305};
    cr_expect_float_eq(failure_relaunch_s(&line, 3), 0.2316 + 3 * 0.2305, 1e-12);
}

Test(cluster, malformed_relaunch_points_name_the_key_file_and_line)
{
    static const char *const bad[] = {
        "restart_s_at_ranks = 2:0.5,1:0.4",   /* ranks not increasing */
        "restart_s_at_ranks = 1:0.5,1:0.6",   /* twice the same count */
        "restart_s_at_ranks = 0:0.5",         /* no rank */
        "restart_s_at_ranks = 1:-0.5",        /* negative time */
        "restart_s_at_ranks = 1:nan",
        "restart_s_at_ranks = 1:1e999",
        "restart_s_at_ranks = 1:2e6",         /* past 1e6 s */
        "restart_s_at_ranks = 1",             /* no time */
        "restart_s_at_ranks = 1:0.5,",        /* an empty entry */
        "restart_s_at_ranks = 1:0.5;2:0.6",
        "restart_s_at_ranks = 1.5:0.5",
        "restart_s_at_ranks = 1:0.1,2:0.1,3:0.1,4:0.1,5:0.1,6:0.1,7:0.1,8:0.1,9:0.1,10:0.1,"
        "11:0.1,12:0.1,13:0.1,14:0.1,15:0.1,16:0.1,17:0.1",   /* more than 16 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_log_info("%s", bad[i]);
        expect_bad_line(7, bad[i], "restart_s_at_ranks: '");
        expect_bad_line(7, bad[i], "RANKS:SECONDS");
    }
    /* as the user meets it: exit 2, the message naming the file and the key */
    const char *path = profile_with("bad-points.conf", 7, bad[0]);
    struct run r = RUN("sim", "--cluster", path, "--fail", "1@2", "--steps", "4");
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect_not_null(strstr(r.err, "restart_s_at_ranks: '2:0.5,1:0.4' is not allowed"), "%s",
                       r.err);
    cr_expect_not_null(strstr(r.err, "bad-points.conf:7"), "%s", r.err);
    run_free(&r);
}

/* The fullest node's ranks over its cores: ps-sync on 2 workers and a
 * server, one node of 2 cores, is 3 ranks on 2 cores. */
Test(cluster, layout_sets_the_oversubscription_of_the_fullest_node)
{
    struct cluster c = cluster_presets[3];   /* cpu-loopback */
    struct err e = {0};
    c.devices_per_node = 1024;
    c.cores_per_node = 2;
    cr_assert_eq(cluster_layout(&c, 3, 0, 0, NULL, &e), 0, "%s", e.msg);
    cr_expect_eq(c.nodes, 1);
    cr_expect_eq(c.oversubscription, 1.5, "3 ranks on 2 cores: %g", c.oversubscription);
    cr_assert_eq(cluster_layout(&c, 2, 0, 0, NULL, &e), 0, "%s", e.msg);
    cr_expect_eq(c.oversubscription, 1, "2 ranks on 2 cores");
    /* 2 ranks a node: the server of a 3-rank plan gets a node of its own */
    cr_assert_eq(cluster_layout(&c, 3, 0, 2, NULL, &e), 0, "%s", e.msg);
    cr_expect_eq(c.oversubscription, 1);
    /* no cores given: devices are their own (GPUs), however many a node */
    c.cores_per_node = 0;
    cr_assert_eq(cluster_layout(&c, 64, 0, 64, NULL, &e), 0, "%s", e.msg);
    cr_expect_eq(c.oversubscription, 1);
}

/* ---- op-time spread (optional keys, core/jitter.h) ---------------------- */

Test(cluster, jitter_keys_load_default_to_none_and_round_trip)
{
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(profile_with("plain.conf", 0, NULL), &c, &e), 0, "%s", e.msg);
    cr_expect_not(jitter_is_set(&c.jitter), "an old profile has no spread");
    for (size_t i = 0; i < cluster_n_presets; i++)
        cr_expect_not(jitter_is_set(&cluster_presets[i].jitter), "%s", cluster_presets[i].name);

    const char *path = profile_plus("jitter.conf",
                                    "jitter_forward_sigma = 0.05\njitter_backward_sigma = 0.1\n"
                                    "jitter_update_sigma = 0\n");
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(c.jitter.forward_sigma, 0.05);
    cr_expect_eq(c.jitter.backward_sigma, 0.1);
    cr_expect_eq(c.jitter.update_sigma, 0);
    cr_expect(jitter_is_set(&c.jitter));

    /* written back: the sigmas set, the zero one left out (as absent) */
    char out[CLUSTER_TEXT_BYTES];
    cluster_format(&c, out, sizeof out);
    cr_expect(strstr(out, "jitter_forward_sigma = 0.050000000000000003\n"), "%s", out);
    cr_expect(strstr(out, "jitter_backward_sigma = 0.10000000000000001\n"), "%s", out);
    cr_expect_null(strstr(out, "jitter_update_sigma"), "%s", out);
    const char *saved = test_tmp_path("jitter-saved.conf");
    cr_assert_eq(cluster_write(&c, saved, &e), 0, "%s", e.msg);
    struct cluster back;
    cr_assert_eq(cluster_load(saved, &back, &e), 0, "%s", e.msg);
    cr_expect(same_bits(back.jitter.forward_sigma, c.jitter.forward_sigma));
    cr_expect(same_bits(back.jitter.backward_sigma, c.jitter.backward_sigma));
    cr_expect_eq(back.jitter.update_sigma, 0);
}

Test(cluster, malformed_jitter_sigmas_name_the_key_file_and_line)
{
    expect_bad_line(5, "jitter_forward_sigma = -0.1",
                    "jitter_forward_sigma: '-0.1' is not allowed (a log-normal sigma from 0 to 2");
    expect_bad_line(5, "jitter_backward_sigma = 2.5", "jitter_backward_sigma: '2.5' is not allowed");
    expect_bad_line(5, "jitter_update_sigma = lots", "jitter_update_sigma: 'lots' is not allowed");
    expect_bad_line(5, "jitter_update_sigma = nan", "jitter_update_sigma: 'nan' is not allowed");
    expect_bad_line(5, "jitter_forward_sigma =", "jitter_forward_sigma: no value");
}

Test(cluster, jitter_option_keeps_clears_or_demands_the_spread)
{
    struct cluster c = cluster_presets[3];
    struct err e = {0};
    c.jitter = (struct jitter_spec){.forward_sigma = 0.1, .backward_sigma = 0.2};
    cr_assert_eq(cluster_set_jitter(&c, "auto", &e), 0, "%s", e.msg);
    cr_expect_eq(c.jitter.backward_sigma, 0.2);
    cr_assert_eq(cluster_set_jitter(&c, NULL, &e), 0, "%s", e.msg);
    cr_assert_eq(cluster_set_jitter(&c, "on", &e), 0, "%s", e.msg);
    cr_expect_eq(c.jitter.forward_sigma, 0.1);
    cr_assert_eq(cluster_set_jitter(&c, "off", &e), 0, "%s", e.msg);
    cr_expect_not(jitter_is_set(&c.jitter));
    /* on, with nothing measured: said, not silently lock-step */
    expect_input_error(cluster_set_jitter(&c, "on", &e), &e, "--jitter on: cluster 'cpu-loopback'",
                       "no op-time spread");
    e = (struct err){0};
    expect_input_error(cluster_set_jitter(&c, "sometimes", &e), &e,
                       "--jitter: 'sometimes' is not one of auto, on, off", NULL);
}

/* ---- measured time-sharing (optional key timeshare_slowdown) ------------ */

Test(cluster, timeshare_table_loads_round_trips_and_is_absent_by_default)
{
    struct cluster c;
    struct err e = {0};
    cr_assert_eq(cluster_load(profile_with("plain.conf", 0, NULL), &c, &e), 0, "%s", e.msg);
    cr_expect_eq(c.n_timeshare, 0);
    const char *path = profile_plus("ts.conf", "cores_per_node = 2\n"
                                               "timeshare_slowdown = 0.9, 1,1.6,2.1\n");
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n_timeshare, 4);
    cr_expect_eq(c.timeshare_slowdown[0], 0.9);
    cr_expect_eq(c.timeshare_slowdown[3], 2.1);
    char out[CLUSTER_TEXT_BYTES];
    cluster_format(&c, out, sizeof out);
    cr_expect(strstr(out, "timeshare_slowdown = 0.90000000000000002,1,1.6000000000000001,"
                          "2.1000000000000001\n"), "%s", out);
    const char *saved = test_tmp_path("ts-saved.conf");
    cr_assert_eq(cluster_write(&c, saved, &e), 0, "%s", e.msg);
    struct cluster back;
    cr_assert_eq(cluster_load(saved, &back, &e), 0, "%s", e.msg);
    cr_assert_eq(back.n_timeshare, 4);
    for (int k = 0; k < 4; k++)
        cr_expect(same_bits(back.timeshare_slowdown[k], c.timeshare_slowdown[k]), "entry %d", k);
    /* the longest table fits the text a profile may take */
    c.n_timeshare = CLUSTER_MAX_TIMESHARE;
    for (int k = 0; k < CLUSTER_MAX_TIMESHARE; k++) c.timeshare_slowdown[k] = 1.0 / 3 + k;
    cr_expect_lt(cluster_format(&c, out, sizeof out), sizeof out);
    cr_assert_eq(cluster_write(&c, saved, &e), 0, "%s", e.msg);
    cr_assert_eq(cluster_load(saved, &back, &e), 0, "%s", e.msg);
    cr_expect_eq(back.n_timeshare, CLUSTER_MAX_TIMESHARE);
    cr_expect(same_bits(back.timeshare_slowdown[127], c.timeshare_slowdown[127]));
}

Test(cluster, malformed_timeshare_tables_name_the_key_file_and_line)
{
    const char *want = "timeshare_slowdown: '";
    expect_bad_line(5, "timeshare_slowdown = 1,,2", want);
    expect_bad_line(5, "timeshare_slowdown = 1,2,", want);
    expect_bad_line(5, "timeshare_slowdown = 0", "1 to 128 numbers > 0");
    expect_bad_line(5, "timeshare_slowdown = 1,-2", want);
    expect_bad_line(5, "timeshare_slowdown = 1,fast", want);
    expect_bad_line(5, "timeshare_slowdown = 1 2", want);
    char line[2048] = "timeshare_slowdown = 1";
    for (int k = 1; k <= CLUSTER_MAX_TIMESHARE; k++) strcat(line, ",1");   /* 129 entries */
    expect_bad_line(5, line, want);
}

/* A hand-written table on 2 cores: the fullest node's k ranks take entry k;
 * beyond the table, entry K times k / max(K, cores); without a table, the
 * rule (ranks per core above the cores). */
Test(cluster, layout_uses_the_measured_slowdown_where_the_profile_has_one)
{
    struct cluster c;
    struct err e = {0};
    const char *path = profile_plus("ts.conf", "cores_per_node = 2\n"
                                               "timeshare_slowdown = 0.9,1,1.6,2.1\n");
    cr_assert_eq(cluster_load(path, &c, &e), 0, "%s", e.msg);
    struct { int ranks; double want; } cases[] = {
        {1, 0.9}, {2, 1}, {3, 1.6}, {4, 2.1}, {6, 2.1 * 6 / 4}, {8, 2.1 * 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(cluster_layout(&c, cases[i].ranks, 0, 64, NULL, &e), 0, "%s", e.msg);
        cr_expect_float_eq(c.time_share_stretch, cases[i].want, 1e-12, "%d ranks: %g, want %g",
                           cases[i].ranks, c.time_share_stretch, cases[i].want);
    }
    /* 2 ranks a node: the fullest holds 2 whatever the plan's size */
    cr_assert_eq(cluster_layout(&c, 5, 0, 2, NULL, &e), 0, "%s", e.msg);
    cr_expect_eq(c.time_share_stretch, 1);
    /* a table shorter than the cores: flat up to the cores, then even sharing */
    c.n_timeshare = 2;
    c.cores_per_node = 8;
    cr_assert_eq(cluster_layout(&c, 8, 0, 64, NULL, &e), 0, "%s", e.msg);
    cr_expect_float_eq(c.time_share_stretch, 1, 1e-12, "%g", c.time_share_stretch);
    cr_assert_eq(cluster_layout(&c, 12, 0, 64, NULL, &e), 0, "%s", e.msg);
    cr_expect_float_eq(c.time_share_stretch, 1.5, 1e-12, "%g", c.time_share_stretch);
    /* no table: the rule, and no measured factor */
    c.n_timeshare = 0;
    c.cores_per_node = 2;
    cr_assert_eq(cluster_layout(&c, 3, 0, 64, NULL, &e), 0, "%s", e.msg);
    cr_expect_eq(c.time_share_stretch, 0);
    cr_expect_eq(c.oversubscription, 1.5);
}

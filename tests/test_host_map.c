/* real/host_map.c and the report's "hosts" map (core/report_json.c): where
 * each rank ran, written only for real runs, read back strictly, and said
 * in one line. No MPI here: the gather itself runs in test_two_hosts. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/report.h"
#include "../real/host_map.h"
#include "helpers.h"
#include "report_fixture.h"

/* A real-looking report whose ranks ran on names[0..n). */
static void make_report(struct report *r, struct config *c, const char *const *names, int n)
{
    config_init(c);
    report_init(r);
    r->mode = "real";
    snprintf(r->strategy, sizeof r->strategy, "mirrored");
    r->devices = n;
    r->config = c;
    r->has_hosts = n > 0;
    r->rank_hosts = calloc((size_t)n + 1, sizeof *r->rank_hosts);
    cr_assert(r->rank_hosts);
    r->n_rank_hosts = n;
    for (int i = 0; i < n; i++) snprintf(r->rank_hosts[i].name, REPORT_HOST_BYTES, "%s", names[i]);
}

Test(host_map, hosts_round_trip_through_json_in_the_order_of_their_first_rank)
{
    static const char *const names[] = {"b", "b", "a", "a", "b"};
    struct report r, back;
    struct config c, c_back;
    make_report(&r, &c, names, 5);
    cJSON *j = report_to_json(&r);
    cr_assert(j);
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(j, "hosts");
    cr_assert(cJSON_IsObject(hosts));
    cr_expect_str_eq(hosts->child->string, "b", "the host of rank 0 first");
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hosts, "b")), 3);
    cr_expect_eq(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(hosts, "b"), 2)->valueint, 4);
    struct err e = {0};
    cr_assert_eq(test_read_back(j, &back, &c_back, &e), 0, "%s", e.msg);
    cr_assert(back.has_hosts);
    cr_assert_eq(back.n_rank_hosts, 5);
    for (int i = 0; i < 5; i++) cr_expect_str_eq(back.rank_hosts[i].name, names[i], "rank %d", i);
    cJSON_Delete(j);
    report_release(&back);
    report_release(&r);
    config_release(&c);
    config_release(&c_back);
}

Test(host_map, a_report_without_hosts_writes_no_key)
{
    struct report r;
    struct config c;
    make_report(&r, &c, NULL, 0);
    r.mode = "sim";
    cJSON *j = report_to_json(&r);
    cr_assert(j);
    cr_expect_null(cJSON_GetObjectItemCaseSensitive(j, "hosts"),
                   "a sim report's JSON stays as it was, without \"hosts\"");
    cJSON_Delete(j);
    report_release(&r);
    config_release(&c);
}

/* The report of names with "hosts" replaced by text; 0 or the error. */
static int read_with_hosts(const char *text, struct err *e)
{
    static const char *const names[] = {"a", "b"};
    struct report r, back;
    struct config c, c_back;
    make_report(&r, &c, names, 2);
    cJSON *j = report_to_json(&r);
    cJSON *bad = cJSON_Parse(text);
    cr_assert(j && bad, "%s parses", text);
    cJSON_ReplaceItemInObjectCaseSensitive(j, "hosts", bad);
    int rc = test_read_back(j, &back, &c_back, e);
    cJSON_Delete(j);
    report_release(&back);
    report_release(&r);
    config_release(&c);
    config_release(&c_back);
    return rc;
}

Test(host_map, malformed_hosts_are_refused_naming_the_problem)
{
    static const struct { const char *text, *must_say; } bad[] = {
        {"[\"a\"]", "not an object"},
        {"{\"a\": 0}", "not an array"},
        {"{\"a\": [0], \"b\": [0]}", "listed before"},
        {"{\"a\": [0, 2]}", "hosts"},
        {"{\"a\": [-1, 0]}", "hosts"},
        {"{\"\": [0, 1]}", "host name"},
        {"{\"a\": [0.5, 1]}", "hosts"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct err e = {0};
        cr_expect_eq(read_with_hosts(bad[i].text, &e), ERR_INPUT, "%s is refused", bad[i].text);
        cr_expect(strstr(e.msg, bad[i].must_say), "%s: '%s' says %s", bad[i].text, e.msg,
                  bad[i].must_say);
    }
    struct err e = {0};
    cr_expect_eq(read_with_hosts("{\"b\": [1], \"a\": [0]}", &e), 0, "%s", e.msg);
}

Test(host_map, describe_gives_each_host_its_ranks_as_ranges)
{
    static const char *const names[] = {"a", "a", "b", "b", "a"};
    struct report r;
    struct config c;
    make_report(&r, &c, names, 5);
    char line[256];
    host_map_describe(&r, line, sizeof line);
    cr_expect_str_eq(line, "2 hosts: a (ranks 0-1,4), b (ranks 2-3)");
    cr_expect_eq(host_map_count(&r), 2);
    char small[8];
    host_map_describe(&r, small, sizeof small);
    cr_expect_eq(strlen(small), sizeof small - 1, "cut to fit: '%s'", small);
    report_release(&r);
    config_release(&c);
    host_map_describe(&r, line, sizeof line);
    cr_expect_str_eq(line, "", "no hosts, no line");
    static const char *const one[] = {"solo"};
    make_report(&r, &c, one, 1);
    host_map_describe(&r, line, sizeof line);
    cr_expect_str_eq(line, "1 host: solo (rank 0)");
    report_release(&r);
    config_release(&c);
}

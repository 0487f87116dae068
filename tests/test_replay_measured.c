/* What a real trace's measured facts add to strata replay (bench/replay.c,
 * bench/replay_durations.c, core/trace_read.c, sim/simulate.c's given
 * durations): a server's measured updates replace the cost model's, and
 * --measured-comm its messages, pushes (as the server received them) and
 * collectives replace the network model's, to the closed form; a trace's
 * hosts say when the run had more processes than cores, and its
 * clock_error_s how well its ranks' clocks agree; malformed server spans,
 * hosts and clock errors are refused; and a real ps-sync run's trace holds
 * its server's updates, receipts, host and clocks' agreement. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plots/html_page.h"
#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(replay_measured, .timeout = 300);

/* The hand trace: ps-sync on 2 workers and 1 server (rank 2),
 * mlp:784-32-10, 2 steps. Each worker runs FORWARD (op 0), BACKWARD (1),
 * PUSH (2), PULL (3) a step; its push reaches the server push_ms after it
 * is posted (the server's receipt: a PUSH span of op -1, step = the round);
 * the server closes the round when the later push is in and updates for
 * upd_ms (an UPDATE span of op -1, step = the update's index), then
 * answers both pulls, which take pull_ms. A worker's own PUSH span ends
 * with its pull, as a real worker sees the send complete. A step is
 * therefore max_r(fwd + bwd + push) + upd + pull. */
struct ps_hand {
    double fwd_ms[2], bwd_ms[2], upd_ms[2];   /* upd_ms: the server's, step 0 and 1 */
    bool has_updates;                          /* the server's spans are in the trace */
    const char *hosts;                         /* the "hosts" value, or NULL */
    const char *bad_server_span;               /* replaces the server's span of step 0 */
    double push_ms, pull_ms;   /* a push until its server has it; a pull from its answer */
    bool has_receipts;         /* the server's spans of the pushes it received */
    const char *clock_error;   /* the "clock_error_s" value, or NULL */
};

#define PS_STEPS 2

static void ps_event(struct test_trace *t, const char *name, int rank, int tid, int step, int op,
                     double ts_ms, double dur_ms, const char *extra)
{
    test_trace_span(t, name, rank, tid, step, op, "[0,2)", op == 0 || op == 1 ? 0 : -1,
                    ts_ms, dur_ms, extra);
}

static const char *write_ps_hand(const char *file, const struct ps_hand *h)
{
    struct test_trace t = test_trace_begin(file);
    double t_ms = 0;
    for (int s = 0; s < PS_STEPS; s++) {
        double arrive_ms = fmax(h->fwd_ms[0] + h->bwd_ms[0], h->fwd_ms[1] + h->bwd_ms[1]) +
                           h->push_ms;
        double answer_ms = t_ms + arrive_ms + h->upd_ms[s], end_ms = answer_ms + h->pull_ms;
        char push[96], pull[64];
        snprintf(push, sizeof push, ",\"peer\":2,\"version_read\":%d,\"version_applied\":%d", s, s);
        snprintf(pull, sizeof pull, ",\"peer\":2,\"version_read\":%d", s + 1);
        for (int r = 0; r < 2; r++) {
            double b_ms = t_ms + h->fwd_ms[r];
            ps_event(&t, "FORWARD", r, 0, s, 0, t_ms, h->fwd_ms[r], "");
            ps_event(&t, "BACKWARD", r, 0, s, 1, b_ms, h->bwd_ms[r], "");
            double push_at_ms = b_ms + h->bwd_ms[r];
            ps_event(&t, "PUSH", r, 1, s, 2, push_at_ms, end_ms - push_at_ms, push);
            ps_event(&t, "PULL", r, 1, s, 3, answer_ms, h->pull_ms, pull);
            char from[32];
            snprintf(from, sizeof from, ",\"peer\":%d", r);
            if (h->has_receipts)
                ps_event(&t, "PUSH", 2, 1, s, -1, push_at_ms, h->push_ms, from);
        }
        if (s == 0 && h->bad_server_span) fprintf(t.f, ",%s", h->bad_server_span);
        else if (h->has_updates)
            ps_event(&t, "UPDATE", 2, 0, s, -1, t_ms + arrive_ms, h->upd_ms[s], "");
        t_ms = end_ms;
    }
    fprintf(t.f, "],\"displayTimeUnit\":\"ms\",\"strata_trace\":1,\"mode\":\"real\","
               "\"strategy\":\"ps-sync\",\"steps\":%d,\"ranks\":3,\"workers\":2,"
               "\"dropped_spans\":0,%s%s%s%s%s%s\"scenario\":{\"strategy\":\"ps-sync\","
               "\"model\":\"mlp:784-32-10\",\"devices\":2,\"servers\":1,\"batch\":256,"
               "\"steps\":%d,\"seed\":1}}\n",
            PS_STEPS, h->hosts ? "\"hosts\":" : "", h->hosts ? h->hosts : "", h->hosts ? "," : "",
            h->clock_error ? "\"clock_error_s\":" : "", h->clock_error ? h->clock_error : "",
            h->clock_error ? "," : "", PS_STEPS);
    fclose(t.f);
    return t.path;
}

/* strata replay TRACE --cluster ideal [flag] --json OUT (must succeed): its
 * document. */
static cJSON *replay_ideal_with(const char *trace, const char *flag)
{
    const char *out = test_tmp_path("replay.json");
    struct run r = flag ? RUN("replay", trace, "--cluster", "ideal", flag, "--json", out)
                        : RUN("replay", trace, "--cluster", "ideal", "--json", out);
    cr_assert_eq(r.status, 0, "strata replay failed (%d): %s", r.status, r.err);
    run_free(&r);
    return read_json(out);
}

static cJSON *replay_ideal(const char *trace) { return replay_ideal_with(trace, NULL); }

/* strata replay TRACE --cluster ideal succeeds, and its text holds said. */
static void expect_replay_says(const char *trace, const char *said)
{
    struct run r = RUN("replay", trace, "--cluster", "ideal");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, said) != NULL, "replay should say \"%s\":\n%s", said, r.out);
    run_free(&r);
}

static void expect_near(double got, double want, double rel, const char *what)
{
    cr_log_info("%s: %.12g, closed form %.12g", what, got, want);
    cr_expect(fabs(got - want) <= rel * fabs(want), "%s: %.12g, closed form %.12g", what, got,
              want);
}

static const struct ps_hand slow_server = {{1, 1}, {2, 4}, {7, 3}, true, NULL, NULL, 0, 0, false,
                                           NULL};

/* slow_server with its communication timed: pushes in 0.5 ms after they
 * are posted (the server's receipts), pulls 0.25 ms from their answer. */
static const struct ps_hand timed_comm = {.fwd_ms = {1, 1}, .bwd_ms = {2, 4}, .upd_ms = {7, 3},
                                          .has_updates = true, .push_ms = 0.5, .pull_ms = 0.25,
                                          .has_receipts = true};

Test(replay_measured, measured_updates_replay_to_closed_form)
{
    /* (1 + 4 + 7) + (1 + 4 + 3): the server's own times, not the model's */
    cJSON *j = replay_ideal(write_ps_hand("ps.json", &slow_server));
    expect_near(num_at(j, "measured_step_s", NULL), 10e-3, 1e-9, "measured step");
    expect_near(num_at(j, "replayed_step_s", NULL), 10e-3, 1e-9, "replayed step");
    cr_expect_str_eq(str_at(j, "server_updates"), "measured");
    cJSON_Delete(j);
}

Test(replay_measured, without_server_spans_the_model_updates)
{
    /* the same run's trace without the server's spans (a simulated trace,
     * or one written before servers recorded them): the model's update,
     * so the step is no longer the measured one */
    struct ps_hand h = slow_server;
    h.has_updates = false;
    cJSON *j = replay_ideal(write_ps_hand("ps-old.json", &h));
    cr_expect_str_eq(str_at(j, "server_updates"), "model");
    double replayed_s = num_at(j, "replayed_step_s", NULL);
    cr_log_info("replayed with the model's updates: %.6g s a step (measured 10 ms)", replayed_s);
    cr_expect(fabs(replayed_s - 10e-3) > 1e-4, "the model's update should not be 5 ms a step");
    cJSON_Delete(j);
}

Test(replay_measured, without_stragglers_keeps_the_servers_updates)
{
    /* rank 1's backward is the slow one: typical, 1 + 2 a worker; the
     * server's updates stay as measured: (3 + 7) + (3 + 3) over 2 steps */
    const char *out = test_tmp_path("ws.json");
    struct run r = RUN("replay", write_ps_hand("ps-ws.json", &slow_server), "--cluster", "ideal",
                       "--without-stragglers", "--json", out);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    cJSON *j = read_json(out);
    expect_near(num_at(j, "whatif", "step_s"), 8e-3, 1e-9, "step without stragglers");
    cJSON_Delete(j);
}

Test(replay_measured, measured_comm_replays_pushes_and_pulls_to_closed_form)
{
    /* pushes in 0.5 ms after they are posted, pulls 0.25 ms from their
     * answer: (1 + 4 + 0.5 + 7 + 0.25) + (1 + 4 + 0.5 + 3 + 0.25) over 2
     * steps; the workers' own PUSH spans, which end with the pull, would
     * make it longer */
    struct ps_hand h = timed_comm;
    const char *trace = write_ps_hand("comm.json", &h);
    cJSON *j = replay_ideal_with(trace, "--measured-comm");
    expect_near(num_at(j, "measured_step_s", NULL), 10.75e-3, 1e-9, "measured step");
    expect_near(num_at(j, "replayed_step_s", NULL), 10.75e-3, 1e-9, "replayed step");
    cr_expect_str_eq(str_at(j, "communication"), "measured");
    cJSON_Delete(j);
    /* the network model's (ideal: free) without the flag: 5 + 7, 5 + 3 */
    j = replay_ideal(trace);
    expect_near(num_at(j, "replayed_step_s", NULL), 10e-3, 1e-9, "replayed on the ideal network");
    cr_expect_str_eq(str_at(j, "communication"), "model");
    cJSON_Delete(j);
    /* without the server's receipts (an older trace) a push is the
     * network's, the pulls still measured: 5 + 7 + 0.25, 5 + 3 + 0.25 */
    h.has_receipts = false;
    j = replay_ideal_with(write_ps_hand("noreceipts.json", &h), "--measured-comm");
    expect_near(num_at(j, "replayed_step_s", NULL), 10.25e-3, 1e-9, "replayed without receipts");
    cJSON_Delete(j);
}

/* strata replay TRACE --cluster ideal --measured-comm [more 4]: its text holds
 * each of says and none of not_says. */
static void expect_measured_header(const char *trace, const char *more,
                                   const char *const *says, const char *const *not_says)
{
    struct run r = more ? RUN("replay", trace, "--cluster", "ideal", "--measured-comm", more, "4")
                        : RUN("replay", trace, "--cluster", "ideal", "--measured-comm");
    cr_assert_eq(r.status, 0, "%s", r.err);
    for (; *says; says++)
        cr_expect(strstr(r.out, *says), "replay should say \"%s\":\n%s", *says, r.out);
    for (; *not_says; not_says++)
        cr_expect(!strstr(r.out, *not_says), "replay should not say \"%s\":\n%s", *not_says,
                  r.out);
    run_free(&r);
}

/* The header says what timed the communication: with --measured-comm the
 * trace did, not "the network model" (once said before "as long as it
 * took in the trace"); the network model where the trace holds no time
 * (pushes without the server's receipts) or for a what-if's replanned
 * messages; and a real trace's --cluster, when nothing used it, says so. */
Test(replay_measured, measured_comm_header_says_what_timed_the_communication)
{
    struct ps_hand h = timed_comm;
    const char *trace = write_ps_hand("comm.json", &h);
    expect_measured_header(
        trace, NULL,
        (const char *const[]){"and communication too (--measured-comm): the error is the "
                              "schedule's alone",
                              "--cluster ideal: no use here", NULL},
        (const char *const[]){"communication from the network model", NULL});
    expect_measured_header(
        trace, "--scale",
        (const char *const[]){"its communication from the network model of ideal: the what-if's "
                              "messages were never measured", NULL},
        (const char *const[]){"communication from the network model\n", "no use here", NULL});
    h.has_receipts = false;
    expect_measured_header(
        write_ps_hand("noreceipts.json", &h), NULL,
        (const char *const[]){"the error is the schedule's and, for that communication, the "
                              "network model's",
                              "communication the trace holds no time for from the network model "
                              "of ideal", NULL},
        (const char *const[]){"schedule's alone", "no use here", NULL});
}

/* Mirrored on 2 ranks, 2 steps: each rank's all-reduce seen to complete
 * ar_ms after the later rank arrived; each rank starts its next step when
 * its own update ends. */
static const char *write_allreduce_hand(const char *file, const double ar_ms[2])
{
    const double fwd_ms[2] = {1, 1}, bwd_ms[2] = {2, 4}, upd_ms = 0.5;
    struct test_trace t = test_trace_begin(file);
    double t_ms[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        double arrive_ms = fmax(t_ms[0] + fwd_ms[0] + bwd_ms[0], t_ms[1] + fwd_ms[1] + bwd_ms[1]);
        for (int r = 0; r < 2; r++) {
            ps_event(&t, "FORWARD", r, 0, s, 0, t_ms[r], fwd_ms[r], "");
            ps_event(&t, "BACKWARD", r, 0, s, 1, t_ms[r] + fwd_ms[r], bwd_ms[r], "");
            ps_event(&t, "ALLREDUCE", r, 1, s, 2, arrive_ms, ar_ms[r], "");
            ps_event(&t, "UPDATE", r, 0, s, 3, arrive_ms + ar_ms[r], upd_ms, "");
            t_ms[r] = arrive_ms + ar_ms[r] + upd_ms;
        }
    }
    fprintf(t.f, "],\"strata_trace\":1,\"mode\":\"real\",\"strategy\":\"mirrored\",\"steps\":2,"
               "\"ranks\":2,\"workers\":2,\"dropped_spans\":0,\"scenario\":{\"strategy\":"
               "\"mirrored\",\"model\":\"mlp:784-32-10\",\"devices\":2,\"batch\":256,"
               "\"steps\":2,\"seed\":1}}\n");
    fclose(t.f);
    return t.path;
}

Test(replay_measured, measured_comm_gives_a_collective_its_longest_members_time)
{
    /* rank 0 saw its all-reduce end 0.3 ms after the later arrival, rank 1
     * 0.8: the collective ends for both at 0.8, so a step is 1 + 4 + 0.8
     * + 0.5 (rank 1 arrives last in both steps); ideal network without the
     * flag: 1 + 4 + 0.5 */
    const double ar_ms[2] = {0.3, 0.8};
    const char *trace = write_allreduce_hand("ar.json", ar_ms);
    cJSON *j = replay_ideal_with(trace, "--measured-comm");
    expect_near(num_at(j, "measured_step_s", NULL), 6.3e-3, 1e-9, "measured step");
    expect_near(num_at(j, "replayed_step_s", NULL), 6.3e-3, 1e-9, "replayed step");
    cJSON_Delete(j);
    j = replay_ideal(trace);
    expect_near(num_at(j, "replayed_step_s", NULL), 5.5e-3, 1e-9, "replayed on the ideal network");
    cJSON_Delete(j);
}

/* A real trace's hosts say when the run was oversubscribed, and its
 * clock_error_s how well its ranks' clocks agreed (real/clock_align.h):
 * replay says both on. */
Test(replay_measured, hosts_and_clocks_are_said)
{
    struct ps_hand h = slow_server;
    h.hosts = "[{\"host\":\"a\",\"processes\":3,\"cores\":2}]";
    h.clock_error = "2.5e-06";
    const char *trace = write_ps_hand("crowded.json", &h);
    cJSON *j = replay_ideal(trace);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(j, "oversubscribed")));
    cr_expect_eq(num_at(j, "processes", NULL), 3);
    cr_expect_eq(num_at(j, "cores", NULL), 2);
    cr_expect_eq(num_at(j, "clock_error_s", NULL), 2.5e-6);
    cJSON_Delete(j);
    expect_replay_says(trace, "oversubscribed: 3 processes on 2 cores");
    expect_replay_says(trace, "clocks agreed with rank 0's to within 2.5 us");
    h.clock_error = NULL;

    /* two hosts: the crowded one is said, the roomy one is not */
    h.hosts = "[{\"host\":\"a\",\"processes\":1,\"cores\":8},{\"host\":\"b\",\"processes\":2,"
              "\"cores\":1}]";
    j = replay_ideal(write_ps_hand("two.json", &h));
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(j, "oversubscribed")));
    cr_expect_eq(num_at(j, "processes", NULL), 2);
    cr_expect_eq(num_at(j, "cores", NULL), 1);
    cJSON_Delete(j);

    h.hosts = "[{\"host\":\"a\",\"processes\":3,\"cores\":4}]";
    j = replay_ideal(write_ps_hand("roomy.json", &h));
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(j, "oversubscribed")));
    cJSON_Delete(j);

    /* a trace without hosts (simulated, or older): unknown, not "no" */
    j = replay_ideal(write_ps_hand("nohosts.json", &slow_server));
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(j, "oversubscribed")));
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(j, "cores")));
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(j, "clock_error_s")), "no clocks said: null");
    cJSON_Delete(j);
}

/* A real trace's header on --html's page: replay's page lacked the lines
 * above its tables (the network, the servers' updates, the clocks and the
 * oversubscription); each is now an item of the page's notes, as the
 * terminal says it (html_escape'd, as the page writes text). */
Test(replay_measured, html_page_has_the_header_lines)
{
    struct ps_hand h = slow_server;
    h.hosts = "[{\"host\":\"a\",\"processes\":3,\"cores\":2}]";
    h.clock_error = "2.5e-06";
    const char *trace = write_ps_hand("crowded-page.json", &h), *page = test_tmp_path("crowded.html");
    struct run r = RUN("replay", trace, "--cluster", "ideal", "--html", page);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *html = test_slurp(page);
    const char *notes = strstr(html, "<section id=\"notes\">");
    cr_assert_not_null(notes, "the page has no notes");
    int n = 0;
    for (const char *line = r.out; *line && *line != '\n'; line += strcspn(line, "\n") + 1) {
        char *want = NULL, *text = strndup(line, strcspn(line, "\n"));
        size_t len = 0;
        FILE *f = open_memstream(&want, &len);
        cr_assert_not_null(f);
        fputs("<li>", f);
        html_escape(f, text);
        fputs("</li>", f);
        fclose(f);
        cr_expect(strstr(notes, want) != NULL, "not an item of the page's notes: %s", text);
        free(want);
        free(text);
        n++;
    }
    /* replay of, replayed on, the servers' updates, the clocks, oversubscribed */
    cr_expect_eq(n, 5, "%s", r.out);
    free(html);
    run_free(&r);
}

Test(replay_measured, malformed_server_spans_and_hosts_are_refused)
{
    struct ps_hand h = slow_server;
    /* op -1 on a worker: no op of the plan */
    h.bad_server_span = "{\"name\":\"UPDATE\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":5000,"
                        "\"dur\":10,\"args\":{\"layers\":\"[0,2)\",\"step\":0,\"op\":-1}}";
    expect_refused(RUN("replay", write_ps_hand("on-worker.json", &h)), "op -1", "rank 0");
    /* a server's FORWARD */
    h.bad_server_span = "{\"name\":\"FORWARD\",\"ph\":\"X\",\"pid\":2,\"tid\":0,\"ts\":5000,"
                        "\"dur\":10,\"args\":{\"layers\":\"[0,2)\",\"step\":0,\"op\":-1}}";
    expect_refused(RUN("replay", write_ps_hand("fwd.json", &h)), "FORWARD", "UPDATE");
    /* layers beyond the server's shard */
    h.bad_server_span = "{\"name\":\"UPDATE\",\"ph\":\"X\",\"pid\":2,\"tid\":0,\"ts\":5000,"
                        "\"dur\":10,\"args\":{\"layers\":\"[0,1)\",\"step\":0,\"op\":-1}}";
    expect_refused(RUN("replay", write_ps_hand("shard.json", &h)), "shard", "[0,1)");
    /* an update index no run of this size reaches: refused, not allocated */
    h.bad_server_span = "{\"name\":\"UPDATE\",\"ph\":\"X\",\"pid\":2,\"tid\":0,\"ts\":5000,"
                        "\"dur\":10,\"args\":{\"layers\":\"[0,2)\",\"step\":2000000000,\"op\":-1}}";
    expect_refused(RUN("replay", write_ps_hand("huge.json", &h)), "damaged", NULL);
    /* op below -1 */
    h.bad_server_span = "{\"name\":\"UPDATE\",\"ph\":\"X\",\"pid\":2,\"tid\":0,\"ts\":5000,"
                        "\"dur\":10,\"args\":{\"layers\":\"[0,2)\",\"step\":0,\"op\":-2}}";
    expect_refused(RUN("replay", write_ps_hand("op.json", &h)), "op", NULL);

    /* hosts and clock errors no run writes */
    static const struct {
        const char *hosts, *clock_error, *file, *must_name, *must_name_too;
    } bad[] = {
        {"{\"host\":\"a\"}", NULL, "hosts-obj.json", "hosts", "array"},
        {"[{\"host\":\"a\",\"processes\":3,\"cores\":\"two\"}]", NULL, "hosts-cores.json", "cores",
         NULL},
        /* more processes than the trace's ranks */
        {"[{\"host\":\"a\",\"processes\":9,\"cores\":2}]", NULL, "hosts-procs.json", "processes",
         NULL},
        {NULL, "-1e-6", "clock-neg.json", "clock_error_s", "-1e-06"},
        {NULL, "\"soon\"", "clock-str.json", "clock_error_s", NULL},
    };
    h.bad_server_span = NULL;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        h.hosts = bad[i].hosts;
        h.clock_error = bad[i].clock_error;
        expect_refused(RUN("replay", write_ps_hand(bad[i].file, &h)), bad[i].must_name,
                       bad[i].must_name_too);
    }
}

/* The trace of a real ps-sync run of 3 steps on `workers` workers ("1",
 * "2") and one server, into the test's directory as file. */
static const char *real_ps_sync_trace(const char *workers, const char *file)
{
    const char *trace = test_tmp_path(file);
    struct run r = RUN("real", "--strategy", "ps-sync", "--np", workers, "--devices", workers,
                       "--steps", "3", "--data", "synthetic", "--model", "mlp:784-16-10", "--trace",
                       trace);
    cr_assert_eq(r.status, 0, "strata real: %s", r.err);
    run_free(&r);
    return trace;
}

/* A real ps-sync run (2 workers, 1 server): its trace holds one update span
 * of the server a step and one receipt a push, and its host with the cores
 * it has. */
Test(replay_measured, real_ps_trace_holds_the_servers_updates_receipts_and_host)
{
    const char *trace = real_ps_sync_trace("2", "real-ps.json");
    cJSON *doc = read_json(trace);
    int n_updates = 0, n_bad = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(doc, "traceEvents"))
    {
        const cJSON *args = cJSON_GetObjectItem(ev, "args");
        const cJSON *op = args ? cJSON_GetObjectItem(args, "op") : NULL;
        if (!op || op->valuedouble != -1) continue;
        n_updates++;
        n_bad += num_at(ev, "pid", NULL) != 2 ||
                 (strcmp(str_at(ev, "name"), "UPDATE") && strcmp(str_at(ev, "name"), "PUSH")) ||
                 !(num_at(ev, "dur", NULL) >= 0);
    }
    cr_expect_eq(n_updates, 3 + 6, "one update a step of ps-sync, and 2 pushes received: %d",
                 n_updates);
    cr_expect_eq(n_bad, 0);
    const cJSON *hosts = cJSON_GetObjectItem(doc, "hosts");
    cr_assert(cJSON_IsArray(hosts) && cJSON_GetArraySize(hosts) == 1, "one host");
    const cJSON *host = cJSON_GetArrayItem(hosts, 0);
    cr_expect_eq(num_at(host, "processes", NULL), 3);
    cr_expect(num_at(host, "cores", NULL) >= 1);
    /* ten round trips on one machine, the shortest kept: microseconds (a
     * bound of 5 ms would take all ten descheduled) */
    double clock_error_s = num_at(doc, "clock_error_s", NULL);
    cr_log_info("real ps-sync np 2: clocks agree to within %.1f us", 1e6 * clock_error_s);
    cr_expect(clock_error_s >= 0 && clock_error_s < 5e-3, "clock_error_s %g", clock_error_s);
    cJSON_Delete(doc);
    cJSON *j = replay_ideal(trace);
    cr_expect_str_eq(str_at(j, "server_updates"), "measured");
    cr_expect(!cJSON_IsNull(cJSON_GetObjectItem(j, "oversubscribed")));
    cJSON_Delete(j);
    /* 2 workers and the server are 3 processes: on 2 cores the order the
     * kernel runs them in is not in the trace, and even with every message
     * as measured the replay ran -2% to -7% off on the idle machine and -48%
     * once under CI's parallel tests and ASan (docs/replay.md). It must
     * still replay. */
    j = replay_ideal_with(trace, "--measured-comm");
    double err = num_at(j, "error", NULL);
    cr_log_info("real ps-sync np 2 with --measured-comm: error %+.1f%%", 100 * err);
    cr_expect(isfinite(err), "--measured-comm replay error %g", err);
    cJSON_Delete(j);
}

Test(replay_measured, real_ps_trace_with_measured_comm_is_its_schedule)
{
    /* One worker and its server fit two cores: with every communication as
     * measured too, only the schedule is modelled, and the replay is close
     * to the run whatever the load: -0.5% on the idle machine, -0.1% with
     * three busy loops and another MPI job beside it. It was +52% once in
     * CI, when the ranks' zero was each one's clock on leaving the start
     * barrier: a worker descheduled there 1 ms made its pushes 1 ms longer
     * each in a 3 ms run (+37% to +64% with such a delay injected), which
     * real/clock_align.c's zero (tests/test_clock_align.c) does not. */
    const char *trace = real_ps_sync_trace("1", "ps1-trace.json");
    cJSON *j = replay_ideal_with(trace, "--measured-comm");
    double err = num_at(j, "error", NULL);
    bool is_oversubscribed = cJSON_IsTrue(cJSON_GetObjectItem(j, "oversubscribed"));
    cr_log_info("real ps-sync, 1 worker, with --measured-comm: error %+.1f%%%s", 100 * err,
                is_oversubscribed ? " (more processes than cores: not judged)" : "");
    if (!is_oversubscribed)
        cr_expect(fabs(err) < 0.25, "--measured-comm replay error %+.1f%%", 100 * err);
    cJSON_Delete(j);
}

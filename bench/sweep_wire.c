/* One sweep task's result as bytes, for the workers and ranks that ran it
 * to hand back (sweep_tasks.h). The report travels as the JSON the reports'
 * contract already defines, so every field of it travels, and
 * report_doc_parse reads it back. Bit for bit: cJSON prints a number with
 * 15 digits when that reads back within an epsilon, not exactly, so here
 * every number is printed with 17 (exact for any double; the CSV and the
 * speedups computed from the reports need the very bits). The table
 * figures the JSON leaves out (updates, the step lead: compare's notes read
 * them) travel in the message's head. The config's
 * options travel as config_format's text, which config_set reads back to
 * the same text. So a sweep assembled from messages prints and writes what
 * a run in one process does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sweep_tasks.h"

#define WIRE_MAGIC 0x32505753u   /* "SWP2" */

/* What comes first; then note_bytes of note (the fatal message when fatal
 * != 0), plan_note_bytes of the plan's note, then json_bytes of the report
 * document. */
struct wire_head {
    uint32_t magic;
    uint32_t head_bytes;       /* sizeof (struct wire_head): a stranger build's differs */
    int32_t task;
    int32_t rc;                /* the run's */
    int32_t fatal;             /* 0, or the code of the error that ended the worker at task */
    int32_t exceeds_memory;
    int64_t devices, batch;
    /* the report's table figures that its JSON leaves out (core/report.h) */
    int64_t updates, max_step_lead;
    int32_t has_step_lead, pad;
    uint64_t note_bytes, plan_note_bytes, json_bytes;
};

static int append(sweep_bytes *out, const void *p, size_t n, struct err *e)
{
    if (vec_reserve(out, out->len + n) < 0) return err_set(e, ERR_NOMEM, "out of memory");
    memcpy(out->items + out->len, p, n);
    out->len += n;
    return 0;
}

/* Every number under node printed exactly: turned into a raw "%.17g" in
 * place (its key stays; cJSON_Delete frees the text, made by cJSON's own
 * allocator). */
static bool exact_numbers(cJSON *node)
{
    for (cJSON *c = node->child; c; c = c->next) {
        if (cJSON_IsNumber(c)) {
            char text[40];
            int n = snprintf(text, sizeof text, "%.17g", c->valuedouble);
            char *raw = cJSON_malloc((size_t)n + 1);
            if (!raw) return false;
            memcpy(raw, text, (size_t)n + 1);
            c->type = cJSON_Raw;
            c->valuestring = raw;
        } else if (!exact_numbers(c)) {
            return false;
        }
    }
    return true;
}

int sweep_wire_put(sweep_bytes *out, int t, const struct sweep_run *r, const struct err *fatal,
                   struct err *e)
{
    bool is_fatal = fatal && fatal->code;
    const char *note = is_fatal ? fatal->msg : r->note;
    char *json = NULL;
    if (!is_fatal && r->report) {
        cJSON *doc = report_to_json(r->report);
        json = doc && exact_numbers(doc) ? cJSON_PrintUnformatted(doc) : NULL;
        cJSON_Delete(doc);
        if (!json) return err_set(e, ERR_NOMEM, "out of memory writing a sweep point's report");
    }
    struct wire_head h = {
        .magic = WIRE_MAGIC, .head_bytes = sizeof h, .task = t,
        .rc = is_fatal ? 0 : r->rc, .fatal = is_fatal ? fatal->code : 0,
        .exceeds_memory = !is_fatal && r->exceeds_memory,
        .devices = is_fatal ? 0 : r->devices, .batch = is_fatal ? 0 : r->batch,
        .updates = json ? r->report->updates : 0,
        .max_step_lead = json ? r->report->max_step_lead : 0,
        .has_step_lead = json && r->report->has_step_lead,
        .note_bytes = strlen(note), .plan_note_bytes = is_fatal ? 0 : strlen(r->plan_note),
        .json_bytes = json ? strlen(json) : 0,
    };
    int rc = append(out, &h, sizeof h, e);
    if (rc == 0) rc = append(out, note, h.note_bytes, e);
    if (rc == 0) rc = append(out, r->plan_note, h.plan_note_bytes, e);
    if (rc == 0 && json) rc = append(out, json, h.json_bytes, e);
    free(json);
    return rc;
}

static int check_head(const struct wire_head *h, struct err *e)
{
    if (h->magic != WIRE_MAGIC || h->head_bytes != sizeof *h)
        return err_set(e, ERR_RUN, "a sweep worker sent something else than a result (another "
                       "build of strata?)");
    if (h->note_bytes >= ERR_MSG_BYTES ||
        h->plan_note_bytes >= sizeof ((struct sweep_run *)0)->plan_note ||
        h->json_bytes > (uint64_t)1 << 40)
        return err_set(e, ERR_RUN, "a sweep worker's message is malformed (task %d: %llu bytes "
                       "of note, %llu of report)", (int)h->task,
                       (unsigned long long)h->note_bytes, (unsigned long long)h->json_bytes);
    return 0;
}

int sweep_wire_read(const char *buf, size_t n, sweep_wire_slot_fn slot, void *ctx, size_t *used,
                    int *t, struct err *fatal, struct err *e)
{
    struct wire_head h;
    if (n < sizeof h) return err_set(e, ERR_RUN, "a worker's message is cut short");
    memcpy(&h, buf, sizeof h);
    TRY(check_head(&h, e));
    struct sweep_run *r = slot(ctx, h.task);
    if (!r || h.note_bytes > n - sizeof h || h.plan_note_bytes > n - sizeof h - h.note_bytes ||
        h.json_bytes > n - sizeof h - h.note_bytes - h.plan_note_bytes)
        return err_set(e, ERR_RUN, "a worker's message is malformed (task %d)", (int)h.task);
    const char *note = buf + sizeof h, *plan_note = note + h.note_bytes,
               *json = plan_note + h.plan_note_bytes;
    *used = sizeof h + h.note_bytes + h.plan_note_bytes + h.json_bytes;
    *t = h.task;
    if (h.fatal) {
        fatal->code = h.fatal;
        snprintf(fatal->msg, sizeof fatal->msg, "%.*s", (int)h.note_bytes, note);
        return 0;
    }
    if (r->report || r->sim)
        return err_set(e, ERR_RUN, "task %d came back twice", (int)h.task);
    r->rc = h.rc;
    r->exceeds_memory = h.exceeds_memory;
    r->devices = h.devices;
    r->batch = h.batch;
    snprintf(r->note, sizeof r->note, "%.*s", (int)h.note_bytes, note);
    snprintf(r->plan_note, sizeof r->plan_note, "%.*s", (int)h.plan_note_bytes, plan_note);
    if (h.json_bytes) {
        TRY_CTX(e, report_doc_parse(json, h.json_bytes, "a worker's report", &r->real, e),
                "task %d", (int)h.task);
        struct report *rep = &r->real.reports[0];
        rep->updates = h.updates;
        rep->max_step_lead = h.max_step_lead;
        rep->has_step_lead = h.has_step_lead;
        r->report = rep;
    }
    return 0;
}

static struct sweep_run *sweep_slot(void *ctx, int t)
{
    struct sweep *s = ctx;
    return t >= 0 && t < sweep_n_tasks(s) ? sweep_task_slot(s, t) : NULL;
}

int sweep_wire_get(const char *buf, size_t n, struct sweep *s, size_t *used, int *t,
                   struct err *fatal, struct err *e)
{
    return sweep_wire_read(buf, n, sweep_slot, s, used, t, fatal, e);
}

/* A replay as JSON (replay.h, replay_write_json): the figures first, then
 * the three reports in the one report format. */
#include <math.h>

#include "../core/json_doc.h"
#include "replay.h"

#define REPLAY_JSON_VERSION 1

static cJSON *rank_json(const struct replay_rank *x, bool *ok)
{
    cJSON *o = cJSON_CreateObject();
    json_add(o, "rank", cJSON_CreateNumber(x->rank), ok);
    json_add(o, "measured_end_s", json_num(x->measured_end_s), ok);
    json_add(o, "replayed_end_s", json_num(x->replayed_end_s), ok);
    json_add(o, "error", json_num(x->replayed_end_s / x->measured_end_s - 1), ok);
    json_add(o, "measured_compute_s", json_num(x->measured_compute_s), ok);
    json_add(o, "replayed_compute_s", json_num(x->replayed_compute_s), ok);
    json_add(o, "straggler_share", json_num(x->straggler_share), ok);
    return o;
}

int replay_write_json(const struct replay_result *res, const char *trace_name, const char *path,
                      struct err *e)
{
    bool ok = true;
    cJSON *doc = cJSON_CreateObject();
    json_add(doc, "strata_replay", cJSON_CreateNumber(REPLAY_JSON_VERSION), &ok);
    json_add(doc, "trace", cJSON_CreateString(trace_name), &ok);
    json_add(doc, "mode", cJSON_CreateString(res->mode), &ok);
    json_add(doc, "strategy", cJSON_CreateString(res->cfg.strategy), &ok);
    json_add(doc, "devices", cJSON_CreateNumber((double)res->cfg.devices), &ok);
    json_add(doc, "steps", cJSON_CreateNumber((double)res->cfg.steps), &ok);
    json_add(doc, "network", cJSON_CreateString(res->home_cluster), &ok);
    json_add(doc, "measured_step_s", json_num(res->measured.step_time_s.mean), &ok);
    json_add(doc, "replayed_step_s", json_num(res->replayed.step_time_s.mean), &ok);
    json_add(doc, "error", json_num(res->error), &ok);
    json_add(doc, "communication",
             cJSON_CreateString(res->is_measured_comm ? "measured" : "model"), &ok);
    json_add(doc, "server_updates",
             cJSON_CreateString(res->has_server_updates ? "measured" : "model"), &ok);
    /* the most crowded host; null when the trace does not say */
    bool knows_host = res->cores > 0;
    json_add(doc, "processes", knows_host ? cJSON_CreateNumber(res->processes) : cJSON_CreateNull(), &ok);
    json_add(doc, "cores", knows_host ? cJSON_CreateNumber(res->cores) : cJSON_CreateNull(), &ok);
    json_add(doc, "oversubscribed",
             knows_host ? cJSON_CreateBool(res->is_oversubscribed) : cJSON_CreateNull(), &ok);
    json_add(doc, "clock_error_s",
             res->clock_error_s >= 0 ? json_num(res->clock_error_s) : cJSON_CreateNull(), &ok);
    cJSON *ranks = json_add(doc, "per_rank", cJSON_CreateArray(), &ok);
    for (int r = 0; ok && r < res->n_ranks; r++) json_add(ranks, NULL, rank_json(&res->ranks[r], &ok), &ok);
    if (res->has_whatif) {
        cJSON *w = json_add(doc, "whatif", cJSON_CreateObject(), &ok);
        json_add(w, "what", cJSON_CreateString(res->whatif_what), &ok);
        json_add(w, "strategy", cJSON_CreateString(res->whatif_cfg.strategy), &ok);
        json_add(w, "devices", cJSON_CreateNumber((double)res->whatif_cfg.devices), &ok);
        json_add(w, "batch", cJSON_CreateNumber((double)res->whatif_cfg.batch), &ok);
        json_add(w, "network", cJSON_CreateString(res->whatif_cfg.cluster), &ok);
        json_add(w, "step_s", json_num(res->whatif.step_time_s.mean), &ok);
        json_add(w, "change", json_num(res->whatif_change), &ok);
    } else {
        json_add(doc, "whatif", cJSON_CreateNull(), &ok);
    }
    json_add(doc, "measured", report_to_json(&res->measured), &ok);
    json_add(doc, "replayed", report_to_json(&res->replayed), &ok);
    json_add(doc, "whatif_report", res->has_whatif ? report_to_json(&res->whatif)
                                                   : cJSON_CreateNull(), &ok);
    if (!ok) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    return json_write_atomic(doc, path, e);
}

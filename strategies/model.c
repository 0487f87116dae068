/* model: naive model parallelism. Layers are cut into --devices stages
 * balanced by FLOPs and the whole batch flows through them as one
 * microbatch: forward down the stages, backward up, then each stage updates
 * its own layers. Only one stage computes at a time; the pipelines in
 * pipeline.c exist to fill that idle time. */
#include "families.h"
#include "stage.h"

/* Forward down the stages, backward up, each stage's update after its own
 * backward. */
static void schedule_model(struct plan *p, struct stages *st, int i)
{
    stage_forward(p, st, i, 0);
    int bwd = stage_backward(p, st, i, 0);
    stage_update(p, st, i, bwd);
}

int model_build(const struct strategy *s, const struct config *c, const struct workload *wl,
                struct plan **out, struct err *e)
{
    return stages_build(c, wl, s->name, "model parallelism", false, schedule_model, out, e);
}

void model_plan_size(const struct config *c, const struct workload *wl,
                     struct budget_plan *out)
{
    stages_plan_size(c, wl, false, 6, out);
}

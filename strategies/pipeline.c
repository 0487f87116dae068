/* Pipeline parallelism: the stages of model.c, with the batch cut into
 * --microbatches M so that stages work on different microbatches at once.
 * Both schedules leave the same bubble, (p-1)/(m+p-1) of the step with p
 * equal stages; they differ in how many activations a stage holds. */
#include "families.h"
#include "stage.h"

/* GPipe (Huang et al., 2019): every forward, then every backward in reverse
 * microbatch order; stage i holds the activations of all M microbatches at
 * the turn. */
static void schedule_gpipe(struct plan *p, struct stages *st, int i)
{
    const int m = st->n_microbatches;
    for (int mb = 0; mb < m; mb++) stage_forward(p, st, i, mb);
    int bwd = -1;
    for (int mb = m - 1; mb >= 0; mb--) bwd = stage_backward(p, st, i, mb);
    stage_update(p, st, i, bwd);
}

int pipeline_gpipe_build(const struct strategy *s, const struct config *c,
                         const struct workload *wl, struct plan **out, struct err *e)
{
    return stages_build(c, wl, s->name, "pipeline parallelism", true, schedule_gpipe,
                        out, e);
}

/* 1F1B, PipeDream-flush (Narayanan et al., 2021; Megatron-LM's schedule):
 * stage i runs warmup = min(p-1-i, M) forwards, then alternates one forward
 * and one backward, then drains the remaining backwards. Backwards go in
 * microbatch order, so 1F1B keeps at most p-i microbatches in flight on
 * stage i instead of M. Stage i+1 warms up with one forward fewer, so it
 * sends back the gradient of microbatch j before it needs the activation
 * that stage i sends just before waiting for that gradient: no cycle of
 * waits, for any p and M. */
static void schedule_1f1b(struct plan *p, struct stages *st, int i)
{
    const int m = st->n_microbatches;
    int warmup = st->n - 1 - i < m ? st->n - 1 - i : m;
    int next_fwd = 0, next_bwd = 0, bwd = -1;
    while (next_fwd < warmup) stage_forward(p, st, i, next_fwd++);
    while (next_fwd < m) {   /* steady state: one forward, one backward */
        stage_forward(p, st, i, next_fwd++);
        bwd = stage_backward(p, st, i, next_bwd++);
    }
    while (next_bwd < m) bwd = stage_backward(p, st, i, next_bwd++);   /* cooldown */
    stage_update(p, st, i, bwd);
}

int pipeline_1f1b_build(const struct strategy *s, const struct config *c, const struct workload *wl,
                        struct plan **out, struct err *e)
{
    return stages_build(c, wl, s->name, "pipeline parallelism", true, schedule_1f1b,
                        out, e);
}

/* gpipe and 1f1b: the same ops in another order */
void pipeline_plan_size(const struct config *c, const struct workload *wl,
                        struct budget_plan *out)
{
    stages_plan_size(c, wl, true, 6, out);
}

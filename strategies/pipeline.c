/* Pipeline parallelism: the stages of model.c, with the batch cut into
 * --microbatches M so that stages work on different microbatches at once.
 * Both schedules leave the same bubble, (p-1)/(m+p-1) of the step with p
 * equal stages; they differ in how many activations a stage holds. */
#include "families.h"
#include "partition.h"
#include "stage.h"

/* One stage has no bubble to fill: microbatches would only add per-op
 * overhead, and one device must run the same step under every strategy
 * (the baseline speedups are measured against). */
static int one_stage_is_one_step(int n_stages, int n_microbatches)
{
    return n_stages == 1 ? 1 : n_microbatches;
}

/* GPipe (Huang et al., 2019): every forward, then every backward in reverse
 * microbatch order; stage i holds the activations of all M microbatches at
 * the turn. */
static int build_gpipe(const struct config *c, const struct workload *wl, struct plan **out,
                       struct err *e)
{
    int n_devices, batch, m;
    TRY(partition_check_devices_batch(c, &n_devices, &batch, e));
    TRY(partition_check_microbatches(c, batch, &m, e));
    m = one_stage_is_one_step(n_devices, m);
    struct stages st;
    struct plan *p;
    TRY(stages_begin(c, wl, "pipeline-gpipe", "pipeline parallelism", m, &st, &p, e));
    for (int i = 0; i < st.n; i++) {
        for (int mb = 0; mb < m; mb++) stage_forward(p, &st, i, mb);
        int bwd = -1;
        for (int mb = m - 1; mb >= 0; mb--) bwd = stage_backward(p, &st, i, mb);
        stage_update(p, &st, i, bwd);
    }
    stages_release(&st);
    *out = p;
    return 0;
}

/* 1F1B, PipeDream-flush (Narayanan et al., 2021; Megatron-LM's schedule):
 * stage i runs warmup = min(p-1-i, M) forwards, then alternates one forward
 * and one backward, then drains the remaining backwards. Backwards go in
 * microbatch order, so 1F1B keeps at most p-i microbatches in flight on
 * stage i instead of M. The warmups shrink by one per stage, which is what
 * makes the SEND a stage waits for always come before its own RECV. */
static int build_1f1b(const struct config *c, const struct workload *wl, struct plan **out,
                      struct err *e)
{
    int n_devices, batch, m;
    TRY(partition_check_devices_batch(c, &n_devices, &batch, e));
    TRY(partition_check_microbatches(c, batch, &m, e));
    m = one_stage_is_one_step(n_devices, m);
    struct stages st;
    struct plan *p;
    TRY(stages_begin(c, wl, "pipeline-1f1b", "pipeline parallelism", m, &st, &p, e));
    for (int i = 0; i < st.n; i++) {
        int warmup = st.n - 1 - i < m ? st.n - 1 - i : m;
        int next_fwd = 0, next_bwd = 0, bwd = -1;
        while (next_fwd < warmup) stage_forward(p, &st, i, next_fwd++);
        while (next_fwd < m) {   /* steady state: one forward, one backward */
            stage_forward(p, &st, i, next_fwd++);
            bwd = stage_backward(p, &st, i, next_bwd++);
        }
        while (next_bwd < m) bwd = stage_backward(p, &st, i, next_bwd++);   /* cooldown */
        stage_update(p, &st, i, bwd);
    }
    stages_release(&st);
    *out = p;
    return 0;
}

const struct strategy strategy_pipeline_gpipe = {
    .name = "pipeline-gpipe",
    .summary = "pipeline: M microbatches, all forwards then all backwards (GPipe)",
    .options = "microbatches",
    .policy = POLICY_NONE,
    .build = build_gpipe,
};

const struct strategy strategy_pipeline_1f1b = {
    .name = "pipeline-1f1b",
    .summary = "pipeline: one forward, one backward (PipeDream-flush): same bubble, "
               "less activation memory",
    .options = "microbatches",
    .policy = POLICY_NONE,
    .build = build_1f1b,
};

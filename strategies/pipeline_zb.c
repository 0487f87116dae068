/* Zero-bubble pipeline, ZB-H1 (Qi et al., "Zero Bubble (Almost) Pipeline
 * Parallelism", ICLR 2024): the stages of pipeline.c with every backward
 * split in two, B (BACKWARD_INPUT: the input gradient, which the previous
 * stage waits for) and W (BACKWARD_WEIGHT: the weight gradients, which no
 * one waits for). B alone travels up the pipeline, so gradients come back
 * sooner, and the W's fill what would have been idle time.
 *
 * With F, B and W of equal length (the `ideal` cluster: one unit each),
 * 1F1B leaves (p-1)(F+B+W) idle and ZB-H1 (p-1)(F+B-W): a third of it, a
 * share (p-1)/(3m+p-1) of the step for m >= p microbatches. */
#include "families.h"
#include "partition.h"
#include "stage.h"

/* Stage i, microbatch mb: RECV the output gradient from stage i+1 (unless
 * last), B after it and after this mb's FORWARD, SEND the input gradient to
 * stage i-1 (unless first). st->fwd_op[mb] then holds the B: what the W of
 * mb waits for (its FORWARD has no other dependent left). */
static int zb_backward_input(struct plan *p, struct stages *st, int i, int mb)
{
    int lo = st->bounds[i], hi = st->bounds[i + 1];
    int n = partition_share(st->batch, st->n_microbatches, mb);
    int grad = i < st->n - 1 ? plan_recv(p, i, i + 1, TAG_GRAD, hi, mb, n, NO_DEPS) : -1;
    int b = plan_backward_input(p, i, lo, hi, mb, n, DEPS(grad, st->fwd_op[mb]));
    if (i > 0) plan_send(p, i, i - 1, TAG_GRAD, lo, mb, n, DEPS(b));
    st->fwd_op[mb] = b;
    return b;
}

/* Stage i's W of microbatch mb, after its B. */
static int zb_backward_weight(struct plan *p, struct stages *st, int i, int mb)
{
    int n = partition_share(st->batch, st->n_microbatches, mb);
    return plan_backward_weight(p, i, st->bounds[i], st->bounds[i + 1], mb, n,
                                DEPS(st->fwd_op[mb]));
}

/* ZB-H1: stage i runs 1F1B's forwards and B's in 1F1B's order (warm-up of
 * min(p-1-i, M) forwards, then one forward and one B, then the remaining
 * B's), and the W of microbatch j right after the B of microbatch j+i:
 * stage i owes at most i W's. The first stage owes none (after its warm-up
 * it runs B W F, B W F, ...); the later a stage, the more W's it puts off,
 * so its B's go up the pipeline sooner, and at the end the owed W's fill
 * the drain while the last microbatches' B's travel up: the step shrinks
 * to 3M + p - 1 units on `ideal` (the tests check it). Memory: stage i
 * holds at most min(p, M) microbatches' activations (a W frees them),
 * which is what 1F1B's first stage holds: the device peak is 1F1B's with
 * equal stages. Deadlock freedom is 1F1B's: the W's are local, and the
 * messages go in 1F1B's order. */
static void schedule_zb_h1(struct plan *p, struct stages *st, int i)
{
    const int m = st->n_microbatches, owed_most = i;
    if (st->n == 1) {
        /* One stage has no bubble to fill: the one-device step every
         * strategy runs, with its backward whole (the baseline). */
        stage_forward(p, st, i, 0);
        stage_update(p, st, i, stage_backward(p, st, i, 0));
        return;
    }
    int warmup = st->n - 1 - i < m ? st->n - 1 - i : m;
    int next_fwd = 0, next_b = 0, next_w = 0, last_w = -1;
    while (next_fwd < warmup) stage_forward(p, st, i, next_fwd++);
    while (next_b < m) {
        if (next_fwd < m) stage_forward(p, st, i, next_fwd++);   /* steady state */
        zb_backward_input(p, st, i, next_b++);
        if (next_b - next_w > owed_most) last_w = zb_backward_weight(p, st, i, next_w++);
    }
    while (next_w < m) last_w = zb_backward_weight(p, st, i, next_w++);   /* the owed W's */
    stage_update(p, st, i, last_w);
}

int pipeline_zb_build(const struct strategy *s, const struct config *c, const struct workload *wl,
                      struct plan **out, struct err *e)
{
    return stages_build(c, wl, s->name, "pipeline parallelism", true, schedule_zb_h1, out,
                        e);
}

/* 1F1B's ops with each backward split in two: 7 a microbatch */
void pipeline_zb_plan_size(const struct config *c, const struct workload *wl,
                           struct budget_plan *out)
{
    stages_plan_size(c, wl, true, 7, out);
}

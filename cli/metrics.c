/* `strata help metrics`: what each figure of a report means, once, in the
 * words of docs/metrics.md (the analysis in core/analysis.h computes them,
 * the same way for simulated and real runs). */
#include <stdio.h>

#include "commands.h"

static const char glossary[] =
    "strata's figures: one accounting for simulated and real runs (docs/metrics.md)\n"
    "\n"
    "job's work   --steps S is S global batches of --batch B samples. Synchronous\n"
    "             strategies run S steps on every worker. Asynchronous ones\n"
    "             (ps-async, ps-ssp) share S x N worker steps of B/N samples out\n"
    "             among the N workers as they become free: a fast worker runs more\n"
    "             (steps_per_worker in the report), a slow one fewer, and a worker\n"
    "             with nothing left to do is done, not idle.\n"
    "devices      the workers that compute; ps-* servers are extra ranks.\n"
    "job time T   from the start to when the last op of the job ended (the makespan).\n"
    "step time    mean = T / S for every strategy. p50 and p99 are nearest-rank\n"
    "             percentiles of the S job steps' durations: step s ends when the\n"
    "             last worker ends its step s (synchronous), or with the (s+1)N-th\n"
    "             worker step to end (asynchronous); the last one ends at T.\n"
    "samples/s    samples applied / T. Samples applied: the global batch of each\n"
    "             job step every worker completed, less pushes a server dropped\n"
    "             (backup); asynchronous: B/N for each complete worker step. A\n"
    "             dead rank's unfinished step counts nothing.\n"
    "speedup      samples/s over the baseline's: the same model, batch and cluster\n"
    "             on one device with no servers (mirrored on one rank), the\n"
    "             straggler model kept only for rank 0. ps-* on one device pays\n"
    "             for its server, so it is never faster than that.\n"
    "efficiency   speedup / devices (sweeps).\n"
    "compute      share of the workers' time their compute stream is busy.\n"
    "comm         share their communication is busy while compute is not\n"
    "             (communication hidden under compute is not counted).\n"
    "down         share after a rank died (--fail or --mtbf on an asynchronous\n"
    "             worker, --on-failure continue).\n"
    "idle         the rest: waiting for peers, servers, data, the pipeline; under\n"
    "             restart and shrink also the time lost and the checkpoints.\n"
    "             compute + comm + down + idle = 1, over each worker's time from\n"
    "             0 to T, less the time an asynchronous worker was done.\n"
    "bubble       pipeline and model ranks: 1 - compute / T, averaged; equal\n"
    "             stages on the ideal cluster give (p-1)/(m+p-1).\n"
    "staleness    per applied push: updates other workers made to the server\n"
    "             between the pull its gradient came from and its own update;\n"
    "             mean/max and the histogram. Versions, not steps: ps-ssp's\n"
    "             --staleness K bounds a worker's lead over the slowest in steps,\n"
    "             and with N workers a lead of L steps allows about (N-1)(L+1)\n"
    "             versions; a bound never reached leaves ps-ssp = ps-async.\n"
    "servers      parameter servers are ranks of their own (--servers) that\n"
    "             work through pushes in order: each costs an update of the shard,\n"
    "             a synchronous round the sum of its pushes'.\n"
    "peak mem     the largest per-device memory of the plan: parameters,\n"
    "             gradients, optimizer state and live activations.\n"
    "updates      (numerics) optimizer steps the model took: one a step\n"
    "             (synchronous), one per applied push (asynchronous: N times as\n"
    "             many, each of B/N samples).\n"
    "loss         (numerics) training loss of the last step; `-` when it became\n"
    "             NaN or infinite (the run diverged: a note says at which step).\n"
    "accuracy     (numerics) share of the test set classified right at the end.\n"
    "time to acc  (--target-accuracy) the run's time until the test accuracy\n"
    "             first reached the target.\n"
    "failures     (--fail, --mtbf) lost = detection + relaunch (and loading) +\n"
    "             redone work since the checkpoint or commit gone back to;\n"
    "             checkpoint_s: every rank stopped to write checkpoints (and\n"
    "             shrink's commits); goodput: the share of T spent on work that\n"
    "             survived, (T - lost - checkpoints) / T (continue: 1).\n";

int cmd_help_metrics(void)
{
    fputs(glossary, stdout);
    return 0;
}

/* The option table and everything derived from it: argv parsing, scenario
 * files, --help, validation. Adding an option is one row below plus its
 * field in struct config; nothing else changes. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "lines.h"
#include "vec.h"

/* Where a row's value lives. The _Generic fails to compile when the row's
 * type does not match its field (a string row on a long long, ...); string
 * fields are arrays, which decay to char *. */
#define FIELD(f, T)                                 \
    .offset = offsetof(struct config, f),           \
    .size = sizeof(((struct config *)0)->f) * _Generic(((struct config *)0)->f, T: 1)
#define INT(f, lo, hi) .type = OPT_INT, FIELD(f, long long), .min = (lo), .max = (hi)
#define REAL(f, lo, hi) .type = OPT_REAL, FIELD(f, double), .min = (lo), .max = (hi)
#define STRING(f) .type = OPT_STRING, FIELD(f, char *)
#define CHOICE(f, list) .type = OPT_CHOICE, FIELD(f, char *), .choices = (list)
#define FLAG(f) .type = OPT_FLAG, FIELD(f, bool)

/* ORDER: a row's index is its entry in config.is_set, and --help lists rows in
 * this order. */
const struct opt_spec config_options[] = {
    {.name = "strategy", STRING(strategy), .def = "mirrored", .groups = OPTG_STRATEGY,
     .metavar = "NAME", .help = "the strategy (strata --help lists them)"},
    {.name = "model", STRING(model), .def = "mlp:784-256-256-256-10", .groups = OPTG_SCENARIO,
     .metavar = "SPEC",
     .help = "model trained: mlp:IN-H1-...-OUT, transformer:layers=L,..., or a preset"},
    {.name = "devices", INT(devices, 1, 1048576), .def = "4", .groups = OPTG_SCENARIO,
     .metavar = "N", .help = "devices that compute"},
    {.name = "servers", INT(servers, 1, 65536), .def = "1", .groups = OPTG_SCENARIO,
     .metavar = "N", .help = "parameter-server ranks for ps-* strategies, extra to --devices"},
    {.name = "batch", INT(batch, 1, 16777216), .def = "256", .groups = OPTG_SCENARIO,
     .metavar = "N", .help = "global batch: samples per step over all devices"},
    {.name = "microbatches", INT(microbatches, 1, 1048575), .def = "4", .groups = OPTG_SCENARIO,
     .metavar = "M", .help = "microbatches per step (pipelines)"},
    {.name = "chunks", INT(chunks, 1, 2047), .def = "2", .groups = OPTG_SCENARIO,
     .metavar = "V",
     .help = "pipeline-interleaved: chunks of layers per device (device d holds chunks d, "
             "d+N, ...)"},
    {.name = "bucket-mb", REAL(bucket_mb, 0, 1048576), .def = "25", .groups = OPTG_SCENARIO,
     .metavar = "MB",
     .help = "mirrored: all-reduce bucket size in MiB, as PyTorch DDP; 0 = one all-reduce "
             "after the whole backward"},
    {.name = "staleness", INT(staleness, 0, 1000000), .def = "4", .groups = OPTG_SCENARIO,
     .metavar = "K",
     .help = "ps-ssp: a pull waits while its worker is more than K steps ahead of the slowest"},
    {.name = "backup-workers", INT(backup_workers, 0, 1048575), .def = "0",
     .groups = OPTG_SCENARIO, .metavar = "B",
     .help = "ps-sync: apply the first N-B pushes of a step, drop the last B"},
    {.name = "dp", INT(dp, 1, 1048576), .def = "1", .groups = OPTG_SCENARIO, .metavar = "D",
     .help = "model, pipeline-gpipe, pipeline-1f1b: D data-parallel replicas of the stages "
             "(devices = D x stages), each stage's gradients all-reduced among its D copies"},
    {.name = "inflight", INT(inflight, 1, 64), .def = "2", .groups = OPTG_SCENARIO,
     .metavar = "K",
     .help = "pipelined-steps: steps in flight per device; a step's gradients are applied "
             "K-1 steps later, their exchange overlapping those steps' compute (1 = mirrored)"},
    {.name = "steps", INT(steps, 1, 1000000000), .def = "20", .groups = OPTG_RUN,
     .metavar = "S", .help = "training steps, each a global batch: every worker runs S (ps-async, ps-ssp: S x workers steps of batch/workers, shared out as workers become free)"},
    {.name = "seed", INT(seed, 0, 4294967295LL), .def = "1", .groups = OPTG_RUN,
     .metavar = "N", .help = "seed of every random draw: the same seed gives the same run"},
    {.name = "max-memory", REAL(max_memory_gib, 0.001, 1048576), .def = "4", .groups = OPTG_LIMITS,
     .metavar = "GIB",
     .help = "refuse a run whose estimated memory (plan, steps, arithmetic, real ranks) is above "
             "GIB gibibytes"},
    {.name = "cluster", STRING(cluster), .def = "h100-nvlink-ib", .groups = OPTG_SIM,
     .metavar = "NAME|FILE",
     .help = "simulated hardware: a preset (ideal, h100-nvlink-ib, a100-pcie-eth, "
             "cpu-loopback) or a profile file"},
    {.name = "nodes", INT(nodes, 0, 1048576), .def = "0", .groups = OPTG_SIM, .metavar = "N",
     .help = "machines in the cluster; 0 = as many as the ranks need"},
    {.name = "devices-per-node", INT(devices_per_node, 0, 1024), .def = "0", .groups = OPTG_SIM,
     .metavar = "N", .help = "devices in one machine; 0 = the cluster profile's"},
    {.name = "allreduce", CHOICE(allreduce, "ring|tree|hierarchical"), .def = "ring",
     .groups = OPTG_SIM, .metavar = "ALGO", .help = "all-reduce algorithm of the network model"},
    {.name = "jitter", CHOICE(jitter, "auto|on|off"), .def = "auto", .groups = OPTG_SIM,
     .metavar = "WHEN",
     .help = "draw compute op times from the cluster profile's measured spread (jitter_*_sigma "
             "keys, strata calibrate); auto = on when the profile has them"},
    {.name = "straggler", STRING(straggler), .def = "none", .groups = OPTG_DISTURB,
     .metavar = "MODEL",
     .help = "slowdowns: none, exp:F, lognormal:SIGMA, slow:R=X[,R=X], pause:P:D"},
    {.name = "fail", STRING(fail), .def = "", .groups = OPTG_DISTURB, .metavar = "R@STEP",
     .help = "rank R dies as it starts step STEP (R@Ts: T seconds into the run), as a crashed "
             "process would"},
    {.name = "on-failure", CHOICE(on_failure, "auto|restart|shrink|continue"), .def = "auto",
     .groups = OPTG_DISTURB, .metavar = "POLICY",
     .help = "what the job does when a rank dies: restart every rank from the last checkpoint, "
             "shrink to the survivors from the last commit, or continue without it (parameter "
             "servers); auto = continue for ps-async and ps-ssp (two or more workers), restart "
             "otherwise"},
    {.name = "checkpoint-every", INT(checkpoint_every, 0, 1000000000), .def = "0",
     .groups = OPTG_DISTURB, .metavar = "STEPS",
     .help = "steps between checkpoints, the state a restart goes back to; 0 = never (a restart "
             "starts over)"},
    {.name = "commit-every", INT(commit_every, 1, 1000000000), .def = "1",
     .groups = OPTG_DISTURB, .metavar = "STEPS",
     .help = "--on-failure shrink: steps between in-memory commits the survivors go back to"},
    {.name = "mtbf", REAL(mtbf_hours, 0, 1e9), .def = "0", .groups = OPTG_SIM,
     .metavar = "HOURS",
     .help = "mean time between failures of one device, exponential, drawn from --seed; 0 = "
             "none"},
    {.name = "epochs", INT(epochs, 0, 1000000), .def = "0", .groups = OPTG_EXEC,
     .metavar = "E", .help = "passes over the training set (sets the steps); 0 = run --steps"},
    {.name = "lr", REAL(lr, 0, 1000), .def = "0.02", .groups = OPTG_TRAIN, .metavar = "RATE",
     .help = "SGD learning rate, applied to the mean gradient of the global batch"},
    {.name = "momentum", REAL(momentum, 0, 0.999999), .def = "0.9", .groups = OPTG_TRAIN,
     .metavar = "MU", .help = "SGD momentum (PyTorch's convention: v = mu v + g; w -= lr v)"},
    {.name = "weight-decay", REAL(weight_decay, 0, 1), .def = "0", .groups = OPTG_TRAIN,
     .metavar = "L2", .help = "L2 penalty added to the gradient, as torch.optim.SGD"},
    {.name = "eval-every", INT(eval_every, 0, 1000000000), .def = "0", .groups = OPTG_TRAIN,
     .metavar = "STEPS", .help = "steps between test-set evaluations (off the clock: a real run "
             "evaluates its points after training); 0 = once, at the end"},
    {.name = "data", STRING(data), .def = "fashion-mnist", .groups = OPTG_TRAIN,
     .metavar = "SET",
     .help = "training data: fashion-mnist, synthetic, or a directory of MNIST-format IDX files"},
    {.name = "device", STRING(device), .def = "cpu", .groups = OPTG_EXEC, .metavar = "NAME",
     .help = "where the arithmetic runs: cpu (oneDNN or OpenBLAS, one thread per rank) or cuda "
             "(GPU builds)"},
    {.name = "comm", CHOICE(comm, "auto|mpi|nccl"), .def = "auto", .groups = OPTG_EXEC,
     .metavar = "LIB",
     .help = "real runs' communication: mpi, nccl (GPU builds); auto = nccl with cuda, else mpi"},
    {.name = "tf32", FLAG(tf32), .def = "false", .groups = OPTG_EXEC,
     .help = "cuda device: TF32 tensor-core matrix products (faster, ~1e-3 relative error)"},
    {.name = "save-params", STRING(save_params), .def = "", .groups = OPTG_EXEC,
     .metavar = "FILE", .help = "write the trained parameters to FILE (float32, see real/params.h)"},
    {.name = "numerics", FLAG(numerics), .def = "false", .groups = OPTG_SIM,
     .help = "simulate with the real arithmetic: loss, accuracy and staleness's effect on them"},
    {.name = "target-accuracy", REAL(target_accuracy, 0, 1), .def = "0", .groups = OPTG_TRAIN,
     .metavar = "A", .help = "report the time to reach test accuracy A (time_to_accuracy_s); 0 = none"},
    {.name = "mode", CHOICE(mode, "sim|real"), .def = "sim", .groups = OPTG_COMPARE,
     .metavar = "MODE", .help = "simulate the strategies, or run them for real under MPI"},
    {.name = "np", INT(np, 0, 65536), .def = "0", .groups = OPTG_LAUNCH, .metavar = "N",
     .help = "real runs: MPI processes that compute (servers are extra); 0 = --devices"},
    {.name = "bind", CHOICE(bind, "auto|core|none"), .def = "auto", .groups = OPTG_LAUNCH,
     .metavar = "HOW",
     .help = "real runs: pin each rank to a core (Open MPI's --bind-to core); auto = core when "
             "the ranks fit the cores, else none"},
    {.name = "hostfile", STRING(hostfile), .def = "", .groups = OPTG_LAUNCH, .metavar = "FILE",
     .help = "real runs: the hosts the relaunch puts its ranks on (mpirun --hostfile FILE: a "
             "host a line, slots=N); \"\" = this machine. tools/two-hosts makes two on one"},
    {.name = "supervisor-address", STRING(supervisor_address), .def = "", .groups = OPTG_LAUNCH,
     .metavar = "ADDR",
     .help = "real runs with --hostfile: the address of this host the ranks send their "
             "heartbeats to; \"\" = what this host's name resolves to"},
    {.name = "checkpoint-dir", STRING(checkpoint_dir), .def = "", .groups = OPTG_LAUNCH,
     .metavar = "DIR",
     .help = "real runs: where --checkpoint-every writes checkpoints; \"\" = --resume's DIR "
             "when given, else a temporary directory removed at the end"},
    {.name = "resume", STRING(resume), .def = "", .groups = OPTG_LAUNCH, .metavar = "DIR",
     .help = "real runs: continue from the newest whole checkpoint in DIR (the report's curves "
             "go on from the run that wrote it)"},
    {.name = "timeout", REAL(timeout_s, 0, 1e6), .def = "0", .groups = OPTG_LAUNCH,
     .metavar = "S", .def_shown = "max(10 s, 20 x the median step time seen)",
     .help = "real runs: a rank that shows no progress for S seconds is taken as failed; "
             "one still starting (MPI, data, checkpoint) gets at least 60 s"},
    {.name = "plot", STRING(plot_dir), .def = "", .groups = OPTG_PLOT, .metavar = "DIR",
     .help = "write PNG and SVG plots (and their data and gnuplot scripts) into DIR"},
    {.name = "plot-terminal", FLAG(plot_terminal), .def = "false", .groups = OPTG_PLOT,
     .help = "draw the plots in the terminal (gnuplot's dumb terminal)"},
    {.name = "vary", STRING(vary), .def = "", .groups = OPTG_SWEEP, .metavar = "OPT=V1,V2,...",
     .help = "the option a sweep varies and its values (--devices 1,2,4 is --vary devices=1,2,4)"},
    {.name = "scaling", CHOICE(scaling, "strong|weak"), .def = "strong", .groups = OPTG_SWEEP,
     .metavar = "KIND",
     .help = "strong: the global batch stays; weak: it grows with the devices (per-device batch stays)"},
    {.name = "jobs", .short_name = 'j', INT(jobs, 1, 1024), .def = "1",
     .def_shown = "one per online core", .groups = OPTG_JOBS, .metavar = "N",
     .help = "simulated sweeps and compares: runs in N processes at once, same output as one; "
             "real ones run a job at a time, under mpirun each sweep rank runs one point at a "
             "time, and a compare keeping spans (--trace, --timeline, --plot, --html) runs in one"},
    {.name = "output", .short_name = 'o', STRING(output), .def = "", .groups = OPTG_CALIBRATE,
     .metavar = "FILE", .help = "write the measured cluster profile to FILE (--cluster FILE loads it)"},
    {.name = "models", STRING(models), .def = "", .groups = OPTG_VALIDATE, .metavar = "SPEC,...",
     .help = "validate: the models of the matrix, a comma list of --model specs; none given = --model"},
    {.name = "np-list", STRING(np_list), .def = "", .groups = OPTG_VALIDATE, .metavar = "N,...",
     .help = "validate: the rank counts of the matrix (--np 2,4 is --np-list 2,4); none given = --np"},
    {.name = "stragglers", STRING(stragglers), .def = "", .groups = OPTG_VALIDATE,
     .metavar = "MODEL,...",
     .help = "validate: the straggler models of the matrix, e.g. none,slow:1=2,exp:0.5; none "
             "given = --straggler"},
    {.name = "repeat", INT(repeat, 1, 1000), .def = "1", .groups = OPTG_VALIDATE, .metavar = "R",
     .help = "validate: measured runs of each cell and strategy; their median step is kept"},
    {.name = "strategies", STRING(strategies), .def = "all", .groups = OPTG_COMPARE,
     .metavar = "LIST", .help = "strategies to compare: all, or a comma list"},
    {.name = "json", STRING(json_path), .def = "", .groups = OPTG_OUTPUT, .metavar = "FILE",
     .help = "write the result as JSON to FILE"},
    {.name = "csv", STRING(csv_path), .def = "", .groups = OPTG_OUTPUT, .metavar = "FILE",
     .help = "write one CSV row per result to FILE"},
    {.name = "trace", STRING(trace_path), .def = "", .groups = OPTG_OUTPUT, .metavar = "FILE",
     .help = "write the trace in Chrome trace-event format (Perfetto opens it)"},
    {.name = "html", STRING(html_path), .def = "", .groups = OPTG_HTML, .metavar = "FILE",
     .help = "write one self-contained HTML page: scenario, table, notes, plots, timelines, JSON"},
    {.name = "timeline", FLAG(timeline), .def = "false", .groups = OPTG_OUTPUT,
     .help = "print an ASCII Gantt chart of the first steps"},
    {.name = "timeline-steps", STRING(timeline_steps), .def = "", .groups = OPTG_OUTPUT,
     .metavar = "A:B", .help = "the timelines drawn (--timeline, --plot, --html) show steps A "
     "to B, counted from 0 (none: the first 2)"},
    {.name = "explain", FLAG(explain), .def = "false", .groups = OPTG_SCHEDULE,
     .help = "schedule: first say what each op kind of the plan, and its server policy, mean"},
    {.name = "without-stragglers", FLAG(without_stragglers), .def = "false",
     .groups = OPTG_REPLAY,
     .help = "replay: every op at its typical time (median over ranks); each rank's cost"},
    {.name = "measured-comm", FLAG(measured_comm), .def = "false", .groups = OPTG_REPLAY,
     .help = "replay: communication as long as it took in the trace too, so the error is the "
     "schedule's alone"},
    {.name = "scale", INT(scale_devices, 0, 1048576), .def = "0", .groups = OPTG_REPLAY,
     .metavar = "N", .help = "replay: the run at N devices from its measured per-op times "
     "(weak scaling; 0 = not scaled)"},
    /* Chakra execution traces (core/chakra.h, docs/chakra.md) */
    {.name = "chakra", STRING(chakra_dir), .def = "", .groups = OPTG_SCHEDULE, .metavar = "DIR",
     .help = "schedule: also write each rank's program as a Chakra trace DIR/STRATEGY.RANK.et"},
    {.name = "workload", STRING(workload), .def = "", .groups = OPTG_TRACE_IN,
     .metavar = "chakra:DIR",
     .help = "simulate the plan of the Chakra traces NAME.RANK.et in DIR instead of building "
             "--strategy's; strata's own traces bring their scenario options"},
};
const size_t config_n_options = sizeof config_options / sizeof config_options[0];

_Static_assert(sizeof config_options / sizeof config_options[0] <= CONFIG_MAX_OPTIONS,
               "config.is_set has one entry per option: raise CONFIG_MAX_OPTIONS");

/* ---- values ---------------------------------------------------------- */

/* %.15g: integral values print whole ("1048576", where %g gives
 * "1.04858e+06") and every value typed with up to 15 digits reads back. */
static void format_real(double x, char *buf, size_t n)
{
    snprintf(buf, n, "%.15g", x);
}

/* "1 to 1048576" */
static void format_range(const struct opt_spec *o, char *buf, size_t n)
{
    char lo[32], hi[32];
    format_real(o->min, lo, sizeof lo);
    format_real(o->max, hi, sizeof hi);
    snprintf(buf, n, "%s to %s", lo, hi);
}

/* "a, b, c" from "a|b|c" */
static void format_choices(const struct opt_spec *o, char *buf, size_t n)
{
    size_t at = 0;
    for (const char *p = o->choices; *p && at + 1 < n; p++) {
        if (*p == '|') {
            if (at + 2 >= n) break;
            buf[at++] = ',';
            buf[at++] = ' ';
        } else {
            buf[at++] = *p;
        }
    }
    buf[at] = '\0';
}

/* What a missing value should have been: "an integer from 1 to 1048576". */
static void describe_allowed(const struct opt_spec *o, char *buf, size_t n)
{
    char what[512];
    switch (o->type) {
    case OPT_INT:
        format_range(o, what, sizeof what);
        snprintf(buf, n, "an integer from %s", what);
        break;
    case OPT_REAL:
        format_range(o, what, sizeof what);
        snprintf(buf, n, "a number from %s", what);
        break;
    case OPT_CHOICE:
        format_choices(o, what, sizeof what);
        snprintf(buf, n, "one of %s", what);
        break;
    case OPT_FLAG:
        snprintf(buf, n, "true or false");
        break;
    case OPT_STRING:
        snprintf(buf, n, "%s", o->metavar ? o->metavar : "text");
        break;
    }
}

static bool is_choice(const char *choices, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = choices;; p++) {
        const char *end = strchr(p, '|');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, word, n)) return true;
        if (!end) return false;
        p = end;
    }
}

/* "..." after the first 60 characters of a value quoted in a message. */
static const char *more(const char *text)
{
    return strlen(text) > 60 ? "..." : "";
}

static int set_string(char *field, const struct opt_spec *o, const char *text, struct err *e)
{
    size_t n = strlen(text);
    if (n >= o->size)
        return err_set(e, ERR_INPUT, "--%s: '%.40s...' is too long (at most %zu characters)",
                       o->name, text, o->size - 1);
    memcpy(field, text, n + 1);
    return 0;
}

/* Parses text as option o's value and stores it in c. The checks are the
 * same for defaults, argv and files. */
static int set_value(struct config *c, const struct opt_spec *o, const char *text,
                     struct err *e)
{
    char *field = (char *)c + o->offset;
    char allowed[512];
    switch (o->type) {
    case OPT_INT: {
        format_range(o, allowed, sizeof allowed);
        /* strtoll alone would take " 8", "0x8" is refused by base 10 but
         * leading blanks are not: insist on a sign or a digit first. */
        char *end;
        errno = 0;
        long long v = strtoll(text, &end, 10);
        bool starts_ok = isdigit((unsigned char)text[0]) ||
                         ((text[0] == '-' || text[0] == '+') && isdigit((unsigned char)text[1]));
        if (!starts_ok || *end)
            return err_set(e, ERR_INPUT, "--%s: '%.60s%s' is not an integer (%s)", o->name,
                           text, more(text), allowed);
        if (errno == ERANGE || v < o->min || v > o->max)
            return err_set(e, ERR_INPUT, "--%s: %.60s%s is not allowed (%s)", o->name, text,
                           more(text), allowed);
        memcpy(field, &v, sizeof v);
        return 0;
    }
    case OPT_REAL: {
        format_range(o, allowed, sizeof allowed);
        /* Plain decimal only: strtod would also take "nan", "inf", hex
         * floats and leading blanks. */
        char *end;
        errno = 0;
        double v = strtod(text, &end);
        if (!*text || strspn(text, "0123456789+-.eE") != strlen(text) || *end)
            return err_set(e, ERR_INPUT, "--%s: '%.60s%s' is not a number (%s)", o->name,
                           text, more(text), allowed);
        if (!isfinite(v) || v < o->min || v > o->max)  /* !isfinite: 1e999 overflowed */
            return err_set(e, ERR_INPUT, "--%s: %.60s%s is not allowed (%s)", o->name, text,
                           more(text), allowed);
        /* 1e-400 underflows to 0, which several options read as "none" or
         * "auto" (--lr 0 trains nothing, --timeout 0 is the default) */
        if (errno == ERANGE && v == 0)
            return err_set(e, ERR_INPUT, "--%s: %.60s%s is too small to tell from 0 (the "
                           "smallest number is about 1e-308; write 0 if 0 is meant; %s)",
                           o->name, text, more(text), allowed);
        memcpy(field, &v, sizeof v);
        return 0;
    }
    case OPT_CHOICE:
        if (!is_choice(o->choices, text)) {
            format_choices(o, allowed, sizeof allowed);
            return err_set(e, ERR_INPUT, "--%s: '%.60s%s' is not one of %s", o->name, text,
                           more(text), allowed);
        }
        return set_string(field, o, text, e);
    case OPT_STRING:
        return set_string(field, o, text, e);
    case OPT_FLAG: {
        bool v;
        if (!strcmp(text, "true"))
            v = true;
        else if (!strcmp(text, "false"))
            v = false;
        else
            return err_set(e, ERR_INPUT, "--%s: '%.60s%s' is not true or false", o->name, text,
                           more(text));
        memcpy(field, &v, sizeof v);
        return 0;
    }
    }
    return err_set(e, ERR_RUN, "--%s: option of unknown type %d", o->name, (int)o->type);
}

void config_format(const struct config *c, const struct opt_spec *o, char *buf, size_t n)
{
    const char *field = (const char *)c + o->offset;
    switch (o->type) {
    case OPT_INT: {
        long long v;
        memcpy(&v, field, sizeof v);
        snprintf(buf, n, "%lld", v);
        return;
    }
    case OPT_REAL: {
        double v;
        memcpy(&v, field, sizeof v);
        format_real(v, buf, n);
        return;
    }
    case OPT_STRING:
    case OPT_CHOICE:
        snprintf(buf, n, "%s", field);
        return;
    case OPT_FLAG: {
        bool v;
        memcpy(&v, field, sizeof v);
        snprintf(buf, n, "%s", v ? "true" : "false");
        return;
    }
    }
    snprintf(buf, n, "?");
}

/* ---- names ----------------------------------------------------------- */

/* The row called name[0..len), or NULL. O(options): a few dozen rows. */
static const struct opt_spec *find_n(const char *name, size_t len)
{
    for (size_t i = 0; i < config_n_options; i++)
        if (strlen(config_options[i].name) == len && !strncmp(config_options[i].name, name, len))
            return &config_options[i];
    return NULL;
}

const struct opt_spec *config_find(const char *name)
{
    return find_n(name, strlen(name));
}

static size_t index_of(const struct opt_spec *o)
{
    return (size_t)(o - config_options);
}

/* Optimal string alignment distance: edits, with swapping two neighbours as
 * one edit, so "devcies" is one away from "devices". Names are short; longer
 * input is not worth comparing. */
static size_t edit_distance(const char *a, size_t na, const char *b)
{
    enum { MAXN = 40 };
    size_t nb = strlen(b);
    if (na > MAXN || nb > MAXN) return (size_t)-1;
    size_t d[MAXN + 1][MAXN + 1];
    for (size_t i = 0; i <= na; i++) d[i][0] = i;
    for (size_t j = 0; j <= nb; j++) d[0][j] = j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

/* "--devcies: unknown option (did you mean --devices?)": the closest name
 * of the command's options, when at most 2 edits and at most half the
 * typed name away; otherwise "(see --help)". `shown` is the word as typed.
 * --file and --help are argv's alone (is_argv): a scenario file's `title
 * = x` was told "did you mean --file?", a key no file may hold. */
static int unknown_option(const char *shown, const char *name, size_t len, unsigned groups,
                          bool is_argv, struct err *e)
{
    static const char *const builtin[] = {"file", "help"};
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < config_n_options + (is_argv ? 2 : 0); i++) {
        bool is_row = i < config_n_options;
        if (is_row && !(config_options[i].groups & groups)) continue;
        const char *cand = is_row ? config_options[i].name : builtin[i - config_n_options];
        size_t d = edit_distance(name, len, cand);
        if (d < best_d) best_d = d, best = cand;
    }
    if (best && best_d <= 2 && best_d <= len / 2)
        return err_set(e, ERR_INPUT, "%s: unknown option (did you mean --%s?)", shown, best);
    /* strata's own --version comes before any command (cli/main.c) */
    if (edit_distance(name, len, "version") <= 2 && len >= 5)
        return err_set(e, ERR_INPUT, "%s: unknown option (`strata --version` prints strata's "
                       "version; see --help for this command's options)", shown);
    return err_set(e, ERR_INPUT, "%s: unknown option (see --help)", shown);
}

/* Who reads an option another command was given: the likely mix-ups,
 * a simulation's options on a real run and the other way round. */
static const char *readers_of(const struct opt_spec *o)
{
    if (o->groups & (OPTG_EXEC | OPTG_LAUNCH))
        return "only real runs read it: strata real, validate, or compare and sweep with "
               "--mode real";
    if (o->groups & OPTG_SIM)
        return "only simulations read it: strata sim, validate, or compare and sweep";
    return "see --help";
}

/* The row called name[0..len) if the command takes it; otherwise an error. */
static int lookup(const char *shown, const char *name, size_t len, unsigned groups,
                  bool is_argv, const struct opt_spec **out, struct err *e)
{
    const struct opt_spec *o = find_n(name, len);
    if (!o) return unknown_option(shown, name, len, groups, is_argv, e);
    if (!(o->groups & groups))
        return err_set(e, ERR_INPUT, "--%s: not an option of this command (%s)", o->name,
                       readers_of(o));
    *out = o;
    return 0;
}

int config_set(struct config *c, const char *name, const char *value, unsigned groups,
               struct err *e)
{
    char shown[96];
    snprintf(shown, sizeof shown, "--%s", name);
    const struct opt_spec *o = NULL;
    TRY(lookup(shown, name, strlen(name), groups, false, &o, e));
    TRY(set_value(c, o, value, e));
    c->is_set[index_of(o)] = true;
    return 0;
}

/* ---- init ------------------------------------------------------------ */

void config_init(struct config *c)
{
    memset(c, 0, sizeof *c);
    /* Defaults go through the parser users meet; tests/test_config.c checks
     * that each one parses, so the error here cannot happen. */
    for (size_t i = 0; i < config_n_options; i++)
        set_value(c, &config_options[i], config_options[i].def, NULL);
}

void config_release(struct config *c)
{
    free(c->positional);
    c->positional = NULL;
    c->n_positional = 0;
    c->first_after_dashes = 0;
}

/* ---- scenario files -------------------------------------------------- */

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* Cuts line at a '#' that is outside "double quotes". */
static void cut_comment(char *line)
{
    bool quoted = false;
    for (char *p = line; *p; p++) {
        if (*p == '"') quoted = !quoted;
        if (*p == '#' && !quoted) {
            *p = '\0';
            return;
        }
    }
}

/* One `key = value` line (comment already cut, trimmed, not empty), line
 * number lineno; line_of[i] is the line that set config_options[i] (0 none):
 * a key set twice is refused, as cluster profiles refuse it, rather than the
 * last line silently winning over the one a reader saw first. */
static int load_line(struct config *c, char *line, long lineno, long *line_of, unsigned groups,
                     struct err *e)
{
    char *eq = strchr(line, '=');
    char *key = line;
    if (eq) *eq = '\0';
    key = trim(key);
    if (!eq || !*key) {
        if (eq) *eq = '=';
        return err_set(e, ERR_INPUT, "expected 'key = value', got '%.80s%s'", line,
                       strlen(line) > 80 ? "..." : "");
    }
    char *value = trim(eq + 1);
    if (!*value)
        return err_set(e, ERR_INPUT, "%s: no value (write '%s = VALUE' or leave the line out)",
                       key, key);
    if (*value == '"') {
        size_t n = strlen(value);
        if (n < 2 || value[n - 1] != '"')
            return err_set(e, ERR_INPUT, "%s: the quoted value has no closing '\"'", key);
        value[n - 1] = '\0';
        value++;
    }
    /* A scenario file describes a scenario, and several commands read it:
     * `strategy = ...` shapes `strata sim` but not `strata compare`. A key of
     * an option the command does not take is checked (a typo is still an
     * error) and then left out. */
    /* `--devices = 2` or `-j = 2`: the option's name without its dashes is
     * the key (an unknown one goes on to be called unknown, once dashed). */
    if (key[0] == '-') {
        char *bare = key + strspn(key, "-");
        const struct opt_spec *named = config_find(bare);
        for (size_t k = 0; !named && key[1] != '-' && bare[0] && !bare[1] &&
                           k < config_n_options; k++)
            if (config_options[k].short_name == bare[0]) named = &config_options[k];
        if (named)
            return err_set(e, ERR_INPUT, "%s: a scenario file's keys have no dashes: write "
                           "'%s = %.80s'", key, named->name, value);
        key = bare;
    }
    const struct opt_spec *o = config_find(key);
    if (!o && (!strcmp(key, "file") || !strcmp(key, "help")))   /* -f and -h: argv's alone */
        return err_set(e, ERR_INPUT, "%s: not a key of a scenario file (-f and --help are "
                       "the command line's)", key);
    if (o && line_of[index_of(o)])
        return err_set(e, ERR_INPUT, "%s: set twice (first on line %ld); a scenario file sets "
                       "each option once", key, line_of[index_of(o)]);
    if (o) line_of[index_of(o)] = lineno;
    char beside[CONFIG_PATH_BYTES];
    const char *meant = config_value_beside(c->scenario_path, key, value, beside, sizeof beside);
    if (o && !(o->groups & groups)) {
        struct config scratch = *c;
        return config_set(&scratch, key, meant, o->groups, e);
    }
    return config_set(c, key, meant, groups, e);
}

const char *config_value_beside(const char *file_path, const char *key, const char *value,
                                char *buf, size_t n)
{
    size_t len = strlen(value);
    const char *slash = strrchr(file_path, '/');
    if (strcmp(key, "cluster") || strchr(value, '/') || len < 8 ||
        strcmp(value + len - 8, ".profile") || !slash)   /* no slash: the file is here */
        return value;
    snprintf(buf, n, "%.*s/%s", (int)(slash - file_path), file_path, value);
    return buf;
}

int config_load_file(struct config *c, const char *path, unsigned groups, struct err *e)
{
    if (strlen(path) >= sizeof c->scenario_path)
        return err_set(e, ERR_INPUT, "scenario file '%.60s...': path longer than %zu bytes",
                       path, sizeof c->scenario_path - 1);
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(e, ERR_INPUT, "scenario file '%s': cannot open: %s", path,
                       strerror(errno));
    if (lines_is_directory(f)) {
        fclose(f);
        return err_set(e, ERR_INPUT, "scenario file '%s': a directory, not a file of `key = "
                       "value` lines", path);
    }
    snprintf(c->scenario_path, sizeof c->scenario_path, "%s", path);
    /* Bounded lines: /dev/zero or a binary file is an error naming the
     * line, not a read without end. */
    struct lines *r = malloc(sizeof *r);
    if (!r) {
        fclose(f);
        return err_set(e, ERR_NOMEM, "scenario file '%s': out of memory", path);
    }
    lines_open(r, f);
    long line_of[CONFIG_MAX_OPTIONS] = {0};
    char *line;
    int rc;
    while ((rc = lines_next(r, &line, e)) > 0) {
        cut_comment(line);
        char *s = trim(line);
        if (!*s) continue;
        if ((rc = load_line(c, s, r->lineno, line_of, groups, e)) < 0) break;
    }
    if (rc < 0) err_prefix(e, "%s:%ld", path, r->lineno);
    for (size_t i = 0; rc >= 0 && i < config_n_options; i++)
        if (line_of[i]) c->file_line[i] = line_of[i];
    free(r);
    fclose(f);
    return rc < 0 ? rc : 0;
}

/* ---- argv ------------------------------------------------------------ */

struct assignment {
    const struct opt_spec *o;
    const char *value;  /* borrowed from argv */
};
typedef VEC(struct assignment) assignment_vec;
typedef VEC(char *) word_vec;

/* A word that is an option rather than a value: "--x", "-f", but not "-"
 * and not a negative number ("--staleness -1" is a value, out of range). */
static bool looks_like_option(const char *w)
{
    if (w[0] != '-' || !w[1]) return false;
    return !(isdigit((unsigned char)w[1]) || w[1] == '.');
}

/* The value of option word argv[*i]: the text after its '=' (eq), else the
 * next word, which *i then moves past. `shown` is the option as typed, o its
 * row (NULL for -f). */
static int take_value(int argc, char **argv, int *i, const char *eq, const char *shown,
                      const struct opt_spec *o, const char **value, struct err *e)
{
    if (eq) {
        *value = eq + 1;
        return 0;
    }
    if (*i + 1 >= argc || looks_like_option(argv[*i + 1])) {
        char allowed[600];
        if (o)
            describe_allowed(o, allowed, sizeof allowed);
        else
            snprintf(allowed, sizeof allowed, "a scenario file");
        return err_set(e, ERR_INPUT, "%s: needs a value (%s)", shown, allowed);
    }
    *value = argv[++*i];
    return 0;
}

/* -f's path into *file. A second, other file is refused: the first was
 * dropped without a word, and a file is many options, not one value that
 * a later one overrides (the same file twice says one thing). */
static int set_file(const char **file, const char *path, struct err *e)
{
    if (*file && strcmp(*file, path))
        return err_set(e, ERR_INPUT, "-f: two scenario files ('%.60s%s', then '%.60s%s'); a "
                       "command reads one (put the lines of both in one file)", *file,
                       more(*file), path, more(path));
    *file = path;
    return 0;
}

static bool is_help(const char *w)
{
    return !strcmp(w, "-h") || !strcmp(w, "--help");
}

/* Reads argv into assignments, the scenario file and positionals, checking
 * names and the presence of values; values are checked when applied. */
static int scan_args(int argc, char **argv, unsigned groups, assignment_vec *set,
                     const char **file, word_vec *positional, size_t *first_after_dashes,
                     struct err *e)
{
    bool options_ended = false;
    for (int i = 0; i < argc; i++) {
        char *w = argv[i];
        if (options_ended || !looks_like_option(w)) {
            if (vec_push(positional, w) < 0) return err_set(e, ERR_NOMEM, "out of memory");
            continue;
        }
        if (!strcmp(w, "--")) {
            options_ended = true;
            *first_after_dashes = positional->len;
            continue;
        }
        /* Single dash: -f, -h and the options' one-letter aliases. As getopt
         * does, a value may be attached (-j2, -fFILE) or the next word. */
        if (w[1] != '-') {
            const char *attached = w[2] ? w + 2 : NULL;
            char shown[3] = {'-', w[1], '\0'};
            if (w[1] == 'f') {
                const char *path = attached;
                if (!path) TRY(take_value(argc, argv, &i, NULL, "-f", NULL, &path, e));
                TRY(set_file(file, path, e));
                continue;
            }
            const struct opt_spec *o = NULL;
            for (size_t k = 0; k < config_n_options && !o; k++)
                if (config_options[k].short_name == w[1] && (config_options[k].groups & groups))
                    o = &config_options[k];
            for (size_t k = 0; k < config_n_options && !o; k++)
                if (config_options[k].short_name == w[1])
                    return err_set(e, ERR_INPUT, "%s (--%s): not an option of this command "
                                   "(see --help)", shown, config_options[k].name);
            if (!o) return unknown_option(w, w + 1, strlen(w + 1), groups, true, e);
            struct assignment a = {o, "true"};
            if (o->type == OPT_FLAG) {
                if (attached)
                    return err_set(e, ERR_INPUT, "%s: takes no value ('%s' given)", shown,
                                   attached);
            } else if (attached) {
                a.value = attached;
            } else {
                TRY(take_value(argc, argv, &i, NULL, shown, o, &a.value, e));
            }
            if (vec_push(set, a) < 0) return err_set(e, ERR_NOMEM, "out of memory");
            continue;
        }
        const char *name = w + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        char shown[96];
        snprintf(shown, sizeof shown, "--%.*s", (int)(len < 80 ? len : 80), name);
        if (len == 4 && !strncmp(name, "file", 4)) {
            const char *path;
            TRY(take_value(argc, argv, &i, eq, "--file", NULL, &path, e));
            TRY(set_file(file, path, e));
            continue;
        }
        const struct opt_spec *o = NULL;
        TRY(lookup(shown, name, len, groups, true, &o, e));
        struct assignment a = {o, "true"};
        if (o->type == OPT_FLAG) {
            if (eq) return err_set(e, ERR_INPUT, "--%s: takes no value", o->name);
        } else {
            TRY(take_value(argc, argv, &i, eq, shown, o, &a.value, e));
        }
        if (vec_push(set, a) < 0) return err_set(e, ERR_NOMEM, "out of memory");
    }
    return 0;
}

int config_parse_args(struct config *c, int argc, char **argv, unsigned groups, struct err *e)
{
    /* --help wins over anything else on the line, including mistakes. A
     * value never starts with '-' (see looks_like_option), so no value can
     * be mistaken for it. */
    for (int i = 0; i < argc && strcmp(argv[i], "--"); i++)
        if (is_help(argv[i])) return CONFIG_HELP;

    assignment_vec set = {0};
    word_vec positional = {0};
    const char *file = NULL;
    size_t first_after_dashes = (size_t)-1;
    int rc = scan_args(argc, argv, groups, &set, &file, &positional, &first_after_dashes, e);
    /* The file first, then the command line over it, whatever the order. */
    if (rc == 0 && file) rc = config_load_file(c, file, groups, e);
    for (size_t i = 0; rc == 0 && i < set.len; i++) {
        rc = set_value(c, set.items[i].o, set.items[i].value, e);
        if (rc == 0) c->is_set[index_of(set.items[i].o)] = true;
        if (rc == 0) c->file_line[index_of(set.items[i].o)] = 0;   /* argv wins over the file */
    }
    vec_free(&set);
    if (rc < 0) {
        vec_free(&positional);
        return rc;
    }
    free(c->positional);
    c->positional = positional.items;
    c->n_positional = (int)positional.len;
    c->first_after_dashes =
        (int)(first_after_dashes < positional.len ? first_after_dashes : positional.len);
    return 0;
}

/* ---- help ------------------------------------------------------------ */

/* "--devices N", "-o, --output FILE" */
static int format_head(const struct opt_spec *o, char *buf, size_t n)
{
    char alias[8] = "";
    if (o->short_name) snprintf(alias, sizeof alias, "-%c, ", o->short_name);
    return snprintf(buf, n, "%s--%s%s%s", alias, o->name, o->metavar ? " " : "",
                    o->metavar ? o->metavar : "");
}

static void print_entry(FILE *out, int width, const char *head, const char *help,
                        const char *tail)
{
    fprintf(out, "  %-*s  %s%s\n", width, head, help, tail);
}

void config_print_help(FILE *out, unsigned groups)
{
    config_print_help_without(out, groups, NULL, NULL);
}

static bool is_listed(const char *name, const char *const *list)
{
    for (size_t i = 0; list && list[i]; i++)
        if (!strcmp(list[i], name)) return true;
    return false;
}

/* The default `defaults` (name, text pairs) gives option name, or NULL. */
static const char *default_given(const char *name, const char *const *defaults)
{
    for (size_t i = 0; defaults && defaults[i] && defaults[i + 1]; i += 2)
        if (!strcmp(defaults[i], name)) return defaults[i + 1];
    return NULL;
}

void config_print_help_without(FILE *out, unsigned groups, const char *const *refused,
                               const char *const *defaults)
{
    /* One column for every command: the width of the longest head of the
     * whole table, so all commands' help lines align alike. */
    char head[128], tail[700], allowed[600];
    int width = (int)strlen("-f, --file FILE");
    for (size_t i = 0; i < config_n_options; i++) {
        int n = format_head(&config_options[i], head, sizeof head);
        if (n > width) width = n;
    }
    for (size_t i = 0; i < config_n_options; i++) {
        const struct opt_spec *o = &config_options[i];
        if (!(o->groups & groups) || is_listed(o->name, refused)) continue;
        format_head(o, head, sizeof head);
        const char *given = default_given(o->name, defaults);
        if (given) {
            snprintf(tail, sizeof tail, " (%s)", given);
            print_entry(out, width, head, o->help, tail);
            continue;
        }
        switch (o->type) {
        case OPT_INT:
        case OPT_REAL:
            format_range(o, allowed, sizeof allowed);
            snprintf(tail, sizeof tail, " (default %s; %s)", o->def_shown ? o->def_shown : o->def,
                     allowed);
            break;
        case OPT_CHOICE:
            format_choices(o, allowed, sizeof allowed);
            snprintf(tail, sizeof tail, " (default %s; one of %s)", o->def, allowed);
            break;
        case OPT_STRING:
            if (*o->def)
                snprintf(tail, sizeof tail, " (default %s)", o->def);
            else
                snprintf(tail, sizeof tail, " (default: none)");
            break;
        case OPT_FLAG:
            snprintf(tail, sizeof tail, " (default %s)", o->def);
            break;
        }
        print_entry(out, width, head, o->help, tail);
    }
    print_entry(out, width, "-f, --file FILE", "read options from a scenario file (key = value "
                "lines); options given here win over it", "");
    print_entry(out, width, "-h, --help", "show this help", "");
}

/* The option a message is about: its first "--NAME" that starts the
 * message or follows a context's ": ", and is followed by ':' or a space
 * (how option errors read: "--steps: ...", "--fail 'x': ...", "--on-failure
 * shrink: ..."), and that the scenario file set; NULL if none. */
static const struct opt_spec *option_of_message(const struct config *c, const char *msg)
{
    for (const char *p = strstr(msg, "--"); p; p = strstr(p + 2, "--")) {
        if (p != msg && (p - msg < 2 || p[-2] != ':' || p[-1] != ' ')) continue;
        size_t len = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
        const char *after = p + 2 + len;
        if (!len || !(*after == ':' || *after == ' ')) continue;
        char name[64];
        if (len >= sizeof name) continue;
        memcpy(name, p + 2, len);
        name[len] = '\0';
        const struct opt_spec *o = config_find(name);
        return o && c->file_line[index_of(o)] ? o : NULL;
    }
    return NULL;
}

int config_err_locate(const struct config *c, struct err *e)
{
    /* Only bad input is the file's fault; a message that already names
     * the file (config_load_file's own) is left as it is. */
    if (!e || e->code != ERR_INPUT || !c->scenario_path[0] || strstr(e->msg, c->scenario_path))
        return e ? e->code : ERR_OK;
    const struct opt_spec *o = option_of_message(c, e->msg);
    if (o) err_prefix(e, "%s:%ld", c->scenario_path, c->file_line[index_of(o)]);
    return e->code;
}

void config_mark_file_line(struct config *c, const char *name, const char *path, long lineno)
{
    const struct opt_spec *o = config_find(name);
    if (!o || strlen(path) >= sizeof c->scenario_path) return;
    snprintf(c->scenario_path, sizeof c->scenario_path, "%s", path);
    c->file_line[index_of(o)] = lineno;
}

bool config_is_set(const struct config *c, const char *name)
{
    const struct opt_spec *o = config_find(name);
    return o && c->is_set[index_of(o)];
}

static char *dup_text(const char *text)
{
    size_t n = strlen(text) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, text, n);
    return d;
}

int config_to_args(const struct config *c, unsigned groups, char ***out, int *n, struct err *e)
{
    *out = NULL;
    *n = 0;
    char **args = XCALLOC(e, 2 * config_n_options + 1, sizeof *args);
    if (!args) return ERR_NOMEM;
    int k = 0;
    for (size_t i = 0; i < config_n_options; i++) {
        const struct opt_spec *o = &config_options[i];
        if (!(o->groups & groups) || !c->is_set[i]) continue;
        char value[CONFIG_PATH_BYTES], name[80];
        config_format(c, o, value, sizeof value);
        if (o->type == OPT_FLAG && strcmp(value, "true")) continue;
        snprintf(name, sizeof name, "--%s", o->name);
        if (!(args[k++] = dup_text(name)) ||
            (o->type != OPT_FLAG && !(args[k++] = dup_text(value)))) {
            config_args_free(args);
            return err_set(e, ERR_NOMEM, "out of memory");
        }
    }
    *out = args;
    *n = k;
    return 0;
}

void config_args_free(char **args)
{
    for (size_t i = 0; args && args[i]; i++) free(args[i]);
    free(args);
}

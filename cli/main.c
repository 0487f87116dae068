/* strata: compare distributed-training strategies.
 * `strata` alone runs `strata compare` on the built-in default scenario. */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../bench/run_numerics.h"
#include "../core/config.h"
#include "../core/workload.h"
#include "../nn/data.h"
#include "../sim/cluster.h"
#include "../strategies/strategy.h"
#include "commands.h"

/* The option groups of the commands that run every strategy of --strategies
 * on one scenario, simulated or for real (compare, sweep, validate). */
#define STRATEGIES_GROUPS                                                                   \
    (OPTG_SCENARIO | OPTG_COMPARE | OPTG_RUN | OPTG_SIM | OPTG_DISTURB | OPTG_TRAIN |        \
     OPTG_EXEC | OPTG_LAUNCH | OPTG_OUTPUT | OPTG_PLOT | OPTG_LIMITS | OPTG_HTML)

/* The commands that keep no trained model (compare, sweep and validate run
 * several, calibrate times one): their groups hold --save-params, which
 * they listed, took and ignored; scenario_load refuses it, and their help
 * leaves it out. */
#define KEEPS_NO_MODEL                                                                        \
    {(const char *const[]){"save-params", NULL},                                              \
     "this command keeps no trained model; `strata real --strategy S --save-params FILE` saves " \
     "one run's parameters"}
const struct refusal keeps_no_model_refused[] = {KEEPS_NO_MODEL, {NULL, NULL}};

/* sweep and validate run many scenarios and draw no one run's spans (their
 * --plot and --html draw speedup, or predicted against measured). Their
 * groups hold --trace, --timeline and --timeline-steps, which --help
 * listed, and which were refused only once given: --timeline-steps with
 * --plot or --html was even taken and ignored. */
#define SHOWS_NO_ONE_RUN                                                                      \
    {(const char *const[]){"trace", "timeline", "timeline-steps", NULL},                      \
     "this command runs many scenarios and shows no one run's spans; `strata sim --strategy S` " \
     "(or strata real) with --trace, --timeline and --timeline-steps shows one"}
static const struct refusal sweep_refused[] = {KEEPS_NO_MODEL, SHOWS_NO_ONE_RUN, {NULL, NULL}};
static const struct refusal validate_refused[] = {
    KEEPS_NO_MODEL,
    SHOWS_NO_ONE_RUN,
    {(const char *const[]){"mode", NULL}, "validate runs every strategy both ways; leave it out"},
    {(const char *const[]){"csv", NULL}, "validate writes --json only"},
    {NULL, NULL},
};

static const struct command commands[] = {
    {"compare", "several strategies on one scenario, simulated or real: one table (the default)",
     "Simulates every strategy (or --strategies) on one scenario and prints one row each:\n"
     "step time, throughput, speedup over the same scenario on one device, where the time\n"
     "goes (compute, exposed communication, idle), pipeline bubble, gradient staleness and\n"
     "memory per device. --json, --csv and --trace write files; --timeline draws each run.\n"
     "--mode real runs each strategy for real instead (one MPI job each, --np ranks, the\n"
     "training options of `strata real`) and prints the same table, measured.\n"
     "--plot DIR draws convergence, staleness and (simulated) each strategy's timeline as\n"
     "PNG and SVG files with gnuplot; --plot-terminal draws them here. --html FILE writes\n"
     "one self-contained page: the table, its notes, those figures and the JSON.\n"
     "A simulated compare runs its strategies in -j N processes (one per core by default)\n"
     "while it simulates the baseline: the output is -j 1's, byte for byte. With --trace,\n"
     "--timeline, --plot or --html it runs in one process. --trace t.json writes a trace\n"
     "a strategy, its name before the extension (t.mirrored.json), whenever more than one\n"
     "was asked for, even if only one fitted the scenario and ran.",
     STRATEGIES_GROUPS | OPTG_JOBS, cmd_compare, keeps_no_model_refused, NULL},
    {"sim", "one strategy, simulated: its report, staleness, failures, timeline",
     "Simulates one strategy on a cluster (--cluster, --nodes, --devices-per-node,\n"
     "--allreduce) with stragglers (--straggler) and a failure (--fail) for --steps steps,\n"
     "and prints its report. --json writes the report, --trace the Chrome trace-event\n"
     "file (Perfetto opens it), --timeline an ASCII chart of the first steps, --html a\n"
     "page with the timeline drawn (sim has no --plot: `strata compare --strategies NAME\n"
     "--plot DIR` draws it as PNG and SVG; `strata plot` the --json's convergence).\n"
     "--workload chakra:DIR simulates the Chakra traces in DIR (strata schedule --chakra\n"
     "writes them; so do PyTorch's execution traces through chakra_converter).",
     OPTG_SCENARIO | OPTG_STRATEGY | OPTG_RUN | OPTG_SIM | OPTG_DISTURB | OPTG_TRAIN |
         OPTG_OUTPUT | OPTG_LIMITS | OPTG_HTML | OPTG_TRACE_IN,
     cmd_sim, NULL, NULL},
    {"real", "one strategy, executed on CPU ranks under MPI: measured report, loss, accuracy",
     "Trains --model on --data with one strategy for real: one MPI process per device\n"
     "(--np N; parameter servers are extra ranks), real gradients, real messages. Outside\n"
     "an MPI job it relaunches itself under mpirun; `mpirun -np N strata real ...` uses the\n"
     "ranks it is given. Prints the same report as `strata sim`, measured, with the loss\n"
     "curve and the test accuracy; --straggler delays real compute ops as the simulator\n"
     "would. --save-params writes the trained parameters.",
     OPTG_SCENARIO | OPTG_STRATEGY | OPTG_RUN | OPTG_TRAIN | OPTG_EXEC | OPTG_LAUNCH |
         OPTG_DISTURB |
         OPTG_OUTPUT | OPTG_LIMITS | OPTG_HTML,
     cmd_real, NULL, NULL},
    {"sweep", "vary the devices (or another option): speedup and scaling efficiency",
     "Runs every strategy (or --strategies) at every value of one option and prints a\n"
     "block per strategy: step time, throughput, speedup and scaling efficiency.\n"
     "--devices 1,2,4,8 (the same as --vary devices=1,2,4,8) sweeps the devices, with\n"
     "speedup over one device; --scaling weak grows the batch with them (batch = --batch x\n"
     "devices / the first value). --vary OPTION=V1,V2,... varies another option (batch,\n"
     "microbatches, bucket-mb, staleness, servers, straggler=exp:0.1,exp:0.5, ...), with\n"
     "speedup over its first value. A point a strategy does not fit is a '-'. Simulated by\n"
     "default; --mode real runs each point as an MPI job. --csv and --json write the points,\n"
     "--plot DIR and --plot-terminal the speedup figure. A simulated sweep runs its points\n"
     "in -j N processes (one per core by default), and under `mpirun -np R strata sweep`\n"
     "over the ranks, rank 0 printing: the output is -j 1's, byte for byte.",
     STRATEGIES_GROUPS | OPTG_SWEEP | OPTG_JOBS, cmd_sweep, sweep_refused, NULL},
    {"schedule", "a strategy's plan per rank, its checker's verdict and its unit-cost timeline",
     "Prints the program every rank runs for one training step (one op a line: index,\n"
     "stream, op, layers, microbatch, peer or group, bytes, deps), the checker's verdict,\n"
     "and a timeline at unit cost (forward one unit per layer, backward two, communication\n"
     "free), strata's EXPLAIN. --explain first says what each op kind of the plan and its\n"
     "server policy mean; --json FILE writes the plan as JSON; --chakra DIR writes it as\n"
     "Chakra execution traces, DIR/STRATEGY.RANK.et, for ASTRA-sim or `strata sim --workload`.",
     OPTG_SCENARIO | OPTG_STRATEGY | OPTG_OUTPUT | OPTG_SCHEDULE | OPTG_LIMITS, cmd_schedule,
     schedule_refused, NULL},
    {"replay", "a run's trace replayed in the simulator: replay error, and what-ifs on it",
     "strata replay TRACE.json [what-if options] [--json FILE] [--plot DIR] [--html FILE]\n"
     "\n"
     "Replays TRACE (written by `strata real --trace` or `strata sim --trace`: a Chrome\n"
     "trace-event file that also holds the run's scenario and each span's op index, step,\n"
     "microbatch, start and measured duration; docs/trace-format.md) in the simulator: the\n"
     "same plan, each compute op of each rank and step as long as it took in the trace\n"
     "(with any delay its rank took before starting it), communication from the network\n"
     "model. Prints replayed against measured step time and\n"
     "the error, per rank too: the schedule's and the network's error, compute's left out.\n"
     "The network: a simulated trace's own --cluster; a real trace's, --cluster (best a\n"
     "profile of the machine it ran on: `strata calibrate -o local.profile`), else\n"
     "cpu-loopback.\n"
     "\n"
     "What-if questions, each a flag, combinable, answered as a second replay:\n"
     "  --without-stragglers  every op at its typical time: the lower median of the same op\n"
     "                        in the same step over the ranks that run it (of one rank's op,\n"
     "                        over the steps); and per rank the share of the job's time its\n"
     "                        slowness cost (the replay with it alone made typical)\n"
     "  --cluster NAME|FILE   (a simulated trace) the same compute on another network\n"
     "  --strategy NAME       the measured seconds per FLOP of each layer, replanned under\n"
     "                        another strategy (same model, batch, devices)\n"
     "  --scale N             at N devices, the global batch grown with them (weak scaling),\n"
     "                        each op drawn from the run's measured per-layer rates (--seed)\n"
     "\n"
     "--measured-comm gives communication its measured times too (each message, push,\n"
     "pull and collective as long as it took), so the error is the schedule's alone and the\n"
     "network model's is the difference to the replay without it.\n"
     "\n"
     "--seed N seeds --scale's draws; --json FILE writes the replay (the measured,\n"
     "replayed and what-if reports); --plot DIR draws the measured and replayed timelines\n"
     "and the step times as bars; --html FILE puts them on one page. A trace of a run with\n"
     "failures is refused. Exit status 2 for a malformed trace or a refused what-if.",
     OPTG_STRATEGY | OPTG_RUN | OPTG_SIM | OPTG_OUTPUT | OPTG_PLOT | OPTG_HTML | OPTG_REPLAY,
     cmd_replay, replay_refused,
     (const char *const[]){"strategy", "default: the trace's own; another is a what-if",
                           "cluster", "default: a simulated trace's own; a real trace's, "
                                      "cpu-loopback", NULL}},
    {"plot", "figures of saved reports: convergence, staleness, speedup, validation",
     "strata plot REPORT.json... [--plot DIR] [--plot-terminal]\n"
     "Reads reports saved with --json (by sim, real, compare, sweep, validate or replay)\n"
     "and draws with gnuplot: loss and test accuracy against time and step, a line per\n"
     "run; the staleness of the applied gradients; a devices sweep's speedup and\n"
     "efficiency (another option's: sweep --plot); a validation's predicted against\n"
     "measured step times; a replay's measured, replayed and what-if step times. Each\n"
     "figure is NAME.png and NAME.svg in DIR (default plots/), beside NAME.dat and the\n"
     "script NAME.gp that draws it again. Without gnuplot (Debian: gnuplot-nox) the data\n"
     "and scripts are still written. --html FILE puts the reports' table, the figures\n"
     "and the documents in one page (and alone, no plots/).",
     OPTG_PLOT | OPTG_HTML, cmd_plot, NULL, NULL},
    {"validate", "a matrix of models, ranks and stragglers: every strategy simulated and run",
     "Runs each strategy (--strategies) in each cell of a matrix, --models x --np LIST x\n"
     "--stragglers (each defaults to its single option), twice: for real (--repeat R MPI\n"
     "jobs, the median step kept) and in the simulator on the --cluster profile (`strata\n"
     "calibrate -o FILE` measures one). Prints per cell and strategy the predicted and\n"
     "measured step time (each report's median step), the error = predicted / measured - 1,\n"
     "both compute/comm/idle shares and, for ps-async and ps-ssp, the total-variation\n"
     "distance of the staleness histograms; then the median and p90 |error|, the straggler\n"
     "inflation error (needs 'none' in --stragglers), the mean Kendall tau-b of the\n"
     "strategies' ranking, the largest staleness TVD, and the machine's load before and\n"
     "after. --json writes { \"strata_validate\": 2, \"load\", \"cells\": [{..., \"rows\"}],\n"
     "\"summary\" } with both reports of each row; --plot DIR draws predicted against measured.",
     STRATEGIES_GROUPS | OPTG_VALIDATE, cmd_validate, validate_refused,
     (const char *const[]){"cluster", "required: a profile of this machine, from strata "
                                      "calibrate -o FILE", NULL}},
    {"calibrate", "measure this machine into a cluster profile for the simulator",
     "Measures this machine for the simulator, on 2 MPI ranks (it relaunches itself under\n"
     "mpirun; `mpirun -np N strata calibrate` uses the ranks it is given): the device's\n"
     "FLOP/s on a training step of the --model (an mlp:) as the executor runs it, inputs\n"
     "from --data, at the per-device batch (--batch / --np, else / 2), every rank at once,\n"
     "and each layer alone; memory bandwidth on the model's update; the cost of a tiny op;\n"
     "ping-pong and all-reduce times from 8 B to 32 MiB with nccl-tests' algbw and busbw,\n"
     "the link latency (alpha) and bandwidth (beta) fitted to the ping-pong, and the\n"
     "all-reduce's per-byte reduction (gamma) to the all-reduce; the cores the ranks share.\n"
     "Prints the profile; -o FILE writes it (nothing is written without -o).",
     OPTG_SCENARIO | OPTG_RUN | OPTG_TRAIN | OPTG_EXEC | OPTG_LAUNCH | OPTG_CALIBRATE,
     cmd_calibrate, keeps_no_model_refused, NULL},
    {"lab", "the course: one lab per tradeoff, its claim tested on a run (--check)",
     "Without NAME, lists the labs of labs/ in course order, one line each. With NAME (the\n"
     "file's name, its number, its name without the number, or a path to a .lab file),\n"
     "prints the lab's claim and a question to answer before reading on, runs its scenarios\n"
     "(simulated, in seconds; --mode real where the lab has a real version), prints each\n"
     "scenario's table and the command that reproduces it, explains the result with this\n"
     "run's numbers, and checks the claim. --check prints only the claim and its checks:\n"
     "exit 0 when this run shows the claim, 1 when not, 2 for a malformed lab. --labs DIR\n"
     "reads labs from DIR (default: ./labs, else the source tree's). labs/README.md says how\n"
     "to write one.",
     0, cmd_lab, NULL, NULL},
};
static const size_t n_commands = sizeof commands / sizeof commands[0];

static void print_list(FILE *out)
{
    fputs("\nstrategies (--strategy, --strategies):\n", out);
    for (size_t i = 0; i < strategy_count; i++)
        fprintf(out, "  %-16s %s\n", strategy_registry[i].name, strategy_registry[i].summary);
    fputs("\nmodels (--model): mlp:IN-H1-...-OUT, transformer:layers=L,hidden=H,seq=S,vocab=V"
          "[,heads=A], or a preset:\n", out);
    for (size_t i = 0; i < workload_n_presets; i++)
        fprintf(out, "  %-16s %-56s %s\n", workload_presets[i].name, workload_presets[i].spec,
                workload_presets[i].summary);
}

void command_print_help(const struct command *c, FILE *out)
{
    fprintf(out, "usage: strata %s [options] [-f SCENARIO_FILE]\n\n%s\n\noptions:\n", c->name,
            c->about);
    /* every refusal's options, in one NULL-terminated list */
    const char *refused[CONFIG_MAX_OPTIONS + 1];
    size_t n = 0;
    for (const struct refusal *r = c->refused; r && r->options; r++)
        for (size_t i = 0; r->options[i] && n < CONFIG_MAX_OPTIONS; i++) refused[n++] = r->options[i];
    refused[n] = NULL;
    config_print_help_without(out, c->groups, refused, c->defaults);
    print_list(out);
}

int command_refuse_options(const struct command *c, const struct config *cfg, struct err *e)
{
    for (const struct refusal *r = c->refused; r && r->options; r++)
        for (size_t i = 0; r->options[i]; i++)
            if (config_is_set(cfg, r->options[i]))
                return err_set(e, ERR_INPUT, "--%s: %s (see strata %s --help)", r->options[i],
                               r->why, c->name);
    return 0;
}

static void print_main_help(FILE *out)
{
    fputs("usage: strata [COMMAND] [options]\n\n"
          "strata compares distributed deep-learning training strategies: each strategy\n"
          "compiles a training step into a plan of operations per rank, which strata checks,\n"
          "shows and simulates (stragglers, networks, gradient staleness). With no command,\n"
          "strata runs `compare` on a built-in default scenario.\n\ncommands:\n", out);
    for (size_t i = 0; i < n_commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n`strata help metrics` defines every figure of the tables and reports; `strata help\n"
          "cluster` the keys of a cluster profile file and the network model; `strata help\n"
          "COMMAND` is `strata COMMAND --help`.\n"
          "`strata --version` (or `strata version`) prints strata's version.\n", out);
    fputs("\n`strata COMMAND --help` lists a command's options. Every option:\n", out);
    config_print_help(out, ~0u);
    print_list(out);
    fputs("\nExit status: 0 success; 1 a run failed (a rank died, a disk failed, out of memory);"
          "\n2 bad input or a refused scenario; 130, 143 interrupted by SIGINT, SIGTERM\n"
          "(README, \"Exit codes and output files\").\n", out);
}

/* `strata --version`, `strata version`: project(VERSION) of CMakeLists.txt. */
static int print_version(int argc, char **argv)
{
    if (argc > 2) {
        fprintf(stderr, "strata %s: takes no arguments ('%s' given)\n", argv[1], argv[2]);
        return 2;
    }
    printf("strata %s\n", STRATA_VERSION);
    return 0;
}

/* `strata help cluster`: what --cluster FILE reads, and how the network
 * model uses it. The keys come from sim/cluster.c's table, which also reads
 * and writes the files, so the list cannot drift from what loads. */
static int help_cluster(void)
{
    fputs("A cluster profile (--cluster FILE) describes simulated hardware: `key = value`\n"
          "lines, '#' starts a comment. Copy a preset's (`strata calibrate -o FILE` writes\n"
          "one for this machine; labs/*.profile are examples) and edit it. Ranks fill nodes\n"
          "in rank order, devices_per_node a node (parameter servers are ranks after the\n"
          "workers); --nodes and --devices-per-node override the layout.\n\n"
          "Links (alpha latency, beta bandwidth each way): every rank has its own link inside\n"
          "its node and its own to other nodes. All-reduce of n bytes over p ranks on k\n"
          "nodes, g a node (--allreduce; ring and tree at the inter link's figures once\n"
          "the group spans nodes; reduce-scatter and all-gather are half a ring):\n"
          "  ring          2(p-1) (alpha + n/(p beta))\n"
          "  tree          2 ceil(log2 p) (alpha + n/beta)\n"
          "  hierarchical  2(g-1) (alpha_intra + n/(g beta_intra))\n"
          "                + 2(k-1) (alpha_inter + n/(g k beta_inter))\n"
          "A push crosses its server's inbound link, a pull its outbound one, each shared by\n"
          "every transfer on it; a worker's pushes to several servers (--servers) move at\n"
          "once, its pulls one after another.\n\n",
          stdout);
    cluster_print_keys(stdout);
    return 0;
}

/* `strata help [TOPIC]` (argv[1] is "help"): the general help; the glossary
 * of metrics; a cluster profile's keys; or a command's own --help. Any
 * other topic is bad input. */
static int help(int argc, char **argv)
{
    if (argc < 3) {
        print_main_help(stdout);
        return 0;
    }
    if (argc > 3) {
        fprintf(stderr, "strata help: one topic at a time ('%s' after '%s'); see strata --help\n",
                argv[3], argv[2]);
        return 2;
    }
    if (!strcmp(argv[2], "metrics")) return cmd_help_metrics();
    if (!strcmp(argv[2], "cluster")) return help_cluster();
    for (size_t i = 0; i < n_commands; i++)
        if (!strcmp(argv[2], commands[i].name)) {
            char flag[] = "--help";
            char *help_argv[] = {flag, NULL};
            return commands[i].run(&commands[i], 1, help_argv);
        }
    fprintf(stderr, "strata help: '%s' is not a help topic (topics: metrics, cluster", argv[2]);
    for (size_t i = 0; i < n_commands; i++) fprintf(stderr, ", %s", commands[i].name);
    fputs("; or none, for strata --help)\n", stderr);
    return 2;
}

/* Seconds bare `strata` may take: a first look, not a wait. */
#define BARE_BUDGET_S 2.0

/* What numerics would add to the default scenario's comparison. */
static double default_numerics_s(char **scenario, int n)
{
    struct config cfg;
    config_init(&cfg);
    struct err e = {0};
    struct workload *wl = NULL;
    double s = INFINITY;
    if (config_parse_args(&cfg, n, scenario, ~0u, &e) == 0 &&
        workload_parse(cfg.model, &wl, &e) == 0)
        s = run_numerics_estimate_s(&cfg, wl);
    workload_free(wl);
    config_release(&cfg);
    return s;
}

int main(int argc, char **argv)
{
    /* GSL aborts the process on its own errors by default; strata's library
     * code reports errors as values, so GSL must return them instead. */
    gsl_set_error_handler_off();
    if (argc >= 2 && !strcmp(argv[1], "help")) return help(argc, argv);
    if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")))
        return print_version(argc, argv);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        print_main_help(stdout);
        return 0;
    }
    /* Nothing at all: the built-in default scenario, said out loud. */
    if (argc < 2) {
        /* The Fashion-MNIST MLP on CPU ranks, as strata trains it for real:
         * large enough that compute matters, small enough that it runs here. */
        char *scenario[16] = {"--devices", "8", "--model", "fmnist-8", "--batch", "1024",
                              "--microbatches", "8", "--cluster", "cpu-loopback",
                              "--straggler", "exp:0.1"};
        int n = 12;
        /* Accuracy and time to accuracy when the arithmetic fits the time
         * a first look should take. */
        double numerics_s = default_numerics_s(scenario, n);
        bool with_numerics = numerics_s <= BARE_BUDGET_S && access(DATA_DEFAULT_DIR, R_OK) == 0;
        if (with_numerics) {
            scenario[n++] = "--numerics";
            scenario[n++] = "--target-accuracy";
            scenario[n++] = "0.7";
        }
        printf("strata compare");
        for (int i = 0; i < n; i++) printf(" %s", scenario[i]);
        printf("   (the default scenario)\n");
        int status = commands[0].run(&commands[0], n, scenario);
        /* The hints vary this scenario, so they name all of it: `strata
         * --numerics` or `strata compare --straggler exp:0.5` alone would run
         * compare's own defaults, another scenario. */
        if (status == 0 && !with_numerics && isfinite(numerics_s)) {
            printf("\naccuracy: `strata compare");
            for (int i = 0; i < n; i++) printf(" %s", scenario[i]);
            printf(" --numerics` trains the model for real inside the simulation "
                   "(loss, test accuracy, what staleness does to them; about %.0f s here).\n",
                   numerics_s);
        }
        if (status == 0) {
            printf("\nnext: `strata sim --strategy pipeline-1f1b --timeline` draws a pipeline;"
                   " `strata compare");
            for (int i = 0; i < 10; i++) printf(" %s", scenario[i]);
            printf(" --straggler exp:0.5` shows what slow devices cost;"
                   " `strata --help` lists everything.\n");
        }
        return status;
    }
    /* No command word: the default command, compare, with the options given. */
    if (argv[1][0] == '-') return commands[0].run(&commands[0], argc - 1, argv + 1);
    for (size_t i = 0; i < n_commands; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(&commands[i], argc - 2, argv + 2);
    fprintf(stderr, "strata: '%s' is not a command (commands:", argv[1]);
    for (size_t i = 0; i < n_commands; i++) fprintf(stderr, "%s %s", i ? "," : "", commands[i].name);
    fputs("; see strata --help)\n", stderr);
    return 2;
}

/* Options: one table (config.c) drives argv parsing, scenario files,
 * --help and validation, as git's parse-options does. Each option is
 * described once: name, type, default, range or choices, help line.
 *
 * Commands take the options of some groups (a bit mask); an option outside
 * them is rejected, so every command's --help lists exactly what it reads. */
#ifndef STRATA_CONFIG_H
#define STRATA_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "err.h"

enum opt_group {
    OPTG_SCENARIO = 1u << 0,  /* what is trained and how: strategy, model, devices, batch ... */
    OPTG_COMPARE = 1u << 1,   /* several strategies in one run: --strategies */
    OPTG_OUTPUT = 1u << 2,    /* files written: --json ... */
    OPTG_STRATEGY = 1u << 3,  /* the one strategy of a single-strategy command: --strategy */
    OPTG_RUN = 1u << 4,       /* how long and with which randomness: --steps, --seed */
    OPTG_SIM = 1u << 5,       /* the simulated cluster and its disturbances: --cluster, --straggler ... */
    OPTG_TRAIN = 1u << 6,     /* the arithmetic of training, real or simulated: --lr, --data ... */
    OPTG_LAUNCH = 1u << 7,    /* real runs: how many processes: --np */
    OPTG_DISTURB = 1u << 8,   /* slow devices, simulated or injected into real runs: --straggler */
    OPTG_PLOT = 1u << 9,      /* plots: --plot DIR, --plot-terminal */
    OPTG_SWEEP = 1u << 10,    /* a grid of runs: --vary, --scaling */
    OPTG_CALIBRATE = 1u << 11, /* strata calibrate's profile file: -o */
    OPTG_VALIDATE = 1u << 12,  /* validate's matrix: --models, --np-list, --stragglers, --repeat */
    OPTG_SCHEDULE = 1u << 13,  /* what strata schedule shows besides the program: --explain */
    OPTG_LIMITS = 1u << 14,    /* what a run may take: --max-memory (not part of a report's config) */
    OPTG_HTML = 1u << 15,      /* the report page: --html FILE (commands that write a report) */
    OPTG_REPLAY = 1u << 16,    /* strata replay's what-ifs: --without-stragglers, --scale */
    OPTG_TRACE_IN = 1u << 17,  /* a plan read from traces: --workload chakra:DIR (not part of a report's config) */
    OPTG_JOBS = 1u << 18,      /* simulated runs spread over processes: -j (sweep, compare) */
    OPTG_EXEC = 1u << 19,      /* what only a real run reads: --device, --comm, --epochs ... (the
                                * simulator models --cluster and runs --steps, so sim refuses them) */
};

enum opt_type {
    OPT_INT,     /* long long within [min, max] */
    OPT_REAL,    /* double within [min, max], finite */
    OPT_STRING,  /* free text, checked by its consumer (e.g. --model by workload_parse) */
    OPT_CHOICE,  /* one of a '|'-separated list of words */
    OPT_FLAG,    /* bool field; no value on the command line; "true"/"false" in a file */
};

struct opt_spec {
    const char *name;     /* long name without dashes: "devices" */
    char short_name;      /* one-letter alias ('o' for -o), or 0 */
    enum opt_type type;
    size_t offset;        /* where the value lives in struct config */
    size_t size;          /* bytes of the field (strings: capacity incl. NUL) */
    const char *def;      /* default, as text (parsed like user input) */
    const char *def_shown; /* --help's default when the command computes it (--jobs: "one per
                            * online core"); NULL: def */
    double min, max;      /* OPT_INT, OPT_REAL */
    const char *choices;  /* OPT_CHOICE: "ring|tree|hierarchical" */
    unsigned groups;      /* the enum opt_group it belongs to */
    const char *metavar;  /* "N", "MB", "FILE" in --help */
    const char *help;     /* one line */
};

#define CONFIG_PATH_BYTES 4096
/* Options the table may hold (config.is_set has one entry each). */
#define CONFIG_MAX_OPTIONS 128

struct config {
    /* OPTG_SCENARIO */
    char strategy[64];          /* --strategy: a name from the strategy registry */
    char model[256];            /* --model: mlp:784-256-10, transformer:..., or a preset */
    long long devices;          /* --devices: devices that compute */
    long long servers;          /* --servers: parameter-server ranks (ps-*) */
    long long batch;            /* --batch: global samples per step */
    long long microbatches;     /* --microbatches: per step (pipelines) */
    long long chunks;           /* --chunks: pipeline-interleaved's chunks of layers per device */
    double bucket_mb;           /* --bucket-mb: mirrored all-reduce bucket, MiB; 0 = one after backward */
    long long staleness;        /* --staleness: ps-ssp bound K */
    long long backup_workers;   /* --backup-workers: ps-sync drops the last B pushes of a step */
    long long dp;               /* --dp: data-parallel replicas of a model's or pipeline's stages */
    long long inflight;         /* --inflight: pipelined-steps' steps in flight per device */
    /* OPTG_RUN */
    long long steps;            /* --steps: steps every compute rank runs */
    long long seed;             /* --seed: every random draw of the run derives from it */
    /* OPTG_LIMITS */
    double max_memory_gib;      /* --max-memory: a run estimated above it is refused (core/budget.h) */
    /* OPTG_SIM */
    char cluster[CONFIG_PATH_BYTES];  /* --cluster: preset name or profile file */
    long long nodes;            /* --nodes: 0 = as many as the ranks need */
    long long devices_per_node; /* --devices-per-node: 0 = the profile's */
    char allreduce[16];         /* --allreduce: ring | tree | hierarchical */
    char jitter[8];             /* --jitter: auto | on | off, the profile's op-time spread */
    char straggler[256];        /* --straggler: none | exp:F | lognormal:S | slow:R=X,... | pause:P:D */
    double mtbf_hours;          /* --mtbf: per-device mean time between failures, hours; 0 = none */
    /* OPTG_DISTURB (with straggler above) */
    char fail[64];              /* --fail: R@STEP or R@Ts (core/straggler.h); "" = none */
    char on_failure[16];        /* --on-failure: auto | restart | shrink | continue */
    long long checkpoint_every; /* --checkpoint-every: steps between checkpoints; 0 = never */
    long long commit_every;     /* --commit-every: steps between in-memory commits (shrink) */
    /* OPTG_TRAIN, and OPTG_EXEC: --epochs, --device, --comm, --tf32, --save-params */
    long long epochs;           /* --epochs: passes over the training set; 0 = run --steps */
    double lr;                  /* --lr: SGD learning rate */
    double momentum;            /* --momentum: SGD momentum */
    double weight_decay;        /* --weight-decay: L2 penalty added to the gradient */
    long long eval_every;       /* --eval-every: steps between test-set evaluations; 0 = at the end */
    char data[CONFIG_PATH_BYTES];   /* --data: fashion-mnist, synthetic, or a directory */
    char device[16];            /* --device: cpu (cuda with the GPU build) */
    char comm[8];               /* --comm: auto | mpi | nccl */
    bool tf32;                  /* --tf32: TF32 tensor-core math on the cuda device */
    char save_params[CONFIG_PATH_BYTES];  /* --save-params: final parameters to FILE; "" = none */
    bool numerics;              /* --numerics: the simulator does the real arithmetic */
    double target_accuracy;     /* --target-accuracy: time_to_accuracy_s's threshold; 0 = none */
    /* OPTG_LAUNCH */
    char mode[8];               /* --mode: sim | real */
    long long np;               /* --np: processes that compute (real runs); 0 = --devices */
    char bind[8];               /* --bind: auto | core | none, ranks pinned to cores (real/launch.h) */
    char hostfile[CONFIG_PATH_BYTES];   /* --hostfile: MPI hostfile for the relaunch; "" = this machine */
    char supervisor_address[256];       /* --supervisor-address: where --hostfile's ranks reach the supervisor */
    char checkpoint_dir[CONFIG_PATH_BYTES]; /* --checkpoint-dir: "" = a temporary one */
    char resume[CONFIG_PATH_BYTES];         /* --resume: a checkpoint directory; "" = none */
    double timeout_s;           /* --timeout: no progress for S s = a failed rank; 0 = derived */
    /* OPTG_PLOT */
    char plot_dir[CONFIG_PATH_BYTES];   /* --plot: PNG and SVG plots into DIR; "" = none */
    bool plot_terminal;                 /* --plot-terminal: draw them in the terminal */
    /* OPTG_SWEEP */
    char vary[512];             /* --vary: OPTION=v1,v2,...; "" = the devices */
    char scaling[8];            /* --scaling: strong | weak */
    long long jobs;             /* --jobs, -j: processes a simulated sweep or compare runs in;
                                 * not given: one per online core (bench/sweep.h sweep_default_jobs) */
    /* OPTG_CALIBRATE */
    char output[CONFIG_PATH_BYTES];     /* -o, --output: the profile file calibrate writes */
    /* OPTG_VALIDATE: lists, split and checked element by element by the command */
    char models[1024];          /* --models: a comma list of --model specs; "" = --model */
    char np_list[256];          /* --np-list: a comma list of --np values; "" = --np */
    char stragglers[1024];      /* --stragglers: a comma list of --straggler specs; "" = --straggler */
    long long repeat;           /* --repeat: measured runs a cell; the median is kept */
    /* OPTG_COMPARE */
    char strategies[512];       /* --strategies: "all" or "a,b,c" */
    /* OPTG_OUTPUT */
    char json_path[CONFIG_PATH_BYTES];  /* --json: "" = none */
    char csv_path[CONFIG_PATH_BYTES];   /* --csv: "" = none */
    char trace_path[CONFIG_PATH_BYTES]; /* --trace: Chrome trace-event JSON; "" = none */
    char html_path[CONFIG_PATH_BYTES];  /* --html: the one-file report page; "" = none */
    bool timeline;                      /* --timeline: ASCII Gantt chart of the first steps */
    char timeline_steps[32];            /* --timeline-steps: "A:B", the steps the timeline
                                         * draws (from 0); "" = the first 2 */
    /* OPTG_SCHEDULE */
    bool explain;               /* --explain: what each op kind and the server policy mean */
    char chakra_dir[CONFIG_PATH_BYTES];  /* --chakra: schedule writes Chakra traces here; "" = none */
    /* OPTG_TRACE_IN */
    char workload[CONFIG_PATH_BYTES];    /* --workload: "chakra:DIR", or "" = build --strategy's plan */

    /* OPTG_REPLAY */
    bool without_stragglers;    /* --without-stragglers: every op at its typical time */
    bool measured_comm;         /* --measured-comm: replay's communication as measured too */
    long long scale_devices;    /* --scale: the run at N devices; 0 = not scaled */

    /* Not options. */
    char scenario_path[CONFIG_PATH_BYTES];  /* -f FILE, "" when none */
    bool is_set[CONFIG_MAX_OPTIONS];  /* [i]: config_options[i] was given (file or argv) */
    long file_line[CONFIG_MAX_OPTIONS];  /* [i]: the line of scenario_path that set
                                          * config_options[i]; 0 = argv or the default */
    int n_positional;           /* arguments that are not options, in order */
    char **positional;          /* borrowed from argv; owned by config (array only) */
    int first_after_dashes;     /* index in positional of the first word after "--";
                                   n_positional when none came after one */
};

extern const struct opt_spec config_options[];
extern const size_t config_n_options;

/* parse result meaning "--help was asked for": print help, exit 0 */
#define CONFIG_HELP 1

/* Every option at its default. */
void config_init(struct config *c);

/* Frees what config_parse_args allocated (the positional array). */
void config_release(struct config *c);

/* Parses argv[0..argc) (the words after the command name): --name VALUE,
 * --name=VALUE, flags, -f FILE / --file FILE (scenario file; the command
 * line wins over it whatever the order), one-letter aliases with the value
 * next or attached as getopt takes them (-j 2, -j2, -fFILE), -h / --help,
 * and "--" before positionals. Options outside `groups` are rejected. Returns 0,
 * CONFIG_HELP, or ERR_INPUT with a message naming the option, the value and
 * what is allowed. */
int config_parse_args(struct config *c, int argc, char **argv, unsigned groups,
                      struct err *e);

/* Reads `key = value` lines ('#' starts a comment; blank lines skipped;
 * values may be "quoted"), each key once (a repeated key is refused). Keys
 * of options outside `groups` are validated and then ignored, so one
 * scenario file serves several commands. Errors name the file and line. */
int config_load_file(struct config *c, const char *path, unsigned groups,
                     struct err *e);

/* When e says what is wrong with one option ("--model: ...", or after a
 * context: "the one-device baseline: --cluster: ...") and the scenario file
 * set that option, prefixes the file and line ("run.conf:3: --model: ..."),
 * as config_load_file does for the values it checks itself: a value its
 * consumer checks later (--model, --strategies, --straggler, --cluster ...)
 * is then found in the file as fast. Returns e->code. */
int config_err_locate(const struct config *c, struct err *e);

/* A cluster profile named without a directory in a file of options (a
 * scenario file, a lab's [run]): "cluster = wan.profile" is read beside
 * that file, wherever the command runs, as an include is. Returns value
 * as it is for any other key or value, else the path in buf[0..n). */
const char *config_value_beside(const char *file_path, const char *key, const char *value,
                                char *buf, size_t n);

/* Records that option `name` was set by line `lineno` of the file at path,
 * which config_load_file did not read (a lab's [run] section is a scenario
 * file's lines inside another file), so config_err_locate names that line.
 * A path too long to keep is not recorded: errors then go unlocated, never
 * misnamed. */
void config_mark_file_line(struct config *c, const char *name, const char *path, long lineno);

/* Sets one option from text, validating it. `name` has no dashes. */
int config_set(struct config *c, const char *name, const char *value,
               unsigned groups, struct err *e);

/* Was option `name` given (command line or scenario file), not defaulted? */
bool config_is_set(const struct config *c, const char *name);

/* The options of `groups` that were set, as the command-line words that set
 * them again: "--name", "value" (a flag: "--name" when true), in table
 * order; how one command runs another with the user's scenario. *out is
 * NULL-terminated and owned: free with config_args_free. */
int config_to_args(const struct config *c, unsigned groups, char ***out, int *n, struct err *e);
void config_args_free(char **args);

/* The option called name, or NULL. */
const struct opt_spec *config_find(const char *name);

/* Writes option o's current value of c as text ("8", "0.5", "mirrored"). */
void config_format(const struct config *c, const struct opt_spec *o,
                   char *buf, size_t n);

/* Prints the options of `groups`: name, metavar, help, default, range. */
void config_print_help(FILE *out, unsigned groups);

/* The same, less the options named in `refused` (NULL-terminated; NULL:
 * none): those of its groups a command turns down (strata replay takes
 * --steps from its trace), which its help must not offer. `defaults`
 * (pairs of option name and text, NULL-ended; NULL: none) are the
 * defaults a command decides itself, shown in place of the table's
 * "(default ...)" (replay's --cluster is its trace's, not
 * h100-nvlink-ib; validate's is required). */
void config_print_help_without(FILE *out, unsigned groups, const char *const *refused,
                               const char *const *defaults);

#endif

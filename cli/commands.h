/* The subcommands: a table of name -> function, as git.c has. */
#ifndef STRATA_CLI_COMMANDS_H
#define STRATA_CLI_COMMANDS_H

#include <stdio.h>

/* Options of a command's groups that it turns down (exit 2), and why: one
 * reason for the list, said with the option that was given. */
struct refusal {
    const char *const *options;   /* NULL-terminated long names, without "--" */
    const char *why;              /* "replay takes it from the trace's scenario, ..." */
};

struct command {
    const char *name;      /* "schedule" */
    const char *summary;   /* one line for `strata --help` */
    const char *about;     /* a paragraph for `strata NAME --help` */
    unsigned groups;       /* option groups it takes (enum opt_group) */
    /* Runs with the words after the command name; returns the exit status
     * (0 ok, 1 a run failed, 2 bad input). */
    int (*run)(const struct command *self, int argc, char **argv);
    /* options of those groups it turns down (NULL: none; else an array
     * ended by a refusal with no options, each with its own why): --help
     * leaves them out and command_refuse_options refuses them */
    const struct refusal *refused;
    /* defaults it decides itself, shown by --help in place of the option
     * table's: option name, text, ..., NULL (NULL: none) */
    const char *const *defaults;
};

int cmd_calibrate(const struct command *self, int argc, char **argv);
/* `strata help metrics`: the glossary of every figure (docs/metrics.md). */
int cmd_help_metrics(void);
int cmd_compare(const struct command *self, int argc, char **argv);
/* `strata lab [NAME] [--check]`: the course of labs/ (cli/lab.c). */
int cmd_lab(const struct command *self, int argc, char **argv);
int cmd_plot(const struct command *self, int argc, char **argv);
int cmd_real(const struct command *self, int argc, char **argv);
/* `strata replay TRACE`: a trace replayed in the simulator, and what-ifs (cli/replay.c);
 * the options of its groups it refuses. */
int cmd_replay(const struct command *self, int argc, char **argv);
extern const struct refusal replay_refused[];
/* --save-params, refused by the commands that keep no trained model. */
extern const struct refusal keeps_no_model_refused[];
int cmd_schedule(const struct command *self, int argc, char **argv);
extern const struct refusal schedule_refused[];
int cmd_sim(const struct command *self, int argc, char **argv);
int cmd_sweep(const struct command *self, int argc, char **argv);
int cmd_validate(const struct command *self, int argc, char **argv);

/* ERR_INPUT naming the first of c->refused's options that cfg sets (argv
 * or a file), with its why; 0 when none is. scenario_load calls it for
 * every command that loads a scenario; replay, which loads none, itself. */
struct config;
struct err;
int command_refuse_options(const struct command *c, const struct config *cfg, struct err *e);

/* Usage, about, options of the command's groups, strategies and model presets. */
void command_print_help(const struct command *c, FILE *out);

#endif

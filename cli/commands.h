/* The subcommands: a table of name -> function, as git.c has. */
#ifndef STRATA_CLI_COMMANDS_H
#define STRATA_CLI_COMMANDS_H

#include <stdio.h>

struct command {
    const char *name;      /* "schedule" */
    const char *summary;   /* one line for `strata --help` */
    const char *about;     /* a paragraph for `strata NAME --help` */
    unsigned groups;       /* option groups it takes (enum opt_group) */
    /* Runs with the words after the command name; returns the exit status
     * (0 ok, 1 a run failed, 2 bad input). */
    int (*run)(const struct command *self, int argc, char **argv);
    /* options of those groups it turns down, exit 2 (NULL-terminated; NULL:
     * none): --help leaves them out and command_refuse_options refuses them */
    const char *const *refused;
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
extern const char *const replay_refused[];
/* --save-params, refused by the commands that keep no trained model
 * (scenario_load refuses it with that reason). */
extern const char *const keeps_no_model_refused[];
int cmd_schedule(const struct command *self, int argc, char **argv);
extern const char *const schedule_refused[];
int cmd_sim(const struct command *self, int argc, char **argv);
int cmd_sweep(const struct command *self, int argc, char **argv);
int cmd_validate(const struct command *self, int argc, char **argv);

/* ERR_INPUT naming the first of c->refused that cfg sets (argv or a file),
 * with why: "replay takes it from the trace's scenario, or has no use for it". */
struct config;
struct err;
int command_refuse_options(const struct command *c, const struct config *cfg, const char *why,
                           struct err *e);

/* Usage, about, options of the command's groups, strategies and model presets. */
void command_print_help(const struct command *c, FILE *out);

#endif

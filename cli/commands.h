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
};

int cmd_calibrate(const struct command *self, int argc, char **argv);
/* `strata help metrics`: the glossary of every figure (docs/metrics.md). */
int cmd_help_metrics(void);
int cmd_compare(const struct command *self, int argc, char **argv);
/* `strata lab [NAME] [--check]`: the course of labs/ (cli/lab.c). */
int cmd_lab(const struct command *self, int argc, char **argv);
int cmd_plot(const struct command *self, int argc, char **argv);
int cmd_real(const struct command *self, int argc, char **argv);
/* `strata replay TRACE`: a trace replayed in the simulator, and what-ifs (cli/replay.c). */
int cmd_replay(const struct command *self, int argc, char **argv);
int cmd_schedule(const struct command *self, int argc, char **argv);
int cmd_sim(const struct command *self, int argc, char **argv);
int cmd_sweep(const struct command *self, int argc, char **argv);
int cmd_validate(const struct command *self, int argc, char **argv);

/* Usage, about, options of the command's groups, strategies and model presets. */
void command_print_help(const struct command *c, FILE *out);

#endif

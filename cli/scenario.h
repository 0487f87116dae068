/* What every command does first: options into a config (argv and -f FILE),
 * the model into a workload. */
#ifndef STRATA_CLI_SCENARIO_H
#define STRATA_CLI_SCENARIO_H

#include <stdbool.h>
#include <stdio.h>

#include "../core/config.h"
#include "../core/err.h"
#include "../core/workload.h"
#include "commands.h"

struct strategy;

struct scenario {
    struct config cfg;
    struct workload *wl;
    const struct strategy *strategy;   /* --strategy; set by scenario_start only */
};

/* Parses the command's options and loads --model. Returns 0, CONFIG_HELP
 * (help was printed), or a negative code with the message in e. */
int scenario_load(struct scenario *s, const struct command *cmd, int argc, char **argv,
                  struct err *e);
void scenario_release(struct scenario *s);

/* scenario_load, then --strategy looked up, for the commands that run one
 * strategy. Returns 0, or -1 with *status the command's exit status: 0 when
 * help was printed, else the failure's, its message printed. */
int scenario_start(struct scenario *s, const struct command *cmd, int argc, char **argv,
                   int *status);

/* The notes under a single strategy's header: what its plan's builder chose
 * that the options did not say (plan.note), and the options set that st
 * does not read (strategy_unread_note); each "note: ...\n" then `after`,
 * on out. */
struct plan;
void scenario_print_notes(FILE *out, const struct strategy *st, const struct config *cfg,
                          const struct plan *p, const char *after);

/* The failure options set that the run will not read, as notes ("note:
 * ...\n" then `after`): --on-failure and --commit-every on a simulation
 * with no --fail or --mtbf, --commit-every under a policy that takes no
 * commits. is_simulated: failures come only from --fail and --mtbf, and
 * continue carries on without commits (a real continue relaunches from
 * them). */
void scenario_note_failure_options(FILE *out, const struct config *cfg, const struct plan *p,
                                   bool is_simulated, const char *after);

/* The first of those notes, alone, as a simulated compare or sweep says
 * it (lead "  note:"): --on-failure or --commit-every given with no --fail
 * or --mtbf. Returns whether it said it. */
bool scenario_note_no_failure(FILE *out, const struct config *cfg, const char *lead,
                              const char *after);

/* The options of `groups` set (argv or a file) for a run that does not read
 * them, as one note under its table, on out: "  note: --np 4: why".
 * Nothing when none is set. */
void scenario_note_unread(FILE *out, const struct config *cfg, unsigned groups,
                          const char *why);
/* The same note, led by `lead` ("note:" before a table, "  note:" under
 * one) and followed by `after`. */
void scenario_note_unread_as(FILE *out, const struct config *cfg, unsigned groups,
                             const char *why, const char *lead, const char *after);
/* The options set that other strategies read and none of the n of list
 * (a compare's or a sweep's, `verb` "compared" or "swept") does, as one
 * note under its table: "  note: no strategy compared reads --staleness 3
 * (only ps-ssp reads it)". */
struct strategy;
void scenario_note_unread_by_all(FILE *out, const struct strategy *const *list, size_t n,
                                 const struct config *cfg, const char *verb);
/* --tf32 given to a run on another device than cuda, which alone reads it,
 * as one note ("note: --tf32: ..."), led by `lead`, followed by `after`. */
void scenario_note_tf32_unread(FILE *out, const struct config *cfg, const char *lead,
                                const char *after);
/* `given` ("--checkpoint-every 5") on a cluster whose profile prices a
 * checkpoint at 0 s (the presets), as one note led by `lead`: the interval
 * changes nothing there. */
struct cluster;
void scenario_note_free_checkpoints(FILE *out, const struct config *cfg,
                                    const struct cluster *cl, const char *given,
                                    const char *lead, const char *after);
/* The training options set (--lr, --momentum, --weight-decay, --eval-every,
 * --data, --target-accuracy) when a simulation runs no arithmetic, which is
 * all that reads them: one note, as scenario_note_unread_as. */
void scenario_note_training_unread(FILE *out, const struct config *cfg, const char *lead,
                                   const char *after);

/* Prints "strata NAME: message" to stderr and returns the exit status. */
int scenario_fail(const struct command *cmd, const struct err *e);

/* scenario_fail for a failure after s was loaded: a message about an
 * option the scenario file set names the file and line too
 * (config_err_locate). */
int scenario_fail_in(const struct command *cmd, const struct scenario *s, struct err *e);

/* "1.5 MiB", "320 B": bytes for people. */
void format_bytes(double bytes, char *buf, size_t n);

#endif

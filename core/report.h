/* Reports: what a run measured, in the one format sim/ and real/ share.
 * JSON field names are a contract (ARCHITECTURE.md, Reports): scripts and
 * tests rely on them, and report_json.c names each of them once, in the
 * table that both writes and reads them. The analysis that fills a report
 * from a trace comes with the simulator; this module holds the structure,
 * its JSON (report_json.c), documents of reports read back (report_read.c),
 * the terminal table and CSV (report.c). */
#ifndef STRATA_REPORT_H
#define STRATA_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "err.h"
#include "json_doc.h"

#define REPORT_FORMAT_VERSION 1

struct rank_pace;   /* core/straggler_detect.h */

struct loss_point {
    int64_t step;
    double time_s;
    double loss;
};

/* One worker's training loss of one step, as executors record it. */
struct step_loss {
    int64_t step;
    double end_s;        /* when the worker ended the step */
    double loss_sum;     /* summed over its samples */
    int64_t n_samples;
};

/* Test accuracy measured during training (--eval-every) and at the end. */
struct accuracy_point {
    int64_t step;        /* steps done when evaluated */
    double time_s;
    double accuracy;
};

struct rank_time {
    int rank;
    double compute_s, comm_s, idle_s, down_s;
    int64_t steps;                   /* complete steps it ran */
};

/* Where one rank ran: its MPI processor name (the host), cut to fit, and
 * the cores online there (replay says when a run had more processes than
 * cores; 0: unknown). */
#define REPORT_HOST_BYTES 64
struct rank_host {
    char name[REPORT_HOST_BYTES];
    int cores;
};

struct report {
    const char *mode;                /* "sim" or "real" */
    char strategy[64];
    int devices;
    const struct config *config;     /* borrowed; its options of config_groups go to "config" */
    unsigned config_groups;

    struct { double mean, p50, p99; } step_time_s;
    double throughput_samples_per_s;
    struct { double compute, comm, idle, down; } breakdown;   /* fractions of device time, sum 1 */
    int64_t samples_applied;         /* samples whose gradient took effect (docs/metrics.md) */
    int64_t updates;                 /* optimizer updates the model took: applied pushes
                                      * (asynchronous), else complete job steps; in the
                                      * JSON's "final" */
    int64_t updates_resumed;         /* of those, the ones the model had when this job went
                                      * on from a checkpoint (a real run resumed or
                                      * restarted): samples_applied counts this job's only */
    bool has_updates_resumed;        /* in the JSON's "final" only then */
    double time_resumed_s;           /* the run's clock when this job went on from a
                                      * checkpoint: the curves' times count it, this job's
                                      * own figures (per_rank, step time) do not */
    bool has_time_resumed;           /* in the JSON's "final" only then */
    /* Table figures, not in the JSON (a report read back has them 0/false): */
    bool has_step_lead;              /* an asynchronous server ran (simulated) */
    int64_t max_step_lead;           /* the most steps a worker had pushed beyond the
                                      * slowest live one: ssp's bound waits past K */
    double bubble_fraction;          /* idle share of pipeline/model ranks' compute time */
    struct {
        double mean;
        int64_t max;
        int64_t *histogram;          /* [n_histogram], owned: pushes with staleness 0, 1, ... */
        int n_histogram;
    } staleness;
    struct { int64_t params, grads, optimizer, activations, peak; } memory_bytes_per_device;
    struct loss_point *loss_curve;   /* [n_loss_curve], owned */
    int n_loss_curve;
    struct accuracy_point *accuracy_curve;   /* [n_accuracy_curve], owned; [] when not measured */
    int n_accuracy_curve;
    bool has_final;                  /* numerics ran: "final" is an object, else null */
    struct { double loss, test_accuracy; } final;
    bool has_time_to_accuracy;       /* else "time_to_accuracy_s": null */
    double time_to_accuracy_s;
    struct rank_time *per_rank;      /* [n_per_rank], owned */
    int n_per_rank;
    struct {                         /* "failure": null, or what failures cost (--fail, --mtbf) */
        bool happened;
        bool has_first;              /* else "rank" and "time_s": null (--mtbf drew none) */
        int rank;                    /* the first failure's rank and time */
        double time_s;
        const char *policy;          /* "restart", "shrink", "continue" (core/failure_policy.h) */
        int n_failures;              /* failures in the run (1 for --fail) */
        double lost_s;               /* detect_s + relaunch_s + redone_s */
        double detect_s;             /* from each death to its noticing */
        double relaunch_s;           /* starting the ranks again and loading the state */
        double redone_s;             /* work since the last checkpoint or commit, done again */
        int steps_redone;
        double checkpoint_s;         /* spent writing checkpoints (and commits), failure or not */
        double goodput;              /* share of the run's time on work that survives */
        bool has_workers_after;      /* else "workers_after": null (the simulator's) */
        int workers_after;           /* the workers the run ended with (after shrink, continue) */
    } failure;
    /* "stragglers": each worker's compute pace against the others
     * (core/straggler_detect.h); real runs only: n_paces 0 writes no member */
    struct rank_pace *paces;         /* [n_paces], owned */
    int n_paces;
    /* Real runs: "hosts" maps each host to the ranks that ran on it,
     * { "host": [ranks], ... } in the order of their first rank; sim reports
     * have no such key. rank_hosts[r] is rank r's host (real/host_map.h). */
    bool has_hosts;
    struct rank_host *rank_hosts;    /* [n_rank_hosts], owned */
    int n_rank_hosts;
};

/* r's loss_curve from the workers' step losses (any order): one point per
 * step of [0, steps) that has any, the sum of the losses over the sum of the
 * samples (the global batch's mean loss), at the time the job's step ended:
 * when as many worker steps had ended as steps 0..s hold (a synchronous
 * step's last one; an asynchronous step s, the (s+1)N-th, as its step time
 * counts it), so time never goes back along the curve. Real runs and
 * simulated numerics both report so. */
int report_set_loss_curve(struct report *r, const struct step_loss *losses, size_t n,
                          int64_t steps, struct err *e);

/* --target-accuracy: r's time_to_accuracy_s, the time of the first
 * accuracy point at or above target (has_time_to_accuracy false when none
 * is, or target is 0). Real runs and simulated numerics both report so. */
void report_set_time_to_accuracy(struct report *r, double target);

/* A zeroed report; mode must be set by the caller. */
void report_init(struct report *r);
/* Frees the owned arrays (not r itself). */
void report_release(struct report *r);

/* The report as a cJSON tree with exactly the contract's fields (caller
 * deletes it), or NULL on out of memory. */
cJSON *report_to_json(const struct report *r);

/* One report from its JSON object j (at says where it is, for messages):
 * the inverse of report_to_json. c receives its config (config_init, then
 * each key of "config" through config_set: unknown keys or bad values are
 * ERR_INPUT) and r->config points to it. On failure the caller releases r
 * and c as usual. */
int report_from_json(const cJSON *j, const struct json_at *at, struct report *r,
                     struct config *c);

/* The options of `groups` of c as a report's "config" object (caller
 * deletes it; NULL on out of memory), and such an object read back into c
 * (config_init, then every key through config_set; *groups gains the
 * groups of the options present): what a trace's "scenario" reuses. */
cJSON *report_config_to_json(const struct config *c, unsigned groups);
int report_config_from_json(const cJSON *v, const struct json_at *at, struct config *c,
                            unsigned *groups);

/* { "strata_report": 1, ... } to path, atomically. */
int report_write_json(const struct report *r, const char *path, struct err *e);

/* The same with "speedup" just after the throughput, as a compare
 * document's reports hold it (null when NaN), when speedup is not NULL:
 * the figure the terminal's table shows for one report too (sim). */
int report_write_json_speedup(const struct report *r, const double *speedup, const char *path,
                              struct err *e);

/* { "strata_compare": 1, "reports": [ ... ] } to path, atomically; each
 * report with its "speedup" (after its throughput: speedup[i], null when
 * NaN) when speedup is not NULL. */
int report_write_compare_json(const struct report *const *rs, int n, const double *speedup,
                              const char *path, struct err *e);

/* One CSV row per report (a header line first): strategy, devices, step time
 * mean/p50/p99, throughput, speedup (empty when speedup is NULL), breakdown,
 * bubble, staleness mean/max, peak memory, final loss and accuracy (empty
 * when not run); when any report's run failed, then its failure section:
 * failure_policy, n_failures, lost_s, detect_s, relaunch_s, redone_s,
 * steps_redone, checkpoint_s, goodput (empty for a run that did not).
 * Atomic. */
int report_write_csv(const struct report *const *rs, int n, const double *speedup,
                     const char *path, struct err *e);

/* One row per report: strategy, devices, step time, throughput, speedup
 * (speedup[i], or "-" when speedup is NULL), compute/comm/idle, bubble,
 * staleness, peak memory; failures, time lost and goodput when any run
 * failed; final loss and accuracy when present. */
void report_print_table(FILE *out, const struct report *const *rs, int n,
                        const double *speedup);

/* The table's cells, shared with the other tables of reports (the sweep's):
 * seconds with the unit that keeps the number between 1 and 1000 ("1.234
 * ms"), and x in fmt; "-" for a value that is not finite. */
void report_fmt_seconds(char *buf, size_t size, double s);
void report_fmt_number(char *buf, size_t size, const char *fmt, double x);

/* --- Reading back (report_read.c) -----------------------------------------
 * A report document read back: one report (a "strata_report" file) or
 * several (a "strata_compare" file's "reports", a "strata_sweep" file's
 * points[].report, a "strata_validate" file's rows[].predicted and
 * rows[].measured, in that order). Each report's config points to
 * configs[i], filled from its "config" object (config_init defaults, then
 * every key of that object set through config_set with all groups, so
 * unknown keys or bad values are ERR_INPUT naming the file), and
 * config_groups is the union of the groups of the options present.
 * A null where the writer puts a real number reads back as NaN: the writer
 * writes every non-finite value as null. */

/* What a sweep point or a validation row says beside its reports, and a
 * compare document's report among its fields (its speedup): NaN
 * where the document's kind has no such field, or the entry lacks it. */
struct report_doc_entry {
    int first_report;                         /* its (first) report in reports[] */
    double devices, speedup, efficiency;      /* strata_sweep points (speedup: strata_compare
                                               * reports too) */
    double predicted_step_s, measured_step_s; /* strata_validate rows */
};

struct report_doc {
    const char *kind;         /* the tag: "strata_report", "strata_compare", ... (static) */
    int n;
    struct report *reports;   /* [n], owned */
    struct config *configs;   /* [n], owned */
    int n_entries;
    struct report_doc_entry *entries;   /* [n_entries], owned: sweep points, validation
                                         * rows, compare's reports */
    struct {                  /* a strata_sweep's axis: its "option", "scaling", "mode" */
        bool has_axis;        /* false: not a sweep, or written before sweeps said it */
        char option[64];      /* the varied option: "devices", "checkpoint-every" */
        bool is_weak;         /* "scaling": "weak" */
        bool is_real;         /* "mode": "real" */
    } sweep;
    struct {                  /* a strata_replay's what-if: its "whatif" object */
        bool has_whatif;      /* false: none was asked (null), or not a replay */
        char what[300];       /* its question: "without stragglers, as pipeline-1f1b" */
        double step_s;        /* its mean step time */
    } replay;
};

/* Reads and parses the file at path (at most JSON_DOC_MAX_BYTES). 0, or ERR_INPUT (a
 * missing file, or a document that is not a strata report: the message
 * names the file and the field), ERR_IO or ERR_NOMEM; *out is zeroed on
 * failure and overwritten, not released, on entry. */
int report_doc_read(const char *path, struct report_doc *out, struct err *e);

/* As report_doc_read, from text[0..len) (no NUL needed); name is the file
 * as messages should call it. */
int report_doc_parse(const char *text, size_t len, const char *name, struct report_doc *out,
                     struct err *e);

/* Frees what a read allocated and zeroes d; accepts a zeroed doc and NULL. */
void report_doc_release(struct report_doc *d);

#endif

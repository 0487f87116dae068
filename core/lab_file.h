/* Lab files (labs/NN-name.lab): one lesson of `strata lab` as data, so a
 * teacher adds a lab without C. A lab holds its claim, the question a
 * student answers before running it, one or more scenarios to simulate, an
 * explanation whose {EXPR} placeholders are filled from this run's reports,
 * and the checks that turn the claim into a test (labs/README.md has the
 * format). This module reads and checks the file; core/lab_expr evaluates
 * its expressions, bench/lab_run runs its scenarios. */
#ifndef STRATA_LAB_FILE_H
#define STRATA_LAB_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "vec.h"

/* A line of the file, kept with its number for messages. */
struct lab_line {
    char *text;    /* owned */
    long lineno;
};
typedef VEC(struct lab_line) lab_line_vec;

/* One option of a run's scenario: `key = value`, as in a scenario file. */
struct lab_option {
    char *key, *value;   /* owned */
    long lineno;
};

/* One scenario of the lab, simulated as `strata compare` would. */
struct lab_run {
    char *name;                           /* [run NAME]: how expressions refer to it */
    VEC(struct lab_option) options;
    long lineno;
};

struct lab {
    char *path;                   /* as opened */
    char *name;                   /* the file's name without its directory and ".lab" */
    char *title, *claim, *predict;
    bool has_real;                /* real = yes: `--mode real` runs its scenarios for real */
    VEC(struct lab_run) runs;
    lab_line_vec explain;         /* template lines */
    lab_line_vec checks;          /* "EXPR OP EXPR", all must hold */
};

/* Reads the lab file at path into *lab (zeroed first). ERR_INPUT names the
 * file and line of a malformed file: an unknown key or section, a missing
 * title, claim, predict, run or check, two runs of one name. lab_free
 * releases it on success and failure alike. */
int lab_load(const char *path, struct lab *lab, struct err *e);
void lab_free(struct lab *lab);

/* The lab files (*.lab) of directory dir, sorted by name (so NN- prefixes
 * give the course order): *paths is an owned array of n owned paths, freed
 * with lab_paths_free. ERR_INPUT when dir cannot be read. */
int lab_list_dir(const char *dir, char ***paths, size_t *n, struct err *e);
void lab_paths_free(char **paths, size_t n);

#endif

/* The expressions of lab files (core/lab_file.h): arithmetic over this
 * run's figures, for the [explain] template and the [check] lines.
 *
 *   expr  := term (('+' | ' - ') term)*        binary minus needs spaces:
 *   term  := unary (('*' | '/') unary)*        names may hold '-' (ps-async)
 *   unary := '-' unary | NUMBER | '(' expr ')' | FUNC '(' expr [, expr] ')' | NAME
 *   FUNC  := min, max, abs, harmonic (H_n = 1 + 1/2 + ... + 1/n, for a whole
 *            n >= 1; other n are refused, NaN gives NaN)
 *   NAME  := word('.'word)*, resolved by the caller's lookup
 *   check := expr ('<' | '<=' | '>' | '>=' | '==' | '!=') expr
 *
 * A name that resolves to NaN (a figure the run has not: accuracy without
 * numerics) makes the expression NaN, and a check on NaN fails. */
#ifndef STRATA_LAB_EXPR_H
#define STRATA_LAB_EXPR_H

#include <stdbool.h>

#include "err.h"

/* Resolves a NAME ("eight.mirrored.step_time_s.mean") to its value: 0, or
 * ERR_INPUT naming what is unknown. */
typedef int (*lab_lookup_fn)(void *ctx, const char *name, double *value, struct err *e);

/* The value of expression text. ERR_INPUT for a syntax error (the message
 * quotes the text and says where), or the lookup's error. */
int lab_expr_eval(const char *text, lab_lookup_fn lookup, void *ctx, double *value,
                  struct err *e);

struct lab_check {
    double lhs, rhs;
    char op[3];       /* "<", "<=", ... */
    bool holds;
};

/* Evaluates a check line "EXPR OP EXPR". */
int lab_check_eval(const char *text, lab_lookup_fn lookup, void *ctx, struct lab_check *out,
                   struct err *e);

/* The template line with each {EXPR} or {EXPR:FMT} replaced by its value:
 * FMT is .Nf (fixed), .Ng (significant digits) or .N% (a percentage); the
 * default is .3g. NaN prints as "n/a". *out is malloc'd, the caller's. */
int lab_render(const char *tmpl, lab_lookup_fn lookup, void *ctx, char **out, struct err *e);

#endif

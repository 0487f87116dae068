/* A recursive-descent evaluator for lab expressions (core/lab_expr.h):
 * one function per grammar rule, values computed while parsing. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_expr.h"

#define NAME_BYTES 256

struct parser {
    const char *text;   /* the whole expression, for messages */
    const char *at;
    lab_lookup_fn lookup;
    void *ctx;
    struct err *e;
};

static int syntax(struct parser *p, const char *what)
{
    return err_set(p->e, ERR_INPUT, "'%s': %s at column %d", p->text, what,
                   (int)(p->at - p->text) + 1);
}

static void skip_space(struct parser *p)
{
    while (isspace((unsigned char)*p->at)) p->at++;
}

static bool is_word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static int expr(struct parser *p, double *v);

/* Whether the '-' at p->at belongs to the name being read (n characters so
 * far): inside a word ("ps-async"), which is why a binary minus needs
 * spaces, or starting a word of digits, a list index counted from the end
 * ("loss_curve.-1.2": no expression has a '.' before a minus). */
static bool is_name_hyphen(const struct parser *p, size_t n)
{
    if (*p->at != '-' || !n) return false;
    if (p->at[-1] == '.') return isdigit((unsigned char)p->at[1]) != 0;
    return is_word_char(p->at[-1]) && is_word_char(p->at[1]);
}

/* A name: words joined by '.', with the hyphens of is_name_hyphen. */
static int name(struct parser *p, char *buf)
{
    size_t n = 0;
    while (is_word_char(*p->at) || *p->at == '.' || is_name_hyphen(p, n)) {
        if (n + 1 >= NAME_BYTES) return syntax(p, "a name too long");
        buf[n++] = *p->at++;
    }
    buf[n] = '\0';
    return n ? 0 : syntax(p, "a number, name or '(' expected");
}

/* Beyond this n, harmonic() uses the asymptotic expansion: the sum of
 * 10^6 terms costs a millisecond, and there the expansion's first omitted
 * term, 1/(240 n^8), is 1e-50, far below a double's rounding. */
#define HARMONIC_SUM_MAX_N 1e6

/* H_n = 1 + 1/2 + ... + 1/n, the expected maximum of n unit exponentials
 * over their mean (labs/02-slowest.lab). Defined for whole n >= 1 only: a
 * fraction or an n below 1 is refused rather than floored or made NaN;
 * NaN (a figure the run has not) stays NaN. Large n: H_n = ln n + gamma +
 * 1/(2n) - 1/(12n^2) + 1/(120n^4) - 1/(252n^6) + ... (Knuth, TAOCP vol. 1,
 * 1.2.7, eq. 3). */
static int harmonic(struct parser *p, double n, double *v)
{
    if (isnan(n)) {
        *v = NAN;
        return 0;
    }
    if (!isfinite(n) || n < 1 || n != floor(n))
        return err_set(p->e, ERR_INPUT, "'%s': harmonic(%g): n must be a whole number from 1 "
                       "(H_n = 1 + 1/2 + ... + 1/n)", p->text, n);
    if (n <= HARMONIC_SUM_MAX_N) {
        double h = 0;
        for (long k = 1; k <= (long)n; k++) h += 1.0 / (double)k;
        *v = h;
        return 0;
    }
    const double euler_gamma = 0.57721566490153286061;
    double inv_n2 = 1 / (n * n);
    *v = log(n) + euler_gamma + 1 / (2 * n) -
         inv_n2 * (1.0 / 12 - inv_n2 * (1.0 / 120 - inv_n2 / 252));
    return 0;
}

/* FUNC '(' expr [, expr] ')' */
static int call(struct parser *p, const char *fn, double *v)
{
    int arity = !strcmp(fn, "min") || !strcmp(fn, "max") ? 2
                : !strcmp(fn, "abs") || !strcmp(fn, "harmonic") ? 1
                                                                 : 0;
    if (!arity)
        return err_set(p->e, ERR_INPUT, "'%s': unknown function %s (min, max, abs, harmonic)",
                       p->text, fn);
    p->at++;   /* '(' */
    double a, b = 0;
    TRY(expr(p, &a));
    if (arity == 2) {
        skip_space(p);
        if (*p->at != ',') return syntax(p, "',' expected");
        p->at++;
        TRY(expr(p, &b));
    }
    skip_space(p);
    if (*p->at != ')') return syntax(p, "')' expected");
    p->at++;
    if (!strcmp(fn, "min")) *v = fmin(a, b);
    else if (!strcmp(fn, "max")) *v = fmax(a, b);
    else if (!strcmp(fn, "abs")) *v = fabs(a);
    else return harmonic(p, a, v);
    return 0;
}

static int unary(struct parser *p, double *v)
{
    skip_space(p);
    if (*p->at == '-') {
        p->at++;
        TRY(unary(p, v));
        *v = -*v;
        return 0;
    }
    if (*p->at == '(') {
        p->at++;
        TRY(expr(p, v));
        skip_space(p);
        if (*p->at != ')') return syntax(p, "')' expected");
        p->at++;
        return 0;
    }
    if (isdigit((unsigned char)*p->at) || *p->at == '.') {
        char *end;
        *v = strtod(p->at, &end);
        p->at = end;
        return 0;
    }
    char buf[NAME_BYTES];
    TRY(name(p, buf));
    skip_space(p);
    if (*p->at == '(') return call(p, buf, v);
    int rc = p->lookup(p->ctx, buf, v, p->e);
    if (rc < 0) err_prefix(p->e, "'%s'", p->text);
    return rc;
}

/* The binary operators by precedence, loosest first; each level's operands
 * are the next level's, the last level's are unary's, and every operator
 * associates to the left (as Lua's subexpr climbs its priority table). */
static const char *const binary_levels[] = {"+-", "*/"};
enum { N_BINARY_LEVELS = sizeof binary_levels / sizeof binary_levels[0] };

/* A figure that cannot be computed reads as NaN, as a missing one does: a
 * division by zero (a baseline of 0 s, an empty histogram) prints n/a and
 * fails its check, where IEEE's inf would print "inf" and pass "> 2". */
static double apply(char op, double l, double r)
{
    switch (op) {
    case '+': return l + r;
    case '-': return l - r;
    case '*': return l * r;
    default: return r == 0 ? NAN : l / r;
    }
}

/* expr  := term {('+' | '-') term}
 * term  := unary {('*' | '/') unary} */
static int binary(struct parser *p, int level, double *v)
{
    if (level == N_BINARY_LEVELS) return unary(p, v);
    TRY(binary(p, level + 1, v));
    for (;;) {
        skip_space(p);
        char op = *p->at;
        if (!op || !strchr(binary_levels[level], op)) return 0;
        p->at++;
        double r;
        TRY(binary(p, level + 1, &r));
        *v = apply(op, *v, r);
    }
}

static int expr(struct parser *p, double *v)
{
    return binary(p, 0, v);
}

static void start(struct parser *p, const char *text, lab_lookup_fn lookup, void *ctx,
                  struct err *e)
{
    *p = (struct parser){.text = text, .at = text, .lookup = lookup, .ctx = ctx, .e = e};
}

static int finish(struct parser *p)
{
    skip_space(p);
    return *p->at ? syntax(p, "unexpected text") : 0;
}

int lab_expr_eval(const char *text, lab_lookup_fn lookup, void *ctx, double *value,
                  struct err *e)
{
    struct parser p;
    start(&p, text, lookup, ctx, e);
    TRY(expr(&p, value));
    return finish(&p);
}

int lab_check_eval(const char *text, lab_lookup_fn lookup, void *ctx, struct lab_check *out,
                   struct err *e)
{
    struct parser p;
    start(&p, text, lookup, ctx, e);
    memset(out, 0, sizeof *out);
    TRY(expr(&p, &out->lhs));
    skip_space(&p);
    static const char *const ops[] = {"<=", ">=", "==", "!=", "<", ">"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0] && !out->op[0]; i++)
        if (!strncmp(p.at, ops[i], strlen(ops[i]))) {
            snprintf(out->op, sizeof out->op, "%s", ops[i]);
            p.at += strlen(ops[i]);
        }
    if (!out->op[0]) return syntax(&p, "a comparison (<, <=, >, >=, ==, !=) expected");
    TRY(expr(&p, &out->rhs));
    TRY(finish(&p));
    double l = out->lhs, r = out->rhs;
    /* NaN compares false everywhere, "!=" included: a missing figure never
     * passes a check. */
    bool any_nan = isnan(l) || isnan(r);
    out->holds = !any_nan && (!strcmp(out->op, "<")    ? l < r
                              : !strcmp(out->op, "<=") ? l <= r
                              : !strcmp(out->op, ">")  ? l > r
                              : !strcmp(out->op, ">=") ? l >= r
                              : !strcmp(out->op, "==") ? l == r
                                                       : l != r);
    return 0;
}

/* Prints v by fmt (".2f", ".0%", ".3g"; NULL = ".3g") to f. */
static int print_value(FILE *f, double v, const char *fmt, const char *tmpl, struct err *e)
{
    if (!fmt) fmt = ".3g";
    char *end;
    long digits = fmt[0] == '.' ? strtol(fmt + 1, &end, 10) : -1;
    if (digits < 0 || digits > 12 || end == fmt + 1 || (end[0] != 'f' && end[0] != 'g' &&
                                                         end[0] != '%') || end[1])
        return err_set(e, ERR_INPUT, "'%s': format ':%s' is not .Nf, .Ng or .N%%", tmpl, fmt);
    if (!isfinite(v)) {   /* NaN, or a sum or product past a double's range */
        fputs("n/a", f);
        return 0;
    }
    if (end[0] == '%')
        fprintf(f, "%.*f%%", (int)digits, 100 * v);
    else if (end[0] == 'f')
        fprintf(f, "%.*f", (int)digits, v);
    else
        fprintf(f, "%.*g", (int)digits, v);
    return 0;
}

/* One placeholder's inside, "EXPR" or "EXPR:FMT", printed to f. */
static int render_one(FILE *f, char *inside, const char *tmpl, lab_lookup_fn lookup, void *ctx,
                      struct err *e)
{
    char *colon = strrchr(inside, ':');
    const char *fmt = NULL;
    if (colon && colon[1] == '.') {
        *colon = '\0';
        fmt = colon + 1;
    }
    double v;
    TRY(lab_expr_eval(inside, lookup, ctx, &v, e));
    return print_value(f, v, fmt, tmpl, e);
}

int lab_render(const char *tmpl, lab_lookup_fn lookup, void *ctx, char **out, struct err *e)
{
    *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(out, &size);
    if (!f) return err_set(e, ERR_NOMEM, "out of memory");
    int rc = 0;
    for (const char *s = tmpl; *s && rc == 0; s++) {
        if (*s != '{') {
            fputc(*s, f);
            continue;
        }
        const char *close = strchr(s, '}');
        if (!close) {
            rc = err_set(e, ERR_INPUT, "'%s': '{' without its '}'", tmpl);
            break;
        }
        char inside[NAME_BYTES * 2];
        if ((size_t)(close - s - 1) >= sizeof inside) {
            rc = err_set(e, ERR_INPUT, "'%s': a placeholder too long", tmpl);
            break;
        }
        memcpy(inside, s + 1, (size_t)(close - s - 1));
        inside[close - s - 1] = '\0';
        rc = render_one(f, inside, tmpl, lookup, ctx, e);
        s = close;
    }
    if (fclose(f) != 0 && rc == 0) rc = err_set(e, ERR_NOMEM, "out of memory");
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

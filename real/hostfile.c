/* --hostfile checked: Open MPI's hostfile syntax, bounded lines. */
#include "hostfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/lines.h"

/* The most slots a line may give: --devices' own bound. */
#define MOST_SLOTS 1048576

/* A host name or address: letters, digits, '.', '-', '_', and ':' and '[]'
 * of IPv6 addresses; not starting with '-' (no name does, RFC 1123, and
 * mpirun and ssh would read "-1" as an option). */
static bool is_host_name(const char *w)
{
    if (!*w || *w == '-') return false;
    for (const char *c = w; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr(".-_:[]", *c)) return false;
    return true;
}

/* "N" as 1 .. MOST_SLOTS into *n. */
static bool parse_count(const char *text, long long *n)
{
    if (!isdigit((unsigned char)*text)) return false;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (errno || *end || v < 1 || v > MOST_SLOTS) return false;
    *n = v;
    return true;
}

/* One line's words after the host: slots=N, max_slots=N, max-slots=N. */
static int parse_options(char *rest, long long *slots, const char *where, struct err *e)
{
    for (char *w = strtok(rest, " \t\r"); w; w = strtok(NULL, " \t\r")) {
        char *eq = strchr(w, '=');
        long long n = 0;
        if (!eq || !parse_count(eq + 1, &n))
            return err_set(e, ERR_INPUT, "--hostfile %s: '%.40s' is not KEY=N (N a whole number "
                           "from 1 to %d)", where, w, MOST_SLOTS);
        *eq = '\0';
        if (!strcmp(w, "slots")) *slots = n;
        else if (strcmp(w, "max_slots") && strcmp(w, "max-slots"))
            return err_set(e, ERR_INPUT, "--hostfile %s: '%.40s' is not an option strata knows "
                           "(slots=N, max_slots=N)", where, w);
    }
    return 0;
}

static int check_line(char *line, const char *where, struct hostfile_summary *out, struct err *e)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *host = line + strspn(line, " \t\r");
    if (!*host) return 0;   /* blank or a comment */
    char *rest = host + strcspn(host, " \t\r");
    if (*rest) *rest++ = '\0';
    long long slots = 0;
    /* MPICH's host:N; an IPv6 address in brackets keeps its colons */
    char *colon = host[0] == '[' ? NULL : strrchr(host, ':');
    if (colon && strchr(host, ':') == colon) {
        if (!parse_count(colon + 1, &slots))
            return err_set(e, ERR_INPUT, "--hostfile %s: '%.60s': the count after ':' is not a "
                           "whole number from 1 to %d", where, host, MOST_SLOTS);
        *colon = '\0';
    }
    if (!is_host_name(host))
        return err_set(e, ERR_INPUT, "--hostfile %s: '%.60s' is not a host name or address "
                       "(letters, digits, '.', '-', '_'; not starting with '-')", where, host);
    TRY(parse_options(rest, &slots, where, e));
    out->n_lines++;
    if (slots > 0) out->n_slots += slots;
    else out->n_without_slots++;
    return 0;
}

int hostfile_check(const char *path, struct hostfile_summary *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    if (!path || !*path) return err_set(e, ERR_INPUT, "--hostfile: no file named");
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(e, ERR_INPUT, "--hostfile %s: cannot read it: %s", path, strerror(errno));
    if (lines_is_directory(f)) {
        fclose(f);
        return err_set(e, ERR_INPUT, "--hostfile %s: a directory, not a file of host lines "
                       "('NAME slots=N')", path);
    }
    struct lines r;
    lines_open(&r, f);
    char *line = NULL;
    int rc = 0;
    while (rc == 0 && (rc = lines_next(&r, &line, e)) > 0) {
        char where[256];
        snprintf(where, sizeof where, "%.200s:%ld", path, r.lineno);
        rc = check_line(line, where, out, e);
    }
    if (rc < 0 && !strstr(e->msg, "--hostfile")) err_prefix(e, "--hostfile %s:%ld", path, r.lineno);
    fclose(f);
    TRY(rc);
    if (out->n_lines == 0)
        return err_set(e, ERR_INPUT, "--hostfile %s: lists no host (one a line: HOST "
                       "[slots=N])", path);
    return 0;
}

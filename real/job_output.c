/* Open MPI's death banners out of the launcher's stderr (job_output.h). */
#include "job_output.h"

#include <stdlib.h>
#include <string.h>

/* A held banner larger than this is no banner of mpirun's: passed on. */
#define MAX_BLOCK_BYTES 65536

/* What Open MPI 4 (orterun) and 5 (prterun) say when a process dies or
 * exits abnormally: strata names the rank and the cause itself. */
static const char *const death_phrases[] = {
    "noticed that process rank",
    "Primary job  terminated normally",
    "Primary job terminated normally",
    "has exited due to process rank",
    "detected that one or more processes exited with non-zero status",
};

bool job_output_is_death_banner(const char *text)
{
    for (size_t i = 0; i < sizeof death_phrases / sizeof death_phrases[0]; i++)
        if (strstr(text, death_phrases[i])) return true;
    return false;
}

void job_output_init(struct job_output *o, FILE *to)
{
    memset(o, 0, sizeof *o);
    o->to = to;
}

/* Appends n bytes to *buf (len, cap); false when memory ran out. */
static bool append(char **buf, size_t *len, size_t *cap, const char *text, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t want = *cap ? *cap : 256;
        while (want < *len + n + 1) want *= 2;
        char *grown = realloc(*buf, want);
        if (!grown) return false;
        *buf = grown;
        *cap = want;
    }
    memcpy(*buf + *len, text, n);
    *len += n;
    (*buf)[*len] = '\0';
    return true;
}

static void pass(struct job_output *o, const char *text, size_t n)
{
    fwrite(text, 1, n, o->to);
}

/* A line of ten dashes or more and nothing else: a banner's edge. */
static bool is_dash_line(const char *line, size_t n)
{
    size_t dashes = 0;
    while (dashes < n && line[dashes] == '-') dashes++;
    return dashes >= 10 && (dashes == n || (dashes + 1 == n && line[dashes] == '\n'));
}

static void end_block(struct job_output *o, bool is_closed)
{
    if (is_closed && job_output_is_death_banner(o->block)) o->n_dropped++;
    else pass(o, o->block, o->block_len);
    o->block_len = 0;
    o->is_in_block = false;
}

/* One whole line (with its '\n'). */
static void take_line(struct job_output *o, const char *line, size_t n)
{
    bool is_edge = !o->is_line_passed && is_dash_line(line, n);
    o->is_line_passed = false;
    if (!o->is_in_block) {
        if (!is_edge) {
            pass(o, line, n);
            return;
        }
        o->is_in_block = true;
        o->block_len = 0;
        if (!append(&o->block, &o->block_len, &o->block_cap, line, n)) {
            o->is_in_block = false;
            pass(o, line, n);
        }
        return;
    }
    bool is_held = append(&o->block, &o->block_len, &o->block_cap, line, n);
    if (!is_held || o->block_len > MAX_BLOCK_BYTES) {
        end_block(o, false);
        if (!is_held) pass(o, line, n);
        return;
    }
    if (is_edge) end_block(o, true);
}

void job_output_feed(struct job_output *o, const char *text, size_t n)
{
    for (size_t at = 0; at < n;) {
        const char *nl = memchr(text + at, '\n', n - at);
        size_t len = nl ? (size_t)(nl - (text + at)) + 1 : n - at;
        if (!append(&o->line, &o->line_len, &o->line_cap, text + at, len)) {
            /* no memory to hold it: pass it on as it is */
            pass(o, text + at, len);
            at += len;
            continue;
        }
        at += len;
        if (nl) {
            take_line(o, o->line, o->line_len);
            o->line_len = 0;
        }
    }
    /* text outside a banner goes on now (a progress line has no newline
     * for a long while); a line of dashes may be a banner's start: held */
    if (!o->is_in_block && o->line_len > 0 && o->line[0] != '-') {
        pass(o, o->line, o->line_len);
        o->line_len = 0;
        o->is_line_passed = true;
    }
    fflush(o->to);
}

void job_output_flush(struct job_output *o)
{
    if (o->is_in_block) {
        if (o->line_len)
            append(&o->block, &o->block_len, &o->block_cap, o->line, o->line_len);
        o->line_len = 0;
        end_block(o, false);
    }
    if (o->line_len) pass(o, o->line, o->line_len);
    o->line_len = 0;
    fflush(o->to);
}

void job_output_release(struct job_output *o)
{
    free(o->line);
    free(o->block);
    memset(o, 0, sizeof *o);
}

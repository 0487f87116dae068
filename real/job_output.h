/* The launcher's stderr, read by the supervisor of `strata real` through a
 * pipe (real/job_watch.h) and passed on to strata's own stderr, in order,
 * less Open MPI's banners about a rank's death that strata reports itself
 * ("mpirun noticed that process rank 1 ... exited on signal 9"): the user
 * sees strata's message naming the rank and the cause, not mpirun's first.
 *
 * A banner is the text between two lines of dashes; it is held until its
 * closing line, then dropped when it speaks of a death or an abnormal exit
 * of a process, else passed on whole. Text outside a banner is passed on as
 * it comes, without waiting for its newline, so that the ranks' progress
 * line ("\rstep 12/400 ...") still moves on a terminal. */
#ifndef STRATA_JOB_OUTPUT_H
#define STRATA_JOB_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct job_output {
    FILE *to;                /* where the text goes (stderr) */
    char *line;              /* the line read so far, not yet passed on */
    size_t line_len, line_cap;
    bool is_line_passed;     /* part of this line went on already: never a dash line */
    char *block;             /* a banner being held, from its opening dashes */
    size_t block_len, block_cap;
    bool is_in_block;
    int n_dropped;           /* banners dropped so far */
};

void job_output_init(struct job_output *o, FILE *to);
/* n bytes of the launcher's stderr. */
void job_output_feed(struct job_output *o, const char *text, size_t n);
/* The end of the text: what is held goes on (an unclosed banner whole). */
void job_output_flush(struct job_output *o);
void job_output_release(struct job_output *o);

/* Whether the banner `text` is one of those about a death strata reports. */
bool job_output_is_death_banner(const char *text);

#endif

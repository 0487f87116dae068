/* tests for real/job_output.c: the launcher's stderr passed on less Open
 * MPI's death banners, in order, and a progress line passed on before its
 * newline. The banners are Open MPI 4.1's, as mpirun printed them here
 * when a rank was killed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../real/job_output.h"
#include "helpers.h"

#define DASHES "--------------------------------------------------------------------------\n"

static const char death_banner[] =
    DASHES "Primary job  terminated normally, but 1 process returned\n"
    "a non-zero exit code. Per user-direction, the job has been aborted.\n" DASHES
    DASHES "mpirun noticed that process rank 1 with PID 0 on node box exited on signal 9 "
    "(Killed).\n" DASHES;

static const char other_banner[] =
    DASHES "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\n"
    "with errorcode 1.\n" DASHES;

/* What o passes on for text fed in pieces of `piece` bytes. */
static char *through(const char *text, size_t piece, int *n_dropped)
{
    struct test_capture c;
    struct job_output o;
    job_output_init(&o, test_capture_open(&c));
    for (size_t at = 0, n = strlen(text); at < n; at += piece)
        job_output_feed(&o, text + at, n - at < piece ? n - at : piece);
    job_output_flush(&o);
    if (n_dropped) *n_dropped = o.n_dropped;
    job_output_release(&o);
    return test_capture_close(&c);
}

Test(job_output, death_banners_are_dropped_and_the_rest_kept_in_order)
{
    char text[4096];
    snprintf(text, sizeof text, "before\n%s%smiddle\n%safter\n", death_banner, other_banner,
             death_banner);
    char want[4096];
    snprintf(want, sizeof want, "before\n%smiddle\nafter\n", other_banner);
    /* whole, and a byte at a time: the pipe cuts the text anywhere */
    size_t pieces[] = {strlen(text), 1, 7};
    for (size_t i = 0; i < 3; i++) {
        int dropped = 0;
        char *out = through(text, pieces[i], &dropped);
        cr_expect_str_eq(out, want, "in pieces of %zu", pieces[i]);
        cr_expect_eq(dropped, 4, "2 banners of 2 blocks each");
        free(out);
    }
}

Test(job_output, progress_line_goes_on_before_its_newline)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    struct job_output o;
    job_output_init(&o, f);
    const char *step = "\rstep 12/400  epoch 1  loss 2.3000";
    job_output_feed(&o, step, strlen(step));
    fflush(f);
    cr_expect_str_eq(out, step, "a progress line waits for no newline");
    job_output_feed(&o, "\rstep 13/400\n", 13);
    job_output_flush(&o);
    job_output_release(&o);
    fclose(f);
    free(out);
}

Test(job_output, unclosed_banner_and_a_line_of_dashes_in_text_are_kept)
{
    const char *text = "a-----------b\n" DASHES "mpirun noticed that process rank 1 exited";
    char *out = through(text, 5, NULL);
    cr_expect_str_eq(out, text, "an unclosed banner is not judged: passed on whole");
    free(out);
}

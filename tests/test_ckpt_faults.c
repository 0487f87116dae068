/* Faults in a real run's checkpoint writes (issue 15): checkpoints go
 * through core/fileio (temporary, fsync, rename; the step's MANIFEST last),
 * so an injected fault in the second checkpoint must leave the first one
 * whole, no temporary behind, a message naming the file, exit 1, and
 * --resume must continue from the first. Kept out of test_faults, the
 * suite's slowest test: three short runs.
 *
 * How the fault lands: STRATA_FAULT=KIND:3 is read by every process. With
 * --checkpoint-every 10 on 2 ranks, rank 0 makes rank-0.ckpt then MANIFEST
 * at step 10 (calls 1 and 2 of each kind), so its call 3 is step 20's
 * rank-0.ckpt; rank 1 makes only 2 calls. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"

TEST_SUITE_WITH_TMP_DIR(ckpt_faults, .timeout = 180);

#define REAL_RUN "real", "--np", "2", "--steps", "20", "--checkpoint-every", "10", \
                 "--data", "synthetic", "--model", "mlp:784-32-10", "--seed", "5"

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Temporaries (".tmp.") anywhere under dir, one level of subdirectories. */
static int temporaries_in(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char sub[512];
        snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
        if (strstr(de->d_name, ".tmp.")) n++;
        struct stat st;
        if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) n += temporaries_in(sub);
    }
    closedir(d);
    return n;
}

static void expect_first_checkpoint_survives(const char *kind)
{
    char dir[256], fault[32], path[512];
    snprintf(dir, sizeof dir, "%s/ck-%s", test_tmp_dir, kind);
    snprintf(fault, sizeof fault, "%s:3", kind);
    setenv("STRATA_FAULT", fault, 1);
    struct run r = RUN(REAL_RUN, "--checkpoint-dir", dir);
    unsetenv("STRATA_FAULT");
    cr_expect_eq(r.status, 1, "%s: exit %d (1: a run that failed); stderr:\n%s", kind, r.status,
                 r.err);
    cr_expect(strstr(r.err, "step-0000000020/rank-0.ckpt"),
              "%s: the message names the checkpoint file; stderr:\n%s", kind, r.err);
    /* said once, by the rank that failed: every rank agreed on the error,
     * and rank 1 said it again as "rank 1: rank 0: ..." */
    const char *first = strstr(r.err, "step-0000000020/rank-0.ckpt");
    cr_expect(first && !strstr(first + 1, "step-0000000020/rank-0.ckpt"),
              "%s: the message is said more than once; stderr:\n%s", kind, r.err);
    run_free(&r);

    const char *whole[] = {"MANIFEST", "rank-0.ckpt", "rank-1.ckpt"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/step-0000000010/%s", dir, whole[i]);
        cr_expect(exists(path), "%s: step 10's %s is gone", kind, whole[i]);
    }
    snprintf(path, sizeof path, "%s/step-0000000020/MANIFEST", dir);
    cr_expect_not(exists(path), "%s: step 20 claims to be whole", kind);
    snprintf(path, sizeof path, "%s/step-0000000020/rank-0.ckpt", dir);
    cr_expect_not(exists(path), "%s: the failed file is there", kind);
    /* nor rank 1's, written whole beside it: nothing of step 20 is left */
    snprintf(path, sizeof path, "%s/step-0000000020", dir);
    cr_expect_not(exists(path), "%s: the failed checkpoint's directory is left", kind);
    cr_expect_eq(temporaries_in(dir), 0, "%s: a temporary was left in %s", kind, dir);
}

Test(ckpt_faults, a_failed_write_keeps_the_previous_checkpoint_and_resume_uses_it)
{
    expect_first_checkpoint_survives("write");
    char dir[256];
    snprintf(dir, sizeof dir, "%s/ck-write", test_tmp_dir);
    struct run r = RUN(REAL_RUN, "--resume", dir);
    cr_expect_eq(r.status, 0, "resume: exit %d; stderr:\n%s", r.status, r.err);
    cr_expect(strstr(r.out, "(steps 11 to 20: resumed at step 10)"),
              "resume did not start at step 10:\n%s", r.out);
    /* its loss curve from step 1: the checkpoint carried steps 1 to 10 */
    cr_expect(strstr(r.out, "at step 1,"), "%s", r.out);
    run_free(&r);
}

Test(ckpt_faults, a_failed_rename_keeps_the_previous_checkpoint)
{
    expect_first_checkpoint_survives("rename");
}

/* `strata sweep -j N` against `-j 1` (issue 13's target: -j 2 over 16
 * simulated points at least 1.7 times faster, the same bytes). Run by hand,
 * not by ctest:
 *
 *   build/sweep_speed                   -j 2, the strata beside this program
 *   build/sweep_speed 4                 -j 4
 *   build/sweep_speed 2 path/to/strata
 *
 * The sweep: 4 strategies x devices 2, 4, 8, 12 of gpt2-small, 16 points
 * (and the one-device baseline). Each side runs the whole command (start-up,
 * the points, the table, --json); they alternate, 3 runs each, and the
 * medians are compared. Wall time from CLOCK_MONOTONIC around each run; the
 * CPU time the run used (its rusage) beside it, and the load average before
 * and after: on a machine others use, wall time over CPU time shows how much
 * of a core each process got. stdout and the --json file of every run must
 * equal the first -j 1 run's, byte for byte. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../../real/launch.h"

#define REPEATS 3

static const char *const sweep_args[] = {
    "sweep", "--strategies", "mirrored,ps-sync,ps-async,pipeline-1f1b", "--devices", "2,4,8,12",
    "--model", "gpt2-small", "--batch", "480", "--steps", "20000",
};
#define N_SWEEP_ARGS (sizeof sweep_args / sizeof *sweep_args)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* User + system seconds of the children waited for so far. */
static double children_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* "1.02 1.50 2.40": /proc/loadavg's 1, 5 and 15 minute averages. */
static void load_average(char *buf, size_t n)
{
    double a[3];
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf %lf %lf", &a[0], &a[1], &a[2]) == 3)
        snprintf(buf, n, "%.2f %.2f %.2f", a[0], a[1], a[2]);
    else
        snprintf(buf, n, "unknown");
    if (f) fclose(f);
}

/* The bytes of path, or NULL (a message printed). */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long len = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len + 1)) && fread(buf, 1, (size_t)len, f) == (size_t)len) {
        *n = (size_t)len;
        fclose(f);
        return buf;
    }
    fprintf(stderr, "sweep_speed: cannot read %s\n", path);
    free(buf);
    if (f) fclose(f);
    return NULL;
}

/* Runs strata sweep -j jobs, stdout and --json into dir; wall and CPU
 * seconds. 0, or 1 when it did not run or exit 0. */
static int run_sweep(const char *strata, int jobs, const char *dir, int i, double *wall_s,
                     double *cpu_s, char *out_path, char *json_path)
{
    char j[16];
    snprintf(j, sizeof j, "%d", jobs);
    snprintf(out_path, 512, "%s/j%d-%d.out", dir, jobs, i);
    snprintf(json_path, 512, "%s/j%d-%d.json", dir, jobs, i);
    const char *argv[N_SWEEP_ARGS + 8] = {strata};
    size_t n = 1;
    for (size_t k = 0; k < N_SWEEP_ARGS; k++) argv[n++] = sweep_args[k];
    argv[n++] = "-j";
    argv[n++] = j;
    argv[n++] = "--json";
    argv[n++] = json_path;
    argv[n] = NULL;
    struct err e = {0};
    int code = -1;
    double cpu0 = children_cpu_s(), t0 = now_s();
    int rc = launch_run((char **)argv, out_path, &code, &e);
    *wall_s = now_s() - t0;
    *cpu_s = children_cpu_s() - cpu0;
    if (rc < 0 || code != 0) {
        fprintf(stderr, "sweep_speed: %s -j %d: %s\n", strata, jobs,
                rc < 0 ? e.msg : "exited non-zero");
        return 1;
    }
    return 0;
}

static bool same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    bool same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int jobs = argc > 1 ? atoi(argv[1]) : 2;
    char strata[LAUNCH_PATH_BYTES], self[LAUNCH_PATH_BYTES];
    struct err e = {0};
    if (jobs < 2) {
        fprintf(stderr, "usage: sweep_speed [JOBS (2 or more)] [STRATA]\n");
        return 2;
    }
    if (argc > 2) {
        snprintf(strata, sizeof strata, "%s", argv[2]);
    } else {
        if (launch_self_path(argv[0], self, sizeof self, &e) < 0) {
            fprintf(stderr, "sweep_speed: %s\n", e.msg);
            return 1;
        }
        char *slash = strrchr(self, '/');
        snprintf(strata, sizeof strata, "%.*s/strata", slash ? (int)(slash - self) : 1,
                 slash ? self : ".");
    }
    char dir[] = "/tmp/strata-sweep-speed-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("sweep_speed: mkdtemp");
        return 1;
    }
    char load_before[128], load_after[128], out[512], json[512], ref_out[512], ref_json[512];
    double wall[2][REPEATS], cpu[2][REPEATS];
    bool same = true;
    int failed = 0;
    load_average(load_before, sizeof load_before);
    printf("strata sweep:");
    for (size_t k = 0; k < N_SWEEP_ARGS; k++) printf(" %s", sweep_args[k]);
    printf("\n(16 points and the baseline), -j 1 and -j %d alternating, %d runs each, %ld online "
           "cores\n", jobs, REPEATS, sysconf(_SC_NPROCESSORS_ONLN));
    for (int i = 0; i < REPEATS && !failed; i++)
        for (int side = 0; side < 2 && !failed; side++) {
            int j = side ? jobs : 1;
            failed = run_sweep(strata, j, dir, i, &wall[side][i], &cpu[side][i], out, json);
            if (failed) break;
            printf("  -j %d: %.3f s wall, %.3f s CPU\n", j, wall[side][i], cpu[side][i]);
            if (i == 0 && side == 0) {
                snprintf(ref_out, sizeof ref_out, "%s", out);
                snprintf(ref_json, sizeof ref_json, "%s", json);
            } else {
                bool ok = same_file(ref_out, out) && same_file(ref_json, json);
                if (!ok) printf("  stdout or --json of this run differ from -j 1's\n");
                same &= ok;
            }
        }
    load_average(load_after, sizeof load_after);
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    if (system(rm) != 0) fprintf(stderr, "sweep_speed: could not remove %s\n", dir);
    if (failed) return 1;
    qsort(wall[0], REPEATS, sizeof wall[0][0], cmp_double);
    qsort(wall[1], REPEATS, sizeof wall[1][0], cmp_double);
    double ratio = wall[0][REPEATS / 2] / wall[1][REPEATS / 2];
    printf("median wall: -j 1 %.3f s, -j %d %.3f s: %.2fx faster (target for -j 2: 1.7x)\n",
           wall[0][REPEATS / 2], jobs, wall[1][REPEATS / 2], ratio);
    printf("bytes: stdout and --json %s\n", same ? "identical in every run" : "DIFFER");
    printf("load average (1, 5, 15 min): %s before, %s after\n", load_before, load_after);
    return same ? 0 : 1;
}

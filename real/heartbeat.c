/* A rank's heartbeat file (heartbeat.h): written with pwrite at fixed
 * offsets, so that a step costs one system call and no allocation. */
#include "heartbeat.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "../core/straggler.h"
#include "heartbeat_net.h"
#include "sleep.h"

struct heartbeat {
    int fd;                        /* -1 outside a supervised job, or over the network */
    struct hbnet_link *net;        /* a multi-host job's (heartbeat_net.h); NULL otherwise */
    struct heartbeat_record rec;
    struct failure_spec fail;      /* for this rank only (is_set false otherwise) */
    char fail_text[64];
    int64_t hang_step;             /* STRATA_TEST_HANG for this rank: its step, or */
    bool is_hang_set, hangs_finishing;   /* ... the gathering */
    double hang_late_s;            /* asleep before it says it started hang_step */
    double save_late_s;            /* "R@save+S": asleep in the first checkpoint write */
};

double heartbeat_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* STRATA_TEST_HANG (heartbeat.h), when it names this rank. */
static void read_test_hang(struct heartbeat *hb, int rank)
{
    const char *text = getenv(HEARTBEAT_TEST_HANG_ENV);
    if (!text || !*text) return;
    char *end = NULL;
    long r = strtol(text, &end, 10);
    if (end == text || *end != '@' || r != rank) return;
    const char *when = end + 1;
    if (!strcmp(when, "finish")) {
        hb->is_hang_set = hb->hangs_finishing = true;
        return;
    }
    if (!strncmp(when, "save+", 5)) {
        double late_s = strtod(when + 5, &end);
        if (end != when + 5 && !*end && late_s >= 0 && late_s <= 60) hb->save_late_s = late_s;
        return;
    }
    long long step = strtoll(when, &end, 10);
    double late_s = 0;
    if (end != when && *end == '+') {
        const char *late = end + 1;
        late_s = strtod(late, &end);
        if (end == late || !(late_s >= 0 && late_s <= 60)) return;
    }
    if (end != when && !*end && step >= 0) {
        hb->is_hang_set = true;
        hb->hang_step = step;
        hb->hang_late_s = late_s;
    }
}

/* A hang as tests need one: asleep for ever, neither stopped nor dead. */
static void hang(void)
{
    for (;;) sleep(3600);
}

/* Tied to the launcher (heartbeat.h): SIGKILL when the parent dies; dead
 * already when the supervisor is. */
static void tie_to_supervisor(void)
{
    const char *text = getenv(HEARTBEAT_SUPERVISOR_ENV);
    long pid = text ? strtol(text, NULL, 10) : 0;
    if (pid <= 0) return;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) raise(SIGKILL);
}

/* bytes [lo, hi) of the record to the file; a failed write is ignored: the
 * run does not depend on being watched, and a missing beat at worst makes
 * the watchdog judge on older news. */
static void put(struct heartbeat *hb, size_t lo, size_t hi)
{
    if (hb->net) {   /* the network's unit is the whole record */
        hbnet_link_send(hb->net, &hb->rec, hb->rec.state == HEARTBEAT_DONE ||
                                               hb->rec.state == HEARTBEAT_DYING);
        return;
    }
    if (hb->fd < 0) return;
    ssize_t w = pwrite(hb->fd, (const char *)&hb->rec + lo, hi - lo, (off_t)lo);
    (void)w;
}

static void put_all(struct heartbeat *hb)
{
    put(hb, 0, sizeof hb->rec);
}

int heartbeat_open(int rank, const char *fail, struct heartbeat **out, struct err *e)
{
    *out = NULL;
    struct heartbeat *hb = XCALLOC(e, 1, sizeof *hb);
    if (!hb) return ERR_NOMEM;
    hb->fd = -1;
    int rc = failure_parse(fail ? fail : "", &hb->fail, e);
    if (rc < 0) {
        free(hb);
        return rc;
    }
    if (hb->fail.rank != rank) hb->fail.is_set = false;
    snprintf(hb->fail_text, sizeof hb->fail_text, "%s", fail ? fail : "");
    hb->rec = (struct heartbeat_record){.magic = HEARTBEAT_MAGIC, .pid = (int32_t)getpid(),
                                        .rank = rank, .state = HEARTBEAT_STARTING, .step = -1,
                                        .progress_s = heartbeat_clock_s()};
    /* a multi-host job's supervisor is reached over the network (its
     * address forwarded by mpirun), and the connection ties the rank to it */
    const char *endpoint = getenv(HEARTBEAT_NET_ENV);
    const char *dir = getenv(HEARTBEAT_DIR_ENV);
    if (endpoint && *endpoint) {
        rc = hbnet_link_open(endpoint, &hb->net, e);
        if (rc < 0) {
            free(hb);
            return rc;
        }
        put_all(hb);
        read_test_hang(hb, rank);
    } else if (dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rank-%d", dir, rank);
        hb->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (hb->fd < 0) {
            rc = err_set(e, ERR_IO, "%s: cannot write this rank's heartbeat: %s", path,
                         strerror(errno));
            free(hb);
            return rc;
        }
        put_all(hb);
        tie_to_supervisor();
        read_test_hang(hb, rank);
    }
    *out = hb;
    return 0;
}

void heartbeat_start(struct heartbeat *hb)
{
    hb->rec.start_s = heartbeat_clock_s();
    hb->rec.progress_s = hb->rec.start_s;
    put_all(hb);
}

double heartbeat_start_s(const struct heartbeat *hb)
{
    return hb->rec.start_s;
}

/* --fail's moment: this step, or the first step at or after its time. */
static bool is_doomed(const struct heartbeat *hb, int64_t step, double now_s)
{
    if (!hb->fail.is_set) return false;
    return hb->fail.step >= 0 ? step == hb->fail.step : now_s >= hb->fail.time_s;
}

void heartbeat_step(struct heartbeat *hb, int64_t step, double now_s)
{
    if (hb->is_hang_set && !hb->hangs_finishing && step == hb->hang_step) sleep_s(hb->hang_late_s);
    hb->rec.step = step;
    hb->rec.progress_s = heartbeat_clock_s();
    if (is_doomed(hb, step, now_s)) {
        hb->rec.state = HEARTBEAT_DYING;
        snprintf(hb->rec.words, sizeof hb->rec.words, "killed by --fail %s", hb->fail_text);
        put_all(hb);
        /* as abruptly as a crash: no MPI_Finalize, no atexit, no flush */
        raise(SIGKILL);
    }
    hb->rec.state = HEARTBEAT_RUNNING;
    put(hb, offsetof(struct heartbeat_record, state), offsetof(struct heartbeat_record, start_s));
    if (hb->is_hang_set && !hb->hangs_finishing && step == hb->hang_step) hang();
}

void heartbeat_saving(struct heartbeat *hb)
{
    if (!hb) return;
    hb->rec.state = HEARTBEAT_SAVING;
    hb->rec.progress_s = heartbeat_clock_s();
    put(hb, offsetof(struct heartbeat_record, state), offsetof(struct heartbeat_record, start_s));
    if (hb->save_late_s > 0) {
        sleep_s(hb->save_late_s);
        hb->save_late_s = 0;
    }
}

void heartbeat_checkpointed(struct heartbeat *hb, double checkpoint_s)
{
    if (!hb) return;
    /* the save is over, and was progress: the step's watch resumes */
    hb->rec.checkpoint_s = checkpoint_s;
    hb->rec.state = HEARTBEAT_RUNNING;
    hb->rec.progress_s = heartbeat_clock_s();
    put(hb, offsetof(struct heartbeat_record, state), offsetof(struct heartbeat_record, words));
}

void heartbeat_beat(struct heartbeat *hb)
{
    if (!hb || (hb->fd < 0 && !hb->net)) return;
    hb->rec.progress_s = heartbeat_clock_s();
    put(hb, offsetof(struct heartbeat_record, progress_s),
        offsetof(struct heartbeat_record, start_s));
}

void heartbeat_finishing(struct heartbeat *hb)
{
    bool is_first = hb->rec.state != HEARTBEAT_FINISHING;
    hb->rec.state = HEARTBEAT_FINISHING;
    hb->rec.progress_s = heartbeat_clock_s();
    put(hb, offsetof(struct heartbeat_record, state), offsetof(struct heartbeat_record, start_s));
    if (is_first && hb->hangs_finishing) hang();
}

void heartbeat_say(struct heartbeat *hb, const char *words)
{
    if (!hb) return;
    hb->rec.state = HEARTBEAT_DONE;
    snprintf(hb->rec.words, sizeof hb->rec.words, "%s", words);
    put_all(hb);
}

void heartbeat_close(struct heartbeat *hb)
{
    if (!hb) return;
    if (hb->fd >= 0 || hb->net) {
        hb->rec.state = HEARTBEAT_DONE;
        put(hb, offsetof(struct heartbeat_record, state),
            offsetof(struct heartbeat_record, start_s));
    }
    if (hb->fd >= 0) close(hb->fd);
    hbnet_link_close(hb->net);
    free(hb);
}

int heartbeat_read(const char *dir, int rank, struct heartbeat_record *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d", dir, rank);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    /* A read may meet a write half done: two alike reads in a row make a
     * record that was not being written. */
    struct heartbeat_record a, b;
    int rc = -1;
    for (int tries = 0; tries < 4 && rc < 0; tries++) {
        if (pread(fd, &a, sizeof a, 0) != (ssize_t)sizeof a) break;
        if (pread(fd, &b, sizeof b, 0) != (ssize_t)sizeof b) break;
        if (!memcmp(&a, &b, sizeof a) && a.magic == HEARTBEAT_MAGIC) rc = 0;
    }
    close(fd);
    if (rc == 0) {
        *out = a;
        out->words[sizeof out->words - 1] = '\0';
    }
    return rc;
}

/* Tasks in forked worker processes (jobs.h): the machinery `strata sweep -j`
 * and `strata compare -j` share.
 *
 * A worker takes the next place of the order from a counter in shared
 * memory, runs that task and writes its message down its own pipe, framed
 * by its length. This process runs order[0] meanwhile (the workers'
 * messages wait in the pipes, a worker blocking once its pipe is full),
 * then reads the pipes as messages come and hands each to the caller's get,
 * which puts it into its task's slot: the assembled result is the one a run
 * in one process makes, whatever order the tasks ran and ended in.
 *
 * A task's fatal error lowers a bound in shared memory: tasks above it are
 * no longer run, tasks below it still are. So when the workers are done
 * every task below the lowest fatal one has run, and that error, returned,
 * is the one a run in one process meets. A worker that dies (a signal) is
 * an error naming its task. */
#define _GNU_SOURCE   /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobs.h"

/* Shared by this process and its workers (an anonymous shared mapping). */
struct shared {
    atomic_int next;         /* the next place in the order to take; n_tasks or more: none left */
    atomic_int stop_above;   /* the lowest task that failed fatally (n_tasks: none): higher
                              * tasks are skipped */
    atomic_int running[];    /* [n_jobs]: the task worker k holds, -1 when none */
};

struct worker {
    pid_t pid;               /* 0: not started or already waited for */
    int fd;                  /* the read end of its pipe; -1 when closed */
};

/* A message's frame: its length, then its bytes. */
typedef uint64_t frame_len;
#define MAX_MESSAGE_BYTES ((uint64_t)1 << 40)

/* This run's state in this process. */
struct pool {
    const struct jobs_tasks *jt;
    struct shared *sh;
    int at;                  /* the lowest task with a fatal error (n_tasks: of no task;
                              * n_tasks + 1: none) */
    struct err first;        /* its error */
    int done;                /* tasks whose results are here */
};

/* Writes all of buf[0..n); 0, or -1 with errno (EPIPE: the reader left). */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t k = write(fd, buf, n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        buf += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reads exactly n bytes unless the writer ends first: the count read. */
static size_t read_full(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    return got;
}

/* Lowers the bound of tasks still run to t (a fatal error at t). */
static void stop_tasks_above(struct shared *sh, int t)
{
    int was = atomic_load(&sh->stop_above);
    while (t < was && !atomic_compare_exchange_weak(&sh->stop_above, &was, t)) {}
}

/* A worker's life: the tasks of the order it takes, until none are left or
 * it cannot send a result; one that fails fatally is sent as such. Exits
 * with _exit, so nothing of this process's (stdio buffers, atexit handlers,
 * the sanitizer's leak check of memory it inherited) runs twice. */
static _Noreturn void work(const struct jobs_tasks *jt, struct shared *sh, int k, int fd)
{
    int status = 0;
    for (int i; status == 0 && (i = atomic_fetch_add(&sh->next, 1)) < jt->n_tasks;) {
        int t = jt->order[i];
        if (t > atomic_load(&sh->stop_above)) continue;
        atomic_store(&sh->running[k], t);
        struct err e = {0}, put = {0};
        jobs_bytes msg = {0};
        frame_len len = 0;
        int rc = jt->run(jt->ctx, t, &e);
        if (rc < 0) stop_tasks_above(sh, t);
        if (vec_reserve(&msg, sizeof len) < 0) {
            status = 1;
        } else {
            msg.len = sizeof len;
            if (jt->put(jt->ctx, t, rc < 0 ? &e : NULL, &msg, &put) < 0) {
                status = 1;
            } else {
                len = msg.len - sizeof len;
                memcpy(msg.items, &len, sizeof len);
                if (write_all(fd, msg.items, msg.len) < 0) status = 1;
            }
        }
        vec_free(&msg);
        atomic_store(&sh->running[k], -1);
    }
    close(fd);
    _exit(status);
}

/* Keeps the fatal error of the lowest task: (t, f); t n_tasks (an error of
 * no task: a pipe, a message) stops every task. */
static void keep_lowest(struct pool *p, int t, const struct err *f)
{
    stop_tasks_above(p->sh, t < p->jt->n_tasks ? t : -1);
    if (t < p->at) {
        p->at = t;
        p->first = *f;
    }
}

/* Worker k's pipe ended: waits for it; a death by signal, or an exit that
 * is not clean, is a fatal error at the task it held. */
static void reap(struct pool *p, struct worker *w, int k)
{
    const struct jobs_tasks *jt = p->jt;
    int status = 0, pid = (int)w->pid;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
    w->pid = 0;
    close(w->fd);
    w->fd = -1;
    int t = atomic_load(&p->sh->running[k]);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && t < 0) return;
    struct err f = {0};
    char what[160] = "no task";
    if (t >= 0) jt->describe(jt->ctx, t, what, sizeof what);
    if (WIFSIGNALED(status))
        err_set(&f, ERR_RUN, "%s worker %d (pid %d) was killed by signal %d (%s) while "
                "running %s (-j 1 runs the %s in one process)", jt->what, k + 1, pid,
                WTERMSIG(status), strsignal(WTERMSIG(status)), what, jt->what);
    else
        err_set(&f, ERR_RUN, "%s worker %d ended (exit status %d) while running %s: it "
                "could not send its result", jt->what, k + 1,
                WIFEXITED(status) ? WEXITSTATUS(status) : -1, what);
    keep_lowest(p, t >= 0 ? t : jt->n_tasks, &f);
}

/* One message from a worker (poll said its pipe is readable): into its
 * slot, or its fatal error kept; false when the pipe has ended. */
static bool receive(struct pool *p, struct worker *w)
{
    const struct jobs_tasks *jt = p->jt;
    frame_len len = 0;
    size_t got = read_full(w->fd, (char *)&len, sizeof len);
    if (got == 0) return false;
    struct err f = {0};
    char *msg = NULL;
    int t = jt->n_tasks;
    if (got < sizeof len || len > MAX_MESSAGE_BYTES) {
        err_set(&f, ERR_RUN, "a %s worker's message was cut short or malformed", jt->what);
    } else if (!(msg = malloc(len ? (size_t)len : 1))) {
        err_set(&f, ERR_NOMEM, "out of memory reading a %s worker's result", jt->what);
    } else if (read_full(w->fd, msg, (size_t)len) < len) {
        err_set(&f, ERR_RUN, "a %s worker's message was cut short", jt->what);
    } else if (jt->get(jt->ctx, msg, (size_t)len, &t, &f, &f) == 0 && !f.code) {
        if (jt->progress) jt->progress(jt->ctx, t, p->done);
        p->done++;
    }
    free(msg);
    if (f.code) keep_lowest(p, t, &f);
    return true;
}

/* Starts worker k, its pipe's read end in w[k]; -1 (the error kept) when
 * it cannot. */
static int start(struct pool *p, struct worker *w, int k)
{
    atomic_init(&p->sh->running[k], -1);
    w[k].fd = -1;
    int fds[2];
    struct err f = {0};
    if (pipe2(fds, O_CLOEXEC) < 0) {
        err_set(&f, ERR_RUN, "%s workers: pipe: %s", p->jt->what, strerror(errno));
        keep_lowest(p, -1, &f);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        for (int j = 0; j < k; j++) close(w[j].fd);
        work(p->jt, p->sh, k, fds[1]);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        err_set(&f, ERR_RUN, "%s workers: fork: %s (-j 1 runs the %s in this process)",
                p->jt->what, strerror(errno), p->jt->what);
        keep_lowest(p, -1, &f);
        return -1;
    }
    w[k] = (struct worker){pid, fds[0]};
    return 0;
}

int jobs_run(const struct jobs_tasks *jt, int n_jobs, struct err *e)
{
    int total = jt->n_tasks;
    if (n_jobs > total - 1) n_jobs = total - 1;
    if (n_jobs < 0) n_jobs = 0;
    size_t map_bytes = sizeof (struct shared) + (size_t)n_jobs * sizeof (atomic_int);
    struct shared *sh = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                             -1, 0);
    if (sh == MAP_FAILED)
        return err_set(e, ERR_RUN, "%s workers: mmap: %s (-j 1 needs none)", jt->what,
                       strerror(errno));
    struct worker *w = XCALLOC(e, (size_t)(n_jobs > 0 ? n_jobs : 1), sizeof *w);
    if (!w) {
        munmap(sh, map_bytes);
        return ERR_NOMEM;
    }
    atomic_init(&sh->next, 1);   /* order[0] runs here */
    atomic_init(&sh->stop_above, total);
    struct pool p = {.jt = jt, .sh = sh, .at = total + 1};
    fflush(NULL);   /* nothing buffered is written twice */
    bool started = true;
    for (int k = 0; k < n_jobs && started; k++) started = start(&p, w, k) == 0;
    for (int k = 0; k < n_jobs; k++)
        if (w[k].pid == 0) w[k].fd = -1;   /* not started */
    if (started && total > 0) {
        /* order[0] here while the workers run the others */
        int t = jt->order[0];
        if (jt->progress) jt->progress(jt->ctx, t, 0);
        struct err f = {0};
        if (jt->run_here(jt->ctx, t, &f) < 0) keep_lowest(&p, t, &f);
        else p.done++;
    }
    for (;;) {
        struct pollfd pfd[n_jobs > 0 ? n_jobs : 1];
        int n_open = 0;
        for (int k = 0; k < n_jobs; k++)
            pfd[k] = (struct pollfd){.fd = w[k].fd, .events = POLLIN}, n_open += w[k].fd >= 0;
        if (!n_open) break;
        if (poll(pfd, (nfds_t)n_jobs, -1) < 0) {
            if (errno == EINTR) continue;
            struct err f = {0};
            err_set(&f, ERR_RUN, "%s workers: poll: %s", jt->what, strerror(errno));
            keep_lowest(&p, -1, &f);
            for (int k = 0; k < n_jobs; k++)
                if (w[k].fd >= 0) reap(&p, &w[k], k);
            break;
        }
        for (int k = 0; k < n_jobs; k++)
            if (w[k].fd >= 0 && (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
                !receive(&p, &w[k]))
                reap(&p, &w[k], k);
    }
    free(w);
    munmap(sh, map_bytes);
    if (p.at <= total) return err_set(e, p.first.code, "%s", p.first.msg);
    if (p.done != total)
        return err_set(e, ERR_RUN, "%s workers: %d of the %d runs came back", jt->what, p.done,
                       total);
    return 0;
}

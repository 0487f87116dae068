/* A simulated sweep's tasks in forked worker processes (strata sweep -j N).
 *
 * Each worker is a fork of this process, so it holds the sweep, the config,
 * the workload and the order the tasks run in as they were; it takes the
 * next task of that order from a counter in shared memory (so a fast worker
 * takes more), runs it, and writes its result down its own pipe as a
 * message (sweep_wire.c). The order is the costliest first (sweep_order.c):
 * the tasks that end last are short ones, so the workers end together.
 * Task 0 runs here, in this process, while the workers start on the
 * others: it is the baseline whose sim the header reads, and it no longer
 * runs alone before them. This process then reads the pipes as messages
 * come and puts each into its task's slot: the assembled sweep is the one
 * a run in one process makes, whatever order the tasks ran and ended in.
 *
 * A task's fatal error (out of memory; a config that cannot be made; task
 * 0, a devices sweep's baseline, that did not run) lowers a bound in shared
 * memory: tasks above it are no longer run, tasks below it still are. So
 * when the workers are done every task below the lowest fatal one has run,
 * and that error, returned, is the one a run in one process (tasks in
 * print order, stopping at the first fatal one) meets. A worker that dies
 * (a signal) is an error naming its task. Every worker is waited for and
 * every pipe closed, whatever happens. */
#define _GNU_SOURCE   /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sweep_tasks.h"

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

/* A worker's life: the tasks of order it takes, until none are left or it
 * cannot send a result; one that fails fatally is sent as such. Exits with
 * _exit, so nothing of this process's (stdio buffers, atexit handlers, the
 * sanitizer's leak check of memory it inherited) runs twice. */
static _Noreturn void work(struct sweep *s, const struct config *cfg, const struct workload *wl,
                           struct run_numerics *numerics, const int *order, struct shared *sh,
                           int k, int fd)
{
    int total = sweep_n_tasks(s), status = 0;
    for (int i; status == 0 && (i = atomic_fetch_add(&sh->next, 1)) < total;) {
        int t = order[i];
        if (t > atomic_load(&sh->stop_above)) continue;
        atomic_store(&sh->running[k], t);
        struct err e = {0}, put = {0};
        sweep_bytes msg = {0};
        int rc = sweep_task_run(s, cfg, wl, numerics, t, &e);
        if (rc < 0) stop_tasks_above(sh, t);
        if (sweep_wire_put(&msg, t, sweep_task_slot(s, t), rc < 0 ? &e : NULL, &put) < 0 ||
            write_all(fd, msg.items, msg.len) < 0)
            status = 1;
        vec_free(&msg);
        atomic_store(&sh->running[k], -1);
    }
    close(fd);
    _exit(status);
}

/* "ps-ssp at devices=8", "the baseline" for messages. */
static void describe(const struct sweep *s, int t, char *buf, size_t n)
{
    const char *strategy, *value;
    sweep_task_name(s, t, &strategy, &value);
    snprintf(buf, n, "%s%s%s%.60s", strategy ? strategy : "the one-device baseline",
             value ? " at " : "", value ? s->axis.opt->name : "", value ? "=" : "");
    if (value) snprintf(buf + strlen(buf), n - strlen(buf), "%.60s", value);
}

/* Keeps the fatal error of the lowest task: (t, f) over *at, *first; t
 * n_tasks (an error of no task: a pipe, a message) stops every task. */
static void keep_lowest(const struct sweep *s, struct shared *sh, int t, const struct err *f,
                        int *at, struct err *first)
{
    stop_tasks_above(sh, t < sweep_n_tasks(s) ? t : -1);
    if (t < *at) {
        *at = t;
        *first = *f;
    }
}

/* Worker k's pipe ended: waits for it; a death by signal, or an exit that
 * is not clean, is a fatal error at the task it held. */
static void reap(struct sweep *s, struct worker *w, struct shared *sh, int k, int *at,
                 struct err *first)
{
    int status = 0, pid = (int)w->pid;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
    w->pid = 0;
    close(w->fd);
    w->fd = -1;
    int t = atomic_load(&sh->running[k]);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && t < 0) return;
    struct err f = {0};
    char what[160] = "no task";
    if (t >= 0) describe(s, t, what, sizeof what);
    if (WIFSIGNALED(status))
        err_set(&f, ERR_RUN, "sweep worker %d (pid %d) was killed by signal %d (%s) while "
                "running %s (-j 1 runs the sweep in one process)", k + 1, pid,
                WTERMSIG(status), strsignal(WTERMSIG(status)), what);
    else
        err_set(&f, ERR_RUN, "sweep worker %d ended (exit status %d) while running %s: it "
                "could not send its result", k + 1,
                WIFEXITED(status) ? WEXITSTATUS(status) : -1, what);
    keep_lowest(s, sh, t >= 0 ? t : sweep_n_tasks(s), &f, at, first);
}

/* One message from worker k (poll said its pipe is readable): into its slot,
 * or its fatal error kept; false when the pipe has ended. */
static bool receive(struct sweep *s, struct worker *w, struct shared *sh, int *at,
                    struct err *first, int *done, sweep_progress_fn progress, void *ctx)
{
    size_t head_n = sweep_wire_head_bytes(), len = 0, used = 0;
    char head[256];
    size_t got = head_n <= sizeof head ? read_full(w->fd, head, head_n) : 0;
    if (got == 0) return false;
    struct err f = {0};
    char *msg = NULL;
    int t = sweep_n_tasks(s);
    if (got < head_n) {
        err_set(&f, ERR_RUN, "a sweep worker's message was cut short");
    } else if (sweep_wire_length(head, &len, &f) == 0) {
        if (!(msg = malloc(len))) {
            err_set(&f, ERR_NOMEM, "out of memory reading a sweep worker's result");
        } else {
            memcpy(msg, head, head_n);
            if (read_full(w->fd, msg + head_n, len - head_n) < len - head_n)
                err_set(&f, ERR_RUN, "a sweep worker's message was cut short");
            else if (sweep_wire_get(msg, len, s, &used, &t, &f, &f) == 0 && !f.code) {
                const char *strategy, *value;
                sweep_task_name(s, t, &strategy, &value);
                if (progress) progress(ctx, strategy, value, *done, sweep_n_tasks(s));
                ++*done;
            }
        }
    }
    free(msg);
    if (f.code) keep_lowest(s, sh, t, &f, at, first);
    return true;
}

int sweep_jobs_run(struct sweep *s, const struct config *cfg, const struct workload *wl,
                   struct run_numerics *numerics, int n_jobs, sweep_progress_fn progress,
                   void *ctx, struct err *e)
{
    int total = sweep_n_tasks(s);
    if (n_jobs > total - 1) n_jobs = total - 1;
    size_t map_bytes = sizeof (struct shared) + (size_t)n_jobs * sizeof (atomic_int);
    struct shared *sh = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                             -1, 0);
    if (sh == MAP_FAILED)
        return err_set(e, ERR_RUN, "sweep workers: mmap: %s (-j 1 needs none)", strerror(errno));
    struct worker *w = XCALLOC(e, (size_t)n_jobs, sizeof *w);
    int *order = XCALLOC(e, (size_t)total, sizeof *order);
    if (!w || !order || sweep_task_order(s, cfg, wl, order, e) < 0) {
        free(w);
        free(order);
        munmap(sh, map_bytes);
        return ERR_NOMEM;
    }
    atomic_init(&sh->next, 1);   /* order[0] is task 0, which runs here */
    atomic_init(&sh->stop_above, total);
    int at = total + 1, done = 1;   /* the lowest task with a fatal error, and its error */
    struct err first = {0};
    fflush(NULL);   /* nothing buffered is written twice */
    for (int k = 0; k < n_jobs; k++) {
        atomic_init(&sh->running[k], -1);
        w[k].fd = -1;
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) < 0) {
            err_set(&first, ERR_RUN, "sweep workers: pipe: %s", strerror(errno));
            at = -1;
            break;
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            for (int j = 0; j < k; j++) close(w[j].fd);
            work(s, cfg, wl, numerics, order, sh, k, fds[1]);
        }
        close(fds[1]);
        if (pid < 0) {
            close(fds[0]);
            err_set(&first, ERR_RUN, "sweep workers: fork: %s (-j 1 runs the sweep in this "
                    "process)", strerror(errno));
            at = -1;
            break;
        }
        w[k] = (struct worker){pid, fds[0]};
    }
    if (at < 0) {
        stop_tasks_above(sh, -1);   /* the workers started end soon */
    } else {
        /* Task 0 here while the workers run the others. Its messages wait
         * in the pipes meanwhile (a worker blocks once its pipe is full:
         * task 0, one device, is short beside the points). */
        const char *strategy, *value;
        sweep_task_name(s, 0, &strategy, &value);
        if (progress) progress(ctx, strategy, value, 0, total);
        struct err f = {0};
        int rc = sweep_task_run(s, cfg, wl, numerics, 0, &f);
        if (rc == 0) rc = sweep_check_baseline(s, &f);
        if (rc < 0) keep_lowest(s, sh, 0, &f, &at, &first);
    }
    for (;;) {
        struct pollfd pfd[n_jobs > 0 ? n_jobs : 1];
        int n_open = 0;
        for (int k = 0; k < n_jobs; k++)
            pfd[k] = (struct pollfd){.fd = w[k].fd, .events = POLLIN}, n_open += w[k].fd >= 0;
        if (!n_open) break;
        if (poll(pfd, (nfds_t)n_jobs, -1) < 0) {
            if (errno == EINTR) continue;
            err_set(&first, ERR_RUN, "sweep workers: poll: %s", strerror(errno));
            at = -1;
            stop_tasks_above(sh, -1);
            for (int k = 0; k < n_jobs; k++)
                if (w[k].fd >= 0) reap(s, &w[k], sh, k, &at, &first);
            break;
        }
        for (int k = 0; k < n_jobs; k++)
            if (w[k].fd >= 0 && (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
                !receive(s, &w[k], sh, &at, &first, &done, progress, ctx))
                reap(s, &w[k], sh, k, &at, &first);
    }
    free(w);
    free(order);
    munmap(sh, map_bytes);
    if (at <= total) return err_set(e, first.code, "%s", first.msg);
    if (done != total)
        return err_set(e, ERR_RUN, "sweep workers: %d of the %d runs came back", done, total);
    return 0;
}

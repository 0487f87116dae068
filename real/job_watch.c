/* Running and watching one MPI job (job_watch.h). */
#include "job_watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heartbeat.h"
#include "heartbeat_net.h"
#include "job_output.h"

extern char **environ;

#define POLL_S 0.1
/* SIGTERM's grace: the launcher forwards it to the ranks and exits */
#define GRACE_S 1.0
/* step times kept for the derived timeout: the recent ones */
#define MAX_STEP_TIMES 256
/* A rank whose CPU time has not grown for this long is idle (asleep,
 * blocked in a system call, hung on a device); one waiting in MPI is not:
 * MPI polls. /proc's clock ticks are 10 ms, so a polling rank gains many
 * in this time even on a loaded machine. */
#define CPU_IDLE_S 1.5

/* What the poll knows of one rank. */
struct seen {
    bool has;                    /* a record was read */
    bool is_read_now;            /* ... at this look */
    struct heartbeat_record rec;
    double alive_s;              /* last poll that found its process */
    bool is_watched;             /* judged by its silence (starting or stepping) */
    bool is_over;                /* silent past its allowance */
    bool is_suspect;             /* over, or silent long enough to be told idle or busy */
    int64_t last_step;
    double last_t_s;
    watch_history history;
    long long cpu_ticks;         /* utime + stime at the last look, -1 before */
    double cpu_grew_s;           /* when cpu_ticks last grew (or was first read) */
};

struct watch {
    const struct watch_job *j;
    pid_t launcher;
    int err_fd;                  /* the read end of the launcher's stderr; -1 none */
    struct job_output output;
    struct seen *ranks;          /* [n_ranks] */
    struct pollfd *pfds;         /* wait_passing's: 2 + 2 n_ranks + 8 */
    double step_times[MAX_STEP_TIMES];
    int n_step_times, next_step_time;
};

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);   /* a signal cuts it short: the loop looks at once */
}

/* The state letter of pid in /proc/PID/stat (R, S, D, T, t, Z, X ...), or 0
 * when there is no such process; its CPU time in clock ticks (utime +
 * stime, fields 14 and 15) in *ticks when asked, -1 when unread. */
static char proc_stat(pid_t pid, long long *ticks)
{
    char path[64], buf[1024];
    if (ticks) *ticks = -1;
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    /* "pid (comm) S ...": comm may hold spaces and parentheses, the last ')' ends it */
    char *paren = strrchr(buf, ')');
    if (!paren || paren[1] != ' ') return 0;
    /* after ") S": fields 4 .. 13, then utime and stime */
    unsigned long long utime = 0, stime = 0;
    if (ticks && sscanf(paren + 4, "%*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                        &stime) == 2)
        *ticks = (long long)(utime + stime);
    return paren[2];
}

static char proc_state(pid_t pid)
{
    return proc_stat(pid, NULL);
}

static bool is_gone(char state)
{
    return state == 0 || state == 'Z' || state == 'X';
}

/* Rank r's process state as proc_stat's letter: from /proc for a rank of
 * this machine, from its connection for one over the network (job_watch.h:
 * 'S' while it is open or not yet made, 0 once closed). */
static char rank_state(const struct watch *w, int r)
{
    if (w->j->net) return hbnet_is_closed(w->j->net, r, NULL) ? 0 : 'S';
    return proc_state(w->ranks[r].rec.pid);
}

/* Whether pid's environment holds `key` exactly (NAME=value). */
static bool env_has(pid_t pid, const char *key)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/environ", (long)pid);
    FILE *f = fopen(path, "re");
    if (!f) return false;
    size_t len = strlen(key), at = 0;
    bool found = false, is_start = true;
    int c;
    /* compare each NUL-terminated entry with key as it streams by */
    while (!found && (c = fgetc(f)) != EOF) {
        if (c == '\0') {
            found = is_start && at == len;
            at = 0;
            is_start = true;
            continue;
        }
        if (is_start && at < len && key[at] == (char)c) at++;
        else is_start = false;
    }
    fclose(f);
    return found;
}

/* SIGKILLs every process but this one whose environment names this job's
 * heartbeat directory; how many it found. O(processes of the machine). */
static int kill_marked(const char *key)
{
    DIR *d = opendir("/proc");
    if (!d) return 0;
    int n = 0;
    pid_t me = getpid();
    for (struct dirent *de; (de = readdir(d));) {
        char *end = NULL;
        long pid = strtol(de->d_name, &end, 10);
        if (!end || *end || pid <= 0 || pid == me) continue;
        if (is_gone(proc_state((pid_t)pid)) || !env_has((pid_t)pid, key)) continue;
        kill((pid_t)pid, SIGKILL);
        n++;
    }
    closedir(d);
    return n;
}

/* Ends the whole job: the launcher's group, every rank, every process marked
 * with this job's heartbeat directory, until none is left (SIGKILL ends a
 * stopped process too). Reaps the launcher. */
static void end_job(struct watch *w)
{
    kill(-w->launcher, SIGKILL);
    kill(w->launcher, SIGKILL);
    /* another host's pid is not ours to kill: its ranks end with mpirun's
     * daemons, and by themselves when the connections close (below) */
    for (int r = 0; !w->j->net && r < w->j->n_ranks; r++)
        if (w->ranks[r].has && w->ranks[r].rec.pid > 0) kill(w->ranks[r].rec.pid, SIGKILL);
    while (waitpid(w->launcher, NULL, 0) < 0 && errno == EINTR) {}
    char key[4200];
    snprintf(key, sizeof key, "%s=%s", HEARTBEAT_DIR_ENV, w->j->hb_dir);
    for (int tries = 0; tries < 50 && kill_marked(key) > 0; tries++) sleep_s(POLL_S);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The timeout now: --timeout, or derived from the step times seen. */
static double timeout_now(const struct watch *w)
{
    if (w->j->timeout_s > 0) return w->j->timeout_s;
    if (w->n_step_times == 0) return WATCH_STARTUP_S;
    double sorted[MAX_STEP_TIMES];
    memcpy(sorted, w->step_times, (size_t)w->n_step_times * sizeof *sorted);
    qsort(sorted, (size_t)w->n_step_times, sizeof *sorted, by_value);
    double t = WATCH_STEPS_TIMEOUT * sorted[w->n_step_times / 2];
    return t > WATCH_MIN_TIMEOUT_S ? t : WATCH_MIN_TIMEOUT_S;
}

/* A worker's new step: its time per step since the last one seen. */
static void note_step(struct watch *w, int r, struct seen *s)
{
    const struct heartbeat_record *rec = &s->rec;
    if (rec->step == s->last_step) return;
    if (r < w->j->n_workers && s->last_step >= 0 && rec->step > s->last_step) {
        w->step_times[w->next_step_time] =
            (rec->progress_s - s->last_t_s) / (double)(rec->step - s->last_step);
        w->next_step_time = (w->next_step_time + 1) % MAX_STEP_TIMES;
        if (w->n_step_times < MAX_STEP_TIMES) w->n_step_times++;
    }
    s->last_step = rec->step;
    s->last_t_s = rec->progress_s;
    vec_push(&s->history, ((struct watch_sample){rec->step, rec->progress_s}));
}

static void fail(struct watch_result *out, int r, const struct seen *s, double died_s,
                 double now_s, const char *cause)
{
    out->end = WATCH_FAILED;
    out->rank = r;
    out->step = s->rec.step;
    out->died_s = died_s;
    out->noticed_s = now_s;
    snprintf(out->cause, sizeof out->cause, "%s", cause);
}

static bool is_stopped(char state)
{
    return state == 'T' || state == 't';
}

/* Is rank r's CPU time standing still (job_watch.h: an idle rank)? */
static bool is_idle(const struct seen *s, double now_s)
{
    return s->cpu_ticks >= 0 && now_s - s->cpu_grew_s > CPU_IDLE_S;
}

/* Whom a stalled job blames, among the ranks watched for silence (the rule
 * job_watch.h states): a stopped rank first, even one not yet past its
 * allowance; else among the silent ones, an idle one (its CPU time not
 * growing) before a busy one, a worker before a server, the one furthest
 * behind (lowest step), then the one silent longest. The silent ones are
 * those past their allowance and those silent for CPU_IDLE_S: a peer that
 * waits on a hung rank made its last progress first, often by more than a
 * look apart (CI's sanitizer stage: rank 0, waiting, was over alone and
 * blamed while rank 1, asleep, was not yet over). */
static int blame(const struct watch *w, double now_s)
{
    int best = -1;
    for (int r = 0; r < w->j->n_ranks; r++)
        if (w->ranks[r].is_watched && is_stopped(rank_state(w, r))) return r;
    for (int r = 0; r < w->j->n_ranks; r++) {
        if (!w->ranks[r].is_suspect) continue;   /* every rank over is suspect too */
        if (best < 0) {
            best = r;
            continue;
        }
        const struct seen *a = &w->ranks[r], *b = &w->ranks[best];
        bool a_idle = is_idle(a, now_s), b_idle = is_idle(b, now_s);
        bool a_worker = r < w->j->n_workers, b_worker = best < w->j->n_workers;
        if (a_idle != b_idle) {
            if (a_idle) best = r;
        } else if (a_worker != b_worker) {
            if (a_worker) best = r;
        } else if (a->rec.step != b->rec.step ? a->rec.step < b->rec.step
                                              : a->rec.progress_s < b->rec.progress_s) {
            best = r;
        }
    }
    return best;
}

/* Its CPU time now, and when it last grew. */
static void note_cpu(struct seen *s, double now_s)
{
    long long ticks = -1;
    proc_stat(s->rec.pid, &ticks);
    if (ticks < 0) return;
    if (s->cpu_ticks < 0 || ticks != s->cpu_ticks) s->cpu_grew_s = now_s;
    s->cpu_ticks = ticks;
}

/* Over the network the first death is the one whose connection closed
 * first: when one rank dies, mpirun soon ends its peers, whose connections
 * close too, perhaps before this look. A rank that said its last words
 * (--fail) died first of all: its peers end because of it. */
struct death {
    int rank;                    /* -1: none */
    bool has_words;
    double closed_s, died_s;
    char cause[320];
};

static void note_death(struct death *d, int r, const struct seen *s, double died_s,
                       double closed_s, const char *cause)
{
    bool has_words = s->rec.state == HEARTBEAT_DYING;
    if (d->rank >= 0 && (d->has_words > has_words ||
                         (d->has_words == has_words && d->closed_s <= closed_s)))
        return;
    *d = (struct death){.rank = r, .has_words = has_words, .closed_s = closed_s,
                        .died_s = died_s};
    snprintf(d->cause, sizeof d->cause, "%s", cause);
}

/* Whether a rank has said an error, read again now: a rank says it before
 * it brings the job down (MPI_Abort), so a peer seen gone before this read
 * and killed for that is excused, however the reads and the kill fell. */
static bool anyone_said_error(const struct watch *w)
{
    for (int r = 0; r < w->j->n_ranks; r++) {
        struct heartbeat_record rec;
        if (heartbeat_read(w->j->hb_dir, r, &rec) == 0 && rec.state == HEARTBEAT_DONE &&
            rec.words[0])
            return true;
    }
    return false;
}

/* One look at every rank: true when one failed (out filled). Deaths come
 * before hangs: a dead rank also stops making progress. */
static bool look(struct watch *w, double now_s, bool *is_erring, struct watch_result *out)
{
    double timeout_s = timeout_now(w), silent_s = 0, newest_s = 0;
    char cause[320];
    struct death death = {.rank = -1};
    /* every record first: a rank that said an error brings the job down
     * itself (MPI_Abort), so its peers' ends are no failures of their own,
     * whichever rank the error was said by (a lower rank killed before
     * it could say its own is judged after the higher one's words) */
    for (int r = 0; r < w->j->n_ranks; r++) {
        struct seen *s = &w->ranks[r];
        s->is_watched = s->is_over = s->is_suspect = false;
        if (!(s->is_read_now = heartbeat_read(w->j->hb_dir, r, &s->rec) >= 0)) continue;
        s->has = true;
        if (s->rec.state == HEARTBEAT_DONE && s->rec.words[0]) *is_erring = true;
    }
    for (int r = 0; r < w->j->n_ranks; r++) {
        struct seen *s = &w->ranks[r];
        if (!s->is_read_now) continue;
        if (s->rec.start_s > 0 && out->start_s == 0) out->start_s = s->rec.start_s;
        note_step(w, r, s);
        const struct heartbeat_record *rec = &s->rec;
        char state = rank_state(w, r);
        double closed_s = 0;
        if (w->j->net && hbnet_is_closed(w->j->net, r, &closed_s)) s->alive_s = closed_s;
        if (!is_gone(state)) {
            s->alive_s = now_s;
            if (!w->j->net) note_cpu(s, now_s);
        } else if (rec->state == HEARTBEAT_DYING) {
            snprintf(cause, sizeof cause, "died at step %lld: %s", (long long)rec->step, rec->words);
            if (!w->j->net) {
                fail(out, r, s, rec->progress_s, now_s, cause);
                return true;
            }
            note_death(&death, r, s, rec->progress_s, closed_s, cause);
        } else if (rec->state != HEARTBEAT_DONE && !*is_erring &&
                   !(*is_erring = anyone_said_error(w))) {
            if (rec->step >= 0)
                snprintf(cause, sizeof cause, "died at step %lld without a word (killed by a "
                         "signal or crashed)", (long long)rec->step);
            else
                snprintf(cause, sizeof cause, "died in start-up without a word (killed by a "
                         "signal or crashed)");
            double died_s = s->alive_s > 0 ? s->alive_s : rec->progress_s;
            if (!w->j->net) {
                fail(out, r, s, died_s, now_s, cause);
                return true;
            }
            note_death(&death, r, s, died_s, closed_s, cause);
        }
        s->is_watched = rec->state == HEARTBEAT_RUNNING || rec->state == HEARTBEAT_STARTING ||
                        rec->state == HEARTBEAT_FINISHING || rec->state == HEARTBEAT_SAVING;
        if (s->is_watched && rec->progress_s > newest_s) newest_s = rec->progress_s;
    }
    if (death.rank >= 0) {
        fail(out, death.rank, &w->ranks[death.rank], death.died_s, now_s, death.cause);
        return true;
    }
    for (int r = 0; r < w->j->n_ranks; r++) {
        struct seen *s = &w->ranks[r];
        if (!s->is_watched) continue;
        const struct heartbeat_record *rec = &s->rec;
        /* a checkpoint's write is not a step: a large model's file on a
         * slow disk outlasted --timeout (or 20 steps), and each relaunch
         * met the same write again, up to "too many failures" */
        bool is_slow_state = rec->state == HEARTBEAT_STARTING || rec->state == HEARTBEAT_SAVING;
        double allowed_s = is_slow_state && timeout_s < WATCH_STARTUP_S ? WATCH_STARTUP_S
                                                                        : timeout_s;
        /* a finishing rank waits on the slowest: silent while any rank
         * makes progress, it is over only when the whole job is */
        double last_s = rec->state == HEARTBEAT_FINISHING ? newest_s : rec->progress_s;
        s->is_over = now_s - last_s > allowed_s;
        s->is_suspect = now_s - last_s > fmin(allowed_s, CPU_IDLE_S);
        if (s->is_over && now_s - rec->progress_s > silent_s) silent_s = now_s - rec->progress_s;
    }
    if (silent_s == 0 || *is_erring) return false;
    int r = blame(w, now_s);
    const struct seen *s = &w->ranks[r];
    const char *what = is_stopped(rank_state(w, r)) ? "stopped (SIGSTOP)" : "hung";
    if (s->rec.state == HEARTBEAT_FINISHING)
        snprintf(cause, sizeof cause, "%s while the report was gathered: no progress for %.1f s "
                 "(--timeout %.3g s)", what, now_s - s->rec.progress_s, timeout_s);
    else if (s->rec.state == HEARTBEAT_SAVING)
        snprintf(cause, sizeof cause, "%s writing the checkpoint after step %lld: no progress "
                 "for %.1f s (%.0f s allowed a checkpoint)", what, (long long)s->rec.step,
                 silent_s, fmax(timeout_s, WATCH_STARTUP_S));
    else if (s->rec.step >= 0)
        snprintf(cause, sizeof cause, "%s at step %lld: no progress for %.1f s (--timeout %.3g s)",
                 what, (long long)s->rec.step, silent_s, timeout_s);
    else
        snprintf(cause, sizeof cause, "%s in start-up: no progress for %.1f s", what, silent_s);
    fail(out, r, s, s->rec.progress_s, now_s, cause);
    return true;
}

/* The launcher reported a death by signal (Open MPI exits 128 + the signal
 * of the first rank that died) that no look caught: a rank killed before
 * its first heartbeat, or between two polls in the job's last moments. The
 * first rank that never said it was done takes the blame. */
static void blame_silent(struct watch *w, double now_s, struct watch_result *out)
{
    for (int r = 0; r < w->j->n_ranks; r++) {
        const struct seen *s = &w->ranks[r];
        if (s->has && s->rec.state == HEARTBEAT_DONE) continue;
        char cause[320];
        snprintf(cause, sizeof cause, "died %s without a word (the launcher saw a death by "
                 "signal %d)", s->has && s->rec.step >= 0 ? "while stepping" : "in start-up",
                 out->exit_code - 128);
        struct seen none = {.rec.step = -1};
        fail(out, r, s->has ? s : &none, s->has && s->alive_s > 0 ? s->alive_s : now_s, now_s,
             cause);
        return;
    }
}

/* The child's side of spawn: never returns. Only async-signal-safe calls
 * between fork and exec. */
static void become_launcher(const struct watch_job *j, pid_t parent, int err_w)
{
    /* dies with the supervisor, even by SIGKILL (which no handler sees);
     * the parent may have died before this line: then it is not ours */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    setpgid(0, 0);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGINT, &dfl, NULL);
    sigaction(SIGTERM, &dfl, NULL);
    sigaction(SIGQUIT, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (err_w >= 0 && dup2(err_w, STDERR_FILENO) < 0) _exit(127);
    execv(j->argv[0], j->argv);
    _exit(127);
}

/* The launcher as a child in a process group of its own (a Ctrl-C at the
 * terminal reaches us, and we decide), with the default dispositions, its
 * stderr into a pipe we read (job_output.h), and a death signal tied to
 * this process. fork, not posix_spawn: the death signal (prctl) has to be
 * set in the child. */
static int spawn(struct watch *w, struct err *e)
{
    const struct watch_job *j = w->j;
    if (access(j->argv[0], X_OK) != 0)
        return err_set(e, ERR_RUN, "cannot start %s: %s", j->argv[0], strerror(errno));
    int fds[2] = {-1, -1};
    if (pipe(fds) < 0) fds[0] = fds[1] = -1;   /* then stderr is shared */
    for (int k = 0; k < 2; k++)
        if (fds[k] >= 0) fcntl(fds[k], F_SETFD, FD_CLOEXEC);   /* dup2 clears it on stderr */
    fflush(NULL);   /* our output before the job's */
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) become_launcher(j, parent, fds[1]);
    int fork_errno = errno;
    if (fds[1] >= 0) close(fds[1]);
    if (pid < 0) {
        if (fds[0] >= 0) close(fds[0]);
        return err_set(e, ERR_RUN, "cannot start %s: fork: %s", j->argv[0],
                       strerror(fork_errno));
    }
    setpgid(pid, pid);   /* both sides set it: no race with our first kill(-pid) */
    w->launcher = pid;
    w->err_fd = fds[0];
    if (w->err_fd >= 0) fcntl(w->err_fd, F_SETFL, fcntl(w->err_fd, F_GETFL) | O_NONBLOCK);
    return 0;
}

/* Passes on what the launcher wrote; false at its end of file. */
static bool drain(struct watch *w)
{
    char buf[4096];
    for (;;) {
        ssize_t n = read(w->err_fd, buf, sizeof buf);
        if (n > 0) {
            job_output_feed(&w->output, buf, (size_t)n);
            continue;
        }
        return !(n == 0 || (errno != EAGAIN && errno != EINTR));
    }
}

/* Waits s seconds, passing on the launcher's stderr as it comes and, in a
 * multi-host job, taking in the ranks' heartbeats (heartbeat_net.h). A
 * signal, or a rank's connection closing, cuts the wait short: the loop
 * looks at once. */
static void wait_passing(struct watch *w, double s)
{
    struct hbnet_listener *net = w->j->net;
    if (w->err_fd < 0 && !net) {
        sleep_s(s);
        return;
    }
    /* the launcher's pipe, the listening socket and a connection a rank at most */
    int max_fds = 2 + 2 * w->j->n_ranks + 8;
    struct pollfd *pfds = w->pfds;
    double until = heartbeat_clock_s() + s;
    for (double left = s; left > 0; left = until - heartbeat_clock_s()) {
        int n_fds = 0;
        if (w->err_fd >= 0) pfds[n_fds++] = (struct pollfd){.fd = w->err_fd, .events = POLLIN};
        bool has_err = n_fds > 0;
        if (net) n_fds += hbnet_pollfds(net, pfds + n_fds, max_fds - n_fds);
        if (n_fds == 0) {
            sleep_s(left);
            return;
        }
        int n = poll(pfds, (nfds_t)n_fds, (int)(left * 1000) + 1);
        if (n < 0) return;   /* EINTR: a signal */
        if (n == 0) continue;
        if (net && hbnet_pump(net)) return;
        if (!has_err || !(pfds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if (!drain(w)) {     /* end of file: the launcher is gone, nothing more to read */
            close(w->err_fd);
            w->err_fd = -1;
            job_output_flush(&w->output);
            if (!net) {
                sleep_s(until - heartbeat_clock_s() > 0 ? until - heartbeat_clock_s() : 0);
                return;
            }
        }
    }
}

/* The job is over: what the launcher still had to say, then the end. */
static void close_output(struct watch *w)
{
    if (w->err_fd >= 0) {
        /* the write end may linger in a straggling process: a bounded wait */
        for (int tries = 0; tries < 20 && drain(w); tries++) {
            struct pollfd pfd = {.fd = w->err_fd, .events = POLLIN};
            if (poll(&pfd, 1, 50) <= 0) break;
        }
        close(w->err_fd);
        w->err_fd = -1;
    }
    job_output_flush(&w->output);
    job_output_release(&w->output);
}

int watch_run(const struct watch_job *j, struct watch_result *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    out->exit_code = -1;
    struct watch w = {.j = j, .err_fd = -1};
    job_output_init(&w.output, stderr);
    w.ranks = XCALLOC(e, (size_t)j->n_ranks, sizeof *w.ranks);
    w.pfds = w.ranks ? XCALLOC(e, 2 + 2 * (size_t)j->n_ranks + 8, sizeof *w.pfds) : NULL;
    if (!w.pfds) {
        free(w.ranks);
        return ERR_NOMEM;
    }
    for (int r = 0; r < j->n_ranks; r++) w.ranks[r].last_step = w.ranks[r].cpu_ticks = -1;
    int rc = spawn(&w, e);
    bool is_erring = false;
    while (rc == 0) {
        wait_passing(&w, POLL_S);
        if (*j->signalled) {
            /* the launcher forwards SIGTERM to the ranks; what stays is killed */
            kill(w.launcher, SIGTERM);
            for (double t = 0; t < GRACE_S && waitpid(w.launcher, NULL, WNOHANG) == 0; t += POLL_S)
                sleep_s(POLL_S);
            end_job(&w);
            out->end = WATCH_SIGNALLED;
            break;
        }
        int status = 0;
        pid_t done = waitpid(w.launcher, &status, WNOHANG);
        if (done < 0 && errno != EINTR) {
            rc = err_set(e, ERR_RUN, "lost track of %s (pid %ld): waitpid: %s", j->argv[0],
                         (long)w.launcher, strerror(errno));
            break;
        }
        /* looked at after the launcher's exit too: a rank may have died first */
        if (look(&w, heartbeat_clock_s(), &is_erring, out)) {
            if (done != w.launcher) end_job(&w);
            struct seen *s = &w.ranks[out->rank];
            out->history = s->history;   /* moved: the result owns it now */
            s->history = (watch_history){0};
            break;
        }
        if (done == w.launcher) {
            out->end = WATCH_EXITED;
            out->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            if (out->exit_code > 128 && !is_erring) blame_silent(&w, heartbeat_clock_s(), out);
            char key[4200];
            snprintf(key, sizeof key, "%s=%s", HEARTBEAT_DIR_ENV, j->hb_dir);
            kill_marked(key);   /* nothing, normally: no rank outlives its launcher */
            break;
        }
    }
    close_output(&w);
    if (j->n_ranks > 0 && w.ranks[0].has) out->checkpoint_s = w.ranks[0].rec.checkpoint_s;
    for (int r = 0; r < j->n_ranks; r++) vec_free(&w.ranks[r].history);
    free(w.ranks);
    free(w.pfds);
    return rc;
}

void watch_result_release(struct watch_result *r)
{
    vec_free(&r->history);
}

double watch_time_at_step(const struct watch_result *r, int64_t step)
{
    /* the samples around step: exact when the poll saw it start, else
     * between its neighbours in proportion (steps of one job take alike
     * times); before the first sample the job began there, at its start */
    const struct watch_sample *before = NULL, *after = NULL;
    for (size_t i = 0; i < r->history.len; i++) {
        const struct watch_sample *s = &r->history.items[i];
        if (s->step < 0) continue;
        if (s->step < step) before = s;
        else if (!after) after = s;
    }
    if (after && after->step == step) return after->t_s;
    if (!before) return r->start_s;
    if (!after) return before->t_s;
    return before->t_s + (after->t_s - before->t_s) * (double)(step - before->step) /
                             (double)(after->step - before->step);
}

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gnuplot.h"

/* An executable regular file (a directory is X_OK too), made absolute:
 * the child changes directory before it executes it. */
static bool usable(const char *path, char *buf, size_t n)
{
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, X_OK) < 0) return false;
    if (path[0] == '/') return snprintf(buf, n, "%s", path) < (int)n;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return false;
    return snprintf(buf, n, "%s/%s", cwd, path) < (int)n;
}

bool gnuplot_find(char *buf, size_t n)
{
    const char *env = getenv("STRATA_GNUPLOT");
    const char *name = env && *env ? env : "gnuplot";
    if (strchr(name, '/')) {
        if (usable(name, buf, n)) return true;
        snprintf(buf, n, "STRATA_GNUPLOT=%s, not an executable file", name);
        return false;
    }
    const char *path = getenv("PATH");
    /* POSIX leaves an unset PATH to the implementation; this is glibc's. */
    if (!path) path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char cand[PATH_MAX];
        /* An empty PATH entry is the current directory. */
        if (snprintf(cand, sizeof cand, "%.*s/%s", (int)(len ? len : 1), len ? p : ".", name) <
                (int)sizeof cand &&
            usable(cand, buf, n))
            return true;
        if (!end) break;
        p = end;
    }
    snprintf(buf, n, "%s%s in PATH", env && *env ? "STRATA_GNUPLOT=" : "", name);
    return false;
}

/* Keeps the last n - 1 bytes read from fd in tail; reads to end of file. */
static void read_tail(int fd, char *tail, size_t n)
{
    size_t len = 0;
    char chunk[1024];
    for (;;) {
        ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (n < 2) continue;
        size_t g = (size_t)got, room = n - 1;
        if (g >= room) {
            memcpy(tail, chunk + g - room, room);
            len = room;
        } else {
            if (len + g > room) {  /* drop the oldest bytes */
                memmove(tail, tail + (len + g - room), room - g);
                len = room - g;
            }
            memcpy(tail + len, chunk, g);
            len += g;
        }
    }
    if (n) tail[len < n ? len : n - 1] = '\0';
}

int gnuplot_run(const char *gnuplot, const char *dir, const char *expr, const char *script,
                bool is_terminal, char *tail, size_t n_tail)
{
    const char *argv[5] = {gnuplot};
    int argc = 1;
    if (expr) {
        argv[argc++] = "-e";
        argv[argc++] = expr;
    }
    argv[argc++] = script;
    argv[argc] = NULL;

    int fds[2];
    if (pipe(fds) < 0) return -1;
    /* What we printed must come out before the child's drawing does. */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(fds[0]);
        close(fds[1]);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        /* The child: only async-signal-safe calls until exec. */
        int null_fd = open("/dev/null", O_RDONLY);
        if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
        dup2(fds[1], STDERR_FILENO);
        if (!is_terminal) dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (chdir(dir) < 0) {
            static const char msg[] = "strata: cannot enter the plot directory\n";
            (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
            _exit(126);
        }
        execv(gnuplot, (char *const *)argv);
        static const char msg[] = "strata: cannot execute gnuplot\n";
        (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
        _exit(127);
    }
    close(fds[1]);
    read_tail(fds[0], tail, n_tail);
    close(fds[0]);
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(ws)) return WEXITSTATUS(ws);
    return 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

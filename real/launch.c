/* Starting MPI jobs: find the launcher, build its argv, prepare the ranks'
 * environment, exec or spawn it. POSIX 2008 only, but for two Linux reads
 * with fallbacks: /proc/self/exe (else argv[0]) and the affinity mask
 * (sched_getaffinity, a GNU extension: else "unknown"). */
#define _GNU_SOURCE   /* sched_getaffinity, CPU_COUNT; before any header */

#include "../core/untracked.h"
#include "hostfile.h"
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* POSIX: the application declares environ itself. */
extern char **environ;

/* $PATH when it is unset: what execvp and most shells fall back to. */
static const char *const DEFAULT_PATH = "/usr/bin:/bin";

static bool env_is_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

bool launch_is_mpi_rank(void)
{
    /* One variable per launcher family; any of them means a launcher started
     * us as one of several ranks. (OMPI_COMM_WORLD_SIZE is set by Open MPI's
     * mpirun for every rank, PMI_* by Hydra and Slurm's PMI-1/2 plugins,
     * PMIX_RANK by every PMIx server: Open MPI 5, Slurm --mpi=pmix.) */
    static const char *const vars[] = {
        "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (env_is_set(vars[i])) return true;
    return false;
}

/* Why path is not something we can execute, or NULL when it is: a regular
 * file with an execute permission this process holds. */
static const char *not_executable_reason(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0) return strerror(errno);
    if (S_ISDIR(st.st_mode)) return "it is a directory";
    if (!S_ISREG(st.st_mode)) return "it is not a regular file";
    if (access(path, X_OK) < 0) return "it is not executable (chmod +x it, or pick another)";
    return NULL;
}

/* Copies src into path[0..n), or ERR_INPUT when it does not fit. */
static int copy_path(const char *src, char *path, size_t n, struct err *e)
{
    size_t len = strlen(src);
    if (!path || len >= n)
        return err_set(e, ERR_INPUT, "%s: path longer than the %zu bytes allowed for it", src,
                       n ? n - 1 : 0);
    memcpy(path, src, len + 1);
    return 0;
}

/* dir/name into out[0..n) (a dir relative to the working directory made
 * absolute; dir_len 0 means the working directory itself); false when it
 * does not fit or the working directory cannot be read. */
static bool join_path(char *out, size_t n, const char *dir, size_t dir_len, const char *name)
{
    char cwd[LAUNCH_PATH_BYTES];
    const char *prefix = "";
    if (dir_len == 0 || dir[0] != '/') {
        if (!getcwd(cwd, sizeof cwd)) return false;
        prefix = cwd;
    }
    const char *sep = *prefix && prefix[strlen(prefix) - 1] != '/' ? "/" : "";
    int w;
    if (dir_len == 0)
        w = snprintf(out, n, "%s%s%s", prefix, sep, name);
    else
        w = snprintf(out, n, "%s%s%.*s/%s", prefix, sep, (int)dir_len, dir,
                     name);
    return w >= 0 && (size_t)w < n;
}

/* launch_find_program into found[LAUNCH_PATH_BYTES]. */
static int find_program(const char *name, char *found, struct err *e)
{
    if (!name || !*name) return err_set(e, ERR_INPUT, "no program name given");

    if (strchr(name, '/')) {
        bool fits = name[0] == '/'
                        ? (size_t)snprintf(found, LAUNCH_PATH_BYTES, "%s", name) < LAUNCH_PATH_BYTES
                        : join_path(found, LAUNCH_PATH_BYTES, "", 0, name);
        if (!fits)
            return err_set(e, ERR_INPUT, "%s: path too long (or the working directory is "
                           "unreadable); give a shorter absolute path", name);
        const char *why = not_executable_reason(found);
        if (why) return err_set(e, ERR_INPUT, "%s: cannot be run: %s", found, why);
        return 0;
    }

    /* A shell's search: each PATH entry in order, the first executable wins.
     * Empty entries (meaning "." to a shell) are skipped: a launcher is not
     * looked for in whatever directory we happen to be in. */
    const char *search = getenv("PATH");
    if (!search) search = DEFAULT_PATH;
    for (const char *p = search; *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0 && join_path(found, LAUNCH_PATH_BYTES, p, len, name) &&
            !not_executable_reason(found))
            return 0;
        if (!end) break;
        p = end + 1;
    }
    return err_set(e, ERR_INPUT, "%s: not found in PATH (%s)", name, search);
}

int launch_find_program(const char *name, char *path, size_t n, struct err *e)
{
    char found[LAUNCH_PATH_BYTES];
    TRY(find_program(name, found, e));
    return copy_path(found, path, n, e);
}

int launch_find_mpirun(char *path, size_t n, struct err *e)
{
    char found[LAUNCH_PATH_BYTES];
    const char *chosen = getenv("STRATA_MPIRUN");
    if (chosen && *chosen) {
        struct err why = {0};
        if (find_program(chosen, found, &why) < 0)
            return err_set(e, ERR_INPUT,
                           "STRATA_MPIRUN=%s: %s; set it to your MPI launcher's full path "
                           "(e.g. /usr/bin/mpirun), or unset it to search PATH for mpirun",
                           chosen, why.msg);
        return copy_path(found, path, n, e);
    }
    static const char *const names[] = { "mpirun", "mpiexec" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (find_program(names[i], found, NULL) == 0) return copy_path(found, path, n, e);
    const char *search = getenv("PATH");
    return err_set(e, ERR_INPUT,
                   "no MPI launcher found: neither mpirun nor mpiexec is in PATH (%s). "
                   "Install Open MPI (Debian/Ubuntu: apt-get install openmpi-bin; "
                   "tools/setup installs it), set STRATA_MPIRUN to your launcher's path, "
                   "or start the ranks yourself: mpirun -np N strata real ...",
                   search ? search : DEFAULT_PATH);
}

/* Follows path through symbolic links to the file they end at, into
 * out[LAUNCH_PATH_BYTES]. Directory links along the way are left alone:
 * only the final file's name and its directory's contents matter here.
 * (realpath would do, but it is XSI, not POSIX 2008 base.) False on a
 * loop, a dangling link or a path too long. */
static bool resolve_links(const char *path, char *out)
{
    if ((size_t)snprintf(out, LAUNCH_PATH_BYTES, "%s", path) >= LAUNCH_PATH_BYTES) return false;
    for (int hops = 0; hops < 40; hops++) { /* 40: Linux's own limit (MAXSYMLINKS) */
        struct stat st;
        if (lstat(out, &st) < 0) return false;
        if (!S_ISLNK(st.st_mode)) return true;
        char target[LAUNCH_PATH_BYTES];
        ssize_t len = readlink(out, target, sizeof target - 1);
        if (len <= 0 || (size_t)len >= sizeof target - 1) return false;
        target[len] = '\0';
        if (target[0] == '/') {
            memcpy(out, target, (size_t)len + 1);
            continue;
        }
        /* A relative target is relative to the link's directory. */
        char *slash = strrchr(out, '/');
        size_t dir_len = slash ? (size_t)(slash - out) + 1 : 0;
        if (dir_len + (size_t)len >= LAUNCH_PATH_BYTES) return false;
        memcpy(out + dir_len, target, (size_t)len + 1);
    }
    return false;
}

bool launch_mpirun_is_openmpi(const char *path)
{
    if (!path || !*path) return false;
    char real[LAUNCH_PATH_BYTES];
    if (!resolve_links(path, real)) return false;
    char *slash = strrchr(real, '/');
    const char *base = slash ? slash + 1 : real;

    /* Open MPI's launcher under its own names: orterun (v1-v4; mpirun and
     * mpiexec link to it), prterun (v5, PRRTE), and Debian's alternatives
     * targets. MPICH's are mpiexec.hydra / mpirun.mpich / mpiexec.mpich. */
    static const char *const ompi[] = {
        "orterun", "prterun", "mpirun.openmpi", "mpiexec.openmpi",
    };
    for (size_t i = 0; i < sizeof ompi / sizeof ompi[0]; i++)
        if (!strcmp(base, ompi[i])) return true;
    if (strstr(base, "mpich") || strstr(base, "hydra")) return false;

    /* Any other name (Open MPI 5's own mpirun binary, a prefix install's
     * bin/mpirun, a wrapper): Open MPI installs ompi_info in the same bin/,
     * MPICH, Intel MPI and MVAPICH do not. Judged beside the resolved file,
     * so Debian's /usr/bin with both MPIs installed was decided above. */
    char info[LAUNCH_PATH_BYTES];
    int w = slash ? snprintf(info, sizeof info, "%.*s/ompi_info", (int)(slash - real), real)
                  : snprintf(info, sizeof info, "ompi_info");
    return w > 0 && (size_t)w < sizeof info && !not_executable_reason(info);
}

int launch_self_path(const char *argv0, char *path, size_t n, struct err *e)
{
    /* /proc/self/exe names the running file even when argv[0] is a bare
     * name or a lie. When the file was replaced since we started, Linux adds
     * " (deleted)", which fails the executable check and so falls back. */
    char buf[LAUNCH_PATH_BYTES];
    ssize_t len = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (len > 0 && (size_t)len < sizeof buf - 1) {
        buf[len] = '\0';
        if (!not_executable_reason(buf)) return copy_path(buf, path, n, e);
    }
    struct err why = {0};
    if (argv0 && find_program(argv0, buf, &why) == 0) return copy_path(buf, path, n, e);
    return err_set(e, ERR_RUN,
                   "cannot find this program's own file to start the ranks with "
                   "(/proc/self/exe is unreadable and argv[0] '%s' %s); start them yourself: "
                   "mpirun -np N /full/path/to/strata real ...",
                   argv0 ? argv0 : "(none)", argv0 ? why.msg : "is missing");
}

const char *const launch_bind_names[] = {
    [LAUNCH_BIND_AUTO] = "auto",
    [LAUNCH_BIND_CORE] = "core",
    [LAUNCH_BIND_NONE] = "none",
};

int launch_bind_resolve(const char *choice, int n_procs, int cores, bool is_openmpi,
                        enum launch_bind *out, struct err *e)
{
    if (!choice) choice = "auto";
    int b = LAUNCH_BIND_AUTO;
    while (b <= LAUNCH_BIND_NONE && strcmp(choice, launch_bind_names[b])) b++;
    if (b > LAUNCH_BIND_NONE)
        return err_set(e, ERR_INPUT, "--bind: '%.40s' is not one of auto, core, none", choice);
    bool fits = cores >= 1 && n_procs <= cores;
    if (b == LAUNCH_BIND_CORE && !is_openmpi)
        return err_set(e, ERR_INPUT, "--bind core: the MPI launcher is not Open MPI's, whose "
                       "binding options are the only ones strata passes (use --bind none, or "
                       "start the ranks yourself with your launcher's binding)");
    if (b == LAUNCH_BIND_CORE && cores < 1)
        return err_set(e, ERR_INPUT, "--bind core: this machine's cores cannot be counted, so "
                       "%d ranks may not fit them (use --bind auto or none)", n_procs);
    if (b == LAUNCH_BIND_CORE && !fits)
        return err_set(e, ERR_INPUT, "--bind core: %d ranks cannot each have one of %d cores "
                       "(use --bind auto or none: ranks that time-share must be free to move)",
                       n_procs, cores);
    /* auto: pinned when each rank can have a core to itself, so a run's
     * step time no longer depends on where the scheduler happens to put
     * ranks (issue 11); with more ranks than cores, pinning would stack
     * ranks on cores the scheduler could otherwise balance. */
    if (b == LAUNCH_BIND_AUTO) b = is_openmpi && fits ? LAUNCH_BIND_CORE : LAUNCH_BIND_NONE;
    *out = (enum launch_bind)b;
    return 0;
}

int launch_cpus_allowed(void)
{
#ifdef CPU_COUNT
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
    return -1;
}

char **launch_build_argv(const char *mpirun, bool is_openmpi, int n_procs, enum launch_bind bind,
                         const char *self, int n_args, char *const *args, struct err *e)
{
    if (!mpirun || !*mpirun || !self || !*self) {
        err_set(e, ERR_INPUT, "launch: no %s path to build the MPI command line from",
                !mpirun || !*mpirun ? "launcher" : "program");
        return NULL;
    }
    if (n_procs < 1) {
        err_set(e, ERR_INPUT, "--np: %d is not allowed (1 or more processes)", n_procs);
        return NULL;
    }
    if (n_args < 0 || (n_args > 0 && !args)) {
        err_set(e, ERR_INPUT, "launch: %d arguments given without their strings", n_args);
        return NULL;
    }
    for (int i = 0; i < n_args; i++)
        if (!args[i]) {
            err_set(e, ERR_INPUT, "launch: argument %d of %d is NULL", i, n_args);
            return NULL;
        }

    if (bind != LAUNCH_BIND_CORE && bind != LAUNCH_BIND_NONE) {
        err_set(e, ERR_INPUT, "launch: --bind %s must be resolved to core or none first "
                "(launch_bind_resolve)", bind == LAUNCH_BIND_AUTO ? "auto" : "?");
        return NULL;
    }
    if (bind == LAUNCH_BIND_CORE && !is_openmpi) {
        err_set(e, ERR_INPUT, "--bind core: only Open MPI's binding options are known (use "
                "--bind none with this launcher)");
        return NULL;
    }

    char np_text[16];
    snprintf(np_text, sizeof np_text, "%d", n_procs);
    const char *head[10];
    size_t n_head = 0;
    head[n_head++] = mpirun;
    /* Open MPI counts cores as slots and refuses -np beyond them; comparing
     * strategies on 8 ranks on a 4-core laptop is exactly what we want. */
    if (is_openmpi) head[n_head++] = "--oversubscribe";
    /* Said explicitly rather than left to Open MPI's default, which depends
     * on the version and the rank count (Open MPI 4's mpirun(1): bind to
     * core for np <= 2, to socket above, none when oversubscribed). */
    if (is_openmpi && bind == LAUNCH_BIND_CORE) {
        head[n_head++] = "--bind-to";
        head[n_head++] = "core";
        head[n_head++] = "--map-by";
        head[n_head++] = "core";
    } else if (is_openmpi) {
        head[n_head++] = "--bind-to";
        head[n_head++] = "none";
    }
    head[n_head++] = "-np";
    head[n_head++] = np_text;
    head[n_head++] = self;
    /* mpirun [--oversubscribe] [binding] -np N self args... NULL */
    size_t n_total = n_head + (size_t)n_args + 1;
    char **argv = XCALLOC(e, n_total, sizeof *argv);
    if (!argv) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n_head; i++, k++)
        if (!(argv[k] = strdup(head[i]))) goto fail;
    for (int i = 0; i < n_args; i++, k++)
        if (!(argv[k] = strdup(args[i]))) goto fail;
    argv[k] = NULL;
    return argv;

fail:
    err_set(e, ERR_NOMEM, "out of memory copying the MPI command line (%zu strings)", n_total);
    launch_argv_free(argv);
    return NULL;
}

void launch_argv_free(char **argv)
{
    if (!argv) return;
    for (char **a = argv; *a; a++) free(*a);
    free(argv);
}

/* setenv(name, value) unless name is already set (to anything, even ""):
 * what the user exported wins. */
static int set_unless_set(const char *name, const char *value, struct err *e)
{
    if (getenv(name)) return 0;
    if (setenv(name, value, 0) < 0)
        return err_set(e, ERR_NOMEM, "cannot set %s=%s in the environment: %s", name, value,
                       strerror(errno));
    return 0;
}

int launch_prepare_env(bool is_openmpi, bool show_progress, struct err *e)
{
    if (is_openmpi && geteuid() == 0) {
        /* Open MPI's mpirun refuses to start as root (a mistake as root can
         * wreck the system) unless both variables of a pair say 1: orterun
         * (Open MPI <= 4) reads OMPI_*, PRRTE (Open MPI 5's runtime) reads
         * PRTE_*; both pairs cover either. Containers and CI usually are
         * root, hence the default. */
        TRY(set_unless_set("OMPI_ALLOW_RUN_AS_ROOT", "1", e));
        TRY(set_unless_set("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", e));
        TRY(set_unless_set("PRTE_ALLOW_RUN_AS_ROOT", "1", e));
        TRY(set_unless_set("PRTE_ALLOW_RUN_AS_ROOT_CONFIRM", "1", e));
    }
    if (show_progress && setenv("STRATA_PROGRESS", "1", 1) < 0)
        return err_set(e, ERR_NOMEM, "cannot set STRATA_PROGRESS=1 in the environment: %s",
                       strerror(errno));
    return 0;
}

int launch_exec(char **argv, struct err *e)
{
    if (!argv || !argv[0]) return err_set(e, ERR_RUN, "launch: empty MPI command line");
    /* What we printed so far must come out before the job's output. */
    fflush(NULL);
    execv(argv[0], argv);
    int errno_exec = errno;
    return err_set(e, ERR_RUN,
                   "cannot start the MPI launcher %s: %s; check that `%s --version` runs, "
                   "or set STRATA_MPIRUN to a launcher that does",
                   argv[0], strerror(errno_exec), argv[0]);
}

/* Opens path for the job's stdout on a descriptor above 2, or -1 with errno
 * set. Were it 1 (our stdout closed), the spawn's dup2(1, 1) would be a no-op
 * that leaves close-on-exec set on libcs older than POSIX 2017's fix, and the
 * job would start with no stdout. */
static int open_stdout_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || fd > STDERR_FILENO) return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    int errno_dup = errno;
    close(fd);
    errno = errno_dup;
    return high;
}

/* SIGTERM and SIGHUP while launch_run waits: sent on to the job (which
 * ends its ranks and its temporaries: a strata supervisor does), then,
 * once it is reaped, raised again here. Without this the caller died and
 * the job ran on, orphaned. */
static volatile sig_atomic_t ended_by;   /* the signal, 0 = none */
static volatile pid_t waited_job;        /* 0 until spawned */

static void forward_to_job(int sig)
{
    ended_by = sig;
    if (waited_job > 0) kill(waited_job, sig);
}

/* SIGINT while launch_run waits: the terminal sent it to the job as well,
 * so it is only noted; once the job has ended of it, it is raised again
 * here. Ignored (as system() does), a Ctrl-C ended the job and the caller
 * took the job's 130 for a failed run and went on, or exited 1. */
static volatile sig_atomic_t is_interrupted;

static void note_interrupt(int sig)
{
    (void)sig;
    is_interrupted = 1;
}

int launch_run(char **argv, const char *stdout_path, int *exit_code, struct err *e)
{
    if (exit_code) *exit_code = -1;
    if (!argv || !argv[0] || !*argv[0])
        return err_set(e, ERR_RUN, "launch: empty command line");
    /* Checked here so that every libc reports it the same way: glibc's
     * posix_spawn returns the exec error, others let the child exit 127. */
    const char *why = not_executable_reason(argv[0]);
    if (why) return err_set(e, ERR_RUN, "cannot run %s: %s", argv[0], why);

    int out_fd = -1;
    if (stdout_path) {
        out_fd = open_stdout_file(stdout_path);
        if (out_fd < 0)
            return err_set(e, ERR_IO, "cannot write %s: %s; check that its directory exists "
                           "and is writable", stdout_path, strerror(errno));
    }

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc) {
        if (out_fd >= 0) close(out_fd);
        return err_set(e, ERR_NOMEM, "cannot start %s: %s", argv[0], strerror(rc));
    }
    rc = posix_spawnattr_init(&attr);
    if (rc) {
        posix_spawn_file_actions_destroy(&actions);
        if (out_fd >= 0) close(out_fd);
        return err_set(e, ERR_NOMEM, "cannot start %s: %s", argv[0], strerror(rc));
    }
    if (out_fd >= 0) rc = posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);

    /* As system() does: while the job runs, Ctrl-C and Ctrl-\ are the job's
     * business (the terminal sends them to it too); we wait and report its
     * status. Ignored before the spawn, so no signal falls between; the
     * child gets the default action back unless the caller ignored them. */
    struct sigaction ignore, note, old_int, old_quit;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    note = ignore;
    note.sa_handler = note_interrupt;
    is_interrupted = 0;
    sigaction(SIGINT, &ignore, &old_int);
    if (old_int.sa_handler != SIG_IGN) sigaction(SIGINT, &note, NULL);
    sigaction(SIGQUIT, &ignore, &old_quit);
    struct sigaction forward, old_term, old_hup;
    memset(&forward, 0, sizeof forward);
    forward.sa_handler = forward_to_job;
    sigemptyset(&forward.sa_mask);
    ended_by = 0;
    waited_job = 0;
    sigaction(SIGTERM, NULL, &old_term);
    sigaction(SIGHUP, NULL, &old_hup);
    if (old_term.sa_handler != SIG_IGN) sigaction(SIGTERM, &forward, NULL);
    if (old_hup.sa_handler != SIG_IGN) sigaction(SIGHUP, &forward, NULL);
    sigset_t restore_default;
    sigemptyset(&restore_default);
    if (old_int.sa_handler != SIG_IGN) sigaddset(&restore_default, SIGINT);
    if (old_quit.sa_handler != SIG_IGN) sigaddset(&restore_default, SIGQUIT);
    if (old_term.sa_handler != SIG_IGN) sigaddset(&restore_default, SIGTERM);
    if (old_hup.sa_handler != SIG_IGN) sigaddset(&restore_default, SIGHUP);
    if (!rc) rc = posix_spawnattr_setsigdefault(&attr, &restore_default);
    if (!rc) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);

    pid_t pid = -1;
    if (!rc) {
        fflush(NULL); /* our earlier output before the job's */
        rc = posix_spawn(&pid, argv[0], &actions, &attr, argv, environ);
    }
    if (!rc) {
        waited_job = pid;
        if (ended_by) kill(pid, ended_by);   /* it came before the job was there */
    }
    int status = 0, errno_wait = 0;
    if (!rc) {
        while (waitpid(pid, &status, 0) < 0) {
            if (errno != EINTR) {
                errno_wait = errno;
                break;
            }
        }
    }

    waited_job = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    /* the job is over: the signal that asked for it now does here what it
     * would have done (a handler of the caller's, e.g. core/temp_files) */
    if (ended_by) raise(ended_by);
    /* a Ctrl-C that ended the job (by the signal, or strata real's exit
     * 130) ends the caller too; a job that took it and went on does not */
    bool is_ended_by_interrupt =
        !rc && !errno_wait &&
        ((WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) ||
         (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT));
    if (is_interrupted && is_ended_by_interrupt) raise(SIGINT);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (out_fd >= 0) close(out_fd);

    if (rc) return err_set(e, ERR_RUN, "cannot start %s: %s", argv[0], strerror(rc));
    if (errno_wait)
        return err_set(e, ERR_RUN, "lost track of %s (pid %ld): waitpid: %s", argv[0],
                       (long)pid, strerror(errno_wait));
    if (exit_code) {
        if (WIFEXITED(status)) *exit_code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status)) *exit_code = 128 + WTERMSIG(status);
    }
    return 0;
}

int launch_job(char **argv, int *exit_code, struct err *e)
{
    const char *tmp = getenv("TMPDIR");
    char base[4096];
    snprintf(base, sizeof base, "%s/strata-mpi-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    bool is_own = !getenv("OMPI_MCA_orte_tmpdir_base") && mkdtemp(base) != NULL;
    if (is_own) setenv("OMPI_MCA_orte_tmpdir_base", base, 1);
    int rc = launch_run(argv, NULL, exit_code, e);
    if (is_own) {
        unsetenv("OMPI_MCA_orte_tmpdir_base");
        rmdir(base);   /* OpenMPI removed its session directory inside; empty now */
    }
    return rc;
}

/* job with "--hostfile" path put before its "-np" (launch_build_argv's
 * form has one); job is freed either way. */
static char **with_hostfile(char **job, const char *path, struct err *e)
{
    size_t n = 0, np_at = 0;
    while (job[n]) n++;
    while (np_at < n && strcmp(job[np_at], "-np")) np_at++;
    char **out = XCALLOC(e, n + 3, sizeof *out);
    char *flag = strdup("--hostfile"), *file = strdup(path);
    if (!out || !flag || !file) {
        if (out) err_set(e, ERR_NOMEM, "out of memory for the MPI command line");
        free(out);
        free(flag);
        free(file);
        launch_argv_free(job);
        return NULL;
    }
    memcpy(out, job, np_at * sizeof *out);
    out[np_at] = flag;
    out[np_at + 1] = file;
    memcpy(out + np_at + 2, job + np_at, (n - np_at + 1) * sizeof *out);
    free(job);   /* its strings now belong to out */
    return out;
}

char **launch_forward_env(char **job, bool is_openmpi, const char *const *names, int n,
                          struct err *e)
{
    if (!is_openmpi) return job;
    size_t len = 0, np_at = 0;
    while (job[len]) len++;
    while (np_at < len && strcmp(job[np_at], "-np")) np_at++;
    char **out = XCALLOC(e, len + 2 * (size_t)n + 1, sizeof *out);
    if (!out) {
        launch_argv_free(job);
        return NULL;
    }
    memcpy(out, job, np_at * sizeof *out);
    size_t k = np_at;
    for (int i = 0; i < n; i++) {
        if (!getenv(names[i])) continue;   /* mpirun warns of a name not set */
        if (!(out[k] = strdup("-x")) || !(out[k + 1] = strdup(names[i]))) {
            free(out[k]);
            for (size_t j = np_at; j < k; j++) free(out[j]);
            free(out);
            launch_argv_free(job);
            err_set(e, ERR_NOMEM, "out of memory for the MPI command line");
            return NULL;
        }
        k += 2;
    }
    memcpy(out + k, job + np_at, (len - np_at + 1) * sizeof *out);
    free(job);   /* its strings now belong to out */
    return out;
}

char **launch_self_job_argv(const char *command, int argc, char **argv, int n_ranks,
                            const char *bind, const char *hostfile, bool *is_openmpi,
                            struct err *e)
{
    char mpirun[LAUNCH_PATH_BYTES], self[LAUNCH_PATH_BYTES];
    bool has_hosts = hostfile && *hostfile;
    struct hostfile_summary hosts;
    if ((has_hosts && hostfile_check(hostfile, &hosts, e) < 0) ||
        launch_find_mpirun(mpirun, sizeof mpirun, e) < 0 ||
        launch_self_path("strata", self, sizeof self, e) < 0)
        return NULL;
    *is_openmpi = launch_mpirun_is_openmpi(mpirun);
    /* With hosts listed, this machine's cores say nothing of theirs: auto
     * is none, and core is each host's business (launch.h). */
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (has_hosts && (!bind || !strcmp(bind, "auto"))) bind = "none";
    if (has_hosts) cores = n_ranks;
    enum launch_bind how;
    if (launch_bind_resolve(bind, n_ranks, cores, *is_openmpi, &how, e) < 0) return NULL;
    /* the ranks run the same command with the same options */
    char **args = XCALLOC(e, (size_t)argc + 2, sizeof *args);
    if (!args) return NULL;
    args[0] = (char *)command;
    for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
    char **job = launch_build_argv(mpirun, *is_openmpi, n_ranks, how, self, argc + 1, args, e);
    free(args);
    return job && has_hosts ? with_hostfile(job, hostfile, e) : job;
}

int launch_self_as_job(const char *command, int argc, char **argv, int n_ranks,
                       const char *bind, const char *hostfile, bool show_progress,
                       int *exit_code, struct err *e)
{
    *exit_code = -1;
    bool is_openmpi = false;
    char **job = launch_self_job_argv(command, argc, argv, n_ranks, bind, hostfile, &is_openmpi,
                                      e);
    if (!job) return e->code;
    int rc = launch_prepare_env(is_openmpi, show_progress, e);
    if (rc == 0) {
        untracked_prepare_ranks_env();
        fflush(stdout);
        rc = launch_job(job, exit_code, e);
    }
    launch_argv_free(job);
    return rc;
}

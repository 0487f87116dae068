/* A fixed table, because the signal handler may use only what is
 * async-signal-safe: no malloc, no stdio, no opendir; just unlink, rmdir,
 * open and the getdents64 system call (Linux) for a directory's entries.
 * Slots are filled before they are marked live, and marked free before
 * they are reused, so the handler never reads half a path. */
#define _GNU_SOURCE   /* syscall, for getdents64 in the signal handler; before any header */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include "temp_files.h"

/* Files strata writes at once: one per output, a plot's directory. */
#define MAX_LIVE 16
#define PATH_MAX_BYTES 4200

enum { SLOT_FREE, SLOT_FILE, SLOT_DIR };

/* Levels of subdirectories a tracked directory may hold: each level of
 * the handler's walk keeps a 4 KiB buffer on the signal stack. */
#define MAX_DEPTH 4

static struct {
    volatile sig_atomic_t state;
    int depth;   /* SLOT_DIR: levels of subdirectories removed with it */
    char path[PATH_MAX_BYTES];
} live[MAX_LIVE];

static const int cleaned_signals[] = {SIGINT, SIGTERM, SIGHUP};
static bool are_handlers_installed;

/* The entries of directory `name` (in dirfd) that strata made: its files,
 * and the subdirectories `depth` levels down with theirs (a plot's
 * directory is flat; calibrate's checkpoints hold a directory a save). */
static void empty_dir(int dirfd, const char *name, int depth)
{
#ifdef __linux__
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    /* struct linux_dirent64, as getdents64(2) gives it */
    char buf[4096] __attribute__((aligned(8)));
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long off = 0; off < n;) {
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, sizeof reclen);
            const char *entry = buf + off + 19;
            /* a directory refuses unlink (EISDIR): emptied, then removed */
            if (strcmp(entry, ".") && strcmp(entry, "..") && unlinkat(fd, entry, 0) != 0 &&
                depth > 0) {
                empty_dir(fd, entry, depth - 1);
                unlinkat(fd, entry, AT_REMOVEDIR);
            }
            off += reclen;
        }
    close(fd);
#else
    (void)dirfd, (void)name, (void)depth;   /* elsewhere rmdir fails on a non-empty directory: it stays */
#endif
}

static void on_signal(int sig)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        if (live[i].state == SLOT_FILE) unlink(live[i].path);
        if (live[i].state == SLOT_DIR) {
            empty_dir(AT_FDCWD, live[i].path, live[i].depth);
            rmdir(live[i].path);
        }
    }
    /* Die of the signal, as without the handler, so the parent sees why. */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    are_handlers_installed = true;
    for (size_t i = 0; i < sizeof cleaned_signals / sizeof cleaned_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(cleaned_signals[i], NULL, &old) < 0 || old.sa_handler != SIG_DFL)
            continue;
        struct sigaction sa = {0};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        for (size_t j = 0; j < sizeof cleaned_signals / sizeof cleaned_signals[0]; j++)
            sigaddset(&sa.sa_mask, cleaned_signals[j]);
        sigaction(cleaned_signals[i], &sa, NULL);
    }
}

static int track(const char *path, int state, int depth)
{
    if (!are_handlers_installed) install_handlers();
    size_t len = strlen(path);
    if (len >= PATH_MAX_BYTES || depth < 0 || depth > MAX_DEPTH) return -1;
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i].state == SLOT_FREE) {
            memcpy(live[i].path, path, len + 1);
            live[i].depth = depth;
            live[i].state = state;
            return i;
        }
    return -1;
}

int temp_files_track(const char *path, bool is_dir)
{
    return track(path, is_dir ? SLOT_DIR : SLOT_FILE, 0);
}

int temp_files_track_tree(const char *path, int depth)
{
    return track(path, SLOT_DIR, depth);
}

void temp_files_forget(int slot)
{
    if (slot >= 0 && slot < MAX_LIVE) live[slot].state = SLOT_FREE;
}

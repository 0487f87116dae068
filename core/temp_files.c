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

static struct {
    volatile sig_atomic_t state;
    char path[PATH_MAX_BYTES];
} live[MAX_LIVE];

static const int cleaned_signals[] = {SIGINT, SIGTERM, SIGHUP};
static bool are_handlers_installed;

/* The entries of a directory strata made for a plot (flat: files only). */
static void empty_dir(const char *dir)
{
#ifdef __linux__
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    /* struct linux_dirent64, as getdents64(2) gives it */
    char buf[4096] __attribute__((aligned(8)));
    long n;
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long off = 0; off < n;) {
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, sizeof reclen);
            const char *name = buf + off + 19;
            if (strcmp(name, ".") && strcmp(name, "..")) unlinkat(fd, name, 0);
            off += reclen;
        }
    close(fd);
#else
    (void)dir;  /* elsewhere rmdir fails on a non-empty directory: it stays */
#endif
}

static void on_signal(int sig)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        if (live[i].state == SLOT_FILE) unlink(live[i].path);
        if (live[i].state == SLOT_DIR) {
            empty_dir(live[i].path);
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

int temp_files_track(const char *path, bool is_dir)
{
    if (!are_handlers_installed) install_handlers();
    size_t len = strlen(path);
    if (len >= PATH_MAX_BYTES) return -1;
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i].state == SLOT_FREE) {
            memcpy(live[i].path, path, len + 1);
            live[i].state = is_dir ? SLOT_DIR : SLOT_FILE;
            return i;
        }
    return -1;
}

void temp_files_forget(int slot)
{
    if (slot >= 0 && slot < MAX_LIVE) live[slot].state = SLOT_FREE;
}

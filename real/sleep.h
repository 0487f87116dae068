/* Sleeping for a while in real/: a straggler's delay (worker.c), a test's
 * late rank (heartbeat.c). */
#ifndef STRATA_REAL_SLEEP_H
#define STRATA_REAL_SLEEP_H

#include <errno.h>
#include <time.h>

/* Sleeps s seconds, on through signals; nothing for s <= 0. */
static inline void sleep_s(double s)
{
    if (!(s > 0)) return;
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

#endif

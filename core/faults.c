/* One armed fault at a time: a kind and a countdown. Global mutable state,
 * like the registries, because it stands for the system's own state (the
 * allocator, the disk); it is touched only from the main thread, as every
 * file strata writes is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"

const char *const fault_kind_names[FAULT_N_KINDS] = {"alloc", "open", "write", "fsync", "rename"};

static bool is_env_read;
static int armed_kind = -1;  /* -1: nothing armed */
static long calls_left;      /* calls of armed_kind still to succeed before the fault */
static long nth_armed;       /* the N of the fault, for its message */

void faults_arm(enum fault_kind kind, long nth)
{
    is_env_read = true;  /* an explicit arming wins over the environment */
    armed_kind = nth > 0 ? (int)kind : -1;
    calls_left = nth - 1;
    nth_armed = nth;
}

void faults_disarm(void)
{
    faults_arm(FAULT_ALLOC, 0);
}

/* STRATA_FAULT=KIND:N; anything else there is ignored, since a test hook
 * must never change what a user's run does. */
static void read_env(void)
{
    is_env_read = true;
    const char *v = getenv("STRATA_FAULT");
    if (!v) return;
    const char *colon = strchr(v, ':');
    if (!colon) return;
    char *end;
    long nth = strtol(colon + 1, &end, 10);
    if (*end || nth <= 0) return;
    for (int k = 0; k < FAULT_N_KINDS; k++)
        if (strlen(fault_kind_names[k]) == (size_t)(colon - v) &&
            !strncmp(v, fault_kind_names[k], (size_t)(colon - v)))
            faults_arm((enum fault_kind)k, nth);
}

bool fault_hit(enum fault_kind kind)
{
    if (!is_env_read) read_env();
    if (armed_kind != (int)kind) return false;
    if (calls_left-- > 0) return false;
    armed_kind = -1;
    fprintf(stderr, "strata: injected fault: %s #%ld\n", fault_kind_names[kind], nth_armed);
    return true;
}

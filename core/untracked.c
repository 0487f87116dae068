#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "untracked.h"

void untracked_prepare_ranks_env(void)
{
#if defined(__SANITIZE_ADDRESS__)
    const char *was = getenv("LSAN_OPTIONS");
    if (was && strstr(was, "fast_unwind_on_malloc")) return;
    char opts[4096];
    snprintf(opts, sizeof opts, "%s%sfast_unwind_on_malloc=0", was ? was : "",
             was && *was ? ":" : "");
    setenv("LSAN_OPTIONS", opts, 1);
#endif
}

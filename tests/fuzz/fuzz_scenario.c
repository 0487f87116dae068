/* libFuzzer: scenario files (core/config). See entry.h. */
#include <unistd.h>

#include "../../core/config.h"
#include "entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/strata-libfuzzer-scenario-%ld.conf", (long)getpid());
    fuzz_entry_write(path, data, size);
    struct config c;
    struct err e = {0};
    config_init(&c);
    int rc = config_load_file(&c, path, ~0u, &e);
    config_release(&c);
    fuzz_entry_check(rc, &e);
    return 0;
}

/* libFuzzer: cluster profiles (sim/cluster). See entry.h. */
#include <unistd.h>

#include "../../sim/cluster.h"
#include "entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/strata-libfuzzer-cluster-%ld.txt", (long)getpid());
    fuzz_entry_write(path, data, size);
    struct cluster c;
    struct err e = {0};
    int rc = cluster_load(path, &c, &e);
    if (rc == 0) rc = cluster_layout(&c, 9, 0, 0, "hierarchical", &e);
    fuzz_entry_check(rc, &e);
    return 0;
}

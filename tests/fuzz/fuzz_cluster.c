/* libFuzzer: cluster profiles (sim/cluster). See entry.h. */
#include "entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_entry_file_case("cluster.txt", data, size, fuzz_target_cluster_file);
    return 0;
}

/* libFuzzer: scenario files (core/config) and the option values they set.
 * See entry.h. */
#include "entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_entry_file_case("scenario.conf", data, size, fuzz_target_scenario_file);
    return 0;
}

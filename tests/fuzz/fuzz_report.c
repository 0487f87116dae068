/* libFuzzer: report documents (core/report_read). See entry.h. */
#include "entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct err e = {0};
    fuzz_entry_check(fuzz_target_report((const char *)data, size, &e), &e);
    return 0;
}

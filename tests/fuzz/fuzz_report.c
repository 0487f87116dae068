/* libFuzzer: report documents (core/report_read). See entry.h. */
#include "../../core/report.h"
#include "entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct report_doc d;
    struct err e = {0};
    int rc = report_doc_parse((const char *)data, size, "fuzz.json", &d, &e);
    if (rc == 0) report_doc_release(&d);
    fuzz_entry_check(rc, &e);
    return 0;
}

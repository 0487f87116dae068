/* What the libFuzzer entry points (tests/fuzz/fuzz_*.c) share: an input
 * put where a parser that reads files finds it, and the check every case
 * makes (0, or a clean error: the test suite's test_fuzz.c makes the same),
 * and through targets.h the very cases test_fuzz.c runs for files.
 * Built only with -DSTRATA_LIBFUZZER=ON and clang (CMakeLists.txt):
 *
 *   CC=clang cmake -S . -B build-libfuzzer -DSTRATA_LIBFUZZER=ON
 *   cmake --build build-libfuzzer --target fuzz_report
 *   build-libfuzzer/fuzz_report tests/corpus/report -max_total_time=60
 */
#ifndef STRATA_TESTS_FUZZ_ENTRY_H
#define STRATA_TESTS_FUZZ_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../core/err.h"
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data[0..size) into the file at path (created or truncated); aborts when
 * it cannot, which libFuzzer reports. */
static inline void fuzz_entry_write(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
}

/* A copy of data[0..size) with a NUL after it (caller frees). */
static inline char *fuzz_entry_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    for (size_t i = 0; i < size; i++) s[i] = (char)data[i];
    s[size] = '\0';
    return s;
}

/* A parser's result must be 0 or a clean error: a code a parser may give,
 * the same code in e, a message with no control character. */
static inline void fuzz_entry_check(int rc, const struct err *e)
{
    if (rc >= 0) return;
    if (!(rc == ERR_INPUT || rc == ERR_NOMEM || rc == ERR_IO) || e->code != rc || !e->msg[0])
        abort();
    for (const unsigned char *p = (const unsigned char *)e->msg; *p; p++)
        if (*p < 0x20 || *p == 0x7f) abort();
}

/* For the parsers that read files: data[0..size) into
 * /tmp/strata-libfuzzer-<pid>-<name>, run through target, its result
 * checked as fuzz_entry_check does. */
static inline void fuzz_entry_file_case(const char *name, const uint8_t *data, size_t size,
                                        int (*target)(const char *path, struct err *e))
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/strata-libfuzzer-%ld-%s", (long)getpid(), name);
    fuzz_entry_write(path, data, size);
    struct err e = {0};
    fuzz_entry_check(target(path, &e), &e);
}

#endif

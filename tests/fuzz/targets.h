/* What one fuzz case runs for the parsers that read files, shared by the
 * suite's fuzz test (tests/test_fuzz.c) and the libFuzzer entry points
 * (tests/fuzz/fuzz_*.c), so both fuzz the very same calls. Each returns 0
 * or the parser's negative code with e filled; the caller checks that it
 * is a clean error. */
#ifndef STRATA_TESTS_FUZZ_TARGETS_H
#define STRATA_TESTS_FUZZ_TARGETS_H

#include <stddef.h>

#include "../../core/config.h"

/* What consumers parse from option text once the table has checked it:
 * --straggler and --fail. */
int fuzz_target_option_values(const struct config *c, struct err *e);

/* A scenario file at path, as `strata -f` reads it, then its option values. */
int fuzz_target_scenario_file(const char *path, struct err *e);

/* A cluster profile at path, loaded then laid out for 9 ranks (hierarchical). */
int fuzz_target_cluster_file(const char *path, struct err *e);

/* A report document (report, compare, sweep or validate) of bytes[0..len). */
int fuzz_target_report(const char *bytes, size_t len, struct err *e);

#endif

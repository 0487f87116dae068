/* libFuzzer: option values parsed after the table: --straggler, --fail
 * (core/straggler) and --model (core/workload), and the input as one
 * command line, a word a line (core/config). See entry.h. */
#include <string.h>

#include "../../core/config.h"
#include "../../core/straggler.h"
#include "../../core/workload.h"
#include "entry.h"

static void fuzz_command_line(char *text)
{
    enum { MAX_WORDS = 256 };
    char *argv[MAX_WORDS];
    int argc = 0;
    for (char *p = text; p && argc < MAX_WORDS; argc++) {
        argv[argc] = p;
        p = strchr(p, '\n');
        if (p) *p++ = '\0';
    }
    for (int i = 0; i < argc; i++)   /* -f would read any file a mutant names */
        if (!strncmp(argv[i], "-f", 2) || !strncmp(argv[i], "--file", 6)) argv[i] = "--";
    struct config c;
    struct err e = {0};
    config_init(&c);
    fuzz_entry_check(config_parse_args(&c, argc, argv, ~0u, &e), &e);
    config_release(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_entry_text(data, size);
    struct err e = {0};
    struct straggler_spec s;
    fuzz_entry_check(straggler_parse(text, &s, &e), &e);
    struct failure_spec f;
    e = (struct err){0};
    fuzz_entry_check(failure_parse(text, &f, &e), &e);
    struct workload *w = NULL;
    e = (struct err){0};
    fuzz_entry_check(workload_parse(text, &w, &e), &e);
    workload_free(w);
    fuzz_command_line(text);
    free(text);
    return 0;
}

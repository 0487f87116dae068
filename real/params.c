/* The parameter file (real/params.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/fileio.h"
#include "params.h"

static const char params_magic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'P', '1'};

int params_save(const char *path, const float *params, int64_t n, struct err *e)
{
    size_t bytes = sizeof params_magic + sizeof n + (size_t)n * sizeof(float);
    char *buf = XCALLOC(e, bytes, 1);
    if (!buf) return ERR_NOMEM;
    memcpy(buf, params_magic, sizeof params_magic);
    memcpy(buf + sizeof params_magic, &n, sizeof n);
    memcpy(buf + sizeof params_magic + sizeof n, params, (size_t)n * sizeof(float));
    int rc = file_write_atomic(path, buf, bytes, e);
    free(buf);
    return rc < 0 ? err_prefix(e, "--save-params") : 0;
}

/* The most parameters a file may hold: 2^34 floats, 64 GiB, far beyond any
 * model strata trains, yet small enough that the byte count cannot overflow. */
#define PARAMS_MOST ((int64_t)1 << 34)

/* Header: the magic and the count. */
#define PARAMS_HEADER_BYTES ((long long)sizeof params_magic + (long long)sizeof(int64_t))

int params_load(const char *path, float **out, int64_t *n, struct err *e)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, ERR_INPUT, "%s: cannot open (%s)", path, strerror(errno));
    /* the file's size, so that a damaged count is refused before it is
     * allocated (a count of 2^34 in a 12 kB file asked for 64 GiB); -1 for
     * a file that cannot seek, which the reads below still check */
    long long file_bytes = -1;
    if (fseek(f, 0, SEEK_END) == 0) file_bytes = ftell(f);
    if (fseek(f, 0, SEEK_SET) != 0) file_bytes = -1;
    char magic[8];
    int64_t count = 0;
    int rc = 0;
    if (fread(magic, 1, sizeof magic, f) != sizeof magic || memcmp(magic, params_magic, 8)) {
        rc = err_set(e, ERR_INPUT, "%s: not a strata parameter file: it does not begin with "
                     "STRATAP1 (see real/params.h)", path);
    } else if (fread(&count, sizeof count, 1, f) != 1) {
        rc = err_set(e, ERR_INPUT, "%s: ends inside its header (8 bytes STRATAP1, then the count "
                     "of parameters in 8 bytes): truncated", path);
    } else if (count < 1 || count > PARAMS_MOST) {
        rc = err_set(e, ERR_INPUT, "%s: its header counts %lld parameters (1 to %lld allowed): "
                     "a damaged file", path, (long long)count, (long long)PARAMS_MOST);
    } else if (file_bytes >= 0 &&
               file_bytes != PARAMS_HEADER_BYTES + (long long)count * (long long)sizeof(float)) {
        rc = err_set(e, ERR_INPUT, "%s: %lld bytes, but the %lld parameters its header counts "
                     "take %lld (%lld of header, 4 a parameter): truncated or damaged", path,
                     file_bytes, (long long)count,
                     PARAMS_HEADER_BYTES + (long long)count * (long long)sizeof(float),
                     PARAMS_HEADER_BYTES);
    } else if (!(*out = malloc((size_t)count * sizeof(float) + 1))) {
        rc = err_set(e, ERR_NOMEM, "%s: out of memory for %lld parameters", path, (long long)count);
    } else if (fread(*out, sizeof(float), (size_t)count, f) != (size_t)count || fgetc(f) != EOF) {
        rc = err_set(e, ERR_INPUT, "%s: holds more or fewer than its %lld parameters", path,
                     (long long)count);
    }
    fclose(f);
    if (rc < 0) {
        free(*out);
        *out = NULL;
        return rc;
    }
    *n = count;
    return 0;
}

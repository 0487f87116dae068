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

int params_load(const char *path, float **out, int64_t *n, struct err *e)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, ERR_INPUT, "%s: cannot open (%s)", path, strerror(errno));
    char magic[8];
    int64_t count = 0;
    int rc = 0;
    if (fread(magic, 1, sizeof magic, f) != sizeof magic || memcmp(magic, params_magic, 8) ||
        fread(&count, sizeof count, 1, f) != 1 || count < 0 || count > (int64_t)1 << 34) {
        rc = err_set(e, ERR_INPUT, "%s: not a strata parameter file (see real/params.h)", path);
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

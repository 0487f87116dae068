/* The axes of `strata validate`'s matrix: models x rank counts x straggler
 * models, read from --models, --np-list (or --np) and --stragglers (or
 * --straggler), each element checked, so that a mistake is refused before
 * anything runs (ERR_INPUT, exit 2).
 *
 * Lists are comma separated. A model or straggler spec can itself hold
 * commas (transformer:layers=2,hidden=512; slow:1=2,3=4): a piece that holds
 * '=' but no ':' continues the element before it, so
 * "none,slow:1=2,3=4,exp:0.5" is three elements. */
#ifndef STRATA_BENCH_VALIDATE_AXES_H
#define STRATA_BENCH_VALIDATE_AXES_H

#include "../core/config.h"
#include "../core/err.h"
#include "../core/straggler.h"
#include "../core/workload.h"

/* Enough for any matrix a machine can measure in a day; more is refused. */
#define VALIDATE_MAX_AXIS 32
#define VALIDATE_SPEC_BYTES 256

struct validate_axes {
    int n_models;
    char models[VALIDATE_MAX_AXIS][VALIDATE_SPEC_BYTES];
    struct workload *workloads[VALIDATE_MAX_AXIS];       /* owned, one per model */
    int n_np;
    int np[VALIDATE_MAX_AXIS];
    int n_stragglers;
    char stragglers[VALIDATE_MAX_AXIS][VALIDATE_SPEC_BYTES];
    struct straggler_spec straggler_specs[VALIDATE_MAX_AXIS];
    int repeat;
};

/* Splits text at the commas that start an element (see above) into
 * out[0..*n), at most cap elements. ERR_INPUT naming opt when an element is
 * empty, longer than VALIDATE_SPEC_BYTES - 1, or there are more than cap. */
int validate_split_list(const char *opt, const char *text, char (*out)[VALIDATE_SPEC_BYTES],
                        int cap, int *n, struct err *e);

/* The axes of cfg: --models (else --model), --np-list (else --np, else
 * --devices), --stragglers (else --straggler), --repeat. Each element is
 * parsed as its single option would be (workload_parse, straggler_parse);
 * a model that real runs cannot train (not mlp:) is refused, and so is a
 * straggler naming a rank that does not compute at some np, naming both.
 * Release with validate_axes_release whatever it returned. */
int validate_axes_parse(const struct config *cfg, struct validate_axes *ax, struct err *e);
void validate_axes_release(struct validate_axes *ax);

#endif

/* Private to real/: a parameter-server rank (real/ps_server.c). */
#ifndef STRATA_REAL_PS_SERVER_H
#define STRATA_REAL_PS_SERVER_H

#include "../core/err.h"
#include "real_ctx.h"

/* Serves this server rank's shard until every worker is done. */
int ps_serve(struct real_ctx *ctx, struct err *e);

#endif

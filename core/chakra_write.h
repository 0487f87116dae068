/* A plan written as Chakra execution traces (core/chakra.h): one file
 * DIR/NAME.RANK.et per rank, parameter servers included, each the global
 * metadata then one node per op. docs/chakra.md gives the mapping. */
#ifndef STRATA_CHAKRA_WRITE_H
#define STRATA_CHAKRA_WRITE_H

#include "config.h"
#include "err.h"
#include "plan.h"

/* Writes p's ranks to dir (made when missing; its parent must exist) as
 * name.RANK.et, each atomically (core/fileio). cfg's scenario options go
 * into the metadata, so that reading the files back (core/chakra_plan.h)
 * gives the same plan and the same report. ERR_INPUT for a directory that
 * cannot be made or written, ERR_IO, ERR_NOMEM. */
int chakra_write_plan(const struct plan *p, const struct config *cfg, const char *dir,
                      const char *name, struct err *e);

/* Checks, writing nothing, that chakra_write_plan could write into dir. */
int chakra_check_dir(const char *dir, struct err *e);

#endif

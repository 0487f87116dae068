/* Checkpoints' files and directories (real/checkpoint.h's layout), with no
 * MPI: what the supervisor reads before a job starts (checkpoint_newest,
 * checkpoint_check, checkpoint_check_resume, in checkpoint_files.c) and
 * what real/checkpoint.c's collective side shares with it. Internal to
 * real/checkpoint*. */
#ifndef STRATA_REAL_CHECKPOINT_FILES_H
#define STRATA_REAL_CHECKPOINT_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "../core/ckpt_file.h"
#include "../core/config.h"
#include "../core/err.h"
#include "../core/plan.h"

#define CKPT_PATH_BYTES 4096
#define MANIFEST_NAME "MANIFEST"

/* DIR/step-NNNNNNNNNN into out[0..n). */
void checkpoint_step_dir(char *out, size_t n, const char *dir, int64_t step);
/* mkdir -p path: 0, or -1 with errno. */
int checkpoint_make_dirs(char *path);
/* dir itself a whole checkpoint (DIR/step-N with its MANIFEST)? its step, else -1. */
int64_t checkpoint_step_of_dir(const char *dir);
/* Removes dir's files and, depth levels down, directories, then dir. Best effort. */
void checkpoint_remove_tree(const char *dir, int depth);
/* Keeps the newest two whole checkpoints in dir (and any newer partial one). */
void checkpoint_prune(const char *dir);
/* The bytes of path, read whole (caller frees). ERR_INPUT naming it. */
int checkpoint_slurp(const char *path, unsigned char **out, size_t *n, struct err *e);
/* The rank count in the MANIFEST of the checkpoint directory dir. ERR_INPUT. */
int checkpoint_read_manifest(const char *dir, int64_t *ranks, struct err *e);
/* What a checkpoint of this run (n_params parameters) at step, written by
 * rank, says of itself. */
void checkpoint_ident_of(const struct config *cfg, const struct plan *p, int64_t n_params,
                         int rank, int64_t step, struct ckpt_ident *id);

#endif

/* The temporaries strata has made and not yet renamed or removed, so that
 * SIGINT, SIGTERM or SIGHUP removes them before the process dies: an
 * interrupted write leaves neither half a report nor a stray temporary. */
#ifndef STRATA_TEMP_FILES_H
#define STRATA_TEMP_FILES_H

#include <stdbool.h>

/* Records path (a file, or with is_dir a directory whose entries go with
 * it); the first call installs the signal handlers, for each signal whose
 * handling is still the default (an MPI library's own handler is left
 * alone). Returns a slot for temp_files_forget, or -1 when the registry is
 * full or path too long: the temporary is then only removed by the code
 * that made it, as before. */
int temp_files_track(const char *path, bool is_dir);

/* The same for a directory of directories: its files, and its
 * subdirectories down to `depth` levels below it (0 = flat, as
 * temp_files_track's is_dir) with theirs, go with it. -1 as above, and
 * for a depth outside 0 to 4. */
int temp_files_track_tree(const char *path, int depth);

/* Forgets slot (done with it: renamed or removed); -1 is ignored. */
void temp_files_forget(int slot);

#endif

/* Allocations that live as long as the process by design, made by
 * libraries strata calls (MPI_Init, MPI_Finalize):
 * under AddressSanitizer they are made with leak tracking off, because
 * those libraries unload plug-ins before LeakSanitizer looks and their
 * allocations cannot even be named in a suppression file. Everything
 * strata allocates is still checked. Outside sanitizer builds: nothing. */
#ifndef STRATA_UNTRACKED_H
#define STRATA_UNTRACKED_H

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define UNTRACKED_BEGIN() __lsan_disable()
#define UNTRACKED_END() __lsan_enable()
#else
#define UNTRACKED_BEGIN() ((void)0)
#define UNTRACKED_END() ((void)0)
#endif

/* MPI's progress threads allocate too, during the run, and only a full
 * unwind of their stacks shows the libevent frame that tools/lsan-mpi.supp
 * names; full unwinding makes every allocation slower, so only MPI ranks get
 * it: a process about to start ranks calls this (nothing outside sanitizer
 * builds). */
void untracked_prepare_ranks_env(void);

#endif

/* Starting MPI jobs: `strata real --np N`, `strata calibrate` and `strata
 * compare --mode real` relaunch strata under the MPI launcher (mpirun -np N
 * strata real ...). This module finds the launcher, builds its command
 * line, prepares the environment the ranks need, and either replaces this
 * process with the job (launch_exec) or runs it as a child and waits
 * (launch_run, launch_job, launch_self_as_job). Nothing here calls MPI: it
 * only starts programs (MPI inside the job: real/job.h). */
#ifndef STRATA_LAUNCH_H
#define STRATA_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/err.h"

/* A size that holds any path these functions return (Linux's PATH_MAX). */
#define LAUNCH_PATH_BYTES 4096

/* Is this process one rank of an MPI job (started by mpirun/mpiexec/srun)?
 * True when any of these is set and non-empty: OMPI_COMM_WORLD_SIZE (Open
 * MPI), PMI_SIZE or PMI_RANK (MPICH, Hydra, Slurm's PMI), PMIX_RANK (PMIx). */
bool launch_is_mpi_rank(void);

/* Finds a program the way a shell does: a name with a '/' is taken as it is
 * (made absolute against the working directory), any other name is searched
 * in $PATH (empty entries skipped; "/usr/bin:/bin" when PATH is unset). The
 * result must be a regular file this process may execute. ERR_INPUT when it
 * is not found or the path does not fit n. */
int launch_find_program(const char *name, char *path, size_t n, struct err *e);

/* Finds the MPI launcher: $STRATA_MPIRUN when set and non-empty (a path, or
 * a name searched in $PATH; it must be an executable file), else "mpirun",
 * then "mpiexec", in $PATH. ERR_INPUT when none is found, with a message
 * saying what to install or how to launch by hand. path gets the full path
 * (symbolic links are kept: /usr/bin/mpirun stays /usr/bin/mpirun). */
int launch_find_mpirun(char *path, size_t n, struct err *e);

/* Whether the launcher at path is Open MPI's, judged from files only (it
 * runs nothing, so a wrapper script cannot hang it): the file path resolves
 * to through symbolic links is named orterun, prterun, mpirun.openmpi or
 * mpiexec.openmpi (Debian's /usr/bin/mpirun is an alternatives link to
 * orterun); a name with "mpich" or "hydra" in it is not; any other name
 * (Open MPI 5's own mpirun, a prefix install's bin/mpirun) is when Open
 * MPI's ompi_info lies beside the resolved file. False when path is absent. */
bool launch_mpirun_is_openmpi(const char *path);

/* This executable's own path, for the ranks to run: /proc/self/exe, or,
 * where that cannot be read, argv0 found as launch_find_program finds it.
 * ERR_RUN when neither works; ERR_INPUT when the path does not fit n. */
int launch_self_path(const char *argv0, char *path, size_t n, struct err *e);

/* --bind: how the job's ranks sit on cores. */
enum launch_bind { LAUNCH_BIND_AUTO, LAUNCH_BIND_CORE, LAUNCH_BIND_NONE };
extern const char *const launch_bind_names[];   /* "auto", "core", "none" */

/* --bind's choice (NULL = "auto") made concrete for n_procs ranks on a
 * machine of `cores` online cores (< 1: unknown) started by an Open MPI
 * launcher or not:
 *   core  one core each; ERR_INPUT naming --bind when n_procs > cores (they
 *         cannot each have one) or the launcher is not Open MPI's (strata
 *         knows only Open MPI's binding options)
 *   none  not bound: the OS scheduler moves them
 *   auto  core when the launcher is Open MPI's and n_procs <= cores, else
 *         none (time-sharing ranks must be free to move, and another
 *         launcher keeps its own default)
 * *out is CORE or NONE. ERR_INPUT for any other text. */
int launch_bind_resolve(const char *choice, int n_procs, int cores, bool is_openmpi,
                        enum launch_bind *out, struct err *e);

/* The argv of the MPI job, NULL-terminated, every string copied:
 *   { mpirun, ["--oversubscribe",] [binding,] "-np", "<n_procs>", self, args[0..n_args), NULL }
 * "--oversubscribe" only when is_openmpi (Open MPI otherwise refuses more
 * ranks than cores; other launchers reject the option). binding, Open MPI
 * only: "--bind-to" "core" "--map-by" "core" for LAUNCH_BIND_CORE (rank r
 * on core r), "--bind-to" "none" for LAUNCH_BIND_NONE; nothing for another
 * launcher with NONE. ERR_INPUT when n_procs < 1, for LAUNCH_BIND_AUTO (not
 * resolved: launch_bind_resolve) and for CORE with another launcher. Free
 * with launch_argv_free. */
char **launch_build_argv(const char *mpirun, bool is_openmpi, int n_procs, enum launch_bind bind,
                         const char *self, int n_args, char *const *args, struct err *e);

/* How many CPUs this process may run on (its affinity mask, Linux), or -1
 * where that cannot be read. 1 in a rank that mpirun bound to a core. */
int launch_cpus_allowed(void);

/* Frees what launch_build_argv returned; NULL is allowed. */
void launch_argv_free(char **argv);

/* Sets, in this process's environment (the job inherits it):
 * - when is_openmpi and running as root: OMPI_ALLOW_RUN_AS_ROOT=1 and
 *   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (Open MPI's mpirun), and the same
 *   pair as PRTE_* (PRRTE, Open MPI 5's runtime, reads those), each unless
 *   already set, since Open MPI refuses to start as root otherwise;
 * - when show_progress: STRATA_PROGRESS=1 (the ranks' stderr is mpirun's
 *   pipe, so they cannot see for themselves that a terminal is watching).
 *   When !show_progress, STRATA_PROGRESS is left as the user set it.
 * ERR_NOMEM when the environment cannot grow. */
int launch_prepare_env(bool is_openmpi, bool show_progress, struct err *e);

/* Replaces this process with the MPI job: execv(argv[0], argv), after
 * flushing stdio. Returns only on failure: ERR_RUN naming the launcher and
 * strerror. */
int launch_exec(char **argv, struct err *e);

/* Runs argv[0] (a path; no $PATH search) as a child with argv and this
 * process's environment, and waits for it. The job's stdout goes to
 * stdout_path (created or truncated, mode 0644) when non-NULL, else it is
 * inherited; stderr is inherited. *exit_code gets the job's exit status, a
 * death by signal as 128 + the signal number (the shell's convention).
 * While it waits, this process ignores SIGQUIT, and SIGINT too (as
 * system() does) except that it notes one: Ctrl-C reaches the job, which
 * ends; when this process got the SIGINT as well and the job ended of it
 * (died of SIGINT or exited 130, as strata real does), SIGINT is raised
 * again here once the job is reaped, so the caller ends as Ctrl-C asks
 * (its handler, e.g. core/temp_files', runs) instead of taking an
 * interrupt for a failed run; otherwise the caller gets the job's status.
 * SIGTERM and SIGHUP are sent on to the job and, once it has ended, raised
 * again in this process (unless the caller ignores them): the caller ends
 * as the signal asks, and never leaves the job running without it.
 * Returns 0 when the job ran, whatever its status; ERR_IO when stdout_path
 * cannot be opened; ERR_RUN when argv[0] is not an executable file or the
 * job cannot be started (then *exit_code is -1; ERR_NOMEM when posix_spawn's
 * setup cannot be allocated): a program that cannot be executed is always
 * an error here, never the shell's exit status 127. */
int launch_run(char **argv, const char *stdout_path, int *exit_code, struct err *e);

/* Runs the MPI job to its end and returns its exit status (*exit_code), as
 * launch_run with stdout inherited, in a session directory of its own:
 * OpenMPI's mpirun creates /tmp/ompi.HOST.UID on start and removes it at
 * the end, and two jobs starting at once can race on it ("mkdir: File
 * exists"); OMPI_MCA_orte_tmpdir_base (unless already set) points each job
 * at a fresh directory under $TMPDIR or /tmp, removed afterwards. */
int launch_job(char **argv, int *exit_code, struct err *e);

/* The argv of this program as an MPI job of n_ranks ranks running
 * `strata command argv[0..argc)`: the launcher found, bind resolved for this
 * machine's online cores (launch_build_argv's form); *is_openmpi says whose
 * launcher it is. hostfile (NULL or "" = none): checked (real/hostfile.h,
 * ERR_INPUT naming --hostfile) and passed as "--hostfile FILE" before -np;
 * then --bind auto means none (strata cannot count another host's cores,
 * and two "hosts" of one machine, tools/two-hosts, would each pin their
 * ranks to the same first cores) and core is left to each host. NULL with
 * e set on failure; free with launch_argv_free. */
char **launch_self_job_argv(const char *command, int argc, char **argv, int n_ranks,
                            const char *bind, const char *hostfile, bool *is_openmpi,
                            struct err *e);

/* Ranks on other hosts inherit nothing of this process's environment (ssh
 * starts Open MPI's daemons there): job (launch_build_argv's form, with
 * "-np") gets "-x NAME" before its "-np" for each of names[0..n) set now,
 * which Open MPI's mpirun copies into every rank's environment. job is
 * freed and the new argv returned; NULL with e set when out of memory.
 * Open MPI only (another launcher's option differs): others get job back. */
char **launch_forward_env(char **job, bool is_openmpi, const char *const *names, int n,
                          struct err *e);

/* This program relaunched as an MPI job of n_ranks ranks, each running
 * `strata command argv[0..argc)`, and waited for: the launcher found
 * (launch_find_mpirun), bind (--bind's text, NULL = auto) resolved for this
 * machine's online cores, the environment prepared (launch_prepare_env with
 * show_progress; the ranks' leak tracking, core/untracked.h), stdout
 * flushed, and the job run (launch_job). 0 when the job ran, *exit_code its
 * status; else the first step's error (ERR_INPUT, ERR_RUN or ERR_NOMEM),
 * *exit_code -1. Nothing stays allocated either way. */
int launch_self_as_job(const char *command, int argc, char **argv, int n_ranks,
                       const char *bind, const char *hostfile, bool show_progress,
                       int *exit_code, struct err *e);

#endif

/* job: the files of a job bigger than one machine (an MPI job: one file per rank, thousands of
 * them, on many hosts) analysed GPU by GPU, so that no process ever holds the whole job.
 *
 * 1. The index (job_index_build) reads only each file's process, process_meta, device and
 *    context rows and the streams of its launch rows (store_run_load_meta: no kernels) and groups
 *    the files by the GPUs they ran kernels on, with store/'s own device identity (the uuid, else
 *    host, ordinal, name and memory: store_run_add_device), so a group is what the analysis of
 *    the whole job would have called one GPU. A rank whose kernels ran on two GPUs joins their
 *    groups into one.
 *    Files are read on one thread per CPU (records.c), or by every MPI rank (job_mpi.c).
 * 2. Each group is loaded and analysed on its own (job_group_summary) into a summary: a small
 *    JSON text per group (the view's device objects, with host, GPU index, ranks and pids).
 *    Memory follows the largest group, not the job. The summaries are all that travels between
 *    MPI ranks (job_mpi.c deals the groups to them) besides the index's records.
 * 3. job_report_json() puts the summaries of every group together: per host and GPU, who shared
 *    it, its verdict and evidence and the predicted MPS gain, ranked by time-sliced share.
 *
 * Times are never compared across hosts: every figure of a GPU comes from its own kernels (its
 * solo references, its measured interval), and each host has its own clock.
 *
 * Floor: above store/, analysis/ and view/ (it presents groups with the view's names), below
 * cli/. Errors: 0 or a negative JOB_E* code; the message, naming the file, on the handle
 * (job_index_errmsg) or in the caller's buffer. */
#ifndef JOB_H
#define JOB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "store.h"

enum {
    JOB_OK = 0,
    JOB_EFILE = -1,  /* a file or folder could not be read, or is not a tlview file */
    JOB_ENOMEM = -2, /* out of memory */
    JOB_EINVAL = -3, /* bad argument */
};

#define JOB_NO_GROUP UINT32_MAX /* job_file.group of a file that ran nothing on a GPU */

/* The sentence every job report carries (text, JSON `job.note`). */
#define JOB_NOTE                                                                                   \
    "Times are compared only within one GPU: each host has its own clock, so overlap is computed " \
    "among the processes of one GPU and the times of different hosts are never set side by side."

/* ---------------------------------------------------------------- index */

typedef struct job_index job_index;

/* One file of the job. */
typedef struct job_file {
    const char *path;
    uint64_t kernels;       /* kernel rows (store_run_load_meta: the span of their rowids) */
    uint32_t group;         /* its group, JOB_NO_GROUP when it ran nothing on a GPU */
    uint32_t first_process; /* its processes in job_index_run() */
    uint32_t nprocesses;
} job_file;

/* One group: the files that ran kernels on one GPU (or on GPUs a rank joined). */
typedef struct job_group {
    const char *host;      /* host of its first process (NULL when the file says none) */
    const uint32_t *files; /* nfiles indexes into the job's files, ascending */
    uint32_t nfiles;
    const char *const *paths; /* their paths, in the same order (for store_run_load_files) */
    uint64_t kernels;         /* summed over its files */
} job_group;

/* Builds the index of args[0..nargs): files, or folders standing for the tlview files in them
 * (every regular file that starts with SQLite's header, in name order; hidden files, -wal,
 * -journal and other files skipped). The files' metadata is read on one thread per CPU (up to
 * 8) and added to the index in file order; the first file that fails (in file order) is the
 * error.
 * separate_gpus: uuid-less GPUs are kept one per process (store_run_set_gpu_identity). Groups
 * are numbered by their first file. Returns JOB_OK; JOB_EFILE (a missing folder, a folder with
 * no tlview file, a file that is not a tlview file: the message names it); JOB_ENOMEM. *ppIdx is
 * set in every case but out of memory (then NULL): free it with job_index_free(). */
int job_index_build(const char *const *args, uint32_t nargs, int separate_gpus,
                    job_index **ppIdx /* OUT */);

/* Frees the index (NULL: no-op). */
void job_index_free(job_index *idx);

/* The error of the last build ("" when none): "PATH: why". errfile: the file or folder it
 * names, NULL when none (out of memory). Owned by the index. */
const char *job_index_errmsg(const job_index *idx);
const char *job_index_errfile(const job_index *idx);

uint32_t job_index_nfiles(const job_index *idx);
const job_file *job_index_file(const job_index *idx, uint32_t i); /* NULL out of range */
uint32_t job_index_ngroups(const job_index *idx);
const job_group *job_index_group(const job_index *idx, uint32_t g); /* NULL out of range */
/* Distinct hosts of the job's processes (a NULL host counts as one). */
uint32_t job_index_nhosts(const job_index *idx);

/* The metadata of every file as one run: processes (with their process_meta), devices as the
 * whole job's analysis would match them, contexts; no records. Owned by the index. */
const store_run *job_index_run(const job_index *idx);

/* The index as JSON, for a page or a script: {files, processes, hosts, kernels, groups: [{group,
 * host, kernels, gpus: [{uuid, name, index}], ranks[], pids[], files[]}], no_gpu: [paths]}
 * (job/README.md). New reference; NULL out of memory. */
json_t *job_index_json(const job_index *idx);

/* Deals the groups to nranks ranks, balanced by work (kernels plus a fixed cost per file, for
 * opening it): the largest group first, each to the least loaded rank. owner[g] receives the
 * rank of group g (ngroups entries). Deterministic. */
void job_deal(const job_index *idx, uint32_t nranks, uint32_t *owner /* OUT */);

/* ---------------------------------------------------------------- groups */

/* How every group is analysed. */
typedef struct job_options {
    analysis_options analysis; /* analysis_options_default() plus --assume-mps, --measure and
                                  the baseline run (borrowed; finished; may be NULL) */
    int separate_gpus;         /* as given to job_index_build() */
    store_range_ask range;     /* --from/--to/--range: each group is cut to it, resolved on the
                                  group's own run (relative times from its own origin, a name
                                  among its own files' ranges); none asked: all zero */
    int measure_set;           /* --measure was given (else a range sets the measured interval,
                                  as in tlview report) */
} job_options;

/* Loads paths[0..npaths) (a group's files) into a run of their own, analyses it and writes its
 * summary, a JSON text, into *pJson (malloc'd, the caller frees it):
 *   {"group": G, "kernels": N, "processes": P, "gpus": [device...], "warnings": [...],
 *    "no_kernels": "No kernels in 3 processes." or null}
 * each device being view_device_json() without its slot fields (gpu, first_window, windows),
 * with host, index (the GPU's index on its host: CUDA_VISIBLE_DEVICES's entry for the ordinal
 * its processes used, or the ordinal; null when they disagree), ranks[] and pids[] of the
 * processes with kernels on it. When the files cannot be loaded the summary is {"group": G,
 * "error": "PATH: why"} and JOB_EFILE is returned. JOB_OK, JOB_EFILE, or JOB_ENOMEM (then
 * *pJson is NULL). Prints nothing; frees the run before returning, so memory peaks with the
 * group.
 * With a range in o (o->range), the group's run is cut to it as `tlview report --from --to
 * --range` cuts a run (store_run_range on the group's own run, then store_run_restrict; the solo
 * references from the whole group unless a baseline is given; without --measure the gains
 * measured over the range), and the summary adds "range": {"kind", "t0", "t1" (absolute ns),
 * "origin_ns" (the group's origin, that relative times count from)}. A group whose files hold no
 * range of that name is summarised with no GPU and the warning "no captured or NVTX range named
 * 'NAME' in its files"; --to not after --from, or a time beyond what tlview holds, on the group's
 * origin, is an error summary ("PATH: why", the group's first file). */
int job_group_summary(const char *const *paths, uint32_t npaths, uint32_t group,
                      const job_options *o, char **pJson /* OUT */);

/* The summaries of every group of idx in this process, one group after the other:
 * summaries[g] (ngroups entries) receive job_group_summary()'s texts. JOB_OK, or JOB_ENOMEM
 * (the summaries made so far are freed and NULLed). */
int job_summaries_local(const job_index *idx, const job_options *o,
                        char **summaries /* OUT: ngroups */);

/* The job report of idx from the summary of each of its groups (in group order, wherever they
 * were made):
 *   {"tlview": version, "job": {note, files, processes, hosts, gpus, groups, kernels, ranks},
 *    "gpus": [device + group, ...], "warnings": [...]}
 * gpus ranked by by_verdict.time-sliced.share, largest first (ties: group order). The same
 * summaries always give the same report, byte for byte once dumped. Returns a new reference, or
 * NULL with the reason in err: the first summary (in group order) that carries an error
 * ("PATH: why"), a summary that is not one, or out of memory. */
json_t *job_report_json(const job_index *idx, char *const *summaries, const char *version,
                        char *err, size_t errlen);

/* ---------------------------------------------------------------- MPI (job_mpi.c) */

/* Whether the environment says this process was started by an MPI launcher (mpirun, srun:
 * OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_SIZE): 1 with *pRank and *pSize from it (size 1 when it
 * does not say), 0 otherwise. Reads the environment only; works without MPI. */
int job_launched(int *pRank /* OUT */, int *pSize /* OUT */);

#ifdef TLVIEW_HAVE_MPI
/* MPI_Init (without the command line: tlview's arguments stay as they are), and this process's
 * rank and the number of ranks. JOB_OK or JOB_EINVAL (MPI failed; the message in err). */
int job_mpi_begin(int *pRank /* OUT */, int *pSize /* OUT */, char *err, size_t errlen);

/* The index, read by every rank: rank 0 lists the files of args (as job_index_start), each rank
 * reads the metadata of a contiguous block of them, rank 0 adds the records in file order and
 * groups the files. Every rank calls it once; ok: 0 when this rank could not get ready (its error
 * already printed): then every rank returns JOB_EINVAL. On rank 0 *ppIdx is set as
 * job_index_build() sets it, with its return code (print job_index_errmsg()); elsewhere NULL
 * with JOB_OK. */
int job_mpi_index(int ok, const char *const *args, uint32_t nargs, int separate_gpus,
                  job_index **ppIdx /* OUT: rank 0 */);

/* The summaries, made by every rank. Every rank calls it once, after job_mpi_index(). ok: 0 when
 * this rank could not get ready (rank 0: no index): then every rank returns JOB_EINVAL. idx: the
 * index on rank 0 (NULL elsewhere). Rank 0 deals the groups (job_deal), sends each rank the
 * paths of its groups; each rank makes their summaries (job_group_summary with o); rank 0
 * receives them all into *pSummaries (ngroups texts, free each and the array). JOB_OK,
 * JOB_EINVAL, or JOB_ENOMEM. */
int job_mpi_summaries(int ok, const job_index *idx, const job_options *o,
                      char ***pSummaries /* OUT: rank 0 */);

/* Gives every rank rank 0's exit status rc, then MPI_Finalize. Returns that status. */
int job_mpi_end(int rc);
#endif

#endif

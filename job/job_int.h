/* job_int.h: private to the job/ sources (job.h is the interface): the helpers the index, the
 * group summaries and the report share. */
#ifndef JOB_INT_H
#define JOB_INT_H

#include "job.h"

/* The index of run device `device` on its host as process p saw it: the entry of p's
 * CUDA_VISIBLE_DEVICES (env.CUDA_VISIBLE_DEVICES) at the ordinal p used for it when that entry is
 * a number, the ordinal itself when p had no CUDA_VISIBLE_DEVICES; -1 when neither is known
 * (UUIDs or MIG names in CUDA_VISIBLE_DEVICES, a device p did not see). */
int64_t job_gpu_index_of(const store_run *run, store_idx process, store_idx device);

/* The same over several processes: their common index, -1 when one does not know it or two
 * disagree. */
int64_t job_gpu_index(const store_run *run, store_idx device, const uint32_t *procs, uint32_t n);

/* Sorts v[0..n) ascending and drops repeats; returns the new count. */
uint32_t job_unique_i64(int64_t *v, uint32_t n);

/* A JSON array of v[0..n) (integers). NULL out of memory. */
json_t *job_int_array(const int64_t *v, uint32_t n);

/* ---------------------------------------------------------------- wire.c */

/* A growing buffer of fields (wire.c: each ends with a NUL; typed ones start with I, S or N). */
typedef struct job_wire {
    char *p;
    size_t n, cap;
    int bad; /* out of memory, or over INT_MAX bytes (an MPI count): nothing more is added */
} job_wire;

void job_wire_bytes(job_wire *w, const char *s, size_t n); /* n bytes as they are */
void job_wire_raw(job_wire *w, const char *s);             /* s and its NUL */
void job_wire_str(job_wire *w, const char *s);             /* a text; NULL allowed */
void job_wire_int(job_wire *w, int64_t v);
void job_wire_free(job_wire *w);

/* Reads fields from [at, end); a missing or mistyped field sets bad (and reads as NULL / 0). */
typedef struct job_reader {
    const char *at, *end;
    int bad;
} job_reader;

const char *job_read_raw(job_reader *r);
const char *job_read_str(job_reader *r); /* NULL for a NULL text (or when bad) */
int64_t job_read_int(job_reader *r);
int job_read_more(const job_reader *r); /* 1 while fields are left */

/* ---------------------------------------------------------------- records.c */

/* Appends the record of the file at `path`: its metadata (store_run_load_meta in a run of its
 * own), or why it could not be read, or, for a file found in a folder (from_folder) that does
 * not start as an SQLite database, that it is left out. Thread-safe. */
void job_record_file(job_wire *w, const char *path, int from_folder);

/* Adds the file record at r to run (its processes with `path` as their file; its devices
 * matched by run's identity rules). *pKernels: its kernel rows; *pSkip: 1 when the record says
 * the file is left out (nothing added). JOB_OK; JOB_EFILE with the reading's error (naming the
 * file) in err, or a damaged record; JOB_ENOMEM. */
int job_replay_file(store_run *run, job_reader *r, const char *path, uint64_t *pKernels, int *pSkip,
                    char *err, size_t errlen);

/* ---------------------------------------------------------------- index.c, for job_mpi.c */

/* job_index_build() in three steps, for an index whose records are made elsewhere (by MPI
 * ranks): start (the files of args, no file opened: *ppIdx set as job_index_build() sets it),
 * the record of each file in order (file: the next one), finish (the files left out dropped,
 * the groups). Files are numbered as start listed them until finish. Each returns JOB_OK or
 * the error, which job_index_errmsg() then says. */
int job_index_start(const char *const *args, uint32_t nargs, int separate_gpus,
                    job_index **ppIdx /* OUT */);
int job_index_add_record(job_index *idx, uint32_t file, job_reader *r);
int job_index_finish(job_index *idx);
/* 1 when the file was found in a folder (its record may leave it out), 0 when given itself. */
uint8_t job_index_from_folder(const job_index *idx, uint32_t file);

#endif

/* job_int.h: private to the job/ sources (job.h is the interface): the helpers the index, the
 * group summaries and the report share. */
#ifndef JOB_INT_H
#define JOB_INT_H

#include "job.h"

/* The value of process_meta key `key` of p, NULL when absent. */
const char *job_meta(const store_process *p, const char *key);

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

#endif

/* rank.c: which rank of which launch a process was, read from the launcher's variables that
 * libcollect records in process_meta (store/SCHEMA.md, process_meta), or from a PyTorch profiler
 * trace's distributedInfo (chrome.rank, chrome.world_size): the one definition that
 * `tlview report`, `tlview serve` and `tlview job` show. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

/* The launchers in the order their rank wins (the first whose rank variable is set): each with
 * its name and its variables (without "env."; NULL where it sets none). */
static const struct {
    const char *name, *rank, *local, *size;
} launchers[] = {
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"pmix", "PMIX_RANK", NULL, NULL},
    {"pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
    {"mvapich2", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK", NULL},
    {"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE"},
};
enum { NLAUNCHERS = sizeof launchers / sizeof *launchers };

const char *store_process_meta_get(const store_process *p, const char *key)
{
    for (uint32_t i = 0; i < p->nmeta; i++)
        if (p->meta_keys[i] && !strcmp(p->meta_keys[i], key))
            return p->meta_values[i];
    return NULL;
}

int store_parse_count(const char *s, int64_t *pV)
{
    if (!s || *s < '0' || *s > '9')
        return 0;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end)
        return 0;
    *pV = x;
    return 1;
}

/* The whole number >= 0 in process_meta "env.<var>" of p: 1 with *pV set, 0 otherwise (var
 * NULL, not recorded, not a number). */
static int env_count(const store_process *p, const char *var, int64_t *pV)
{
    char key[64] = "env.";
    if (!var || strlen(var) + 5 > sizeof key)
        return 0;
    strcat(key, var);
    return store_parse_count(store_process_meta_get(p, key), pV);
}

int store_process_rank(const store_process *p, store_rank *out)
{
    memset(out, 0, sizeof *out);
    out->local_rank = out->world_size = -1;
    int w = 0;
    while (w < NLAUNCHERS && !env_count(p, launchers[w].rank, &out->rank))
        w++;
    if (w == NLAUNCHERS) {
        /* a PyTorch profiler trace's distributedInfo (importers/chrome.c): its rank and world
         * size as torch.distributed knew them; no local rank */
        if (store_parse_count(store_process_meta_get(p, "chrome.rank"), &out->rank)) {
            out->launcher = "pytorch";
            if (!store_parse_count(store_process_meta_get(p, "chrome.world_size"),
                                   &out->world_size) ||
                out->world_size <= 0)
                out->world_size = -1;
            return 1;
        }
        out->rank = -1;
        return 0;
    }
    out->launcher = launchers[w].name;
    /* the local rank and the size from the winner, else from the first launcher that gives them
     * and agrees on the rank (srun --mpi=pmix sets PMIX_RANK and SLURM_PROCID to the same
     * number; PMIx has no variable for either) */
    for (int i = w; i < NLAUNCHERS; i++) {
        int64_t r;
        if (i != w && !(env_count(p, launchers[i].rank, &r) && r == out->rank))
            continue;
        if (out->local_rank < 0 && !env_count(p, launchers[i].local, &out->local_rank))
            out->local_rank = -1;
        if (out->world_size < 0 &&
            !(env_count(p, launchers[i].size, &out->world_size) && out->world_size > 0))
            out->world_size = -1;
    }
    return 1;
}

double store_thread_pct(const store_process *p)
{
    const char *v = store_process_meta_get(p, "env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    char *end;
    if (!v || !*v)
        return 0;
    errno = 0;
    double x = strtod(v, &end);
    return errno || *end || !(x > 0 && x <= 100) ? 0 : x;
}

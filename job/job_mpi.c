/* job_mpi.c: the MPI engine of `tlview job` (built only when CMake finds MPI). Rank 0 holds the
 * index; it deals the groups to the ranks (job_deal: balanced by kernels), sends each rank the
 * paths of its groups, makes the summaries of its own share meanwhile, and receives the others'
 * summaries: compact JSON texts, a few KiB per GPU, the only data that travels. Kernels are read
 * by the rank that analyses them, from the shared file system. Point-to-point messages, one to
 * and one from each rank, each below 2 GiB (MPI counts are ints), so no displacement overflows
 * however large the job.
 *
 * Wire format of both directions: records laid end to end, each "<group>\0<text>\0..." :
 * to a rank, group number, file count, then the paths; from a rank, group number then its
 * summary. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job_int.h"

enum { TAG_WORK = 1, TAG_SUMMARIES = 2 };

/* Waits for req without spinning: Open MPI's blocking calls poll at full speed, so a rank waiting
 * for rank 0's index (or rank 0 for a slow rank) would take a core from the ranks that work
 * where ranks outnumber cores (2 ranks on 2 cores beside other work: bench_job.md). A test every
 * half millisecond costs nothing next to loading a group. */
static void wait_idle(MPI_Request *req)
{
    const struct timespec nap = {0, 500000};
    int done = 0;
    for (MPI_Test(req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(req, &done, MPI_STATUS_IGNORE))
        nanosleep(&nap, NULL);
}

int job_mpi_begin(int *argc, char ***argv, int *pRank, int *pSize, char *err, size_t errlen)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Init failed");
        return JOB_EINVAL;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, pRank);
    MPI_Comm_size(MPI_COMM_WORLD, pSize);
    return JOB_OK;
}

/* A growing byte buffer. */
typedef struct buf {
    char *p;
    size_t n, cap;
    int bad; /* out of memory, or beyond INT_MAX bytes */
} buf;

/* Appends n bytes. */
static void put_bytes(buf *b, const char *s, size_t n)
{
    if (b->bad)
        return;
    if (b->n + n > (size_t)INT_MAX) {
        b->bad = 1;
        return;
    }
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->bad = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

/* Appends s with its NUL. */
static void put(buf *b, const char *s)
{
    put_bytes(b, s, strlen(s) + 1);
}

static void put_u32(buf *b, uint32_t v)
{
    char s[16];
    snprintf(s, sizeof s, "%u", v);
    put(b, s);
}

/* The next NUL-terminated field of [*at, end), NULL when none is left. */
static const char *next(const char **at, const char *end)
{
    const char *s = *at;
    const char *z = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
    if (!z)
        return NULL;
    *at = z + 1;
    return s;
}

/* Receives a message of unknown length from `src` with `tag`; *pLen its bytes. NULL out of
 * memory (the message is then received into nothing and dropped). */
static char *recv_any(int src, int tag, int *pLen)
{
    const struct timespec nap = {0, 500000};
    MPI_Status st;
    int ready = 0;
    for (MPI_Iprobe(src, tag, MPI_COMM_WORLD, &ready, &st); !ready;
         MPI_Iprobe(src, tag, MPI_COMM_WORLD, &ready, &st))
        nanosleep(&nap, NULL); /* as wait_idle */
    MPI_Get_count(&st, MPI_CHAR, pLen);
    char *p = malloc((size_t)*pLen + 1);
    char drop;
    MPI_Recv(p ? p : &drop, p ? *pLen : 0, MPI_CHAR, st.MPI_SOURCE, tag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    return p;
}

/* Makes the summaries of the work records in [p, p + len) into out (group, text records).
 * Returns JOB_OK or JOB_ENOMEM (a summary that could not be made; the others are kept). */
static int work(const char *p, int len, const job_options *o, buf *out)
{
    if (!p || len <= 0)
        return JOB_OK;
    const char *at = p, *end = p + len, *gs, *ns;
    int rc = JOB_OK;
    while ((gs = next(&at, end)) && (ns = next(&at, end))) {
        uint32_t nfiles = (uint32_t)strtoul(ns, NULL, 10);
        const char **paths = malloc(((size_t)nfiles + 1) * sizeof *paths);
        uint32_t n = 0;
        while (paths && n < nfiles && (paths[n] = next(&at, end)))
            n++;
        char *json = NULL;
        if (!paths || n < nfiles ||
            job_group_summary(paths, nfiles, (uint32_t)strtoul(gs, NULL, 10), o, &json) ==
                JOB_ENOMEM)
            rc = JOB_ENOMEM;
        if (json) {
            put(out, gs);
            put(out, json);
        }
        free(json);
        free(paths);
    }
    return out->bad ? JOB_ENOMEM : rc;
}

/* Takes one rank's summary records into summaries[]; a group named twice or out of range is a
 * damaged message (JOB_EINVAL). */
static int take(const char *p, int len, char **summaries, uint32_t ngroups)
{
    if (!p || len <= 0)
        return JOB_OK;
    const char *at = p, *end = p + len, *gs, *text;
    while ((gs = next(&at, end)) && (text = next(&at, end))) {
        unsigned long g = strtoul(gs, NULL, 10);
        if (g >= ngroups || summaries[g])
            return JOB_EINVAL;
        if (!(summaries[g] = strdup(text)))
            return JOB_ENOMEM;
    }
    return JOB_OK;
}

int job_mpi_summaries(int ok, const job_index *idx, const job_options *o, char ***pSummaries)
{
    int rank, size, all_ok = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *pSummaries = NULL;
    uint32_t ngroups = rank == 0 && idx ? job_index_ngroups(idx) : 0;
    uint32_t *owner = NULL;
    buf *to = NULL;
    /* rank 0 deals and packs every rank's work first, so that a failure there stops all */
    if (ok && rank == 0) {
        owner = malloc(((size_t)ngroups + 1) * sizeof *owner);
        to = calloc((size_t)size, sizeof *to);
        if (!owner || !to)
            ok = 0;
        if (ok)
            job_deal(idx, (uint32_t)size, owner);
        for (uint32_t g = 0; ok && g < ngroups; g++) {
            const job_group *gr = job_index_group(idx, g);
            buf *b = &to[owner[g]];
            put_u32(b, g);
            put_u32(b, gr->nfiles);
            for (uint32_t i = 0; i < gr->nfiles; i++)
                put(b, gr->paths[i]);
        }
        for (int r = 0; ok && r < size; r++)
            ok = !to[r].bad;
        if (!ok)
            fprintf(stderr, "tlview job: out of memory dealing %u groups to %d ranks\n", ngroups,
                    size);
    }
    MPI_Request req;
    MPI_Iallreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
    wait_idle(&req);
    int rc = all_ok ? JOB_OK : JOB_EINVAL;
    buf mine = {0};
    char **summaries = NULL;
    if (rc == JOB_OK && rank == 0) {
        MPI_Request *sent = malloc((size_t)size * sizeof *sent);
        for (int r = 1; r < size; r++) {
            MPI_Request one;
            MPI_Isend(to[r].p ? to[r].p : "", (int)to[r].n, MPI_CHAR, r, TAG_WORK, MPI_COMM_WORLD,
                      sent ? &sent[r] : &one);
            if (!sent)
                wait_idle(&one);
        }
        int wrc = work(to[0].p, (int)to[0].n, o, &mine);
        for (int r = 1; sent && r < size; r++)
            wait_idle(&sent[r]);
        free(sent);
        summaries = calloc((size_t)ngroups + 1, sizeof *summaries);
        if (wrc != JOB_OK || !summaries || take(mine.p, (int)mine.n, summaries, ngroups))
            rc = JOB_ENOMEM;
        for (int r = 1; r < size; r++) {
            int len;
            char *p = recv_any(r, TAG_SUMMARIES, &len);
            int trc = !p || len < 1 ? JOB_ENOMEM
                      : p[len - 1]  ? JOB_EINVAL /* the sender failed */
                      : summaries   ? take(p, len - 1, summaries, ngroups)
                                    : JOB_ENOMEM;
            if (rc == JOB_OK)
                rc = trc;
            free(p);
        }
    } else if (rc == JOB_OK) {
        int len;
        char *p = recv_any(0, TAG_WORK, &len);
        int wrc = p ? work(p, len, o, &mine) : JOB_ENOMEM;
        /* the last byte says whether every summary was made: NUL yes, 1 no */
        put_bytes(&mine, wrc == JOB_OK ? "" : "\1", 1);
        /* nothing to send but the failure when out of memory */
        MPI_Isend(mine.bad ? "\1" : mine.p, mine.bad ? 1 : (int)mine.n, MPI_CHAR, 0, TAG_SUMMARIES,
                  MPI_COMM_WORLD, &req);
        wait_idle(&req);
        free(p);
    }
    for (uint32_t g = 0; rc == JOB_OK && summaries && g < ngroups; g++)
        if (!summaries[g])
            rc = JOB_EINVAL; /* a group nobody summarised */
    if (rank == 0 && rc != JOB_OK && all_ok)
        fprintf(stderr, "tlview job: %s\n",
                rc == JOB_ENOMEM ? "out of memory making the summaries"
                                 : "a rank could not make or send its summaries");
    if (rc != JOB_OK && summaries) {
        for (uint32_t g = 0; g < ngroups; g++)
            free(summaries[g]);
        free(summaries);
        summaries = NULL;
    }
    for (int r = 0; to && r < size; r++)
        free(to[r].p);
    free(to);
    free(owner);
    free(mine.p);
    *pSummaries = summaries;
    return rc;
}

int job_mpi_end(int rc)
{
    MPI_Request req;
    MPI_Ibcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    wait_idle(&req);
    MPI_Finalize();
    return rc;
}

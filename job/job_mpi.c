/* job_mpi.c: the MPI engine of `tlview job` (built only when CMake finds MPI), in two rounds.
 * 1. The index (job_mpi_index): rank 0 lists the files and gives each rank a contiguous block
 *    of them; each rank reads its files' metadata into records (records.c) and sends them back;
 *    rank 0 adds them to the index in file order, as one process adds its threads' records, and
 *    groups the files.
 * 2. The groups (job_mpi_summaries): rank 0 deals them to the ranks (job_deal: balanced by
 *    kernels), sends each rank the paths of its groups and makes its own share's summaries
 *    meanwhile; each rank loads and analyses its groups where the files are (the shared file
 *    system) and sends back their summaries, compact JSON texts of a few KiB per GPU.
 * Only metadata records and summaries travel, one message to and one from each rank per round,
 * each below 2 GiB (MPI counts are ints), in wire.c's format; a sender's last byte says whether
 * it made everything (NUL) or ran out of memory (1). Every wait sleeps between tests instead of
 * spinning (wait_idle). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job_int.h"

enum { TAG_FILES = 1, TAG_RECORDS = 2, TAG_WORK = 3, TAG_SUMMARIES = 4 };

/* Waits for req without spinning: Open MPI's blocking calls poll at full speed, so a rank waiting
 * for rank 0 (or rank 0 for a slow rank) would take a core from the ranks that work where ranks
 * outnumber cores (2 ranks on 2 cores beside other work: bench_job.md). A test every half
 * millisecond costs nothing next to reading a file. */
static void wait_idle(MPI_Request *req)
{
    const struct timespec nap = {0, 500000};
    int done = 0;
    for (MPI_Test(req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(req, &done, MPI_STATUS_IGNORE))
        nanosleep(&nap, NULL);
}

/* Sends w to rank `to` (or, when w ran out of memory, the failure alone) and waits, idle. */
static void send_wire(job_wire *w, int to, int tag)
{
    MPI_Request req;
    job_wire_bytes(w, "", 1); /* the status byte: all made */
    MPI_Isend(w->bad ? "\1" : w->p, w->bad ? 1 : (int)w->n, MPI_CHAR, to, tag, MPI_COMM_WORLD,
              &req);
    wait_idle(&req);
}

/* Receives a message of unknown length from `src` with `tag`, waiting idle. Returns its fields
 * (the status byte taken off) in *r and the buffer to free; NULL out of memory or when the
 * sender failed (the message is then dropped). */
static char *recv_wire(int src, int tag, job_reader *r)
{
    const struct timespec nap = {0, 500000};
    MPI_Status st;
    int ready = 0, len = 0;
    for (MPI_Iprobe(src, tag, MPI_COMM_WORLD, &ready, &st); !ready;
         MPI_Iprobe(src, tag, MPI_COMM_WORLD, &ready, &st))
        nanosleep(&nap, NULL); /* as wait_idle */
    MPI_Get_count(&st, MPI_CHAR, &len);
    char *p = malloc((size_t)len + 1), drop;
    MPI_Recv(p ? p : &drop, p ? len : 0, MPI_CHAR, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (p && (len < 1 || p[len - 1] != '\0')) {
        free(p);
        p = NULL;
    }
    *r = (job_reader){p, p ? p + len - 1 : NULL, !p};
    return p;
}

/* 1 on every rank when `ok` is 1 on every rank. */
static int all_agree(int ok)
{
    int all = 0;
    MPI_Request req;
    MPI_Iallreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
    wait_idle(&req);
    return all;
}

int job_mpi_begin(int *pRank, int *pSize, char *err, size_t errlen)
{
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) { /* the arguments are tlview's, left as they are */
        snprintf(err, errlen, "MPI_Init failed");
        return JOB_EINVAL;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, pRank);
    MPI_Comm_size(MPI_COMM_WORLD, pSize);
    return JOB_OK;
}

/* The first file of rank r's block of n files over size ranks. */
static uint32_t block(uint32_t n, int r, int size)
{
    return (uint32_t)((uint64_t)n * (uint64_t)r / (uint64_t)size);
}

int job_mpi_index(int ok, const char *const *args, uint32_t nargs, int separate_gpus,
                  job_index **ppIdx)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *ppIdx = NULL;
    int rc = JOB_OK;
    if (rank == 0 && ok)
        rc = job_index_start(args, nargs, separate_gpus, ppIdx);
    if (!all_agree(ok && rc == JOB_OK))
        return rc ? rc : JOB_EINVAL;
    job_index *idx = *ppIdx;
    job_wire mine = {0};
    if (rank != 0) {
        job_reader r;
        char *paths = recv_wire(0, TAG_FILES, &r);
        while (paths && job_read_more(&r)) {
            int64_t from_folder = job_read_int(&r);
            const char *path = job_read_raw(&r);
            if (!path)
                break;
            job_record_file(&mine, path, (int)from_folder);
        }
        if (!paths)
            mine.bad = 1;
        send_wire(&mine, 0, TAG_RECORDS);
        free(paths);
        job_wire_free(&mine);
        return JOB_OK;
    }
    uint32_t n = job_index_nfiles(idx);
    MPI_Request *sent = calloc((size_t)size, sizeof *sent);
    job_wire *to = calloc((size_t)size, sizeof *to);
    for (int r = 1; r < size; r++) {
        for (uint32_t f = block(n, r, size); to && f < block(n, r + 1, size); f++) {
            job_wire_int(&to[r], job_index_from_folder(idx, f));
            job_wire_raw(&to[r], job_index_file(idx, f)->path);
        }
        if (to && sent) {
            job_wire_bytes(&to[r], "", 1);
            MPI_Isend(to[r].bad ? "\1" : to[r].p, to[r].bad ? 1 : (int)to[r].n, MPI_CHAR, r,
                      TAG_FILES, MPI_COMM_WORLD, &sent[r]);
        } else { /* out of memory: every rank is told it failed */
            job_wire w = {.bad = 1};
            send_wire(&w, r, TAG_FILES);
        }
    }
    /* rank 0's own block, while the others read theirs */
    for (uint32_t f = 0; f < block(n, 1, size); f++)
        job_record_file(&mine, job_index_file(idx, f)->path, job_index_from_folder(idx, f));
    for (int r = 1; to && sent && r < size; r++)
        wait_idle(&sent[r]);
    /* every rank's records, in rank order, so in file order; all are received, also after an
     * error, so that no rank is left waiting */
    if (!to || !sent || mine.bad)
        rc = JOB_ENOMEM;
    for (int r = 0; r < size; r++) {
        job_reader rd = {mine.p, mine.p ? mine.p + mine.n : NULL, mine.bad};
        char *buf = r == 0 ? NULL : recv_wire(r, TAG_RECORDS, &rd);
        if (rc == JOB_OK && r > 0 && !buf)
            rc = JOB_ENOMEM;
        for (uint32_t f = block(n, r, size); rc == JOB_OK && f < block(n, r + 1, size); f++)
            rc = job_index_add_record(idx, f, &rd);
        free(buf);
    }
    if (rc == JOB_ENOMEM && !job_index_errmsg(idx)[0])
        fprintf(stderr, "tlview job: out of memory indexing %u files on %d ranks\n", n, size);
    for (int r = 0; to && r < size; r++)
        job_wire_free(&to[r]);
    free(to);
    free(sent);
    job_wire_free(&mine);
    return rc ? rc : job_index_finish(idx);
}

/* Makes the summaries of the work records in r (group number, file count, paths) into out
 * (group number, summary). JOB_OK or JOB_ENOMEM (a summary that could not be made). */
static int work(job_reader *r, const job_options *o, job_wire *out)
{
    int rc = JOB_OK;
    while (job_read_more(r)) {
        const char *gs = job_read_raw(r), *ns = job_read_raw(r);
        uint32_t nfiles = ns ? (uint32_t)strtoul(ns, NULL, 10) : 0;
        const char **paths = malloc(((size_t)nfiles + 1) * sizeof *paths);
        uint32_t n = 0;
        while (paths && n < nfiles && (paths[n] = job_read_raw(r)))
            n++;
        char *json = NULL;
        if (!gs || !paths || n < nfiles ||
            job_group_summary(paths, nfiles, (uint32_t)strtoul(gs, NULL, 10), o, &json) ==
                JOB_ENOMEM)
            rc = JOB_ENOMEM;
        if (json) {
            job_wire_raw(out, gs);
            job_wire_raw(out, json);
        }
        free(json);
        free(paths);
        if (rc)
            break;
    }
    return out->bad ? JOB_ENOMEM : rc;
}

/* Takes one rank's summary records into summaries[]; a group named twice or out of range is a
 * damaged message (JOB_EINVAL). */
static int take(job_reader *r, char **summaries, uint32_t ngroups)
{
    while (job_read_more(r)) {
        const char *gs = job_read_raw(r), *text = job_read_raw(r);
        unsigned long g = gs ? strtoul(gs, NULL, 10) : ngroups;
        if (!text || g >= ngroups || summaries[g])
            return JOB_EINVAL;
        if (!(summaries[g] = strdup(text)))
            return JOB_ENOMEM;
    }
    return JOB_OK;
}

int job_mpi_summaries(int ok, const job_index *idx, const job_options *o, char ***pSummaries)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *pSummaries = NULL;
    uint32_t ngroups = rank == 0 && idx ? job_index_ngroups(idx) : 0;
    uint32_t *owner = NULL;
    job_wire *to = NULL;
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
            job_wire *w = &to[owner[g]];
            char num[16];
            snprintf(num, sizeof num, "%u", g);
            job_wire_raw(w, num);
            snprintf(num, sizeof num, "%u", gr->nfiles);
            job_wire_raw(w, num);
            for (uint32_t i = 0; i < gr->nfiles; i++)
                job_wire_raw(w, gr->paths[i]);
        }
        for (int r = 0; ok && r < size; r++)
            ok = !to[r].bad;
        if (!ok)
            fprintf(stderr, "tlview job: out of memory dealing %u groups to %d ranks\n", ngroups,
                    size);
    }
    int rc = all_agree(ok) ? JOB_OK : JOB_EINVAL;
    job_wire mine = {0};
    char **summaries = NULL;
    if (rc == JOB_OK && rank == 0) {
        MPI_Request *sent = malloc((size_t)size * sizeof *sent);
        for (int r = 1; r < size; r++) {
            job_wire_bytes(&to[r], "", 1);
            MPI_Request one;
            MPI_Isend(to[r].bad ? "\1" : to[r].p, to[r].bad ? 1 : (int)to[r].n, MPI_CHAR, r,
                      TAG_WORK, MPI_COMM_WORLD, sent ? &sent[r] : &one);
            if (!sent)
                wait_idle(&one);
        }
        job_reader own = {to[0].p, to[0].p ? to[0].p + to[0].n : NULL, 0};
        int wrc = work(&own, o, &mine);
        for (int r = 1; sent && r < size; r++)
            wait_idle(&sent[r]);
        free(sent);
        summaries = calloc((size_t)ngroups + 1, sizeof *summaries);
        job_reader back = {mine.p, mine.p ? mine.p + mine.n : NULL, 0};
        if (wrc != JOB_OK || !summaries || take(&back, summaries, ngroups))
            rc = JOB_ENOMEM;
        for (int r = 1; r < size; r++) {
            job_reader rd;
            char *p = recv_wire(r, TAG_SUMMARIES, &rd);
            int trc = !p ? JOB_EINVAL : summaries ? take(&rd, summaries, ngroups) : JOB_ENOMEM;
            if (rc == JOB_OK)
                rc = trc;
            free(p);
        }
    } else if (rc == JOB_OK) {
        job_reader rd;
        char *p = recv_wire(0, TAG_WORK, &rd);
        if (!p || work(&rd, o, &mine) != JOB_OK)
            mine.bad = 1;
        send_wire(&mine, 0, TAG_SUMMARIES);
        free(p);
    }
    for (uint32_t g = 0; rc == JOB_OK && summaries && g < ngroups; g++)
        if (!summaries[g])
            rc = JOB_EINVAL; /* a group nobody summarised */
    if (rank == 0 && rc != JOB_OK && ok)
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
        job_wire_free(&to[r]);
    free(to);
    free(owner);
    job_wire_free(&mine);
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

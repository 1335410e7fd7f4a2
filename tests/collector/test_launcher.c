/* Unit tests of the collector's launcher metadata (collector/meta.c): the rank variables mpirun,
 * srun and torchrun set are recorded as process_meta env.NAME, through a whole session with a
 * stand-in for CUPTI, and only those that are set. No GPU needed. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector_int.h"
#include "test_help.h"

static int64_t stand_in_clock(void)
{
    return 1000000000;
}

static int no_records(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    (void)buf;
    (void)valid;
    (void)rec;
    return 1;
}

static const char *no_api_name(store_api_domain domain, uint32_t cbid)
{
    (void)domain;
    (void)cbid;
    return NULL;
}

static const char *meta_of(const store_process *p, const char *key)
{
    for (uint32_t i = 0; i < p->nmeta; i++)
        if (!strcmp(p->meta_keys[i], key))
            return p->meta_values[i];
    return NULL;
}

/* Opens and finishes a session under the launcher environment set by the caller; loads its file
 * into *ppRun. */
static int record_session(const char *name, store_run **ppRun)
{
    static const collector_hooks hooks = {
        .next_record = no_records, .gpu_clock = stand_in_clock, .api_name = no_api_name};
    char out[4096];
    snprintf(out, sizeof out, "%s/%s", test_tmpdir(), name);
    setenv("TLVIEW_OUTPUT", out, 1);
    collector_config cfg;
    collector_startup(&cfg);
    collector_session *s = NULL;
    if (collector_session_open(&cfg, &hooks, &s) != 0)
        return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s", collector_session_path(s));
    if (collector_session_finish(s, 0, 10000) != 0)
        return 1;
    collector_session_free(s);
    *ppRun = store_run_new();
    return store_run_load(*ppRun, path) != 0;
}

/* Under mpirun: Open MPI's and PMIx's variables, and CUDA_VISIBLE_DEVICES, are in the file. */
int test_launcher_mpirun(void)
{
    setenv("OMPI_COMM_WORLD_RANK", "13", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "5", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "64", 1);
    setenv("PMIX_RANK", "13", 1);
    setenv("CUDA_VISIBLE_DEVICES", "1", 1);
    unsetenv("SLURM_PROCID");
    unsetenv("SLURM_JOB_ID");
    unsetenv("RANK");
    store_run *run = NULL;
    TEST_EQ_INT(record_session("rank.%q{OMPI_COMM_WORLD_RANK}.db", &run), 0);
    TEST_EQ_INT(run->nprocesses, 1);
    const store_process *p = &run->processes[0];
    TEST_ASSERT(strstr(p->file, "/rank.13.db") != NULL);
    TEST_EQ_STR(meta_of(p, "env.OMPI_COMM_WORLD_RANK"), "13");
    TEST_EQ_STR(meta_of(p, "env.OMPI_COMM_WORLD_LOCAL_RANK"), "5");
    TEST_EQ_STR(meta_of(p, "env.OMPI_COMM_WORLD_SIZE"), "64");
    TEST_EQ_STR(meta_of(p, "env.PMIX_RANK"), "13");
    TEST_EQ_STR(meta_of(p, "env.CUDA_VISIBLE_DEVICES"), "1");
    /* unset variables leave no key */
    TEST_ASSERT(meta_of(p, "env.SLURM_PROCID") == NULL);
    TEST_ASSERT(meta_of(p, "env.SLURM_JOB_ID") == NULL);
    TEST_ASSERT(meta_of(p, "env.RANK") == NULL);
    char host[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    TEST_EQ_STR(p->host, host); /* the host: the process row */
    store_run_free(run);
    return 0;
}

/* Under srun and torchrun: Slurm's and torch's variables; none of Open MPI's. */
int test_launcher_srun(void)
{
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMIX_RANK");
    setenv("SLURM_PROCID", "7", 1);
    setenv("SLURM_LOCALID", "3", 1);
    setenv("SLURM_NTASKS", "8", 1);
    setenv("SLURM_JOB_ID", "424242", 1);
    setenv("RANK", "7", 1);
    setenv("LOCAL_RANK", "3", 1);
    setenv("WORLD_SIZE", "8", 1);
    store_run *run = NULL;
    TEST_EQ_INT(record_session("srun.%p.db", &run), 0);
    const store_process *p = &run->processes[0];
    TEST_EQ_STR(meta_of(p, "env.SLURM_PROCID"), "7");
    TEST_EQ_STR(meta_of(p, "env.SLURM_LOCALID"), "3");
    TEST_EQ_STR(meta_of(p, "env.SLURM_NTASKS"), "8");
    TEST_EQ_STR(meta_of(p, "env.SLURM_JOB_ID"), "424242");
    TEST_EQ_STR(meta_of(p, "env.RANK"), "7");
    TEST_EQ_STR(meta_of(p, "env.LOCAL_RANK"), "3");
    TEST_EQ_STR(meta_of(p, "env.WORLD_SIZE"), "8");
    TEST_ASSERT(meta_of(p, "env.OMPI_COMM_WORLD_RANK") == NULL);
    TEST_ASSERT(meta_of(p, "env.PMIX_RANK") == NULL);
    store_run_free(run);
    return 0;
}

/* Without a launcher, no rank key at all. */
int test_launcher_none(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK",
                                       "OMPI_COMM_WORLD_LOCAL_RANK",
                                       "OMPI_COMM_WORLD_SIZE",
                                       "PMIX_RANK",
                                       "PMI_RANK",
                                       "PMI_SIZE",
                                       "SLURM_PROCID",
                                       "SLURM_LOCALID",
                                       "SLURM_NTASKS",
                                       "SLURM_JOB_ID",
                                       "SLURM_STEP_ID",
                                       "MV2_COMM_WORLD_RANK",
                                       "MV2_COMM_WORLD_LOCAL_RANK",
                                       "MPI_LOCALRANKID",
                                       "RANK",
                                       "LOCAL_RANK",
                                       "WORLD_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
    store_run *run = NULL;
    TEST_EQ_INT(record_session("plain.%p.db", &run), 0);
    const store_process *p = &run->processes[0];
    for (uint32_t i = 0; i < p->nmeta; i++)
        for (size_t v = 0; v < sizeof vars / sizeof *vars; v++) {
            char key[64];
            snprintf(key, sizeof key, "env.%s", vars[v]);
            if (!strcmp(p->meta_keys[i], key)) {
                fprintf(stderr, "unexpected key %s = %s\n", key, p->meta_values[i]);
                return 1;
            }
        }
    TEST_ASSERT(meta_of(p, "collector_version") != NULL); /* the other keys are there */
    store_run_free(run);
    return 0;
}

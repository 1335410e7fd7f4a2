/* mps_cost.cu: the probe that bench/mps_costs.sh runs to measure what sharing one GPU costs, with
 * and without MPS. One program, five modes (times in ns unless said):
 *   calib                          each kernel kind alone at two sizes; per kind
 *                                  "C KIND NS_PER_UNIT FIXED_NS" (a line through the two)
 *   sched GO GROUP...              kernels at scheduled instants (parts a and d). GROUP is
 *                                  KIND:PARAM:REPS:PERIOD_MS; the groups follow one another, rep r
 *                                  of a group launched PERIOD_MS * r after the group's start
 *   stream GO KIND PARAM COUNT DELAY_MS    COUNT kernels back to back, DELAY_MS after the start
 *                                  (part b's process A)
 *   poke GO ITERS COUNT PERIOD_US DELAY_MS COUNT short spin kernels, one every PERIOD_US, each
 *                                  waited for; launch-to-end latency on the host (part b's B)
 *   launch N ROUNDS                ROUNDS x N empty <<<1,1>>> launches back to back, then 1000
 *                                  launch + synchronize round trips (part c)
 * GO is the start file: the probe sets everything up, creates GO.ready.<pid>, waits until GO
 * exists and reads from it the start instant (CLOCK_REALTIME ns); the script writes it once every
 * probe of a run is ready, so all start together without a fixed lead time.
 * Kernel kinds and their PARAM:
 *   spin   iterations of samples/spin's one-thread kernel (<<<1,1>>>; 2e8 ~ 448 ms on an H200)
 *   sat    FMA steps per chain of samples/saturating's kernel, 8 full waves of blocks on every SM
 *   triad  passes of a[i] = b[i] + s*c[i] (float4) over three 1 GiB float arrays, one block per
 *          resident slot on every SM (memory-bound)
 *   tile   repeats of a 64x64 output tile times a 256-deep product (shared-memory tiles, 4x4
 *          outputs per thread), one block of 256 threads per tile, SMs/8 blocks: a GEMM-like
 *          kernel on about 1/8 of the SMs
 * Every kernel notes its span on the GPU: %globaltimer at its first block's start and its last
 * block's end. Output lines:
 *   K KIND PARAM REP START END LATE    (sched, stream) LATE: how far past its instant it launched
 *   L I LATENCY KSTART KEND LATE       (poke) LATENCY: host CLOCK_MONOTONIC from before the
 *                                      launch call to the return of cudaStreamSynchronize
 *   U launch ROUND US_PER_LAUNCH | U rtt P50_US P90_US   (launch)
 * Results are checked on the CPU (spin: the sample's replay; sat: sampled threads replayed; triad:
 * sampled elements; tile: sampled rows in exact integer arithmetic); "Test PASSED" at the end. */
#include <cuda_runtime.h>

#include <limits.h>
#include <math.h>
#include <string.h>

#include "tlsample.h"
#include "tlspin.cuh"

#define WAIT_S 120      /* longest wait for the start file */
#define SAT_THREADS 256 /* saturating's block */
#define SAT_WAVES 8     /* saturating's default waves */
#define SAT_A 0.999f    /* saturating's x <- x*A + b */
#define TRIAD_BYTES (1UL << 30)
#define TILE 64      /* output tile edge */
#define TILE_K 256   /* depth of one product */
#define TILE_STEP 16 /* depth of one shared-memory step */
/* repeats * TILE_K <= 2^24: the float sums of products in {-1, 0, 1} stay exact */
#define TILE_MAX_REPS 65536

static const float V1 = 10.0f, V2 = 9.9899f, INIT = 1.0f; /* samples/spin's constants */

typedef unsigned long long u64;

static __device__ inline u64 gtimer(void)
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
/* span[0] = the earliest block start, span[1] = the latest block end (reset to ~0 and 0). */
static __device__ inline void span_begin(u64 *span)
{
    if (threadIdx.x == 0)
        atomicMin(&span[0], gtimer());
}
static __device__ inline void span_end(u64 *span)
{
    __syncthreads();
    if (threadIdx.x == 0)
        atomicMax(&span[1], gtimer());
}

/* samples/spin's kernel (the seed's testMaxFlopsKernel) with the span added. */
__global__ void testMaxFlopsKernel(float *pData, int nRepeats, float v1, float v2, u64 *span)
{
    span_begin(span);
    tls_spin_chain(pData, nRepeats, v1, v2);
    span_end(span);
}

/* samples/saturating's per-thread work (four independent FMA chains). */
static __host__ __device__ inline float sat_chains(unsigned g, int iters)
{
    float b = 1e-4f * (float)(g % 13);
    float x0 = 1.0f, x1 = 2.0f, x2 = 3.0f, x3 = 4.0f;
    for (int i = 0; i < iters; i++) {
        x0 = fmaf(x0, SAT_A, b);
        x1 = fmaf(x1, SAT_A, b);
        x2 = fmaf(x2, SAT_A, b);
        x3 = fmaf(x3, SAT_A, b);
    }
    return (x0 + x1) + (x2 + x3);
}

__global__ void fill_sms(float *out, int iters, u64 *span)
{
    span_begin(span);
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = sat_chains(g, iters);
    span_end(span);
}

/* The triad's inputs: small whole numbers, so b + s*c is exact in any rounding. */
static __host__ __device__ inline float triad_b(size_t i)
{
    return (float)(i % 7);
}
static __host__ __device__ inline float triad_c(size_t i)
{
    return 0.5f * (float)(i % 13);
}

__global__ void triad_init(float *b, float *c, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        b[i] = triad_b(i);
        c[i] = triad_c(i);
    }
}

/* PASSES passes of a = b + s*c, s = pass + 1; each element is always written by the same thread,
 * so it ends as b + PASSES*c. No __restrict__: the passes must not be merged. */
__global__ void triad(float4 *a, const float4 *b, const float4 *c, size_t n4, int passes, u64 *span)
{
    span_begin(span);
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (int p = 0; p < passes; p++) {
        float s = (float)(p + 1);
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += stride) {
            float4 x = b[i], y = c[i];
            a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
        }
    }
    span_end(span);
}

/* The tile product's inputs, in {-1, 0, 1}: every partial sum is a whole number below 2^24. */
static __host__ __device__ inline float tile_a(int m, int k)
{
    return (float)((m * 7 + k * 3) % 3 - 1);
}
static __host__ __device__ inline float tile_b(int k, int n)
{
    return (float)((k * 5 + n * 11) % 3 - 1);
}

/* Block x computes rows [64x, 64x + 64) of C = REPS * (A x B), A: rows x 256, B: 256 x 64. */
__global__ void tile_gemm(const float *A, const float *B, float *C, int reps, u64 *span)
{
    __shared__ float As[TILE_STEP][TILE], Bs[TILE_STEP][TILE];
    span_begin(span);
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16, row0 = blockIdx.x * TILE;
    float acc[4][4] = {{0}};
    for (int r = 0; r < reps; r++) {
        for (int k0 = 0; k0 < TILE_K; k0 += TILE_STEP) {
            for (int e = threadIdx.x; e < TILE * TILE_STEP; e += blockDim.x) {
                As[e % TILE_STEP][e / TILE_STEP] =
                    A[(row0 + e / TILE_STEP) * TILE_K + k0 + e % TILE_STEP];
                Bs[e / TILE][e % TILE] = B[(k0 + e / TILE) * TILE + e % TILE];
            }
            __syncthreads();
            for (int k = 0; k < TILE_STEP; k++) {
                float a[4], b[4];
                for (int i = 0; i < 4; i++) {
                    a[i] = As[k][ty * 4 + i];
                    b[i] = Bs[k][tx * 4 + i];
                }
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++)
                        acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
            }
            __syncthreads();
        }
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            C[(row0 + ty * 4 + i) * TILE + tx * 4 + j] = acc[i][j];
    span_end(span);
}

__global__ void empty_kernel(void) {}

enum kind { SPIN, SAT, TRIAD, TILE_KIND, NKINDS };
static const char *const kind_names[NKINDS] = {"spin", "sat", "triad", "tile"};

/* Device buffers of every kind (allocated by prepare() for the kinds a run uses). */
static struct probe {
    int sms;
    float *spin; /* one slot per spin launch of a stream/poke run */
    int spin_slots;
    float *sat; /* fill_sms output */
    long long sat_blocks;
    float *ta, *tb, *tc; /* triad arrays */
    size_t triad_n;      /* floats per array */
    int triad_blocks;
    float *ga, *gb, *gc; /* tile_gemm A, B, C */
    int tile_blocks;
    u64 *span; /* 2 per launch */
    int spans;
    cudaStream_t st;
} P;

static void usage(void)
{
    fprintf(stderr, "usage: mps_cost calib\n"
                    "       mps_cost sched GO KIND:PARAM:REPS:PERIOD_MS...\n"
                    "       mps_cost stream GO KIND PARAM COUNT DELAY_MS\n"
                    "       mps_cost poke GO ITERS COUNT PERIOD_US DELAY_MS\n"
                    "       mps_cost launch N ROUNDS\n"
                    "KIND: spin, sat, triad or tile (see the top of bench/mps_cost.cu)\n");
    exit(2);
}

static enum kind parse_kind(const char *s)
{
    for (int k = 0; k < NKINDS; k++)
        if (!strcmp(s, kind_names[k]))
            return (enum kind)k;
    fprintf(stderr, "mps_cost: unknown kernel kind '%s'\n", s);
    usage();
    return SPIN;
}

/* prepare: allocates what kind k needs (once), with room for `spans` spans and `slots` spin
 * slots (the largest asked for wins). */
static void prepare(enum kind k, int spans, int slots)
{
    if (!P.st) {
        cudaDeviceProp prop;
        CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
        P.sms = prop.multiProcessorCount;
        CHECK_CUDA(cudaStreamCreateWithFlags(&P.st, cudaStreamNonBlocking));
        printf("I pid %d sms %d name %s\n", (int)getpid(), P.sms, prop.name);
    }
    if (spans > P.spans) {
        if (P.span)
            CHECK_CUDA(cudaFree(P.span));
        CHECK_CUDA(cudaMalloc(&P.span, sizeof(u64) * 2 * spans));
        P.spans = spans;
    }
    if (k == SPIN && slots > P.spin_slots) {
        if (P.spin)
            CHECK_CUDA(cudaFree(P.spin));
        CHECK_CUDA(cudaMalloc(&P.spin, sizeof(float) * slots));
        P.spin_slots = slots;
    } else if (k == SAT && !P.sat) {
        int per_sm = 0;
        CHECK_CUDA(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fill_sms, SAT_THREADS, 0));
        P.sat_blocks = (long long)SAT_WAVES * P.sms * per_sm;
        CHECK_CUDA(cudaMalloc(&P.sat, sizeof(float) * P.sat_blocks * SAT_THREADS));
    } else if (k == TRIAD && !P.ta) {
        int per_sm = 0;
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, triad, 256, 0));
        P.triad_blocks = P.sms * per_sm;
        P.triad_n = TRIAD_BYTES / sizeof(float);
        CHECK_CUDA(cudaMalloc(&P.ta, TRIAD_BYTES));
        CHECK_CUDA(cudaMalloc(&P.tb, TRIAD_BYTES));
        CHECK_CUDA(cudaMalloc(&P.tc, TRIAD_BYTES));
        triad_init<<<P.triad_blocks, 256, 0, P.st>>>(P.tb, P.tc, P.triad_n);
        CHECK_CUDA(cudaGetLastError());
    } else if (k == TILE_KIND && !P.ga) {
        P.tile_blocks = P.sms / 8 > 0 ? P.sms / 8 : 1;
        int rows = P.tile_blocks * TILE;
        float *ha = (float *)malloc(sizeof(float) * rows * TILE_K);
        float *hb = (float *)malloc(sizeof(float) * TILE_K * TILE);
        if (!ha || !hb) {
            fprintf(stderr, "mps_cost: out of memory\n");
            exit(1);
        }
        for (int m = 0; m < rows; m++)
            for (int q = 0; q < TILE_K; q++)
                ha[m * TILE_K + q] = tile_a(m, q);
        for (int q = 0; q < TILE_K; q++)
            for (int n = 0; n < TILE; n++)
                hb[q * TILE + n] = tile_b(q, n);
        CHECK_CUDA(cudaMalloc(&P.ga, sizeof(float) * rows * TILE_K));
        CHECK_CUDA(cudaMalloc(&P.gb, sizeof(float) * TILE_K * TILE));
        CHECK_CUDA(cudaMalloc(&P.gc, sizeof(float) * rows * TILE));
        CHECK_CUDA(cudaMemcpy(P.ga, ha, sizeof(float) * rows * TILE_K, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(P.gb, hb, sizeof(float) * TILE_K * TILE, cudaMemcpyHostToDevice));
        free(ha);
        free(hb);
    }
    CHECK_CUDA(cudaDeviceSynchronize());
}

/* reset: spans [first, first + n) to (~0, 0), and spin slots [first, first + n) to INIT
 * (when k is SPIN), on the probe's stream; waits for it. */
static void reset(enum kind k, int first, int n)
{
    static u64 hspan[2 * 1024];
    static float hslot[1024];
    for (int done = 0; done < n; done += 1024) {
        int m = n - done < 1024 ? n - done : 1024;
        for (int i = 0; i < m; i++) {
            hspan[2 * i] = ~0ULL;
            hspan[2 * i + 1] = 0;
            hslot[i] = INIT;
        }
        CHECK_CUDA(cudaMemcpyAsync(P.span + 2 * (first + done), hspan, sizeof(u64) * 2 * m,
                                   cudaMemcpyHostToDevice, P.st));
        if (k == SPIN)
            CHECK_CUDA(cudaMemcpyAsync(P.spin + first + done, hslot, sizeof(float) * m,
                                       cudaMemcpyHostToDevice, P.st));
        CHECK_CUDA(cudaStreamSynchronize(P.st));
    }
}

/* launch_kind: one kernel of kind k with PARAM, noting its span in span slot `slot` (and, for
 * spin, computing in spin slot `slot`). */
static void launch_kind(enum kind k, long long param, int slot)
{
    u64 *span = P.span + 2 * slot;
    switch (k) {
    case SPIN:
        testMaxFlopsKernel<<<1, 1, 0, P.st>>>(P.spin + slot, (int)param, V1, V2, span);
        break;
    case SAT:
        fill_sms<<<(unsigned)P.sat_blocks, SAT_THREADS, 0, P.st>>>(P.sat, (int)param, span);
        break;
    case TRIAD:
        triad<<<P.triad_blocks, 256, 0, P.st>>>((float4 *)P.ta, (const float4 *)P.tb,
                                                (const float4 *)P.tc, P.triad_n / 4, (int)param,
                                                span);
        break;
    case TILE_KIND:
        tile_gemm<<<P.tile_blocks, 256, 0, P.st>>>(P.ga, P.gb, P.gc, (int)param, span);
        break;
    default: break;
    }
    CHECK_CUDA(cudaGetLastError());
}

/* check_kind: the result of the last kernel of kind k with PARAM (spin: in spin slot `slot`)
 * against the CPU; returns the number of wrong values, printing the first few. */
static int check_kind(enum kind k, long long param, int slot)
{
    int bad = 0;
    if (k == SPIN) {
        static long long memo_n = -1;
        static float memo;
        if (memo_n != param) {
            memo = tls_spin_replay(INIT, param, V1, V2);
            memo_n = param;
        }
        float got;
        CHECK_CUDA(cudaMemcpy(&got, P.spin + slot, sizeof got, cudaMemcpyDeviceToHost));
        if (memcmp(&got, &memo, sizeof got) != 0 && !(isnan(got) && isnan(memo))) {
            fprintf(stderr, "mps_cost: spin %lld computed %g, the CPU replay %g\n", param, got,
                    memo);
            bad++;
        }
    } else if (k == SAT) {
        long long n = P.sat_blocks * SAT_THREADS;
        long long probe[4] = {0, SAT_THREADS - 1, n / 2, n - 1};
        for (int i = 0; i < 4; i++) {
            float got, want = sat_chains((unsigned)probe[i], (int)param);
            CHECK_CUDA(cudaMemcpy(&got, P.sat + probe[i], sizeof got, cudaMemcpyDeviceToHost));
            if (memcmp(&got, &want, sizeof got) != 0 && bad++ < 3)
                fprintf(stderr, "mps_cost: sat thread %lld computed %.9g, the CPU %.9g\n", probe[i],
                        got, want);
        }
    } else if (k == TRIAD) {
        enum { CHUNK = 1 << 18 };
        static float h[CHUNK];
        size_t at[3] = {0, P.triad_n / 2, P.triad_n - CHUNK};
        float s = (float)param;
        for (int c = 0; c < 3; c++) {
            CHECK_CUDA(cudaMemcpy(h, P.ta + at[c], sizeof h, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < CHUNK; i++) {
                float want = triad_b(at[c] + i) + s * triad_c(at[c] + i);
                if (h[i] != want && bad++ < 3)
                    fprintf(stderr, "mps_cost: triad a[%zu] = %g, %g wanted\n", at[c] + i, h[i],
                            want);
            }
        }
    } else if (k == TILE_KIND) {
        int rows = P.tile_blocks * TILE;
        float h[TILE];
        for (int m = 0; m < rows; m += 61) {
            CHECK_CUDA(cudaMemcpy(h, P.gc + m * TILE, sizeof h, cudaMemcpyDeviceToHost));
            for (int n = 0; n < TILE; n++) {
                long long dot = 0;
                for (int q = 0; q < TILE_K; q++)
                    dot += (long long)tile_a(m, q) * (long long)tile_b(q, n);
                if ((double)h[n] != (double)(dot * param) && bad++ < 3)
                    fprintf(stderr, "mps_cost: tile C[%d][%d] = %.1f, %lld wanted\n", m, n, h[n],
                            dot * param);
            }
        }
    }
    return bad;
}

/* read_span: span slot `slot` into start/end (waits for the stream). */
static void read_span(int slot, u64 *start, u64 *end)
{
    u64 h[2];
    CHECK_CUDA(cudaMemcpy(h, P.span + 2 * slot, sizeof h, cudaMemcpyDeviceToHost));
    *start = h[0];
    *end = h[1];
}

/* wait_go: announce readiness (GO.ready.<pid>), wait for GO, return the start instant it holds. */
static int64_t wait_go(const char *go)
{
    char ready[4096];
    snprintf(ready, sizeof ready, "%s.ready.%ld", go, (long)getpid());
    if (tls_touch(ready) != 0)
        exit(1);
    int64_t deadline = tls_now_ns(CLOCK_MONOTONIC) + (int64_t)WAIT_S * 1000000000LL;
    for (;;) {
        FILE *f = fopen(go, "r");
        long long at;
        if (f) {
            int ok = fscanf(f, "%lld", &at) == 1;
            fclose(f);
            if (ok && at > 0)
                return at;
        }
        if (tls_now_ns(CLOCK_MONOTONIC) > deadline) {
            fprintf(stderr, "mps_cost: no start instant in %s within %d s\n", go, WAIT_S);
            exit(1);
        }
        tls_sleep_ns(100000);
    }
}

/* wait_until: until CLOCK_REALTIME reaches `at`; returns how late it is then (ns, >= 0). */
static int64_t wait_until(int64_t at)
{
    tls_start_barrier(NULL, at, 1e9);
    return tls_now_ns(CLOCK_REALTIME) - at;
}

/* The size of each kind's calibration runs (the small one; the large is 4x). */
static const long long calib_units[NKINDS] = {2000000, 20000, 2, 100};

static int cmd_calib(void)
{
    int bad = 0;
    for (int k = 0; k < NKINDS; k++) {
        prepare((enum kind)k, 1, 1);
        double t[2];
        for (int run = 0; run < 3; run++) { /* run 0: warm-up (module load) */
            long long units = calib_units[k] * (run == 2 ? 4 : 1);
            reset((enum kind)k, 0, 1);
            launch_kind((enum kind)k, units, 0);
            CHECK_CUDA(cudaStreamSynchronize(P.st));
            u64 s, e;
            read_span(0, &s, &e);
            if (run > 0)
                t[run - 1] = (double)(e - s);
            bad += check_kind((enum kind)k, units, 0);
        }
        double slope = (t[1] - t[0]) / (3.0 * calib_units[k]);
        double fixed = t[0] - slope * calib_units[k];
        if (slope <= 0) {
            fprintf(stderr, "mps_cost: %s took %.0f ns at %lld and %.0f ns at 4x: no slope\n",
                    kind_names[k], t[0], calib_units[k], t[1]);
            bad++;
        }
        printf("C %s %.4f %.0f\n", kind_names[k], slope, fixed > 0 ? fixed : 0);
        if (k == TRIAD)
            printf("I triad %.0f GB/s (3 arrays of %zu MiB)\n",
                   3.0 * TRIAD_BYTES * 3 * calib_units[k] / (t[1] - t[0]), TRIAD_BYTES >> 20);
    }
    return bad;
}

struct group {
    enum kind k;
    long long param;
    int reps;
    int period_ms;
};

static int cmd_sched(const char *go, int ngroups, char **specs)
{
    struct group *g = (struct group *)calloc(ngroups, sizeof *g);
    if (!g)
        return 1;
    for (int i = 0; i < ngroups; i++) {
        char kind[16];
        long long param;
        int reps, period;
        if (sscanf(specs[i], "%15[a-z]:%lld:%d:%d", kind, &param, &reps, &period) != 4 ||
            param < 1 || param > INT_MAX || reps < 1 || period < 1) {
            fprintf(stderr, "mps_cost: group '%s' is not KIND:PARAM:REPS:PERIOD_MS\n", specs[i]);
            usage();
        }
        g[i] = (struct group){parse_kind(kind), param, reps, period};
        if (g[i].k == TILE_KIND && param > TILE_MAX_REPS) {
            fprintf(stderr, "mps_cost: tile repeats %lld > %d: the sums would not be exact\n",
                    param, TILE_MAX_REPS);
            return 2;
        }
        prepare(g[i].k, 1, 1);
    }
    int bad = 0;
    int64_t at = wait_go(go);
    for (int i = 0; i < ngroups; i++) {
        for (int r = 0; r < g[i].reps; r++) {
            reset(g[i].k, 0, 1);
            int64_t late = wait_until(at + (int64_t)r * g[i].period_ms * 1000000LL);
            launch_kind(g[i].k, g[i].param, 0);
            CHECK_CUDA(cudaStreamSynchronize(P.st));
            u64 s, e;
            read_span(0, &s, &e);
            printf("K %s %lld %d %llu %llu %lld\n", kind_names[g[i].k], g[i].param, r, s, e,
                   (long long)late);
            bad += check_kind(g[i].k, g[i].param, 0);
        }
        at += (int64_t)g[i].reps * g[i].period_ms * 1000000LL;
    }
    free(g);
    return bad;
}

static int cmd_stream(const char *go, enum kind k, long long param, int count, int delay_ms)
{
    prepare(k, count, count);
    reset(k, 0, count);
    int64_t late = wait_until(wait_go(go) + (int64_t)delay_ms * 1000000LL);
    for (int i = 0; i < count; i++)
        launch_kind(k, param, i);
    CHECK_CUDA(cudaStreamSynchronize(P.st));
    int bad = 0;
    for (int i = 0; i < count; i++) {
        u64 s, e;
        read_span(i, &s, &e);
        printf("K %s %lld %d %llu %llu %lld\n", kind_names[k], param, i, s, e,
               i == 0 ? (long long)late : 0LL);
        if (k == SPIN || i == count - 1)
            bad += check_kind(k, param, i);
    }
    return bad;
}

static int cmd_poke(const char *go, long long iters, int count, int period_us, int delay_ms)
{
    prepare(SPIN, count, count);
    reset(SPIN, 0, count);
    int64_t *lat = (int64_t *)malloc(sizeof(int64_t) * count);
    int64_t *late = (int64_t *)malloc(sizeof(int64_t) * count);
    if (!lat || !late)
        return 1;
    int64_t at = wait_go(go) + (int64_t)delay_ms * 1000000LL;
    for (int i = 0; i < count; i++) {
        late[i] = wait_until(at + (int64_t)i * period_us * 1000);
        int64_t t0 = tls_now_ns(CLOCK_MONOTONIC);
        launch_kind(SPIN, iters, i);
        CHECK_CUDA(cudaStreamSynchronize(P.st));
        lat[i] = tls_now_ns(CLOCK_MONOTONIC) - t0;
    }
    int bad = 0;
    for (int i = 0; i < count; i++) {
        u64 s, e;
        read_span(i, &s, &e);
        printf("L %d %lld %llu %llu %lld\n", i, (long long)lat[i], s, e, (long long)late[i]);
        bad += check_kind(SPIN, iters, i);
    }
    free(lat);
    free(late);
    return bad;
}

/* parse_ms: a whole number from 0 to max (tls_parse_count's rules otherwise). */
static int parse_ms(const char *opt, const char *text, int max)
{
    return strcmp(text, "0") ? (int)tls_parse_count("mps_cost", opt, text, max) : 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmd_launch(long n, int rounds)
{
    enum { RTT = 1000 };
    static int64_t rtt[RTT];
    prepare(SPIN, 1, 1);
    empty_kernel<<<1, 1, 0, P.st>>>();
    CHECK_CUDA(cudaStreamSynchronize(P.st));
    for (int r = 0; r < rounds; r++) {
        int64_t t0 = tls_now_ns(CLOCK_MONOTONIC);
        for (long i = 0; i < n; i++)
            empty_kernel<<<1, 1, 0, P.st>>>();
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaStreamSynchronize(P.st));
        printf("U launch %d %.3f\n", r, (tls_now_ns(CLOCK_MONOTONIC) - t0) / 1e3 / n);
    }
    for (int i = 0; i < RTT; i++) {
        int64_t t0 = tls_now_ns(CLOCK_MONOTONIC);
        empty_kernel<<<1, 1, 0, P.st>>>();
        CHECK_CUDA(cudaStreamSynchronize(P.st));
        rtt[i] = tls_now_ns(CLOCK_MONOTONIC) - t0;
    }
    CHECK_CUDA(cudaGetLastError());
    qsort(rtt, RTT, sizeof rtt[0], cmp_i64);
    printf("U rtt %.3f %.3f\n", rtt[RTT / 2] / 1e3, rtt[RTT * 9 / 10] / 1e3);
    printf("mps_cost: pid=%d launched=%ld\n", (int)getpid(), 1 + n * rounds + RTT);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    const char *mode = argv[1];
    int bad;
    if (!strcmp(mode, "calib") && argc == 2) {
        bad = cmd_calib();
    } else if (!strcmp(mode, "sched") && argc >= 4) {
        bad = cmd_sched(argv[2], argc - 3, argv + 3);
    } else if (!strcmp(mode, "stream") && argc == 7) {
        bad = cmd_stream(argv[2], parse_kind(argv[3]),
                         tls_parse_count("mps_cost", "PARAM", argv[4], INT_MAX),
                         (int)tls_parse_count("mps_cost", "COUNT", argv[5], 100000),
                         parse_ms("DELAY_MS", argv[6], 600000));
    } else if (!strcmp(mode, "poke") && argc == 7) {
        bad = cmd_poke(argv[2], tls_parse_count("mps_cost", "ITERS", argv[3], INT_MAX),
                       (int)tls_parse_count("mps_cost", "COUNT", argv[4], 100000),
                       (int)tls_parse_count("mps_cost", "PERIOD_US", argv[5], 60000000),
                       parse_ms("DELAY_MS", argv[6], 600000));
    } else if (!strcmp(mode, "launch") && argc == 4) {
        bad = cmd_launch((long)tls_parse_count("mps_cost", "N", argv[2], 100000000),
                         (int)tls_parse_count("mps_cost", "ROUNDS", argv[3], 1000));
    } else {
        usage();
        return 2;
    }
    printf(bad ? "Test FAILED\n" : "Test PASSED\n");
    return bad ? 1 : 0;
}

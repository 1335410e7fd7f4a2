/* advise_stats.c: the statistics of `tlview advise`, pure functions without I/O. Everything is
 * distribution-free and exact for the sizes an experiment has, since a few repeats of a noisy
 * throughput are neither normal nor many: the median with its order-statistic interval, the
 * Wilcoxon-Mann-Whitney rank-sum test (a permutation test of the ranks, exact with ties) and the
 * interval for the ratio of two configurations that goes with it (Moses), Holm's correction for
 * comparing several configurations with one default, the interleaved order of the rounds, and
 * the decision. Why these: cli/README.md, "tlview advise". */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"

#define EXACT_MAX 100  /* n + m up to which the rank test's distribution is counted exactly */
#define LEVEL_EPS 1e-9 /* coverages are sums of binomial terms: compare with some slack */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A sorted copy of x[0..n) (malloc'd), NULL when out of memory. */
static double *sorted_copy(const double *x, int n)
{
    double *s = malloc(sizeof *s * (size_t)(n > 0 ? n : 1));
    if (!s)
        return NULL;
    memcpy(s, x, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return s;
}

double adv_median(const double *x, int n)
{
    if (n <= 0)
        return NAN;
    double *s = sorted_copy(x, n);
    if (!s)
        return NAN;
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

/* log C(n, k) */
static double log_choose(int n, int k)
{
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

/* P(B <= j) for B ~ Binomial(n, 1/2). */
static double binom_half_cdf(int n, int j)
{
    double sum = 0;
    for (int i = 0; i <= j && i <= n; i++)
        sum += exp(log_choose(n, i) - n * log(2.0));
    return sum;
}

adv_interval adv_median_interval(const double *x, int n)
{
    adv_interval r = {NAN, NAN, NAN};
    double *s = n > 0 ? sorted_copy(x, n) : NULL;
    if (!s)
        return r;
    int k = 1;
    double level = 1 - 2 * binom_half_cdf(n, 0);
    for (int j = 2; 2 * j <= n + 1; j++) {
        double lv = 1 - 2 * binom_half_cdf(n, j - 1);
        if (lv < 1 - ADV_ALPHA - LEVEL_EPS)
            break;
        k = j;
        level = lv;
    }
    r.lo = s[k - 1];
    r.hi = s[n - k];
    r.level = level < 0 ? 0 : level;
    free(s);
    return r;
}

/* The number of ways k of the N integer weights v[] sum to s, for s in 0..*pSmax (f[s]; malloc'd,
 * NULL when out of memory). */
static double *subset_sums(const int *v, int N, int k, int *pSmax)
{
    int smax = 0;
    int *sorted = malloc(sizeof *sorted * (size_t)N);
    if (!sorted)
        return NULL;
    memcpy(sorted, v, sizeof *sorted * (size_t)N);
    for (int i = 1; i < N; i++) /* descending, to sum the k largest */
        for (int j = i; j > 0 && sorted[j - 1] < sorted[j]; j--) {
            int t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    for (int i = 0; i < k; i++)
        smax += sorted[i];
    free(sorted);
    size_t width = (size_t)smax + 1;
    double *f = calloc((size_t)(k + 1) * width, sizeof *f);
    if (!f)
        return NULL;
    f[0] = 1; /* no weight chosen: sum 0 */
    for (int i = 0; i < N; i++)
        for (int j = (i + 1 < k ? i + 1 : k); j >= 1; j--)
            for (int s = smax; s >= v[i]; s--)
                f[(size_t)j * width + (size_t)s] += f[(size_t)(j - 1) * width + (size_t)(s - v[i])];
    double *out = malloc(sizeof *out * width);
    if (out)
        memcpy(out, f + (size_t)k * width, sizeof *out * width);
    free(f);
    *pSmax = smax;
    return out;
}

/* A value and which sample it came from, for ranking. */
typedef struct ranked {
    double v;
    int from_x;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    return cmp_double(&((const ranked *)a)->v, &((const ranked *)b)->v);
}

double adv_rank_test(const double *x, int n, const double *y, int m, int *pDir)
{
    if (pDir)
        *pDir = 0;
    if (n <= 0 || m <= 0)
        return NAN;
    int N = n + m;
    ranked *all = malloc(sizeof *all * (size_t)N);
    int *rank2 = malloc(sizeof *rank2 * (size_t)N); /* doubled mid-ranks: integers */
    if (!all || !rank2) {
        free(all);
        free(rank2);
        return NAN;
    }
    for (int i = 0; i < n; i++)
        all[i] = (ranked){x[i], 1};
    for (int j = 0; j < m; j++)
        all[n + j] = (ranked){y[j], 0};
    qsort(all, (size_t)N, sizeof *all, cmp_ranked);
    long long wx2 = 0; /* doubled rank sum of x */
    double ties = 0;   /* sum of t^3 - t over tied groups */
    for (int i = 0; i < N;) {
        int j = i;
        while (j + 1 < N && all[j + 1].v == all[i].v)
            j++;
        for (int q = i; q <= j; q++) {
            rank2[q] = i + j + 2; /* ((i + 1) + (j + 1)) / 2, doubled */
            if (all[q].from_x)
                wx2 += rank2[q];
        }
        double t = j - i + 1;
        ties += t * t * t - t;
        i = j + 1;
    }
    long long e2 = (long long)n * (N + 1); /* doubled expectation of x's rank sum */
    if (pDir)
        *pDir = wx2 < e2 ? 1 : wx2 > e2 ? -1 : 0;
    long long dev = llabs(wx2 - e2);
    double p;
    if (N <= EXACT_MAX) {
        /* count the subsets of n ranks (x's size) by their doubled sum */
        int smax;
        double *f = subset_sums(rank2, N, n, &smax);
        if (!f) {
            free(all);
            free(rank2);
            return NAN;
        }
        double tail = 0, total = 0;
        for (int s = 0; s <= smax; s++) {
            total += f[s];
            if (llabs(s - e2) >= dev)
                tail += f[s];
        }
        free(f);
        p = total > 0 ? tail / total : NAN;
    } else {
        double var = (double)n * m / 12.0 * ((N + 1) - ties / ((double)N * (N - 1)));
        double z = var > 0 ? (dev / 2.0 - 0.5) / sqrt(var) : 0;
        p = erfc((z > 0 ? z : 0) / sqrt(2.0));
    }
    free(all);
    free(rank2);
    return p > 1 ? 1 : p;
}

double adv_min_p(int n, int m)
{
    if (n <= 0 || m <= 0)
        return 1;
    double p = 2 * exp(-log_choose(n + m, n));
    return p > 1 ? 1 : p;
}

/* P(U <= u) for u in 0..n m, U the Mann-Whitney count of the rank test without ties (cdf[];
 * malloc'd, NULL when out of memory): counted exactly up to EXACT_MAX values, else normal. */
static double *mann_whitney_cdf(int n, int m)
{
    int N = n + m, nm = n * m;
    double *cdf = malloc(sizeof *cdf * (size_t)(nm + 1));
    if (!cdf)
        return NULL;
    if (N <= EXACT_MAX) {
        int *v = malloc(sizeof *v * (size_t)N);
        int smax = 0;
        double *f = NULL;
        if (v) {
            for (int i = 0; i < N; i++)
                v[i] = i + 1;
            f = subset_sums(v, N, n, &smax);
            free(v);
        }
        if (!f) {
            free(cdf);
            return NULL;
        }
        double total = 0, run = 0;
        for (int s = 0; s <= smax; s++)
            total += f[s];
        int base = n * (n + 1) / 2; /* the smallest rank sum: U = W - base */
        for (int u = 0; u <= nm; u++) {
            if (base + u <= smax)
                run += f[base + u];
            cdf[u] = run / total;
        }
        free(f);
    } else {
        double mean = nm / 2.0, sd = sqrt((double)nm * (N + 1) / 12.0);
        for (int u = 0; u <= nm; u++)
            cdf[u] = 0.5 * erfc(-((u + 0.5 - mean) / sd) / sqrt(2.0));
    }
    return cdf;
}

adv_interval adv_ratio_interval(const double *x, int n, const double *y, int m)
{
    adv_interval r = {NAN, NAN, NAN};
    if (n <= 0 || m <= 0)
        return r;
    for (int i = 0; i < n; i++)
        if (!(x[i] > 0) || !isfinite(x[i]))
            return r;
    for (int j = 0; j < m; j++)
        if (!(y[j] > 0) || !isfinite(y[j]))
            return r;
    int nm = n * m;
    double *d = malloc(sizeof *d * (size_t)nm);
    double *cdf = d ? mann_whitney_cdf(n, m) : NULL;
    if (!cdf) {
        free(d);
        return r;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            d[i * m + j] = log(y[j]) - log(x[i]);
    qsort(d, (size_t)nm, sizeof *d, cmp_double);
    int c = 1;
    double level = 1 - 2 * cdf[0];
    for (int cc = 2; 2 * cc <= nm + 1; cc++) {
        double lv = 1 - 2 * cdf[cc - 1];
        if (lv < 1 - ADV_ALPHA - LEVEL_EPS)
            break;
        c = cc;
        level = lv;
    }
    r.lo = exp(d[c - 1]);
    r.hi = exp(d[nm - c]);
    r.level = level < 0 ? 0 : level;
    free(d);
    free(cdf);
    return r;
}

void adv_holm(const double *p, int k, double *adj)
{
    int idx[ADV_MAX_CONFIGS], kk = 0;
    for (int i = 0; i < k; i++) {
        adj[i] = NAN;
        if (!isnan(p[i]) && kk < ADV_MAX_CONFIGS)
            idx[kk++] = i;
    }
    for (int i = 1; i < kk; i++) /* ascending p */
        for (int j = i; j > 0 && p[idx[j - 1]] > p[idx[j]]; j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    double run = 0;
    for (int i = 0; i < kk; i++) {
        double v = (kk - i) * p[idx[i]];
        v = v > 1 ? 1 : v;
        run = v > run ? v : run;
        adj[idx[i]] = run;
    }
}

void adv_round_order(int n, int round, int *order)
{
    int shift = n > 0 ? (round / 2) % n : 0;
    for (int p = 0; p < n; p++) {
        int q = round % 2 ? n - 1 - p : p;
        order[p] = (q + shift) % n;
    }
}

/* Complexity of a kind: a time-sliced GPU (solo included) < MPS < MPS with a thread limit. */
static int kind_rank(int kind)
{
    return kind == ADV_MPS ? 1 : kind == ADV_MPS_LIMIT ? 2 : 0;
}

int adv_prefer(const adv_arm *a, const adv_arm *b, int default_procs)
{
    int da = a->procs != default_procs, db = b->procs != default_procs;
    if (da != db)
        return da < db;
    if (kind_rank(a->kind) != kind_rank(b->kind))
        return kind_rank(a->kind) < kind_rank(b->kind);
    if (a->percentage != b->percentage)
        return a->percentage > b->percentage;
    return a->procs > b->procs;
}

/* splitmix64: the resampling's generator (fixed seed: the same estimate every call). */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The share of ADV_POWER_DRAWS experiments of r runs a side, resampled from x and y, in which the
 * rank test (P(U <= u) in cdf, the null distribution of r against r) finds y on side `dir` of x
 * with p k < ADV_ALPHA; -1 when out of memory. */
static double resampled_power(const double *x, int n, const double *y, int m, int k, int dir, int r)
{
    double *cdf = mann_whitney_cdf(r, r), *a = malloc(sizeof *a * (size_t)r),
           *b = malloc(sizeof *b * (size_t)r);
    uint64_t state = 0x746C76696577ULL; /* "tlview" */
    int hits = 0, rr = r * r;
    if (!cdf || !a || !b) {
        free(cdf);
        free(a);
        free(b);
        return -1;
    }
    for (int t = 0; t < ADV_POWER_DRAWS; t++) {
        for (int i = 0; i < r; i++) {
            a[i] = x[next_random(&state) % (uint64_t)n];
            b[i] = y[next_random(&state) % (uint64_t)m];
        }
        double u = 0; /* pairs with y above x, ties a half */
        for (int i = 0; i < r; i++)
            for (int j = 0; j < r; j++)
                u += b[j] > a[i] ? 1 : b[j] == a[i] ? 0.5 : 0;
        double tail = u < rr - u ? u : rr - u;
        double p = 2 * cdf[(int)floor(tail)];
        if ((dir > 0 ? u > rr / 2.0 : u < rr / 2.0) && p * k < ADV_ALPHA)
            hits++;
    }
    free(cdf);
    free(a);
    free(b);
    return (double)hits / ADV_POWER_DRAWS;
}

int adv_rounds_to_tell(const double *x, int n, const double *y, int m, int k, int from)
{
    if (n <= 0 || m <= 0)
        return 0;
    double mx = adv_median(x, n), my = adv_median(y, m);
    int dir = my > mx ? 1 : -1;
    /* upwards, one by one: the exact test's discreteness makes the power jump about between
     * neighbouring R, so no search that assumes it grows would find the least */
    for (int r = from < 1 ? 1 : from; r <= ADV_POWER_MAX_ROUNDS; r++) {
        double pw = resampled_power(x, n, y, m, k < 1 ? 1 : k, dir, r);
        if (pw < 0)
            return -1; /* out of memory: no estimate */
        if (pw >= ADV_POWER)
            return r;
    }
    return -1;
}

/* What the ratio interval of s (arm a) says where it was not significantly different from the
 * default D: within ADV_MARGIN (d->within_margin), or the rounds a new experiment needs to show
 * its measured difference (d->rounds_to_tell). */
static void margin(const adv_stat *s, const adv_arm *a, const adv_arm *D, adv_decision *d)
{
    adv_interval ci = s->ratio_ci;
    if (isnan(ci.lo) || !(ci.lo > 0) || !(s->ratio > 0))
        return;
    if (ci.lo >= 1 / (1 + ADV_MARGIN) && ci.hi <= 1 + ADV_MARGIN) {
        d->within_margin = 1;
        return;
    }
    if (fabs(log(s->ratio)) < log(1 + ADV_MARGIN))
        return;
    int ran = a->n > D->n ? a->n : D->n;
    int from = ran + 1 > d->repeats_needed ? ran + 1 : d->repeats_needed;
    d->rounds_to_tell = adv_rounds_to_tell(D->x, D->n, a->x, a->n, d->ncompared, from);
}

int adv_decide(const adv_arm *arms, int narms, int def, adv_stat *st, adv_decision *d)
{
    double p[ADV_MAX_CONFIGS] = {0}, adj[ADV_MAX_CONFIGS];
    int dir[ADV_MAX_CONFIGS] = {0};
    const adv_arm *D = &arms[def];
    memset(d, 0, sizeof *d);
    d->recommended = d->best = d->simpler = -1;
    d->p_simpler = NAN;
    if (narms > ADV_MAX_CONFIGS)
        return -1;
    for (int i = 0; i < narms; i++) {
        const adv_arm *a = &arms[i];
        adv_stat *s = &st[i];
        p[i] = NAN;
        dir[i] = 0;
        s->median = adv_median(a->x, a->n);
        s->median_ci = adv_median_interval(a->x, a->n);
        s->p = s->p_holm = NAN;
        s->ratio_ci = (adv_interval){NAN, NAN, NAN};
        s->ratio = NAN;
        if (i == def) {
            s->ratio = a->n ? 1 : NAN;
            s->outcome = ADV_O_DEFAULT;
            continue;
        }
        double dm = adv_median(D->x, D->n);
        if (a->n && dm > 0)
            s->ratio = s->median / dm;
        s->ratio_ci = adv_ratio_interval(D->x, D->n, a->x, a->n);
        if (!a->candidate)
            s->outcome = ADV_O_REFERENCE;
        else if (!a->n || !D->n)
            s->outcome = ADV_O_NO_RUNS;
        else {
            p[i] = s->p = adv_rank_test(D->x, D->n, a->x, a->n, &dir[i]);
            if (isnan(p[i]))
                return -1;
            d->ncompared++;
        }
    }
    if (!D->n) {
        d->reason = ADV_R_NO_DEFAULT;
        return 0;
    }
    adv_holm(p, narms, adj);
    for (int i = 0; i < narms; i++) {
        if (isnan(p[i]))
            continue;
        st[i].p_holm = adj[i];
        st[i].outcome = adj[i] >= ADV_ALPHA ? ADV_O_SAME
                        : dir[i] > 0        ? ADV_O_BETTER
                        : dir[i] < 0        ? ADV_O_WORSE
                                            : ADV_O_SAME;
        if (d->best < 0 || st[i].median > st[d->best].median)
            d->best = i;
    }
    for (int r = 1; d->ncompared && r <= ADV_MAX_ROUNDS; r++)
        if (d->ncompared * adv_min_p(r, r) < ADV_ALPHA) {
            d->repeats_needed = r;
            break;
        }
    int b = -1; /* the best of those significantly better */
    for (int i = 0; i < narms; i++)
        if (st[i].outcome == ADV_O_BETTER && (b < 0 || st[i].median > st[b].median))
            b = i;
    d->recommended = def;
    if (b < 0) {
        if (d->best >= 0 && !(st[d->best].median > st[def].median))
            d->reason = ADV_R_DEFAULT_BEST;
        else if (d->best >= 0 && d->ncompared * adv_min_p(arms[d->best].n, D->n) >= ADV_ALPHA)
            d->reason = ADV_R_THIN;
        else
            d->reason = ADV_R_NOT_SIGNIFICANT;
        if (d->reason != ADV_R_THIN && d->best >= 0)
            margin(&st[d->best], &arms[d->best], D, d);
        return 0;
    }
    /* the simpler ones among those significantly better: does the best beat them? */
    int alt[ADV_MAX_CONFIGS], nalt = 0;
    double palt[ADV_MAX_CONFIGS], padj[ADV_MAX_CONFIGS];
    for (int i = 0; i < narms; i++)
        if (i != b && st[i].outcome == ADV_O_BETTER && adv_prefer(&arms[i], &arms[b], D->procs)) {
            palt[nalt] = adv_rank_test(arms[i].x, arms[i].n, arms[b].x, arms[b].n, NULL);
            if (isnan(palt[nalt]))
                return -1;
            alt[nalt++] = i;
        }
    adv_holm(palt, nalt, padj);
    int pick = -1, most = -1; /* the preferred equivalent; the preferred of all tried */
    for (int j = 0; j < nalt; j++) {
        if (most < 0 || adv_prefer(&arms[alt[j]], &arms[alt[most]], D->procs))
            most = j;
        if (padj[j] >= ADV_ALPHA &&
            (pick < 0 || adv_prefer(&arms[alt[j]], &arms[alt[pick]], D->procs)))
            pick = j;
    }
    d->nsimpler = nalt;
    d->recommended = pick >= 0 ? alt[pick] : b;
    d->reason = pick >= 0 ? ADV_R_SIMPLER : ADV_R_BETTER;
    if (most >= 0) {
        d->simpler = alt[pick >= 0 ? pick : most];
        d->p_simpler = padj[pick >= 0 ? pick : most];
    }
    return 0;
}

const char *adv_outcome_name(enum adv_outcome o)
{
    switch (o) {
    case ADV_O_DEFAULT: return "default";
    case ADV_O_BETTER: return "better";
    case ADV_O_WORSE: return "worse";
    case ADV_O_SAME: return "same";
    case ADV_O_REFERENCE: return "reference";
    case ADV_O_NO_RUNS: return "no runs";
    }
    return "?";
}

const char *adv_reason_name(enum adv_reason r)
{
    switch (r) {
    case ADV_R_BETTER: return "better";
    case ADV_R_SIMPLER: return "simpler";
    case ADV_R_NOT_SIGNIFICANT: return "not-significant";
    case ADV_R_THIN: return "thin";
    case ADV_R_DEFAULT_BEST: return "default-best";
    case ADV_R_NO_DEFAULT: return "no-default";
    }
    return "?";
}

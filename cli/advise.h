/* advise.h: the parts of `tlview advise` (cli/cmd_advise.c), an experiment that measures the ways
 * N copies of a program can share one GPU (time-sliced, MPS, MPS with a thread limit, at each N
 * asked) in interleaved rounds and recommends one with its evidence. cli/advise_stats.c holds the
 * statistics (pure functions, no I/O); cli/advise_run.c runs the rounds on record's machinery
 * (record.h); cli/advise_result.c turns the runs into the result (one JSON object: the figures'
 * names and meanings are in cli/README.md, "tlview advise") and reads and writes DIR/advise.json;
 * cli/advise_print.c prints that result as text or CSV; cli/advise_serve.c picks the runs that
 * `tlview serve DIR` draws. Private to cli/ (prefix adv_). */
#ifndef ADVISE_H
#define ADVISE_H

#include <jansson.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>

#define ADV_ALPHA 0.05      /* significance level; every interval aims at 1 - ADV_ALPHA */
#define ADV_MAX_CONFIGS 64  /* configurations of one experiment */
#define ADV_MAX_ROUNDS 1000 /* rounds of one experiment (--repeat, or what a budget allows) */
#define ADV_MARGIN 0.05     /* a ratio within 5% of 1 either way (0.952-1.05x) is "as good" */
#define ADV_POWER 0.8       /* rounds_to_tell: the chance a new experiment shows the difference */
#define ADV_POWER_DRAWS 400 /* resampled experiments per number of rounds tried */
#define ADV_POWER_MAX_ROUNDS 64 /* rounds_to_tell looks no further */
#define ADV_MAX_CMDS 64         /* different commands given with ::: */
#define ADV_MAX_NS 16           /* values of -n */

/* ------------------------------------------------------------ statistics (advise_stats.c) */

/* An interval with the confidence it really has: distribution-free intervals from few values
 * cannot reach every level, so the level achieved is carried with the bounds. */
typedef struct adv_interval {
    double lo, hi; /* NaN when not defined (no value) */
    double level;  /* its coverage, 0..1 (NaN when not defined) */
} adv_interval;

/* The median of x[0..n) (x is not changed); NaN when n is 0 or out of memory. */
double adv_median(const double *x, int n);

/* The distribution-free interval for the median of x[0..n): [x(k), x(n+1-k)] of the sorted values
 * for the largest k whose coverage 1 - 2 P(B <= k - 1), B ~ Binomial(n, 1/2), is at least
 * 1 - ADV_ALPHA. Where none reaches it (n <= 5) it is [min, max] with the coverage it has (n = 1:
 * 0). All NaN when n is 0. */
adv_interval adv_median_interval(const double *x, int n);

/* The exact two-sided p-value of the Wilcoxon-Mann-Whitney rank-sum test of y[0..m) against
 * x[0..n): the permutation test of the rank sum, ties taken as mid-ranks (the exact distribution
 * of that statistic given the ties) for n + m <= 100, the normal approximation with the tie and
 * continuity corrections beyond. *pDir (may be NULL) receives +1 when y tends to be larger, -1
 * when smaller, 0 when neither. NaN when n or m is 0. */
double adv_rank_test(const double *x, int n, const double *y, int m, int *pDir /* OUT */);

/* The smallest two-sided p-value the rank test can give with n and m values (no ties):
 * 2 / C(n + m, n), at most 1. */
double adv_min_p(int n, int m);

/* The distribution-free interval for the ratio of y to x (Moses' interval for the shift of
 * log y against log x, the interval that goes with the rank test): [D(c), D(nm + 1 - c)] of the
 * n m sorted pairwise ratios y_j / x_i, exponentiated back, for the largest c whose coverage
 * 1 - 2 P(U <= c - 1) under the rank test's null distribution (no ties) is at least 1 - ADV_ALPHA,
 * else c = 1 with the coverage it has. All NaN when n or m is 0 or a value is not positive. */
adv_interval adv_ratio_interval(const double *x, int n, const double *y, int m);

/* The rounds a new experiment needs to show what x[0..n) against y[0..m) measured: the smallest R
 * from `from` to ADV_POWER_MAX_ROUNDS at which, of ADV_POWER_DRAWS experiments resampled from the
 * measured runs (R runs drawn with replacement from each), at least ADV_POWER find y different
 * from x in the measured direction with the rank test at ADV_ALPHA over k comparisons (p k <
 * ADV_ALPHA: Holm's first step). The runs' own spread, outliers included, is the noise assumed;
 * the draws are the same every call (a fixed seed). -1 when no R up to the maximum does; 0 when
 * n or m is 0. */
int adv_rounds_to_tell(const double *x, int n, const double *y, int m, int k, int from);

/* Holm's step-down adjustment of the k p-values p[0..k) for comparing k configurations with the
 * default: sorted ascending, the i-th (from 1) becomes max over j <= i of min(1, (k - j + 1) p(j)).
 * adj[0..k) receives them in the order of p. A NaN p stays NaN and does not count in k. */
void adv_holm(const double *p, int k, double *adj /* OUT: k values */);

/* The order of the configurations 0..n-1 in round `round` (from 0): pairs of rounds, the first
 * forward and the second backward (A B C, C B A), so that each configuration's mean position over
 * a pair is the same ((n - 1) / 2) and a linear drift of the machine falls on all alike; each pair
 * rotated by one more (B C A, A C B, ...), so that each configuration opens a round as often as
 * the others. Writes n indices into order. */
void adv_round_order(int n, int round, int *order /* OUT: n values */);

/* What a configuration is, for the statistics: its complexity (kind) and whether it may be
 * recommended. */
enum adv_kind {
    ADV_SOLO = 0,      /* one copy alone (each command in turn): the reference */
    ADV_SLICED = 1,    /* N copies, no MPS: the GPU time-slices their contexts */
    ADV_MPS = 2,       /* N copies as clients of an MPS daemon */
    ADV_MPS_LIMIT = 3, /* MPS with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE set for each client */
};

/* One configuration as the decision sees it. */
typedef struct adv_arm {
    const double *x; /* the figure of each successful run (throughput: higher is better) */
    int n;           /* successful runs */
    int procs;       /* copies per GPU */
    int kind;        /* enum adv_kind */
    int percentage;  /* ADV_MPS_LIMIT: the thread percentage; 0 otherwise */
    int candidate;   /* 1: may be recommended (solo only when -n asks for 1 copy per GPU) */
} adv_arm;

/* The outcome of one configuration's comparison with the default. */
enum adv_outcome {
    ADV_O_DEFAULT = 0,   /* it is the default */
    ADV_O_BETTER = 1,    /* significantly better (Holm) */
    ADV_O_WORSE = 2,     /* significantly worse (Holm) */
    ADV_O_SAME = 3,      /* no significant difference */
    ADV_O_REFERENCE = 4, /* not a candidate (solo when 1 is not among -n): not compared */
    ADV_O_NO_RUNS = 5,   /* no successful run (or the default has none): not compared */
};

/* What the statistics say of one configuration. */
typedef struct adv_stat {
    double median;          /* of its successful runs' figures; NaN when none */
    adv_interval median_ci; /* adv_median_interval() */
    double ratio;           /* median / the default's median */
    adv_interval ratio_ci;  /* adv_ratio_interval() against the default's runs */
    double p;               /* rank test against the default (NaN when not compared) */
    double p_holm;          /* p adjusted for the comparisons made (Holm) */
    enum adv_outcome outcome;
} adv_stat;

/* Why the recommendation is what it is. */
enum adv_reason {
    ADV_R_BETTER = 0,          /* the best configuration is significantly better than the default
                                  and no simpler one is as good */
    ADV_R_SIMPLER = 1,         /* a simpler configuration, itself significantly better than the
                                  default, is not significantly worse than the best */
    ADV_R_NOT_SIGNIFICANT = 2, /* none is significantly better: keep the default */
    ADV_R_THIN = 3,            /* none is, and with these repeats none could have been */
    ADV_R_DEFAULT_BEST = 4,    /* the default has the highest median */
    ADV_R_NO_DEFAULT = 5,      /* the default has no successful run: no recommendation */
};

typedef struct adv_decision {
    int recommended; /* arm index; -1 with ADV_R_NO_DEFAULT */
    int best;        /* the compared candidate with the highest median; -1 when none */
    enum adv_reason reason;
    int ncompared;      /* comparisons with the default (the k of Holm) */
    int simpler;        /* the most preferred configuration simpler than the best and also
                           significantly better than the default, tried against the best: the
                           recommended one with ADV_R_SIMPLER; with ADV_R_BETTER the one the
                           best beat significantly; -1 when none */
    double p_simpler;   /* the best against `simpler`, Holm over the nsimpler tried; NaN when
                           none */
    int nsimpler;       /* the simpler alternatives tried */
    int repeats_needed; /* runs per configuration from which the most extreme result could be
                           significant with ncompared comparisons (0: no comparison) */
    /* Where no configuration was significantly better (ADV_R_NOT_SIGNIFICANT, ADV_R_DEFAULT_BEST),
     * what the best compared one's ratio interval says of that: */
    int within_margin;  /* 1: it lies inside 1/(1 + ADV_MARGIN)..1 + ADV_MARGIN: as good */
    int rounds_to_tell; /* not within: the rounds a new experiment needs to show its measured
                           difference (adv_rounds_to_tell, from one more than ran); -1: more than
                           ADV_POWER_MAX_ROUNDS; 0 where the measured ratio is itself within the
                           margin (or none) */
} adv_decision;

/* 1 when arm a is to be preferred to arm b where they are equally good: first the default's
 * copies per GPU (fewer copies is another throughput, not a simpler setup), then the simpler
 * kind (time-sliced < MPS < MPS with a thread limit), then the larger thread percentage, then
 * more copies per GPU; 0 otherwise. */
int adv_prefer(const adv_arm *a, const adv_arm *b, int default_procs);

/* The statistics and the decision. arms[def] is the default (time-sliced at the largest N):
 * every candidate with a successful run is compared with it (rank test, Holm over those k
 * comparisons); of those significantly better the best median is taken, and then the most
 * preferred (adv_prefer) of those significantly better that it does not beat significantly
 * (rank test, Holm over those tried). st[0..narms) and *d receive the results. Returns 0, or -1
 * when out of memory. */
int adv_decide(const adv_arm *arms, int narms, int def, adv_stat *st /* OUT: narms */,
               adv_decision *d /* OUT */);

/* "default", "better", "worse", "same", "reference", "no runs". Static. */
const char *adv_outcome_name(enum adv_outcome o);

/* "better", "simpler", "not-significant", "thin", "default-best", "no-default". Static. */
const char *adv_reason_name(enum adv_reason r);

/* ------------------------------------------------------------ the experiment */

/* One copy of a run. */
typedef struct adv_copy {
    int command;     /* the command it ran (index) */
    int pid;         /* its pid */
    int exit_code;   /* exit status; -1 when killed by a signal or never reaped */
    int signal;      /* the signal that killed it, 0 when none */
    int64_t wall_ns; /* from its barrier's opening to its exit */
    double metric;   /* --metric: the number of the last matching line; NaN when none */
} adv_copy;

/* The GPU figures of one run, from its traces (the view's names: view/README.md). */
typedef struct adv_gpu {
    int files;        /* trace files read; 0: no figures */
    char verdict[16]; /* the verdict of the GPU with the most busy time */
    double stretch;   /* of that verdict's windows (NaN: none) */
    int64_t busy_ns, overlap_ns, waiting_ns;
    double idle_share;         /* summary idle_share */
    int host_paced;            /* summary host_paced */
    double predicted_gain_low; /* summary: what MPS would gain, at worst */
    double predicted_gain;     /* ... and at best */
    int64_t span_ns;           /* the summary's measured interval, which the prediction is over
                                  (measure_t1 - measure_t0); 0 where not known */
} adv_gpu;

/* One run: one configuration once, in one round. */
typedef struct adv_run {
    int round, position; /* round (from 0) and place in it */
    int config;          /* index into adv_exp.configs */
    int ok;              /* every copy exited 0 (and matched --metric): counted */
    char error[512];     /* why not ok; "" when ok */
    int64_t start_ns;    /* CLOCK_REALTIME when the run began (before the MPS daemon) */
    int64_t makespan_ns; /* barrier to the last exit (solo: the copies' own, summed) */
    double figure;       /* the figure of merit (NaN when not ok) */
    adv_copy *copies;    /* ncopies */
    int ncopies;
    adv_gpu gpu; /* gpu.files 0: not traced or not read */
} adv_run;

/* One configuration. */
typedef struct adv_config {
    char id[32];    /* "solo", "n4-sliced", "n4-mps", "n4-mps25": key and folder name */
    char name[16];  /* "solo", "sliced", "mps", "mps:25" */
    int kind;       /* enum adv_kind */
    int procs;      /* copies run together (solo: 1, each command in turn) */
    int percentage; /* ADV_MPS_LIMIT: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; 0 otherwise */
    int is_default; /* time-sliced at the largest N */
    int candidate;  /* may be recommended */
} adv_config;

/* A whole experiment: what was asked and every run made. */
typedef struct adv_exp {
    char dir[4096]; /* the output folder, absolute */
    char ***cmds;   /* ncmds commands, each a NULL-terminated argv (owned) */
    int ncmds;
    adv_config configs[ADV_MAX_CONFIGS];
    int nconfigs;
    char *metric;             /* --metric REGEX (owned) or NULL: the figure is copies per second */
    int slowest;              /* --combine slowest: N times the slowest copy's rate, not the sum */
    int trace;                /* 1: recorded under the collector */
    int repeat;               /* --repeat; 0: as many rounds as the budget allows */
    int64_t budget_ns;        /* --budget; 0: none */
    int rounds_run;           /* rounds begun */
    char stopped_by[16];      /* "", "budget", "SIGINT", "SIGTERM", "error" */
    char stop_error[512];     /* with "error": why */
    int64_t start_ns, end_ns; /* CLOCK_REALTIME of the experiment */
    adv_run *runs;            /* nruns, in the order they ran */
    int nruns, cap_runs;
} adv_exp;

/* Frees what *e owns (not e). */
void adv_exp_free(adv_exp *e);

/* The id and name of configuration kind `kind` at `procs` copies (percentage for
 * ADV_MPS_LIMIT) into c; the flags are left as they are. */
void adv_config_name(adv_config *c, int kind, int procs, int percentage);

/* Appends a zeroed run to e->runs; returns it, or NULL when out of memory. */
adv_run *adv_exp_add_run(adv_exp *e);

/* ------------------------------------------------------------ running it (advise_run.c) */

/* What the runner needs beyond the experiment: resolved once by cmd_advise.c. */
typedef struct adv_setup {
    const char *const *paths; /* e->ncmds programs, resolved on PATH */
    const char *collector;    /* libcollect.so, absolute; NULL with --no-trace */
    const char *mps_control;  /* the MPS control program (NULL when no MPS configuration) */
    const char *label;        /* trace file prefix */
    regex_t *metric;          /* compiled --metric, or NULL */
    int kill_after_ms;        /* copies still alive this long after SIGINT/SIGTERM: SIGKILL */
} adv_setup;

/* Runs the experiment's rounds into e (e->dir exists and is empty; configs set): each round runs
 * every configuration once in adv_round_order(), until e->repeat rounds or, with a budget, until
 * the next round would not fit (measured from the longest round so far; the first always runs).
 * Each run's traces and copies' outputs go to DIR/<config>/r<round>/; MPS runs start a private
 * daemon there and always stop it. SIGINT/SIGTERM stop the copies and the experiment.
 * DIR/advise.json is rewritten after every run. A progress line goes to stderr when it is a
 * terminal. Returns 0 when it ran to its end, the signal number when interrupted, -1 when it had to
 * stop (e->stop_error says why: an MPS daemon that would not start or stop, a folder that cannot be
 * made). */
int adv_run_experiment(adv_exp *e, const adv_setup *s);

/* ------------------------------------------------------------ the result (advise_result.c) */

/* The result of experiment e: what was asked, the order run, every run, and per configuration
 * its figures, statistics and GPU figures, the prediction's coverage and the recommendation
 * (names in cli/README.md). New reference; NULL when out of memory. */
json_t *adv_result_json(const adv_exp *e, const char *version);

/* Writes adv_result_json() to DIR/advise.json (a new file renamed over the old). Returns 0, or -1
 * with the reason in err (errlen bytes). */
int adv_save(const adv_exp *e, const char *version, char *err, size_t errlen);

/* Reads DIR/advise.json into *e (zeroed first): what was asked and the runs, the figures the
 * statistics start from. Returns 0, or -1 with the reason in err (errlen bytes). */
int adv_load(const char *dir, adv_exp *e, char *err, size_t errlen);

/* A figure at 4 significant digits without an exponent where it fits (19630, 1.963, 0.01234; "-"
 * for NaN), as every figure of advise's text is written; returns buf. */
const char *adv_figure_text(double v, char *buf, size_t n);

/* The figure of merit of successful run r of e from its copies' rates (e->metric set): their sum,
 * or with e->slowest N times the slowest (solo: their mean either way). */
double adv_run_figure(const adv_exp *e, const adv_run *r);

/* Makes e's figure of merit the sum of its copies' rates (slowest 0) or N times the slowest
 * (slowest 1: `--combine slowest`) and figures each successful run again from its copies. Returns
 * 0, or -1 with the reason in err: the slowest needs the rates of one command's copies. */
int adv_combine(adv_exp *e, int slowest, char *err, size_t errlen);

/* ------------------------------------------------------------ printing it (advise_print.c) */

/* Writes the result `r` (adv_result_json()) as the text report: the table of configurations,
 * the GPU figures, the recommendation line, the prediction's coverage and the notes. `color`
 * adds ANSI colours. */
void adv_print_text(FILE *out, const json_t *r, int color);

/* Writes one table of `r` as CSV: "configs", "runs", "copies" or "prediction" (columns: the JSON
 * keys of those rows). Returns 0, or -1 for another table name. */
int adv_print_csv(FILE *out, const json_t *r, const char *table);

/* 1 when `table` names a table of adv_print_csv(), else 0. */
int adv_csv_table(const char *table);

/* ------------------------------------------------------------ serving it (advise_serve.c) */

/* What `tlview serve DIR` draws of one configuration. */
typedef struct adv_shown {
    int run;             /* index into adv_exp.runs of its representative run; -1: none drawn */
    int page;            /* its index among the runs drawn (from 0, in the order of the
                            configurations); -1: not drawn */
    char label[96];      /* the run's label on the page: "MPS 50% n=2 (r1)": round 1 */
    char dir[4200];      /* the representative run's folder, DIR/CONFIG/rROUND */
    char base_dir[4200]; /* the folder of the solo run that gives its solo references, as advise
                            took them (the round's solo run, else the latest earlier); "": none */
    int64_t bytes;       /* its trace files' size */
    char note[1024];     /* why it is not drawn ("" when it is) */
} adv_shown;

/* How the representative run is chosen, in words (the page and cli/README.md say it). */
extern const char adv_representative_text[];

/* Picks each configuration's representative run of experiment e (adv_load()): the successful run
 * with trace files whose figure is nearest the configuration's median (ties: the earlier round),
 * whose folder DIR/CONFIG/rROUND is a folder (not a symbolic link, as CONFIG is not); in the order
 * of the configurations, as long as the trace files of those picked so far stay within max_bytes
 * together (the first is always drawn). Fills shown[0..e->nconfigs) (a note where none is drawn)
 * and returns the experiment as the page reads it (GET /api/experiment, web/API.md): how the run
 * is chosen ("representative"), per configuration what is drawn ("shown": its label, index on the
 * page, round, folder and figure, or the note) and advise's own result (adv_result_json(), the
 * object `advise --show DIR --format json` prints). *pDrawn receives the runs drawn. New
 * reference; NULL when out of memory. */
json_t *adv_serve_plan(const adv_exp *e, int64_t max_bytes, adv_shown *shown /* OUT: nconfigs */,
                       int *pDrawn /* OUT */);

#endif

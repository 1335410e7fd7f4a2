/* record.h: the parts of `tlview record` (cli/cmd_record.c) kept in their own files, which
 * `tlview advise` (cli/cmd_advise.c) runs its experiment with too: cli/record_spawn.c starts N
 * copies of a command (or of several) behind a start barrier and waits for them while forwarding
 * SIGINT/SIGTERM; cli/record_mps.c starts, reuses and stops a private MPS control daemon;
 * cli/record_manifest.c writes DIR/manifest.json; cli/record_env.c finds the collector and the
 * GPU. Private to cli/ (prefix rec_).
 * Errors: functions return 0 or -1 and leave one line of text in the caller's `err` buffer. */
#ifndef RECORD_H
#define RECORD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define REC_ERR_MAX 16384 /* room for a few full paths */

/* One started copy of the command. */
typedef struct rec_child {
    int rank;       /* 0..N-1, also in its TLVIEW_RANK */
    int command;    /* which command it runs (rec_spawn_ex: rank mod ncmds; rec_spawn: 0) */
    pid_t pid;      /* 0 until forked */
    int done;       /* 1 once reaped */
    int status;     /* waitpid() status, valid when done */
    int64_t end_ns; /* CLOCK_MONOTONIC ns at which it was reaped (rec_wait), valid when done */
} rec_child;

/* ------------------------------------------------------------ spawning (record_spawn.c) */

/* "SIGINT", "SIGTERM", ... for a signal number (a static string). */
const char *rec_signame(int sig);

/* Returns the current CLOCK_REALTIME in ns. */
int64_t rec_now_ns(void);

/* Returns the current CLOCK_MONOTONIC in ns: for durations, which a step of the wall clock must
 * not bend. */
int64_t rec_mono_ns(void);

/* Finds `cmd` the way execvp() would (PATH search unless it holds a '/'); writes the path into
 * `out` (size `n`). Returns 0 when an executable file was found, -1 with a message otherwise. */
int rec_find_program(const char *cmd, char *out, size_t n, char *err);

/* Blocks SIGINT, SIGTERM and SIGCHLD in the calling process so that rec_wait() can take them in
 * order; every child that rec_spawn()/rec_run() starts gets the original mask back. Call first. */
void rec_signals_block(void);

/* Returns the signal (SIGINT/SIGTERM) that arrived while blocked and not yet taken, or 0. Takes
 * it off the pending set. */
int rec_signal_pending(void);

/* Forks `n` children; each blocks on a pipe until all are forked, sets TLVIEW_RANK and
 * TLVIEW_NPROCS, then execs `argv` (argv[0] already resolved to `path`). *pRelease receives the
 * CLOCK_REALTIME ns at which the barrier was opened (after the last fork). On a failed fork the
 * children already forked are killed and reaped, and -1 is returned with a message. */
int rec_spawn(const char *path, char *const argv[], rec_child *kids, int n,
              int64_t *pRelease /* OUT */, char *err);

/* What rec_spawn_ex() starts, beyond rec_spawn()'s one command with inherited output. */
typedef struct rec_spawn_opts {
    const char *const *paths;  /* ncmds programs to exec (resolved by rec_find_program) */
    char *const *const *argvs; /* their argument vectors, each NULL-terminated */
    int ncmds;                 /* copy i runs command i mod ncmds (>= 1) */
    const char *out_dir;       /* NULL: the copies inherit stdout and stderr; else copy i writes
                                  them to new files out_dir/copy<copy_base + i>.out and .err */
    int copy_base;             /* the first copy's number in those file names */
    const char *who;           /* "tlview advise": the prefix of a child's own error line
                                  (NULL: "tlview record") */
} rec_spawn_opts;

/* rec_spawn() for the commands and outputs of `o`: each child creates its output files (never
 * through a link or over a file: it exits 126 with a line on its stderr when it cannot) before
 * it waits at the barrier. *pRelease receives the CLOCK_REALTIME and *pMono the CLOCK_MONOTONIC
 * ns of the barrier's opening. Returns 0, or -1 with a message as rec_spawn(). */
int rec_spawn_ex(const rec_spawn_opts *o, rec_child *kids, int n, int64_t *pRelease /* OUT */,
                 int64_t *pMono /* OUT */, char *err);

/* Waits until every child has exited. SIGINT/SIGTERM sent to this process by kill() are forwarded
 * to the children still alive; a terminal's Ctrl-C (which the kernel already delivers to the whole
 * foreground process group) is noted but not sent twice. Returns the first such signal, or 0. */
int rec_wait(rec_child *kids, int n);

/* rec_wait(), and when children are still alive `kill_after_ms` (> 0) after the first signal,
 * they are killed (SIGKILL): a program that ignores SIGINT cannot hold the caller. 0: never. */
int rec_wait_ex(rec_child *kids, int n, int kill_after_ms);

/* Starts `tlview serve --follow --port PORT DIR` (this very binary) as a child with the original
 * signal mask, its URL line on our stdout: record --serve. Returns its pid, or -1 with the
 * message in err. */
pid_t rec_serve(const char *dir, unsigned port, char *err);

/* Waits until the server `server` ends or record is asked to stop (SIGINT, SIGTERM: then the
 * server is stopped too, unless the terminal's Ctrl-C reached it already). Returns the signal
 * that stopped record, or 0 when the server ended on its own. */
int rec_serve_wait(pid_t server);

/* Runs `argv` to completion with stdin fed from `input` (NULL: /dev/null) and stdout/stderr sent
 * to `outfile` (NULL: inherited). Gives up (killing it) after `timeout_ms`. Returns the waitpid()
 * status, or -1 with a message when it could not be run or timed out. */
int rec_run(char *const argv[], const char *input, const char *outfile, int timeout_ms, char *err);

/* ------------------------------------------------------------ MPS (record_mps.c) */

typedef struct rec_mps {
    char control[4096];  /* nvidia-cuda-mps-control (or TLVIEW_MPS_CONTROL) */
    char pipe_dir[4096]; /* CUDA_MPS_PIPE_DIRECTORY used by the clients */
    char log_dir[4096];  /* CUDA_MPS_LOG_DIRECTORY used by the clients */
    int reused;          /* 1: a daemon was already running there; it is left running */
    int started;         /* 1: this record started the daemon and must stop it */
    int stopped;         /* 1: the daemon started here was asked to quit and is gone */
    int tmp_pipe;        /* 1: pipe_dir is a /tmp folder of ours (DIR's path was too long for
                            the daemon's UNIX sockets), removed once the daemon is gone */
    int quiet;           /* 1: rec_mps_start() says nothing on stderr (advise keeps the facts
                            in its result file instead) */
    int remove_pipe;     /* 1: rec_mps_stop() removes pipe_dir too once the daemon is gone,
                            wherever it is (advise: each run's own folder) */
} rec_mps;

/* Finds the control program: $TLVIEW_MPS_CONTROL, else nvidia-cuda-mps-control on PATH. */
int rec_mps_find(rec_mps *m, char *err);

/* Reuses the daemon of $CUDA_MPS_PIPE_DIRECTORY when its control pipe exists (m->reused), else
 * starts a private one with its pipe and log folders in `dir` (m->started) and exports the two
 * variables so the children see them. The pipe folder holds UNIX sockets, whose paths are short:
 * when `dir` is long it goes to a new /tmp/tlview-mps.XXXXXX instead (said on stderr). On error
 * nothing started here is left running. */
int rec_mps_start(rec_mps *m, const char *dir, char *err);

/* Stops the daemon started by rec_mps_start() (`echo quit | control` with the same environment),
 * then checks that no nvidia-cuda-mps process of this pipe folder is left, terminating any that
 * outlive the quit by 10 s. A no-op for a reused daemon. Returns -1 if one had to be killed or
 * could not be stopped. */
int rec_mps_stop(rec_mps *m, char *err);

/* Pids of live nvidia-cuda-mps-* processes whose environment names `pipe_dir` as
 * CUDA_MPS_PIPE_DIRECTORY; at most `max` are stored, the number found is returned. */
int rec_mps_leftovers(const char *pipe_dir, pid_t *pids, int max);

/* ------------------------------------------------------------ setup (record_env.c) */

/* libcollect.so: $TLVIEW_COLLECTOR, else the build tree next to this binary, else the install
 * tree around it; its absolute path into out (PATH_MAX bytes). Returns 0, or -1 with a message
 * that says where it looked (and, for a tlview built without CUDA, that it has none). */
int rec_find_collector(char *out, char *err);

/* 1 when the NVIDIA driver shows a device (its control node, or WSL's GPU node), else 0. */
int rec_have_gpu(void);

/* 1 when `path` is a regular file (a link to one followed), else 0. */
int rec_regular_file(const char *path);

/* The trace files (*.db) of folder `dir` as a malloc'd array of malloc'd full paths, sorted by
 * name, into *pOut; returns how many (0, *pOut NULL or empty, when the folder cannot be read).
 * Free with rec_free_list(). */
int rec_list_traces(const char *dir, char ***pOut /* OUT */);

/* Frees a list of n malloc'd strings and the list. */
void rec_free_list(char **v, int n);

/* TLVIEW_OUTPUT for a run in folder `dir`: DIR/LABEL.%p.db, each '%' of DIR doubled (the
 * collector expands %p, %h, %q{VAR}, %%), into out (n bytes, n > 16; a DIR too long is cut). */
void rec_output_pattern(const char *dir, const char *label, char *out, size_t n);

/* ------------------------------------------------------------ manifest (record_manifest.c) */

/* Everything manifest.json says about one record run. */
typedef struct rec_manifest {
    const char *tool;                     /* "tlview advise"; NULL: "tlview record" */
    const char *dir;                      /* the output folder, absolute */
    const char *label;                    /* file name prefix */
    const char *run_id;                   /* TLVIEW_RUN_ID given to every child */
    const char *collector;                /* absolute path of libcollect.so */
    const char *output_pattern;           /* TLVIEW_OUTPUT given to every child */
    char *const *argv;                    /* the command, NULL-terminated */
    char *const *const *commands;         /* with ncommands > 1: every command (advise's
                                             copies run command rank mod ncommands) */
    int ncommands;                        /* 0 or 1: argv alone */
    int nprocs;                           /* N */
    const rec_mps *mps;                   /* NULL without --mps */
    int percentage;                       /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE of every copy,
                                             0 when not set */
    int64_t start_ns, release_ns, end_ns; /* record start, barrier opened, all children done */
    int signal;                           /* SIGINT/SIGTERM that interrupted the run, or 0 */
    const rec_child *kids;                /* nprocs children */
    char **files;                         /* trace files written during the run, nfiles of them */
    int nfiles;
    const char *error; /* why record failed, or NULL */
} rec_manifest;

/* Writes `path` (replacing it) from `m`. Returns 0, or -1 with a message. */
int rec_manifest_write(const char *path, const rec_manifest *m, char *err);

#endif

/* record.h: the parts of `tlview record` (cli/cmd_record.c) kept in their own files:
 * cli/record_spawn.c starts N copies of a command behind a start barrier and waits for them
 * while forwarding SIGINT/SIGTERM; cli/record_mps.c starts, reuses and stops a private MPS
 * control daemon; cli/record_manifest.c writes DIR/manifest.json. Private to cli/ (prefix rec_).
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
    int rank;   /* 0..N-1, also in its TLVIEW_RANK */
    pid_t pid;  /* 0 until forked */
    int done;   /* 1 once reaped */
    int status; /* waitpid() status, valid when done */
} rec_child;

/* ------------------------------------------------------------ spawning (record_spawn.c) */

/* "SIGINT", "SIGTERM", ... for a signal number (a static string). */
const char *rec_signame(int sig);

/* Returns the current CLOCK_REALTIME in ns. */
int64_t rec_now_ns(void);

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

/* Waits until every child has exited. SIGINT/SIGTERM sent to this process by kill() are forwarded
 * to the children still alive; a terminal's Ctrl-C (which the kernel already delivers to the whole
 * foreground process group) is noted but not sent twice. Returns the first such signal, or 0. */
int rec_wait(rec_child *kids, int n);

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

/* ------------------------------------------------------------ manifest (record_manifest.c) */

/* Everything manifest.json says about one record run. */
typedef struct rec_manifest {
    const char *dir;                      /* the output folder, absolute */
    const char *label;                    /* file name prefix */
    const char *run_id;                   /* TLVIEW_RUN_ID given to every child */
    const char *collector;                /* absolute path of libcollect.so */
    const char *output_pattern;           /* TLVIEW_OUTPUT given to every child */
    char *const *argv;                    /* the command, NULL-terminated */
    int nprocs;                           /* N */
    const rec_mps *mps;                   /* NULL without --mps */
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

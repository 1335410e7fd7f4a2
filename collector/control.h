/* collector control channel: how `tlview capture start|stop|dump|status PID` reaches the
 * collector inside a running process without a signal the application may own.
 *
 * Each traced process makes a FIFO DIR/<pid>.ctl (DIR: TLVIEW_CONTROL_DIR, by default
 * /tmp/tlview-<uid>, a folder private to the user), read by its writer thread every 0.1 s. A
 * client makes a reply FIFO DIR/<pid>.<token>.reply, writes one request line
 * "<command> <token>[ <argument>]\n" (one write(2), so requests of several clients never
 * interleave) and reads one reply line "ok <text>" or "error <text>". Opening the control FIFO
 * fails with ENXIO when no collector reads it, which is how a client knows nobody listens.
 * Both sides live here, in plain POSIX (no CUDA): libcollect serves, the tlview binary asks. */
#ifndef COLLECTOR_CONTROL_H
#define COLLECTOR_CONTROL_H

#include <stddef.h>

#define COLLECTOR_CONTROL_LINE_MAX 512 /* bytes in a request or reply line, '\n' included */
#define COLLECTOR_CONTROL_TOKEN_MAX 64 /* bytes in a token */
#define COLLECTOR_CONTROL_ARG_MAX 200  /* bytes in an argument (a range or dump name) */

typedef enum {
    COLLECTOR_CONTROL_START,  /* open a capture range; argument: its name (optional) */
    COLLECTOR_CONTROL_STOP,   /* close the open capture range */
    COLLECTOR_CONTROL_DUMP,   /* write a snapshot of the file; argument: the folder's name */
    COLLECTOR_CONTROL_STATUS, /* say what is being captured */
} collector_control_cmd;

/* One request as parsed by the collector. */
typedef struct collector_request {
    collector_control_cmd cmd;
    char token[COLLECTOR_CONTROL_TOKEN_MAX + 1]; /* [A-Za-z0-9_-], names the reply FIFO */
    char arg[COLLECTOR_CONTROL_ARG_MAX + 1];     /* "" when none */
} collector_request;

/* The command's name ("start", ...), or NULL for a value out of range. */
const char *collector_control_cmd_name(collector_control_cmd cmd);

/* The control folder into buf (n bytes): TLVIEW_CONTROL_DIR, or /tmp/tlview-<uid> when it is
 * unset or empty. Returns 0; 1 when TLVIEW_CONTROL_DIR is "off" (buf ""); -1 when the name does
 * not fit. */
int collector_control_dir(char *buf, size_t n);

/* Parses a request line (without its '\n'): "<command> <token>[ <argument>]". A start name may
 * hold any printable characters (spaces too); a dump name only [A-Za-z0-9._-], not starting with
 * '.' (it names a folder). Returns 0, or -1 with the reason in err (errlen bytes). */
int collector_control_parse(const char *line, collector_request *out /* OUT */, char *err,
                            size_t errlen);

/* ---------------------------------------------------------------- the collector's side */

typedef struct collector_control collector_control;

/* Makes `dir` (mode 0700, its parent must exist) unless it is there, checks that it is a folder
 * of this user that nobody else may write, and creates the FIFO dir/<pid>.ctl (replacing a stale
 * one of an ended process that had the same pid) and opens it without blocking. Returns 0, or
 * -1 with why in err (then *ppC is NULL and nothing is left behind). */
int collector_control_open(const char *dir, long pid, collector_control **ppC /* OUT */, char *err,
                           size_t errlen);

/* The FIFO's path. */
const char *collector_control_path(const collector_control *c);

/* Reads what has arrived and takes the next whole request: 1 and *req set, 0 when none is
 * waiting, -1 for a malformed line (skipped; why in err). Never blocks. */
int collector_control_poll(collector_control *c, collector_request *req /* OUT */, char *err,
                           size_t errlen);

/* Sends `text` (one line, without '\n') to the requester's reply FIFO. Returns 0, or -1 when
 * the requester is gone (it gave up waiting) or the FIFO is not one. Never blocks. */
int collector_control_reply(collector_control *c, const collector_request *req, const char *text);

/* Closes the FIFO and removes it. NULL is a no-op. Only the process that opened it may call
 * this (a forked child must not remove its parent's FIFO). */
void collector_control_close(collector_control *c);

/* ---------------------------------------------------------------- the client's side */

typedef struct collector_control_call collector_control_call;

/* Checks the control folder `dir` before a client trusts its FIFOs: a folder of this user that
 * no other user may write (an absent one passes: nothing listens there). 0, or -1 with "control
 * folder refused: DIR: other users may write into the folder (mode 0777)" (store_fs_check_dir())
 * in err. */
int collector_control_check_dir(const char *dir, char *err, size_t errlen);

/* Sends `cmd` with `arg` (NULL or "": none) to the collector of `pid` in `dir`: makes the reply
 * FIFO, then writes the request. Returns 0 and *ppCall (free with collector_control_call_free);
 * or -1 with why in err, e.g. "no collector listening (DIR/PID.ctl does not exist: ...)". The
 * caller should ignore SIGPIPE (a collector ending meanwhile then gives an error, not a signal).
 */
int collector_control_send(const char *dir, long pid, collector_control_cmd cmd, const char *arg,
                           collector_control_call **ppCall /* OUT */, char *err, size_t errlen);

/* Waits at most timeout_ms for the reply line. Returns 1 for "ok <text>", 0 for
 * "error <text>" (text, without the word, in reply), -1 when none came in time (reply says so). */
int collector_control_wait(collector_control_call *call, int timeout_ms, char *reply, size_t n);

/* Removes the reply FIFO and frees the call. NULL is a no-op. */
void collector_control_call_free(collector_control_call *call);

#endif

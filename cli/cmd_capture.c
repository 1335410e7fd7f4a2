/* cmd_capture.c: `tlview capture start|stop|dump|status PID...` and `tlview capture list`: the
 * capture ranges and the flight recorder of running processes, driven from outside through each
 * collector's control FIFO (collector/control.h), without a signal the application may own.
 * tlview-summary: start or stop recording, or dump the flight recorder, in running traced
 * processes
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "control.h"

#define DEFAULT_TIMEOUT_S 10
#define MAX_PIDS 4096

static const char usage_text[] =
    "usage: tlview capture start|stop|dump|status [-n NAME] [-d DIR] [-t S] PID...\n"
    "       tlview capture list [-d DIR]\n"
    "\n"
    "Talks to the collector (libcollect.so) inside running processes through a FIFO per\n"
    "process in the control folder (no signals: the application keeps its own):\n"
    "  start   open a capture range: what each PID launches from now on is recorded\n"
    "          (TLVIEW_CAPTURE=control records nothing until then)\n"
    "  stop    close it: the range's records go to the file at once; outside a range the\n"
    "          application runs at full speed\n"
    "  dump    copy what each PID's file holds now (with TLVIEW_FLIGHT: the last N seconds or\n"
    "          MB) into a folder NAME beside the file, as one consistent tlview file; the\n"
    "          reply names it (tlview report DIR/NAME reads the copies of all the PIDs)\n"
    "  status  say whether each PID is capturing, and which file it writes\n"
    "  list    the PIDs whose collector listens in the control folder\n"
    "\n"
    "Options:\n"
    "  -n, --name NAME    start: the range's name, kept in the file; dump: the folder's name\n"
    "                     (letters, digits, '.', '_', '-'; default dump-YYYYmmdd-HHMMSS, the same\n"
    "                     for every PID of the command)\n"
    "  -d, --dir DIR      the control folder (default: TLVIEW_CONTROL_DIR, else /tmp/tlview-UID,\n"
    "                     as the collector chose)\n"
    "  -t, --timeout S    seconds to wait for the replies (default 10)\n"
    "  -h, --help         this text\n"
    "\n"
    "Each PID's reply is one line on stdout, \"PID: ...\"; a PID whose collector does not answer\n"
    "gets one on stderr, \"tlview capture: PID: no collector listening (why)\".\n"
    "Exit status: 0 every PID answered ok; 1 one did not (no collector, no reply in time, or it\n"
    "refused); 2 usage error.\n";

/* `tlview capture list`: the PIDs with a FIFO in dir that a collector reads; FIFOs left by
 * processes that ended are removed. */
static int list(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        cli_msg(stderr, "tlview capture: cannot read the control folder %s: %s\n", dir,
                strerror(errno));
        return 1;
    }
    long pids[MAX_PIDS];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_PIDS) {
        char *end = NULL;
        long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || end == e->d_name || strcmp(end, ".ctl"))
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd >= 0) {
            if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_uid == geteuid())
                pids[n++] = pid;
            close(fd);
        } else if (errno == ENXIO && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            unlink(path); /* its process ended without removing it (killed) */
        }
    }
    closedir(d);
    for (size_t i = 1; i < n; i++) /* a few pids: insertion sort */
        for (size_t j = i; j > 0 && pids[j - 1] > pids[j]; j--) {
            long t = pids[j];
            pids[j] = pids[j - 1];
            pids[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++)
        printf("%ld\n", pids[i]);
    return 0;
}

int cmd_capture(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"name", required_argument, 0, 'n'},
        {"dir", required_argument, 0, 'd'},
        {"timeout", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *name = NULL, *dir_opt = NULL;
    long timeout_s = DEFAULT_TIMEOUT_S;
    int c;
    optind = 1;
    /* GNU getopt gathers the options wherever they are: before or after the verb and PIDs */
    while ((c = getopt_long(argc, argv, "n:d:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': name = optarg; break;
        case 'd': dir_opt = optarg; break;
        case 't':
            if (cli_parse_long(optarg, 1, 86400, &timeout_s) != 0)
                return cli_usage_error("capture", "--timeout wants seconds from 1 to 86400");
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: return cli_usage_error("capture", "unknown option");
        }
    }
    if (optind >= argc)
        return cli_usage_error("capture", "say start, stop, dump, status or list");
    const char *verb = argv[optind++];
    char dir[PATH_MAX];
    if (dir_opt) {
        if (snprintf(dir, sizeof dir, "%s", dir_opt) >= (int)sizeof dir)
            return cli_usage_error("capture", "the control folder's name is too long");
    } else {
        int rc = collector_control_dir(dir, sizeof dir);
        if (rc == 1)
            return cli_usage_error("capture", "TLVIEW_CONTROL_DIR=off: no control folder (name "
                                              "one with --dir)");
        if (rc < 0)
            return cli_usage_error("capture", "TLVIEW_CONTROL_DIR is too long");
    }
    char why[PATH_MAX + 128];
    if (collector_control_check_dir(dir, why, sizeof why) != 0) {
        /* another user's FIFOs, or links to anything: neither listed nor written to */
        cli_msg(stderr, "tlview capture: %s (name a folder of yours with --dir)\n", why);
        return 1;
    }
    if (!strcmp(verb, "list")) {
        if (optind < argc)
            return cli_usage_error("capture", "list takes no PID");
        return list(dir);
    }
    collector_control_cmd cmd;
    if (!strcmp(verb, "start"))
        cmd = COLLECTOR_CONTROL_START;
    else if (!strcmp(verb, "stop"))
        cmd = COLLECTOR_CONTROL_STOP;
    else if (!strcmp(verb, "dump"))
        cmd = COLLECTOR_CONTROL_DUMP;
    else if (!strcmp(verb, "status"))
        cmd = COLLECTOR_CONTROL_STATUS;
    else
        return cli_usage_error("capture", "'%s' is not start, stop, dump, status or list", verb);
    if (name && cmd != COLLECTOR_CONTROL_START && cmd != COLLECTOR_CONTROL_DUMP)
        return cli_usage_error("capture", "--name goes with start or dump");
    char dump_name[64];
    if (cmd == COLLECTOR_CONTROL_DUMP && !name) {
        time_t now = time(NULL);
        struct tm tm;
        strftime(dump_name, sizeof dump_name, "dump-%Y%m%d-%H%M%S", localtime_r(&now, &tm));
        name = dump_name;
    }
    if (name) { /* the collector checks it too; a usage error here says it before anything */
        collector_request probe;
        char line[COLLECTOR_CONTROL_LINE_MAX + 16], why[256];
        snprintf(line, sizeof line, "%s t %s", verb, name);
        if (!*name || collector_control_parse(line, &probe, why, sizeof why) != 0)
            return cli_usage_error("capture", "bad --name: %s", *name ? why : "empty");
    }
    int npids = argc - optind;
    if (npids <= 0)
        return cli_usage_error("capture", "no PID given");
    if (npids > MAX_PIDS)
        return cli_usage_error("capture", "more than %d PIDs", MAX_PIDS);
    long *pids = calloc((size_t)npids, sizeof *pids);
    collector_control_call **calls = calloc((size_t)npids, sizeof *calls);
    if (!pids || !calls) {
        free(pids);
        free(calls);
        fprintf(stderr, "tlview capture: out of memory\n");
        return 1;
    }
    int status = 0;
    for (int i = 0; i < npids; i++)
        if (cli_parse_long(argv[optind + i], 1, INT_MAX, &pids[i]) != 0) {
            free(pids);
            free(calls);
            return cli_usage_error("capture", "'%s' is not a PID", argv[optind + i]);
        }
    /* A collector that ends between our open and our write must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    /* Every request first, then the replies: the PIDs start (or stop) within one poll of each
     * other rather than one after the other. */
    for (int i = 0; i < npids; i++) {
        char err[1024];
        if (collector_control_send(dir, pids[i], cmd, name, &calls[i], err, sizeof err) != 0) {
            cli_msg(stderr, "tlview capture: %ld: %s\n", pids[i], err);
            status = 1;
        }
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < npids; i++) {
        if (!calls[i])
            continue;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        long left = timeout_s * 1000 - spent;
        char reply[COLLECTOR_CONTROL_LINE_MAX];
        int r = collector_control_wait(calls[i], left > 0 ? (int)left : 0, reply, sizeof reply);
        if (r == 1) {
            cli_msg(stdout, "%ld: %s\n", pids[i], reply);
        } else {
            cli_msg(stderr, "tlview capture: %ld: %s\n", pids[i], reply);
            status = 1;
        }
        collector_control_call_free(calls[i]);
    }
    fflush(stdout);
    free(pids);
    free(calls);
    return status;
}

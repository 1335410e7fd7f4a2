/* Unit tests of cli/color.c, whether a command colours its text: the decision on its facts
 * (--color, NO_COLOR, TERM, a terminal or not, under an MPI launcher or not), the launcher found
 * among the ancestors (a stand-in process named mpirun whose stdout is a pty, a pipe or a file),
 * and cli_color() as a rank sees it. (2026-12, issue 28: under mpirun a rank's pty made `tlview
 * job DIR > file` write colours into the file.) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "test_help.h"

int test_cli_color_modes(void)
{
    cli_color_facts none = {0}, tty = {.out_tty = 1};
    TEST_EQ_INT(cli_color_decide("always", &none), 1);
    TEST_EQ_INT(cli_color_decide("never", &tty), 0);
    TEST_EQ_INT(cli_color_decide("sometimes", &tty), -1);
    TEST_EQ_INT(cli_color_decide("", &tty), -1);
    TEST_EQ_INT(cli_color_decide("auto", &tty), 1);
    TEST_EQ_INT(cli_color_decide("auto", &none), 0); /* a file, a pipe */
    return 0;
}

int test_cli_color_environment(void)
{
    cli_color_facts f = {.out_tty = 1, .no_color = "1"};
    TEST_EQ_INT(cli_color_decide("auto", &f), 0);
    f.no_color = ""; /* set, even empty */
    TEST_EQ_INT(cli_color_decide("auto", &f), 0);
    TEST_EQ_INT(cli_color_decide("always", &f), 1); /* the option wins */
    f.no_color = NULL;
    f.term = "dumb";
    TEST_EQ_INT(cli_color_decide("auto", &f), 0);
    f.term = "xterm-256color";
    TEST_EQ_INT(cli_color_decide("auto", &f), 1);
    return 0;
}

/* A rank decides by the launcher's stdout as well as its own: Open MPI's pty says nothing. */
int test_cli_color_under_launcher(void)
{
    cli_color_facts rank = {.launched = 1, .out_tty = 1}; /* Open MPI's pty, output to a file */
    TEST_EQ_INT(cli_color_decide("auto", &rank), 0);
    rank.launcher_tty = 1; /* mpirun on a terminal */
    TEST_EQ_INT(cli_color_decide("auto", &rank), 1);
    rank.out_tty = 0; /* a pipe (hydra's, or `| cat > file` in the rank) or a file */
    TEST_EQ_INT(cli_color_decide("auto", &rank), 0);
    rank.out_tty = 1;
    rank.no_color = "1";
    TEST_EQ_INT(cli_color_decide("auto", &rank), 0);
    rank.no_color = NULL;
    rank.launcher_tty = 0;
    TEST_EQ_INT(cli_color_decide("always", &rank), 1);
    rank.launcher_tty = 1;
    TEST_EQ_INT(cli_color_decide("never", &rank), 0);
    return 0;
}

/* A pseudo-terminal: its master in *master, the slave opened (O_NOCTTY) returned; -1 on error. */
static int open_pty(int *master)
{
    *master = posix_openpt(O_RDWR | O_NOCTTY);
    if (*master < 0 || grantpt(*master) != 0 || unlockpt(*master) != 0)
        return -1;
    const char *name = ptsname(*master);
    return name ? open(name, O_RDWR | O_NOCTTY) : -1;
}

/* Starts a stand-in launcher: a process named `name` whose stdout is `launcher_out`, which starts
 * a rank whose stdout is `rank_out` and whose environment says it was launched (`launched`). The
 * rank answers cli_color("auto", stdout) (rank_color) or cli_launcher_tty(). Returns the answer,
 * or -1 when the processes failed. */
static int ask_rank(const char *name, int launcher_out, int rank_out, int launched, int rank_color)
{
    fflush(NULL);
    pid_t launcher = fork();
    if (launcher < 0)
        return -1;
    if (launcher == 0) {
        prctl(PR_SET_NAME, name);
        if (dup2(launcher_out, STDOUT_FILENO) < 0)
            _exit(100);
        pid_t rank = fork();
        if (rank == 0) {
            if (dup2(rank_out, STDOUT_FILENO) < 0)
                _exit(100);
            unsetenv("NO_COLOR");
            setenv("TERM", "xterm", 1);
            if (launched)
                setenv("OMPI_COMM_WORLD_RANK", "1", 1);
            else
                unsetenv("OMPI_COMM_WORLD_RANK");
            _exit(rank_color ? cli_color("auto", stdout) : cli_launcher_tty());
        }
        int st = 0;
        waitpid(rank, &st, 0);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 101);
    }
    int st = 0;
    waitpid(launcher, &st, 0);
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return code >= 100 ? -1 : code;
}

/* The launcher is found among the ancestors by name, its stdout read through /proc. */
int test_cli_color_launcher_found(void)
{
    int master, tty = open_pty(&master), fds[2];
    if (tty < 0)
        return test_cannot_run("no pseudo-terminal here (posix_openpt)");
    TEST_EQ_INT(pipe(fds), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/out", test_tmpdir());
    int file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    TEST_ASSERT(file >= 0);
    TEST_EQ_INT(ask_rank("mpirun", tty, tty, 1, 0), 1);
    TEST_EQ_INT(ask_rank("prterun", tty, tty, 1, 0), 1);
    TEST_EQ_INT(ask_rank("mpirun", fds[1], tty, 1, 0), 0);
    TEST_EQ_INT(ask_rank("mpirun", file, tty, 1, 0), 0);
    TEST_EQ_INT(ask_rank("bash", tty, tty, 1, 0), 0); /* no launcher above */
    close(fds[0]);
    close(fds[1]);
    close(file);
    close(tty);
    close(master);
    return 0;
}

/* cli_color() in a rank on a pty: colour only when the launcher's stdout is a terminal; and, not
 * launched, the pty alone decides, as before. */
int test_cli_color_rank(void)
{
    int lmaster, launcher_tty = open_pty(&lmaster), rmaster, rank_tty = open_pty(&rmaster);
    if (launcher_tty < 0 || rank_tty < 0)
        return test_cannot_run("no pseudo-terminal here (posix_openpt)");
    char path[4200];
    snprintf(path, sizeof path, "%s/out", test_tmpdir());
    int file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    TEST_ASSERT(file >= 0);
    TEST_EQ_INT(ask_rank("mpirun", file, rank_tty, 1, 1), 0); /* mpirun -n 2 tlview ... > file */
    TEST_EQ_INT(ask_rank("mpirun", launcher_tty, rank_tty, 1, 1), 1);
    TEST_EQ_INT(ask_rank("mpirun", launcher_tty, file, 1, 1), 0);
    TEST_EQ_INT(ask_rank("bash", file, rank_tty, 0, 1), 1); /* not launched: its own terminal */
    TEST_EQ_INT(ask_rank("bash", launcher_tty, file, 0, 1), 0);
    close(file);
    close(launcher_tty);
    close(rank_tty);
    close(lmaster);
    close(rmaster);
    return 0;
}

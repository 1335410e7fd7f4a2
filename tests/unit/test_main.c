/* The main() of every unit-test program. `test_x CASE` runs one case (what CTest does);
 * `test_x` alone runs every case, each in a forked child, and ends with "N passed, N failed". */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_help.h"
#include "test_cases.h"

static char tmpdir[4096];

const char *test_tmpdir(void)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "%s/testtmp", TLVIEW_BINARY_DIR);
        mkdir(tmpdir, 0755);
        size_t n = strlen(tmpdir);
        snprintf(tmpdir + n, sizeof tmpdir - n, "/XXXXXX");
        if (!mkdtemp(tmpdir)) {
            fprintf(stderr, "test_tmpdir: mkdtemp %s: %s\n", tmpdir, strerror(errno));
            abort();
        }
    }
    return tmpdir;
}

char *test_slurp(const char *path, size_t *pLen)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 16, n = 0;
    char *b = f ? malloc(cap) : NULL;
    while (b) {
        if (n + 1 == cap) {
            char *g = realloc(b, cap *= 2);
            if (!g) {
                free(b);
                b = NULL;
                break;
            }
            b = g;
        }
        size_t k = fread(b + n, 1, cap - n - 1, f);
        if (!k)
            break;
        n += k;
    }
    if (f && ferror(f)) {
        free(b);
        b = NULL;
    }
    if (f)
        fclose(f);
    if (b)
        b[n] = 0;
    if (pLen)
        *pLen = b ? n : 0;
    return b;
}

/* Prints `lead` and the formatted reason on one line of stderr: each line break of the text (the
 * output of a command quoted in it, say) becomes "; ", and breaks at its end are dropped. */
static void say_why(const char *lead, const char *why, va_list ap)
{
    char text[2048];
    vsnprintf(text, sizeof text, why, ap);
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
        text[--n] = 0;
    fputs(lead, stderr);
    for (const char *s = text; *s; s++) {
        if (*s == '\r')
            continue;
        if (*s == '\n')
            fputs("; ", stderr);
        else
            fputc(*s, stderr);
    }
    fputc('\n', stderr);
}

int test_cannot_run(const char *why, ...)
{
    const char *ci = getenv("CI");
    int fail = ci && strcmp(ci, "true") == 0;
    va_list ap;
    va_start(ap, why);
    say_why(fail ? "FAILED (CI=true, where every test must run): " : "skip: ", why, ap);
    va_end(ap);
    return fail ? 1 : TEST_SKIP;
}

int test_skip(const char *why, ...)
{
    va_list ap;
    va_start(ap, why);
    say_why("skip: ", why, ap);
    va_end(ap);
    return TEST_SKIP;
}

static int run_case(const struct test_case *tc)
{
    int rc = tc->fn();
    if (tmpdir[0] && rc == 0) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "warning: could not remove %s\n", tmpdir);
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        for (const struct test_case *tc = test_cases; tc->name; tc++)
            if (strcmp(tc->name, argv[1]) == 0)
                return run_case(tc);
        fprintf(stderr, "%s: no case named '%s'\n", argv[0], argv[1]);
        return 2;
    }
    int passed = 0, failed = 0, skipped = 0;
    for (const struct test_case *tc = test_cases; tc->name; tc++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0)
            _exit(run_case(tc));
        int status = 0;
        waitpid(pid, &status, 0);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        const char *verdict = code == 0 ? "ok" : code == TEST_SKIP ? "skip" : "FAIL";
        printf("[%s] %s\n", verdict, tc->name);
        if (code == 0)
            passed++;
        else if (code == TEST_SKIP)
            skipped++;
        else
            failed++;
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}

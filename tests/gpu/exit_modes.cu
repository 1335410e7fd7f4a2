/* exit_modes: launch K empty kernels, wait for them, then end in one of the ways a process ends:
 *   exit            exit(0) from a function         return       return 0 from main
 *   sigterm         raise(SIGTERM), default action  sigint       raise(SIGINT), default action
 *   sigterm-handler raise(SIGTERM) with the app's own handler, which says so and asks main to
 *                   stop (as Python's handlers do); main then returns 7
 *   sigkill         sleep SLEEP_MS (past the collector's flush period), then SIGKILL itself
 *   reset           cudaDeviceReset() right after the kernels (no sleep), then return 0: the
 *                   context and its CUPTI buffers go away before the exit-time flush
 * Usage: exit_modes MODE [K [SLEEP_MS]] (K default 5000, SLEEP_MS default 2000) */
#include <cuda_runtime.h>
#include <signal.h>

#include "tlsample.h"

__global__ void tlgpu_exit_kernel(void) {}

static volatile sig_atomic_t g_stop;

static void app_handler(int sig)
{
    static const char msg[] = "exit_modes: app handler ran\n";
    (void)sig;
    if (write(1, msg, sizeof msg - 1) < 0)
        _exit(8);
    g_stop = 1;
}

static void leave_by_exit(void) { exit(0); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    long k = argc > 2 ? strtol(argv[2], NULL, 10) : 5000;
    long sleep_ms = argc > 3 ? strtol(argv[3], NULL, 10) : 2000;
    static const char *modes[] = {"exit",   "return", "sigterm", "sigint", "sigterm-handler",
                                  "sigkill", "reset"};
    int m = -1;
    for (int i = 0; i < 7; i++)
        if (!strcmp(mode, modes[i]))
            m = i;
    if (m < 0 || k < 1 || sleep_ms < 0) {
        fprintf(stderr, "usage: exit_modes exit|return|sigterm|sigint|sigterm-handler|sigkill|reset "
                        "[K [SLEEP_MS]]\n");
        return 2;
    }
    /* The app's dispositions are set before CUDA starts, as an app's main would; SIGINT is reset
     * because a non-interactive shell starts background jobs with it ignored. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, m == 4 ? app_handler : SIG_DFL);

    for (long i = 0; i < k; i++)
        tlgpu_exit_kernel<<<1, 1>>>();
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    printf("exit_modes: %s pid=%d launched=%ld\n", mode, (int)getpid(), k);
    fflush(stdout);

    switch (m) {
    case 0:
        leave_by_exit();
        break;
    case 1:
        return 0;
    case 2:
        raise(SIGTERM);
        break;
    case 4:
        raise(SIGTERM);
        if (g_stop) {
            printf("exit_modes: stopping as the app's handler asked\n");
            return 7;
        }
        break;
    case 3:
        raise(SIGINT);
        break;
    case 5:
        tls_sleep_ns(sleep_ms * 1000000LL);
        kill(getpid(), SIGKILL);
        break;
    case 6:
        CHECK_CUDA(cudaDeviceReset());
        return 0;
    }
    printf("exit_modes: still running after the %s\n", mode);
    return 3;
}

/* fork_child: CUDA across fork(), two ways.
 *   cuda-child:   the parent forks before touching CUDA; the child launches 1000 kernels and tells
 *                 the parent, which only then starts CUDA and launches 2000: two processes, two files.
 *   nocuda-child: the parent launches 500 kernels, forks a child that uses no CUDA and exit()s
 *                 (running the at-exit handlers it inherited), then launches 500 more: one file,
 *                 the parent's, intact.
 * Usage: fork_child cuda-child|nocuda-child */
#include <cuda_runtime.h>
#include <sys/wait.h>

#include "tlsample.h"

__global__ void tlgpu_fork_kernel(int who) { (void)who; }

static void launch(int who, int n)
{
    for (int i = 0; i < n; i++)
        tlgpu_fork_kernel<<<1, 1>>>(who);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
}

/* Waits for the child and returns 0 when it exited with status 0. */
static int reap(pid_t child)
{
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fork_child: child %d did not exit cleanly (status 0x%x)\n", (int)child,
                status);
        return 1;
    }
    return 0;
}

static int cuda_child(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        close(fds[0]);
        launch(1, 1000);
        printf("fork_child: child pid=%d launched=1000\n", (int)getpid());
        fflush(stdout);
        if (write(fds[1], "x", 1) != 1)
            exit(1);
        tls_sleep_ns(200000000); /* still alive while the parent starts CUDA */
        exit(0);
    }
    close(fds[1]);
    char c;
    if (read(fds[0], &c, 1) != 1) {
        fprintf(stderr, "fork_child: the child died before launching\n");
        return 1;
    }
    launch(0, 2000);
    printf("fork_child: parent pid=%d launched=2000\n", (int)getpid());
    return reap(child);
}

static int nocuda_child(void)
{
    launch(0, 500);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0)
        exit(0);
    if (reap(child) != 0)
        return 1;
    launch(0, 500);
    printf("fork_child: parent pid=%d launched=1000 (child %d used no CUDA)\n", (int)getpid(),
           (int)child);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "cuda-child"))
        return cuda_child();
    if (argc == 2 && !strcmp(argv[1], "nocuda-child"))
        return nocuda_child();
    fprintf(stderr, "usage: fork_child cuda-child|nocuda-child\n");
    return 2;
}

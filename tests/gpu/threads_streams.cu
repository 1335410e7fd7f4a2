/* threads_streams: T host threads, each with S streams of its own, each stream M empty kernels
 * (default 8 x 4 x 1000): the collector must keep every kernel of every thread and stream.
 * Usage: threads_streams [T S M] */
#include <cuda_runtime.h>
#include <pthread.h>

#include "tlsample.h"

__global__ void tlgpu_stream_kernel(int tag) { (void)tag; }

static int g_streams, g_per_stream;

/* One thread: its own streams, kernels launched across them in turn, then drained. */
static void *thread_main(void *arg)
{
    int tag = (int)(long)arg;
    cudaStream_t st[64];
    for (int s = 0; s < g_streams; s++)
        CHECK_CUDA(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
    for (int i = 0; i < g_per_stream; i++)
        for (int s = 0; s < g_streams; s++)
            tlgpu_stream_kernel<<<1, 1, 0, st[s]>>>(tag);
    CHECK_CUDA(cudaGetLastError());
    for (int s = 0; s < g_streams; s++) {
        CHECK_CUDA(cudaStreamSynchronize(st[s]));
        CHECK_CUDA(cudaStreamDestroy(st[s]));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 3 ? atoi(argv[1]) : 8;
    g_streams = argc > 3 ? atoi(argv[2]) : 4;
    g_per_stream = argc > 3 ? atoi(argv[3]) : 1000;
    if (threads < 1 || threads > 256 || g_streams < 1 || g_streams > 64 || g_per_stream < 1) {
        fprintf(stderr, "usage: threads_streams [THREADS(1-256) STREAMS(1-64) PER_STREAM]\n");
        return 2;
    }
    CHECK_CUDA(cudaFree(0));
    pthread_t tid[256];
    for (int t = 0; t < threads; t++)
        if (pthread_create(&tid[t], NULL, thread_main, (void *)(long)t) != 0) {
            fprintf(stderr, "threads_streams: pthread_create failed\n");
            return 1;
        }
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    printf("threads_streams: pid=%d launched=%d streams=%d\n", (int)getpid(),
           threads * g_streams * g_per_stream, threads * g_streams);
    return 0;
}

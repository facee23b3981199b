/* parallel.c: the parent's CPU work spread over the cores (POSIX threads).
 * Input sets and their float64 references are independent, and on a GPU
 * machine with many cores this is what keeps the protocol's CPU side from
 * dominating a run. */
#ifdef __linux__
#include <sched.h> /* sched_getaffinity, CPU_COUNT (_GNU_SOURCE: CMakeLists.txt) */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/host_api.h"

typedef struct pool {
    void (*fn)(void *, int);
    void *ctx;
    int n, next;
    pthread_mutex_t mu;
} pool;

static void *worker(void *arg) {
    pool *p = (pool *)arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n) return NULL;
        p->fn(p->ctx, i);
    }
}

void kp_parallel_for(int n, void (*fn)(void *ctx, int i), void *ctx) { kp_parallel_for_n(n, 0, fn, ctx); }

void kp_parallel_for_n(int n, int threads, void (*fn)(void *ctx, int i), void *ctx) {
    int nt = kp_cores();
    if (threads > 0 && threads < nt) nt = threads;
    if (nt > n) nt = n;
    if (nt > 32) nt = 32;
    if (nt <= 1) {
        for (int i = 0; i < n; i++) fn(ctx, i);
        return;
    }
    pool p = {fn, ctx, n, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[32];
    int started = 0;
    for (int t = 0; t < nt; t++)
        if (pthread_create(&th[t], NULL, worker, &p) == 0) started++;
    if (started == 0) worker(&p); /* no threads: do it here */
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
}

int64_t kp_host_mem_bytes(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (int64_t)pages * size : (int64_t)4 << 30;
}

int64_t kp_host_mem_available(void) {
    const char *v = getenv("KPROOF_MEM_AVAILABLE");
    if (v && *v) {
        char *end;
        double b = strtod(v, &end);
        double unit = *end == 'K' || *end == 'k' ? 1024.0 : *end == 'M' || *end == 'm' ? 1048576.0
                    : *end == 'G' || *end == 'g' ? 1073741824.0 : 1.0;
        if (b > 0) return (int64_t)(b * unit);
    }
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb > 0 ? (int64_t)kb << 10 : kp_host_mem_bytes();
}

/* The cores this process may run on: its affinity mask where the system
 * has one (a run pinned with taskset, a container's cpuset), else every
 * online core. */
int kp_cores(void) {
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int c = CPU_COUNT(&set);
        if (c >= 1) return c;
    }
#endif
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 1 ? (int)c : 1;
}

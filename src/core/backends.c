/* backends.c: the backends' descriptors (kproof/backends.h), one row each. */
#include <string.h>

#include "kproof/backends.h"

static const char *const HOST_CFLAGS[] = {"-std=c11", "-O3", "-march=native", "-fPIC", "-shared",
                                          "-D_GNU_SOURCE", "-Wall", "-x", "c", NULL};
static const char *const HOST_LIBS[] = {"-lpthread", "-lm", NULL};
/* One CUDA runtime in the worker (-cudart shared): the candidate's launch
 * errors must be visible to the worker's cudaGetLastError. */
static const char *const CUDA_CFLAGS[] = {"-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                                          "-gencode", "arch=compute_90a,code=sm_90a", "-x", "cu", NULL};
static const char *const CUDA_LIBS[] = {"-lcublas", NULL};

static const kp_backend_info BACKENDS[] = {
    {
        .id = KP_BACKEND_HOST,
        .name = "host",
        .alias = "cpu",
        .title = "host",
        .src_ext = "c",
        .files = "not .cu",
        .other_files = 1,
        .compiler_env = "CC",
        .compiler = "cc",
        .cflags = HOST_CFLAGS,
        .libs = HOST_LIBS,
        .build_for_cpu = 1,
        .build_as_limit = (int64_t)2 << 30,
        .build_fsize_limit = (int64_t)256 << 20,
        .build_timeout_s = 120,
        .worker_missing_hint = "",
        .trusted_fail_hint = "",
        .worker_mem_limit = (int64_t)16 << 30,
        /* A pool started on a first call stays (as on cuda): its threads
         * are held to sleeping between calls by the CPU account. */
        .threads_at_hello = 0,
        /* Caches large and shared: 2x under the measured copy rate. */
        .sol_margin = 2.0,
        /* Edge shapes a CPU can afford in a test run: at most 12 MiB of
         * buffers, which keeps one of about a million elements for every
         * op (softmax, layernorm and rmsnorm 65537x17, sum 1000003,
         * matmul 1x1x1000003) and leaves out the rows of 262144 to
         * 4194319 elements, whose correctness rounds (sets generated, a
         * float64 reference each, checked whole) took more than half of
         * an honest host evaluation: softmax f32 02, 3.13 s of 5.42
         * (results/2026-12-05-host-4652246). */
        .timed_quick = 1,
        .edge_max_flops = 1e9,
        .edge_max_bytes = 12.0 * (1 << 20),
        .drawn_max_elems = 1 << 18,
        /* A CPU's cold samples scatter more than a GPU's (a memory bus
         * shared with other tenants, the scheduler): +-3% within 5 s. */
        .eval_budget_s = 5,
        .eval_target = 0.03,
        .demo_timeout_s = 10,
        .demo_budget_s = 0.3,
        .demo_max_elems = 1 << 18,
    },
    {
        .id = KP_BACKEND_CUDA,
        .name = "cuda",
        .alias = "gpu",
        .title = "CUDA",
        .src_ext = "cu",
        .files = ".cu",
        .gpu = 1,
        .stream_arg = 1,
        .compiler_env = "NVCC",
        .compiler = "nvcc",
        .cflags = CUDA_CFLAGS,
        .libs = CUDA_LIBS,
        .build_as_limit = (int64_t)8 << 30, /* per process: nvcc, cicc, ptxas each */
        .build_fsize_limit = (int64_t)2 << 30,
        .build_timeout_s = 600,
        .worker_missing_hint = ": build kproof where the CUDA toolkit (nvcc) is installed to evaluate .cu candidates",
        .trusted_fail_hint = " (no usable GPU here? the host backend runs .c candidates on the CPU)",
        .lock_env = "CUDA_VISIBLE_DEVICES",
        .has_tracer = 1,
        .physical_limits = 1,
        /* A read-only kernel streams a little faster than a copy, and the
         * arithmetic ceiling is taken as 1.3x cuBLAS. */
        .sol_margin = 1.25,
        .drawn_max_elems = 1 << 24,
        /* The demo's hang row waits out its timeout in every column while
         * holding the device lock: short on a GPU, where the slowest honest
         * call (the naive matmul at 2048^3) takes well under a second. */
        .demo_timeout_s = 4,
        .demo_budget_s = 0.5,
        .demo_max_elems = 1 << 22,
        .demo_medium_shapes = 1,
        .demo_parallel = 1,
    },
};
#define NBACKENDS ((int)(sizeof BACKENDS / sizeof *BACKENDS))

const kp_backend_info *kp_backend_get(kp_backend b) {
    for (int i = 0; i < NBACKENDS; i++)
        if (BACKENDS[i].id == b) return &BACKENDS[i];
    return &BACKENDS[0];
}

const char *kp_backend_name(kp_backend b) { return kp_backend_get(b)->name; }

int kp_backend_parse(const char *s, kp_backend *out) {
    if (!s) return -1;
    for (int i = 0; i < NBACKENDS; i++)
        if (strcmp(s, BACKENDS[i].name) == 0 || strcmp(s, BACKENDS[i].alias) == 0) {
            *out = BACKENDS[i].id;
            return 0;
        }
    return -1;
}

const kp_backend_info *kp_backend_for_file(const char *path) {
    const char *dot = path ? strrchr(path, '.') : NULL;
    const kp_backend_info *other = &BACKENDS[0];
    for (int i = 0; i < NBACKENDS; i++) {
        if (dot && strcmp(dot + 1, BACKENDS[i].src_ext) == 0 && !BACKENDS[i].other_files) return &BACKENDS[i];
        if (BACKENDS[i].other_files) other = &BACKENDS[i];
    }
    return other;
}

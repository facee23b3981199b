/* limits.c: the table of physical limits per device (see kproof/limits.h).
 *
 * Sources, all NVIDIA's own product datasheets (figures at boost clock;
 * tensor figures halved from the datasheets' "with sparsity" numbers):
 *   - "NVIDIA H200 Tensor Core GPU" datasheet (H200 SXM and H200 NVL
 *     columns): 4.8 TB/s HBM3e; FP32 67 / 60 TFLOP/s; TF32 989 / 835 and
 *     BF16 1979 / 1671 TFLOP/s with sparsity.
 *   - "NVIDIA H100 Tensor Core GPU" datasheet (H100 SXM, PCIe, NVL columns):
 *     HBM 3.35 / 2.0 / 3.9 TB/s; FP32 67 / 51 / 60 TFLOP/s; TF32 989 / 756 /
 *     835 and BF16 1979 / 1513 / 1671 TFLOP/s with sparsity.
 * launch_s is not a datasheet figure: it is the order of magnitude of what
 * one cold, event-timed call costs beyond its work on Hopper (launch,
 * first wave, drain), 2-5 us; work that takes less at the speed of light
 * is launch-bound, whatever the kernel does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strcasestr */
#endif
#include <ctype.h>
#include <string.h>

#include "kproof/limits.h"

#define TF 1e3 /* GFLOP/s per TFLOP/s */
#define HOPPER_LAUNCH_S 3e-6

typedef struct entry {
    const char *pattern; /* case-insensitive substring of kp_env.gpu */
    kp_limits l;
} entry;

/* Most specific first: the first pattern found in the name wins. */
static const entry TABLE[] = {
    {"H200 NVL",
     {"NVIDIA H200 NVL", 1, 4800, 60 * TF, 835 * TF / 2, 1671 * TF / 2, HOPPER_LAUNCH_S,
      "NVIDIA H200 Tensor Core GPU datasheet, H200 NVL"}},
    {"H200",
     {"NVIDIA H200 SXM", 1, 4800, 67 * TF, 989 * TF / 2, 1979 * TF / 2, HOPPER_LAUNCH_S,
      "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM"}},
    {"H100 PCIe",
     {"NVIDIA H100 PCIe", 1, 2000, 51 * TF, 756 * TF / 2, 1513 * TF / 2, HOPPER_LAUNCH_S,
      "NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe"}},
    {"H100 NVL",
     {"NVIDIA H100 NVL", 1, 3900, 60 * TF, 835 * TF / 2, 1671 * TF / 2, HOPPER_LAUNCH_S,
      "NVIDIA H100 Tensor Core GPU datasheet, H100 NVL"}},
    {"H100",
     {"NVIDIA H100 SXM", 1, 3350, 67 * TF, 989 * TF / 2, 1979 * TF / 2, HOPPER_LAUNCH_S,
      "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM"}},
};

static const kp_limits UNKNOWN = {"unknown device", 0, 0, 0, 0, 0, 0, "no datasheet figures for this device"};

/* Case-insensitive substring (glibc's strcasestr; _GNU_SOURCE is on). */
static int contains_nocase(const char *hay, const char *needle) { return strcasestr(hay, needle) != NULL; }

const kp_limits *kp_limits_for(const char *gpu_name)
{
    if (!gpu_name || !gpu_name[0])
        return &UNKNOWN;
    for (size_t i = 0; i < sizeof TABLE / sizeof *TABLE; i++)
        if (contains_nocase(gpu_name, TABLE[i].pattern))
            return &TABLE[i].l;
    return &UNKNOWN;
}

int kp_limits_count(void)
{
    return (int)(sizeof TABLE / sizeof *TABLE);
}

const kp_limits *kp_limits_at(int i)
{
    return i >= 0 && i < kp_limits_count() ? &TABLE[i].l : NULL;
}

static int is_matmul(const kp_op *op)
{
    return op && op->family && strcmp(op->family, "matmul") == 0;
}

double kp_limits_sol_gflops(const kp_limits *l, const kp_op *op)
{
    if (!l || !l->known || !op)
        return 0;
    if (!is_matmul(op))
        return l->fp32_gflops;
    if (op->dtype == KP_BF16)
        return l->bf16_gflops;
    return l->fp32_gflops > l->tf32_gflops / 3 ? l->fp32_gflops : l->tf32_gflops / 3;
}

double kp_limits_max_gflops(const kp_limits *l, const kp_op *op)
{
    if (!l || !l->known || !is_matmul(op))
        return 0;
    return op->dtype == KP_BF16 ? l->bf16_gflops : l->tf32_gflops;
}

double kp_limits_floor_s(const kp_limits *l, const kp_op *op, const kp_shape *s)
{
    if (!l || !l->known || !op || !s)
        return 0;
    double t = op->min_bytes ? op->min_bytes(s) / (l->hbm_gbs * 1e9) : 0;
    double peak = kp_limits_max_gflops(l, op);
    if (peak > 0 && op->flops) {
        double tc = op->flops(s) / (peak * 1e9);
        if (tc > t)
            t = tc;
    }
    return t;
}

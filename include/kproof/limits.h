/* limits.h: what a device can do at most, from its datasheet.
 *
 * A table of physical limits per GPU model: peak memory bandwidth and the
 * dense arithmetic peaks per number format. Two uses:
 *
 *   - impossibility: no honest kernel finishes faster than its bytes over
 *     the bandwidth or its FLOPs over the fastest unit that could do them
 *     (kp_limits_floor_s);
 *   - speed of light for "is more speed worth chasing" (worth.h), where
 *     the calibration's measured copy bandwidth, when known, replaces the
 *     datasheet's (HBM never reaches its datasheet figure: ~89% on H200).
 *
 * Every figure is a datasheet figure at boost clock; the entry's `source`
 * says which datasheet. Rates are dense (the datasheets' headline tensor
 * figures assume 2:4 sparsity and are twice these).
 */
#ifndef KPROOF_LIMITS_H
#define KPROOF_LIMITS_H

#include "kproof/kproof.h"

typedef struct kp_limits {
    const char *name;     /* "NVIDIA H200 SXM", or "unknown device" */
    int known;            /* 0: no limits (host CPUs, GPUs not in the table): every rate is 0 */
    double hbm_gbs;       /* peak memory bandwidth, GB/s (1e9 bytes/s) */
    double fp32_gflops;   /* fp32 FMA on the SIMT cores (no tensor cores), GFLOP/s */
    double tf32_gflops;   /* dense tf32 tensor cores, GFLOP/s */
    double bf16_gflops;   /* dense bf16 (and fp16) tensor cores, fp32 accumulate, GFLOP/s */
    double launch_s;      /* order of magnitude of a kernel launch's fixed cost, seconds */
    const char *source;   /* where the figures come from */
} kp_limits;

/* The entry for a GPU name as kp_env.gpu reports it ("NVIDIA H200",
 * "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe"): case-insensitive, the most
 * specific model first (an H200 NVL is not an H200 SXM). Never NULL: a
 * name not in the table (a CPU, NULL, "") gets the unknown entry. */
const kp_limits *kp_limits_for(const char *gpu_name);

/* The table itself, for listing: entries 0 .. kp_limits_count()-1, the
 * unknown entry not among them. */
int kp_limits_count(void);
const kp_limits *kp_limits_at(int i);

/* The arithmetic rate (GFLOP/s) an op's speed of light is computed at:
 * matmul bf16 on the bf16 tensor cores; matmul f32 at the larger of the
 * fp32 FMA peak and a third of tf32 (three tf32 products per fp32-accurate
 * one, the fastest known way to fp32 accuracy); every other op on the SIMT
 * fp32 units (its math is elementwise and in fp32 whatever the storage).
 * 0 when unknown. */
double kp_limits_sol_gflops(const kp_limits *l, const kp_op *op);

/* The rate nothing exceeds on the op's data (GFLOP/s): matmul bf16 the bf16
 * tensor peak, matmul f32 the tf32 tensor peak (a single tf32 pass, which
 * could not pass an fp32 tolerance, is the fastest any scheme reads fp32
 * data through the tensor cores). Other ops: 0, because their FLOP counts
 * are estimates, not lower bounds: only their bytes bound them. */
double kp_limits_max_gflops(const kp_limits *l, const kp_op *op);

/* The physical floor of one call, seconds: max(min_bytes / hbm,
 * flops / max_gflops). No honest kernel runs faster; 0 when unknown. */
double kp_limits_floor_s(const kp_limits *l, const kp_op *op, const kp_shape *s);

#endif

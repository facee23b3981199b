/* test_worth.c: physical limits, speed of light, regime, headroom, Amdahl,
 * SOL score, the decision; comparing timings (every status) and the
 * refusals; traces; result files read back; the HTML report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "kproof/worth.h"
#include "test.h"

#define REL(a, b) CHECK_NEAR((a) / (b), 1.0, 1e-12)

static char *slurp(FILE *f)
{
    long n = ftell(f);
    rewind(f);
    char *s = calloc(1, (size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    return s;
}

static kp_shape sh2(int64_t a, int64_t b)
{
    kp_shape s = {2, {a, b, 0}};
    return s;
}

static kp_shape sh3(int64_t a, int64_t b, int64_t c)
{
    kp_shape s = {3, {a, b, c}};
    return s;
}

static void h200_env(kp_env *e, double copy_gbs)
{
    memset(e, 0, sizeof *e);
    snprintf(e->gpu, sizeof e->gpu, "NVIDIA H200");
    snprintf(e->runtime, sizeof e->runtime, "CUDA 13.0");
    e->peak_gbs = copy_gbs;
    e->peak_gflops_f32 = 51286.8;
    e->peak_gflops_bf16 = 778603;
}

/* ===== limits ============================================================= */

static void test_limits(void)
{
    const kp_limits *h200 = kp_limits_for("NVIDIA H200");
    CHECK(h200->known && strcmp(h200->name, "NVIDIA H200 SXM") == 0);
    CHECK(h200->hbm_gbs == 4800 && h200->fp32_gflops == 67000);
    CHECK(h200->tf32_gflops == 494500 && h200->bf16_gflops == 989500);
    CHECK(h200->launch_s > 1e-6 && h200->launch_s < 1e-5);
    CHECK(strstr(h200->source, "datasheet") != NULL);
    CHECK(strcmp(kp_limits_for("NVIDIA H200 NVL")->name, "NVIDIA H200 NVL") == 0);
    const kp_limits *h100 = kp_limits_for("NVIDIA H100 80GB HBM3");
    CHECK(strcmp(h100->name, "NVIDIA H100 SXM") == 0 && h100->hbm_gbs == 3350 && h100->bf16_gflops == 989500);
    CHECK(strcmp(kp_limits_for("NVIDIA H100 PCIe")->name, "NVIDIA H100 PCIe") == 0);
    CHECK(kp_limits_for("NVIDIA H100 PCIe")->hbm_gbs == 2000);
    CHECK(strcmp(kp_limits_for("nvidia h100 nvl")->name, "NVIDIA H100 NVL") == 0); /* any case */
    const kp_limits *cpu = kp_limits_for("AMD EPYC 7B13 64-Core Processor");
    CHECK(!cpu->known && cpu->hbm_gbs == 0 && cpu->bf16_gflops == 0 && cpu->launch_s == 0);
    CHECK(!kp_limits_for(NULL)->known && !kp_limits_for("")->known);
    CHECK(kp_limits_count() >= 2);
    for (int i = 0; i < kp_limits_count(); i++)
        CHECK(kp_limits_at(i)->known && kp_limits_for(kp_limits_at(i)->name) == kp_limits_at(i));
    CHECK(kp_limits_at(-1) == NULL && kp_limits_at(kp_limits_count()) == NULL);

    const kp_op *mmb = kp_op_find("matmul_bf16"), *mmf = kp_op_find("matmul_f32"), *sm = kp_op_find("softmax_f32");
    CHECK(kp_limits_sol_gflops(h200, mmb) == 989500);
    REL(kp_limits_sol_gflops(h200, mmf), 494500.0 / 3);
    CHECK(kp_limits_sol_gflops(h200, sm) == 67000);
    CHECK(kp_limits_sol_gflops(cpu, sm) == 0);
    CHECK(kp_limits_max_gflops(h200, mmf) == 494500 && kp_limits_max_gflops(h200, mmb) == 989500);
    CHECK(kp_limits_max_gflops(h200, sm) == 0); /* a FLOP estimate is no lower bound */
    kp_shape s = sh2(8192, 8192);
    REL(kp_limits_floor_s(h200, sm, &s), 536870912.0 / 4.8e12);
    kp_shape m = sh3(4096, 4096, 4096);
    REL(kp_limits_floor_s(h200, mmb, &m), 2.0 * 4096 * 4096 * 4096 / 989.5e12);
    CHECK(kp_limits_floor_s(cpu, mmb, &m) == 0);
}

/* ===== speed of light and the regime ====================================== */

static void test_sol(void)
{
    const kp_op *sm = kp_op_find("softmax_f32"), *mm = kp_op_find("matmul_bf16"), *sum = kp_op_find("sum_f32");
    kp_env e;
    h200_env(&e, 4287.01);
    kp_ceilings c;
    kp_ceilings_for(sm, &e, &c);
    CHECK(c.bw_gbs == 4287.01 && c.bw_measured && c.phys_bw_gbs == 4800 && c.peak_gflops == 67000);
    CHECK(!c.peak_measured && c.launch_s == c.limits->launch_s);

    kp_sol o;
    kp_shape s = sh2(8192, 8192);
    kp_sol_compute(sm, &s, &c, &o);
    CHECK(o.bytes == 536870912.0 && o.flops == 5.0 * 8192 * 8192);
    CHECK_NEAR(o.intensity, 0.625, 1e-15);
    REL(o.ridge, 67000 / 4287.01);
    REL(o.mem_s, 536870912.0 / 4287.01e9);
    REL(o.sol_s, o.mem_s);
    REL(o.phys_s, 536870912.0 / 4800e9);
    CHECK(o.regime == KP_REGIME_MEMORY);
    CHECK(strcmp(kp_regime_name(o.regime), "memory-bound") == 0);

    kp_ceilings_for(mm, &e, &c);
    kp_shape m = sh3(4096, 4096, 4096);
    kp_sol_compute(mm, &m, &c, &o);
    CHECK(o.regime == KP_REGIME_COMPUTE);
    REL(o.sol_s, 2.0 * 4096 * 4096 * 4096 / 989.5e12);
    CHECK(o.sol_s == o.compute_s && o.phys_s == o.compute_s);
    CHECK(c.gemm_gflops == 778603);

    /* 2^20 floats: under a microsecond at the speed of light. */
    kp_ceilings_for(sum, &e, &c);
    kp_shape n = {1, {1 << 20, 0, 0}};
    kp_sol_compute(sum, &n, &c, &o);
    CHECK(o.regime == KP_REGIME_LAUNCH && o.sol_s < 1e-6);
    kp_shape big = {1, {1 << 28, 0, 0}};
    kp_sol_compute(sum, &big, &c, &o);
    CHECK(o.regime == KP_REGIME_MEMORY);

    /* Without a calibration: the datasheet's bandwidth. */
    h200_env(&e, 0);
    kp_ceilings_for(sm, &e, &c);
    CHECK(c.bw_gbs == 4800 && !c.bw_measured);

    /* A GPU not in the table: 1.3x its measured GEMM, a GPU's launch. */
    snprintf(e.gpu, sizeof e.gpu, "NVIDIA A100-SXM4-80GB");
    e.peak_gbs = 1800;
    kp_ceilings_for(mm, &e, &c);
    CHECK(!c.limits->known && c.peak_measured && c.phys_bw_gbs == 0);
    REL(c.peak_gflops, 1.3 * 778603);
    CHECK(c.launch_s == 3e-6);
    kp_sol_compute(mm, &m, &c, &o);
    CHECK(o.regime == KP_REGIME_COMPUTE && o.sol_s > 0 && o.phys_s == 0);

    /* A CPU: bandwidth measured, no compute peak. A memory-bound op's
     * speed of light is its bytes' time; a matmul's is unknown. */
    kp_env h;
    memset(&h, 0, sizeof h);
    snprintf(h.gpu, sizeof h.gpu, "AMD EPYC 7B13");
    snprintf(h.runtime, sizeof h.runtime, "glibc 2.36");
    h.peak_gbs = 20;
    kp_ceilings_for(sm, &h, &c);
    kp_sol_compute(sm, &s, &c, &o);
    CHECK(o.sol_s > 0 && o.regime == KP_REGIME_UNKNOWN && c.launch_s == 0);
    kp_ceilings_for(mm, &h, &c);
    kp_sol_compute(mm, &m, &c, &o);
    CHECK(o.sol_s == 0 && o.regime == KP_REGIME_UNKNOWN);
}

static void test_arithmetic(void)
{
    /* SOL score: 0.5 at the baseline, 1 at the speed of light. */
    CHECK_NEAR(kp_sol_score(200, 200, 100), 0.5, 1e-15);
    CHECK_NEAR(kp_sol_score(100, 200, 100), 1.0, 1e-15);
    CHECK_NEAR(kp_sol_score(150, 200, 100), 1.0 / 1.5, 1e-15);
    CHECK_NEAR(kp_sol_score(300, 200, 100), 1.0 / 3.0, 1e-15);
    CHECK(kp_sol_score(90, 200, 100) > 1); /* past the ceiling */
    CHECK(isnan(kp_sol_score(150, 100, 100)) && isnan(kp_sol_score(150, 90, 100)));
    CHECK(isnan(kp_sol_score(0, 200, 100)) && isnan(kp_sol_score(NAN, 200, 100)));
    CHECK(isnan(kp_sol_score(150, 200, 0)));
    /* Headroom and Amdahl. */
    CHECK_NEAR(kp_headroom(3, 2), 1.5, 1e-15);
    CHECK(isnan(kp_headroom(3, 0)) && isnan(kp_headroom(0, 2)));
    CHECK_NEAR(kp_amdahl(0.5, 2), 4.0 / 3.0, 1e-15);
    CHECK_NEAR(kp_amdahl(1, 7), 7, 1e-12);
    CHECK_NEAR(kp_amdahl(0.25, 1e12), 4.0 / 3.0, 1e-9); /* the rest bounds it */
    CHECK_NEAR(kp_amdahl(0.3, 1), 1, 1e-15);
    CHECK(isnan(kp_amdahl(0, 2)) && isnan(kp_amdahl(1.5, 2)) && isnan(kp_amdahl(-0.1, 2)));
    CHECK(isnan(kp_amdahl(0.5, 0)) && isnan(kp_amdahl(NAN, 2)));
}

static void test_judge(void)
{
    const kp_op *sm = kp_op_find("softmax_f32"), *sum = kp_op_find("sum_f32");
    kp_env e;
    h200_env(&e, 4287.01);
    kp_ceilings c;
    kp_ceilings_for(sm, &e, &c);
    kp_shape s = sh2(8192, 8192);
    kp_sol o;
    kp_sol_compute(sm, &s, &c, &o);
    kp_worth w;

    kp_worth_judge(sm, &s, &c, 0.000125551999, "f32-10-keep-x", 0, 0, NULL, &w);
    CHECK(strcmp(w.decision, "not worth it") == 0);
    CHECK_NEAR(w.headroom, 0.000125551999 / o.sol_s, 1e-12);
    CHECK_NEAR(w.sol_fraction, o.sol_s / 0.000125551999, 1e-12);
    CHECK(isnan(w.gain_max) && isnan(w.gain_speedup));
    CHECK(strstr(w.sentence, "softmax_f32 8192x8192: memory-bound") == w.sentence);
    CHECK(strstr(w.sentence, "f32-10-keep-x runs 125.6 us = 99.7% of speed of light") != NULL);
    CHECK(strstr(w.sentence, "not worth it.") != NULL);

    kp_worth_judge(sm, &s, &c, 1.3 * o.sol_s, "k", 0, 0, NULL, &w);
    CHECK(strcmp(w.decision, "marginal") == 0);
    kp_worth_judge(sm, &s, &c, 2 * o.sol_s, "k", 0, 0, NULL, &w);
    CHECK(strcmp(w.decision, "worth it") == 0 && strstr(w.sentence, "at most 2.00x left") != NULL);
    /* A 2x kernel headroom at 10% of the workload: 1.053x end to end. */
    kp_worth_judge(sm, &s, &c, 2 * o.sol_s, "k", 0.1, 1.5, "given", &w);
    CHECK_NEAR(w.gain_max, 1 / (0.9 + 0.05), 1e-12);
    CHECK_NEAR(w.gain_speedup, 1 / (0.9 + 0.1 / 1.5), 1e-12);
    CHECK(strcmp(w.decision, "marginal") == 0);
    CHECK(strstr(w.sentence, "at 10% of the workload, at most 1.053x end to end (1.034x for the given 1.50x)"));
    kp_worth_judge(sm, &s, &c, 2 * o.sol_s, "k", 0.01, 0, NULL, &w);
    CHECK(strcmp(w.decision, "not worth it") == 0);
    kp_worth_judge(sm, &s, &c, 4 * o.sol_s, "k", 0.5, 0, NULL, &w);
    CHECK(strcmp(w.decision, "worth it") == 0);
    /* Faster than the measured copy: nothing left against it. */
    kp_worth_judge(sm, &s, &c, 0.97 * o.sol_s, "k", 0, 0, NULL, &w);
    CHECK(w.headroom < 1 && strcmp(w.decision, "not worth it") == 0);
    CHECK(strstr(w.sentence, "past the measured copy's ceiling; the datasheet leaves at most") != NULL);
    /* No measurement. */
    kp_worth_judge(sm, &s, &c, 0, NULL, 0.5, 0, NULL, &w);
    CHECK(strcmp(w.decision, "unknown") == 0 && strstr(w.sentence, "no measured time") != NULL);
    CHECK(isnan(w.headroom));
    /* Launch-bound: the floor is the launch. */
    kp_ceilings_for(sum, &e, &c);
    kp_shape n = {1, {1 << 20, 0, 0}};
    kp_worth_judge(sum, &n, &c, 6.88e-6, "f32-05", 0, 0, NULL, &w);
    CHECK(w.sol.regime == KP_REGIME_LAUNCH);
    CHECK(strstr(w.sentence, "launch-bound") && strstr(w.sentence, "at most 2.29x left above the launch"));
    kp_worth_judge(sum, &n, &c, 3.1e-6, "f32-05", 0, 0, NULL, &w);
    CHECK(strcmp(w.decision, "not worth it") == 0);
    /* A device with no figures at all. */
    kp_env none;
    memset(&none, 0, sizeof none);
    kp_ceilings_for(sm, &none, &c);
    kp_worth_judge(sm, &s, &c, 1e-3, "k", 0, 0, NULL, &w);
    CHECK(strcmp(w.decision, "unknown") == 0 && strstr(w.sentence, "no speed of light") != NULL);
}

/* ===== compare ============================================================ */

static kp_timing tm(double med, double lo, double hi)
{
    kp_timing t;
    memset(&t, 0, sizeof t);
    t.median = med;
    t.lo = lo;
    t.hi = hi;
    t.n = 10;
    return t;
}

static void test_compare(void)
{
    kp_cmp c;
    kp_timing a = tm(100, 99.8, 100.2);
    /* SAME: within +-2%, even when statistically apart. */
    kp_timing b = tm(100.5, 100.3, 100.7);
    CHECK(kp_compare_timing(&a, &b, 0.02, 1, &c) == 0 && c.status == KP_CMP_SAME && !c.from_samples);
    CHECK_NEAR(c.ratio, 1.005, 1e-12);
    CHECK(c.ratio_lo < c.ratio && c.ratio < c.ratio_hi);
    /* The halves add in quadrature on the log scale. */
    CHECK_NEAR(log(c.ratio_hi / c.ratio), sqrt(pow(log(100.7 / 100.5), 2) + pow(log(100 / 99.8), 2)), 1e-12);
    /* SLOWER and FASTER: beyond the margin, intervals apart. */
    b = tm(110, 109.5, 110.5);
    CHECK(kp_compare_timing(&a, &b, 0.02, 1, &c) == 0 && c.status == KP_CMP_SLOWER);
    CHECK(kp_compare_timing(&b, &a, 0.02, 1, &c) == 0 && c.status == KP_CMP_FASTER);
    CHECK(c.ratio < 1 && c.ratio_hi < 1);
    /* The same pair is SLOWER at a tight margin, SAME at a loose one. */
    b = tm(100.5, 100.3, 100.7);
    CHECK(kp_compare_timing(&a, &b, 0.001, 1, &c) == 0 && c.status == KP_CMP_SLOWER);
    b = tm(110, 109.5, 110.5);
    CHECK(kp_compare_timing(&a, &b, 0.2, 1, &c) == 0 && c.status == KP_CMP_SAME);
    /* AMBIGUOUS: intervals too wide to tell. */
    b = tm(103, 95, 111);
    CHECK(kp_compare_timing(&a, &b, 0.02, 1, &c) == 0 && c.status == KP_CMP_AMBIGUOUS);
    /* AMBIGUOUS: the ratio's interval excludes 1 but the medians' intervals overlap. */
    a = tm(100, 97, 103);
    b = tm(106, 102.5, 109.5);
    CHECK(kp_compare_timing(&a, &b, 0.02, 1, &c) == 0);
    CHECK(c.ratio_lo > 1 && b.lo < a.hi && c.status == KP_CMP_AMBIGUOUS);
    /* AMBIGUOUS: no intervals at all. */
    a = tm(100, NAN, NAN);
    b = tm(150, NAN, NAN);
    CHECK(kp_compare_timing(&a, &b, 0.02, 1, &c) == 0 && c.status == KP_CMP_AMBIGUOUS && isnan(c.ratio_lo));
    /* No median: not comparable. */
    b = tm(NAN, 1, 2);
    CHECK(kp_compare_timing(&a, &b, 0.02, 1, &c) == -1);
    CHECK(kp_compare_timing(NULL, &b, 0.02, 1, &c) == -1);

    /* With samples on both sides: a bootstrap of the ratio. */
    double xa[40], xb[40], xc[40];
    kp_rng r = {42};
    for (int i = 0; i < 40; i++) {
        xa[i] = 100 + kp_rng_uniform(&r);
        xb[i] = 1.1 * (100 + kp_rng_uniform(&r));
        xc[i] = 100 + kp_rng_uniform(&r);
    }
    kp_timing sa = tm(kp_median(xa, 40), 0, 0), sb = tm(kp_median(xb, 40), 0, 0), sc = tm(kp_median(xc, 40), 0, 0);
    kp_boot_median_ci(xa, 40, 0.95, 2000, 1, &sa.lo, &sa.hi);
    kp_boot_median_ci(xb, 40, 0.95, 2000, 2, &sb.lo, &sb.hi);
    kp_boot_median_ci(xc, 40, 0.95, 2000, 3, &sc.lo, &sc.hi);
    sa.samples = xa;
    sb.samples = xb;
    sc.samples = xc;
    sa.n = sb.n = sc.n = 40;
    CHECK(kp_compare_timing(&sa, &sb, 0.02, 7, &c) == 0 && c.from_samples && c.status == KP_CMP_SLOWER);
    CHECK(c.ratio_lo > 1.08 && c.ratio_hi < 1.12);
    CHECK(kp_compare_timing(&sa, &sc, 0.02, 7, &c) == 0 && c.from_samples && c.status == KP_CMP_SAME);
    CHECK(strcmp(kp_cmp_status_name(KP_CMP_SAME), "SAME") == 0);
    CHECK(strcmp(kp_cmp_status_name(KP_CMP_FASTER), "FASTER") == 0);
    CHECK(strcmp(kp_cmp_status_name(KP_CMP_SLOWER), "SLOWER") == 0);
    CHECK(strcmp(kp_cmp_status_name(KP_CMP_AMBIGUOUS), "AMBIGUOUS") == 0);
}

static void test_refusal(void)
{
    kp_result a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.op = b.op = kp_op_find("softmax_f32");
    a.backend = b.backend = KP_BACKEND_CUDA;
    snprintf(a.env.gpu, sizeof a.env.gpu, "NVIDIA H200");
    snprintf(b.env.gpu, sizeof b.env.gpu, "NVIDIA H200");
    char why[256];
    CHECK(kp_compare_refusal(&a, 1, &b, 1, why, sizeof why) == 0);
    CHECK(kp_compare_refusal(&a, 1, &b, 2, why, sizeof why) == -1);
    CHECK(strstr(why, "different schema versions: A is schema 1, B is schema 2") != NULL);
    b.op = kp_op_find("softmax_bf16");
    CHECK(kp_compare_refusal(&a, 1, &b, 1, why, sizeof why) == -1);
    CHECK(strstr(why, "different ops: A is softmax_f32, B is softmax_bf16") != NULL);
    b.op = a.op;
    snprintf(b.env.gpu, sizeof b.env.gpu, "NVIDIA H100 80GB HBM3");
    CHECK(kp_compare_refusal(&a, 1, &b, 1, why, sizeof why) == -1 && strstr(why, "different devices") != NULL);
    snprintf(b.env.gpu, sizeof b.env.gpu, "NVIDIA H200");
    b.backend = KP_BACKEND_HOST;
    CHECK(kp_compare_refusal(&a, 1, &b, 1, why, sizeof why) == -1 && strstr(why, "different devices") != NULL);
}

/* ===== traces ============================================================= */

static int trace_of(const char *text, kp_trace *t, char *err, size_t len)
{
    kp_json *root = NULL;
    if (kp_json_parse(text, strlen(text), &root, err, len))
        return -2;
    int rc = kp_trace_read(root, t, err, len);
    kp_json_free(root);
    return rc;
}

static void test_trace(void)
{
    const char *why = NULL;
    CHECK(strcmp(kp_trace_family("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>", &why),
                 "softmax") == 0 && strcmp(why, "softmax") == 0);
    CHECK(strcmp(kp_trace_family("triton_red_fused_native_layer_norm_0", NULL), "layernorm") == 0);
    CHECK(strcmp(kp_trace_family("void rms_norm_kernel<float>", NULL), "rmsnorm") == 0);
    CHECK(strcmp(kp_trace_family("void at::native::vectorized_rms_norm_kernel<float>", NULL), "rmsnorm") == 0);
    CHECK(strcmp(kp_trace_family("RMSNormForward", NULL), "rmsnorm") == 0);
    CHECK(strcmp(kp_trace_family("rmsnorm_fwd_tuned_kernel<layer_norm::Kernel_traits<float>>", NULL), "rmsnorm") == 0);
    CHECK(strcmp(kp_trace_family("void at::native::vectorized_layer_norm_kernel<float>", NULL), "layernorm") == 0);
    CHECK(kp_op_find("rmsnorm_f32") && strcmp(kp_op_find("rmsnorm_f32")->family, "rmsnorm") == 0);
    CHECK(strcmp(kp_trace_family("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64", NULL), "matmul") == 0);
    CHECK(strcmp(kp_trace_family("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NTN", NULL), "matmul") == 0);
    CHECK(strcmp(kp_trace_family("ampere_sgemm_128x64_tn", NULL), "matmul") == 0);
    CHECK(strcmp(kp_trace_family("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>", NULL),
                 "matmul") == 0);
    CHECK(strcmp(kp_trace_family("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", NULL), "sum") ==
          0);
    CHECK(strcmp(kp_trace_family("triton_red_fused_sum_0", NULL), "sum") == 0);
    CHECK(kp_trace_family("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, cutlass::half_t>>", &why) == NULL);
    CHECK(why && strcmp(why, "flash") == 0);
    CHECK(kp_trace_family("void at_cuda_detail::cub::DeviceScanKernel<cumsum>", NULL) == NULL);
    CHECK(kp_trace_family("void gemv2T_kernel_val<int, int, float>", NULL) == NULL);
    CHECK(kp_trace_family("void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>", NULL) == NULL);
    CHECK(kp_trace_family("my_fused_kernel", &why) == NULL && why == NULL);

    kp_trace t;
    char err[300];
    const char *ok = "{\"traceEvents\": ["
                     "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::softmax\", \"ts\": 0, \"dur\": 50},"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"softmax_warp_forward\", \"ts\": 1, \"dur\": 30},"
                     "{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"softmax_warp_forward\", \"ts\": 40, \"dur\": 10},"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"nvjet_tst_x\", \"ts\": 60, \"dur\": 140},"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"my_fused_kernel\", \"ts\": 300, \"dur\": 20},"
                     "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoD\", \"ts\": 400, \"dur\": 5},"
                     "{\"ph\": \"i\", \"cat\": \"kernel\", \"name\": \"instant\", \"ts\": 500},"
                     "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"no_duration\", \"ts\": 600}"
                     "], \"displayTimeUnit\": \"ms\"}";
    CHECK(trace_of(ok, &t, err, sizeof err) == 0);
    CHECK(t.n == 3 && t.events == 4);
    CHECK_NEAR(t.total_s, 200e-6, 1e-15);
    CHECK_NEAR(t.memcpy_s, 5e-6, 1e-15);
    CHECK(strcmp(t.k[0].name, "nvjet_tst_x") == 0 && strcmp(t.k[0].family, "matmul") == 0);
    CHECK(strcmp(t.k[1].name, "softmax_warp_forward") == 0 && t.k[1].calls == 2);
    CHECK(t.k[2].family == NULL); /* unknown, kept */
    CHECK_NEAR(kp_trace_share(&t, "softmax"), 0.2, 1e-12);
    CHECK_NEAR(kp_trace_share(&t, "matmul"), 0.7, 1e-12);
    CHECK(kp_trace_share(&t, "sum") == 0 && kp_trace_share(&t, NULL) == 0);
    kp_trace_free(&t);
    CHECK(t.n == 0 && t.k == NULL);

    /* The bare array form of the format. */
    CHECK(trace_of("[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"dur\": 3}]", &t, err, sizeof err) == 0);
    CHECK(t.n == 1);
    kp_trace_free(&t);

    /* Many distinct names: the table grows. */
    char *big = malloc(1 << 20);
    size_t n = (size_t)snprintf(big, 64, "{\"traceEvents\": [");
    for (int i = 0; i < 3000; i++)
        n += (size_t)snprintf(big + n, (1 << 20) - n, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"dur\": %d}",
                              i ? "," : "", i % 1000, 1 + i % 7);
    snprintf(big + n, (1 << 20) - n, "]}");
    CHECK(trace_of(big, &t, err, sizeof err) == 0 && t.n == 1000 && t.events == 3000);
    for (int i = 1; i < t.n; i++)
        CHECK(t.k[i - 1].total_s >= t.k[i].total_s);
    kp_trace_free(&t);
    free(big);

    /* Not traces. */
    CHECK(trace_of("{\"schema\": 1, \"shapes\": []}", &t, err, sizeof err) == -1);
    CHECK(strstr(err, "not a Chrome trace") != NULL);
    CHECK(trace_of("{\"traceEvents\": {}}", &t, err, sizeof err) == -1 && strstr(err, "not a Chrome trace"));
    CHECK(trace_of("[1, 2, 3]", &t, err, sizeof err) == -1 && strstr(err, "not a Chrome trace"));
    CHECK(trace_of("\"text\"", &t, err, sizeof err) == -1 && strstr(err, "not a Chrome trace"));
    CHECK(trace_of("{\"traceEvents\": []}", &t, err, sizeof err) == -1 && strstr(err, "no GPU kernel time"));
    CHECK(trace_of("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"dur\": 4}]}", &t, err,
                   sizeof err) == -1);
    CHECK(strstr(err, "ProfilerActivity.CUDA") != NULL);
    /* A duration no kernel has (past a year) is not counted. */
    CHECK(trace_of("[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"dur\": 1e300},"
                   "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"rms_norm\", \"dur\": 2}]",
                   &t, err, sizeof err) == 0);
    CHECK(t.n == 1 && isfinite(t.total_s) && kp_trace_share(&t, "rmsnorm") == 1);
    kp_trace_free(&t);
    kp_trace_free(NULL);
}

/* ===== result files, printers ============================================= */

static void fill(kp_timing *t, double med, int n, double spread)
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->samples = malloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        t->samples[i] = med * (1 + spread * ((i % 5) - 2) / 2.0);
    t->median = kp_median(t->samples, n);
    kp_boot_median_ci(t->samples, n, 0.95, 1000, 5, &t->lo, &t->hi);
    t->min = kp_quantile(t->samples, n, 0);
    t->mean = kp_mean(t->samples, n);
    t->settled = 1;
}

static kp_result *softmax_result(double cand_s, double base_s)
{
    kp_result *r = calloc(1, sizeof *r);
    r->verdict = KP_PASS;
    r->op = kp_op_find("softmax_f32");
    r->backend = KP_BACKEND_CUDA;
    snprintf(r->candidate, sizeof r->candidate, "kernels/softmax/cuda/f32-10-keep-x.cu");
    snprintf(r->protocol, sizeof r->protocol, "rigorous");
    h200_env(&r->env, 4287.01);
    snprintf(r->env.date, sizeof r->env.date, "2026-12-01T20:13:07Z");
    r->seed = 0xfedcba9876543210ULL;
    r->nshapes = 2;
    r->shapes = calloc(2, sizeof *r->shapes);
    kp_shape_result *a = &r->shapes[0];
    a->shape = sh2(8192, 8192);
    a->origin = "canonical";
    a->verdict = KP_PASS;
    a->timed = 1;
    fill(&a->cand, cand_s, 20, 0.002);
    snprintf(a->base_name, sizeof a->base_name, "f32-06-split-row");
    fill(&a->base, base_s, 20, 0.002);
    a->speedup = base_s / cand_s;
    a->speedup_lo = a->speedup * 0.99;
    a->speedup_hi = a->speedup * 1.01;
    kp_shape_result *b = &r->shapes[1];
    b->shape = sh2(257, 1000);
    b->origin = "edge";
    b->verdict = KP_PASS;
    return r;
}

static char *to_file(void (*print)(FILE *, const kp_result *), const kp_result *r, char *path)
{
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (!f)
        return NULL;
    print(f, r);
    fflush(f);
    char *s = slurp(f);
    fclose(f);
    return s;
}

static void test_results(void)
{
    kp_result *r = softmax_result(125.55e-6, 140.94e-6);
    char path[] = "/tmp/kp_test_worth_XXXXXX";
    char *j = to_file(kp_print_json, r, path);
    CHECK(j != NULL);
    if (!j)
        return;
    /* The additive fields: per shape "worth", samples, the device's limits. */
    CHECK(strstr(j, "\"worth\": {") && strstr(j, "\"regime\": \"memory-bound\""));
    CHECK(strstr(j, "\"sol_score\": ") && strstr(j, "\"headroom\": ") && strstr(j, "\"samples_s\": ["));
    CHECK(strstr(j, "\"limits\": {") && strstr(j, "\"name\": \"NVIDIA H200 SXM\""));
    CHECK(strstr(j, "\"schema\": 1,") != NULL);

    kp_result back;
    int schema = 0;
    char err[400];
    CHECK(kp_result_read_file(path, &back, &schema, err, sizeof err) == 0);
    CHECK(schema == 1 && back.op == r->op && back.verdict == KP_PASS && back.backend == KP_BACKEND_CUDA);
    CHECK(strcmp(back.env.gpu, "NVIDIA H200") == 0 && back.env.peak_gbs == 4287.01);
    CHECK(back.seed == r->seed && strcmp(back.candidate, r->candidate) == 0);
    CHECK(back.nshapes == 2 && back.shapes[0].timed && !back.shapes[1].timed);
    CHECK(strcmp(back.shapes[0].origin, "canonical") == 0 && strcmp(back.shapes[1].origin, "edge") == 0);
    CHECK(back.shapes[0].cand.n == 20 && back.shapes[0].cand.samples != NULL);
    CHECK_NEAR(back.shapes[0].cand.median, r->shapes[0].cand.median, 1e-15);
    CHECK_NEAR(back.shapes[0].cand.samples[7], r->shapes[0].cand.samples[7], 1e-15);
    CHECK(strcmp(back.shapes[0].base_name, "f32-06-split-row") == 0 && back.shapes[0].base.n == 20);
    CHECK_NEAR(back.shapes[0].speedup, r->shapes[0].speedup, 1e-8);

    /* A run against itself, from the samples: SAME. */
    kp_cmp c;
    CHECK(kp_compare_timing(&back.shapes[0].cand, &r->shapes[0].cand, 0.02, 3, &c) == 0);
    CHECK(c.from_samples && c.status == KP_CMP_SAME);
    CHECK(kp_compare_timing(&back.shapes[0].cand, &back.shapes[0].base, 0.02, 3, &c) == 0);
    CHECK(c.from_samples && c.status == KP_CMP_SLOWER);

    /* Printers show the SOL score, headroom and regime. */
    kp_shape_worth sw;
    kp_shape_worth_of(r, &r->shapes[0], &sw);
    CHECK(sw.known && sw.sol.regime == KP_REGIME_MEMORY);
    CHECK_NEAR(sw.score, kp_sol_score(r->shapes[0].cand.median, r->shapes[0].base.median, sw.sol.sol_s), 1e-15);
    CHECK(sw.score > 0.5 && sw.score < 1.01);
    char sc[16];
    snprintf(sc, sizeof sc, "%.2f", sw.score);
    char tpath[] = "/tmp/kp_test_worth_XXXXXX";
    char *t = to_file(kp_print_table, r, tpath);
    CHECK(t && strstr(t, "SOL score") && strstr(t, sc) && strstr(t, "memory"));
    remove(tpath);
    free(t);
    char mpath[] = "/tmp/kp_test_worth_XXXXXX";
    char *m = to_file(kp_print_md, r, mpath);
    CHECK(m && strstr(m, "| SOL score | left | regime |") && strstr(m, sc));
    remove(mpath);
    free(m);

    /* The HTML page: self-contained, with the roofline's points. */
    const kp_result *both[2] = {r, &back};
    const char *names[2] = {"a.json", "b<&>.json"};
    char hpath[] = "/tmp/kp_test_worth_XXXXXX";
    int fd = mkstemp(hpath);
    FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    char *h = NULL;
    if (f) {
        kp_print_html(f, both, names, 2);
        fflush(f);
        h = slurp(f);
        fclose(f);
    }
    remove(hpath);
    CHECK(h && strstr(h, "<!DOCTYPE html>") && strstr(h, "</html>"));
    CHECK(h && !strstr(h, "<script") && !strstr(h, "http://www.w3.org/1999") && !strstr(h, "<link"));
    CHECK(h && strstr(h, "class=\"pt cand\"") && strstr(h, "class=\"pt base\""));
    CHECK(h && strstr(h, "b&lt;&amp;&gt;.json") && !strstr(h, "b<&>.json")); /* escaped */
    CHECK(h && strstr(h, "f32-10-keep-x runs") != NULL);
    free(h);

    kp_result_free(&back);
    remove(path);
    free(j);
    kp_result_free(r);
    free(r);

    /* Not results. */
    kp_json *v = NULL;
    const char *foreign = "{\"traceEvents\": []}";
    CHECK(kp_json_parse(foreign, strlen(foreign), &v, err, sizeof err) == 0);
    CHECK(kp_result_from_json(v, &back, &schema, err, sizeof err) == -1 && strstr(err, "not a kproof result"));
    kp_json_free(v);
    const char *unknown_op = "{\"tool\": \"kproof\", \"schema\": 1, \"op\": \"conv_f32\", \"shapes\": []}";
    CHECK(kp_json_parse(unknown_op, strlen(unknown_op), &v, err, sizeof err) == 0);
    CHECK(kp_result_from_json(v, &back, &schema, err, sizeof err) == -1 && strstr(err, "conv_f32"));
    kp_json_free(v);
    const char *bad_shape = "{\"tool\": \"kproof\", \"schema\": 1, \"op\": \"softmax_f32\", \"verdict\": \"PASS\","
                            " \"backend\": \"cuda\", \"shapes\": [{\"shape\": [8192], \"verdict\": \"PASS\"}]}";
    CHECK(kp_json_parse(bad_shape, strlen(bad_shape), &v, err, sizeof err) == 0);
    CHECK(kp_result_from_json(v, &back, &schema, err, sizeof err) == -1 && strstr(err, "shape 0"));
    CHECK(back.shapes == NULL);
    kp_json_free(v);
    CHECK(kp_result_read_file("/nonexistent.json", &back, &schema, err, sizeof err) == -1);
    CHECK(strstr(err, "/nonexistent.json: cannot open") != NULL);

    char lab[96];
    kp_candidate_label("kernels/softmax/cuda/f32-10-keep-x.cu", lab, sizeof lab);
    CHECK(strcmp(lab, "f32-10-keep-x") == 0);
    kp_candidate_label("", lab, sizeof lab);
    CHECK(strcmp(lab, "candidate") == 0);
    kp_candidate_label(".hidden", lab, sizeof lab);
    CHECK(strcmp(lab, ".hidden") == 0);
}

/* The result JSON of r, parsed, edited by the caller, read back. */
static kp_json *json_of(const kp_result *r)
{
    char path[] = "/tmp/kp_test_worth_XXXXXX";
    char *j = to_file(kp_print_json, r, path);
    remove(path);
    kp_json *v = NULL;
    char err[300];
    if (!j || kp_json_parse(j, strlen(j), &v, err, sizeof err))
        v = NULL;
    free(j);
    return v;
}

static kp_json *field(kp_json *v, const char *a, const char *b, const char *c)
{
    kp_json *o = (kp_json *)kp_json_get(v, a);
    if (o && o->type == KP_JSON_ARR)
        o = (kp_json *)kp_json_at(o, 0);
    if (b)
        o = (kp_json *)kp_json_get(o, b);
    if (c)
        o = (kp_json *)kp_json_get(o, c);
    return o;
}

/* Reading refuses numbers out of their fields' range (no conversion to an
 * integer type that is undefined), times that the verdict disowns, and
 * JSON that is not an eval's. */
static void test_reader_checks(void)
{
    kp_result *r = softmax_result(125.55e-6, 140.94e-6);
    kp_result back;
    int schema = 0;
    char err[400];
    static const struct {
        const char *a, *b, *c;
        double v;
        const char *say;
    } bad[] = {
        {"shapes", "timing", "samples", 1e300, "shape 0: timing.samples is 1e+300"},
        {"shapes", "timing", "host_bound_samples", -1, "timing.host_bound_samples is -1"},
        {"shapes", "correctness", "bad", -1, "correctness.bad is -1"},
        {"shapes", "correctness", "checked", 1e300, "correctness.checked"},
        {"shapes", "correctness", "first_bad", -2, "correctness.first_bad"},
        {"env", "sm_count", NULL, 1e300, "env.sm_count"},
        {"env", "l2_bytes", NULL, -1, "env.l2_bytes"},
        {"env", "throttle_before", NULL, -1, "env.throttle_before is -1"},
        {"env", "throttle_after", NULL, 1.8446744073709552e19, "env.throttle_after"},
        {"env", "sm_mhz_before", NULL, 1e300, "env.sm_mhz_before"},
        {"env", "mem_mhz_after", NULL, -1e300, "env.mem_mhz_after"},
        {"env", "peak_gbs", NULL, 1e300, "env.peak_gbs"},
        {"env", "peak_gbs", NULL, 1e-300, "below any device's"},
        {"env", "peak_gflops_bf16", NULL, -1, "env.peak_gflops_bf16"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kp_json *v = json_of(r);
        kp_json *f = field(v, bad[i].a, bad[i].b, bad[i].c);
        if (!(f && f->type == KP_JSON_NUM))
            fprintf(stderr, "  no number at %s.%s.%s\n", bad[i].a, bad[i].b, bad[i].c ? bad[i].c : "");
        CHECK(f && f->type == KP_JSON_NUM);
        if (!f) {
            kp_json_free(v);
            continue;
        }
        f->num = bad[i].v;
        err[0] = '\0';
        CHECK(kp_result_from_json(v, &back, &schema, err, sizeof err) == -1);
        if (!strstr(err, bad[i].say))
            fprintf(stderr, "  expected '%s' in '%s'\n", bad[i].say, err);
        CHECK(strstr(err, bad[i].say) != NULL);
        kp_json_free(v);
    }
    /* The largest values that fit still read. */
    kp_json *v = json_of(r);
    field(v, "env", "throttle_before", NULL)->num = 18446744073709549568.0;
    field(v, "env", "l2_bytes", NULL)->num = 9223372036854774784.0;
    field(v, "shapes", "correctness", "first_bad")->num = -1;
    CHECK(kp_result_from_json(v, &back, &schema, err, sizeof err) == 0);
    CHECK(back.env.throttle_before == 18446744073709549568ull && back.env.l2_bytes == 9223372036854774784ll);
    kp_result_free(&back);
    kp_json_free(v);
    v = json_of(r);
    field(v, "schema", NULL, NULL)->num = 1e300;
    CHECK(kp_result_from_json(v, &back, &schema, err, sizeof err) == -1 && strstr(err, "not a schema version"));
    kp_json_free(v);

    /* A REJECTED shape (the timer check judges after timing) reads back
     * untimed; a NOISY one keeps its time. */
    static const kp_verdict vs[] = {KP_REJECTED, KP_WRONG, KP_ERROR, KP_NOISY};
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++) {
        r->shapes[0].verdict = vs[i];
        snprintf(r->shapes[0].check_name, sizeof r->shapes[0].check_name, "timer");
        v = json_of(r);
        CHECK(v && field(v, "shapes", "timing", "median_s") != NULL); /* the file holds it */
        CHECK(kp_result_from_json(v, &back, &schema, err, sizeof err) == 0);
        int noisy = vs[i] == KP_NOISY;
        CHECK(back.shapes[0].verdict == vs[i] && back.shapes[0].timed == noisy);
        CHECK(noisy ? back.shapes[0].cand.median > 0 && back.shapes[0].base_name[0] : !back.shapes[0].base_name[0]);
        kp_result_free(&back);
        kp_json_free(v);
    }

    /* worth --json and compare --json are no eval results. */
    const char *cmp = "{\"tool\": \"kproof\", \"command\": \"compare\", \"schema\": 1, \"op\": \"softmax_f32\","
                      " \"shapes\": []}";
    CHECK(kp_json_parse(cmp, strlen(cmp), &v, err, sizeof err) == 0);
    CHECK(kp_result_from_json(v, &back, &schema, err, sizeof err) == -1);
    CHECK(strstr(err, "not an eval result") && strstr(err, "kproof compare --json"));
    kp_json_free(v);
    kp_result_free(r);
    free(r);
}

/* The page never shows a disowned time as a speed, and a ceiling no
 * device has (or a time too small to plot) neither loops over billions of
 * decades nor leaves the page without its note. */
static void test_html_guards(void)
{
    kp_result *r = softmax_result(125.55e-6, 140.94e-6);
    char hpath[] = "/tmp/kp_test_worth_XXXXXX";
    const kp_result *one[1] = {r};

    r->shapes[0].verdict = KP_REJECTED;
    snprintf(r->shapes[0].check_name, sizeof r->shapes[0].check_name, "timer");
    int fd = mkstemp(hpath);
    FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    char *h = NULL;
    if (f) {
        kp_print_html(f, one, NULL, 1);
        fflush(f);
        h = slurp(f);
        fclose(f);
    }
    remove(hpath);
    CHECK(h && strstr(h, "no time (timer check)") && !strstr(h, "class=\"pt cand\""));
    CHECK(h && strstr(h, "REJECTED by the timer check") && !strstr(h, "f32-10-keep-x runs"));
    CHECK(h && !strstr(h, "125.6 us"));
    free(h);

    r->shapes[0].verdict = KP_PASS;
    r->env.peak_gbs = 1e300; /* read from no file: the reader refuses it */
    snprintf(r->env.gpu, sizeof r->env.gpu, "NVIDIA H100 SXM");
    for (int k = 0; k < 2; k++) {
        if (k) {
            r->env.peak_gbs = 0;
            r->shapes[0].cand.median = 5e-324;
        }
        char p2[] = "/tmp/kp_test_worth_XXXXXX";
        fd = mkstemp(p2);
        f = fd >= 0 ? fdopen(fd, "w+") : NULL;
        h = NULL;
        if (f) {
            kp_print_html(f, one, NULL, 1);
            fflush(f);
            h = slurp(f);
            fclose(f);
        }
        remove(p2);
        CHECK(h && strlen(h) < 200000 && strstr(h, "</html>"));
        CHECK(h && strstr(h, k ? "point outside the plot's range left out" : "out of any device's range not drawn"));
        free(h);
    }
    kp_result_free(r);
    free(r);
}

int main(void)
{
    test_limits();
    test_sol();
    test_arithmetic();
    test_judge();
    test_compare();
    test_refusal();
    test_trace();
    test_results();
    test_reader_checks();
    test_html_guards();
    TEST_MAIN_END();
}

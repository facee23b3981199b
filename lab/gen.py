"""The lab variants timed in results/2026-11-30-h200-session4/call2-5a6a419:
layernorm 05 (f32 and bf16) with cache hints (x loaded without L1
allocation, w and b kept in L1 with evict_last, y stored streaming),
with clamped branch-free w/b loads in the output loop, and both; and
softmax bf16 07 with streaming stores. Written into kernels/ as
*-9N-lab-*.cu (marked kproof-best: no) so gpu-check.sh's kernels stage
times them; delete them after the run. None became a project step: the
numbers are in that results folder's README."""
import re, sys, os
root = os.path.dirname(os.path.abspath(__file__)) + "/.."
def patch(src, dtype, hints, clamp):
    if dtype == "f32":
        V, T, LX, LP, SY = "4", "float", (
            'float4 t; asm("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(t.x), "=f"(t.y), "=f"(t.z), "=f"(t.w) : "l"(reinterpret_cast<const float4 *>(p) + i));\n        v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;'), (
            'float4 t; asm("ld.global.nc.L1::evict_last.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(t.x), "=f"(t.y), "=f"(t.z), "=f"(t.w) : "l"(reinterpret_cast<const float4 *>(p) + i));\n        v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;'), (
            '__stcs(reinterpret_cast<float4 *>(p) + i, make_float4(v[0], v[1], v[2], v[3]));')
        ty = "float"
    else:
        V = "8"
        LX = ('uint4 t; asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(t.x), "=r"(t.y), "=r"(t.z), "=r"(t.w) : "l"(reinterpret_cast<const uint4 *>(p) + i));\n        unpack2(t.x, v); unpack2(t.y, v + 2); unpack2(t.z, v + 4); unpack2(t.w, v + 6);')
        LP = ('uint4 t; asm("ld.global.nc.L1::evict_last.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(t.x), "=r"(t.y), "=r"(t.z), "=r"(t.w) : "l"(reinterpret_cast<const uint4 *>(p) + i));\n        unpack2(t.x, v); unpack2(t.y, v + 2); unpack2(t.z, v + 4); unpack2(t.w, v + 6);')
        SY = ('__stcs(reinterpret_cast<uint4 *>(p) + i, make_uint4(pack2(v), pack2(v + 2), pack2(v + 4), pack2(v + 6)));')
        ty = "kp_bf16"
    # lab methods on both vec specialisations
    m1 = ("    static __device__ __forceinline__ void load_x(const %s *p, int64_t i, float *v) { load(p, i, v); }\n"
          "    static __device__ __forceinline__ void load_p(const %s *p, int64_t i, float *v) { load(p, i, v); }\n"
          "    static __device__ __forceinline__ void store_y(%s *p, int64_t i, const float *v) { store(p, i, v); }\n") % (ty, ty, ty)
    if hints:
        mv = ("    static __device__ __forceinline__ void load_x(const %s *p, int64_t i, float *v) {\n        %s\n    }\n"
              "    static __device__ __forceinline__ void load_p(const %s *p, int64_t i, float *v) {\n        %s\n    }\n"
              "    static __device__ __forceinline__ void store_y(%s *p, int64_t i, const float *v) {\n        %s\n    }\n") % (ty, LX, ty, LP, ty, SY)
    else:
        mv = m1
    src = re.sub(r"(template <> struct vec<1> \{\n(?:.*\n)*?)(\};)", lambda m: m.group(1) + m1 + m.group(2), src, count=1)
    src = re.sub(r"(template <> struct vec<%s> \{\n(?:.*\n)*?)(\};)" % V, lambda m: m.group(1) + mv + m.group(2), src, count=1)
    # regs kernel only (first occurrences)
    src = src.replace("vec<VEC>::load(xr, i, &v[k * VEC]);", "vec<VEC>::load_x(xr, i, &v[k * VEC]);", 1)
    old_out = re.search(r"#pragma unroll\n    for \(int k = 0; k < CHUNKS; k\+\+\) \{\n        int i = k \* TPR \+ t;\n        if \(i < n\) \{\n            float wv\[VEC\], bv\[VEC\];\n            vec<VEC>::load\(w, i, wv\);\n            vec<VEC>::load\(b, i, bv\);\n((?:.*\n)*?)            vec<VEC>::store\(yr, i, &v\[k \* VEC\]\);\n        \}\n    \}\n", src)
    assert old_out, "output loop not found"
    body = old_out.group(1)
    if clamp:
        new_out = ("#pragma unroll\n    for (int k = 0; k < CHUNKS; k++) {\n        const int i = k * TPR + t;\n        const int ic = i < n ? i : 0;\n"
                   "        float wv[VEC], bv[VEC];\n        vec<VEC>::load_p(w, ic, wv);\n        vec<VEC>::load_p(b, ic, bv);\n"
                   + body.replace("            ", "        ", 1) + "        if (i < n) vec<VEC>::store_y(yr, i, &v[k * VEC]);\n    }\n")
    else:
        new_out = old_out.group(0).replace("vec<VEC>::load(w,", "vec<VEC>::load_p(w,").replace("vec<VEC>::load(b,", "vec<VEC>::load_p(b,").replace("vec<VEC>::store(yr, i, &v[k * VEC])", "vec<VEC>::store_y(yr, i, &v[k * VEC])")
    src = src.replace(old_out.group(0), new_out, 1)
    return src

for dtype, name in (("f32", "f32-05-warp-per-row.cu"), ("bf16", "bf16-05-warp-per-row.cu")):
    src = open(f"{root}/kernels/layernorm/cuda/{name}").read()
    for tag, hints, clamp in (("hints", 1, 0), ("clamp", 0, 1), ("both", 1, 1)):
        n = {"hints": 91, "clamp": 92, "both": 93}[tag]
        out = f"{root}/kernels/layernorm/cuda/{dtype}-{n}-lab-{tag}.cu"
        text = patch(src, dtype, hints, clamp).replace(
            " */\n", f" * LAB {tag}: 05 with {tag}; an experiment, not a project step.\n * kproof-best: no\n */\n", 1)
        open(out, "w").write(text)
        print(out)
s = open(f"{root}/kernels/softmax/cuda/bf16-07-stream-rows.cu").read()
old = "                vec<8>::store(yr, i, &v[k * 8]);"
assert s.count(old) == 1
s = s.replace(old, "                __stcs(reinterpret_cast<uint4 *>(yr) + i, make_uint4(pack2(&v[k * 8]), pack2(&v[k * 8 + 2]), pack2(&v[k * 8 + 4]), pack2(&v[k * 8 + 6])));")
s = s.replace(" */\n", " * LAB stcs: 07 with streaming stores in the stream kernel.\n * kproof-best: no\n */\n", 1)
open(f"{root}/kernels/softmax/cuda/bf16-91-lab-stcs.cu", "w").write(s)
print("kernels/softmax/cuda/bf16-91-lab-stcs.cu")

// The atomic functions of the CUDA C++ Programming Guide ("Atomic Functions"), each for every
// type it takes, with its _block and _system variants, on global memory; and the built-in
// __nv_atomic_* functions with their memory orders and scopes.
//
// Every kernel is written so that its final memory image does not depend on the order in which
// the threads' atomics happen: commutative operations, and for exchanges the multiset of
// returned values. A _block variant only promises atomicity among the threads of one block, so
// _block operations target a slot per block (slot[blockIdx.x]).
//
// Launches and expectations: atomic_functions.launch.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

// atomicAdd on int, unsigned int and unsigned long long int; the old values of one counter are
// tickets 0..n-1, each counted once in seen[].
extern "C" __global__ void atomic_add_integers(int *i32, unsigned *u32, unsigned long long *u64,
                                               int *i32_block, unsigned *seen)
{
    unsigned g = global_id();
    atomicAdd(&i32[0], (int)g - 256);
    atomicAdd_system(&i32[1], 2);
    atomicAdd_block(&i32_block[blockIdx.x], -(int)threadIdx.x);
    atomicAdd(&u32[0], 3u);
    atomicAdd_system(&u32[1], 0x00800001u);   // wraps modulo 2^32
    atomicAdd_block(&u32[2 + blockIdx.x], g);
    atomicAdd(&u64[0], 1ull << 33);
    atomicAdd_system(&u64[1], (unsigned long long)g << 32);
    atomicAdd_block(&u64[2 + blockIdx.x], 0xffffffffull);
    unsigned ticket = atomicAdd(&u32[6], 1u);
    atomicAdd(&seen[ticket], 1u);
}

// atomicAdd on float and double (all partial sums are exact, so any order gives the same
// result), and the flush of subnormal inputs and results by float atomicAdd on global memory
// (PTX ISA, atom: "atom.add.f32 ... flushes subnormal inputs and results to sign-preserving
// zero on global memory").
extern "C" __global__ void atomic_add_floats(float *f32, double *f64, float *f32_block,
                                             double *f64_block, float *ftz, float *ftz_old)
{
    unsigned g = global_id();
    atomicAdd(&f32[0], (float)g * 0.25f);
    atomicAdd_system(&f32[1], -0.5f);
    atomicAdd_block(&f32_block[blockIdx.x], (float)threadIdx.x);
    atomicAdd(&f64[0], (double)g * 0x1p-20);
    atomicAdd_system(&f64[1], 1e10);
    atomicAdd_block(&f64_block[blockIdx.x], -0.125);
    if (g == 0) {
        ftz_old[0] = atomicAdd(&ftz[0], __int_as_float(1));              // 0 + 2^-149
        ftz_old[1] = atomicAdd(&ftz[1], __int_as_float(0x80800000));     // 1.5*2^-126 - 2^-126
    }
}

// atomicAdd on __half, __half2, __nv_bfloat16 and __nv_bfloat162 (cc 7.x / 8.x); every partial
// sum is exact in the format.
extern "C" __global__ void atomic_add_halves(__half *h, __half2 *h2, __nv_bfloat16 *b,
                                             __nv_bfloat162 *b2)
{
    unsigned g = global_id();
    atomicAdd(&h[0], __float2half(1.0f));
    atomicAdd(&h[1], __float2half(-0.25f));
    atomicAdd(&h2[0], __floats2half2_rn(1.0f, -0.5f));
    atomicAdd(&b[g % 4], __float2bfloat16(1.0f));
    atomicAdd(&b2[g % 2], __floats2bfloat162_rn(0.5f, 2.0f));
}

// The cc 9.x additions: atomicAdd on float2 and float4, atomicExch and atomicCAS on a 16-byte
// type. For compute_80 the same memory image is produced with scalar atomics and, for the
// 16-byte exchange done by one thread, plain accesses.
struct __align__(16) Pair {
    unsigned long long lo, hi;
};

extern "C" __global__ void atomic_wide(float2 *v2, float4 *v4, Pair *p, Pair *old, Pair *sum)
{
    unsigned g = global_id();
#if __CUDA_ARCH__ >= 900
    atomicAdd(&v2[0], make_float2(1.0f, -2.0f));
    atomicAdd_block(&v2[1 + blockIdx.x], make_float2(0.5f, (float)threadIdx.x));
    atomicAdd_system(&v4[0], make_float4(0.5f, 1.0f, -1.5f, 4.0f));
    if (g == 0) {
        old[0] = atomicExch(&p[0], Pair{1, 2});
        old[1] = atomicCAS(&p[1], Pair{3, 4}, Pair{5, 6});   // hits
        old[2] = atomicCAS(&p[2], Pair{3, 4}, Pair{5, 6});   // misses: hi differs
    }
    // A 16-byte CAS loop adding (1, g) to a pair.
    Pair seen = sum[0];
    for (;;) {
        Pair want{seen.lo + 1, seen.hi + g};
        Pair got = atomicCAS(&sum[0], seen, want);
        if (got.lo == seen.lo && got.hi == seen.hi)
            break;
        seen = got;
    }
#else
    atomicAdd(&v2[0].x, 1.0f);
    atomicAdd(&v2[0].y, -2.0f);
    atomicAdd_block(&v2[1 + blockIdx.x].x, 0.5f);
    atomicAdd_block(&v2[1 + blockIdx.x].y, (float)threadIdx.x);
    atomicAdd_system(&v4[0].x, 0.5f);
    atomicAdd_system(&v4[0].y, 1.0f);
    atomicAdd_system(&v4[0].z, -1.5f);
    atomicAdd_system(&v4[0].w, 4.0f);
    if (g == 0) {
        old[0] = p[0];
        p[0] = Pair{1, 2};
        old[1] = p[1];
        if (p[1].lo == 3 && p[1].hi == 4)
            p[1] = Pair{5, 6};
        old[2] = p[2];
        if (p[2].lo == 3 && p[2].hi == 4)
            p[2] = Pair{5, 6};
    }
    atomicAdd(&sum[0].lo, 1ull);
    atomicAdd(&sum[0].hi, (unsigned long long)g);
#endif
}

// atomicSub on int and unsigned; atomicExch on int, unsigned, unsigned long long and float.
// Each exchange chain returns the initial value and every stored value but the last exactly
// once: seen[chain * 513 + value] counts the returned values, values 1..512.
extern "C" __global__ void atomic_sub_exch(int *i32, unsigned *u32, int *i32_block,
                                           unsigned long long *u64, float *f32, unsigned *seen)
{
    unsigned g = global_id();
    atomicSub(&i32[0], (int)g);
    atomicSub_system(&i32[1], -2);
    atomicSub_block(&i32_block[blockIdx.x], 1);
    atomicSub(&u32[0], 1u);                  // wraps below zero
    atomicSub_system(&u32[1], 2u);
    atomicSub_block(&u32[2 + blockIdx.x], threadIdx.x);

    unsigned a = atomicExch(&u32[6], g + 1);
    atomicAdd(&seen[0 * 513 + a], 1u);
    int b = atomicExch_system(&i32[2], (int)g + 1);
    atomicAdd(&seen[1 * 513 + b], 1u);
    unsigned long long c = atomicExch(&u64[0], (unsigned long long)(g + 1) << 40);
    atomicAdd(&seen[2 * 513 + (unsigned)(c >> 40)], 1u);
    float d = atomicExch(&f32[0], (float)(g + 1));
    atomicAdd(&seen[3 * 513 + (unsigned)d], 1u);
    // _block exchanges on per-block slots; the values stay inside the block's own chain.
    unsigned e = atomicExch_block(&u32[7 + blockIdx.x], threadIdx.x + 1);
    atomicAdd(&seen[4 * 513 + blockIdx.x * 129 + e], 1u);
    atomicExch_system(&u64[1], 0x123456789abcdefull);   // every thread stores the same value
    atomicExch_block(&f32[1 + blockIdx.x], -2.5f);
    atomicExch_system(&f32[5], 7.0f);
    atomicExch_block(&i32_block[4 + blockIdx.x], 9);
    atomicExch_block(&u64[2 + blockIdx.x], 1ull << 63);
}

// atomicMin and atomicMax on int, unsigned, long long and unsigned long long.
extern "C" __global__ void atomic_min_max(int *i32, unsigned *u32, long long *i64,
                                          unsigned long long *u64, int *i32_block,
                                          unsigned long long *u64_block)
{
    unsigned g = global_id();
    int x = (int)g - 200;                     // -200 .. 311
    long long y = (long long)x << 32;
    unsigned long long w = (unsigned long long)g * 0x100000001ull;
    atomicMin(&i32[0], x);
    atomicMax(&i32[1], x);
    atomicMin_system(&i32[2], -x);
    atomicMax_system(&i32[3], -x);
    atomicMin_block(&i32_block[blockIdx.x], x);
    atomicMax_block(&i32_block[4 + blockIdx.x], x);
    atomicMin(&u32[0], (unsigned)x);          // unsigned: -1 is the largest
    atomicMax(&u32[1], (unsigned)x);
    atomicMin_system(&u32[2], g * 7);
    atomicMax_system(&u32[3], g * 7);
    atomicMin_block(&u32[4 + blockIdx.x], threadIdx.x + 10);
    atomicMax_block(&u32[8 + blockIdx.x], threadIdx.x + 10);
    atomicMin(&i64[0], y);
    atomicMax(&i64[1], y);
    atomicMin_system(&i64[2], -y);
    atomicMax_system(&i64[3], -y);
    atomicMin_block(&i64[4 + blockIdx.x], y);
    atomicMax_block(&i64[8 + blockIdx.x], y);
    atomicMin(&u64[0], w);
    atomicMax(&u64[1], w);
    atomicMin_system(&u64[2], w + 5);
    atomicMax_system(&u64[3], ~w);
    atomicMin_block(&u64_block[blockIdx.x], w);
    atomicMax_block(&u64_block[4 + blockIdx.x], w);
}

// atomicInc and atomicDec (unsigned int): wrap-around counters; the old values of the first
// two are counted in hist.
extern "C" __global__ void atomic_inc_dec(unsigned *c, unsigned *hist, unsigned *c_block)
{
    unsigned a = atomicInc(&c[0], 9u);        // ((old >= 9) ? 0 : old + 1)
    atomicAdd(&hist[a], 1u);
    unsigned d = atomicDec(&c[1], 9u);        // (((old == 0) || (old > 9)) ? 9 : old - 1)
    atomicAdd(&hist[10 + d], 1u);
    atomicInc_system(&c[2], 0xffffffffu);     // a plain increment until 0xffffffff, then 0
    atomicDec_system(&c[3], 1000u);
    atomicDec(&c[4], 0u);                     // always stores 0
    atomicInc_block(&c_block[blockIdx.x], 100u);
    atomicDec_block(&c_block[4 + blockIdx.x], 50u);
}

// atomicCAS on int, unsigned, unsigned long long and unsigned short: compare-and-swap loops
// (fetch-add, saturating increment, wrap-around 16-bit add) and single hits and misses.
__device__ int cas_add(int *p, int v)
{
    int old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, assumed + v);
    } while (old != assumed);
    return old;
}

extern "C" __global__ void atomic_cas(int *i32, unsigned *u32, unsigned long long *u64,
                                      unsigned short *u16, unsigned *u32_block, unsigned *old)
{
    unsigned g = global_id();
    cas_add(&i32[0], (int)g);
    // Saturating increment to 300.
    unsigned cur = u32[0], prev;
    while (cur < 300u) {
        prev = atomicCAS_system(&u32[0], cur, cur + 1);
        if (prev == cur)
            break;
        cur = prev;
    }
    // Block-scope fetch-add on the block's slot.
    unsigned b = u32_block[blockIdx.x], seen;
    do {
        seen = b;
        b = atomicCAS_block(&u32_block[blockIdx.x], seen, seen + 2);
    } while (b != seen);
    // 64-bit fetch-add of g << 20 (system scope).
    unsigned long long w = u64[0], was;
    do {
        was = w;
        w = atomicCAS_system(&u64[0], was, was + ((unsigned long long)g << 20));
    } while (w != was);
    // 16-bit: +1 and +0x100 (which wraps to 0 after 256 adds).
    unsigned short h = u16[0], hs;
    do {
        hs = h;
        h = atomicCAS(&u16[0], hs, (unsigned short)(hs + 1));
    } while (h != hs);
    h = u16[1];
    do {
        hs = h;
        h = atomicCAS(&u16[1], hs, (unsigned short)(hs + 0x100));
    } while (h != hs);
    if (g == 0) {
        old[0] = atomicCAS(&i32[1], 5, -5);                      // hit
        old[1] = atomicCAS(&i32[2], 5, -5);                      // miss
        old[2] = atomicCAS(&u32[1], 0xffffffffu, 1u);            // hit
        unsigned long long o = atomicCAS(&u64[1], 1ull << 32, 7ull);   // miss: low words equal
        old[3] = (unsigned)o;
        old[4] = (unsigned)(o >> 32);
        old[5] = atomicCAS(&u16[2], (unsigned short)0xbeef, (unsigned short)0x1234);   // hit
        old[6] = atomicCAS_block(&u32_block[4], 8u, 9u);         // miss
    }
}

// atomicAnd, atomicOr and atomicXor on int, unsigned, long long and unsigned long long.
extern "C" __global__ void atomic_bitwise(int *i32, unsigned *u32, long long *i64,
                                          unsigned long long *u64, unsigned *u32_block)
{
    unsigned g = global_id();
    atomicOr(&u32[0], 1u << (g % 32));
    atomicAnd(&u32[1], ~(1u << (g % 32)));
    atomicXor(&u32[2], g + 1);                // xor of 1..512
    atomicOr_system(&u32[3], (g & 1) << 31);
    atomicAnd_system(&u32[4], g | 0xfffffc00u);
    atomicXor_system(&u32[5], 0xffu);
    atomicOr_block(&u32_block[blockIdx.x], 1u << (threadIdx.x % 32));
    atomicAnd_block(&u32_block[4 + blockIdx.x], ~(1u << (threadIdx.x / 4)));
    atomicXor_block(&u32_block[8 + blockIdx.x], threadIdx.x);
    atomicOr(&i32[0], 1 << (g % 31));
    atomicAnd(&i32[1], ~(1 << (g % 16)));
    atomicXor(&i32[2], -1);                   // an even number of times
    atomicOr_system(&i32[3], (int)g);
    atomicAnd_system(&i32[4], -(int)(g + 1));
    atomicXor_system(&i32[5], (int)g);
    atomicOr(&i64[0], 1ll << (g % 64));
    atomicAnd(&i64[1], ~(1ll << (g % 63)));
    atomicXor(&i64[2], (long long)g << 40);
    atomicOr_block(&i64[3 + blockIdx.x], (long long)threadIdx.x << 56);
    atomicAnd_system(&i64[7], (long long)g - 512);
    atomicXor_block(&i64[8 + blockIdx.x], -1ll);
    atomicOr(&u64[0], 1ull << (g % 64));
    atomicAnd(&u64[1], ~(1ull << (g % 64)));
    atomicXor(&u64[2], (unsigned long long)(g + 1) << 32);
    atomicOr_system(&u64[3], 1ull << (g / 8));
    atomicAnd_block(&u64[4 + blockIdx.x], ~(unsigned long long)threadIdx.x);
    atomicXor_system(&u64[8], 0x8000000000000001ull);
}

// The built-in atomic functions (__nv_atomic_*): every memory order and thread scope.
extern "C" __global__ void nv_atomic_builtins(unsigned *u32, unsigned long long *u64,
                                              float *f32, double *f64, unsigned *flags)
{
    unsigned g = global_id();
    __nv_atomic_fetch_add(&u32[0], 1u, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_add(&u32[0], 1u, __NV_ATOMIC_CONSUME, __NV_THREAD_SCOPE_SYSTEM);
    __nv_atomic_fetch_add(&u32[0], 1u, __NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_add(&u32[0], 1u, __NV_ATOMIC_RELEASE, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_add(&u32[0], 1u, __NV_ATOMIC_ACQ_REL, __NV_THREAD_SCOPE_SYSTEM);
    __nv_atomic_fetch_add(&u32[0], 1u, __NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_sub(&u32[1], 3u, __NV_ATOMIC_ACQ_REL, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_and(&u32[2], ~(1u << (g % 32)), __NV_ATOMIC_RELEASE, __NV_THREAD_SCOPE_SYSTEM);
    __nv_atomic_fetch_or(&u32[3], 1u << (g % 32), __NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_xor(&u32[4], g, __NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_SYSTEM);
    __nv_atomic_fetch_min(&u32[5], g + 3, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_max(&u32[6], g + 3, __NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_DEVICE);
    // Block and thread scope on the block's own slot (thread scope: one thread per slot).
    __nv_atomic_fetch_add(&u32[8 + blockIdx.x], 2u, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_BLOCK);
    if (threadIdx.x == 0)
        __nv_atomic_fetch_add(&u32[12 + blockIdx.x], 5u, __NV_ATOMIC_ACQ_REL,
                              __NV_THREAD_SCOPE_THREAD);
    __nv_atomic_fetch_add(&u64[0], (unsigned long long)g << 32, __NV_ATOMIC_RELAXED,
                          __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_max(&u64[1], (unsigned long long)(g % 300) << 40, __NV_ATOMIC_ACQ_REL,
                          __NV_THREAD_SCOPE_SYSTEM);
    __nv_atomic_fetch_add(&f32[0], 0.5f, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_add(&f64[0], 0.25, __NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_DEVICE);
    // Exchange and compare-exchange: a CAS-loop add and a chain whose old values are counted.
    unsigned expected = __nv_atomic_load_n(&u32[7], __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
    while (!__nv_atomic_compare_exchange_n(&u32[7], &expected, expected + 10, false,
                                           __NV_ATOMIC_ACQ_REL, __NV_ATOMIC_RELAXED,
                                           __NV_THREAD_SCOPE_DEVICE)) {
    }
    unsigned long long e64 = __nv_atomic_load_n(&u64[2], __NV_ATOMIC_ACQUIRE,
                                                __NV_THREAD_SCOPE_SYSTEM);
    while (!__nv_atomic_compare_exchange_n(&u64[2], &e64, e64 + g, true, __NV_ATOMIC_SEQ_CST,
                                           __NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_SYSTEM)) {
    }
    unsigned prev = __nv_atomic_exchange_n(&u32[20], g + 1, __NV_ATOMIC_ACQ_REL,
                                           __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_fetch_add(&flags[prev], 1u, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
    // Loads of a value nobody writes, in every load order, and stores of one value.
    unsigned seven = __nv_atomic_load_n(&u32[21], __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE)
                   + __nv_atomic_load_n(&u32[21], __NV_ATOMIC_CONSUME, __NV_THREAD_SCOPE_SYSTEM)
                   + __nv_atomic_load_n(&u32[21], __NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_DEVICE)
                   + __nv_atomic_load_n(&u32[21], __NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_BLOCK);
    __nv_atomic_fetch_add(&u32[22], seven, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_thread_fence(__NV_ATOMIC_ACQUIRE, __NV_THREAD_SCOPE_BLOCK);
    __nv_atomic_thread_fence(__NV_ATOMIC_RELEASE, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_thread_fence(__NV_ATOMIC_ACQ_REL, __NV_THREAD_SCOPE_SYSTEM);
    __nv_atomic_thread_fence(__NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_store_n(&u32[23], 42u, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
    __nv_atomic_store_n(&u32[24], 43u, __NV_ATOMIC_RELEASE, __NV_THREAD_SCOPE_SYSTEM);
    __nv_atomic_store_n(&u32[25], 44u, __NV_ATOMIC_SEQ_CST, __NV_THREAD_SCOPE_DEVICE);
}

// Atomic functions on shared memory (ATOMS on the GPU): every function and type of the
// Programming Guide on __shared__ variables, and a histogram in dynamic shared memory.
//
// Launches and expectations: shared_memory.launch.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

// Each block loads its slice of the buffers into shared memory, applies every atomic function
// from all its threads, and writes the slice back. The buffers hold the initial values and
// receive the results; `sums` receives, per block, the sum of the values an exchange chain
// returned plus its final value.
extern "C" __global__ void shared_every_function(int *i32, unsigned *u32, unsigned long long *u64,
                                                 long long *i64, float *f32, double *f64,
                                                 unsigned short *u16, unsigned *sums)
{
    __shared__ int si[8];
    __shared__ unsigned su[12];
    __shared__ unsigned long long sq[5];
    __shared__ long long sl[4];
    __shared__ float sf[4];
    __shared__ double sd[1];
    __shared__ __align__(8) unsigned short ss[8];   // [0] u16, [1] half, [2..3] half2, [4] bf16, [6..7] bf162

    unsigned t = threadIdx.x, b = blockIdx.x;
    if (t < 8) si[t] = i32[b * 8 + t];
    if (t < 12) su[t] = u32[b * 12 + t];
    if (t < 5) sq[t] = u64[b * 5 + t];
    if (t < 4) sl[t] = i64[b * 4 + t];
    if (t < 4) sf[t] = f32[b * 4 + t];
    if (t < 1) sd[t] = f64[b + t];
    if (t < 8) ss[t] = u16[b * 8 + t];
    __syncthreads();

    atomicAdd(&si[0], (int)t);
    atomicSub(&si[1], (int)t);
    atomicMin(&si[2], (int)t - 100);
    atomicMax_block(&si[3], (int)t - 100);
    atomicOr(&si[4], 1 << (t % 31));
    atomicAnd_system(&si[5], ~(1 << (t % 16)));
    atomicXor(&si[6], (int)t);
    int old = si[7], assumed;
    do {
        assumed = old;
        old = atomicCAS(&si[7], assumed, assumed + 1);
    } while (old != assumed);

    atomicAdd(&su[0], 1u);
    atomicInc(&su[1], 14u);
    atomicDec(&su[2], 6u);
    atomicMax(&su[3], t * 3);
    atomicMin(&su[4], t + 7);
    atomicOr(&su[5], 1u << (t / 8));
    atomicXor(&su[6], t + 1);
    atomicAdd(&su[8], atomicExch(&su[7], t + 1));
    unsigned cur = su[9], prev;
    while (cur < 100u) {
        prev = atomicCAS_block(&su[9], cur, cur + 1);
        if (prev == cur)
            break;
        cur = prev;
    }
    atomicAnd(&su[10], ~(1u << (t % 32)));
    atomicAdd_block(&su[11], 2u);

    atomicAdd(&sq[0], (unsigned long long)t << 32);
    atomicMin(&sq[1], (unsigned long long)(t + 1) << 40);
    atomicMax(&sq[2], ~(unsigned long long)t);
    unsigned long long q = sq[3], qs;
    do {
        qs = q;
        q = atomicCAS(&sq[3], qs, qs + 3);
    } while (q != qs);
    atomicOr_system(&sq[4], 1ull << (t % 64));

    atomicMin(&sl[0], -((long long)t << 33));
    atomicMax(&sl[1], (long long)t << 33);
    atomicAnd(&sl[2], ~(1ll << (t % 64)));
    atomicXor(&sl[3], (long long)t << 50);

    atomicAdd(&sf[0], 0.5f);
    atomicExch(&sf[3], 2.5f);
    if (t == 0) {
        atomicAdd(&sf[1], __int_as_float(1));            // shared memory keeps subnormals
        atomicAdd(&sf[2], __int_as_float(0x80800000));   // 1.5*2^-126 - 2^-126 = 2^-127
    }
    atomicAdd(&sd[0], 0.25);

    unsigned short h = ss[0], hs;
    do {
        hs = h;
        h = atomicCAS(&ss[0], hs, (unsigned short)(hs + 1));
    } while (h != hs);
    atomicAdd(reinterpret_cast<__half *>(&ss[1]), __float2half(1.0f));
    atomicAdd(reinterpret_cast<__half2 *>(&ss[2]), __floats2half2_rn(1.0f, 2.0f));
    atomicAdd(reinterpret_cast<__nv_bfloat16 *>(&ss[4]), __float2bfloat16(1.0f));
    atomicAdd(reinterpret_cast<__nv_bfloat162 *>(&ss[6]), __floats2bfloat162_rn(0.5f, 1.0f));
    __syncthreads();

    if (t < 8) i32[b * 8 + t] = si[t];
    // su[7] (the exchange chain's last value) and su[8] depend on the order of the exchanges;
    // their sum does not (sums).
    if (t < 12 && t != 7 && t != 8) u32[b * 12 + t] = su[t];
    if (t < 5) u64[b * 5 + t] = sq[t];
    if (t < 4) i64[b * 4 + t] = sl[t];
    if (t < 4) f32[b * 4 + t] = sf[t];
    if (t < 1) f64[b + t] = sd[t];
    if (t < 8) u16[b * 8 + t] = ss[t];
    if (t == 0) sums[b] = su[7] + su[8];
}

// A histogram in dynamic shared memory (extern __shared__, sized at launch), filled by a
// grid-stride loop and merged into the global histogram.
extern "C" __global__ void shared_hist_dynamic(const unsigned *data, unsigned n, unsigned *hist,
                                               unsigned nbins)
{
    extern __shared__ unsigned bins[];
    for (unsigned i = threadIdx.x; i < nbins; i += blockDim.x)
        bins[i] = 0;
    __syncthreads();
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[data[i] % nbins], 1u);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < nbins; i += blockDim.x)
        if (bins[i] != 0)
            atomicAdd(&hist[i], bins[i]);
}

// A shared counter every thread increments by one (the compiler aggregates it per warp) and a
// shared ticket dispenser whose tickets index a shared array: each block's tickets are a
// permutation of 0..blockDim-1.
extern "C" __global__ void shared_counters(unsigned *count, unsigned *order)
{
    __shared__ unsigned counter, tickets;
    __shared__ unsigned slot[256];
    if (threadIdx.x == 0) {
        counter = 0;
        tickets = 0;
    }
    __syncthreads();
    atomicAdd(&counter, 1u);
    unsigned k = atomicInc(&tickets, 0xffffffffu);
    slot[k] = threadIdx.x;
    __syncthreads();
    // slot[] is a permutation of the thread indices: its sum is fixed.
    atomicAdd(&order[blockIdx.x], slot[threadIdx.x]);
    if (threadIdx.x == 0)
        count[blockIdx.x] = counter + tickets;
}

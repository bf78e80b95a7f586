// The patterns people write around atomics: histograms (global and privatized in shared
// memory), grid-stride reductions, stream compaction with an atomic cursor, the "last block
// finishes the job" reduction (__threadfence + atomicInc), arg-max by packing value and index,
// float min/max through integer atomics and through compare-and-swap loops, a double add made
// from 64-bit compare-and-swap, and counting distinct values with an atomic bitmap.
//
// Launches and expectations: patterns.launch.

__device__ __forceinline__ unsigned global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ unsigned grid_size() { return gridDim.x * blockDim.x; }

// One global atomic per element, grid-stride loop: bin = value / 8 (values below 256).
extern "C" __global__ void hist_global(const unsigned *data, unsigned n, unsigned *hist)
{
    for (unsigned i = global_id(); i < n; i += grid_size())
        atomicAdd(&hist[data[i] / 8], 1u);
}

// Bytes into 256 bins: a private histogram per block in shared memory, merged at the end.
extern "C" __global__ void hist_shared_bytes(const unsigned char *data, unsigned n, unsigned *hist)
{
    __shared__ unsigned bins[256];
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x)
        bins[i] = 0;
    __syncthreads();
    for (unsigned i = global_id(); i < n; i += grid_size())
        atomicAdd(&bins[data[i]], 1u);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x)
        atomicAdd(&hist[i], bins[i]);
}

// Grid-stride sum: per-thread partial sums, a tree reduction in shared memory, one 64-bit
// atomic per block.
extern "C" __global__ void reduce_sum(const int *x, unsigned n, long long *sum)
{
    __shared__ long long part[256];
    long long acc = 0;
    for (unsigned i = global_id(); i < n; i += grid_size())
        acc += x[i];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(reinterpret_cast<unsigned long long *>(sum), (unsigned long long)part[0]);
}

// Stream compaction: each kept element takes the next slot of an atomic cursor (slots are
// handed out in a nondeterministic order; the set of kept values is fixed).
extern "C" __global__ void compact_multiples(const int *in, unsigned n, int *out, unsigned *count)
{
    for (unsigned i = global_id(); i < n; i += grid_size()) {
        int v = in[i];
        if (v % 3 == 0)
            out[atomicAdd(count, 1u)] = v;
    }
}

// The threadFenceReduction pattern: every block publishes its partial sum, fences, and takes a
// ticket; the block that takes the last ticket adds the partial sums. atomicInc bounded by
// gridDim.x - 1 returns the counter to 0 for the next launch.
extern "C" __global__ void last_block_reduce(const unsigned *x, unsigned n, unsigned *partial,
                                             unsigned *retired, unsigned *total)
{
    __shared__ unsigned part[256];
    __shared__ bool last;
    unsigned acc = 0;
    for (unsigned i = global_id(); i < n; i += grid_size())
        acc += x[i];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = part[0];
        __threadfence();
        unsigned ticket = atomicInc(retired, gridDim.x - 1);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        unsigned sum = 0;
        for (unsigned b = 0; b < gridDim.x; b++)
            sum += ((volatile unsigned *)partial)[b];
        total[0] = sum;
    }
}

// Arg-max with one 64-bit atomicMax: the value (offset to unsigned order) in the high word, the
// complemented index in the low word, so ties go to the smallest index.
extern "C" __global__ void argmax_packed(const int *x, unsigned n, unsigned long long *best)
{
    for (unsigned i = global_id(); i < n; i += grid_size()) {
        unsigned key = (unsigned)x[i] ^ 0x80000000u;
        atomicMax(best, ((unsigned long long)key << 32) | (0xffffffffu - i));
    }
}

// Float maximum and minimum two ways: with integer atomics on the float's bits (signed max for
// non-negative values, unsigned min for negative ones, and the reverse), and with a
// compare-and-swap loop around fmaxf/fminf.
__device__ void float_max_bits(float *addr, float v)
{
    if (v >= 0.0f)
        atomicMax(reinterpret_cast<int *>(addr), __float_as_int(v));
    else
        atomicMin(reinterpret_cast<unsigned *>(addr), __float_as_uint(v));
}

__device__ void float_min_bits(float *addr, float v)
{
    if (v >= 0.0f)
        atomicMin(reinterpret_cast<int *>(addr), __float_as_int(v));
    else
        atomicMax(reinterpret_cast<unsigned *>(addr), __float_as_uint(v));
}

__device__ void float_max_cas(float *addr, float v)
{
    int *word = reinterpret_cast<int *>(addr);
    int old = *word, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v)
            break;
        old = atomicCAS(word, assumed, __float_as_int(v));
    } while (old != assumed);
}

__device__ void float_min_cas(float *addr, float v)
{
    int *word = reinterpret_cast<int *>(addr);
    int old = *word, assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed, __float_as_int(fminf(__int_as_float(assumed), v)));
    } while (old != assumed);
}

extern "C" __global__ void float_extrema(const int *x, unsigned n, float *out)
{
    for (unsigned i = global_id(); i < n; i += grid_size()) {
        float v = (float)x[i] * 0.5f;
        float_max_bits(&out[0], v);
        float_min_bits(&out[1], v);
        float_max_cas(&out[2], v);
        float_min_cas(&out[3], v);
    }
}

// A double-precision atomic add built from 64-bit atomicCAS, the way it was written before
// cc 6.0 had atomicAdd(double *).
__device__ double add_double_cas(double *addr, double v)
{
    unsigned long long *word = reinterpret_cast<unsigned long long *>(addr);
    unsigned long long old = *word, assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed,
                        __double_as_longlong(__longlong_as_double(assumed) + v));
    } while (old != assumed);
    return __longlong_as_double(old);
}

extern "C" __global__ void double_add_cas(const int *x, unsigned n, double *sum)
{
    for (unsigned i = global_id(); i < n; i += grid_size())
        add_double_cas(sum, (double)x[i] * 0.5);
}

// Distinct values: atomicOr sets a value's bit and returns the word as it was, so exactly one
// thread sees each bit go from 0 to 1 and counts it.
extern "C" __global__ void distinct_bitmap(const unsigned *x, unsigned n, unsigned *bits,
                                           unsigned *distinct)
{
    for (unsigned i = global_id(); i < n; i += grid_size()) {
        unsigned v = x[i], bit = 1u << (v % 32);
        if ((atomicOr(&bits[v / 32], bit) & bit) == 0)
            atomicAdd(distinct, 1u);
    }
}

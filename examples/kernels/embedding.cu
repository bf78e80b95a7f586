// Kernels of the embedding example (examples/multi_kernel.rs) and of the launch-from-code tests
// (tests/integration/embedding.rs). The PTX and SASS listings beside this file are NVIDIA's
// output, committed; regenerate with
//   scripts/corpus.py compile examples/kernels/embedding.cu

// keys[i] = a hash of (i, seed) modulo `buckets`, for i < n.
extern "C" __global__ void fill_keys(unsigned *keys, unsigned n, unsigned buckets, unsigned seed) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned x = (i * 2654435761u) ^ seed;
        x ^= x >> 15;
        x *= 0x2c1b3c6du;
        x ^= x >> 12;
        keys[i] = x % buckets;
    }
}

// total += sum over b < buckets of hist[b] * (b + 1).
extern "C" __global__ void weigh(const unsigned *hist, unsigned buckets, unsigned long long *total) {
    unsigned b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < buckets) {
        atomicAdd(total, (unsigned long long)hist[b] * (b + 1));
    }
}

// x[i] = x[i] * k + bias[0] for i < n (a float and a pointer to a float).
extern "C" __global__ void scale(float *x, float k, const float *bias, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] * k + bias[0];
    }
}

// p[offset] = value: an out-of-range offset is the program's fault.
extern "C" __global__ void poke(unsigned *p, long long offset, unsigned value) {
    p[offset] = value;
}

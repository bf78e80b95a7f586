// Benchmark kernels compiled by NVIDIA's toolchain (issue 10): atomjit runs ptxas's SASS for
// them beside the hand-written benchmark programs. Regenerate the listings with
//   python3 scripts/corpus.py compile benches/programs/cuda/bench.cu
// (from the repository root; see README "From CUDA C++ to atomjit").

// Every thread adds 1 to one counter: ptxas aggregates the warp's adds into one RED.
extern "C" __global__ void cuda_counter(unsigned *c)
{
    atomicAdd(c, 1u);
}

// A per-CTA shared-memory histogram of `n` bytes' worth of bins, flushed into `bins` with one
// global add per bin (ptxas: ATOMS.POPC.INC for the shared adds).
extern "C" __global__ void cuda_hist_shared(const unsigned *data, unsigned *bins, int n)
{
    __shared__ unsigned h[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        h[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&h[data[i] & 255], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        atomicAdd(&bins[i], h[i]);
}

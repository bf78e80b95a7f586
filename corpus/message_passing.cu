// Communication between CTAs through memory: release/acquire flags (cuda::atomic_ref), the
// older __threadfence + atomic flag idiom, fences around relaxed atomics, a token passed round a
// ring of CTAs, a grid-wide barrier, and a single-producer single-consumer ring buffer.
//
// Every consumer waits for a CTA with a lower index, or for all CTAs of a grid of at most 4
// (which a GPU keeps co-resident), so the kernels finish whatever order CTAs start in.
//
// Launches and expectations: message_passing.launch.

#include <cuda/atomic>

using cuda::memory_order_acquire;
using cuda::memory_order_relaxed;
using cuda::memory_order_release;
using DeviceRef = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

// CTA 0 writes a block of data and publishes it with a release store of a flag; the other CTAs
// wait for the flag with acquire loads and copy the data.
extern "C" __global__ void mp_release_acquire(unsigned *data, unsigned *flag, unsigned *out)
{
    unsigned t = threadIdx.x, n = blockDim.x;
    DeviceRef ready(*flag);
    if (blockIdx.x == 0) {
        data[t] = t * t + 1;
        __syncthreads();
        if (t == 0)
            ready.store(1, memory_order_release);
        return;
    }
    if (t == 0)
        while (ready.load(memory_order_acquire) == 0) {
        }
    __syncthreads();
    out[(blockIdx.x - 1) * n + t] = data[t];
}

// The idiom from before the memory model: volatile data, __threadfence, an atomic flag.
extern "C" __global__ void mp_threadfence(int *data, int *flag, int *out)
{
    unsigned lane = threadIdx.x;
    if (blockIdx.x == 0) {
        ((volatile int *)data)[lane] = 3 * (int)lane + 1;
        __syncwarp();
        __threadfence();
        if (lane == 0)
            atomicExch(flag, 1);
    } else {
        if (lane == 0)
            while (atomicAdd(flag, 0) == 0) {
            }
        __syncwarp();
        __threadfence();
        out[lane] = ((volatile int *)data)[lane];
    }
}

// Fences around relaxed atomics: release fence then relaxed store; relaxed loads then acquire
// fence.
extern "C" __global__ void mp_fences(unsigned *data, unsigned *flag, unsigned *out)
{
    unsigned lane = threadIdx.x;
    DeviceRef ready(*flag);
    if (blockIdx.x == 0) {
        data[lane] = (lane << 8) | 0xaa;
        __syncwarp();
        if (lane == 0) {
            cuda::atomic_thread_fence(memory_order_release, cuda::thread_scope_device);
            ready.store(1, memory_order_relaxed);
        }
    } else {
        if (lane == 0) {
            while (ready.load(memory_order_relaxed) == 0) {
            }
            cuda::atomic_thread_fence(memory_order_acquire, cuda::thread_scope_device);
        }
        __syncwarp();
        out[lane] = data[lane];
    }
}

// A token goes round the CTAs `rounds` times: CTA b takes turns b, b + G, b + 2G, ... It waits
// for its turn with acquire loads, logs and updates a plain accumulator, and passes the turn on
// with a release store.
extern "C" __global__ void token_ring(unsigned *turn, unsigned long long *acc,
                                      unsigned long long *log, unsigned rounds)
{
    if (threadIdx.x != 0)
        return;
    DeviceRef now(*turn);
    for (unsigned r = 0; r < rounds; r++) {
        unsigned mine = r * gridDim.x + blockIdx.x;
        while (now.load(memory_order_acquire) != mine) {
        }
        log[mine] = *acc;
        *acc = *acc * 2 + mine + 1;
        now.store(mine + 1, memory_order_release);
    }
}

// A grid-wide barrier: thread 0 of each CTA counts in; the last arrival resets the count and
// advances the generation the others wait on.
__device__ void grid_sync(unsigned *count, unsigned *generation)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        DeviceRef gen(*generation);
        unsigned seen = gen.load(memory_order_acquire);
        if (atomicAdd(count, 1u) == gridDim.x - 1) {
            atomicExch(count, 0u);
            gen.fetch_add(1, cuda::memory_order_acq_rel);
        } else {
            while (gen.load(memory_order_acquire) == seen) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}

// Two phases separated by the barrier: each CTA writes its part, then reads its neighbour's.
extern "C" __global__ void grid_barrier(unsigned *count, unsigned *generation, int *a, int *out)
{
    unsigned t = threadIdx.x, b = blockIdx.x, n = blockDim.x;
    a[b * n + t] = (int)(b * 100 + t);
    __threadfence();
    grid_sync(count, generation);
    out[b * n + t] = ((volatile int *)a)[((b + 1) % gridDim.x) * n + t];
    grid_sync(count, generation);
    a[b * n + t] = -1;
}

// A single-producer single-consumer ring buffer of 8 slots between thread 0 of CTA 0 and
// thread 0 of CTA 1: head and tail are published with release stores and read with acquire
// loads.
extern "C" __global__ void spsc_queue(unsigned *ring, unsigned *head, unsigned *tail,
                                      unsigned *out, unsigned count)
{
    if (threadIdx.x != 0)
        return;
    DeviceRef h(*head), tl(*tail);
    if (blockIdx.x == 0) {
        for (unsigned k = 0; k < count; k++) {
            while (k - tl.load(memory_order_acquire) >= 8) {
            }
            ring[k % 8] = k * k + 7;
            h.store(k + 1, memory_order_release);
        }
    } else {
        for (unsigned k = 0; k < count; k++) {
            while (h.load(memory_order_acquire) <= k) {
            }
            out[k] = ring[k % 8];
            tl.store(k + 1, memory_order_release);
        }
    }
}

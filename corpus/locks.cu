// Locks built from atomics: a global compare-and-swap spin lock, a ticket lock taken by one lane
// per warp, a test-and-test-and-set lock on cuda::atomic_ref with acquire/release orders and
// __nanosleep backoff, a block-scope mutex in shared memory, and one lock per hash bucket. The
// critical sections update memory with plain (volatile or ordered) accesses, so a lock that
// failed to exclude would lose updates and the final counts would be off.
//
// Every per-thread lock acquires inside the loop body and leaves the loop after releasing (the
// "done flag" shape), which cannot deadlock lanes of one warp whatever the scheduler does.
//
// Launches and expectations: locks.launch.

#include <cuda/atomic>

__device__ __forceinline__ unsigned global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

// atomicCAS acquires, atomicExch releases, __threadfence orders the critical section.
extern "C" __global__ void spin_lock_cas(unsigned *lock, unsigned *counter,
                                         unsigned long long *sum, unsigned *holders)
{
    unsigned g = global_id();
    bool done = false;
    while (!done) {
        if (atomicCAS(lock, 0u, 1u) == 0u) {
            __threadfence();
            unsigned c = *(volatile unsigned *)counter;
            *(volatile unsigned *)counter = c + 1;
            *(volatile unsigned long long *)sum += g;
            holders[c] = g;
            __threadfence();
            atomicExch(lock, 0u);
            done = true;
        }
    }
}

// A ticket lock: lane 0 of each warp draws a ticket and waits, with __nanosleep, until it is
// served. Tickets are served in order, so the counter read under the lock equals the ticket.
extern "C" __global__ void ticket_lock(unsigned *next, unsigned *serving, unsigned *counter,
                                       unsigned *log)
{
    if (threadIdx.x % 32 != 0)
        return;
    unsigned ticket = atomicAdd(next, 1u);
    while (*(volatile unsigned *)serving != ticket)
        __nanosleep(64);
    __threadfence();
    unsigned c = *(volatile unsigned *)counter;
    *(volatile unsigned *)counter = c + 1;
    log[ticket] = c;
    __threadfence();
    atomicAdd(serving, 1u);
}

// Test-and-test-and-set on cuda::atomic_ref: spin on relaxed loads, take the lock with an
// acquire exchange, back off exponentially, release with a release store. The critical section
// uses plain accesses, ordered by the acquire and release.
extern "C" __global__ void ttas_lock(int *lock_word, unsigned *counter, unsigned long long *sum)
{
    cuda::atomic_ref<int, cuda::thread_scope_device> lock(*lock_word);
    unsigned g = global_id(), backoff = 8;
    bool done = false;
    while (!done) {
        if (lock.load(cuda::memory_order_relaxed) == 0
            && lock.exchange(1, cuda::memory_order_acquire) == 0) {
            *counter += 1;
            *sum += g;
            lock.store(0, cuda::memory_order_release);
            done = true;
        } else {
            __nanosleep(backoff);
            backoff = backoff < 256 ? backoff * 2 : backoff;
        }
    }
}

// A mutex in shared memory, taken by every thread of the block with block-scope atomics.
extern "C" __global__ void shared_mutex(unsigned *count, unsigned long long *sum)
{
    __shared__ unsigned mutex, shared_count;
    __shared__ unsigned long long shared_sum;
    if (threadIdx.x == 0) {
        mutex = 0;
        shared_count = 0;
        shared_sum = 0;
    }
    __syncthreads();
    bool done = false;
    while (!done) {
        if (atomicCAS_block(&mutex, 0u, 1u) == 0u) {
            __threadfence_block();
            *(volatile unsigned *)&shared_count += 1;
            *(volatile unsigned long long *)&shared_sum += threadIdx.x;
            __threadfence_block();
            atomicExch_block(&mutex, 0u);
            done = true;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        count[blockIdx.x] = shared_count;
        sum[blockIdx.x] = shared_sum;
    }
}

// One lock per bucket: each key locks bucket key % 8 and updates the bucket's count and sum.
extern "C" __global__ void bucket_locks(const unsigned *keys, unsigned n, unsigned *locks,
                                        unsigned *count, unsigned long long *sum)
{
    unsigned i = global_id();
    if (i >= n)
        return;
    unsigned key = keys[i], b = key % 8;
    bool done = false;
    while (!done) {
        if (atomicExch(&locks[b], 1u) == 0u) {
            __threadfence();
            *(volatile unsigned *)&count[b] += 1;
            *(volatile unsigned long long *)&sum[b] += key;
            __threadfence();
            atomicExch(&locks[b], 0u);
            done = true;
        }
    }
}

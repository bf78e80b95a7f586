// libcu++ atomics (<cuda/atomic>): cuda::atomic_ref and cuda::atomic with every memory order
// (relaxed, consume, acquire, release, acq_rel, seq_cst) and thread scope (thread, block,
// device, system), on every operation: fetch_add/sub/and/or/xor/min/max, exchange,
// compare_exchange_strong/weak, load, store, and atomic_thread_fence.
//
// ref_orders is a C++ template instantiated for three scopes, so its kernels have mangled
// names; the others are extern "C". Launches and expectations: atomic_ref.launch.

#include <cuda/atomic>

using cuda::memory_order_acq_rel;
using cuda::memory_order_acquire;
using cuda::memory_order_consume;
using cuda::memory_order_relaxed;
using cuda::memory_order_release;
using cuda::memory_order_seq_cst;

__device__ __forceinline__ unsigned global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

// Every operation of atomic_ref<unsigned> and atomic_ref<unsigned long long> in every memory
// order. A block-scope atomic only synchronizes the threads of one block, so with
// thread_scope_block each block works on a slice of its own (16 words, 4 double words, 513
// counters); with device and system scope the whole grid shares slice 0. t numbers the threads
// that share a slice.
template <cuda::thread_scope Scope>
__global__ void ref_orders(unsigned *u32, unsigned long long *u64, unsigned *seen)
{
    constexpr bool per_block = Scope == cuda::thread_scope_block;
    unsigned slice = per_block ? blockIdx.x : 0;
    unsigned t = per_block ? threadIdx.x : global_id();
    unsigned *u = u32 + slice * 16;
    unsigned long long *q = u64 + slice * 4;
    unsigned *s = seen + slice * 513;
    using A = cuda::atomic_ref<unsigned, Scope>;
    using Q = cuda::atomic_ref<unsigned long long, Scope>;

    A(u[0]).fetch_add(1, memory_order_relaxed);
    A(u[0]).fetch_add(1, memory_order_consume);
    A(u[0]).fetch_add(1, memory_order_acquire);
    A(u[0]).fetch_add(1, memory_order_release);
    A(u[0]).fetch_add(1, memory_order_acq_rel);
    A(u[0]).fetch_add(1, memory_order_seq_cst);
    A(u[1]).fetch_sub(1, memory_order_relaxed);
    A(u[1]).fetch_sub(1, memory_order_consume);
    A(u[1]).fetch_sub(1, memory_order_acquire);
    A(u[1]).fetch_sub(1, memory_order_release);
    A(u[1]).fetch_sub(1, memory_order_acq_rel);
    A(u[1]).fetch_sub(1);                                   // seq_cst by default
    A(u[2]).fetch_and(~(1u << (t % 32)), memory_order_acquire);
    A(u[3]).fetch_or(1u << (t % 32), memory_order_release);
    A(u[4]).fetch_xor(t + 1, memory_order_acq_rel);
    A(u[5]).fetch_max(t, memory_order_seq_cst);
    A(u[6]).fetch_min(t + 1, memory_order_consume);
    unsigned prev = A(u[7]).exchange(t + 1, memory_order_acq_rel);
    A(s[prev]).fetch_add(1, memory_order_relaxed);
    unsigned e = A(u[8]).load(memory_order_relaxed);
    while (!A(u[8]).compare_exchange_strong(e, e + 2, memory_order_acq_rel, memory_order_relaxed)) {
    }
    e = A(u[9]).load(memory_order_relaxed);
    while (!A(u[9]).compare_exchange_weak(e, e + 3, memory_order_seq_cst)) {
    }
    e = A(u[10]).load(memory_order_acquire);
    while (!A(u[10]).compare_exchange_weak(e, e + 4, memory_order_release, memory_order_relaxed)) {
    }
    unsigned r = A(u[11]).load(memory_order_relaxed) + A(u[11]).load(memory_order_consume)
               + A(u[11]).load(memory_order_acquire) + A(u[11]).load(memory_order_seq_cst);
    A(u[12]).fetch_add(r, memory_order_relaxed);
    cuda::atomic_thread_fence(memory_order_acquire, Scope);
    cuda::atomic_thread_fence(memory_order_release, Scope);
    cuda::atomic_thread_fence(memory_order_acq_rel, Scope);
    cuda::atomic_thread_fence(memory_order_seq_cst, Scope);
    A(u[13]).store(9, memory_order_relaxed);
    A(u[14]).store(10, memory_order_release);
    A(u[15]).store(11, memory_order_seq_cst);

    Q(q[0]).fetch_add((unsigned long long)t << 32, memory_order_release);
    Q(q[1]).fetch_max((unsigned long long)t << 41, memory_order_acquire);
    Q(q[2]).fetch_or(1ull << (t % 64), memory_order_acq_rel);
    unsigned long long f = Q(q[3]).load(memory_order_acquire);
    while (!Q(q[3]).compare_exchange_weak(f, f + t, memory_order_acq_rel, memory_order_acquire)) {
    }
}

template __global__ void ref_orders<cuda::thread_scope_block>(unsigned *, unsigned long long *,
                                                              unsigned *);
template __global__ void ref_orders<cuda::thread_scope_device>(unsigned *, unsigned long long *,
                                                               unsigned *);
template __global__ void ref_orders<cuda::thread_scope_system>(unsigned *, unsigned long long *,
                                                               unsigned *);

// cuda::atomic and cuda::std::atomic objects living in global buffers (they have the size and
// layout of their value), used through their operators; and thread-scope atomics on a slot
// private to each thread.
using DeviceInt = cuda::atomic<int, cuda::thread_scope_device>;
using SystemU64 = cuda::atomic<unsigned long long, cuda::thread_scope_system>;
using BlockInt = cuda::atomic<int, cuda::thread_scope_block>;
using StdUnsigned = cuda::std::atomic<unsigned>;
using DeviceFloat = cuda::atomic<float, cuda::thread_scope_device>;
static_assert(sizeof(DeviceInt) == 4 && sizeof(SystemU64) == 8 && sizeof(BlockInt) == 4
                  && sizeof(StdUnsigned) == 4 && sizeof(DeviceFloat) == 4,
              "atomics have the size of their value");

extern "C" __global__ void atomic_objects(DeviceInt *counters, SystemU64 *big, BlockInt *per_block,
                                          StdUnsigned *std_words, DeviceFloat *fsum,
                                          unsigned *mine)
{
    unsigned g = global_id();
    counters[0]++;
    ++counters[1];
    counters[2] += 5;
    counters[3] -= 2;
    counters[4] |= 1 << (g % 31);
    counters[5] &= ~(1 << (g % 31));
    counters[6] ^= (int)g;
    counters[7]--;
    big[0] += g;
    big[1].fetch_max((unsigned long long)g * g, memory_order_relaxed);
    big[2].fetch_min((unsigned long long)g + 100, memory_order_acq_rel);
    per_block[blockIdx.x].fetch_add(1, memory_order_acq_rel);
    per_block[4 + blockIdx.x] = 3;                                   // seq_cst store
    std_words[0].fetch_or(1u << (g % 32));
    std_words[1]++;
    std_words[2].store(7, cuda::std::memory_order_release);
    fsum[0].fetch_add(0.5f, memory_order_relaxed);
    fsum[1].fetch_sub(2.0f);
    // A thread-scope atomic: only this thread touches mine[g].
    cuda::atomic_ref<unsigned, cuda::thread_scope_thread> own(mine[g]);
    own.store(g, memory_order_relaxed);
    own.fetch_add(1, memory_order_seq_cst);
    if (own.load(memory_order_acquire) != g + 1)
        own.store(0);
}

// 8- and 16-bit atomic_ref (libcu++ emulates them with compare-and-swap on the enclosing
// 32-bit word) and 64-bit signed ones.
extern "C" __global__ void atomic_ref_narrow(unsigned char *u8, unsigned short *u16, signed char *s8,
                                             long long *s64)
{
    unsigned g = global_id();
    using U8 = cuda::atomic_ref<unsigned char, cuda::thread_scope_device>;
    using U16 = cuda::atomic_ref<unsigned short, cuda::thread_scope_device>;
    using S8 = cuda::atomic_ref<signed char, cuda::thread_scope_device>;
    using S64 = cuda::atomic_ref<long long, cuda::thread_scope_device>;
    U8(u8[g % 8]).fetch_add(1, memory_order_relaxed);
    U8(u8[8 + g % 8]).fetch_or((unsigned char)(1u << (g / 64)), memory_order_release);
    U8(u8[16 + g % 4]).fetch_and((unsigned char)~(1u << (g / 64)), memory_order_acquire);
    U16(u16[g % 4]).fetch_add(3, memory_order_acq_rel);
    U16(u16[4]).fetch_max((unsigned short)g, memory_order_seq_cst);
    U16(u16[5]).fetch_min((unsigned short)(g + 1000), memory_order_relaxed);
    unsigned short e = U16(u16[6]).load(memory_order_relaxed);
    while (!U16(u16[6]).compare_exchange_strong(e, (unsigned short)(e + 1), memory_order_acq_rel)) {
    }
    U16(u16[7]).exchange(0x5a5a, memory_order_relaxed);
    S8(s8[0]).fetch_min((signed char)-(int)(g % 100), memory_order_relaxed);
    S8(s8[1]).fetch_max((signed char)(g % 100), memory_order_relaxed);
    S8(s8[2 + g % 2]).fetch_sub(1, memory_order_relaxed);
    S64(s64[0]).fetch_min(-((long long)g << 32), memory_order_relaxed);
    S64(s64[1]).fetch_max((long long)g - 1000, memory_order_seq_cst);
    S64(s64[2]).fetch_add(-(long long)g, memory_order_release);
}

// Floating-point atomic_ref: fetch_add/fetch_sub (red/atom add), fetch_min/fetch_max (libcu++
// compare-and-swap loops), store and exchange, at block, device and system scope.
extern "C" __global__ void atomic_ref_floats(float *f32, double *f64)
{
    unsigned g = global_id();
    using F = cuda::atomic_ref<float, cuda::thread_scope_device>;
    using D = cuda::atomic_ref<double, cuda::thread_scope_device>;
    F(f32[0]).fetch_add(0.25f, memory_order_relaxed);
    F(f32[1]).fetch_sub(1.0f, memory_order_acq_rel);
    F(f32[2]).fetch_max((float)g, memory_order_seq_cst);
    F(f32[3]).fetch_min(-(float)g, memory_order_relaxed);
    F(f32[4]).store(3.5f, memory_order_release);
    cuda::atomic_ref<float, cuda::thread_scope_block>(f32[5 + blockIdx.x]).fetch_add(1.0f);
    cuda::atomic_ref<float, cuda::thread_scope_system>(f32[9]).exchange(-1.0f, memory_order_acq_rel);
    D(f64[0]).fetch_add(0.125, memory_order_release);
    D(f64[1]).fetch_max((double)g * 0.5, memory_order_acquire);
    cuda::atomic_ref<double, cuda::thread_scope_system>(f64[2]).fetch_add(1.0, memory_order_seq_cst);
    cuda::atomic_ref<double, cuda::thread_scope_block>(f64[3 + blockIdx.x]).fetch_sub(0.5, memory_order_relaxed);
}

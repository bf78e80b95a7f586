// Atomics the way programs use them: histograms (one fed by sub-group block reads), counters on
// one address (which IGC aggregates within the SIMD thread into a single svm_atomic of execution
// size 1), ticket dispensers, stream compaction, a stack allocator, a packed 64-bit arg-max, and
// OpenCL C 2.0's C11 atomics with memory orders and scopes (fences around svm_atomic; atomic_load
// and atomic_store come out as svm_atomic.or with 0 and svm_atomic.xchg).

#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

// Sub-group block I/O around an atomic: each SIMD8 thread reads its 8 inputs with one block read
// (svm_block_ld), counts them into a histogram and writes doubled values with one block write
// (svm_block_st).
__attribute__((intel_reqd_sub_group_size(8)))
__kernel void block_io(__global const uint *in, __global uint *hist, __global uint *out) {
  uint base = get_global_id(0) - get_sub_group_local_id();
  uint v = intel_sub_group_block_read(in + base);
  atomic_inc(&hist[v % 16]);
  intel_sub_group_block_write(out + base, v * 2);
}

// A 64-bin histogram of values in 0..999, and the number of values seen.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void histogram(__global const uint *data, __global uint *hist, __global uint *total) {
  uint i = get_global_id(0);
  atomic_inc(&hist[data[i] % 64]);
  atomic_inc(&total[0]);
}

// Every kind of atomic on one address per kind, results unused: IGC combines the lanes of a
// SIMD32 thread first (a sum, a popcount, a min/max/and/or/xor reduction) and issues one
// svm_atomic (M1_NM, 1), inc/dec/sub as an add; the 64-bit add stays one atomic per channel.
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void aggregated(__global uint *c, __global int *s, __global ulong *q) {
  uint i = get_global_id(0);
  atomic_inc(&c[0]);
  atomic_add(&c[1], i);
  atomic_sub(&c[2], 2u);
  atomic_dec(&c[3]);
  atomic_min(&c[4], i + 5);
  atomic_max(&c[5], i);
  atomic_or(&c[6], 1u << (i % 32));
  atomic_and(&c[7], ~(1u << (i % 29)));
  atomic_xor(&c[8], i);
  atomic_min(&s[0], 40 - (int)i);
  atomic_max(&s[1], (int)i - 40);
  atom_add(&q[0], (ulong)i << 32);
}

// Tickets from one counter, with the returned value used: each work-item gets a distinct ticket
// and writes its id into that slot.
__attribute__((intel_reqd_sub_group_size(8)))
__kernel void uniform_tickets(__global uint *counter, __global uint *slots) {
  uint i = get_global_id(0);
  uint t = atomic_inc(&counter[0]);
  slots[t] = i;
}

// Stream compaction: the values divisible by 3 are appended through an atomic cursor.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void compact(__global const int *in, __global int *out, __global uint *count) {
  uint i = get_global_id(0);
  int v = in[i];
  if (v % 3 == 0) {
    uint k = atomic_inc(&count[0]);
    out[k] = v;
  }
}

// A stack allocator: each work-item pops a slot index off a counter that counts down (the
// pre-decrement pattern; OpenCL C has no predec, so it is atomic_dec(top) - 1). The address is
// uniform and the result used, so IGC issues one add of -popcount per SIMD thread and gives each
// channel the returned base minus its rank.
__attribute__((intel_reqd_sub_group_size(8)))
__kernel void stack_alloc(__global uint *top, __global uint *stack) {
  uint i = get_global_id(0);
  uint slot = atomic_dec(&top[0]) - 1;
  stack[slot] = i;
}

// Arg-max as one 64-bit max on (value << 32 | ~index): the largest value, first index on ties.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void argmax64(__global const uint *x, __global ulong *best) {
  uint i = get_global_id(0);
  atom_max(&best[0], ((ulong)x[i] << 32) | (0xfffffffful - i));
  atom_max(&best[1 + i % 4], ((ulong)x[i] << 32) | (0xfffffffful - i));
}

// OpenCL C 2.0 atomics on atomic_uint/atomic_int/atomic_ulong with explicit orders and scopes.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void c11_atomics(__global atomic_uint *u, __global atomic_int *s,
                          __global atomic_ulong *q, __global uint *out) {
  uint i = get_global_id(0);
  uint n = get_global_size(0);
  out[i] = atomic_fetch_add_explicit(&u[i], 1u, memory_order_relaxed, memory_scope_device);
  atomic_fetch_sub_explicit(&u[n + i % 4], i, memory_order_acq_rel, memory_scope_device);
  atomic_fetch_or_explicit(&u[n + 4 + i % 4], 1u << (i % 32), memory_order_release,
                           memory_scope_work_group);
  atomic_fetch_min_explicit(&s[i % 4], (int)i - 64, memory_order_seq_cst,
                            memory_scope_device);
  atomic_fetch_max_explicit(&s[4 + i % 4], 64 - (int)i, memory_order_relaxed,
                            memory_scope_device);
  atomic_fetch_add_explicit(&q[i % 2], (ulong)i << 33, memory_order_relaxed,
                            memory_scope_device);
  atomic_store_explicit(&u[2 * n + i], 3u * i, memory_order_release, memory_scope_device);
  out[n + i] = atomic_load_explicit(&u[3 * n + i], memory_order_acquire, memory_scope_device);
  out[2 * n + i] = atomic_exchange(&u[4 * n + i], 7u * i);
  uint expected = (i % 2 == 0) ? 5 * n + i : i;
  atomic_compare_exchange_strong(&u[5 * n + i], &expected, 0xc0000000u | i);
  out[3 * n + i] = expected;
  atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_device);
}

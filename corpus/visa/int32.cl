// 32-bit integer atomics on global memory: every 32-bit SVM_ATOMIC op IGC can emit, each with
// and without a returned value. Addresses differ between the lanes of a SIMD thread (own[i],
// counters[i % k]) so that IGC emits one svm_atomic per lane instead of aggregating them (see
// patterns.cl for the aggregated forms). Where several work-items hit one address, the kernels
// keep only results that do not depend on the order of the atomics: final memory of commutative
// operations, the multiset of returned tickets, the single winner of a compare-and-swap.

// add and sub: own addresses return their initial value; 8 shared counters add, 8 subtract.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void add_sub(__global uint *own, __global uint *low, __global uint *shared,
                      __global uint *out, __global uint *out_low) {
  uint i = get_global_id(0);
  out[i] = atomic_add(&own[i], i + 1);
  out_low[i] = atomic_sub(&low[i], 3u);
  atomic_add(&shared[i % 8], i + 1);
  atomic_sub(&shared[8 + i % 8], i);
}

// inc and dec: tickets from 4 counters, a count-down from 100, and the wrap-around of both
// (inc of 0xffffffff is 0, dec of 0 is 0xffffffff: OpenCL's atomic_inc/dec have no bound).
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void inc_dec(__global uint *counters, __global uint *tickets, __global uint *downs,
                      __global uint *wrap_inc, __global uint *wrap_dec) {
  uint i = get_global_id(0);
  tickets[i] = atomic_inc(&counters[i % 4]);
  downs[i] = atomic_dec(&counters[4 + i % 4]);
  atomic_inc(&wrap_inc[i]);
  atomic_dec(&wrap_dec[i]);
}

// min and max, unsigned (svm_atomic.min/max) and signed (svm_atomic.minsint/maxsint), on the
// same values v in -50..50: as unsigned numbers the negative ones are the largest.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void min_max(__global uint *umm, __global int *smm, __global uint *own_u,
                      __global int *own_s, __global uint *out_u, __global int *out_s) {
  uint i = get_global_id(0);
  int v = (int)((i * 37) % 101) - 50;
  atomic_min(&umm[i % 4], (uint)v);
  atomic_max(&umm[4 + i % 4], (uint)v);
  atomic_min(&smm[i % 4], v);
  atomic_max(&smm[4 + i % 4], v);
  out_u[i] = atomic_min(&own_u[i], (uint)v);
  out_s[i] = atomic_max(&own_s[i], v);
}

// xchg and cmpxchg: own exchanges; every lane exchanges 77 into one of 4 shared slots (each slot
// hands its initial value to exactly one lane); compare-and-swap hits on every third own address
// and misses elsewhere; on 4 shared locks exactly one lane per lock sees 0.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void xchg_cmpxchg(__global uint *own, __global uint *slots, __global uint *cas,
                           __global uint *locks, __global uint *out, __global uint *taken,
                           __global uint *seen, __global uint *won) {
  uint i = get_global_id(0);
  out[i] = atomic_xchg(&own[i], 1000 + i);
  taken[i] = atomic_xchg(&slots[i % 4], 77u);
  seen[i] = atomic_cmpxchg(&cas[i], (i % 3 == 0) ? i : i + 1, 5000 + i);
  won[i] = atomic_cmpxchg(&locks[i % 4], 0u, 9u);
}

// and, or, xor: contended bit masks (the order of commutative operations does not matter) and
// own words that return their initial value.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void bitwise(__global uint *masks, __global uint *own, __global uint *out) {
  uint i = get_global_id(0);
  uint n = get_global_size(0);
  atomic_and(&masks[i % 4], ~(1u << (i % 32)));
  atomic_or(&masks[4 + i % 4], 1u << ((i * 7) % 32));
  atomic_xor(&masks[8 + i % 4], i * 0x01010101u);
  out[i] = atomic_and(&own[i], 0xf0u);
  out[n + i] = atomic_or(&own[n + i], 0x100u);
  out[2 * n + i] = atomic_xor(&own[2 * n + i], 0x5555u);
}

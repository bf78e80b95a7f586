// 64-bit atomics (cl_khr_int64_base_atomics / _extended_atomics: svm_atomic.OP.64) and 16-bit
// atomics (svm_atomic.OP.16). OpenCL C has no 16-bit atomic functions; IGC implements its own
// __builtin_IB_atomic_*_i16 functions (declared in IGC's IGCBiF_Intrinsics.cl and lowered to
// GenISA.intatomicrawA64.i16), which an OpenCL C source may call once it declares them.

#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

short __builtin_IB_atomic_add_global_i16(__global short *, short);
short __builtin_IB_atomic_sub_global_i16(__global short *, short);
short __builtin_IB_atomic_xchg_global_i16(__global short *, short);
short __builtin_IB_atomic_min_global_i16(__global short *, short);
ushort __builtin_IB_atomic_min_global_u16(__global ushort *, ushort);
short __builtin_IB_atomic_max_global_i16(__global short *, short);
ushort __builtin_IB_atomic_max_global_u16(__global ushort *, ushort);
short __builtin_IB_atomic_and_global_i16(__global short *, short);
short __builtin_IB_atomic_or_global_i16(__global short *, short);
short __builtin_IB_atomic_xor_global_i16(__global short *, short);
short __builtin_IB_atomic_inc_global_i16(__global short *);
short __builtin_IB_atomic_dec_global_i16(__global short *);
short __builtin_IB_atomic_cmpxchg_global_i16(__global short *, short, short);

// 64-bit add and sub with carries and borrows across bit 32.
__attribute__((intel_reqd_sub_group_size(8)))
__kernel void add_sub64(__global ulong *own, __global ulong *low, __global ulong *acc,
                        __global ulong *out, __global ulong *out_low) {
  uint i = get_global_id(0);
  out[i] = atom_add(&own[i], 0xfffffffful + i);
  out_low[i] = atom_sub(&low[i], 1ul);
  atom_add(&acc[i % 4], 0x100000001ul * (i + 1));
  atom_sub(&acc[4 + i % 4], (ulong)i << 31);
}

// 64-bit min and max, signed (minsint.64/maxsint.64) and unsigned (min.64/max.64). The values
// repeat their low word in the high word, so a comparison of either half alone goes wrong.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void min_max64(__global long *smm, __global ulong *umm, __global long *own,
                        __global long *out) {
  uint i = get_global_id(0);
  long v = ((long)((i * 37) % 101) - 50) * 0x100000001l;
  atom_min(&smm[i % 4], v);
  atom_max(&smm[4 + i % 4], v);
  atom_min(&umm[i % 4], (ulong)v);
  atom_max(&umm[4 + i % 4], (ulong)v);
  out[i] = atom_max(&own[i], v);
}

// 64-bit compare-and-swap: the even lanes compare with the value in memory, the odd ones with a
// value that differs from it in bit 40 only; two shared locks each have exactly one winner.
__attribute__((intel_reqd_sub_group_size(8)))
__kernel void cmpxchg64(__global ulong *own, __global ulong *expected, __global ulong *locks,
                        __global ulong *seen, __global ulong *won) {
  uint i = get_global_id(0);
  ulong cmp = (i % 2 == 0) ? expected[i] : expected[i] ^ (1ul << 40);
  seen[i] = atom_cmpxchg(&own[i], cmp, 0xa000000000000000ul | i);
  won[i] = atom_cmpxchg(&locks[i % 2], 0ul, 0x100000000ul);
}

// 64-bit inc, dec (wrapping at 2^64), xchg, and, or, xor.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void inc_dec_bits64(__global ulong *counters, __global ulong *tickets,
                             __global ulong *wrap_inc, __global ulong *wrap_dec,
                             __global ulong *masks, __global ulong *own, __global ulong *out) {
  uint i = get_global_id(0);
  tickets[i] = atom_inc(&counters[i % 4]);
  atom_inc(&wrap_inc[i]);
  atom_dec(&wrap_dec[i]);
  atom_and(&masks[i % 4], ~(1ul << (i % 64)));
  atom_or(&masks[4 + i % 4], 1ul << ((i * 7) % 64));
  atom_xor(&masks[8 + i % 4], (ulong)i * 0x0101010101010101ul);
  out[i] = atom_xchg(&own[i], ~(ulong)i);
}

// Every 16-bit operation on its own word of a ushort array: the two words of each dword belong
// to neighbouring lanes, so a write of the whole dword would clobber a neighbour. Region k of
// `words` (n words each) takes operation k; `old` receives the returned values.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void atomics16(__global ushort *words, __global ushort *old) {
  uint i = get_global_id(0);
  uint n = get_global_size(0);
  __global short *w = (__global short *)words;
  old[i] = __builtin_IB_atomic_add_global_i16(&w[i], (short)(0x8000 + i));
  old[n + i] = __builtin_IB_atomic_sub_global_i16(&w[n + i], (short)(2 * i + 1));
  old[2 * n + i] = __builtin_IB_atomic_xchg_global_i16(&w[2 * n + i], (short)(0x7000 + i));
  old[3 * n + i] = __builtin_IB_atomic_min_global_i16(&w[3 * n + i], (short)(-(int)i));
  old[4 * n + i] = __builtin_IB_atomic_min_global_u16(&words[4 * n + i], (ushort)(0xffff - i));
  old[5 * n + i] = __builtin_IB_atomic_max_global_i16(&w[5 * n + i], (short)(0x8000 | i));
  old[6 * n + i] = __builtin_IB_atomic_max_global_u16(&words[6 * n + i], (ushort)(0x8000 | i));
  old[7 * n + i] = __builtin_IB_atomic_and_global_i16(&w[7 * n + i], (short)0x0ff0);
  old[8 * n + i] = __builtin_IB_atomic_or_global_i16(&w[8 * n + i], (short)0xa000);
  old[9 * n + i] = __builtin_IB_atomic_xor_global_i16(&w[9 * n + i], (short)0xffff);
  old[10 * n + i] = __builtin_IB_atomic_inc_global_i16(&w[10 * n + i]);
  old[11 * n + i] = __builtin_IB_atomic_dec_global_i16(&w[11 * n + i]);
  old[12 * n + i] = __builtin_IB_atomic_cmpxchg_global_i16(
      &w[12 * n + i], (short)((i % 2 == 0) ? 12 * n + i : 0), (short)(0xc000 | i));
}

// A 16-bit counter array: a histogram of 32 ushort bins, neighbouring bins sharing a dword, and
// two counters at the top of the 16-bit range that wrap.
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void counter16(__global const uint *data, __global ushort *bins,
                        __global ushort *wraps) {
  uint i = get_global_id(0);
  __builtin_IB_atomic_inc_global_i16((__global short *)&bins[data[i] % 32]);
  __builtin_IB_atomic_inc_global_i16((__global short *)&wraps[i % 2]);
}

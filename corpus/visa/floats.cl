// Float atomics: svm_atomic.fmin, fmax and fcmpwr, 32-bit and 16-bit (.16). OpenCL C 2.0 has no
// float min/max/compare-exchange atomics (and a C11 compare_exchange on atomic_float crashes this
// SPIR-V translator), so the kernels call IGC's own __builtin_IB_atomic_{min,max,cmpxchg}_global
// functions, which IGC lowers to GenISA.floatatomicrawA64 / fcmpxchgatomicrawA64 (the same path
// IGC's SPIR-V AtomicFMinEXT/AtomicFMaxEXT implementation takes).
//
// Each lane of the table kernels works on its own address, so the returned value is always the
// initial one, whatever the semantics; the values left in memory are what the launch files check
// against the NaN and signed-zero rules written down there.

#pragma OPENCL EXTENSION cl_khr_fp16 : enable

float __builtin_IB_atomic_min_global_f32(__global float *, float);
float __builtin_IB_atomic_max_global_f32(__global float *, float);
float __builtin_IB_atomic_cmpxchg_global_f32(__global float *, float, float);
half __builtin_IB_atomic_min_global_f16(__global half *, half);
half __builtin_IB_atomic_max_global_f16(__global half *, half);
half __builtin_IB_atomic_cmpxchg_global_f16(__global half *, half, half);

// fmin and fmax of (mins[i], src[i]) and (maxs[i], src[i]) for a table of special values.
__attribute__((intel_reqd_sub_group_size(8)))
__kernel void fmin_fmax_table(__global float *mins, __global float *maxs,
                              __global const float *src, __global float *old_min,
                              __global float *old_max) {
  uint i = get_global_id(0);
  old_min[i] = __builtin_IB_atomic_min_global_f32(&mins[i], src[i]);
  old_max[i] = __builtin_IB_atomic_max_global_f32(&maxs[i], src[i]);
}

// fcmpwr (float compare, swap if equal) against integer cmpxchg on the same bit patterns: the
// float comparison takes -0 == +0 and NaN != NaN, the integer one compares bits.
__attribute__((intel_reqd_sub_group_size(8)))
__kernel void fcmpwr_table(__global float *fmem, __global uint *imem, __global const float *cmp,
                           __global const float *val, __global float *old_f,
                           __global uint *old_i) {
  uint i = get_global_id(0);
  old_f[i] = __builtin_IB_atomic_cmpxchg_global_f32(&fmem[i], cmp[i], val[i]);
  old_i[i] = atomic_cmpxchg(&imem[i], as_uint(cmp[i]), as_uint(val[i]));
}

// Contended fmin/fmax: 8 buckets, and one address for the whole launch. IGC does not combine
// float atomics within the SIMD thread: all 8 channels of each svm_atomic.fmin on total[0] carry
// the same address.
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void fmin_fmax_reduce(__global const float *x, __global float *bucket_min,
                               __global float *bucket_max, __global float *total) {
  uint i = get_global_id(0);
  __builtin_IB_atomic_min_global_f32(&bucket_min[i % 8], x[i]);
  __builtin_IB_atomic_max_global_f32(&bucket_max[i % 8], x[i]);
  __builtin_IB_atomic_min_global_f32(&total[0], x[i]);
  __builtin_IB_atomic_max_global_f32(&total[1], x[i]);
}

// The half-precision forms: fmin.16, fmax.16 and fcmpwr.16 on neighbouring halves of dwords.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void half_table(__global half *mins, __global half *maxs, __global half *cas,
                         __global const half *src, __global half *old) {
  uint i = get_global_id(0);
  uint n = get_global_size(0);
  old[i] = __builtin_IB_atomic_min_global_f16(&mins[i], src[i]);
  old[n + i] = __builtin_IB_atomic_max_global_f16(&maxs[i], src[i]);
  old[2 * n + i] = __builtin_IB_atomic_cmpxchg_global_f16(&cas[i], src[i], (half)-2.0f);
}

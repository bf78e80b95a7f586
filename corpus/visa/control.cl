// Atomics under divergent control flow: if/else on lane data, loops whose trip count depends on
// the lane, a compare-and-swap retry loop, nested branches with a break in a SIMD32 thread, and an
// early return that leaves the last SIMD thread partly empty. IGC turns these into predicated
// gotos (forward and backward) and svm_atomic under a narrowed execution mask.

// if/else: odd values take a ticket from one of 4 counters, even values add into 4 sums.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void if_else(__global const uint *data, __global uint *counters,
                      __global uint *odd_tickets, __global uint *even_old) {
  uint i = get_global_id(0);
  uint v = data[i];
  if (v & 1) {
    odd_tickets[i] = atomic_inc(&counters[i % 4]);
  } else {
    even_old[i] = atomic_add(&counters[4 + i % 4], v);
  }
}

// A loop of data[i] % 7 iterations; iteration k adds k + 1 to accumulator (i + k) % 8.
__attribute__((intel_reqd_sub_group_size(8)))
__kernel void lane_loops(__global const uint *data, __global uint *acc, __global uint *trips) {
  uint i = get_global_id(0);
  uint n = data[i] % 7;
  uint k = 0;
  for (; k < n; ++k) {
    atomic_add(&acc[(i + k) % 8], k + 1);
  }
  trips[i] = k;
}

// Float add by a compare-and-swap retry loop (the classic emulation): each lane retries until its
// cmpxchg sees the value it read. The values are small integers, so every order of additions
// gives the same float sums.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void cas_loop_add(__global uint *sums, __global uint *retries) {
  uint i = get_global_id(0);
  volatile __global uint *p = &sums[i % 4];
  uint old = *p;
  uint tries = 0;
  while (1) {
    uint next = as_uint(as_float(old) + (float)i);
    uint seen = atomic_cmpxchg(p, old, next);
    if (seen == old) break;
    old = seen;
    ++tries;
  }
  atomic_add(&retries[0], tries);
}

// Nested branches and a break in a SIMD32 thread: for each set bit k of the value, odd k sets
// bit k of a per-lane-class mask and even k counts into bin k; the loop stops at the highest bit.
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void nested_break(__global const uint *data, __global uint *masks,
                           __global uint *bins) {
  uint i = get_global_id(0);
  uint v = data[i];
  for (uint k = 0; k < 16; ++k) {
    if ((v >> k) == 0) {
      break;
    }
    if ((v >> k) & 1) {
      if (k & 1) {
        atomic_or(&masks[i % 8], 1u << k);
      } else {
        atomic_inc(&bins[k]);
      }
    }
  }
}

// Early return: work-items at or past n do nothing, so the last SIMD16 thread of the launch runs
// its atomics with only some channels enabled.
__attribute__((intel_reqd_sub_group_size(16)))
__kernel void early_exit(__global const uint *data, uint n, __global uint *sum,
                         __global uint *maxima, __global uint *own) {
  uint i = get_global_id(0);
  if (i >= n) {
    return;
  }
  atomic_add(&sum[0], data[i]);
  atomic_max(&maxima[i % 3], data[i]);
  atomic_inc(&own[i]);
}

// Warp-level aggregation around atomics: __ballot_sync/__popc/__ffs leader election,
// __shfl_sync in its idx/up/down/xor forms, __match_any_sync/__match_all_sync, the
// __reduce_*_sync intrinsics (redux.sync), votes, and cooperative groups (tiled_partition,
// cg::reduce, cg::exclusive_scan, coalesced_threads, reduce_update_async with a
// cuda::atomic_ref).
//
// Launches and expectations: warp_aggregation.launch.

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cuda/atomic>

namespace cg = cooperative_groups;

constexpr unsigned FULL = 0xffffffffu;

__device__ __forceinline__ unsigned global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ unsigned grid_size() { return gridDim.x * blockDim.x; }
__device__ __forceinline__ unsigned lane_id() { return threadIdx.x % 32; }

// Warp-aggregated append: the lanes that keep a value elect a leader, which reserves room for
// all of them with one atomicAdd and broadcasts the base; each lane writes at base + its rank.
extern "C" __global__ void warp_aggregated_append(const int *in, unsigned n, int *out,
                                                  unsigned *count)
{
    for (unsigned i = global_id(); i < n; i += grid_size()) {
        int v = in[i];
        bool keep = v % 4 == 1;
        unsigned active = __activemask();
        unsigned want = __ballot_sync(active, keep);
        if (keep) {
            unsigned lane = lane_id();
            unsigned leader = __ffs(want) - 1;
            unsigned base = 0;
            if (lane == leader)
                base = atomicAdd(count, __popc(want));
            base = __shfl_sync(want, base, leader);
            out[base + __popc(want & ((1u << lane) - 1))] = v;
        }
    }
}

// Warp sums by __shfl_down_sync; lane 0 stores its warp's sum and adds it to the total.
extern "C" __global__ void warp_reduce_down(const int *x, int *warp_sums, int *total)
{
    int v = x[global_id()];
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL, v, offset);
    if (lane_id() == 0) {
        warp_sums[global_id() / 32] = v;
        atomicAdd(total, v);
    }
}

// Inclusive warp scan by __shfl_up_sync; the last lane adds the warp's total.
extern "C" __global__ void warp_scan_up(const unsigned *x, unsigned *scan, unsigned *total)
{
    unsigned lane = lane_id(), v = x[global_id()];
    for (unsigned offset = 1; offset < 32; offset *= 2) {
        unsigned up = __shfl_up_sync(FULL, v, offset);
        if (lane >= offset)
            v += up;
    }
    scan[global_id()] = v;
    if (lane == 31)
        atomicAdd(total, v);
}

// Butterfly all-reduce by __shfl_xor_sync: every lane ends with its warp's maximum, minimum and
// sum; lane 0 folds them into grid-wide results with atomicMax/atomicMin/atomicAdd.
extern "C" __global__ void warp_allreduce_xor(const int *x, int *wmax, int *wmin, int *wsum,
                                              int *grid)
{
    int v = x[global_id()], hi = v, lo = v, sum = v;
    for (int mask = 16; mask > 0; mask /= 2) {
        hi = max(hi, __shfl_xor_sync(FULL, hi, mask));
        lo = min(lo, __shfl_xor_sync(FULL, lo, mask));
        sum += __shfl_xor_sync(FULL, sum, mask);
    }
    wmax[global_id()] = hi;
    wmin[global_id()] = lo;
    wsum[global_id()] = sum;
    if (lane_id() == 0) {
        atomicMax(&grid[0], hi);
        atomicMin(&grid[1], lo);
        atomicAdd(&grid[2], sum);
    }
}

// __shfl_sync with a computed source lane (rotation), a constant one (broadcast), and a width
// of 8 (sub-warp broadcast); __shfl_down_sync with a width of 16. Each result's sum is also
// accumulated atomically.
extern "C" __global__ void shfl_idx_patterns(const int *x, int *rot, int *bcast, int *sub,
                                             int *down, int *sums)
{
    unsigned i = global_id(), lane = lane_id();
    int v = x[i];
    rot[i] = __shfl_sync(FULL, v, (lane + 1) % 32);
    bcast[i] = __shfl_sync(FULL, v, 7);
    sub[i] = __shfl_sync(FULL, v, 0, 8);
    down[i] = __shfl_down_sync(FULL, v, 3, 16);
    atomicAdd(&sums[0], rot[i]);
    atomicAdd(&sums[1], bcast[i]);
    atomicAdd(&sums[2], sub[i]);
    atomicAdd(&sums[3], down[i]);
}

// Histogram with __match_any_sync: the lanes holding the same key elect one leader that adds
// their count.
extern "C" __global__ void match_any_hist(const unsigned *keys, unsigned n, unsigned *hist)
{
    for (unsigned i = global_id(); i < n; i += grid_size()) {
        unsigned k = keys[i] % 16;
        unsigned peers = __match_any_sync(__activemask(), k);
        if (lane_id() == __ffs(peers) - 1)
            atomicAdd(&hist[k], __popc(peers));
    }
}

// The __reduce_*_sync intrinsics (cc 8.0): lane 0 of each warp stores add, unsigned min/max,
// signed min/max, and, or, xor, and adds the warp's sum into a grid total.
extern "C" __global__ void redux_ops(const unsigned *x, unsigned *out, unsigned *total)
{
    unsigned v = x[global_id()];
    int s = (int)v - 32768;
    unsigned r[8] = {
        __reduce_add_sync(FULL, v),
        __reduce_min_sync(FULL, v),
        __reduce_max_sync(FULL, v),
        (unsigned)__reduce_min_sync(FULL, s),
        (unsigned)__reduce_max_sync(FULL, s),
        __reduce_and_sync(FULL, v),
        __reduce_or_sync(FULL, v),
        __reduce_xor_sync(FULL, v),
    };
    if (lane_id() == 0) {
        unsigned w = global_id() / 32;
        for (int k = 0; k < 8; k++)
            out[w * 8 + k] = r[k];
        atomicAdd(total, r[0]);
    }
}

// Votes: __ballot_sync, __any_sync, __all_sync, __activemask inside a branch, __match_all_sync;
// the ballot's population counts the positives with one atomic per warp.
extern "C" __global__ void vote_ops(const int *x, unsigned *out, unsigned *positives)
{
    int v = x[global_id()];
    unsigned lane = lane_id(), w = global_id() / 32;
    unsigned ballot = __ballot_sync(FULL, v > 0);
    unsigned any = __any_sync(FULL, v > 90);
    unsigned all = __all_sync(FULL, v > -90);
    unsigned all_small = __all_sync(FULL, v < 100);
    unsigned branch = 0;
    if (lane % 3 == 0)
        branch = __activemask();
    __syncwarp();
    int same;
    unsigned match = __match_all_sync(FULL, v >= -1000, &same);
    int differ;
    unsigned nomatch = __match_all_sync(FULL, v, &differ);
    if (lane == 0) {
        out[w * 8 + 0] = ballot;
        out[w * 8 + 1] = any;
        out[w * 8 + 2] = all;
        out[w * 8 + 3] = all_small;
        out[w * 8 + 4] = match;
        out[w * 8 + 5] = (unsigned)same;
        out[w * 8 + 6] = nomatch;
        out[w * 8 + 7] = (unsigned)differ;
        atomicAdd(positives, __popc(ballot));
    }
    if (lane == 3)
        atomicOr(&out[16 + w], branch);
}

// Cooperative groups: cg::reduce over tiles of 16 with plus/greater/less/bit_and/bit_or/bit_xor;
// the tile leader stores and folds the results atomically.
extern "C" __global__ void cg_tile_reduce(const int *x, int *tile_sums, int *grid)
{
    auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    int v = x[global_id()];
    int sum = cg::reduce(tile, v, cg::plus<int>());
    int hi = cg::reduce(tile, v, cg::greater<int>());
    int lo = cg::reduce(tile, v, cg::less<int>());
    unsigned a = cg::reduce(tile, (unsigned)v, cg::bit_and<unsigned>());
    unsigned o = cg::reduce(tile, (unsigned)v, cg::bit_or<unsigned>());
    unsigned e = cg::reduce(tile, (unsigned)v, cg::bit_xor<unsigned>());
    if (tile.thread_rank() == 0) {
        tile_sums[global_id() / 16] = sum;
        atomicAdd(&grid[0], sum);
        atomicMax(&grid[1], hi);
        atomicMin(&grid[2], lo);
        atomicAnd(reinterpret_cast<unsigned *>(&grid[3]), a);
        atomicOr(reinterpret_cast<unsigned *>(&grid[4]), o);
        atomicXor(reinterpret_cast<unsigned *>(&grid[5]), e);
    }
}

// cg::coalesced_threads() in a divergent branch: the active lanes form a group whose rank 0
// reserves room for all of them.
extern "C" __global__ void cg_coalesced_append(const int *in, unsigned n, int *out,
                                               unsigned *count)
{
    for (unsigned i = global_id(); i < n; i += grid_size()) {
        int v = in[i];
        if (v % 3 == 2) {
            cg::coalesced_group active = cg::coalesced_threads();
            unsigned base = 0;
            if (active.thread_rank() == 0)
                base = atomicAdd(count, active.size());
            base = active.shfl(base, 0);
            out[base + active.thread_rank()] = v;
        }
    }
}

// Compaction with cg::exclusive_scan over a warp tile: one atomicAdd per tile, and the kept
// values stay in order inside each tile's run.
extern "C" __global__ void cg_scan_compact(const int *in, int *out, unsigned *count)
{
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    int v = in[global_id()];
    unsigned keep = v % 7 == 0;
    unsigned pos = cg::exclusive_scan(tile, keep);
    unsigned kept = tile.shfl(pos + keep, 31);
    unsigned base = 0;
    if (tile.thread_rank() == 0 && kept != 0)
        base = atomicAdd(count, kept);
    base = tile.shfl(base, 0);
    if (keep)
        out[base + pos] = v;
}

// cg::reduce_update_async: a tile reduces and one of its threads applies the result to a
// cuda::atomic_ref; cg::reduce_store_async stores a tile's result.
extern "C" __global__ void cg_reduce_update(const int *x, int *sum, int *hi, int *tile_max)
{
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    int v = x[global_id()];
    cuda::atomic_ref<int, cuda::thread_scope_device> total(*sum);
    cuda::atomic_ref<int, cuda::thread_scope_device> maximum(*hi);
    cg::reduce_update_async(tile, total, v, cg::plus<int>());
    cg::reduce_update_async(tile, maximum, v, cg::greater<int>());
    cg::reduce_store_async(tile, &tile_max[global_id() / 32], v, cg::greater<int>());
}

// Surface reductions, loads and stores as CUDA programs write them: surface objects passed as
// kernel parameters, `surf*Dread`/`surf*Dwrite` for raw loads and stores (SULD/SUST), and PTX
// `sured` through inline assembly (CUDA C++ has no surface atomic; ptxas turns `sured` into
// SASS SURED). Byte x coordinates (`.b` forms) are `x * sizeof(element)`; the formatted
// `sured.p` form takes x in elements.

#include <cuda_runtime.h>
#include <surface_functions.h>

__device__ unsigned global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

// A histogram of pixel values in a 1D surface of 64 bins: each pixel adds 1 to its bin.
extern "C" __global__ void surf_histogram(const unsigned *pixels, unsigned n,
                                          cudaSurfaceObject_t hist)
{
    for (unsigned i = global_id(); i < n; i += gridDim.x * blockDim.x) {
        unsigned bin = pixels[i] % 64;
        asm volatile("sured.b.add.1d.u32.trap [%0, {%1}], %2;" ::"l"(hist), "r"(bin * 4), "r"(1u)
                     : "memory");
    }
}

// A depth buffer splat: each point keeps the nearest (smallest) depth of the points that land
// on its pixel, clamping points outside the image onto the nearest edge pixel.
extern "C" __global__ void surf_depth_min(const int *xs, const int *ys, const unsigned *depth,
                                          unsigned n, cudaSurfaceObject_t zbuf)
{
    unsigned i = global_id();
    if (i < n)
        asm volatile("sured.b.min.2d.u32.clamp [%0, {%1, %2}], %3;" ::"l"(zbuf), "r"(xs[i] * 4),
                     "r"(ys[i]), "r"(depth[i])
                     : "memory");
}

// Voxel counting in a 3D surface: points outside the volume are dropped (`.zero`), each point
// inside adds 1 (u32) to its voxel and its weight (u64) to a second volume.
extern "C" __global__ void surf_voxel_count(const int *pts, unsigned n, cudaSurfaceObject_t count,
                                            cudaSurfaceObject_t weight)
{
    unsigned i = global_id();
    if (i < n) {
        int x = pts[3 * i], y = pts[3 * i + 1], z = pts[3 * i + 2];
        asm volatile("sured.b.add.3d.u32.zero [%0, {%1, %2, %3, %3}], %4;" ::"l"(count),
                     "r"(x * 4), "r"(y), "r"(z), "r"(1u)
                     : "memory");
        asm volatile("sured.b.add.3d.u64.zero [%0, {%1, %2, %3, %3}], %4;" ::"l"(weight),
                     "r"(x * 8), "r"(y), "r"(z), "l"((unsigned long long)i << 32)
                     : "memory");
    }
}

// Bitwise reductions and a signed maximum on a 2D surface of s32; the formatted
// `sured.p.max.2d.b32` (x in elements) takes its signedness from the surface's format.
extern "C" __global__ void surf_bits_and_max(cudaSurfaceObject_t img, cudaSurfaceObject_t smax)
{
    int x = threadIdx.x % 8, y = threadIdx.x / 8;
    unsigned t = threadIdx.x;
    asm volatile("sured.b.or.2d.b32.trap [%0, {%1, %2}], %3;" ::"l"(img), "r"(x * 4), "r"(y),
                 "r"(1u << (blockIdx.x % 32))
                 : "memory");
    asm volatile("sured.b.and.2d.b32.trap [%0, {%1, %2}], %3;" ::"l"(img), "r"(x * 4), "r"(y),
                 "r"(~(1u << 31))
                 : "memory");
    int v = (int)(t * 7 % 13) - 6 - (int)blockIdx.x;
    asm volatile("sured.p.max.2d.b32.trap [%0, {%1, %2}], %3;" ::"l"(smax), "r"(x), "r"(y), "r"(v)
                 : "memory");
}

// Raw surface loads and stores around a reduction: read a pixel (zero outside), add the
// pixel's value to a 2D accumulation surface, and write a marker through a 2D store.
extern "C" __global__ void surf_load_store(cudaSurfaceObject_t src, cudaSurfaceObject_t acc,
                                           cudaSurfaceObject_t dst, int w)
{
    int x = threadIdx.x - 1, y = blockIdx.x;
    unsigned v = surf2Dread<unsigned>(src, x * 4, y, cudaBoundaryModeZero);
    if (x >= 0 && x < w) {
        asm volatile("sured.b.add.2d.u32.trap [%0, {%1, %2}], %3;" ::"l"(acc), "r"(x * 4), "r"(0),
                     "r"(v)
                     : "memory");
        surf2Dwrite(v + 1000u, dst, x * 4, y, cudaBoundaryModeTrap);
    }
}

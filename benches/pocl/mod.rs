//! The optional PoCL peer of the atomics bench: the same per-lane work as each workload, written
//! in OpenCL C and run by PoCL (OpenCL on the CPU, LLVM-compiled) on the same number of host
//! threads, loaded at run time so the bench builds and runs without it.
//!
//! PoCL is found through `ATOMJIT_POCL`, the directory `scripts/pocl.py fetch` fills (Debian's
//! PoCL 3.1 and the ICD loader unpacked there), else through the system's ICD loader
//! (`libOpenCL.so.1` and a PoCL platform among its vendors). Only the OpenCL 1.2 calls the bench
//! needs are declared, and they are called through the loader: Debian's libpocl exports only
//! the ICD entry point.
//!
//! One process measures every thread count of `ATOMJIT_BENCH_THREADS`, and PoCL reads its
//! worker count once, so PoCL is started with the largest count and each smaller count runs on
//! a sub-device of that many compute units (PoCL's pthread scheduler then runs the kernel on
//! that many of its workers: checked by the workers' CPU times).

use libloading::Library;
use std::ffi::{c_char, c_void, CString};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};

type Handle = *mut c_void;

const CL_SUCCESS: i32 = 0;
const CL_PLATFORM_VERSION: u32 = 0x0901;
const CL_PLATFORM_NAME: u32 = 0x0902;
const CL_DEVICE_TYPE_CPU: u64 = 1 << 1;
const CL_DEVICE_MAX_COMPUTE_UNITS: u32 = 0x1002;
const CL_DEVICE_PARTITION_EQUALLY: isize = 0x1086;
const CL_PROGRAM_BUILD_LOG: u32 = 0x1183;
const CL_MEM_READ_WRITE: u64 = 1;
const CL_MEM_COPY_HOST_PTR: u64 = 1 << 5;
const CL_TRUE: u32 = 1;

/// The name PoCL gives its platform.
const POCL_PLATFORM: &str = "Portable Computing Language";

/// Declares the OpenCL entry points used here (their C signatures, from the OpenCL 1.2
/// specification) as fields of `Api`, and `Api::load`, which looks each one up by name.
macro_rules! api {
    ($($name:ident: fn($($arg:ty),*) -> $ret:ty;)*) => {
        #[allow(non_snake_case)]
        #[derive(Clone, Copy)]
        struct Api {
            $($name: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }

        impl Api {
            fn load(lib: &'static Library) -> Result<Api, String> {
                Ok(Api {
                    $($name: {
                        let name = concat!(stringify!($name), "\0").as_bytes();
                        // SAFETY: the symbol is the OpenCL API function of that name, whose C
                        // signature is the type it is read as; `lib` is leaked, never unloaded,
                        // so the copied function pointer stays valid for the whole process.
                        let f = unsafe {
                            lib.get::<unsafe extern "C" fn($($arg),*) -> $ret>(name)
                        };
                        *f.map_err(|e| format!("{}: {e}", stringify!($name)))?
                    },)*
                })
            }
        }
    };
}

api! {
    clGetPlatformIDs: fn(u32, *mut Handle, *mut u32) -> i32;
    clGetPlatformInfo: fn(Handle, u32, usize, *mut c_void, *mut usize) -> i32;
    clGetDeviceIDs: fn(Handle, u64, u32, *mut Handle, *mut u32) -> i32;
    clGetDeviceInfo: fn(Handle, u32, usize, *mut c_void, *mut usize) -> i32;
    clCreateSubDevices: fn(Handle, *const isize, u32, *mut Handle, *mut u32) -> i32;
    clReleaseDevice: fn(Handle) -> i32;
    clCreateContext: fn(*const isize, u32, *const Handle, *const c_void, *mut c_void, *mut i32)
        -> Handle;
    clReleaseContext: fn(Handle) -> i32;
    clCreateCommandQueue: fn(Handle, Handle, u64, *mut i32) -> Handle;
    clReleaseCommandQueue: fn(Handle) -> i32;
    clCreateProgramWithSource: fn(Handle, u32, *const *const c_char, *const usize, *mut i32)
        -> Handle;
    clBuildProgram: fn(Handle, u32, *const Handle, *const c_char, *const c_void, *mut c_void)
        -> i32;
    clGetProgramBuildInfo: fn(Handle, Handle, u32, usize, *mut c_void, *mut usize) -> i32;
    clReleaseProgram: fn(Handle) -> i32;
    clCreateKernel: fn(Handle, *const c_char, *mut i32) -> Handle;
    clSetKernelArg: fn(Handle, u32, usize, *const c_void) -> i32;
    clReleaseKernel: fn(Handle) -> i32;
    clCreateBuffer: fn(Handle, u64, usize, *mut c_void, *mut i32) -> Handle;
    clReleaseMemObject: fn(Handle) -> i32;
    clEnqueueWriteBuffer: fn(Handle, Handle, u32, usize, usize, *const c_void, u32,
        *const Handle, *mut Handle) -> i32;
    clEnqueueReadBuffer: fn(Handle, Handle, u32, usize, usize, *mut c_void, u32,
        *const Handle, *mut Handle) -> i32;
    clEnqueueNDRangeKernel: fn(Handle, Handle, u32, *const usize, *const usize, *const usize,
        u32, *const Handle, *mut Handle) -> i32;
    clFinish: fn(Handle) -> i32;
}

fn ok(err: i32, what: &str) -> Result<(), String> {
    if err == CL_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed with OpenCL error {err}"))
    }
}

/// The kernels: each does the per-lane work of the bench program of the same name (counter.s,
/// hist_global.s, ...), `hist2d` that of surf_hist2d.s on a row-major array (as the native
/// baseline). OpenCL local memory starts undefined, unlike a CTA's shared memory in atomjit,
/// so the kernels that use it clear it first (one more barrier than the SASS program).
/// `volatile` keeps LLVM from removing the ring's stores, which nothing reads, and from
/// keeping the lock's counter in a register across the lock operations.
const SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

__kernel void counter(__global uint *c)
{
    atomic_add(c, 1u);
}

__kernel void hist_global(__global uint *hist)
{
    uint bin = ((uint)get_global_id(0) * 2654435761u) & 0xffu;
    atomic_add(&hist[bin], 1u);
}

__kernel void hist2d(__global uint *hist)
{
    uint bin = (uint)get_global_id(0) * 2654435761u;
    uint x = bin & 15u, y = (bin >> 4) & 15u;
    atomic_add(&hist[y * 16u + x], 1u);
}

/* Work-groups of 256: one local bin per work-item. */
__kernel void hist_shared(__global const uint *data, __global uint *hist)
{
    __local uint bins[256];
    uint tid = get_local_id(0);
    bins[tid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&bins[data[get_global_id(0)]], 1u);
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&hist[tid], bins[tid]);
}

/* The atomicMin loop of min64_cas.s: read the target, CAS while the value is smaller. */
__kernel void min64_cas(__global const ulong *vals, volatile __global ulong *out)
{
    ulong val = vals[get_global_id(0)];
    ulong ret = *out;
    while (val < ret) {
        ulong old = ret;
        ret = atom_cmpxchg(out, old, val);
        if (ret == old)
            break;
    }
}

/* ATOMS.INC with wrap at 1023 has no OpenCL C builtin: a CAS loop, as the native baseline. */
__kernel void ring_inc(__global uint *final_idx)
{
    volatile __local uint idx;
    volatile __local uint ring[1024];
    uint tid = get_local_id(0);
    if (tid == 0)
        idx = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint old = idx;
    for (;;) {
        uint seen = atomic_cmpxchg(&idx, old, old >= 1023u ? 0u : old + 1u);
        if (seen == old)
            break;
        old = seen;
    }
    ring[old] = tid;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tid == 0)
        final_idx[get_group_id(0)] = idx;
}

/* OpenCL 1.2 has no float atomic add: the CAS loop on the word's bits, as the native baseline. */
__kernel void flush_f32(volatile __global uint *out)
{
    volatile __global uint *word = &out[get_local_id(0)];
    uint old = *word;
    for (;;) {
        uint seen = atomic_cmpxchg(word, old, as_uint(as_float(old) + 1.0f));
        if (seen == old)
            break;
        old = seen;
    }
}

/* Work-groups of 128: each work-item takes the local lock and bumps the local counter. */
__kernel void spinlock(__global uint *total)
{
    volatile __local uint lock;
    volatile __local uint count;
    uint tid = get_local_id(0);
    if (tid == 0) {
        lock = 0;
        count = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    while (atomic_cmpxchg(&lock, 0u, 1u) != 0u)
        ;
    count = count + 1u;
    atomic_xchg(&lock, 0u);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tid == 0)
        atomic_add(total, count);
}
"#;

/// A loaded PoCL platform.
pub struct Pocl {
    api: Api,
    device: Handle,
    compute_units: u32,
    /// The platform's version string (`OpenCL 3.0 PoCL 3.1+debian ...`).
    pub version: String,
}

fn load(path: &Path) -> Result<&'static Library, String> {
    // SAFETY: the libraries loaded here are the ICD loader, PoCL and the shared libraries PoCL
    // links (hwloc, LLVM, clang); their initialisers only set up their own state. They are
    // leaked, so no function pointer taken from them can outlive them.
    let lib = unsafe { Library::new(path) }.map_err(|e| e.to_string())?;
    Ok(Box::leak(Box::new(lib)))
}

impl Pocl {
    /// Loads PoCL with `threads` workers (the most any figure needs), or says why it cannot.
    /// Must run before the bench starts threads: it sets PoCL's environment variables.
    pub fn open(threads: usize) -> Result<Pocl, String> {
        // PoCL 3.1's pthread device reads POCL_MAX_PTHREAD_COUNT; later releases read
        // POCL_CPU_MAX_CU_COUNT. A count the user set is left alone.
        for var in ["POCL_MAX_PTHREAD_COUNT", "POCL_CPU_MAX_CU_COUNT"] {
            if std::env::var_os(var).is_none() {
                std::env::set_var(var, threads.to_string());
            }
        }
        let loader = match std::env::var_os("ATOMJIT_POCL") {
            Some(dir) => {
                let dir = PathBuf::from(dir);
                let root = dir.join("root");
                let lib = root.join("usr/lib/x86_64-linux-gnu");
                if !lib.join("libpocl.so.2").is_file() {
                    return Err(format!(
                        "ATOMJIT_POCL={} holds no PoCL (run scripts/pocl.py fetch {0})",
                        dir.display()
                    ));
                }
                // PoCL's own libraries, each after the ones it needs, by absolute path: the
                // dynamic linker then finds them loaded when the ICD loader opens libpocl.
                for l in [
                    lib.join("libhwloc.so.15"),
                    lib.join("libLLVM-15.so.1"),
                    root.join("usr/lib/llvm-15/lib/libclang-cpp.so.15"),
                    lib.join("libpocl.so.2"),
                ] {
                    load(&l).map_err(|e| format!("{}: {e}", l.display()))?;
                }
                std::env::set_var("OCL_ICD_VENDORS", dir.join("vendors"));
                if std::env::var_os("POCL_CACHE_DIR").is_none() {
                    std::env::set_var("POCL_CACHE_DIR", dir.join("kcache"));
                }
                lib.join("libOpenCL.so.1")
            }
            None => PathBuf::from("libOpenCL.so.1"),
        };
        let lib = load(&loader).map_err(|e| {
            format!("{e} (set ATOMJIT_POCL to the directory of scripts/pocl.py fetch)")
        })?;
        let api = Api::load(lib)?;
        let platform = find_platform(&api)?;
        let version = platform_info(&api, platform, CL_PLATFORM_VERSION)?;
        let mut device = null_mut();
        let mut n = 0;
        // SAFETY: one device handle is written to `device`, the count to `n`.
        let err =
            unsafe { (api.clGetDeviceIDs)(platform, CL_DEVICE_TYPE_CPU, 1, &mut device, &mut n) };
        ok(err, "clGetDeviceIDs")?;
        let mut compute_units = 0u32;
        // SAFETY: CL_DEVICE_MAX_COMPUTE_UNITS is a cl_uint, the 4 bytes of `compute_units`.
        let err = unsafe {
            (api.clGetDeviceInfo)(
                device,
                CL_DEVICE_MAX_COMPUTE_UNITS,
                4,
                (&mut compute_units as *mut u32).cast(),
                null_mut(),
            )
        };
        ok(err, "clGetDeviceInfo")?;
        Ok(Pocl {
            api,
            device,
            compute_units,
            version,
        })
    }

    /// A context, queue and built program running on `threads` of PoCL's workers.
    pub fn device(&self, threads: usize) -> Result<Device, String> {
        let api = self.api;
        let cus = self.compute_units as usize;
        let (device, sub) = if threads == 0 {
            return Err("0 threads asked".into());
        } else if threads == cus {
            (self.device, false)
        } else if threads < cus {
            let props = [CL_DEVICE_PARTITION_EQUALLY, threads as isize, 0];
            let mut subs = vec![null_mut(); cus / threads];
            let mut n = 0;
            // SAFETY: `props` is a zero-terminated property list; at most `subs.len()` handles
            // are written to `subs`, their count to `n`.
            let err = unsafe {
                (api.clCreateSubDevices)(
                    self.device,
                    props.as_ptr(),
                    subs.len() as u32,
                    subs.as_mut_ptr(),
                    &mut n,
                )
            };
            ok(err, "clCreateSubDevices")?;
            for &other in &subs[1..n as usize] {
                // SAFETY: `other` is a sub-device just created and used nowhere else.
                unsafe { (api.clReleaseDevice)(other) };
            }
            (subs[0], true)
        } else {
            return Err(format!("PoCL has {cus} compute units, {threads} asked"));
        };
        let mut d = Device {
            api,
            device,
            sub,
            context: null_mut(),
            queue: null_mut(),
            program: null_mut(),
        };
        let mut err = 0;
        // SAFETY: one valid device handle; no properties, no callback.
        d.context =
            unsafe { (api.clCreateContext)(null(), 1, &d.device, null(), null_mut(), &mut err) };
        ok(err, "clCreateContext")?;
        // SAFETY: the context was made for this device; in-order queue, no properties.
        d.queue = unsafe { (api.clCreateCommandQueue)(d.context, d.device, 0, &mut err) };
        ok(err, "clCreateCommandQueue")?;
        let source = SOURCE.as_ptr().cast::<c_char>();
        let len = SOURCE.len();
        // SAFETY: one string of `len` bytes (the length is given, no terminator needed).
        d.program =
            unsafe { (api.clCreateProgramWithSource)(d.context, 1, &source, &len, &mut err) };
        ok(err, "clCreateProgramWithSource")?;
        // SAFETY: builds for the one device of the context with a zero-terminated empty option
        // string, synchronously (no callback).
        let built = unsafe {
            (api.clBuildProgram)(d.program, 1, &d.device, c"".as_ptr(), null(), null_mut())
        };
        if built != CL_SUCCESS {
            return Err(format!("build failed ({built}):\n{}", d.build_log()));
        }
        Ok(d)
    }
}

fn find_platform(api: &Api) -> Result<Handle, String> {
    let mut n = 0;
    // SAFETY: asks only for the count, written to `n`.
    let err = unsafe { (api.clGetPlatformIDs)(0, null_mut(), &mut n) };
    if err != CL_SUCCESS || n == 0 {
        return Err(format!("no OpenCL platform (error {err})"));
    }
    let mut platforms = vec![null_mut(); n as usize];
    // SAFETY: at most `n` handles are written to `platforms`, which holds `n`.
    let err = unsafe { (api.clGetPlatformIDs)(n, platforms.as_mut_ptr(), &mut n) };
    ok(err, "clGetPlatformIDs")?;
    let mut names = Vec::new();
    for &p in &platforms[..n as usize] {
        let name = platform_info(api, p, CL_PLATFORM_NAME)?;
        if name.contains(POCL_PLATFORM) {
            return Ok(p);
        }
        names.push(name);
    }
    Err(format!("no PoCL among the OpenCL platforms {names:?}"))
}

fn platform_info(api: &Api, platform: Handle, param: u32) -> Result<String, String> {
    let mut len = 0;
    // SAFETY: asks only for the size, written to `len`.
    let err = unsafe { (api.clGetPlatformInfo)(platform, param, 0, null_mut(), &mut len) };
    ok(err, "clGetPlatformInfo")?;
    let mut text = vec![0u8; len];
    // SAFETY: `text` holds the `len` bytes asked for.
    let err = unsafe {
        (api.clGetPlatformInfo)(platform, param, len, text.as_mut_ptr().cast(), null_mut())
    };
    ok(err, "clGetPlatformInfo")?;
    Ok(String::from_utf8_lossy(&text)
        .trim_end_matches('\0')
        .to_string())
}

/// PoCL on some number of workers, with the kernels built.
pub struct Device {
    api: Api,
    device: Handle,
    sub: bool,
    context: Handle,
    queue: Handle,
    program: Handle,
}

impl Device {
    fn build_log(&self) -> String {
        let mut len = 0;
        let mut text = vec![0u8; 1 << 16];
        // SAFETY: at most `text.len()` bytes are written to `text`.
        unsafe {
            (self.api.clGetProgramBuildInfo)(
                self.program,
                self.device,
                CL_PROGRAM_BUILD_LOG,
                text.len(),
                text.as_mut_ptr().cast(),
                &mut len,
            )
        };
        text.truncate(len.min(text.len()));
        String::from_utf8_lossy(&text).into_owned()
    }

    /// The peer of bench workload `name` (None: no kernel for it). `data` is hist_shared's
    /// input, `vals` min64_cas's.
    pub fn peer(&self, name: &str, data: &[u32], vals: &[u64]) -> Option<Result<Peer<'_>, String>> {
        let lanes = crate::LANES;
        let zeros = |n: usize| vec![0u8; 4 * n];
        let same = |n: usize, v: u64| Expect {
            buffer: 0,
            width: 4,
            words: vec![v; n],
        };
        let spec = match name {
            "counter" | "cuda_counter" => Spec {
                kernel: "counter",
                global: lanes,
                local: crate::CTA,
                buffers: vec![zeros(1)],
                reset: None,
                expect: same(1, lanes as u64),
            },
            // 2654435761 is odd: every bin gets lanes / 256.
            "hist_global" | "visa_hist" | "surf_hist2d" => Spec {
                kernel: if name == "surf_hist2d" {
                    "hist2d"
                } else {
                    "hist_global"
                },
                global: lanes,
                local: crate::CTA,
                buffers: vec![zeros(256)],
                reset: None,
                expect: same(256, (lanes / 256) as u64),
            },
            "hist_shared" | "cuda_hist_shared" => {
                let mut counts = vec![0u64; 256];
                data.iter().for_each(|&v| counts[v as usize] += 1);
                Spec {
                    kernel: "hist_shared",
                    global: data.len(),
                    local: crate::CTA,
                    buffers: vec![words32(data), zeros(256)],
                    reset: None,
                    expect: Expect {
                        buffer: 1,
                        width: 4,
                        words: counts,
                    },
                }
            }
            "min64_cas" => Spec {
                kernel: "min64_cas",
                global: vals.len(),
                local: crate::CTA,
                buffers: vec![words64(vals), words64(&[u64::MAX])],
                reset: Some(1),
                expect: Expect {
                    buffer: 1,
                    width: 8,
                    words: vec![*vals.iter().min()?],
                },
            },
            "ring_inc" => Spec {
                kernel: "ring_inc",
                global: lanes,
                local: crate::CTA,
                buffers: vec![zeros(lanes / crate::CTA)],
                reset: None,
                expect: same(lanes / crate::CTA, crate::CTA as u64),
            },
            "flush_f32" => Spec {
                kernel: "flush_f32",
                global: lanes,
                local: crate::CTA,
                buffers: vec![zeros(crate::CTA)],
                reset: None,
                expect: same(
                    crate::CTA,
                    u64::from(((lanes / crate::CTA) as f32).to_bits()),
                ),
            },
            "spinlock" => Spec {
                kernel: "spinlock",
                global: 256 * 128,
                local: 128,
                buffers: vec![zeros(1)],
                reset: None,
                expect: same(1, 256 * 128),
            },
            _ => return None,
        };
        Some(Peer::new(self, spec))
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: each handle was created by this Device (or is null where creation failed)
        // and is released once; the peers that used them borrowed the Device and are gone.
        unsafe {
            if !self.program.is_null() {
                (self.api.clReleaseProgram)(self.program);
            }
            if !self.queue.is_null() {
                (self.api.clReleaseCommandQueue)(self.queue);
            }
            if !self.context.is_null() {
                (self.api.clReleaseContext)(self.context);
            }
            if self.sub {
                (self.api.clReleaseDevice)(self.device);
            }
        }
    }
}

/// The bytes of `v`, as a buffer's initial contents.
fn words32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// The bytes of `v`, as a buffer's initial contents.
fn words64(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// What buffer `buffer` (of `width`-byte elements) must hold after one launch.
struct Expect {
    buffer: usize,
    width: usize,
    words: Vec<u64>,
}

struct Spec {
    kernel: &'static str,
    global: usize,
    local: usize,
    /// Initial contents of the kernel's buffer arguments, in order.
    buffers: Vec<Vec<u8>>,
    /// The buffer put back to its initial contents before each timed launch (min64_cas's
    /// target, as the atomjit bench resets `out`).
    reset: Option<usize>,
    expect: Expect,
}

/// One workload's kernel with its buffers, ready to launch.
pub struct Peer<'d> {
    device: &'d Device,
    kernel: Handle,
    buffers: Vec<Handle>,
    spec: Spec,
}

impl<'d> Peer<'d> {
    fn new(device: &'d Device, spec: Spec) -> Result<Peer<'d>, String> {
        let api = device.api;
        let mut err = 0;
        let name = CString::new(spec.kernel).unwrap();
        // SAFETY: a zero-terminated name of a kernel in the built program.
        let kernel = unsafe { (api.clCreateKernel)(device.program, name.as_ptr(), &mut err) };
        ok(err, "clCreateKernel")?;
        let mut peer = Peer {
            device,
            kernel,
            buffers: Vec::new(),
            spec,
        };
        for (i, init) in peer.spec.buffers.iter().enumerate() {
            // SAFETY: COPY_HOST_PTR reads `init.len()` bytes from `init` during the call only
            // (the cast to *mut is what the C signature asks; nothing is written).
            let buf = unsafe {
                (api.clCreateBuffer)(
                    device.context,
                    CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                    init.len(),
                    init.as_ptr() as *mut c_void,
                    &mut err,
                )
            };
            ok(err, "clCreateBuffer")?;
            peer.buffers.push(buf);
            // SAFETY: a buffer argument is given as a pointer to its cl_mem handle, which
            // the kernel object copies.
            let set = unsafe {
                (api.clSetKernelArg)(
                    kernel,
                    i as u32,
                    std::mem::size_of::<Handle>(),
                    (&buf as *const Handle).cast(),
                )
            };
            ok(set, "clSetKernelArg")?;
        }
        Ok(peer)
    }

    /// Runs the kernel once: enqueue and wait (what the bench times).
    pub fn launch(&self) -> Result<(), String> {
        let (api, s) = (self.device.api, &self.spec);
        // SAFETY: a one-dimensional range; `global` and `local` are read during the call.
        let err = unsafe {
            (api.clEnqueueNDRangeKernel)(
                self.device.queue,
                self.kernel,
                1,
                null(),
                &s.global,
                &s.local,
                0,
                null(),
                null_mut(),
            )
        };
        ok(err, "clEnqueueNDRangeKernel")?;
        // SAFETY: waits for the queue this Peer's device owns.
        ok(unsafe { (api.clFinish)(self.device.queue) }, "clFinish")
    }

    /// Puts the reset buffer back to its initial contents (blocking), if the workload has one.
    pub fn reset(&self) -> Result<(), String> {
        let Some(i) = self.spec.reset else {
            return Ok(());
        };
        let init = &self.spec.buffers[i];
        // SAFETY: a blocking write of `init.len()` bytes, the buffer's size, from `init`.
        let err = unsafe {
            (self.device.api.clEnqueueWriteBuffer)(
                self.device.queue,
                self.buffers[i],
                CL_TRUE,
                0,
                init.len(),
                init.as_ptr().cast(),
                0,
                null(),
                null_mut(),
            )
        };
        ok(err, "clEnqueueWriteBuffer")
    }

    /// Whether the workload must be reset before each launch.
    pub fn resets(&self) -> bool {
        self.spec.reset.is_some()
    }

    /// Checks what one launch from the initial contents left in the result buffer.
    pub fn verify(&self) -> Result<(), String> {
        let e = &self.spec.expect;
        let mut bytes = vec![0u8; self.spec.buffers[e.buffer].len()];
        // SAFETY: a blocking read of the whole buffer into `bytes`, which is its size.
        let err = unsafe {
            (self.device.api.clEnqueueReadBuffer)(
                self.device.queue,
                self.buffers[e.buffer],
                CL_TRUE,
                0,
                bytes.len(),
                bytes.as_mut_ptr().cast(),
                0,
                null(),
                null_mut(),
            )
        };
        ok(err, "clEnqueueReadBuffer")?;
        let got: Vec<u64> = bytes
            .chunks(e.width)
            .map(|c| match *c {
                [a, b, c, d] => u32::from_ne_bytes([a, b, c, d]) as u64,
                _ => u64::from_ne_bytes(c.try_into().unwrap()),
            })
            .collect();
        match got.iter().zip(&e.words).position(|(g, w)| g != w) {
            None => Ok(()),
            Some(i) => Err(format!(
                "{}: element {i} of buffer {} is {}, expected {}",
                self.spec.kernel, e.buffer, got[i], e.words[i]
            )),
        }
    }
}

impl Drop for Peer<'_> {
    fn drop(&mut self) {
        // SAFETY: the kernel and buffers were created by this Peer and are released once, after
        // the queue finished with them (every launch ends with clFinish).
        unsafe {
            for &b in &self.buffers {
                (self.device.api.clReleaseMemObject)(b);
            }
            (self.device.api.clReleaseKernel)(self.kernel);
        }
    }
}

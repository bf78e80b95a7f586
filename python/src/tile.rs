//! cuTile's bulk tile atomics for `atomjit.tile` (`python/atomjit/tile.py`, `docs/python.md`):
//! numpy arrays are updated in place (their own memory, through `atomjit::tile::ArrayView`),
//! device arrays through the engine; index and value tiles are read where they are (strided
//! numpy views, no copy); the result is a new numpy array of the index shape.

use super::{engine_error, error, Buffer, Engine};
use atomjit::engine::DeviceArray;
use atomjit::tile::{
    ArrayView, DType, MemoryOrder, MemoryScope, Operand, Options, RmwOp, ScalarValue, Tile,
    TileError, TileView,
};
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

/// The operation: `cas` or an RMW op's cuTile name (`add`, `xchg`, ...).
enum Op {
    Cas,
    Rmw(RmwOp),
}

fn op_of(py: Python<'_>, name: &str) -> PyResult<Op> {
    Ok(match name {
        "cas" => Op::Cas,
        "xchg" => Op::Rmw(RmwOp::Xchg),
        "add" => Op::Rmw(RmwOp::Add),
        "min" => Op::Rmw(RmwOp::Min),
        "max" => Op::Rmw(RmwOp::Max),
        "and" => Op::Rmw(RmwOp::And),
        "or" => Op::Rmw(RmwOp::Or),
        "xor" => Op::Rmw(RmwOp::Xor),
        _ => {
            return Err(error(
                py,
                "ArgumentError",
                format!("no tile atomic `{name}`"),
            ))
        }
    })
}

/// cuTile's enum values (`MemoryOrder.ACQ_REL.value == "acq_rel"`, `MemoryScope.DEVICE.value
/// == "device"`); `None` is a missing scope, which the operation refuses.
fn options(
    py: Python<'_>,
    check_bounds: bool,
    order: &str,
    scope: Option<&str>,
) -> PyResult<Options> {
    let memory_order = match order {
        "weak" => MemoryOrder::Weak,
        "relaxed" => MemoryOrder::Relaxed,
        "acquire" => MemoryOrder::Acquire,
        "release" => MemoryOrder::Release,
        "acq_rel" => MemoryOrder::AcqRel,
        _ => {
            return Err(error(
                py,
                "ArgumentError",
                format!("no memory order `{order}`"),
            ))
        }
    };
    let memory_scope = match scope {
        None => None,
        Some("block") => Some(MemoryScope::Block),
        Some("device") => Some(MemoryScope::Device),
        Some("sys") => Some(MemoryScope::System),
        Some("cluster") => Some(MemoryScope::Cluster),
        Some(s) => return Err(error(py, "ArgumentError", format!("no memory scope `{s}`"))),
    };
    Ok(Options {
        check_bounds,
        memory_order,
        memory_scope,
    })
}

/// The dtype of a numpy array, if it is one tile atomics know (native byte order).
fn dtype_of(py: Python<'_>, a: &Bound<'_, PyUntypedArray>) -> PyResult<DType> {
    let d = a.dtype();
    let (kind, size) = (d.kind(), d.itemsize());
    let found = match (kind, size) {
        (b'b', 1) => Some(DType::Bool),
        (b'i', 1) => Some(DType::Int8),
        (b'i', 2) => Some(DType::Int16),
        (b'i', 4) => Some(DType::Int32),
        (b'i', 8) => Some(DType::Int64),
        (b'u', 1) => Some(DType::UInt8),
        (b'u', 2) => Some(DType::UInt16),
        (b'u', 4) => Some(DType::UInt32),
        (b'u', 8) => Some(DType::UInt64),
        (b'f', 2) => Some(DType::Float16),
        (b'f', 4) => Some(DType::Float32),
        (b'f', 8) => Some(DType::Float64),
        _ => None,
    };
    match found {
        Some(t) if d.is_native_byteorder() != Some(false) => Ok(t),
        Some(_) => Err(error(
            py,
            "ArgumentError",
            "a numpy array in the other byte order: use arr.astype(arr.dtype.newbyteorder('='))",
        )),
        None => Err(error(
            py,
            "ArgumentError",
            format!("tile atomics take no numpy arrays of dtype {}", d.str()?),
        )),
    }
}

/// The array's first byte and its flags.
fn raw_parts(a: &Bound<'_, PyUntypedArray>) -> (*mut u8, i32) {
    // SAFETY: `a` is a live numpy array (a `PyUntypedArray` is only made from one), so its
    // `PyArrayObject` header is valid to read while the GIL is held.
    unsafe {
        let raw = &*a.as_array_ptr();
        (raw.data as *mut u8, raw.flags)
    }
}

/// A read-only input: a Python bool/int/float constant, or a numpy array (a numpy scalar comes
/// as a 0-d array from the package).
fn operand<'py>(py: Python<'py>, what: &str, ob: &Bound<'py, PyAny>) -> PyResult<Operand<'py>> {
    if ob.is_instance_of::<PyBool>() {
        return Ok(Operand::Scalar(ScalarValue::Bool(ob.extract()?)));
    }
    if ob.is_instance_of::<PyInt>() {
        let v: i128 = ob.extract().map_err(|_| {
            error(
                py,
                "ArgumentError",
                format!("{what}: the integer {ob} is out of range"),
            )
        })?;
        return Ok(Operand::Scalar(ScalarValue::Int(v)));
    }
    if ob.is_instance_of::<PyFloat>() {
        return Ok(Operand::Scalar(ScalarValue::Float(ob.extract()?)));
    }
    let a = ob.cast::<PyUntypedArray>().map_err(|_| {
        error(
            py,
            "ArgumentError",
            format!(
                "{what}: expected a numpy array or a Python number, not {}",
                ob.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ),
        )
    })?;
    let dtype = dtype_of(py, a)?;
    let (data, _) = raw_parts(a);
    // SAFETY: the numpy array `a` is borrowed for `'py` (the call's lifetime), so its buffer
    // stays allocated; its shape and strides describe only elements of that buffer (numpy's
    // own invariant). The operation only reads it. The package refuses an input that shares
    // memory with the updated array (`np.may_share_memory`), so atomjit's own atomic writes
    // never race these reads; another Python thread writing the input while the GIL is
    // released races it as it would race any numpy operation that releases the GIL.
    let view = unsafe { TileView::from_raw(data, dtype, a.shape(), a.strides()) }
        .map_err(|e| tile_error(py, what, e))?;
    Ok(Operand::View(view))
}

fn tile_error(py: Python<'_>, what: &str, e: TileError) -> PyErr {
    let message = if what.is_empty() {
        e.to_string()
    } else {
        format!("{what}: {e}")
    };
    error(py, "TileError", message)
}

/// The result tile as a numpy array of its dtype and shape.
fn to_numpy<'py>(py: Python<'py>, t: Tile) -> PyResult<Bound<'py, PyAny>> {
    fn typed<'py, T: numpy::Element + atomjit::tile::Element>(
        py: Python<'py>,
        t: &Tile,
    ) -> PyResult<Bound<'py, PyAny>> {
        let data = t
            .to_vec::<T>()
            .map_err(|e| error(py, "TileError", e.to_string()))?;
        Ok(PyArray1::from_vec(py, data)
            .reshape(t.shape().to_vec())?
            .into_any())
    }
    match t.dtype() {
        DType::Bool => typed::<bool>(py, &t),
        DType::Int8 => typed::<i8>(py, &t),
        DType::Int16 => typed::<i16>(py, &t),
        DType::Int32 => typed::<i32>(py, &t),
        DType::Int64 => typed::<i64>(py, &t),
        DType::UInt8 => typed::<u8>(py, &t),
        DType::UInt16 => typed::<u16>(py, &t),
        DType::UInt32 => typed::<u32>(py, &t),
        DType::UInt64 => typed::<u64>(py, &t),
        DType::Float16 => typed::<half::f16>(py, &t),
        DType::Float32 => typed::<f32>(py, &t),
        DType::Float64 => typed::<f64>(py, &t),
        DType::BFloat16 => Err(error(
            py,
            "TileError",
            "numpy has no bfloat16: the result cannot be returned",
        )),
    }
}

/// `tile_atomic(engine, op, array, indices, values, check_bounds, order, scope)`: one bulk
/// atomic on a numpy array, in place. `values` is `[update]`, or `[expected, desired]` for
/// `cas`. Returns the old values.
#[pyfunction]
#[pyo3(signature = (engine, op, array, indices, values, check_bounds, order, scope))]
#[allow(clippy::too_many_arguments)]
pub fn tile_atomic<'py>(
    py: Python<'py>,
    engine: &Engine,
    op: &str,
    array: &Bound<'py, PyAny>,
    indices: Vec<Bound<'py, PyAny>>,
    values: Vec<Bound<'py, PyAny>>,
    check_bounds: bool,
    order: &str,
    scope: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let op = op_of(py, op)?;
    let opts = options(py, check_bounds, order, scope)?;
    let a = array.cast::<PyUntypedArray>().map_err(|_| {
        error(
            py,
            "ArgumentError",
            "the array must be a numpy array or a DeviceArray",
        )
    })?;
    let dtype = dtype_of(py, a)?;
    let (data, flags) = raw_parts(a);
    if flags & numpy::npyffi::NPY_ARRAY_WRITEABLE == 0 {
        return Err(error(
            py,
            "ArgumentError",
            "the array is read-only: atomics update it in place",
        ));
    }
    let shape: Vec<u64> = a.shape().iter().map(|&d| d as u64).collect();
    let strides: Vec<i64> = a.strides().iter().map(|&s| s as i64).collect();
    // SAFETY: the numpy array `array` is borrowed for the whole call and writeable; its shape
    // and strides address only its own buffer (numpy's invariant), and `from_raw` checks the
    // alignment. Other Python threads may touch the array during the call (the GIL is
    // released), as they may during any numpy operation that releases it; atomjit itself
    // only accesses it through host atomics.
    let view = unsafe { ArrayView::from_raw(data, dtype, &shape, &strides) }
        .map_err(|e| tile_error(py, "", e))?;
    let ops = operands(py, &op, &indices, &values)?;
    let tiles = engine.engine.tiles();
    let result = py.detach(|| run(tiles, &op, &view, &ops, &opts));
    to_numpy(py, result.map_err(|e| tile_error(py, "", e))?)
}

/// [`tile_atomic`] on a device array: its buffer, shape and dtype name (`int32`, ...).
#[pyfunction]
#[pyo3(signature = (engine, op, buffer, shape, dtype, indices, values, check_bounds, order, scope))]
#[allow(clippy::too_many_arguments)]
pub fn tile_atomic_device<'py>(
    py: Python<'py>,
    engine: &Engine,
    op: &str,
    buffer: &Buffer,
    shape: Vec<u64>,
    dtype: &str,
    indices: Vec<Bound<'py, PyAny>>,
    values: Vec<Bound<'py, PyAny>>,
    check_bounds: bool,
    order: &str,
    scope: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let op = op_of(py, op)?;
    let opts = options(py, check_bounds, order, scope)?;
    let dtype = DType::ALL
        .into_iter()
        .find(|d| d.to_string() == dtype)
        .ok_or_else(|| {
            error(
                py,
                "ArgumentError",
                format!("tile atomics take no {dtype} arrays"),
            )
        })?;
    let array =
        DeviceArray::new(buffer.live(py)?, dtype, &shape).map_err(|e| engine_error(py, e, None))?;
    let ops = operands(py, &op, &indices, &values)?;
    let e = &engine.engine;
    let result = py.detach(|| match &op {
        Op::Cas => e.atomic_cas(&array, &ops.0, &ops.1[0], &ops.1[1], &opts),
        Op::Rmw(r) => e.atomic_rmw(*r, &array, &ops.0, &ops.1[0], &opts),
    });
    to_numpy(py, result.map_err(|err| engine_error(py, err, None))?)
}

type Operands<'py> = (Vec<Operand<'py>>, Vec<Operand<'py>>);

fn operands<'py>(
    py: Python<'py>,
    op: &Op,
    indices: &[Bound<'py, PyAny>],
    values: &[Bound<'py, PyAny>],
) -> PyResult<Operands<'py>> {
    let want = match op {
        Op::Cas => 2,
        Op::Rmw(_) => 1,
    };
    if values.len() != want {
        return Err(error(
            py,
            "ArgumentError",
            format!(
                "the operation takes {want} value tiles, not {}",
                values.len()
            ),
        ));
    }
    let idx = indices
        .iter()
        .enumerate()
        .map(|(i, ob)| operand(py, &format!("index {i}"), ob))
        .collect::<PyResult<Vec<_>>>()?;
    let names = if values.len() == 2 {
        ["expected", "desired"]
    } else {
        ["update", "update"]
    };
    let vals = values
        .iter()
        .zip(names)
        .map(|(ob, name)| operand(py, name, ob))
        .collect::<PyResult<Vec<_>>>()?;
    Ok((idx, vals))
}

fn run(
    tiles: &atomjit::tile::TileEngine,
    op: &Op,
    view: &ArrayView,
    ops: &Operands,
    opts: &Options,
) -> Result<Tile, TileError> {
    match op {
        Op::Cas => tiles.atomic_cas(view, &ops.0, &ops.1[0], &ops.1[1], opts),
        Op::Rmw(r) => tiles.atomic_rmw(*r, view, &ops.0, &ops.1[0], opts),
    }
}

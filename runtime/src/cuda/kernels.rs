//! The kernels of one GPU (compiled by `nvrtc`, loaded once per GPU) and
//! typed launchers, one per kernel family of `meshrun_kernels::cuda::names`.
//!
//! The kernels trust their arguments (no bounds checks on the GPU), so
//! each launcher checks, before it launches, that every buffer holds all
//! the elements the kernel will touch; the launch itself is
//! `ffi::launch`. Needs a GPU to run (not exercised in CI).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, DevicePtr, DriverError, LaunchArgs, LaunchConfig,
    PushKernelArg, SyncOnDrop,
};
use cudarc::nvrtc::Ptx;
use meshrun_kernels::cuda::{modules, names, KernelModule};

use super::buffer::{with_dev, DevData};
use super::ffi;
use super::launch::{self, count, LaunchDims};
use super::layout::StridedCopy;
use super::nvrtc;

/// Every kernel function, loaded into one GPU's context.
pub struct GpuKernels {
    functions: HashMap<String, CudaFunction>,
    arch: String,
    ctx: Arc<CudaContext>,
    /// Kernels generated for a program (reduce bodies), loaded on first
    /// use, by their module's source.
    generated: Mutex<HashMap<String, CudaFunction>>,
}

impl GpuKernels {
    /// Compile (or take from the caches) every module for `arch` and load
    /// it into `ctx`.
    pub fn load(ctx: &Arc<CudaContext>, arch: &str) -> Result<GpuKernels, String> {
        let mut functions = HashMap::new();
        for m in modules() {
            functions.extend(load_module(ctx, &m, arch)?);
        }
        Ok(GpuKernels {
            functions,
            arch: arch.to_string(),
            ctx: ctx.clone(),
            generated: Mutex::new(HashMap::new()),
        })
    }

    /// Function `name` of a module generated for a program, compiled and
    /// loaded on first use.
    pub fn generated(&self, m: &KernelModule, name: &str) -> Result<CudaFunction, String> {
        let key = format!("{name}\n{}", m.source);
        if let Some(f) = self
            .generated
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(f.clone());
        }
        let loaded = load_module(&self.ctx, m, &self.arch)?;
        let f = loaded
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| f)
            .ok_or_else(|| format!("kernel {name} is not in module {}", m.name))?;
        let mut map = self.generated.lock().unwrap_or_else(|e| e.into_inner());
        Ok(map.entry(key).or_insert(f).clone())
    }

    pub fn arch(&self) -> &str {
        &self.arch
    }

    fn get(&self, name: &str) -> Result<&CudaFunction, String> {
        self.functions
            .get(name)
            .ok_or_else(|| format!("no CUDA kernel named {name}"))
    }
}

/// Every function of `m`, compiled for `arch` (a cubin for this GPU; for
/// a GPU newer than NVRTC knows, PTX that the driver compiles) and loaded
/// into `ctx`.
fn load_module(
    ctx: &Arc<CudaContext>,
    m: &KernelModule,
    arch: &str,
) -> Result<Vec<(String, CudaFunction)>, String> {
    let image = match nvrtc::cubin_of(m, arch) {
        Ok(cubin) => Ptx::from_binary(cubin.as_ref().clone()),
        Err(e) => nvrtc::fallback_ptx(m)
            .map_err(|p| format!("{e}; and as {}: {p}", nvrtc::PTX_FALLBACK_ARCH))?,
    };
    let module = ctx
        .load_module(image)
        .map_err(|e| format!("cannot load kernel module {} ({arch}): {e}", m.name))?;
    m.functions
        .iter()
        .map(|f| {
            module
                .load_function(f)
                .map(|func| (f.clone(), func))
                .map_err(|e| format!("kernel {f} is missing from module {}: {e}", m.name))
        })
        .collect()
}

fn driver(e: DriverError) -> String {
    format!("CUDA: {e}")
}

fn cfg(d: LaunchDims) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (d.grid, 1, 1),
        block_dim: (d.block, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn push<'a>(args: &mut LaunchArgs<'a>, d: &'a DevData) {
    with_dev!(d, s => {
        args.arg(s);
    })
}

fn push_mut<'a>(args: &mut LaunchArgs<'a>, d: &'a mut DevData) {
    with_dev!(d, s => {
        args.arg(s);
    })
}

/// `d` holds at least `n` elements.
fn need(d: &DevData, n: usize, what: &str) -> Result<(), String> {
    if d.len() >= n {
        Ok(())
    } else {
        Err(format!(
            "{what} holds {} elements; the kernel reads or writes {n}",
            d.len()
        ))
    }
}

/// Launches kernels of one GPU on one stream.
pub struct Launcher<'a> {
    pub stream: &'a Arc<CudaStream>,
    pub kernels: &'a GpuKernels,
}

impl Launcher<'_> {
    /// `y[i] = f(x[i])` for `i < n`: unary ops, `is_finite`, conversions.
    pub fn map1(&self, name: &str, x: &DevData, y: &mut DevData, n: usize) -> Result<(), String> {
        let Some(dims) = launch::elementwise(n) else {
            return Ok(());
        };
        need(x, n, "the operand")?;
        need(y, n, "the result")?;
        let f = self.kernels.get(name)?;
        let n = count(n)?;
        let mut args = self.stream.launch_builder(f);
        push(&mut args, x);
        push_mut(&mut args, y);
        args.arg(&n);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// `y[i] = reduce_precision(x[i])` to the format (exponent_bits >= 1,
    /// mantissa_bits >= 0, as the verifier checked).
    pub fn reduce_precision(
        &self,
        x: &DevData,
        y: &mut DevData,
        n: usize,
        exponent_bits: i32,
        mantissa_bits: i32,
    ) -> Result<(), String> {
        let Some(dims) = launch::elementwise(n) else {
            return Ok(());
        };
        need(x, n, "the operand")?;
        need(y, n, "the result")?;
        if exponent_bits < 1 || mantissa_bits < 0 {
            return Err(format!(
                "reduce_precision to e{exponent_bits}m{mantissa_bits}: no such format"
            ));
        }
        let name = names::reduce_precision(x.elem()).ok_or("reduce_precision of a non-float")?;
        let f = self.kernels.get(&name)?;
        let n = count(n)?;
        let mut args = self.stream.launch_builder(f);
        push(&mut args, x);
        push_mut(&mut args, y);
        args.arg(&n);
        args.arg(&exponent_bits);
        args.arg(&mantissa_bits);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// `y[i] = f(a[i], b[i])`: binary ops and comparisons.
    pub fn map2(
        &self,
        name: &str,
        a: &DevData,
        b: &DevData,
        y: &mut DevData,
        n: usize,
    ) -> Result<(), String> {
        let Some(dims) = launch::elementwise(n) else {
            return Ok(());
        };
        need(a, n, "lhs")?;
        need(b, n, "rhs")?;
        need(y, n, "the result")?;
        let f = self.kernels.get(name)?;
        let n = count(n)?;
        let mut args = self.stream.launch_builder(f);
        push(&mut args, a);
        push(&mut args, b);
        push_mut(&mut args, y);
        args.arg(&n);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// `select(p, a, b)`; `p` is a scalar unless `p_full`.
    #[allow(clippy::too_many_arguments)]
    pub fn select(
        &self,
        p: &DevData,
        p_full: bool,
        a: &DevData,
        b: &DevData,
        y: &mut DevData,
        n: usize,
    ) -> Result<(), String> {
        let Some(dims) = launch::elementwise(n) else {
            return Ok(());
        };
        need(p, if p_full { n } else { 1 }, "pred")?;
        need(a, n, "on_true")?;
        need(b, n, "on_false")?;
        need(y, n, "the result")?;
        let name = names::select(a.elem().byte_size()).ok_or("select of an odd width")?;
        let f = self.kernels.get(&name)?;
        let (n, p_all) = (count(n)?, p_full as i64);
        let mut args = self.stream.launch_builder(f);
        push(&mut args, p);
        args.arg(&p_all);
        push(&mut args, a);
        push(&mut args, b);
        push_mut(&mut args, y);
        args.arg(&n);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// `clamp(lo, x, hi)`; a bound is a scalar unless its flag is set.
    #[allow(clippy::too_many_arguments)]
    pub fn clamp(
        &self,
        lo: &DevData,
        lo_full: bool,
        x: &DevData,
        hi: &DevData,
        hi_full: bool,
        y: &mut DevData,
        n: usize,
    ) -> Result<(), String> {
        let Some(dims) = launch::elementwise(n) else {
            return Ok(());
        };
        need(lo, if lo_full { n } else { 1 }, "min")?;
        need(hi, if hi_full { n } else { 1 }, "max")?;
        need(x, n, "the operand")?;
        need(y, n, "the result")?;
        let name = names::clamp(x.elem()).ok_or("clamp of an unsupported type")?;
        let f = self.kernels.get(&name)?;
        let (n, lo_all, hi_all) = (count(n)?, lo_full as i64, hi_full as i64);
        let mut args = self.stream.launch_builder(f);
        push(&mut args, lo);
        args.arg(&lo_all);
        push(&mut args, x);
        push(&mut args, hi);
        args.arg(&hi_all);
        push_mut(&mut args, y);
        args.arg(&n);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// `y[i] = offset + (i / inner) % dim_size`, converted to `y`'s type.
    pub fn iota(
        &self,
        y: &mut DevData,
        n: usize,
        dim_size: usize,
        inner: usize,
        offset: i64,
    ) -> Result<(), String> {
        let Some(dims) = launch::elementwise(n) else {
            return Ok(());
        };
        need(y, n, "the result")?;
        let name = names::iota(y.elem()).ok_or("iota of an unsupported type")?;
        let f = self.kernels.get(&name)?;
        let (n, dim_size, inner) = (count(n)?, count(dim_size.max(1))?, count(inner.max(1))?);
        let mut args = self.stream.launch_builder(f);
        push_mut(&mut args, y);
        args.arg(&n);
        args.arg(&dim_size);
        args.arg(&inner);
        args.arg(&offset);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// `y = x` except elements whose index along the dimension is `>=
    /// valid`, which become `bits`.
    #[allow(clippy::too_many_arguments)]
    pub fn mask(
        &self,
        x: &DevData,
        y: &mut DevData,
        n: usize,
        dim_size: usize,
        inner: usize,
        valid: i64,
        bits: u64,
    ) -> Result<(), String> {
        let Some(dims) = launch::elementwise(n) else {
            return Ok(());
        };
        need(x, n, "the operand")?;
        need(y, n, "the result")?;
        let name = names::mask(x.elem().byte_size()).ok_or("mask of an odd width")?;
        let f = self.kernels.get(&name)?;
        let (n, dim_size, inner) = (count(n)?, count(dim_size.max(1))?, count(inner.max(1))?);
        let mut args = self.stream.launch_builder(f);
        push(&mut args, x);
        push_mut(&mut args, y);
        args.arg(&n);
        args.arg(&dim_size);
        args.arg(&inner);
        args.arg(&valid);
        args.arg(&bits);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// Run one strided copy from `src` into `dst` (same element type).
    pub fn copy(&self, src: &DevData, dst: &mut DevData, copy: &StridedCopy) -> Result<(), String> {
        if src.elem() != dst.elem() {
            return Err(format!("a copy from {} into {}", src.elem(), dst.elem()));
        }
        copy.check_bounds(src.len(), dst.len())?;
        let copy = copy.simplified();
        let Some(dims) = launch::elementwise(copy.len()) else {
            return Ok(());
        };
        let name = names::strided_copy(src.elem().byte_size()).ok_or("a copy of an odd width")?;
        let f = self.kernels.get(&name)?;
        let meta = self.stream.clone_htod(&copy.encode()?).map_err(driver)?;
        let mut args = self.stream.launch_builder(f);
        push(&mut args, src);
        push_mut(&mut args, dst);
        args.arg(&meta);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// Fold each row of the `outer x red` matrix `x` into `y`, from the
    /// scalar `init`.
    pub fn reduce(
        &self,
        name: &str,
        x: &DevData,
        init: &DevData,
        y: &mut DevData,
        outer: usize,
        red: usize,
    ) -> Result<(), String> {
        let Some(dims) = launch::rows(outer) else {
            return Ok(());
        };
        need(
            x,
            outer.checked_mul(red).ok_or("too many elements")?,
            "the operand",
        )?;
        need(init, 1, "the init value")?;
        need(y, outer, "the result")?;
        let f = self.kernels.get(name)?;
        let (outer, red) = (count(outer)?, count(red)?);
        let mut args = self.stream.launch_builder(f);
        push(&mut args, x);
        push(&mut args, init);
        push_mut(&mut args, y);
        args.arg(&outer);
        args.arg(&red);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// Fold each row of the `outer x red` matrices `xs` into `ys` with the
    /// body of `module` (`meshrun_kernels::cuda::body`), from the scalars
    /// `inits`.
    pub fn reduce_body(
        &self,
        module: &KernelModule,
        xs: &[&DevData],
        inits: &[&DevData],
        ys: &mut [DevData],
        outer: usize,
        red: usize,
    ) -> Result<(), String> {
        let Some(dims) = launch::rows(outer) else {
            return Ok(());
        };
        if xs.len() != inits.len() || xs.len() != ys.len() {
            return Err(format!(
                "{} inputs, {} init values and {} results",
                xs.len(),
                inits.len(),
                ys.len()
            ));
        }
        let total = outer.checked_mul(red).ok_or("too many elements")?;
        for (k, x) in xs.iter().enumerate() {
            need(x, total, &format!("input {k}"))?;
            need(inits[k], 1, &format!("init value {k}"))?;
            need(&ys[k], outer, &format!("result {k}"))?;
        }
        let f = self
            .kernels
            .generated(module, meshrun_kernels::cuda::body::REDUCE_BODY_FUNCTION)?;
        let (outer, red) = (count(outer)?, count(red)?);
        let mut args = self.stream.launch_builder(&f);
        for x in xs {
            push(&mut args, x);
        }
        for i in inits {
            push(&mut args, i);
        }
        for y in ys.iter_mut() {
            push_mut(&mut args, y);
        }
        args.arg(&outer);
        args.arg(&red);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// Sort every row of the `rows x n` matrices `xs` together into `ys`
    /// with the comparator of `module` (`meshrun_kernels::cuda::sort`);
    /// `scratch` holds two `rows x n` index buffers (i64).
    pub fn sort_rows(
        &self,
        module: &KernelModule,
        xs: &[&DevData],
        ys: &mut [DevData],
        scratch: (&mut DevData, &mut DevData),
        rows: usize,
        n: usize,
    ) -> Result<(), String> {
        let Some(dims) = launch::elementwise(rows) else {
            return Ok(());
        };
        if xs.len() != ys.len() {
            return Err(format!("{} inputs and {} results", xs.len(), ys.len()));
        }
        let total = rows.checked_mul(n).ok_or("too many elements")?;
        for (k, x) in xs.iter().enumerate() {
            need(x, total, &format!("input {k}"))?;
            need(&ys[k], total, &format!("result {k}"))?;
        }
        need(scratch.0, total, "the index scratch")?;
        need(scratch.1, total, "the index scratch")?;
        let f = self
            .kernels
            .generated(module, meshrun_kernels::cuda::sort::SORT_FUNCTION)?;
        let (rows, n) = (count(rows)?, count(n)?);
        let mut args = self.stream.launch_builder(&f);
        for x in xs {
            push(&mut args, x);
        }
        for y in ys.iter_mut() {
            push_mut(&mut args, y);
        }
        push_mut(&mut args, scratch.0);
        push_mut(&mut args, scratch.1);
        args.arg(&rows);
        args.arg(&n);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// The `k` largest elements of each row of the `rows x n` matrix `x`
    /// into the `rows x k` matrices `y` and `idx` (i32), by the module of
    /// `meshrun_kernels::cuda::sort::top_k_module`.
    #[allow(clippy::too_many_arguments)]
    pub fn top_k_rows(
        &self,
        module: &KernelModule,
        x: &DevData,
        y: &mut DevData,
        idx: &mut DevData,
        scratch: (&mut DevData, &mut DevData),
        rows: usize,
        n: usize,
        k: usize,
    ) -> Result<(), String> {
        let Some(dims) = launch::elementwise(rows) else {
            return Ok(());
        };
        let total = rows.checked_mul(n).ok_or("too many elements")?;
        need(x, total, "the operand")?;
        need(y, rows * k, "the values")?;
        need(idx, rows * k, "the indices")?;
        need(scratch.0, total, "the index scratch")?;
        need(scratch.1, total, "the index scratch")?;
        let f = self
            .kernels
            .generated(module, meshrun_kernels::cuda::sort::TOP_K_FUNCTION)?;
        let (rows, n, k) = (count(rows)?, count(n)?, count(k)?);
        let mut args = self.stream.launch_builder(&f);
        push(&mut args, x);
        push_mut(&mut args, y);
        push_mut(&mut args, idx);
        push_mut(&mut args, scratch.0);
        push_mut(&mut args, scratch.1);
        args.arg(&rows);
        args.arg(&n);
        args.arg(&k);
        ffi::launch(&mut args, cfg(dims)).map_err(driver)
    }

    /// `y` = `x` (of `shape`) reversed along `dims`: the strided-copy
    /// kernel with the signed descriptor of `super::reverse_copy`.
    pub fn reverse(
        &self,
        x: &DevData,
        y: &mut DevData,
        shape: &[usize],
        dims: &[i64],
    ) -> Result<(), String> {
        if x.elem() != y.elem() {
            return Err(format!("a reverse from {} into {}", x.elem(), y.elem()));
        }
        let n: usize = shape.iter().product();
        need(x, n, "the operand")?;
        need(y, n, "the result")?;
        let Some(launch_dims) = launch::elementwise(n) else {
            return Ok(());
        };
        let meta = super::reverse_copy::reverse_meta(shape, dims)?;
        let name = names::strided_copy(x.elem().byte_size()).ok_or("a copy of an odd width")?;
        let f = self.kernels.get(&name)?;
        let meta = self.stream.clone_htod(&meta).map_err(driver)?;
        let mut args = self.stream.launch_builder(f);
        push(&mut args, x);
        push_mut(&mut args, y);
        args.arg(&meta);
        ffi::launch(&mut args, cfg(launch_dims)).map_err(driver)
    }

    /// `y[i]` = the fold of `sources[k][offset_k + i]` over `k` in order.
    pub fn reduce_many(
        &self,
        name: &str,
        sources: &[(&DevData, usize)],
        y: &mut DevData,
        n: usize,
    ) -> Result<(), String> {
        let Some(dims) = launch::elementwise(n) else {
            return Ok(());
        };
        if sources.is_empty() {
            return Err("a reduction of no blocks".into());
        }
        need(y, n, "the result")?;
        let width = y.elem().byte_size() as u64;
        let mut guards: Vec<SyncOnDrop<'_>> = Vec::with_capacity(sources.len());
        let mut ptrs: Vec<u64> = Vec::with_capacity(sources.len());
        for (k, (src, offset)) in sources.iter().enumerate() {
            if src.elem() != y.elem() {
                return Err(format!(
                    "block {k} is {}, the result {}",
                    src.elem(),
                    y.elem()
                ));
            }
            need(src, offset + n, &format!("block {k}"))?;
            let (ptr, guard) = with_dev!(*src, s => s.device_ptr(self.stream));
            ptrs.push(ptr + *offset as u64 * width);
            guards.push(guard);
        }
        let f = self.kernels.get(name)?;
        let table = self.stream.clone_htod(&ptrs).map_err(driver)?;
        let (n, k) = (count(n)?, count(sources.len())?);
        let mut args = self.stream.launch_builder(f);
        args.arg(&table);
        args.arg(&k);
        push_mut(&mut args, y);
        args.arg(&n);
        let launched = ffi::launch(&mut args, cfg(dims)).map_err(driver);
        // The guards record the reads on `stream` now that they are queued.
        drop(guards);
        launched
    }
}

mod conv;
mod index;
mod rng;
mod window;

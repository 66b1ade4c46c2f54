//! The kernels of one GPU (compiled by `nvrtc`, loaded once per GPU) and
//! typed launchers, one per kernel family of `meshrun_kernels::cuda::names`.
//!
//! The kernels trust their arguments (no bounds checks on the GPU). Each
//! launcher is its plan (`super::kernel_plans`: kernel, grid, arguments)
//! run by [`Launcher::run`], the one place that checks a launch (every
//! buffer holds the elements the kernel touches; the arguments are the
//! kernel's parameters, read back from its source, in order, kind and
//! element type), pushes its arguments and calls `ffi::launch`. Needs a
//! GPU to run (not exercised in CI; the plans are tested without one).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchArgs,
    LaunchConfig, PushKernelArg, SyncOnDrop,
};
use cudarc::nvrtc::Ptx;
use meshrun_compiler::ir::ops::scatter::ScatterUpdate;
use meshrun_compiler::ir::ElemType;
use meshrun_kernels::cuda::params::Param;
use meshrun_kernels::cuda::rng::RngPlan;
use meshrun_kernels::cuda::{modules, KernelModule};

use super::buffer::{with_dev, DevData};
use super::ffi;
use super::kernel_args::{check_signature, Buffer, KArg, KernelRef, Planned};
use super::kernel_plans as plans;
use super::launch::LaunchDims;
use super::layout::StridedCopy;
use super::nvrtc;

/// A loaded kernel and its parameters (as its source declares them).
#[derive(Clone)]
struct Loaded {
    function: CudaFunction,
    params: Arc<[Param]>,
}

/// Every kernel function, loaded into one GPU's context.
pub struct GpuKernels {
    functions: HashMap<String, Loaded>,
    arch: String,
    ctx: Arc<CudaContext>,
    /// Kernels generated for a program (reduce bodies), loaded on first
    /// use, by their module's source.
    generated: Mutex<HashMap<String, Loaded>>,
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
    fn generated(&self, m: &KernelModule, name: &str) -> Result<Loaded, String> {
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

    fn get(&self, name: &str) -> Result<Loaded, String> {
        self.functions
            .get(name)
            .cloned()
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
) -> Result<Vec<(String, Loaded)>, String> {
    let image = match nvrtc::cubin_of(m, arch) {
        Ok(cubin) => Ptx::from_binary(cubin.as_ref().clone()),
        Err(e) => nvrtc::fallback_ptx(m)
            .map_err(|p| format!("{e}; and as {}: {p}", nvrtc::PTX_FALLBACK_ARCH))?,
    };
    let module = ctx
        .load_module(image)
        .map_err(|e| format!("cannot load kernel module {} ({arch}): {e}", m.name))?;
    m.parameters()?
        .into_iter()
        .map(|(f, params)| {
            module
                .load_function(&f)
                .map_err(|e| format!("kernel {f} is missing from module {}: {e}", m.name))
                .map(|function| {
                    let params = params.into();
                    (f, Loaded { function, params })
                })
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

impl Buffer for DevData {
    fn elements(&self) -> usize {
        DevData::len(self)
    }

    fn elem(&self) -> ElemType {
        DevData::elem(self)
    }
}

/// Launches kernels of one GPU on one stream.
pub struct Launcher<'a> {
    pub stream: &'a Arc<CudaStream>,
    pub kernels: &'a GpuKernels,
}

impl Launcher<'_> {
    /// Check and launch `plan`: its buffers hold what the kernel touches,
    /// its arguments are the kernel's parameters; then copy its tables to
    /// the device, push the arguments in order and launch.
    fn run(&self, plan: Planned<'_, DevData>) -> Result<(), String> {
        let Some(mut plan) = plan? else {
            return Ok(());
        };
        plan.check_buffers()?;
        let Some((kernel, dims)) = plan.launch.take() else {
            return Ok(());
        };
        let loaded = match &kernel {
            KernelRef::Named(name) => self.kernels.get(name)?,
            KernelRef::Generated(module, function) => self.kernels.generated(module, function)?,
        };
        check_signature(kernel.name(), &loaded.params, &plan.args)?;
        // Device copies of the tables, and of the block addresses (whose
        // guards record the reads on `stream` once the launch is queued).
        let mut tables: Vec<CudaSlice<i64>> = Vec::new();
        let mut addresses: Vec<CudaSlice<u64>> = Vec::new();
        let mut guards: Vec<SyncOnDrop<'_>> = Vec::new();
        for a in &plan.args {
            match a {
                KArg::Table(t) => tables.push(self.stream.clone_htod(t.as_ref()).map_err(driver)?),
                KArg::Blocks(blocks, _) => {
                    let mut ptrs: Vec<u64> = Vec::with_capacity(blocks.len());
                    for (src, offset) in blocks {
                        let width = src.elem().byte_size() as u64;
                        let (ptr, guard) = with_dev!(*src, s => s.device_ptr(self.stream));
                        ptrs.push(ptr + *offset as u64 * width);
                        guards.push(guard);
                    }
                    addresses.push(self.stream.clone_htod(&ptrs).map_err(driver)?);
                }
                _ => {}
            }
        }
        let (mut tables, mut addresses) = (tables.iter(), addresses.iter());
        let mut args = self.stream.launch_builder(&loaded.function);
        for a in plan.args.iter_mut() {
            match a {
                KArg::In(b, ..) | KArg::InWords(b) => push(&mut args, b),
                KArg::Out(b, ..) | KArg::OutWords(b) => push_mut(&mut args, b),
                KArg::Table(_) => {
                    args.arg(tables.next().ok_or("a table was not copied")?);
                }
                KArg::Blocks(..) => {
                    args.arg(addresses.next().ok_or("a block table was not copied")?);
                }
                KArg::I64(v) => {
                    args.arg(&*v);
                }
                KArg::U64(v) => {
                    args.arg(&*v);
                }
                KArg::I32(v) => {
                    args.arg(&*v);
                }
            }
        }
        let launched = ffi::launch(&mut args, cfg(dims)).map_err(driver);
        drop(args);
        drop(guards);
        launched
    }

    /// `y[i] = f(x[i])` for `i < n`: unary ops, `is_finite`, conversions.
    pub fn map1(&self, name: &str, x: &DevData, y: &mut DevData, n: usize) -> Result<(), String> {
        self.run(plans::map1(name, x, y, n))
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
        self.run(plans::reduce_precision(
            x,
            y,
            n,
            exponent_bits,
            mantissa_bits,
        ))
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
        self.run(plans::map2(name, a, b, y, n))
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
        self.run(plans::select(p, p_full, a, b, y, n))
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
        self.run(plans::clamp(lo, lo_full, x, hi, hi_full, y, n))
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
        self.run(plans::iota(y, n, dim_size, inner, offset))
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
        self.run(plans::mask(x, y, n, dim_size, inner, valid, bits))
    }

    /// Run one strided copy from `src` into `dst` (same element type).
    pub fn copy(&self, src: &DevData, dst: &mut DevData, copy: &StridedCopy) -> Result<(), String> {
        self.run(plans::copy(src, dst, copy))
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
        self.run(plans::reduce(name, x, init, y, outer, red))
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
        self.run(plans::reduce_body(module, xs, inits, ys, outer, red))
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
        self.run(plans::sort_rows(module, xs, ys, scratch, rows, n))
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
        self.run(plans::top_k_rows(module, x, y, idx, scratch, rows, n, k))
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
        self.run(plans::reverse(x, y, shape, dims))
    }

    /// `y[i]` = the fold of `sources[k][offset_k + i]` over `k` in order.
    pub fn reduce_many(
        &self,
        name: &str,
        sources: &[(&DevData, usize)],
        y: &mut DevData,
        n: usize,
    ) -> Result<(), String> {
        self.run(plans::reduce_many(name, sources, y, n))
    }

    /// The columns of one chunk (`meta`: `im2col_meta`) of the canonical
    /// lhs `x` into `col` (same element type).
    pub fn im2col(&self, x: &DevData, col: &mut DevData, meta: &[i64]) -> Result<(), String> {
        self.run(plans::im2col(x, col, meta))
    }

    /// `y` = the gather of `x` at the i64 start indices `idx` (`meta`:
    /// `walk_meta` with the slice sizes).
    pub fn gather(
        &self,
        x: &DevData,
        idx: &DevData,
        y: &mut DevData,
        meta: &[i64],
    ) -> Result<(), String> {
        self.run(plans::gather(x, idx, y, meta))
    }

    /// `y` (a copy of the input, updated in place) after the scatter of
    /// `upd` at the i64 start indices `idx` with `update` (`meta`:
    /// `walk_meta` without slice sizes).
    pub fn scatter(
        &self,
        update: ScatterUpdate,
        idx: &DevData,
        upd: &DevData,
        y: &mut DevData,
        meta: &[i64],
    ) -> Result<(), String> {
        self.run(plans::scatter(update, idx, upd, y, meta))
    }

    /// The first `bytes` bytes of `src` into `dst`, whatever their element
    /// types (`bitcast_convert`), as a copy of words of the narrower width.
    pub fn copy_bytes(&self, src: &DevData, dst: &mut DevData, bytes: usize) -> Result<(), String> {
        self.run(plans::copy_bytes(src, dst, bytes))
    }

    /// The bits of `plan` into `y` (`plan.count` elements of its width).
    pub fn rng(&self, plan: &RngPlan, y: &mut DevData) -> Result<(), String> {
        self.run(plans::rng(plan, y))
    }

    /// `y[i]` = window `i` of `x` folded from `*init`.
    pub fn reduce_window(
        &self,
        name: &str,
        x: &DevData,
        init: &DevData,
        y: &mut DevData,
        meta: &[i64],
    ) -> Result<(), String> {
        self.run(plans::reduce_window(name, x, init, y, meta))
    }

    /// select_and_scatter: `select` picks one position of `x` per window
    /// (into an i64 buffer), then `scatter` folds the `source` values of
    /// the windows that picked each position of `y` from `*init`.
    #[allow(clippy::too_many_arguments)]
    pub fn select_and_scatter(
        &self,
        select: &str,
        scatter: &str,
        x: &DevData,
        source: &DevData,
        init: &DevData,
        y: &mut DevData,
        meta: &[i64],
    ) -> Result<(), String> {
        self.run(plans::select_and_scatter_checks(x, source, init, y, meta))?;
        let (_, windows) = plans::sizes(meta)?;
        let mut sel = DevData::zeros(self.stream, ElemType::I64, windows)?;
        self.run(plans::select_window(select, x, &mut sel, meta))?;
        self.run(plans::scatter_selected(
            scatter, source, &sel, init, y, meta,
        ))
    }
}

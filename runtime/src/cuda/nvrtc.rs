//! Compiling the kernel modules of `meshrun_kernels::cuda` with NVRTC:
//! straight to a cubin (SASS) for one GPU architecture (`sm_80`,
//! `sm_90`, ...), so the driver never JIT-compiles PTX and a cubin made by
//! a newer NVRTC still loads on an older 12.x driver. Each (module,
//! architecture) is compiled at most once per process and cached in
//! memory, and on disk (`$MESHRUN_KERNEL_CACHE`, else
//! `~/.cache/meshrun/kernels`) keyed by a hash of the source, the options
//! and NVRTC's version, so later processes skip the ~10 s of compiling.
//!
//! Kernels include `cuda_fp16.h` / `cuda_bf16.h`; the include directory
//! is found by [`include_dirs`]. NVRTC itself needs no GPU, so CI compiles
//! every module for sm_80 and sm_90 (`tests/cuda_kernels_compile.rs`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use meshrun_kernels::cuda::{modules, KernelModule};

use super::ffi::{self, Library};

/// Where the CUDA headers are when they are not in a standard place
/// (CI points it at the `nvidia-cuda-runtime-cu12` wheel's `include`).
pub const INCLUDE_ENV: &str = "MESHRUN_CUDA_INCLUDE";

/// The architectures CI compiles every kernel for: A100 and H100.
pub const CI_ARCHS: [&str; 2] = ["sm_80", "sm_90"];

/// Why kernels could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NvrtcError {
    /// `libnvrtc` cannot be loaded.
    Missing,
    /// NVRTC rejected a module (with its log) or failed.
    Compile(String),
}

impl std::fmt::Display for NvrtcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NvrtcError::Missing => write!(
                f,
                "NVRTC (libnvrtc.so.12) cannot be loaded: install the CUDA toolkit or \
                 `pip install nvidia-cuda-nvrtc-cu12` and add its lib directory to LD_LIBRARY_PATH"
            ),
            NvrtcError::Compile(m) => write!(f, "NVRTC: {m}"),
        }
    }
}

impl std::error::Error for NvrtcError {}

/// Whether NVRTC can be loaded.
pub fn available() -> bool {
    ffi::library_present(Library::Nvrtc)
}

/// NVRTC's version, if it loads.
pub fn version() -> Result<(i32, i32), NvrtcError> {
    if !available() {
        return Err(NvrtcError::Missing);
    }
    ffi::nvrtc_version().map_err(NvrtcError::Compile)
}

/// Directories that hold `cuda_fp16.h`, in search order: `$MESHRUN_CUDA_INCLUDE`,
/// `$CUDA_HOME/include`, `$CUDA_PATH/include`, `/usr/local/cuda/include`.
/// Only existing directories with the header are returned.
pub fn include_dirs() -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os(INCLUDE_ENV) {
        candidates.push(PathBuf::from(dir));
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            candidates.push(Path::new(&root).join("include"));
        }
    }
    candidates.push(PathBuf::from("/usr/local/cuda/include"));
    let mut dirs: Vec<PathBuf> = Vec::new();
    for c in candidates {
        if c.join("cuda_fp16.h").is_file() && !dirs.contains(&c) {
            dirs.push(c);
        }
    }
    dirs
}

/// NVRTC options for `arch` (e.g. `sm_90`).
pub fn options(arch: &str, include: &[PathBuf]) -> Vec<String> {
    let mut opts = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
        // Denormals and division as IEEE (the CPU kernels' semantics).
        "--ftz=false".to_string(),
        "--prec-div=true".to_string(),
        "--prec-sqrt=true".to_string(),
    ];
    opts.extend(
        include
            .iter()
            .map(|d| format!("--include-path={}", d.display())),
    );
    opts
}

/// `module` compiled for `arch`, uncached.
pub fn compile(module: &KernelModule, arch: &str) -> Result<Vec<u8>, NvrtcError> {
    if !available() {
        return Err(NvrtcError::Missing);
    }
    let include = include_dirs();
    if include.is_empty() {
        return Err(NvrtcError::Compile(format!(
            "cuda_fp16.h not found: set {INCLUDE_ENV} to a directory that holds it \
             (e.g. the `include` of `pip install nvidia-cuda-runtime-cu12`) or CUDA_HOME"
        )));
    }
    ffi::nvrtc_compile_cubin(&module.source, module.name, &options(arch, &include))
        .map_err(NvrtcError::Compile)
}

/// Cubins by (hash of the module's source, architecture): fixed modules
/// and modules generated per program (a reduce body) alike.
type CubinCache = Mutex<HashMap<(u64, String), Arc<Vec<u8>>>>;

fn cache() -> &'static CubinCache {
    static CACHE: OnceLock<CubinCache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The cubin of module `name` for `arch`, compiled on first use and kept
/// for the life of the process (and on disk, see the module docs).
pub fn cubin(name: &str, arch: &str) -> Result<Arc<Vec<u8>>, NvrtcError> {
    let module = modules()
        .into_iter()
        .find(|m| m.name == name)
        .ok_or_else(|| NvrtcError::Compile(format!("no kernel module named {name}")))?;
    cubin_of(&module, arch)
}

/// The cubin of `module` (any module, e.g. one generated for a program)
/// for `arch`, cached like [`cubin`]'s.
pub fn cubin_of(module: &KernelModule, arch: &str) -> Result<Arc<Vec<u8>>, NvrtcError> {
    let key = (fnv1a(&[module.source.as_bytes()]), arch.to_string());
    if let Some(hit) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(hit.clone());
    }
    // Compile outside the lock (seconds); a racing thread may compile the
    // same module too, and the first insert wins.
    let path = disk_path(module, arch);
    let on_disk = path
        .as_deref()
        .and_then(|p| std::fs::read(p).ok())
        .filter(|bytes| module.functions.iter().all(|f| cubin_defines(bytes, f)));
    let bytes = match on_disk {
        Some(b) => b,
        None => {
            let b = compile(module, arch)?;
            if let Some(p) = &path {
                store(p, &b);
            }
            b
        }
    };
    let mut map = cache().lock().unwrap_or_else(|e| e.into_inner());
    Ok(map.entry(key).or_insert(Arc::new(bytes)).clone())
}

/// The disk cache directory (none when no home is known).
fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("MESHRUN_KERNEL_CACHE") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(Path::new(&d).join("meshrun/kernels"));
    }
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/meshrun/kernels"))
}

/// FNV-1a, 64 bits: stable across builds (the cache key must not change
/// with the standard library's hasher).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
    }
    h
}

fn disk_path(module: &KernelModule, arch: &str) -> Option<PathBuf> {
    let (major, minor) = version().ok()?;
    let opts = options(arch, &include_dirs()).join(" ");
    let h = fnv1a(&[module.source.as_bytes(), opts.as_bytes()]);
    Some(cache_dir()?.join(format!(
        "{}-{arch}-nvrtc{major}.{minor}-{h:016x}.cubin",
        module.name
    )))
}

/// Write a cache file atomically (write, then rename); failures only cost
/// a recompile next time.
fn store(path: &Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// The newest virtual architecture NVRTC 12.4 (CI's pin) targets: PTX for
/// it runs on any newer GPU after the driver JIT-compiles it.
pub const PTX_FALLBACK_ARCH: &str = "compute_90";

/// `module` as PTX for `PTX_FALLBACK_ARCH`, for a GPU newer than this
/// NVRTC can make a cubin for (the driver JIT-compiles it at load).
pub fn fallback_ptx(module: &KernelModule) -> Result<cudarc::nvrtc::Ptx, NvrtcError> {
    if !available() {
        return Err(NvrtcError::Missing);
    }
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some(PTX_FALLBACK_ARCH),
        include_paths: include_dirs()
            .iter()
            .map(|d| d.display().to_string())
            .collect(),
        options: vec!["--std=c++17".into(), "--ftz=false".into()],
        prec_div: Some(true),
        prec_sqrt: Some(true),
        name: Some(module.name.to_string()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(&module.source, opts)
        .map_err(|e| NvrtcError::Compile(format!("{} as PTX: {e}", module.name)))
}

/// The `sm_XY` architecture of a compute capability.
pub fn arch_of(major: i32, minor: i32) -> String {
    format!("sm_{major}{minor}")
}

/// Whether an ELF cubin defines a function named `name` (its symbol name
/// is in the string table, NUL-terminated).
pub fn cubin_defines(cubin: &[u8], name: &str) -> bool {
    let mut needle = Vec::with_capacity(name.len() + 2);
    needle.push(0u8);
    needle.extend_from_slice(name.as_bytes());
    needle.push(0u8);
    cubin.windows(needle.len()).any(|w| w == needle.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_name_the_architecture_and_headers() {
        let o = options("sm_90", &[PathBuf::from("/x/include")]);
        assert!(o.contains(&"--gpu-architecture=sm_90".to_string()));
        assert!(o.contains(&"--include-path=/x/include".to_string()));
        assert_eq!(arch_of(8, 0), "sm_80");
    }

    #[test]
    fn cache_keys_are_stable() {
        assert_eq!(fnv1a(&[b""]), fnv1a(&[b""]));
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
        // FNV-1a of "a" is 0xaf63dc4c8601ec8c; each part then folds in 0xff.
        let a = 0xaf63_dc4c_8601_ec8cu64 ^ 0xff;
        assert_eq!(fnv1a(&[b"a"]), a);
    }

    #[test]
    fn cubin_symbols_are_found_whole() {
        let fake = b"\x7fELF\0strided_copy_b4\0fill_b1\0";
        assert!(cubin_defines(fake, "fill_b1"));
        assert!(cubin_defines(fake, "strided_copy_b4"));
        assert!(!cubin_defines(fake, "copy_b4"));
        assert!(!cubin_defines(fake, "fill_b"));
    }
}

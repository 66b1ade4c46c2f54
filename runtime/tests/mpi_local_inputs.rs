//! Reading one device's block of an `.npy` input by offset (what each MPI
//! rank does) gives exactly the block `shard_io::shard` cuts from the whole
//! array, for every input of every JAX fixture (f32, f16, bf16, ints,
//! padding, unreduced inputs) on every device, and for a file in Fortran
//! order. No MPI process is started: this is file and layout logic only.
#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};

use meshrun_compiler::text::parse_module;
use meshrun_kernels::HostTensor;
use meshrun_runtime::mpi::local_inputs::{block_of, read_block};
use meshrun_runtime::mpi::wire::to_bytes;
use meshrun_runtime::npy::read_npy;
use meshrun_runtime::pipeline::compile;
use meshrun_runtime::shard_io::shard;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jax");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("input.mlir").exists())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_fixture_block_read_by_offset_is_the_shard() {
    let mut blocks = 0;
    for dir in fixtures() {
        let text = std::fs::read_to_string(dir.join("input.mlir")).unwrap();
        let module = parse_module(&text).unwrap();
        let program = compile(&module).unwrap().device;
        for (k, io) in program.inputs.iter().enumerate() {
            let path = dir.join(format!("in_{k}.npy"));
            let global = read_npy(&path).unwrap();
            for (block, positions) in shard(&global, io, &program.devices).unwrap() {
                for pos in positions {
                    let d = program.devices[pos];
                    let got = read_block(&path, io, d).unwrap();
                    // Bitwise: inputs hold NaNs (elementwise_math), and
                    // NaN != NaN under `==`.
                    let same = |a: &HostTensor, b: &HostTensor| {
                        a.elem_type() == b.elem_type()
                            && a.shape() == b.shape()
                            && to_bytes(a) == to_bytes(b)
                    };
                    let at = format!("{}: input {k}, device {d}", dir.display());
                    assert!(same(&got, &block), "{at}: {got:?} != {block:?}");
                    let cut = block_of(&global, io, d).unwrap();
                    assert!(same(&cut, &block), "{at}: {cut:?} != {block:?}");
                    blocks += 1;
                }
            }
        }
    }
    assert!(blocks > 500, "only {blocks} blocks checked");
}

#[test]
fn fortran_order_and_wrong_files_are_handled() {
    use ndarray::ShapeBuilder;
    use ndarray_npy::WriteNpyExt;
    let text = r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<6x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<6x5xf32> {
    return %arg0 : tensor<6x5xf32>
  }
}"#;
    let program = compile(&parse_module(text).unwrap()).unwrap().device;
    let io = &program.inputs[0];
    let dir = tempfile::tempdir().unwrap();
    // A Fortran-ordered file of the same logical array.
    let data: Vec<f32> = (0..30).map(|x| x as f32).collect();
    let c = ndarray::Array2::from_shape_vec((6, 5), data).unwrap();
    let mut f = ndarray::Array2::<f32>::zeros((6, 5).f());
    f.assign(&c);
    let path = dir.path().join("f.npy");
    f.write_npy(std::fs::File::create(&path).unwrap()).unwrap();
    let global = meshrun_kernels::HostTensor::F32(c.into_dyn());
    for &d in &program.devices {
        assert_eq!(
            read_block(&path, io, d).unwrap(),
            block_of(&global, io, d).unwrap()
        );
    }
    // The wrong element type, a wrong shape, a missing file.
    let ints = dir.path().join("i.npy");
    ndarray::Array2::<i32>::zeros((6, 5))
        .write_npy(std::fs::File::create(&ints).unwrap())
        .unwrap();
    let e = read_block(&ints, io, 0).unwrap_err().to_string();
    assert!(
        e.contains("expected tensor<6x5xf32>") && e.contains("i32"),
        "{e}"
    );
    let small = dir.path().join("s.npy");
    ndarray::Array2::<f32>::zeros((5, 5))
        .write_npy(std::fs::File::create(&small).unwrap())
        .unwrap();
    let e = read_block(&small, io, 0).unwrap_err().to_string();
    assert!(e.contains("[5, 5]"), "{e}");
    let e = read_block(&dir.path().join("none.npy"), io, 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("none.npy") && e.contains("cannot read"), "{e}");
    // A file cut short.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.npy");
    std::fs::write(&cut, &bytes[..bytes.len() - 4]).unwrap();
    let e = read_block(&cut, io, 3).unwrap_err().to_string();
    assert!(e.contains("cut short"), "{e}");
}

//! `.npy` round trips for every host element type, and the errors.

use half::{bf16, f16};
use meshrun_compiler::ir::{ElemType, TensorType};
use meshrun_kernels::HostTensor;
use meshrun_runtime::npy::{read_npy, read_npy_as, write_npy};

#[test]
fn round_trips_every_element_type() {
    let dir = tempfile::tempdir().unwrap();
    let cases = vec![
        HostTensor::from_vec(&[2, 3], vec![1.5f32, -2.0, 0.0, 3.25, f32::MAX, -0.0]).unwrap(),
        HostTensor::from_vec(&[2], vec![1.0f64 / 3.0, -7.0]).unwrap(),
        HostTensor::from_vec(&[3], vec![1i32, -2, i32::MAX]).unwrap(),
        HostTensor::from_vec(&[1, 2], vec![i64::MIN, 5i64]).unwrap(),
        HostTensor::from_vec(&[2, 2], vec![true, false, false, true]).unwrap(),
        HostTensor::from_vec(&[3], vec![f16::from_f32(0.1), f16::MAX, f16::NEG_INFINITY]).unwrap(),
        HostTensor::from_vec(&[2, 1], vec![bf16::from_f32(1.5), bf16::from_f32(-1e30)]).unwrap(),
        HostTensor::from_vec(&[], vec![42.0f32]).unwrap(),
        HostTensor::from_vec(&[0, 4], Vec::<f16>::new()).unwrap(),
    ];
    for (i, t) in cases.iter().enumerate() {
        let path = dir.path().join(format!("t{i}.npy"));
        write_npy(&path, t).unwrap();
        let back = read_npy(&path).unwrap();
        assert_eq!(&back, t, "case {i}");
        let again = read_npy_as(&path, &t.tensor_type()).unwrap();
        assert_eq!(&again, t);
    }
}

#[test]
fn headers_match_what_numpy_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.npy");
    let t = HostTensor::from_vec(&[2, 3], vec![f16::ZERO; 6]).unwrap();
    write_npy(&path, &t).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + header_len) % 64, 0, "data is 64-byte aligned");
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.starts_with("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }"));
    assert!(header.ends_with('\n'));
    assert_eq!(bytes.len(), 10 + header_len + 12);
}

#[test]
fn errors_name_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.npy");
    let err = read_npy(&missing).unwrap_err().to_string();
    assert!(
        err.contains("missing.npy") && err.contains("cannot read"),
        "{err}"
    );

    let junk = dir.path().join("junk.npy");
    std::fs::write(&junk, b"hello world, not numpy").unwrap();
    let err = read_npy(&junk).unwrap_err().to_string();
    assert!(
        err.contains("junk.npy") && err.contains("bad magic"),
        "{err}"
    );

    let good = dir.path().join("good.npy");
    write_npy(
        &good,
        &HostTensor::from_vec(&[2], vec![1.0f32, 2.0]).unwrap(),
    )
    .unwrap();
    let err = read_npy_as(&good, &TensorType::new(vec![3], ElemType::F32)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: expected tensor<3xf32>, file holds shape [2] f32",
            good.display()
        )
    );

    // Cut the data short.
    let bytes = std::fs::read(&good).unwrap();
    let cut = dir.path().join("cut.npy");
    std::fs::write(&cut, &bytes[..bytes.len() - 2]).unwrap();
    let err = read_npy(&cut).unwrap_err().to_string();
    assert!(err.contains("cut.npy"), "{err}");

    // A dtype meshrun has no host type for.
    let c8s = dir.path().join("c8.npy");
    let mut raw = bytes[..10].to_vec();
    let hdr = format!(
        "{:<117}\n",
        "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }"
    );
    raw[8..10].copy_from_slice(&(hdr.len() as u16).to_le_bytes());
    raw.extend_from_slice(hdr.as_bytes());
    raw.extend_from_slice(&[0; 16]);
    std::fs::write(&c8s, raw).unwrap();
    let err = read_npy(&c8s).unwrap_err().to_string();
    assert!(err.contains("unsupported dtype \"<c8\""), "{err}");
}

//! `meshrun show` draws who holds which block, with local shape and padding.

use assert_cmd::Command;

fn show(args: &[&str]) -> String {
    let out = Command::cargo_bin("meshrun")
        .unwrap()
        .arg("show")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn batch_sharded_argument_is_drawn_row_by_row() {
    let text = show(&["fixtures/jax/mlp_seed/input.mlir"]);
    // x: 16x128 on [{"data"}, {}] with data=4, model=2: 4 row blocks, each
    // on the two devices that differ only along "model".
    assert!(text.contains("%arg0: tensor<16x128xf32>  <@mesh, [{\"data\"}, {}]>"));
    assert!(text.contains("local shape 4x128 (no padding)"));
    for (devs, rows) in [("D0,1", "[0:4)"), ("D2,3", "[4:8)"), ("D6,7", "[12:16)")] {
        assert!(
            text.lines().any(|l| l.contains(devs) && l.contains(rows)),
            "{devs} {rows} missing in:\n{text}"
        );
    }
    // w1: 128x256 on [{}, {"model"}]: two column blocks of 4 devices each.
    assert!(
        text.contains("D0,2,4,6") && text.contains("D1,3,5,7"),
        "{text}"
    );
    assert!(text.contains("%arg2: tensor<256x128xf32>  (no sharding"));
}

#[test]
fn padding_is_reported_for_non_divisible_dims() {
    let text = show(&["--all", "fixtures/jax/non_divisible_7/input.mlir"]);
    assert!(
        text.contains("local shape 2x16 (padded: dim 0: 7 = 4 shards x 2 - 1 padding)"),
        "{text}"
    );
    assert!(text.contains("rows [6:7)"), "{text}");
}

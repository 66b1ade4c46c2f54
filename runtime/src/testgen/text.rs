//! Meshes, generated values and their MLIR type text.

/// Largest number of elements of any generated tensor.
pub(super) const MAX_ELEMS: i64 = 3000;
pub(super) const SIZES: [i64; 11] = [1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 16];

#[derive(Clone)]
pub(super) struct Mesh {
    pub(super) name: String,
    pub(super) axes: Vec<(String, i64)>,
    pub(super) device_ids: Option<Vec<i64>>,
}

impl Mesh {
    pub(super) fn text(&self) -> String {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|(n, s)| format!("\"{n}\"={s}"))
            .collect();
        let ids = self.device_ids.as_ref().map_or(String::new(), |ids| {
            let v: Vec<String> = ids.iter().map(|d| d.to_string()).collect();
            format!(", device_ids=[{}]", v.join(", "))
        });
        format!("  sdy.mesh @{} = <[{}]{ids}>\n", self.name, axes.join(", "))
    }
}

#[derive(Clone)]
pub(super) struct Val {
    pub(super) name: String,
    pub(super) shape: Vec<i64>,
    /// An upper bound of the magnitude of every element.
    pub(super) bound: f64,
}

pub(super) fn ty(shape: &[i64]) -> String {
    if shape.is_empty() {
        "tensor<f32>".into()
    } else {
        let d: Vec<String> = shape.iter().map(|x| x.to_string()).collect();
        format!("tensor<{}xf32>", d.join("x"))
    }
}

/// `ty(shape)` with another element type.
pub(super) fn ty_of(shape: &[i64], elem: &str) -> String {
    ty(shape).replace("f32>", &format!("{elem}>"))
}

pub(super) fn list(v: &[usize]) -> String {
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", s.join(", "))
}

pub(super) fn elems(shape: &[i64]) -> i64 {
    shape.iter().product()
}

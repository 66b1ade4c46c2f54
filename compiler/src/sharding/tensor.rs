//! Axis references, dimension shardings and tensor shardings (SPEC §2).

use std::fmt;

use crate::sharding::mesh::Mesh;

/// `"x":(m)k`: the size-`k` slice of axis `x` after `m` (the pre-size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubAxis {
    pub pre_size: i64,
    pub size: i64,
}

/// A full mesh axis (`"x"`) or a sub-axis of one (`"x":(2)2`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AxisRef {
    pub name: String,
    pub sub: Option<SubAxis>,
}

impl AxisRef {
    pub fn full(name: impl Into<String>) -> AxisRef {
        AxisRef {
            name: name.into(),
            sub: None,
        }
    }

    pub fn sub(name: impl Into<String>, pre_size: i64, size: i64) -> AxisRef {
        AxisRef {
            name: name.into(),
            sub: Some(SubAxis { pre_size, size }),
        }
    }

    /// Number of devices along this (sub-)axis; `None` if the axis is not in
    /// the mesh.
    pub fn size(&self, mesh: &Mesh) -> Option<i64> {
        match self.sub {
            Some(s) => Some(s.size),
            None => mesh.axis_size(&self.name),
        }
    }

    /// The pre-size (1 for a full axis).
    pub fn pre_size(&self) -> i64 {
        self.sub.map_or(1, |s| s.pre_size)
    }
}

impl fmt::Display for AxisRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.name)?;
        if let Some(s) = self.sub {
            write!(f, ":({}){}", s.pre_size, s.size)?;
        }
        Ok(())
    }
}

/// The sharding of one tensor dimension: axes major→minor, open (`?`,
/// propagation may append minor axes) or closed, optional priority `pN`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DimSharding {
    pub axes: Vec<AxisRef>,
    pub is_closed: bool,
    pub priority: Option<i64>,
}

impl DimSharding {
    pub fn closed(axes: Vec<AxisRef>) -> DimSharding {
        DimSharding {
            axes,
            is_closed: true,
            priority: None,
        }
    }

    pub fn open(axes: Vec<AxisRef>) -> DimSharding {
        DimSharding {
            axes,
            is_closed: false,
            priority: None,
        }
    }

    /// `{}`: closed, replicated along this dimension.
    pub fn replicated() -> DimSharding {
        DimSharding::closed(Vec::new())
    }

    /// Product of the axis sizes (1 for an unsharded dim).
    pub fn num_shards(&self, mesh: &Mesh) -> i64 {
        self.axes
            .iter()
            .map(|a| a.size(mesh).unwrap_or(1))
            .product()
    }
}

impl fmt::Display for DimSharding {
    /// `{"x", "y"}`, `{"x", ?}`, `{?}`, `{}`, `{"x"}p1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, a) in self.axes.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{a}")?;
        }
        if !self.is_closed {
            f.write_str(if self.axes.is_empty() { "?" } else { ", ?" })?;
        }
        f.write_str("}")?;
        if let Some(p) = self.priority {
            write!(f, "p{p}")?;
        }
        Ok(())
    }
}

/// Which mesh a sharding is over: a module mesh by name, or one written
/// inline (`#sdy.sharding<mesh<["a"=2]>, [...]>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MeshRef {
    Symbol(String),
    Inline(Mesh),
}

impl fmt::Display for MeshRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MeshRef::Symbol(s) => write!(f, "@{s}"),
            MeshRef::Inline(m) => write!(f, "mesh{m}"),
        }
    }
}

/// How the partial results along a sharding's unreduced axes combine
/// (Shardy's `ReductionOp`): `unreduced={"x"}` is a sum,
/// `unreduced=max{"x"}` a maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReductionOp {
    #[default]
    Sum,
    Max,
    Min,
}

impl ReductionOp {
    /// The keyword written before the axis list; none for a sum.
    pub fn keyword(self) -> Option<&'static str> {
        match self {
            ReductionOp::Sum => None,
            ReductionOp::Max => Some("max"),
            ReductionOp::Min => Some("min"),
        }
    }

    /// What partial results combined this way are: "sums", "maxima", ...
    pub fn plural(self) -> &'static str {
        match self {
            ReductionOp::Sum => "sums",
            ReductionOp::Max => "maxima",
            ReductionOp::Min => "minima",
        }
    }

    pub fn from_keyword(s: &str) -> Option<ReductionOp> {
        match s {
            "sum" => Some(ReductionOp::Sum),
            "max" => Some(ReductionOp::Max),
            "min" => Some(ReductionOp::Min),
            _ => None,
        }
    }
}

/// The sharding of a whole tensor over one mesh.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorSharding {
    pub mesh: MeshRef,
    pub dims: Vec<DimSharding>,
    /// Explicitly replicated axes, in mesh order.
    pub replicated: Vec<AxisRef>,
    /// Axes along which the value is an unreduced partial result.
    pub unreduced: Vec<AxisRef>,
    /// How those partial results combine.
    pub unreduced_op: ReductionOp,
}

impl TensorSharding {
    pub fn new(mesh: impl Into<String>, dims: Vec<DimSharding>) -> TensorSharding {
        TensorSharding {
            mesh: MeshRef::Symbol(mesh.into()),
            dims,
            replicated: Vec::new(),
            unreduced: Vec::new(),
            unreduced_op: ReductionOp::Sum,
        }
    }

    /// A fully open sharding `[{?}, {?}, ...]` of rank `rank`.
    pub fn open(mesh: impl Into<String>, rank: usize) -> TensorSharding {
        TensorSharding::new(mesh, vec![DimSharding::open(vec![]); rank])
    }

    /// A fully replicated closed sharding `[{}, {}, ...]` of rank `rank`.
    pub fn replicated(mesh: impl Into<String>, rank: usize) -> TensorSharding {
        TensorSharding::new(mesh, vec![DimSharding::replicated(); rank])
    }

    pub fn mesh_name(&self) -> Option<&str> {
        match &self.mesh {
            MeshRef::Symbol(s) => Some(s),
            MeshRef::Inline(_) => None,
        }
    }

    /// Every axis used to shard a dimension, in dimension order.
    pub fn dim_axes(&self) -> impl Iterator<Item = &AxisRef> {
        self.dims.iter().flat_map(|d| d.axes.iter())
    }
}

impl fmt::Display for TensorSharding {
    /// The bracketed form `<@mesh, [{"x"}, {}], replicated={"y"}>` used
    /// inside `#sdy.sharding`, `sharding_per_value` and `sdy.reshard`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{}, [", self.mesh)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")?;
        for (label, axes) in [
            ("replicated", &self.replicated),
            ("unreduced", &self.unreduced),
        ] {
            if !axes.is_empty() {
                write!(f, ", {label}=")?;
                if let (true, Some(k)) = (label == "unreduced", self.unreduced_op.keyword()) {
                    f.write_str(k)?;
                }
                f.write_str("{")?;
                for (i, a) in axes.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str("}")?;
            }
        }
        f.write_str(">")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_matches_shardy_syntax() {
        let s = TensorSharding {
            mesh: MeshRef::Symbol("mesh".into()),
            dims: vec![
                DimSharding::closed(vec![AxisRef::full("x")]),
                DimSharding {
                    axes: vec![AxisRef::full("z"), AxisRef::sub("y", 2, 2)],
                    is_closed: false,
                    priority: Some(1),
                },
                DimSharding::open(vec![]),
                DimSharding::replicated(),
            ],
            replicated: vec![AxisRef::full("w")],
            unreduced: vec![],
            unreduced_op: ReductionOp::Sum,
        };
        assert_eq!(
            s.to_string(),
            r#"<@mesh, [{"x"}, {"z", "y":(2)2, ?}p1, {?}, {}], replicated={"w"}>"#
        );
        let max = TensorSharding {
            unreduced: vec![AxisRef::full("u")],
            unreduced_op: ReductionOp::Max,
            ..TensorSharding::new("mesh", vec![DimSharding::open(vec![])])
        };
        assert_eq!(max.to_string(), r#"<@mesh, [{?}], unreduced=max{"u"}>"#);
    }
}

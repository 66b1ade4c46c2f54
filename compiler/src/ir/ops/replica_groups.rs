//! A collective's `replica_groups`, in either of StableHLO's two forms:
//!
//! ```text
//! replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>
//! replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0,
//!     axes = [#stablehlo.axis_ref<name = "x">]>
//! ```
//!
//! JAX >= 0.11 (`jax_use_rgv3`) writes the second: the groups are the
//! devices that differ only along the named (sub-)axes of a mesh (a symbol
//! or an inlined `#stablehlo.mesh<axes = [...], device_ids = ...>`), the
//! first named axis the most significant digit of a device's rank in its
//! group ([`crate::sharding::groups::device_groups`], the same digit order
//! a dimension sharding uses). Both forms resolve to the same dense rows
//! of partition ids (positions in the module's first mesh), which is what
//! every consumer reads (`rows`); the form is kept so the text round-trips.
//! Mesh-axes groups are resolved once the module's meshes are known
//! ([`ReplicaGroups::bind`], called by the parser and checked again by the
//! verifier).

use crate::ir::attr::Attr;
use crate::ir::ops::decode::{AttrCodec, I64Rows};
use crate::sharding::groups::device_groups;
use crate::sharding::{AxisRef, Mesh, MeshDef, SubAxis};

/// The mesh a mesh-axes group list names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupsMesh {
    /// `mesh = @name`: a `sdy.mesh` of the module.
    Symbol(String),
    /// `mesh = #stablehlo.mesh<axes = [...], device_ids = ...>`.
    Inline(Mesh),
}

/// How the groups were written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GroupsForm {
    /// `dense<[[...], ...]>`: the rows are the groups as written.
    #[default]
    Dense,
    /// `#stablehlo.replica_group_mesh_axes<...>`: the rows are derived.
    MeshAxes {
        mesh: GroupsMesh,
        axes: Vec<AxisRef>,
    },
}

/// Replica groups: the rows (partition ids, one group per row) and the form
/// they were written in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplicaGroups {
    pub rows: Vec<Vec<i64>>,
    /// Row length (kept for an empty matrix, e.g. `tensor<0x2xi64>`).
    pub width: usize,
    pub form: GroupsForm,
}

impl ReplicaGroups {
    /// Groups written densely.
    pub fn dense(rows: Vec<Vec<i64>>) -> ReplicaGroups {
        let width = rows.first().map_or(0, Vec::len);
        ReplicaGroups {
            rows,
            width,
            form: GroupsForm::Dense,
        }
    }

    /// Groups along `axes` of the mesh called `mesh`, resolved against
    /// `meshes` (the module's).
    pub fn mesh_axes(
        mesh: &str,
        axes: Vec<AxisRef>,
        meshes: &[MeshDef],
    ) -> Result<ReplicaGroups, String> {
        let mut g = ReplicaGroups {
            rows: Vec::new(),
            width: 0,
            form: GroupsForm::MeshAxes {
                mesh: GroupsMesh::Symbol(mesh.to_string()),
                axes,
            },
        };
        g.bind(meshes)?;
        Ok(g)
    }

    /// The rows a mesh-axes form stands for in a module with `meshes`
    /// (`None` for the dense form).
    pub fn resolve(&self, meshes: &[MeshDef]) -> Option<Result<Vec<Vec<i64>>, String>> {
        let GroupsForm::MeshAxes { mesh, axes } = &self.form else {
            return None;
        };
        Some(resolve(mesh, axes, meshes))
    }

    /// Fill in the rows of a mesh-axes form from the module's meshes.
    pub fn bind(&mut self, meshes: &[MeshDef]) -> Result<(), String> {
        if let Some(rows) = self.resolve(meshes) {
            self.rows = rows?;
            self.width = self.rows.first().map_or(0, Vec::len);
        }
        Ok(())
    }

    /// The name of the module mesh the groups are written over, if any.
    pub fn mesh_symbol_mut(&mut self) -> Option<&mut String> {
        match &mut self.form {
            GroupsForm::MeshAxes {
                mesh: GroupsMesh::Symbol(name),
                ..
            } => Some(name),
            _ => None,
        }
    }

    /// The verifier's check that the rows are what the form says (a
    /// mesh-axes form whose rows a pass or builder left stale or empty).
    pub fn check_bound(&self, meshes: &[MeshDef]) -> Result<(), String> {
        match self.resolve(meshes).transpose()? {
            Some(rows) if rows != self.rows => Err(
                "the groups do not match the mesh axes they are written with (not resolved \
                 against the module's meshes)"
                    .into(),
            ),
            _ => Ok(()),
        }
    }
}

/// Dense rows of partition ids for `axes` of `mesh`: the mesh's device
/// groups (device ids, as the StableHLO spec defines them), each device id
/// then mapped to its position in the module's first mesh (the identity
/// where neither mesh lists `device_ids`, as JAX writes them).
fn resolve(
    mesh: &GroupsMesh,
    axes: &[AxisRef],
    meshes: &[MeshDef],
) -> Result<Vec<Vec<i64>>, String> {
    let mesh = match mesh {
        GroupsMesh::Inline(m) => m,
        GroupsMesh::Symbol(name) => {
            &meshes
                .iter()
                .find(|d| &d.name == name)
                .ok_or_else(|| format!("mesh @{name} is not defined in the module"))?
                .mesh
        }
    };
    let groups = device_groups(mesh, axes).map_err(|e| e.to_string())?;
    let Some(first) = meshes.first().map(|d| &d.mesh) else {
        return Ok(groups);
    };
    let Some(ids) = &first.device_ids else {
        if first.num_devices() != mesh.num_devices() {
            return Err(format!(
                "the groups' mesh has {} devices, the module's mesh {}",
                mesh.num_devices(),
                first.num_devices()
            ));
        }
        return Ok(groups);
    };
    let position: std::collections::HashMap<i64, i64> =
        ids.iter().zip(0i64..).map(|(&d, p)| (d, p)).collect();
    groups
        .into_iter()
        .map(|g| {
            g.into_iter()
                .map(|d| {
                    position
                        .get(&d)
                        .copied()
                        .ok_or_else(|| format!("device {d} is not in the module's mesh"))
                })
                .collect()
        })
        .collect()
}

impl AttrCodec for ReplicaGroups {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::Params { name, params } if name == "#stablehlo.replica_group_mesh_axes" => {
                let field = |key: &str| {
                    params
                        .iter()
                        .find(|(k, _)| k == key)
                        .map(|(_, v)| v)
                        .ok_or_else(|| format!("{name}<...> has no '{key}'"))
                };
                let mesh = match field("mesh")? {
                    Attr::Symbol(s) => GroupsMesh::Symbol(s.clone()),
                    other => GroupsMesh::Inline(decode_mesh(other)?),
                };
                let Attr::List(items) = field("axes")? else {
                    return Err("'axes' must be a list of #stablehlo.axis_ref<...>".into());
                };
                let axes = items
                    .iter()
                    .map(decode_axis_ref)
                    .collect::<Result<_, _>>()?;
                // Rows come from `bind` once the module's meshes are known.
                Ok(ReplicaGroups {
                    rows: Vec::new(),
                    width: 0,
                    form: GroupsForm::MeshAxes { mesh, axes },
                })
            }
            Attr::Params { name, .. } => Err(format!(
                "expected a rank-2 integer dense<...> attribute or \
                 #stablehlo.replica_group_mesh_axes<...>, found {name}<...>"
            )),
            _ => {
                let r = I64Rows::decode(a)?;
                Ok(ReplicaGroups {
                    rows: r.rows,
                    width: r.width,
                    form: GroupsForm::Dense,
                })
            }
        }
    }

    fn encode(&self) -> Option<Attr> {
        match &self.form {
            GroupsForm::Dense => I64Rows {
                rows: self.rows.clone(),
                width: self.width,
            }
            .encode(),
            GroupsForm::MeshAxes { mesh, axes } => Some(Attr::Params {
                name: "#stablehlo.replica_group_mesh_axes".into(),
                params: vec![
                    (
                        "mesh".into(),
                        match mesh {
                            GroupsMesh::Symbol(s) => Attr::Symbol(s.clone()),
                            GroupsMesh::Inline(m) => encode_mesh(m),
                        },
                    ),
                    (
                        "axes".into(),
                        Attr::List(axes.iter().map(encode_axis_ref).collect()),
                    ),
                ],
            }),
        }
    }
}

fn params_of<'a>(a: &'a Attr, want: &str) -> Result<&'a [(String, Attr)], String> {
    match a {
        Attr::Params { name, params } if name == want => Ok(params),
        _ => Err(format!("expected {want}<...>, found {}", a.kind_name())),
    }
}

fn param<'a>(params: &'a [(String, Attr)], key: &str, of: &str) -> Result<&'a Attr, String> {
    params
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
        .ok_or_else(|| format!("{of}<...> has no '{key}'"))
}

fn string(a: &Attr, what: &str) -> Result<String, String> {
    match a {
        Attr::Str(s) => Ok(s.clone()),
        _ => Err(format!("{what} must be a string, found {}", a.kind_name())),
    }
}

/// `#stablehlo.axis_ref<name = "x">`, `#stablehlo.axis_ref<name = "x",
/// sub_axis_info = (1)2>`.
fn decode_axis_ref(a: &Attr) -> Result<AxisRef, String> {
    const NAME: &str = "#stablehlo.axis_ref";
    let params = params_of(a, NAME)?;
    let name = string(param(params, "name", NAME)?, "an axis_ref's name")?;
    let sub = match params.iter().find(|(k, _)| k == "sub_axis_info") {
        None => None,
        Some((_, Attr::Opaque(text))) => Some(parse_sub_axis(text)?),
        Some((_, other)) => {
            return Err(format!(
                "sub_axis_info must be written (pre_size)size, found {}",
                other.kind_name()
            ))
        }
    };
    Ok(AxisRef { name, sub })
}

/// `(1)2` → pre-size 1, size 2.
fn parse_sub_axis(text: &str) -> Result<SubAxis, String> {
    let bad = || format!("sub_axis_info must be written (pre_size)size, found '{text}'");
    let rest = text.trim().strip_prefix('(').ok_or_else(bad)?;
    let (pre, size) = rest.split_once(')').ok_or_else(bad)?;
    let pre_size = pre.trim().parse().map_err(|_| bad())?;
    let size = size.trim().parse().map_err(|_| bad())?;
    Ok(SubAxis { pre_size, size })
}

fn encode_axis_ref(a: &AxisRef) -> Attr {
    let mut params = vec![("name".to_string(), Attr::Str(a.name.clone()))];
    if let Some(s) = a.sub {
        params.push((
            "sub_axis_info".into(),
            Attr::Opaque(format!("({}){}", s.pre_size, s.size)),
        ));
    }
    Attr::Params {
        name: "#stablehlo.axis_ref".into(),
        params,
    }
}

/// `#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>,
/// ...], device_ids = dense<[...]> : tensor<Nxi64>>`.
fn decode_mesh(a: &Attr) -> Result<Mesh, String> {
    const NAME: &str = "#stablehlo.mesh";
    let params = params_of(a, NAME).map_err(|_| {
        format!(
            "'mesh' must be @name or #stablehlo.mesh<...>, found {}",
            a.kind_name()
        )
    })?;
    let Attr::List(items) = param(params, "axes", NAME)? else {
        return Err("a #stablehlo.mesh's axes must be a list".into());
    };
    let mut axes = Vec::with_capacity(items.len());
    for item in items {
        let p = params_of(item, "#stablehlo.mesh_axis")?;
        let name = string(
            param(p, "name", "#stablehlo.mesh_axis")?,
            "a mesh axis name",
        )?;
        let size = i64::decode(param(p, "size", "#stablehlo.mesh_axis")?)?;
        axes.push((name, size));
    }
    let named: Vec<(&str, i64)> = axes.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    let mut mesh = Mesh::new(&named);
    if let Some((_, ids)) = params.iter().find(|(k, _)| k == "device_ids") {
        mesh = mesh.with_device_ids(Vec::<i64>::decode(ids)?);
    }
    Ok(mesh)
}

fn encode_mesh(m: &Mesh) -> Attr {
    let axes = m
        .axes
        .iter()
        .map(|a| Attr::Params {
            name: "#stablehlo.mesh_axis".into(),
            params: vec![
                ("name".into(), Attr::Str(a.name.clone())),
                (
                    "size".into(),
                    Attr::Int {
                        value: a.size,
                        ty: None,
                    },
                ),
            ],
        })
        .collect();
    let mut params = vec![("axes".to_string(), Attr::List(axes))];
    if let Some(ids) = &m.device_ids {
        let values = ids
            .iter()
            .map(|&v| crate::ir::literal::Scalar::Int(v))
            .collect();
        params.push((
            "device_ids".into(),
            Attr::Dense {
                literal: crate::ir::literal::DenseLiteral::Elements(values),
                ty: crate::ir::types::TensorType::new(
                    vec![ids.len() as i64],
                    crate::ir::types::ElemType::I64,
                ),
            },
        ));
    }
    Attr::Params {
        name: "#stablehlo.mesh".into(),
        params,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meshes(defs: &[(&str, Mesh)]) -> Vec<MeshDef> {
        defs.iter()
            .map(|(n, m)| MeshDef {
                name: n.to_string(),
                mesh: m.clone(),
                attrs: None,
                pos: Default::default(),
            })
            .collect()
    }

    /// The groups JAX 0.12 prints as mesh axes equal the dense groups JAX
    /// 0.10.2 printed for the same psum (mesh a=2, b=2, c=2).
    #[test]
    fn mesh_axes_equal_jax_dense_groups() {
        let m = meshes(&[("mesh", Mesh::new(&[("a", 2), ("b", 2), ("c", 2)]))]);
        let g = |axes: &[&str]| {
            ReplicaGroups::mesh_axes("mesh", axes.iter().map(|a| AxisRef::full(*a)).collect(), &m)
                .unwrap()
                .rows
        };
        // Read off jax 0.12 with jax_use_rgv3 off and on.
        assert_eq!(g(&["c", "a"]), vec![vec![0, 4, 1, 5], vec![2, 6, 3, 7]]);
        assert_eq!(g(&["b", "a"]), vec![vec![0, 4, 2, 6], vec![1, 5, 3, 7]]);
        assert_eq!(g(&["c", "b"]), vec![vec![0, 2, 1, 3], vec![4, 6, 5, 7]]);
    }

    #[test]
    fn device_ids_map_back_to_positions() {
        // The groups' mesh lists devices in reverse; the module's first
        // mesh does not: device ids are positions of the first mesh.
        let m = meshes(&[
            ("mesh", Mesh::new(&[("x", 4)])),
            (
                "rev",
                Mesh::new(&[("x", 2), ("y", 2)]).with_device_ids(vec![3, 2, 1, 0]),
            ),
        ]);
        let g = ReplicaGroups::mesh_axes("rev", vec![AxisRef::full("x")], &m).unwrap();
        assert_eq!(g.rows, vec![vec![3, 1], vec![2, 0]]);
        // A first mesh with device ids maps them back to its positions.
        let m = meshes(&[(
            "mesh",
            Mesh::new(&[("x", 4)]).with_device_ids(vec![3, 2, 1, 0]),
        )]);
        let g = ReplicaGroups::mesh_axes("mesh", vec![AxisRef::sub("x", 1, 2)], &m).unwrap();
        assert_eq!(g.rows, vec![vec![0, 2], vec![1, 3]]);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let m = meshes(&[("mesh", Mesh::new(&[("x", 4)]))]);
        let e = ReplicaGroups::mesh_axes("nope", vec![AxisRef::full("x")], &m).unwrap_err();
        assert!(e.contains("@nope"), "{e}");
        let e = ReplicaGroups::mesh_axes("mesh", vec![AxisRef::full("q")], &m).unwrap_err();
        assert!(e.contains("q"), "{e}");
        let other = meshes(&[
            ("mesh", Mesh::new(&[("x", 4)])),
            ("m8", Mesh::new(&[("x", 8)])),
        ]);
        let e = ReplicaGroups::mesh_axes("m8", vec![AxisRef::full("x")], &other).unwrap_err();
        assert!(e.contains("8 devices"), "{e}");
        assert!(parse_sub_axis("(1)2").is_ok());
        assert!(parse_sub_axis("1)2").is_err());
        assert!(parse_sub_axis("(x)2").is_err());
    }

    #[test]
    fn attr_round_trip() {
        let inline = Mesh::new(&[("x", 2), ("y", 2)]).with_device_ids(vec![0, 2, 1, 3]);
        for form in [
            GroupsForm::MeshAxes {
                mesh: GroupsMesh::Symbol("mesh_0".into()),
                axes: vec![AxisRef::full("y"), AxisRef::sub("x", 1, 2)],
            },
            GroupsForm::MeshAxes {
                mesh: GroupsMesh::Inline(inline),
                axes: vec![AxisRef::full("x")],
            },
        ] {
            let g = ReplicaGroups {
                rows: Vec::new(),
                width: 0,
                form,
            };
            assert_eq!(ReplicaGroups::decode(&g.encode().unwrap()).unwrap(), g);
        }
        let d = ReplicaGroups::dense(vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(ReplicaGroups::decode(&d.encode().unwrap()).unwrap(), d);
    }
}

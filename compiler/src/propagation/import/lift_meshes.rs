//! Meshes written inline in shardings become named module meshes, and
//! meshes defined twice become one (Shardy's `LiftInlinedMeshesPass`, the
//! first pass of its import pipeline). Afterwards every sharding names its
//! mesh, so propagation sees one name per mesh and prints `@mesh` where the
//! user wrote `mesh<["a"=2]>`.
//!
//! A lifted mesh is called `mesh`, `empty_mesh` (no axes, no devices) or
//! `maximal_mesh_N` (no axes, the one device `N`), with `_0`, `_1`, ...
//! appended while the name is taken (MLIR's symbol uniquing, one counter
//! per module), and is put after the module's meshes.

use std::collections::HashMap;

use crate::diag::SrcPos;
use crate::ir::Module;
use crate::sharding::{Mesh, MeshDef, MeshRef, TensorSharding};

/// Lift the inline meshes of `module` and merge identical meshes.
pub fn lift_inline_meshes(module: &mut Module) {
    // Identical definitions: later names map to the first.
    let mut renamed: HashMap<String, String> = HashMap::new();
    let mut kept: Vec<MeshDef> = Vec::with_capacity(module.meshes.len());
    for def in std::mem::take(&mut module.meshes) {
        match kept.iter().find(|k| k.mesh == def.mesh) {
            Some(first) => {
                renamed.insert(def.name.clone(), first.name.clone());
            }
            None => kept.push(def),
        }
    }
    // A lifted mesh is placed where its first inline use is written.
    let lift = |names: &mut Names, s: &mut TensorSharding, pos: SrcPos| {
        let name = match &s.mesh {
            MeshRef::Symbol(name) => match renamed.get(name) {
                Some(new) => new.clone(),
                None => return,
            },
            MeshRef::Inline(mesh) => names.of(mesh, pos),
        };
        s.mesh = MeshRef::Symbol(name);
    };
    // The meshes stay out of the module while its shardings are walked:
    // lifting adds to them.
    let mut meshes = kept;
    let mut names = Names {
        counter: 0,
        meshes: &mut meshes,
    };
    module.for_each_sharding_mut(|s, pos| lift(&mut names, s, pos));
    module.meshes = meshes;
    // Collectives name meshes too (replica groups written as mesh axes).
    for f in &mut module.funcs {
        for op in &mut f.ops {
            if let Some(def) = op.kind.def_mut() {
                for name in def.mesh_symbols_mut() {
                    if let Some(new) = renamed.get(name.as_str()) {
                        *name = new.clone();
                    }
                }
            }
        }
    }
}

/// The module's meshes, growing as inline meshes are lifted.
struct Names<'m> {
    counter: usize,
    meshes: &'m mut Vec<MeshDef>,
}

impl Names<'_> {
    /// The name of the module mesh equal to `mesh`, defining it if needed.
    fn of(&mut self, mesh: &Mesh, pos: SrcPos) -> String {
        if let Some(def) = self.meshes.iter().find(|d| &d.mesh == mesh) {
            return def.name.clone();
        }
        let base = match mesh.device_ids.as_deref() {
            _ if !mesh.axes.is_empty() => "mesh".to_string(),
            Some([id]) => format!("maximal_mesh_{id}"),
            Some(ids) if !ids.is_empty() => "mesh".to_string(),
            _ => "empty_mesh".to_string(),
        };
        let taken = |meshes: &[MeshDef], n: &str| meshes.iter().any(|d| d.name == n);
        let mut name = base.clone();
        while taken(self.meshes, &name) {
            name = format!("{base}_{}", self.counter);
            self.counter += 1;
        }
        self.meshes.push(MeshDef {
            name: name.clone(),
            mesh: mesh.clone(),
            attrs: None,
            pos,
        });
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{parse_module, print_module};

    #[test]
    fn inline_meshes_get_names_and_duplicates_merge() {
        let src = r#"module @m {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  sdy.mesh @mesh_0 = <["x"=2], device_ids=[1, 0]>
  sdy.mesh @mesh_1 = <["x"=2, "y"=4]>
  sdy.mesh @copy = <["x"=2], device_ids=[1, 0]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=2], device_ids=[1, 0]>, [{"x"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_1, [{"x"}, {?}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=8]>, [{?}, {?}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["a"=4]>, [{}, {}]>}) {
    %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<mesh<[], device_ids=[2]>, []>]>} : tensor<8x8xf32>
    %1 = sdy.sharding_constraint %0 <@copy, [{}, {"x"}]> : tensor<8x8xf32>
    %2 = sdy.reshard %1 <mesh<[]>, [{}, {}]> : tensor<8x8xf32>
    return %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>
  }
}"#;
        let mut m = parse_module(src).expect("parses");
        lift_inline_meshes(&mut m);
        let text = print_module(&m);
        let names: Vec<String> = m
            .meshes
            .iter()
            .map(|d| format!("{} = {}", d.name, d.mesh))
            .collect();
        assert_eq!(
            names,
            [
                r#"mesh = <["x"=2, "y"=4]>"#,
                r#"mesh_0 = <["x"=2], device_ids=[1, 0]>"#,
                // The removed duplicate's name is free again.
                r#"mesh_1 = <["x"=8]>"#,
                r#"mesh_2 = <["a"=4]>"#,
                r#"maximal_mesh_2 = <[], device_ids=[2]>"#,
                r#"empty_mesh = <[]>"#,
            ]
        );
        for want in [
            r#"%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh_0, [{"x"}, {}]>}"#,
            r#"%arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>}"#,
            r#"#sdy.sharding<@mesh_1, [{?}, {?}]>"#,
            r#"#sdy.sharding<@mesh_2, [{}, {}]>"#,
            r#"<@maximal_mesh_2, []>"#,
            r#"sdy.sharding_constraint %0 <@mesh_0, [{}, {"x"}]>"#,
            r#"sdy.reshard %1 <@empty_mesh, [{}, {}]>"#,
        ] {
            assert!(text.contains(want), "`{want}` not in:\n{text}");
        }
        assert!(!text.contains("mesh<"), "{text}");
    }

    /// A manual computation's in/out shardings are renamed too (fuzz seed
    /// 201259: a duplicated mesh line left them naming the dropped mesh,
    /// and the propagated module did not load again).
    #[test]
    fn manual_computation_shardings_follow_a_merged_mesh() {
        let src = r#"module @m {
  sdy.mesh @other = <["x"=4, "y"=2]>
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<16x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<16x16xf32>) {
      %1 = stablehlo.tanh %arg1 : tensor<16x16xf32>
      sdy.return %1 : tensor<16x16xf32>
    } : (tensor<64x32xf32>) -> tensor<16x32xf32>
    return %0 : tensor<16x32xf32>
  }
}"#;
        let mut m = parse_module(src).expect("parses");
        lift_inline_meshes(&mut m);
        let text = print_module(&m);
        assert!(!text.contains("@mesh"), "{text}");
        assert!(
            text.contains(
                r#"in_shardings=[<@other, [{"x"}, {"y"}]>] out_shardings=[<@other, [{}, {"y"}]>]"#
            ),
            "{text}"
        );
        parse_module(&text).expect("the module loads again");
    }
}

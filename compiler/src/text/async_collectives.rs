//! Async collectives as JAX writes them (`lax.psum_scatter_start(x, ...)
//! .done()`): a start and a done custom call,
//!
//! ```text
//! %1 = stablehlo.custom_call @"reduce-scatter-start"(%x) {backend_config = "",
//!   called_computations = [@add_float32_reducer], mhlo.frontend_attributes =
//!   {async_collective_config = "{\22scatter_dimension\22: 0, \22replica_groups\22:
//!   [[0, 2, 4, 6], [1, 3, 5, 7]], \22tiled\22: true, \22use_global_device_ids\22:
//!   true, \22channel_id\22: 1}"}} : (tensor<64x4xf32>) -> tensor<16x4xf32>
//! %3 = stablehlo.custom_call @"reduce-scatter-done"(%1) {backend_config = ""}
//!   : (tensor<16x4xf32>) -> tensor<16x4xf32>
//! ```
//!
//! are read as the collective they start: the start becomes a
//! `stablehlo.reduce_scatter` with the config's groups, dimension and
//! channel and the reducer function as its body, and the done is dropped
//! (its uses read the collective's result). Both backends then run it as
//! any reduce-scatter (synchronously; the compute between start and done
//! does not depend on it, so a runtime may overlap it).

use crate::diag::{DiagKind, Diagnostic, SrcPos};
use crate::ir::ops::collectives::{ChannelHandle, Flag, ReduceScatter, ReduceScatterAttrs};
use crate::ir::ops::replica_groups::ReplicaGroups;
use crate::ir::{Computation, NamedAttr};
use crate::ir::{Module, OpId, OpKind};

fn target_of(kind: &OpKind) -> Option<&str> {
    match kind {
        OpKind::CustomCall(c) => Some(c.target.as_str()),
        _ => None,
    }
}

/// Rewrite every async collective of `m` into the collective it starts.
pub fn read_async_collectives(m: &mut Module) -> Result<(), Diagnostic> {
    for fi in 0..m.funcs.len() {
        let starts: Vec<OpId> = m.funcs[fi]
            .all_ops()
            .into_iter()
            .filter(|&id| target_of(&m.funcs[fi].op(id).kind) == Some("reduce-scatter-start"))
            .collect();
        for id in starts {
            let op = m.funcs[fi].op(id);
            let pos = op.pos;
            let err = |msg: String| {
                Diagnostic::new(
                    DiagKind::Unsupported,
                    pos,
                    format!("custom_call @\"reduce-scatter-start\": {msg}"),
                )
            };
            let config = match &op.kind {
                OpKind::CustomCall(c) => c.frontend.as_ref(),
                _ => None,
            }
            .and_then(|f| f.get("async_collective_config"))
            .map(str::to_string)
            .ok_or_else(|| err("no async_collective_config frontend attribute".into()))?;
            let config = Config::parse(&config).map_err(&err)?;
            if !config.tiled {
                return Err(err(
                    "an untiled async reduce-scatter is not supported (JAX writes tiled=true \
                     for psum_scatter_start(..., tiled=True))"
                        .into(),
                ));
            }
            let reducer = attr_text(&op.attrs, "called_computations")
                .and_then(first_symbol)
                .ok_or_else(|| err("no called_computations reducer".into()))?;
            let body = m
                .func(&reducer)
                .ok_or_else(|| {
                    err(format!(
                        "reducer @{reducer} is not a function of the module"
                    ))
                })?
                .clone();
            let kind = OpKind::ReduceScatter(ReduceScatter {
                attrs: ReduceScatterAttrs {
                    channel_handle: config
                        .channel_id
                        .map(|handle| ChannelHandle { handle, kind: 1 }),
                    replica_groups: ReplicaGroups::dense(config.replica_groups),
                    scatter_dimension: config.scatter_dimension,
                    use_global_device_ids: Flag(config.use_global_device_ids),
                },
                body: Computation::new(body),
            });
            let op = m.funcs[fi].op_mut(id);
            op.kind = kind;
            op.attrs.retain(|a| {
                !matches!(
                    a.name.as_str(),
                    "called_computations" | "mhlo.frontend_attributes" | "backend_config"
                )
            });
        }
        drop_dones(m, fi)?;
    }
    Ok(())
}

/// Each done's uses read its operand (the collective's result); the done
/// leaves the program.
fn drop_dones(m: &mut Module, fi: usize) -> Result<(), Diagnostic> {
    let f = &mut m.funcs[fi];
    let dones: Vec<OpId> = f
        .all_ops()
        .into_iter()
        .filter(|&id| target_of(&f.op(id).kind) == Some("reduce-scatter-done"))
        .collect();
    if dones.is_empty() {
        return Ok(());
    }
    let mut map = vec![None; f.values.len()];
    for &id in &dones {
        let op = f.op(id);
        let (&[operand], &[result]) = (op.operands.as_slice(), op.results.as_slice()) else {
            return Err(done_error(op.pos, "takes one operand and has one result"));
        };
        let started = matches!(
            f.values[operand.index()].def,
            crate::ir::ValueDef::Result { op: d, .. } if matches!(f.op(d).kind, OpKind::ReduceScatter(_))
        );
        if !started {
            return Err(done_error(
                op.pos,
                "its operand is not a reduce-scatter-start",
            ));
        }
        map[result.index()] = Some(operand);
    }
    f.replace_uses(&map);
    f.body.retain(|id| !dones.contains(id));
    for op in &mut f.ops {
        for r in &mut op.regions {
            r.body.retain(|id| !dones.contains(id));
        }
    }
    Ok(())
}

fn done_error(pos: SrcPos, msg: &str) -> Diagnostic {
    Diagnostic::new(
        DiagKind::Unsupported,
        pos,
        format!("custom_call @\"reduce-scatter-done\": {msg}"),
    )
}

fn attr_text<'a>(attrs: &'a [NamedAttr], name: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|a| a.name == name)
        .and_then(|a| a.value.as_deref())
}

/// `[@add_float32_reducer]` → `add_float32_reducer`.
fn first_symbol(text: &str) -> Option<String> {
    let at = text.find('@')?;
    let name: String = text[at + 1..]
        .trim_start_matches('"')
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '$' | '-'))
        .collect();
    (!name.is_empty()).then_some(name)
}

/// What `async_collective_config` says.
#[derive(Debug, PartialEq)]
struct Config {
    scatter_dimension: i64,
    replica_groups: Vec<Vec<i64>>,
    tiled: bool,
    use_global_device_ids: bool,
    channel_id: Option<i64>,
}

impl Config {
    /// The flat JSON object JAX writes (integers, booleans, lists of lists
    /// of integers); unknown keys are an error, so a config meshrun would
    /// misread is refused.
    fn parse(text: &str) -> Result<Config, String> {
        let body = text
            .trim()
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .ok_or_else(|| format!("async_collective_config is not a JSON object: {text}"))?;
        let mut c = Config {
            scatter_dimension: -1,
            replica_groups: Vec::new(),
            tiled: false,
            use_global_device_ids: false,
            channel_id: None,
        };
        for (key, value) in split_top(body)
            .into_iter()
            .map(|kv| {
                kv.split_once(':')
                    .map(|(k, v)| (k.trim().trim_matches('"'), v.trim()))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("async_collective_config entry without ':' in {text}"))?
        {
            let int = || {
                value
                    .parse::<i64>()
                    .map_err(|_| format!("{key}: not an integer: {value}"))
            };
            let boolean = || match value {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(format!("{key}: not a boolean: {value}")),
            };
            match key {
                "scatter_dimension" => c.scatter_dimension = int()?,
                "channel_id" => c.channel_id = Some(int()?),
                "tiled" => c.tiled = boolean()?,
                "use_global_device_ids" => c.use_global_device_ids = boolean()?,
                "replica_groups" => c.replica_groups = groups(value)?,
                other => return Err(format!("async_collective_config has unknown key '{other}'")),
            }
        }
        if c.scatter_dimension < 0 || c.replica_groups.is_empty() {
            return Err(format!(
                "async_collective_config needs scatter_dimension and replica_groups: {text}"
            ));
        }
        Ok(c)
    }
}

/// Split `a: 1, b: [[0, 1], [2]]` at top-level commas.
fn split_top(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (i, ch) in s.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(&s[start..]);
    }
    out
}

/// `[[0, 2], [1, 3]]`.
fn groups(value: &str) -> Result<Vec<Vec<i64>>, String> {
    let bad = || format!("replica_groups: not a list of integer lists: {value}");
    let inner = value
        .trim()
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .ok_or_else(bad)?;
    split_top(inner)
        .into_iter()
        .map(|g| {
            let g = g
                .trim()
                .strip_prefix('[')
                .and_then(|g| g.strip_suffix(']'))
                .ok_or_else(bad)?;
            g.split(',')
                .filter(|x| !x.trim().is_empty())
                .map(|x| x.trim().parse::<i64>().map_err(|_| bad()))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_reads_what_jax_writes() {
        let json = r#"{"scatter_dimension": 0, "replica_groups": [[0, 2, 4, 6], [1, 3, 5, 7]], "tiled": true, "use_global_device_ids": true, "channel_id": 1}"#;
        let c = Config::parse(json).unwrap();
        assert_eq!(
            c,
            Config {
                scatter_dimension: 0,
                replica_groups: vec![vec![0, 2, 4, 6], vec![1, 3, 5, 7]],
                tiled: true,
                use_global_device_ids: true,
                channel_id: Some(1),
            }
        );
        assert!(Config::parse(r#"{"scatter_dimension": 0, "what": 1}"#)
            .unwrap_err()
            .contains("unknown key 'what'"));
        assert!(Config::parse(r#"{"tiled": true}"#).is_err());
        assert!(Config::parse(r#"{"scatter_dimension": 0, "replica_groups": [[0, x]]}"#).is_err());
        assert_eq!(
            first_symbol("[@add_float32_reducer]").as_deref(),
            Some("add_float32_reducer")
        );
    }
}

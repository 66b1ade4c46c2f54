//! The mesh a user names for `suggest`: `data=4,model=2`, axes major to
//! minor (the CLI's `--mesh`, the Python package's `mesh={"data": 4, ...}`).

use anyhow::{bail, Context};

use meshrun_compiler::sharding::Mesh;

/// Parse `data=4,model=2` into a mesh.
pub fn parse_mesh(s: &str) -> anyhow::Result<Mesh> {
    let mut axes: Vec<(String, i64)> = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let Some((name, size)) = part.split_once('=') else {
            bail!("--mesh: '{part}' is not AXIS=SIZE (e.g. \"data=4,model=2\")");
        };
        let name = name.trim().trim_matches('"');
        let size: i64 = size
            .trim()
            .parse()
            .ok()
            .filter(|&n| n >= 1)
            .with_context(|| format!("--mesh: the size of '{name}' must be a positive integer"))?;
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            bail!("--mesh: '{name}' is not an axis name (letters, digits, _)");
        }
        if axes.iter().any(|(n, _)| n == name) {
            bail!("--mesh: axis '{name}' is given twice");
        }
        axes.push((name.to_string(), size));
    }
    let refs: Vec<(&str, i64)> = axes.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    let mesh = Mesh::new(&refs);
    if mesh.num_devices() > 1 << 16 {
        bail!(
            "--mesh: {} devices is more than meshrun plans for",
            mesh.num_devices()
        );
    }
    Ok(mesh)
}

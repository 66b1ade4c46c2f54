//! Machines as data: nodes of devices, the link inside a node and the link
//! between nodes (bandwidth and per-step latency), and the compute peak per
//! element type. Topologies are JSON files (`topologies/*.json`); the
//! built-in ones are embedded in the binary, and users pass their own with
//! `--topology PATH`.
//!
//! Device `d` sits on node `d / devices_per_node`. A collective group whose
//! devices share a node uses the intra-node link; a group that crosses
//! nodes pays the slower inter-node link for the whole collective.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use meshrun_compiler::ir::ElemType;

use crate::cost::error::CostError;

/// The topology `meshrun cost` uses when none is named.
pub const DEFAULT_TOPOLOGY: &str = "h100-nvlink-8";

/// The built-in topologies: name and JSON text.
const BUILTIN: &[(&str, &str)] = &[
    (
        "h100-nvlink-8",
        include_str!("../../topologies/h100-nvlink-8.json"),
    ),
    (
        "a100-nvlink-8",
        include_str!("../../topologies/a100-nvlink-8.json"),
    ),
    ("pcie4-8", include_str!("../../topologies/pcie4-8.json")),
    (
        "2x8-h100-ib400",
        include_str!("../../topologies/2x8-h100-ib400.json"),
    ),
    (
        "8x8-h100-ib400",
        include_str!("../../topologies/8x8-h100-ib400.json"),
    ),
    (
        "32x8-h100-ib400",
        include_str!("../../topologies/32x8-h100-ib400.json"),
    ),
    (
        "32x8-a100-ib200",
        include_str!("../../topologies/32x8-a100-ib200.json"),
    ),
];

/// One kind of link, as the α-β model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// For people: `NVLink 4`, `InfiniBand NDR 400 Gb/s`.
    pub name: String,
    /// The bandwidth the model uses, in GB/s (10^9 bytes per second) per
    /// direction: the bus bandwidth (`busbw`) nccl-tests would report.
    pub bandwidth_gbytes_per_s: f64,
    /// The line rate, for reference only (the model does not use it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_gbytes_per_s: Option<f64>,
    /// α: the latency of one step of a collective (one ring hop), in µs.
    pub latency_us: f64,
}

impl Link {
    /// Bandwidth in bytes per second.
    pub fn bytes_per_second(&self) -> f64 {
        self.bandwidth_gbytes_per_s * 1e9
    }

    /// α in seconds.
    pub fn latency_s(&self) -> f64 {
        self.latency_us * 1e-6
    }
}

/// A machine: `nodes` nodes of `devices_per_node` devices each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub nodes: i64,
    pub devices_per_node: i64,
    /// Between devices of one node.
    pub intra_node: Link,
    /// Between nodes; required when `nodes > 1`.
    #[serde(default)]
    pub inter_node: Option<Link>,
    /// Between a device and its host's memory (PCIe, NVLink-C2C): what
    /// copies of values in host memory (`pinned_host`) cross, each device
    /// over its own link. Required to cost a program that has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_link: Option<Link>,
    /// Dense peak TFLOP/s per element type name (`bf16`, `f32`, ...). `f32`
    /// is required and also serves element types without an entry.
    pub peak_tflops: BTreeMap<String, f64>,
    /// Where the numbers come from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The link a group of devices communicates over.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkChoice {
    pub link: Link,
    /// True when the group spans more than one node.
    pub crosses_nodes: bool,
}

impl Topology {
    /// Names of the built-in topologies.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// A built-in topology by name.
    pub fn builtin(name: &str) -> Result<Topology, CostError> {
        let (_, text) = BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| unknown(name))?;
        Topology::from_json(text, &format!("built-in topology {name}"))
    }

    /// `NAME` of a built-in topology, or the path of a JSON file. A name
    /// that is neither a built-in nor an existing or `.json` path is an
    /// unknown topology.
    pub fn resolve(name_or_path: &str) -> Result<Topology, CostError> {
        if BUILTIN.iter().any(|(n, _)| *n == name_or_path) {
            return Topology::builtin(name_or_path);
        }
        let path = Path::new(name_or_path);
        let looks_like_path = name_or_path.ends_with(".json")
            || name_or_path.contains('/')
            || name_or_path.contains('\\');
        if path.exists() || looks_like_path {
            Topology::from_file(path)
        } else {
            Err(unknown(name_or_path))
        }
    }

    /// Read and check a topology file.
    pub fn from_file(path: &Path) -> Result<Topology, CostError> {
        let text = std::fs::read_to_string(path).map_err(|source| CostError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Topology::from_json(&text, &path.display().to_string())
    }

    /// Parse and check topology JSON; `source_name` names it in errors.
    pub fn from_json(text: &str, source_name: &str) -> Result<Topology, CostError> {
        let topo: Topology =
            serde_json::from_str(text).map_err(|e| CostError::MalformedTopology {
                source_name: source_name.to_string(),
                message: e.to_string(),
            })?;
        topo.check().map_err(|message| CostError::InvalidTopology {
            source_name: source_name.to_string(),
            message,
        })?;
        Ok(topo)
    }

    /// The topology as pretty JSON (what `from_json` reads back).
    pub fn to_json(&self) -> String {
        // A struct of strings, numbers and maps with string keys always
        // serializes.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Total number of devices.
    pub fn num_devices(&self) -> i64 {
        self.nodes.saturating_mul(self.devices_per_node)
    }

    /// The node device `device` sits on.
    pub fn node_of(&self, device: i64) -> Result<i64, CostError> {
        if device < 0 || device >= self.num_devices() {
            return Err(CostError::DeviceOutsideTopology {
                topology: self.name.clone(),
                device,
                num_devices: self.num_devices(),
            });
        }
        Ok(device / self.devices_per_node)
    }

    /// Whether every device `module`'s meshes name exists here: checked
    /// before partitioning, so a program too big for the machine is told
    /// so at once.
    pub fn check_module_fits(&self, module: &meshrun_compiler::Module) -> Result<(), CostError> {
        let have = self.num_devices();
        for m in &module.meshes {
            // The first device the topology lacks, as `node_of` names it.
            let outside = match &m.mesh.device_ids {
                Some(ids) => ids.iter().copied().filter(|&d| d >= have).min(),
                None => (m.mesh.num_devices() > have).then_some(have),
            };
            if let Some(d) = outside {
                self.node_of(d)?;
            }
        }
        Ok(())
    }

    /// The link a collective among `devices` runs over: the intra-node link
    /// when they share a node, else the inter-node link.
    pub fn link_for(&self, devices: &[i64]) -> Result<LinkChoice, CostError> {
        let mut nodes = devices.iter().map(|&d| self.node_of(d));
        let first = nodes.next().transpose()?;
        let mut crosses_nodes = false;
        for n in nodes {
            crosses_nodes |= Some(n?) != first;
        }
        let link = match (crosses_nodes, &self.inter_node) {
            (true, Some(inter)) => inter.clone(),
            // `check` makes `inter_node` present whenever there are two
            // nodes, so a crossing group always finds it.
            _ => self.intra_node.clone(),
        };
        Ok(LinkChoice {
            link,
            crosses_nodes,
        })
    }

    /// Peak TFLOP/s for ops on `elem` (f32's for types without an entry;
    /// NaN only for a hand-built topology without `f32`, which `from_json`
    /// refuses).
    pub fn peak_tflops_for(&self, elem: ElemType) -> f64 {
        self.peak_tflops
            .get(elem.name())
            .or_else(|| self.peak_tflops.get("f32"))
            .copied()
            .unwrap_or(f64::NAN)
    }

    /// Why this topology cannot be used, if it cannot.
    fn check(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("`name` is empty".into());
        }
        if self.nodes < 1 {
            return Err(format!("`nodes` is {}; must be at least 1", self.nodes));
        }
        if self.devices_per_node < 1 {
            return Err(format!(
                "`devices_per_node` is {}; must be at least 1",
                self.devices_per_node
            ));
        }
        check_link("intra_node", &self.intra_node)?;
        if let Some(l) = &self.host_link {
            check_link("host_link", l)?;
        }
        match &self.inter_node {
            Some(l) => check_link("inter_node", l)?,
            None if self.nodes > 1 => {
                return Err(format!("{} nodes but no `inter_node` link", self.nodes))
            }
            None => {}
        }
        if !self.peak_tflops.contains_key("f32") {
            return Err("`peak_tflops` has no `f32` entry".into());
        }
        for (ty, &v) in &self.peak_tflops {
            if ElemType::from_name(ty).is_none() {
                return Err(format!("`peak_tflops` names unknown element type '{ty}'"));
            }
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("`peak_tflops.{ty}` is {v}; must be positive"));
            }
        }
        Ok(())
    }
}

fn check_link(field: &str, l: &Link) -> Result<(), String> {
    let bw = l.bandwidth_gbytes_per_s;
    if !(bw.is_finite() && bw > 0.0) {
        return Err(format!(
            "`{field}.bandwidth_gbytes_per_s` is {bw}; must be positive"
        ));
    }
    let lat = l.latency_us;
    if !(lat.is_finite() && lat >= 0.0) {
        return Err(format!(
            "`{field}.latency_us` is {lat}; must be zero or positive"
        ));
    }
    Ok(())
}

fn unknown(name: &str) -> CostError {
    CostError::UnknownTopology {
        name: name.to_string(),
        known: Topology::builtin_names()
            .into_iter()
            .map(String::from)
            .collect(),
    }
}

//! Logical device meshes (SPEC §1): named, ordered axes over device ids.

use std::fmt;

use crate::diag::SrcPos;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MeshAxis {
    pub name: String,
    pub size: i64,
}

/// `<["data"=4, "model"=2], device_ids=[...]>`. Without `device_ids` the
/// devices are `0..N` in row-major order of the axes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Mesh {
    pub axes: Vec<MeshAxis>,
    pub device_ids: Option<Vec<i64>>,
}

impl Mesh {
    pub fn new(axes: &[(&str, i64)]) -> Mesh {
        Mesh {
            axes: axes
                .iter()
                .map(|(n, s)| MeshAxis {
                    name: n.to_string(),
                    size: *s,
                })
                .collect(),
            device_ids: None,
        }
    }

    pub fn with_device_ids(mut self, ids: Vec<i64>) -> Mesh {
        self.device_ids = Some(ids);
        self
    }

    /// Number of devices (product of axis sizes; 1 for an empty mesh unless
    /// `device_ids` names a single device).
    pub fn num_devices(&self) -> i64 {
        self.axes.iter().map(|a| a.size).product()
    }

    /// Shardy's maximal mesh: no axes and exactly one device id (a value
    /// on it lives on that one device).
    pub fn is_maximal(&self) -> bool {
        self.axes.is_empty() && self.device_ids.as_ref().is_some_and(|ids| ids.len() == 1)
    }

    /// Shardy's empty mesh: no axes and no device ids, a placeholder that
    /// any other mesh may replace.
    pub fn is_empty(&self) -> bool {
        self.axes.is_empty() && self.device_ids.as_ref().is_none_or(|ids| ids.is_empty())
    }

    pub fn axis(&self, name: &str) -> Option<&MeshAxis> {
        self.axes.iter().find(|a| a.name == name)
    }

    pub fn axis_index(&self, name: &str) -> Option<usize> {
        self.axes.iter().position(|a| a.name == name)
    }

    pub fn axis_size(&self, name: &str) -> Option<i64> {
        self.axis(name).map(|a| a.size)
    }

    /// The device id at mesh position `linear` (row-major over the axes).
    pub fn device_at(&self, linear: i64) -> i64 {
        match &self.device_ids {
            Some(ids) => ids[linear as usize],
            None => linear,
        }
    }

    /// All device ids in mesh (row-major) order.
    pub fn device_list(&self) -> Vec<i64> {
        (0..self.num_devices()).map(|i| self.device_at(i)).collect()
    }

    /// The mesh coordinates of position `linear` (row-major).
    pub fn coords_of_linear(&self, mut linear: i64) -> Vec<i64> {
        let mut coords = vec![0; self.axes.len()];
        for (i, a) in self.axes.iter().enumerate().rev() {
            coords[i] = linear % a.size;
            linear /= a.size;
        }
        coords
    }

    /// The mesh coordinates of device `id`, if the mesh has it.
    pub fn coords_of_device(&self, id: i64) -> Option<Vec<i64>> {
        let linear = match &self.device_ids {
            Some(ids) => ids.iter().position(|&d| d == id)? as i64,
            None if (0..self.num_devices()).contains(&id) => id,
            None => return None,
        };
        Some(self.coords_of_linear(linear))
    }
}

impl fmt::Display for Mesh {
    /// `<["a"=4, "b"=2]>` or `<["a"=2], device_ids=[1, 0]>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<[")?;
        for (i, a) in self.axes.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "\"{}\"={}", a.name, a.size)?;
        }
        f.write_str("]")?;
        if let Some(ids) = &self.device_ids {
            f.write_str(", device_ids=[")?;
            for (i, d) in ids.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{d}")?;
            }
            f.write_str("]")?;
        }
        f.write_str(">")
    }
}

/// A named mesh of a module: `sdy.mesh @name = <...> {attrs}`.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshDef {
    pub name: String,
    pub mesh: Mesh,
    /// A trailing attribute dictionary (JAX writes `{stablehlo.mesh = ...}`),
    /// kept verbatim including braces.
    pub attrs: Option<String>,
    /// Where it is defined (compares equal to every position).
    pub pos: SrcPos,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coords_and_devices() {
        let m = Mesh::new(&[("x", 2), ("y", 4)]);
        assert_eq!(m.num_devices(), 8);
        assert_eq!(m.coords_of_device(5), Some(vec![1, 1]));
        let m = m.with_device_ids(vec![7, 6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(m.coords_of_device(7), Some(vec![0, 0]));
        assert_eq!(m.device_at(1), 6);
        assert_eq!(
            m.to_string(),
            "<[\"x\"=2, \"y\"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>"
        );
    }
}

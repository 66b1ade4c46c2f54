//! Which GPU runs which mesh device (pure; tested on the CPU).
//!
//! A run may have more mesh devices than the machine has GPUs (8 mesh
//! devices on 2 GPUs, or on 1). Mesh devices then share GPUs: each gets
//! its own stream on its GPU (a *slot*), its own buffers and its own
//! cuBLAS handle, exactly as if it had the GPU to itself; only collectives
//! notice, because NCCL refuses two ranks on one GPU (see `routes`).
//!
//! Placement is by blocks in program device order: with `n` devices on `g`
//! GPUs, device position `p` runs on GPU `p * g / n` (`g` at most `n`). Mesh device ids are
//! laid out with the last mesh axis fastest, so blocks keep the minor
//! axes' groups (usually the tensor-parallel ones, with the most traffic)
//! on one GPU, where their collectives are device-to-device copies.

use std::collections::HashMap;

/// Where one mesh device runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Seat {
    /// The GPU ordinal (as CUDA numbers the visible GPUs).
    pub gpu: usize,
    /// The device's stream on that GPU: 0 for the first mesh device placed
    /// there, 1 for the next, ...
    pub slot: usize,
}

/// The placement of one run's mesh devices on the GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    devices: Vec<i64>,
    seats: HashMap<i64, Seat>,
    num_gpus: usize,
}

impl Placement {
    /// Block placement of `devices` (program order) on `num_gpus` GPUs. Uses
    /// `min(num_gpus, devices)` GPUs.
    pub fn blocks(devices: &[i64], num_gpus: usize) -> Result<Placement, String> {
        if num_gpus == 0 {
            return Err("no GPU to place mesh devices on".into());
        }
        if devices.is_empty() {
            return Err("no mesh device to place".into());
        }
        let n = devices.len();
        let used = num_gpus.min(n);
        let mut seats = HashMap::with_capacity(n);
        let mut next_slot: Vec<usize> = vec![0; used];
        for (p, &d) in devices.iter().enumerate() {
            let gpu = p * used / n;
            let slot = next_slot[gpu];
            next_slot[gpu] += 1;
            if seats.insert(d, Seat { gpu, slot }).is_some() {
                return Err(format!("mesh device {d} is listed twice"));
            }
        }
        Ok(Placement {
            devices: devices.to_vec(),
            seats,
            num_gpus: used,
        })
    }

    /// The mesh devices, in program order.
    pub fn devices(&self) -> &[i64] {
        &self.devices
    }

    /// GPUs in use (ordinals `0..num_gpus()`).
    pub fn num_gpus(&self) -> usize {
        self.num_gpus
    }

    pub fn seat(&self, device: i64) -> Option<Seat> {
        self.seats.get(&device).copied()
    }

    pub fn gpu(&self, device: i64) -> Option<usize> {
        self.seat(device).map(|s| s.gpu)
    }

    /// The mesh devices on `gpu`, by slot.
    pub fn devices_on(&self, gpu: usize) -> Vec<i64> {
        let mut on: Vec<(usize, i64)> = self
            .devices
            .iter()
            .filter_map(|&d| self.seat(d).filter(|s| s.gpu == gpu).map(|s| (s.slot, d)))
            .collect();
        on.sort_unstable();
        on.into_iter().map(|(_, d)| d).collect()
    }

    /// True when some GPU runs more than one mesh device.
    pub fn shares_gpus(&self) -> bool {
        self.devices.len() > self.num_gpus
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_consecutive_devices_share_a_gpu() {
        let devs: Vec<i64> = (0..8).collect();
        let p = Placement::blocks(&devs, 2).unwrap();
        assert_eq!(p.devices_on(0), vec![0, 1, 2, 3]);
        assert_eq!(p.devices_on(1), vec![4, 5, 6, 7]);
        assert_eq!(p.seat(5), Some(Seat { gpu: 1, slot: 1 }));
        assert!(p.shares_gpus());
        let one_each = Placement::blocks(&devs, 8).unwrap();
        assert!(!one_each.shares_gpus());
        assert_eq!(one_each.seat(7), Some(Seat { gpu: 7, slot: 0 }));
        // More GPUs than devices: only as many are used.
        let few = Placement::blocks(&[3, 1], 8).unwrap();
        assert_eq!(few.num_gpus(), 2);
        assert_eq!(few.gpu(1), Some(1));
    }

    #[test]
    fn uneven_counts_and_device_order_are_kept() {
        // 6 devices on 4 GPUs: positions 0,1 | 2 | 3,4 | 5.
        let devs = [10, 11, 12, 13, 14, 15];
        let p = Placement::blocks(&devs, 4).unwrap();
        let gpus: Vec<usize> = devs.iter().map(|&d| p.gpu(d).unwrap()).collect();
        assert_eq!(gpus, vec![0, 0, 1, 2, 2, 3]);
        // A permuted device list places by position, not by id.
        let p = Placement::blocks(&[3, 2, 1, 0], 2).unwrap();
        assert_eq!(p.devices_on(0), vec![3, 2]);
        assert_eq!(p.gpu(9), None);
    }

    #[test]
    fn bad_placements_are_errors() {
        assert!(Placement::blocks(&[0, 1], 0).is_err());
        assert!(Placement::blocks(&[], 2).is_err());
        assert!(Placement::blocks(&[0, 0], 2).is_err());
    }
}

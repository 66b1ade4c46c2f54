//! Byte counts as people write them (`1K`, `256M`, `1G`: powers of 1024,
//! like nccl-tests' `-b`/`-e`) and the doubling ladder between two sizes.

/// Parse `N`, `NK`, `NM` or `NG` (optionally followed by `B` or `iB`,
/// any case) as a byte count; the suffixes are powers of 1024.
/// A memory cap as given on the command line or to the Python package
/// (`80G`: [`parse_bytes`]), in bytes; `flag` names it in the error.
pub fn parse_memory_cap(flag: &str, s: &str) -> Result<f64, String> {
    parse_bytes(s)
        .map(|b| b as f64)
        .map_err(|e| format!("{flag}: {e}"))
}

pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bad = || {
        format!("invalid size '{s}': expected a number of bytes with an optional K, M or G suffix (e.g. 1K, 256M)")
    };
    let upper = t.to_ascii_uppercase();
    let body = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (digits, shift) = match body.chars().last() {
        Some('K') => (&body[..body.len() - 1], 10),
        Some('M') => (&body[..body.len() - 1], 20),
        Some('G') => (&body[..body.len() - 1], 30),
        _ => (body, 0),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("size '{s}' is too large"))
}

/// `1K`, `64M`, `1536`: the shortest exact spelling of a byte count.
pub fn format_bytes(n: u64) -> String {
    for (shift, suffix) in [(30, "G"), (20, "M"), (10, "K")] {
        if n >= 1 << shift && n.trailing_zeros() >= shift {
            return format!("{}{suffix}", n >> shift);
        }
    }
    n.to_string()
}

/// `min`, `2·min`, `4·min`, ... up to `max` (nccl-tests' `-f 2`).
pub fn ladder(min: u64, max: u64) -> Result<Vec<u64>, String> {
    if min == 0 {
        return Err("--min-bytes must be at least 1".into());
    }
    if min > max {
        return Err(format!(
            "--min-bytes {} is larger than --max-bytes {}",
            format_bytes(min),
            format_bytes(max)
        ));
    }
    let mut sizes = Vec::new();
    let mut s = min;
    while s <= max {
        sizes.push(s);
        match s.checked_mul(2) {
            Some(next) => s = next,
            None => break,
        }
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_are_powers_of_1024() {
        assert_eq!(parse_bytes("1K"), Ok(1024));
        assert_eq!(parse_bytes("256M"), Ok(256 << 20));
        assert_eq!(parse_bytes("2g"), Ok(2 << 30));
        assert_eq!(parse_bytes("4KiB"), Ok(4096));
        assert_eq!(parse_bytes("8kb"), Ok(8192));
        assert_eq!(parse_bytes("100"), Ok(100));
        for bad in ["", "K", "1T", "-1K", "1.5M", "M1"] {
            let e = parse_bytes(bad).unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
        }
        assert!(parse_bytes("99999999999G")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn the_ladder_doubles_up_to_max() {
        assert_eq!(ladder(1024, 8192), Ok(vec![1024, 2048, 4096, 8192]));
        assert_eq!(ladder(1000, 5000), Ok(vec![1000, 2000, 4000]));
        assert_eq!(ladder(64, 64), Ok(vec![64]));
        assert!(ladder(0, 8).is_err());
        assert!(ladder(16, 8).unwrap_err().contains("larger"));
        assert_eq!(format_bytes(64 << 20), "64M");
        assert_eq!(format_bytes(1536), "1536");
    }
}

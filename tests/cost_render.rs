//! Units in the table: sizes, times and FLOPs for people.

use meshrun::cost::render::{human_bytes, human_flops, human_time, significant, three_digits};

#[test]
fn sizes_use_binary_units_and_whole_bytes_stay_whole() {
    assert_eq!(human_bytes(6.0), "6 B");
    assert_eq!(human_bytes(512.0), "512 B");
    assert_eq!(human_bytes(7.5), "7.50 B");
    assert_eq!(human_bytes(1536.0), "1.50 KiB");
    assert_eq!(human_bytes(917504.0), "896 KiB");
    assert_eq!(human_bytes(1048576.0), "1.00 MiB");
    assert_eq!(human_bytes(3.0 * 1073741824.0), "3.00 GiB");
}

#[test]
fn times_pick_ns_us_ms_or_s() {
    assert_eq!(human_time(0.0), "0 µs");
    assert_eq!(human_time(5.93e-11), "0.0593 ns");
    assert_eq!(human_time(2.0014e-6), "2.00 µs");
    assert_eq!(human_time(33.3017e-6), "33.3 µs");
    assert_eq!(human_time(638.1456e-6), "638 µs");
    assert_eq!(human_time(1.5e-3), "1.50 ms");
    assert_eq!(human_time(12.0), "12.0 s");
}

#[test]
fn flops_use_si_prefixes() {
    assert_eq!(human_flops(256.0), "256 FLOP");
    assert_eq!(human_flops(29312.0), "29.3 kFLOP");
    assert_eq!(human_flops(805306368.0), "805 MFLOP");
    assert_eq!(human_flops(2.1e12), "2.10 TFLOP");
}

#[test]
fn three_digits_keeps_zeros_and_significant_drops_them() {
    assert_eq!(three_digits(4.2), "4.20");
    assert_eq!(three_digits(0.000265), "0.000265");
    assert_eq!(three_digits(123456.0), "123456");
    assert_eq!(significant(4.2), "4.2");
    assert_eq!(significant(2.0), "2");
    assert_eq!(significant(39.99999), "40");
}

//! Op sharding rules (SPEC §4): the factors of every operand and result
//! dimension of an op, and projection between dimension and factor
//! shardings.

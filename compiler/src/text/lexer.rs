//! Tokenizer for the MLIR subset meshrun reads.

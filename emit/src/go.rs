//! Go output (ABI0 assembly and declarations).

//! placeholder until the macro lands

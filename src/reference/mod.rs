//! Plain CPU (f64) twins of the GPU stages: the oracles the tests compare against.

pub mod integrate;

//! The AWS boundary: ELBv2 and EC2 behind narrow traits (SDK implementation and in-memory fake).

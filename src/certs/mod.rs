//! The webhook server's certificate, from its making to its serving: `certs generate` writes a
//! pair to files (`generate.rs`); under a managed certificate the controller keeps the pair in a
//! Secret and renews it (`manager.rs`), with the CA in both webhook configurations' `caBundle`
//! (`ca_bundle.rs`); the TLS server serves whichever pair is current, reloading it without a
//! restart (`tls.rs`). Certificate generation itself is the `webhook-certs` crate; the ACM
//! certificates of listeners are a deploy concern (`deploy/cert_discovery.rs`).

pub mod ca_bundle;
pub mod generate;
pub mod manager;
pub mod tls;

pub use manager::{CertManager, CertManagerConfig};

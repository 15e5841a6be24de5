//! Shadow mode (`--dry-run`) and `diff`, below the controllers: the controllers run unchanged,
//! but their AWS clients are a [`Recorder`] (real reads, every write recorded and answered as
//! AWS would) and their Kubernetes client goes through [`cluster::DryRunLayer`], so no write
//! leaves the process. Every reconcile pass runs inside a [`scope`] that gathers the writes it
//! planned ([`ledger`]): logged and counted in shadow mode, handed to `diff`'s report otherwise.
//!
//! The Kubernetes half lives here too, because both halves note their writes in the one ledger.

pub mod cluster;
pub mod ledger;
pub mod record;
pub mod roles;

pub use ledger::{
    aws_kind, capture, collect, collected, enabled, note, register, scope, Collected,
    PENDING_WRITES,
};
pub use record::{is_placeholder, Change, Recorder, Write};
pub use roles::RecordedRoles;

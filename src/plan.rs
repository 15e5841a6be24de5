//! Offline `plan` command (in progress).

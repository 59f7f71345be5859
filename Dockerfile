# syntax=docker/dockerfile:1
#
# The meshcp control plane as a container image: a static binary on a
# distroless base, run as a non-root user.
#
#   docker build --build-arg VERSION=v0.1.0 --build-arg COMMIT=$(git rev-parse HEAD) -t meshcp/controlplane:v0.1.0 .
#
# The go build line below is what test/dockerfile runs to check that it
# yields a static binary that reports its stamped version; keep it on one
# line.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Modules first: they change less often than the code, so this layer is
# cached across most builds.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=devel
ARG COMMIT=unknown
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false -ldflags "-s -w -X github.com/meshcp/meshcp/pkg/version.version=${VERSION} -X github.com/meshcp/meshcp/pkg/version.commit=${COMMIT}" -o /out/controlplane ./cmd/controlplane

# distroless/static: no shell, no package manager, CA certificates and
# /etc/passwd only; the nonroot tag runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/controlplane /usr/local/bin/controlplane
USER 65532:65532
# 15010 xDS (plaintext), 15012 xDS (TLS), 15014 metrics, 8080 debug.
EXPOSE 15010 15012 15014 8080
ENTRYPOINT ["/usr/local/bin/controlplane"]

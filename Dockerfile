# syntax=docker/dockerfile:1
# drivemail: a static binary on a distroless base, running as a non-root user.
#   docker build -t drivemail --build-arg VERSION=$(git describe --tags --always) .
#   docker run --rm -p 127.0.0.1:8080:8080 drivemail serve --demo --demo-public
#     (try it: use the printed DEMO_TOKEN; --demo-public because the container listens on
#     0.0.0.0, which a demo refuses without it; the emulator's pages stay inside the
#     container, so run `make demo` for the OAuth flow)
# Deploying: docs/deployment.md (deploy/compose.yaml runs two replicas on PostgreSQL
# behind Caddy).

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
# CGO_ENABLED=0: modernc.org/sqlite is pure Go, so the binary is static.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/drivemail ./cmd/drivemail && \
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/healthcheck ./deploy/healthcheck && \
	mkdir -p /out/data

# distroless/static: CA certificates (for Google's TLS), tzdata, /tmp, and
# the nonroot user (65532); no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/drivemail /out/healthcheck /usr/local/bin/
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
# Listen on every interface inside the container; the SQLite store (the
# default; give a postgres:// URL for several replicas) lives in the /data volume.
# The demo's sample files are built into the binary.
ENV DRIVEMAIL_ADDR=0.0.0.0:8080 \
	DRIVEMAIL_STORE=sqlite:/data/drivemail.db
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/local/bin/healthcheck"]
ENTRYPOINT ["/usr/local/bin/drivemail"]
CMD ["serve"]

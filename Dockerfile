# syntax=docker/dockerfile:1
#
# brain in a container: docker build -t brain . (see README, Deployment).
# The build stage compiles with cgo (SQLite); the runtime stage is a small
# Debian with CA certificates, bubblewrap (sandbox_exec) and util-linux
# (setpriv/prlimit the sandbox uses), running as a non-root user with its
# state in the /data volume.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
ARG DATE=unknown
RUN CGO_ENABLED=1 go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" \
      -o /out/brain ./cmd/brain

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates bubblewrap util-linux curl tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin brain \
 && mkdir -p /data /etc/brain \
 && chown brain:brain /data
COPY --from=build /out/brain /usr/local/bin/brain
COPY deploy/config.docker.yaml /etc/brain/config.yaml
USER brain:brain
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
# /readyz: the database takes writes and brain is not draining; Slack,
# Linear and MCP outages never fail it (see /readyz?verbose).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8080/readyz"]
ENTRYPOINT ["/usr/local/bin/brain"]
CMD ["serve", "--config", "/etc/brain/config.yaml"]

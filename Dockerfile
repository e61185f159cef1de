# syntax=docker/dockerfile:1
# Portcullis container image: a Swift toolchain stage builds the release binary with the same scripts CI runs on
# the host (scripts/deps.sh build, scripts/build-release.sh); a slim Debian 12 stage runs it as a non-root user.
# Build:  docker build -t portcullis .          Run: see docs/deploying.md
ARG SWIFT_IMAGE=swift:6.3.1-bookworm
ARG RUNTIME_IMAGE=debian:12-slim

FROM ${SWIFT_IMAGE} AS build
WORKDIR /src
COPY scripts/ scripts/
RUN scripts/deps.sh build && rm -rf /var/lib/apt/lists/*
COPY Package.swift ./
COPY Plugins/ Plugins/
COPY Sources/ Sources/
COPY Tests/ Tests/
RUN scripts/build-release.sh --stage /staging

FROM ${RUNTIME_IMAGE}
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="Portcullis" \
      org.opencontainers.image.description="Self-hosted storage gateway speaking the Cloud Storage for Firebase v0 protocol" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="debian:12-slim"

# Runtime shared libraries: exactly the Debian packages owning what `ldd` reports for the binary and the Swift
# runtime (tests/blackbox/test_runtime_image.py checks this list against the built binary); zlib1g for the
# streaming gunzip. The server links no Foundation, so no libxml2 or ICU.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
        libcurl4 libjwt0 libsqlite3-0 libssl3 libstdc++6 zlib1g ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 portcullis \
 && useradd --system --uid 10001 --gid portcullis --no-create-home --home-dir /data \
        --shell /usr/sbin/nologin portcullis \
 && mkdir -p /data \
 && chown portcullis:portcullis /data

# The binary and the Swift runtime libraries it loads (its RUNPATH contains $ORIGIN).
COPY --from=build /staging/ /opt/portcullis/
COPY scripts/healthcheck.sh /opt/portcullis/healthcheck

ENV PORTCULLIS_LISTEN=0.0.0.0:8080 \
    PORTCULLIS_BUCKETS=default-bucket=file:/data
WORKDIR /data
# The only writable path: run with a read-only root file system (docker run --read-only, or
# securityContext.readOnlyRootFilesystem in Kubernetes).
VOLUME ["/data"]
USER 10001:10001
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["/opt/portcullis/healthcheck"]
ENTRYPOINT ["/opt/portcullis/portcullis"]
CMD ["serve"]

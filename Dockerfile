# svc as a container: the single executable built with Bun, shipped on slim Debian with Chromium's headless shell for browser steps.
# docker build -t svc . && docker run -p 8080:8080 -v svc-data:/var/lib/svc svc

FROM oven/bun:1.4.5-debian AS build
WORKDIR /src
# Dependencies first, so that a source change does not reinstall them.
COPY package.json bun.lock ./
RUN bun install --frozen-lockfile
COPY . .
RUN bun run build && ./dist/svc --version

FROM debian:bookworm-slim
# Chromium's headless shell runs browser steps; tini reaps the browser's processes.
RUN apt-get update \
  && apt-get install -y --no-install-recommends ca-certificates chromium-headless-shell fonts-liberation tini \
  && rm -rf /var/lib/apt/lists/*
RUN groupadd --system svc \
  && useradd --system --gid svc --home-dir /var/lib/svc --no-create-home --shell /usr/sbin/nologin svc \
  && mkdir -p /var/lib/svc \
  && chown svc:svc /var/lib/svc
COPY --from=build /src/dist/svc /usr/local/bin/svc
ENV SVC_HOST=0.0.0.0 SVC_PORT=8080 SVC_DATA_DIR=/var/lib/svc SVC_RUNNER_BROWSER_PATH=/usr/lib/chromium/chromium-headless-shell HOME=/var/lib/svc
USER svc
WORKDIR /var/lib/svc
VOLUME /var/lib/svc
EXPOSE 8080
# The server: its /healthz where it listens (over its TLS when configured); a runner container (svc runner): that it
# heard from its server within the last minute.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD svc healthcheck
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/svc"]
CMD ["serve"]

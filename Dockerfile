# ringwatch container image: multi-stage, Node.js LTS slim runtime, non-root, no dev dependencies.
# Build: docker build -t ringwatch .   Run: see deploy/kubernetes/ and README.md.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY agent ./agent
COPY collectors ./collectors
# `npm ci` compiles through the prepare script; then drop the dev dependencies.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

FROM node:${NODE_VERSION}-bookworm-slim
# iproute2: `ip -j -d link show` (mtu collector); infiniband-diags: ibstat/perfquery for
# --collector.infiniband.source=tools; systemd: journalctl, with which the kmsg collector reads the
# host's journal (deploy/kubernetes/daemonset.yaml); nothing of systemd runs in the container. nvidia-smi comes from the host through the NVIDIA
# container toolkit (NVIDIA_DRIVER_CAPABILITIES=utility).
RUN apt-get update \
 && apt-get install -y --no-install-recommends iproute2 infiniband-diags systemd \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/ringwatch
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# A 2 MB young generation instead of V8's 16 MB: about 7 MB less resident memory under load and
# 15-20 MB less at the peak, for about 8 % more CPU per scrape (docs/performance.md, RSS). Override with -e NODE_OPTIONS=...
# UV_THREADPOOL_SIZE=8: libuv's file-system threads, so that a log mount that stops answering holds
# at most 3 of them (docs/security.md).
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=2 \
    UV_THREADPOOL_SIZE=8 \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=utility
# /var/lib/ringwatch: the kmsg collector's read position (--collector.kmsg.state-file's default),
# the one file ringwatch writes; owned by the `node` user, as systemd's StateDirectory= makes it for
# the unit. A named volume mounted there (docker run -v ringwatch-state:/var/lib/ringwatch) starts
# as a copy of it, ownership included, and keeps the position across containers.
RUN install -d -o node -g node -m 0700 /var/lib/ringwatch
# The `node` user (uid 1000) of the official image; no root needed for the default collectors.
USER node
EXPOSE 9742
ENTRYPOINT ["node", "/opt/ringwatch/dist/agent/main.js"]

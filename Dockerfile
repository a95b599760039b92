# tensorfn's container image (docs/guides/kubernetes.md#the-container-image):
#   docker build -t tensorfn .
#   docker run -p 8000:8000 -p 8001:8001 -p 8002:8002 -v "$PWD/functions:/models:ro" tensorfn
# The CUDA variant: onnxruntime-node's CUDA libraries, on a CUDA runtime image:
#   docker build --build-arg ORT_INSTALL=cuda12 \
#     --build-arg RUNTIME_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04 -t tensorfn:cuda .
# test/e2e/container-image.test.ts runs the install step, the entry point, the command and the
# health check below as a non-root user (there is no container engine where the tests run).
ARG NODE_IMAGE=node:20-bookworm
ARG RUNTIME_IMAGE=node:20-bookworm-slim

# 1. The package, as npm would publish it (prepack builds dist/).
FROM ${NODE_IMAGE} AS pack
WORKDIR /src
COPY . .
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund \
 && npm pack --pack-destination /pack && mv /pack/tensorfn-*.tgz /pack/tensorfn.tgz

# 2. Production dependencies only, in /app (this image's toolchain builds the native addon).
FROM ${NODE_IMAGE} AS install
ARG ORT_INSTALL=skip
COPY --from=pack /pack/tensorfn.tgz /tmp/tensorfn.tgz
COPY deploy/container/install.sh /tmp/install.sh
RUN ONNXRUNTIME_NODE_INSTALL=${ORT_INSTALL} sh /tmp/install.sh /tmp/tensorfn.tgz /app && npm cache clean --force

# 3. What runs: Node and /app (owned by root, read-only to the server), as a user without a shell.
FROM ${RUNTIME_IMAGE}
COPY --from=install /usr/local/bin/node /usr/local/bin/node
COPY --from=install /app /app
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin tensorfn
ENV NODE_ENV=production
USER 10001:10001
WORKDIR /app
# The function repository: mount it read-only (Kubernetes: a volume, or KServe's /mnt/models).
VOLUME /models
# HTTP (KServe v2, /v1/functions), gRPC (KServe v2), Prometheus metrics.
EXPOSE 8000 8001 8002
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8000/v2/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/node_modules/tensorfn/adapters/node/bin.mjs"]
CMD ["serve", "--repo", "/models", "--host", "0.0.0.0", "--port", "8000", "--grpc-port", "8001", "--metrics-port", "8002"]

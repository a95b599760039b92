#!/bin/sh
# The image's install step (Dockerfile), which test/e2e/container-image.test.ts runs as well:
# tensorfn from its packed tarball into an app folder, production dependencies only, and its CLI
# compiled once ahead (the server later runs as a user who cannot write the app folder).
#   sh install.sh <tensorfn.tgz> <app dir>
# ONNXRUNTIME_NODE_INSTALL: onnxruntime-node's download of CUDA libraries; `skip` unless set
# (the CUDA variant sets cuda12).
set -eu
tarball=$1
app=$2
mkdir -p "$app"
cd "$app"
printf '{ "name": "tensorfn-server", "private": true }\n' > package.json
ONNXRUNTIME_NODE_INSTALL="${ONNXRUNTIME_NODE_INSTALL:-skip}" npm install --omit=dev --no-audit --no-fund --no-update-notifier "$tarball"
# --help answers before anything is compiled: compile explicitly.
node node_modules/tensorfn/adapters/node/compiled-sources.mjs

#!/usr/bin/env bash
# Triton's Python client examples against a running tensorfn, by hand (not in CI: tritonclient is not
# on this machine's package mirror). See docs/notes/2026-12-triton-client-examples.md.
#   bash test/manual/triton-client-examples/run.sh <client checkout> <common checkout> [http-port grpc-port]
# <client checkout>: triton-inference-server/client; <common checkout>: triton-inference-server/common.
# Start the server first, e.g.: node adapters/node/bin.mjs serve --repo functions --port 18000 \
#   --grpc-port 18001 --model-control-mode explicit --load-model simple --load-model simple_string \
#   --load-model simple_identity --load-model resnet
set -euo pipefail
client=$(realpath "$1"); common=$(realpath "$2"); http=${3:-18000}; grpc=${4:-18001}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q grpcio grpcio-tools protobuf numpy packaging pillow aiohttp 2>/dev/null
mkdir "$work/gen"
cp "$common"/protobuf/{grpc_service,model_config,health}.proto "$work/gen/"
(cd "$work/gen" && "$work/venv/bin/python" -m grpc_tools.protoc -I. --python_out=. --grpc_python_out=. grpc_service.proto model_config.proto health.proto)
cp -r "$client/src/python/library" "$work/library"
for m in service_pb2:grpc_service_pb2 service_pb2_grpc:grpc_service_pb2_grpc model_config_pb2:model_config_pb2 health_pb2:health_pb2; do
  echo "from ${m#*:} import *  # noqa" > "$work/library/tritonclient/grpc/${m%%:*}.py"
done
export PYTHONPATH="$work/library:$work/gen:$here/shim"
examples="$client/src/python/examples"
"$work/venv/bin/python" -c "
from PIL import Image; import numpy as np
Image.fromarray((np.random.RandomState(0).rand(256, 256, 3) * 255).astype('uint8')).save('$work/image.png')"
run() { echo "=== $*"; timeout 120 "$work/venv/bin/python" "$@" 2>&1 | tail -2; }
for ex in simple_grpc_infer_client simple_grpc_string_infer_client simple_grpc_async_infer_client simple_grpc_aio_infer_client \
  simple_grpc_custom_args_client simple_grpc_keepalive_client simple_grpc_shm_client simple_grpc_shm_string_client \
  grpc_explicit_int_content_client grpc_explicit_byte_content_client; do run "$examples/$ex.py" -u "localhost:$grpc"; done
run "$examples/grpc_image_client.py" -u "localhost:$grpc" -m resnet -s INCEPTION -c 3 "$work/image.png"
for ex in simple_http_infer_client simple_http_string_infer_client simple_http_async_infer_client simple_http_aio_infer_client \
  simple_http_shm_client simple_http_shm_string_client reuse_infer_objects_client; do run "$examples/$ex.py" -u "localhost:$http"; done
run "$examples/image_client.py" -u "localhost:$http" -m resnet -s INCEPTION -c 2 "$work/image.png"
# These check Triton's own name: the same programs with "tensorfn" in its place.
sed 's/metadata.name == "triton"/metadata.name == "tensorfn"/' "$examples/simple_grpc_health_metadata.py" > "$work/grpc_health.py"
sed 's/metadata\["name"\] == "triton"/metadata["name"] == "tensorfn"/' "$examples/simple_http_health_metadata.py" > "$work/http_health.py"
run "$work/grpc_health.py" -u "localhost:$grpc"
run "$work/http_health.py" -u "localhost:$http"
rm -rf "$work"

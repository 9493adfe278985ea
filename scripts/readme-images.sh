#!/usr/bin/env bash
# Copies the browser tests' screenshots that the README shows (test-artifacts/, written by
# `make test`) to docs/img/. Run after the browser tests when the page's look changes.
set -euo pipefail
cd "$(dirname "$0")/.."
for name in lobby board; do
  test -f "test-artifacts/$name.png" || { echo "test-artifacts/$name.png missing: run the browser tests first" >&2; exit 1; }
  cp "test-artifacts/$name.png" "docs/img/$name.png"
done
echo "docs/img: lobby.png board.png updated"

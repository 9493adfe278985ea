#!/usr/bin/env bash
# Installs what the tests need from Debian's packages when it is missing: redis-server (the
# end-to-end tests start private ones), prometheus (promtool, and a real Prometheus), Chromium and
# fonts for Hebrew and emoji (the browser tests; Playwright drives Debian's Chromium, it never
# downloads a browser). Never prompts (CI runs with no standard input).
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# promtool (Debian's prometheus package, which also brings prometheus): tests/deploy/test_alerts.py
# checks and unit-tests deploy/prometheus/alerts.yml with it
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
fc-list :lang=he 2>/dev/null | grep -q . || missing+=(fonts-dejavu-core)
fc-list 2>/dev/null | grep -qi "emoji" || missing+=(fonts-noto-color-emoji)
# kubectl (1.27 or newer: its built-in kustomize must know components) renders deploy/k8s offline in
# tests/deploy; Debian's kubernetes-client is far older, so it is not installed from here.
command -v kubectl >/dev/null 2>&1 || echo "warning: kubectl not found: tests/deploy will fail (install kubectl >= 1.27)" >&2
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing test dependencies: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "error: ${missing[*]} missing and not root: install them with apt-get" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null

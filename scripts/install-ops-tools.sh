#!/usr/bin/env bash
# Installs the operations tools the ops tests run for real: promtool + prometheus (Debian `prometheus`),
# amtool + alertmanager (Debian `prometheus-alertmanager`) and docker-compose v1 (Debian `docker-compose`, only used as
# a parser: `docker-compose config`). Idempotent: does nothing when every tool is already on PATH.
# Debian 12 (bookworm) versions: prometheus 2.42, alertmanager 0.25, docker-compose 1.29.
set -euo pipefail

# Debian names the alertmanager binary `prometheus-alertmanager`.
tools=(prometheus promtool prometheus-alertmanager amtool docker-compose)
missing=()
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "ops tools already installed: ${tools[*]}"
  exit 0
fi
echo "missing: ${missing[*]}"

if ! command -v apt-get >/dev/null 2>&1; then
  echo "apt-get not found: install ${missing[*]} with your package manager" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# --no-install-recommends: skips node-exporter and friends; policy-rc.d-less containers simply fail to start the
# packaged daemons, which we do not want running anyway (the tests start their own on loopback).
$sudo apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager docker-compose

# The Debian packages start system daemons where an init system exists; stop them so they hold no ports.
for unit in prometheus prometheus-alertmanager; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$unit" 2>/dev/null; then
    $sudo systemctl stop "$unit" || true
  fi
done

for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || { echo "still missing after install: $tool" >&2; exit 1; }
done
echo "installed: $(promtool --version 2>&1 | head -1); $(amtool --version 2>&1 | head -1); $(docker-compose version --short 2>&1)"

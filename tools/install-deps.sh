#!/usr/bin/env bash
# Installs the Debian packages relgraph builds with, and nothing when all are present.
# Idempotent: safe to run on every build; needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(g++ cmake make pkg-config libboost-dev libboost-container-dev libxxhash-dev liblz4-dev
          zlib1g-dev doctest-dev
          libssl-dev openssl       # TLS (net/tls), and the openssl tool docs/security.md uses
          libnats-dev nats-server  # the JetStream bridge, and the server its tests start
          dpkg-dev file systemd    # cpack -G DEB, and systemd-analyze for the unit's test
          redis-server libhiredis-dev postgresql libpq-dev  # relgraph-bench's comparison targets
          gnuplot-nox              # tools/compare.sh's charts
          golang-go                # the Go client (net/clients/go) and its tests
          python3-pytest python3-setuptools python3-wheel python3-venv  # net/clients/python
          python3-redis            # redis-py, beside which the Python client is measured
          # the Java client (net/clients/java): Java 17, Maven and JUnit 5, the Maven plugins
          # its pom.xml names, built offline from Debian's repository with maven-debian-helper's
          # /etc/maven/settings-debian.xml
          openjdk-17-jdk-headless maven maven-debian-helper junit5 libmaven-clean-plugin-java
          libmaven-resources-plugin-java libmaven-compiler-plugin-java libsurefire-java
          libmaven-jar-plugin-java
          prometheus curl)         # promtool and a real Prometheus for the /metrics tests
if [ "${RELGRAPH_WITH_CLANG:-0}" = 1 ]; then
  packages+=(clang libclang-rt-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# The S3-compatible server the tiered-storage tests and benchmarks run against:
# S3Proxy (github.com/gaul/s3proxy, Apache-2.0), a real S3 API server in Java
# that keeps buckets as directories. Fetched from Maven Central as its
# self-contained jar into .object-store/ (git-ignored); a test dependency only,
# nothing here is part of Samsa. The version is pinned; a finished fetch is kept
# and the next run returns at once.
#
#   scripts/object-store.sh [install]        fetch what is missing, print the jar
#   scripts/object-store.sh start DIR PORT   serve DIR on 127.0.0.1:PORT in the
#                                            foreground (access key "samsa", secret
#                                            "samsa-secret"; tests start their own)
#
# Why S3Proxy: it is one 42 MB download (about 20 s) and starts in seconds.
# SeaweedFS built from its Go module compiled for more than 20 minutes on this
# 2-core machine, far past what a clean CI clone can spend; MinIO's server is
# AGPL.
set -euo pipefail
cd "$(dirname "$0")/.."

S3PROXY_VERSION=${S3PROXY_VERSION:-2.7.0}
DEST=${SAMSA_OBJECT_STORE:-$PWD/.object-store}

die() { echo "object-store: $*" >&2; exit 1; }

install() {
    local out="$DEST/s3proxy-$S3PROXY_VERSION"
    local jar="$out/s3proxy-$S3PROXY_VERSION-jar-with-dependencies.jar"
    if [ ! -f "$out/.complete" ]; then
        command -v java >/dev/null 2>&1 || die "java not found: install a JDK 17+ (Debian: apt-get install openjdk-17-jdk-headless)"
        command -v mvn >/dev/null 2>&1 || die "mvn not found: install Maven (Debian: apt-get install maven)"
        echo "object-store: fetching S3Proxy $S3PROXY_VERSION with Maven into $out" >&2
        local work="$out.partial"
        rm -rf "$work"
        mkdir -p "$work"
        if ! mvn -B -q dependency:copy \
            -Dartifact="org.gaul:s3proxy:$S3PROXY_VERSION:jar:jar-with-dependencies" \
            -DoutputDirectory="$work" >"$work/maven.log" 2>&1; then
            tail -20 "$work/maven.log" >&2
            die "Maven could not fetch S3Proxy $S3PROXY_VERSION (log: $work/maven.log)"
        fi
        rm -rf "$out"
        mv "$work" "$out"
        touch "$out/.complete"
    fi
    cat >"$DEST/object-store.env" <<ENV
S3PROXY_VERSION=$S3PROXY_VERSION
S3PROXY_JAR=$jar
ENV
    echo "$jar"
}

start() {
    local dir=${1:?usage: scripts/object-store.sh start DIR PORT}
    local port=${2:?usage: scripts/object-store.sh start DIR PORT}
    local jar
    jar=$(install)
    mkdir -p "$dir"
    local conf="$dir/.s3proxy.properties"
    cat >"$conf" <<PROPS
s3proxy.endpoint=http://127.0.0.1:$port
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=samsa
s3proxy.credential=samsa-secret
jclouds.provider=filesystem-nio2
jclouds.identity=samsa
jclouds.credential=samsa-secret
jclouds.filesystem.basedir=$dir
PROPS
    echo "object-store: S3 API on http://127.0.0.1:$port serving $dir" >&2
    LOG_LEVEL=${LOG_LEVEL:-warn} exec java -Xmx512m -jar "$jar" --properties "$conf"
}

case "${1:-install}" in
    install) install ;;
    start) shift; start "$@" ;;
    *) die "unknown command ${1}: use install or start DIR PORT" ;;
esac

#!/usr/bin/env bash
# Fetch Apache Kafka (broker, tools, Java clients, Kafka Streams) and Spark's
# Kafka connector with Maven into .kafka-reference/ (git-ignored), for the tests
# and benchmarks that run Kafka itself beside Samsa. Test dependencies only:
# nothing here is part of Samsa. Versions are pinned; a finished fetch is kept
# and the next run returns at once.
#
#   scripts/kafka-reference.sh          fetch what is missing, print the folders
#   scripts/kafka-reference.sh 4.1.1    the previous reference, kept for one release
#   KAFKA_VERSION=4.1.1 SPARK_VERSION=4.2.0 scripts/kafka-reference.sh
#
# Each Kafka version gets its own folder and its own reference-<version>.env, so
# fetching one never changes which jars a test run on another version uses.
# Tests pick the version with SAMSA_KAFKA_VERSION (default: the pinned one,
# samsa.testing.kafka_reference.DEFAULT_KAFKA_VERSION).
#
# Spark's connector must match the pyspark the tests run, so SPARK_VERSION
# defaults to the version of pyspark installed in .venv (or PYTHON), falling
# back to the pinned one below when pyspark is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."

# Keep in step with samsa.testing.kafka_reference.DEFAULT_KAFKA_VERSION.
PINNED_KAFKA_VERSION=4.4.0
KAFKA_VERSION=${1:-${KAFKA_VERSION:-${SAMSA_KAFKA_VERSION:-$PINNED_KAFKA_VERSION}}}
PINNED_SPARK_VERSION=4.2.0
DEST=${SAMSA_KAFKA_REFERENCE:-$PWD/.kafka-reference}

die() { echo "kafka-reference: $*" >&2; exit 1; }

command -v java >/dev/null 2>&1 || die "java not found: install a JDK 17+ (Debian: apt-get install openjdk-17-jdk-headless)"
command -v mvn >/dev/null 2>&1 || die "mvn not found: install Maven (Debian: apt-get install maven)"
java_major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
[ "${java_major:-0}" -ge 17 ] || die "Kafka ${KAFKA_VERSION} needs Java 17 or newer; java -version says ${java_major:-nothing}"

if [ -z "${SPARK_VERSION:-}" ]; then
    PY=${PYTHON:-.venv/bin/python}
    SPARK_VERSION=$("$PY" -c 'import pyspark; print(pyspark.__version__)' 2>/dev/null || true)
    SPARK_VERSION=${SPARK_VERSION:-$PINNED_SPARK_VERSION}
fi

# fetch NAME POM VERSION_TOKEN VERSION OUT [maven options]: resolve one pom's
# dependencies into OUT, atomically (a half-done copy is never taken as done).
fetch() {
    local name=$1 pom=$2 token=$3 version=$4 out=$5
    shift 5
    if [ -f "$out/.complete" ]; then
        return 0
    fi
    echo "kafka-reference: fetching $name $version with Maven into $out" >&2
    local work="$out.partial"
    rm -rf "$work"
    mkdir -p "$work/libs"
    sed "s/$token/$version/" "$pom" >"$work/pom.xml"
    if ! mvn -B -q -f "$work/pom.xml" dependency:copy-dependencies \
        -DoutputDirectory="$work/libs" -DincludeScope=runtime "$@" >"$work/maven.log" 2>&1; then
        tail -20 "$work/maven.log" >&2
        die "Maven could not fetch $name $version (log: $work/maven.log)"
    fi
    rm -rf "$out"
    mv "$work" "$out"
    touch "$out/.complete"
}

# The real path: .kafka-reference may be a symlink shared by several checkouts,
# and the paths written below must outlive the checkout that wrote them.
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd -P)
KAFKA_HOME="$DEST/kafka-$KAFKA_VERSION"
SPARK_KAFKA="$DEST/spark-kafka-$SPARK_VERSION"
fetch "Apache Kafka" scripts/kafka-reference/kafka-pom.xml KAFKA_VERSION "$KAFKA_VERSION" "$KAFKA_HOME"
# Only the connector and what pyspark does not already ship: adding Spark's
# own transitive jars a second time would put two versions on its classpath.
fetch "Spark's Kafka connector" scripts/kafka-reference/spark-kafka-pom.xml SPARK_VERSION "$SPARK_VERSION" "$SPARK_KAFKA" \
    -DincludeArtifactIds=spark-sql-kafka-0-10_2.13,spark-token-provider-kafka-0-10_2.13,kafka-clients,commons-pool2

if [ ! -f "$KAFKA_HOME/log4j2.yaml" ]; then
    cat >"$KAFKA_HOME/log4j2.yaml" <<'YAML'
# Kafka's broker and tools log to stderr at WARN unless a test asks for more.
Configuration:
  Appenders:
    Console:
      name: STDERR
      target: SYSTEM_ERR
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: "${sys:samsa.kafka.log.level:-WARN}"
      AppenderRef:
        - ref: STDERR
YAML
fi

# A small file the Python helpers read so they never guess versions or paths;
# one per Kafka version, so the versions live side by side.
cat >"$DEST/reference-$KAFKA_VERSION.env" <<ENV
KAFKA_VERSION=$KAFKA_VERSION
KAFKA_LIBS=$KAFKA_HOME/libs
KAFKA_LOG4J=$KAFKA_HOME/log4j2.yaml
SPARK_VERSION=$SPARK_VERSION
SPARK_KAFKA_JARS=$SPARK_KAFKA/libs
ENV
echo "kafka-reference: Kafka $KAFKA_VERSION in $KAFKA_HOME/libs; Spark $SPARK_VERSION connector in $SPARK_KAFKA/libs" >&2

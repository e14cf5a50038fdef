#!/usr/bin/env bash
# Prepares the Java reference oracle (tests/java/PaimonDriver.java on Paimon 1.4.2) and prints the classpath
# to start it with: `java -cp "$(bash scripts/java-paimon.sh)" PaimonDriver`. The first run resolves the
# jars of tests/java/pom.xml through Maven (about 110 MB into ~/.m2, from Maven Central) and writes the
# classpath into the cache (~/.cache/strata/java-paimon-1.4.2, or STRATA_JAVA_CACHE); the driver is compiled
# there once per version of its source. Later runs only print. Needs a JDK (17 or later) and Maven.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${STRATA_JAVA_CACHE:-$HOME/.cache/strata/java-paimon-1.4.2}"
mkdir -p "$cache"
# Test threads that start drivers at once wait here for the one that prepares.
exec 9>"$cache/.lock"
flock 9
if [ ! -s "$cache/classpath.txt" ]; then
  echo "strata tests: resolving Paimon 1.4.2's jars with Maven (once; about 110 MB)" >&2
  mvn -q -B -f tests/java/pom.xml dependency:build-classpath -Dmdep.outputFile="$cache/classpath.tmp" >&2
  mv "$cache/classpath.tmp" "$cache/classpath.txt"
fi
jars="$(cat "$cache/classpath.txt")"
hash="$(sha256sum tests/java/PaimonDriver.java | cut -c1-16)"
classes="$cache/classes-$hash"
if [ ! -f "$classes/PaimonDriver.class" ]; then
  rm -rf "$classes.tmp"
  mkdir -p "$classes.tmp"
  javac -nowarn -d "$classes.tmp" -cp "$jars" tests/java/PaimonDriver.java >&2
  mv "$classes.tmp" "$classes"
fi
echo "$classes:$jars"

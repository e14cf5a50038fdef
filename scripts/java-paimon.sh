#!/usr/bin/env bash
# Prepares a Java oracle and prints the classpath to start it with:
#   `java -cp "$(bash scripts/java-paimon.sh)" PaimonDriver`  the reference, tests/java/PaimonDriver.java on
#                                                              Paimon 1.4.2 (about 110 MB of jars);
#   `java -cp "$(bash scripts/java-paimon.sh paimon-1.3.1)" PaimonDriver`  the same driver on Paimon 1.3.1;
#   `java -cp "$(bash scripts/java-paimon.sh spark)" SparkDriver`  Spark SQL 3.5.2 with paimon-spark-3.5 0.9.0,
#                                                              tests/spark/SparkDriver.java (about 320 MB);
#   `java -cp "$(bash scripts/java-paimon.sh bench)" PaimonBench ...`  Java's side of scripts/bench-java.sh,
#                                                              benches/java/PaimonBench.java on Paimon 1.4.2.
# The first run resolves the jars of the driver's pom.xml through Maven (into ~/.m2, from Maven Central) and
# writes the classpath into the cache (~/.cache/strata/<oracle>, or STRATA_JAVA_CACHE with the oracle's name
# appended); the driver is compiled there once per version of its source. Later runs only print. Needs a JDK
# (17 or later) and Maven.
set -euo pipefail
cd "$(dirname "$0")/.."
paimon_jars="Paimon 1.4.2's jars (about 110 MB)"
version=()
case "${1:-paimon}" in
  paimon) pom=tests/java/pom.xml; src=tests/java/PaimonDriver.java; name=java-paimon-1.4.2; what=$paimon_jars ;;
  paimon-1.3.1) pom=tests/java/pom.xml; src=tests/java/PaimonDriver.java; name=java-paimon-1.3.1
                what="Paimon 1.3.1's jars (about 110 MB)"; version=(-Dpaimon.version=1.3.1) ;;
  bench) pom=tests/java/pom.xml; src=benches/java/PaimonBench.java; name=java-paimon-1.4.2; what=$paimon_jars ;;
  spark) pom=tests/spark/pom.xml; src=tests/spark/SparkDriver.java; name=spark-3.5.2-paimon-0.9.0
         what="Spark 3.5.2's and paimon-spark-3.5 0.9.0's jars (about 320 MB)" ;;
  *) echo "usage: $0 [paimon|paimon-1.3.1|bench|spark]" >&2; exit 2 ;;
esac
main="$(basename "$src" .java)"
cache="${STRATA_JAVA_CACHE:-$HOME/.cache/strata}/$name"
mkdir -p "$cache"
# Test threads that start drivers at once wait here for the one that prepares.
exec 9>"$cache/.lock"
flock 9
if [ ! -s "$cache/classpath.txt" ]; then
  echo "strata tests: resolving $what with Maven (once)" >&2
  # One Maven at a time into ~/.m2, whichever oracle it resolves (Maven's own lock holds within one process).
  exec 8>"$(dirname "$cache")/.maven.lock"
  flock 8
  mvn -q -B -f "$pom" ${version[@]+"${version[@]}"} dependency:build-classpath -Dmdep.outputFile="$cache/classpath.tmp" >&2
  exec 8>&-
  mv "$cache/classpath.tmp" "$cache/classpath.txt"
fi
jars="$(cat "$cache/classpath.txt")"
hash="$(sha256sum "$src" | cut -c1-16)"
classes="$cache/classes-$main-$hash"
if [ ! -f "$classes/$main.class" ]; then
  rm -rf "$classes.tmp"
  mkdir -p "$classes.tmp"
  javac -nowarn -d "$classes.tmp" -cp "$jars" "$src" >&2
  mv "$classes.tmp" "$classes"
fi
echo "$classes:$jars"

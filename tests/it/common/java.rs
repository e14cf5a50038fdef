//! Java Paimon 1.4.2, the reference implementation, as an oracle: tests/java/PaimonDriver.java in one
//! long-lived JVM per [`JavaPaimon`], taking JSON-line commands (create, write, compact, read, snapshot,
//! close_writer) on stdin. `scripts/java-paimon.sh` fetches the jars through Maven once and compiles the
//! driver; a test that needs Java fails when that cannot be done rather than passing unchecked.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use serde_json::{json, Value};

/// Which Java oracle a driver runs.
#[derive(Clone, Copy)]
pub(crate) enum Oracle {
    /// tests/java/PaimonDriver.java on Paimon 1.4.2.
    Paimon,
    /// The same driver on Paimon 1.3.1, the release before.
    Paimon131,
    /// tests/spark/SparkDriver.java: Spark SQL 3.5.2 with paimon-spark-3.5 0.9.0 (common::spark).
    Spark,
}

impl Oracle {
    fn main_class(self) -> &'static str {
        match self {
            Oracle::Paimon | Oracle::Paimon131 => "PaimonDriver",
            Oracle::Spark => "SparkDriver",
        }
    }

    /// The oracle's classpath (scripts/java-paimon.sh, run once per oracle and test process).
    fn classpath(self) -> String {
        static PAIMON: OnceLock<String> = OnceLock::new();
        static PAIMON_131: OnceLock<String> = OnceLock::new();
        static SPARK: OnceLock<String> = OnceLock::new();
        let (cell, arg) = match self {
            Oracle::Paimon => (&PAIMON, "paimon"),
            Oracle::Paimon131 => (&PAIMON_131, "paimon-1.3.1"),
            Oracle::Spark => (&SPARK, "spark"),
        };
        cell.get_or_init(|| {
            super::prepared_by(
                &["scripts/java-paimon.sh", arg],
                "could not prepare the Java oracle (needs a JDK, Maven and Maven Central once; the script's \
                 output is above)",
            )
        })
        .clone()
    }

    /// JVM options besides the classpath.
    fn jvm_options(self) -> Vec<&'static str> {
        match self {
            // A test's tables are small: a quick start matters more than peak speed.
            Oracle::Paimon | Oracle::Paimon131 => vec!["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss4m"],
            // What Spark's launcher adds on Java 17 (its JavaModuleOptions); timestamps read in UTC.
            Oracle::Spark => {
                let mut options = vec![
                    "-Xmx1g",
                    "-XX:+UseSerialGC",
                    "-Xss4m",
                    "-Duser.timezone=UTC",
                    "-Djdk.reflect.useDirectMethodHandle=false",
                    "-XX:+IgnoreUnrecognizedVMOptions",
                ];
                options.extend(SPARK_OPENS);
                options
            }
        }
    }
}

/// The packages Spark 3.5 reaches into by reflection, opened as its launcher does.
const SPARK_OPENS: [&str; 14] = [
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
    "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
    "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
    "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
];

/// One JVM running the driver; dropped, it is told to stop (its named writers close) and waited for.
pub(crate) struct JavaPaimon {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    log: PathBuf,
}

impl JavaPaimon {
    /// Starts a driver; its stderr (Paimon's log, stack traces of failed commands) goes to a file that a
    /// failed call quotes.
    pub(crate) fn start() -> JavaPaimon {
        JavaPaimon::start_oracle(Oracle::Paimon)
    }

    /// Starts the driver of `oracle`.
    pub(crate) fn start_oracle(oracle: Oracle) -> JavaPaimon {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let log = std::env::temp_dir().join(format!(
            "strata-java-paimon-{}-{}.log",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut child = Command::new("java")
            .args(oracle.jvm_options())
            .arg("-cp")
            .arg(oracle.classpath())
            .arg(oracle.main_class())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(&log).unwrap())
            .spawn()
            .expect("start java (a JDK 17 or later on PATH)");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        JavaPaimon { child, stdin, stdout, log }
    }

    /// Sends one command and returns the driver's answer, `Err` with its error when it failed.
    pub(crate) fn try_call(&mut self, req: &Value) -> Result<Value, String> {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{req}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "the Java driver exited on {req}; its log:\n{}", self.log_tail());
        let answer: Value = serde_json::from_str(&line).unwrap();
        if answer["ok"] == json!(true) {
            Ok(answer)
        } else {
            Err(answer["error"].as_str().unwrap_or("").to_string())
        }
    }

    /// [`try_call`](Self::try_call) that fails the test on an error.
    pub(crate) fn call(&mut self, req: &Value) -> Value {
        match self.try_call(req) {
            Ok(v) => v,
            Err(e) => panic!("Java Paimon failed {}: {e}\n--- its log ---\n{}", req["op"], self.log_tail()),
        }
    }

    /// Every row Java reads from the table at `path` (latest snapshot; `options` choose another read).
    pub(crate) fn read(&mut self, path: &str, options: Value) -> Vec<Value> {
        let v = self.call(&json!({"op": "read", "path": path, "options": options}));
        v["rows"].as_array().unwrap().clone()
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().filter(|l| !l.contains(" INFO ")).collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for JavaPaimon {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

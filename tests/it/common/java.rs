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

/// The driver's classpath (scripts/java-paimon.sh, run once per test process).
fn classpath() -> String {
    static CP: OnceLock<String> = OnceLock::new();
    CP.get_or_init(|| {
        super::prepared_by(
            "scripts/java-paimon.sh",
            "could not prepare the Java Paimon 1.4.2 driver (needs a JDK, Maven and Maven Central once; the \
             script's output is above)",
        )
    })
    .clone()
}

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
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let log = std::env::temp_dir().join(format!(
            "strata-java-paimon-{}-{}.log",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut child = Command::new("java")
            // A test's tables are small: a quick start matters more than peak speed.
            .args(["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss4m", "-cp"])
            .arg(classpath())
            .arg("PaimonDriver")
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

//! The loopback S3 server the object-storage tests run against (scripts/s3_server.py: moto's S3 backend,
//! with atomic conditional creates, injected latency and injected faults). `.ci/run` starts one and
//! exports `STRATA_S3_ENDPOINT`; without it, the first test that needs a server starts its own from the
//! test virtualenv, which exits with the test binary.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{pypaimon_python, root};

/// `http://127.0.0.1:PORT` of the S3 server.
pub(crate) fn endpoint() -> String {
    static ENDPOINT: OnceLock<String> = OnceLock::new();
    ENDPOINT
        .get_or_init(|| {
            if let Ok(e) = std::env::var("STRATA_S3_ENDPOINT") {
                return e.trim_end_matches('/').to_string();
            }
            let dir = tempfile::tempdir().unwrap().keep();
            let port_file = dir.join("port");
            let child = std::process::Command::new(pypaimon_python())
                .arg(root().join("scripts/s3_server.py"))
                .arg(&port_file)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::inherit())
                .spawn()
                .expect("start scripts/s3_server.py");
            // The server exits with this process (it watches its parent); the handle is not needed.
            std::mem::forget(child);
            let start = Instant::now();
            loop {
                if let Ok(p) = std::fs::read_to_string(&port_file) {
                    return format!("http://127.0.0.1:{}", p.trim());
                }
                assert!(start.elapsed() < Duration::from_secs(60), "the S3 server did not start in 60 s");
                std::thread::sleep(Duration::from_millis(50));
            }
        })
        .clone()
}

/// Sends one unsigned HTTP request to the server; the status code and body.
fn request(method: &str, path: &str, body: &str) -> (u16, String) {
    let endpoint = endpoint();
    let host = endpoint.trim_start_matches("http://");
    let mut s = TcpStream::connect(host).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = out.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// The multipart uploads started in `bucket` and neither completed nor aborted (ListMultipartUploads).
pub(crate) fn open_uploads(bucket: &str) -> usize {
    let (status, body) = request("GET", &format!("/{bucket}?uploads"), "");
    assert_eq!(status, 200, "list uploads of {bucket}: {body}");
    body.matches("<Upload>").count()
}

/// A fresh, empty bucket of its own for one test.
pub(crate) fn bucket() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!("t{}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed), rand_suffix());
    let (status, body) = request("PUT", &format!("/{name}"), "");
    assert_eq!(status, 200, "create bucket {name}: {body}");
    name
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64
}

/// Store options for the server, by Paimon's names.
pub(crate) fn options() -> BTreeMap<String, String> {
    [
        ("s3.endpoint", endpoint()),
        ("s3.access-key", "strata".to_string()),
        ("s3.secret-key", "strata".to_string()),
        ("s3.region", "us-east-1".to_string()),
        ("s3.path-style-access", "true".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The environment the `strata` binary reads the server from (object_store's `AWS_*` variables).
pub(crate) fn env() -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT", endpoint()),
        ("AWS_ALLOW_HTTP", "true".to_string()),
        ("AWS_ACCESS_KEY_ID", "strata".to_string()),
        ("AWS_SECRET_ACCESS_KEY", "strata".to_string()),
        ("AWS_REGION", "us-east-1".to_string()),
    ]
}

/// Delays every later S3 request by `millis` (0 to stop).
pub(crate) fn set_latency(millis: u64) {
    let (status, body) = request("POST", "/_strata/latency", &millis.to_string());
    assert_eq!(status, 200, "{body}");
}

/// Makes the next `times` PUTs or POSTs whose path contains `key` fail with `status`, after the server
/// applied them (`after`) or before.
pub(crate) fn inject_fault(key: &str, status: u16, after: bool, times: u32) {
    inject_fault_on(None, key, status, after, times);
}

/// [`inject_fault`] for requests of one `method` only, where given (`PUT`: the parts of a multipart upload).
pub(crate) fn inject_fault_on(method: Option<&str>, key: &str, status: u16, after: bool, times: u32) {
    let method = method.map_or("null".to_string(), |m| format!("\"{m}\""));
    let spec =
        format!(r#"{{"key": "{key}", "status": {status}, "after": {after}, "times": {times}, "method": {method}}}"#);
    let (code, body) = request("POST", "/_strata/fault", &spec);
    assert_eq!(code, 200, "{body}");
}

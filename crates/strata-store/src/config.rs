//! Building an object store for a root URI from options by Paimon's names (`s3.endpoint`,
//! `s3.access-key`, `s3.path-style-access`, ...; Hadoop's `fs.s3a.*` and `fs.oss.*` too) on top of the
//! usual environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`), as Paimon's S3, OSS, GCS and Azure file IOs read
//! them. Options in object_store's own names (`aws_endpoint`, `google_service_account`, ...) pass through.

use std::collections::BTreeMap;
use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::http::HttpBuilder;
use object_store::ObjectStore;
use strata_spec::{Error, Result};

/// The kinds of store a URI scheme names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StoreKind {
    /// `s3://`, `s3a://`: Amazon S3 and S3-compatible stores (MinIO, Ceph, R2, ...).
    S3,
    /// `oss://`: Alibaba OSS through its S3-compatible API.
    Oss,
    /// `gs://`: Google Cloud Storage.
    Gcs,
    /// `az://`, `abfs://`, `abfss://`, `adl://`, `azure://`: Azure Blob Storage and ADLS Gen2.
    Azure,
    /// `http://`, `https://`: read-only HTTP.
    Http,
}

impl StoreKind {
    /// The store a scheme names, `None` for schemes Strata cannot reach.
    pub(crate) fn of_scheme(scheme: &str) -> Option<Self> {
        Some(match scheme {
            "s3" | "s3a" => StoreKind::S3,
            "oss" => StoreKind::Oss,
            "gs" => StoreKind::Gcs,
            "az" | "abfs" | "abfss" | "adl" | "azure" => StoreKind::Azure,
            "http" | "https" => StoreKind::Http,
            _ => return None,
        })
    }
}

/// The schemes Strata reaches, for error messages.
pub(crate) const SUPPORTED_SCHEMES: &str = "s3, s3a, oss, gs, az, abfs, abfss, adl, azure, http, https, file";

fn truthy(v: &str) -> bool {
    matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes")
}

/// The object_store key and value of a Paimon or Hadoop S3 option, `None` for options of other stores or
/// ones that do not apply.
fn s3_option(key: &str, value: &str) -> Option<Vec<(String, String)>> {
    let k = key.to_ascii_lowercase();
    let name = k.strip_prefix("fs.s3a.").or_else(|| k.strip_prefix("s3a.")).or_else(|| k.strip_prefix("s3."));
    let Some(name) = name else {
        return k.starts_with("aws_").then(|| vec![(k.clone(), value.to_string())]);
    };
    let one = |key: &str| Some(vec![(key.to_string(), value.to_string())]);
    match name.replace('.', "-").as_str() {
        "endpoint" => {
            let mut out = vec![("aws_endpoint".to_string(), value.to_string())];
            if value.trim().starts_with("http://") {
                out.push(("aws_allow_http".to_string(), "true".to_string()));
            }
            Some(out)
        }
        "access-key" => one("aws_access_key_id"),
        "secret-key" => one("aws_secret_access_key"),
        "session-token" => one("aws_session_token"),
        "region" | "endpoint-region" => one("aws_region"),
        "path-style-access" => {
            Some(vec![("aws_virtual_hosted_style_request".to_string(), (!truthy(value)).to_string())])
        }
        "conditional-put" => one("aws_conditional_put"),
        "allow-http" => one("aws_allow_http"),
        _ => {
            tracing::warn!(option = key, "S3 option not used by Strata");
            None
        }
    }
}

/// Options of an OSS store (`fs.oss.endpoint`, `fs.oss.accessKeyId`, `fs.oss.accessKeySecret`, Paimon's
/// names) as S3 options.
fn oss_options(bucket: &str, options: &BTreeMap<String, String>) -> Result<Vec<(String, String)>> {
    let get = |names: &[&str]| names.iter().find_map(|n| options.get(*n)).cloned();
    let endpoint = get(&["fs.oss.endpoint", "oss.endpoint"])
        .ok_or_else(|| Error::invalid("oss options", "fs.oss.endpoint is required for oss:// locations"))?;
    let host = endpoint.trim_start_matches("https://").trim_start_matches("http://").trim_end_matches('/');
    let region =
        get(&["fs.oss.region", "oss.region"]).unwrap_or_else(|| host.split('.').next().unwrap_or_default().to_string());
    let scheme = if endpoint.starts_with("http://") { "http" } else { "https" };
    let mut out = vec![
        ("aws_bucket".into(), bucket.to_string()),
        // OSS serves buckets as virtual hosts: https://<bucket>.<endpoint>.
        ("aws_endpoint".into(), format!("{scheme}://{bucket}.{host}")),
        ("aws_virtual_hosted_style_request".into(), "true".into()),
        ("aws_region".into(), region),
    ];
    if scheme == "http" {
        out.push(("aws_allow_http".into(), "true".into()));
    }
    if let Some(k) = get(&["fs.oss.accessKeyId", "oss.access-key"]) {
        out.push(("aws_access_key_id".into(), k));
    }
    if let Some(k) = get(&["fs.oss.accessKeySecret", "oss.secret-key"]) {
        out.push(("aws_secret_access_key".into(), k));
    }
    if let Some(k) = get(&["fs.oss.securityToken", "oss.session-token"]) {
        out.push(("aws_session_token".into(), k));
    }
    Ok(out)
}

fn config_error(store: &str, e: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{store} options"), e.to_string())
}

/// A store for `root` (`scheme://authority`) with `options`; whether it makes conditional creates.
pub(crate) fn build_store(
    kind: StoreKind,
    root: &str,
    authority: &str,
    options: &BTreeMap<String, String>,
) -> Result<(Arc<dyn ObjectStore>, bool)> {
    match kind {
        StoreKind::S3 | StoreKind::Oss => {
            let mut b = match kind {
                StoreKind::S3 => AmazonS3Builder::from_env().with_url(root.replacen("s3a://", "s3://", 1)),
                _ => AmazonS3Builder::new(),
            };
            let pairs: Vec<(String, String)> = match kind {
                StoreKind::Oss => oss_options(authority, options)?,
                _ => options.iter().filter_map(|(k, v)| s3_option(k, v)).flatten().collect(),
            };
            let mut conditional = true;
            for (k, v) in pairs {
                if k == "aws_conditional_put" && v.trim() == "disabled" {
                    conditional = false;
                }
                let key = k.parse().map_err(|e| config_error("s3", e))?;
                b = b.with_config(key, v);
            }
            let store = b.build().map_err(|e| config_error("s3", e))?;
            Ok((Arc::new(store), conditional))
        }
        StoreKind::Gcs => {
            let mut b = GoogleCloudStorageBuilder::from_env().with_url(root);
            for (k, v) in options {
                let key = match k.as_str() {
                    "gcs.service-account-key" | "fs.gs.auth.service.account.json.keyfile" => "google_service_account",
                    k if k.starts_with("google_") => k,
                    _ => continue,
                };
                b = b.with_config(key.parse().map_err(|e| config_error("gcs", e))?, v);
            }
            Ok((Arc::new(b.build().map_err(|e| config_error("gcs", e))?), true))
        }
        StoreKind::Azure => {
            let mut b = MicrosoftAzureBuilder::from_env().with_url(root);
            for (k, v) in options {
                let key = match k.as_str() {
                    "azure.account-name" | "fs.azure.account.name" => "azure_storage_account_name",
                    "azure.account-key" | "fs.azure.account.key" => "azure_storage_account_key",
                    k if k.starts_with("azure_") => k,
                    _ => continue,
                };
                b = b.with_config(key.parse().map_err(|e| config_error("azure", e))?, v);
            }
            Ok((Arc::new(b.build().map_err(|e| config_error("azure", e))?), true))
        }
        // Plain HTTP has no conditional create: tables there are read-only.
        StoreKind::Http => {
            Ok((Arc::new(HttpBuilder::new().with_url(root).build().map_err(|e| config_error("http", e))?), false))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn paimon_and_hadoop_s3_names_map_to_object_store_keys() {
        let got: Vec<_> = [
            ("s3.endpoint", "http://127.0.0.1:9000"),
            ("fs.s3a.access.key", "ak"),
            ("s3.secret-key", "sk"),
            ("s3.path.style.access", "true"),
            ("s3.region", "eu-west-3"),
            ("aws_skip_signature", "false"),
            ("gcs.service-account-key", "x"),
        ]
        .into_iter()
        .filter_map(|(k, v)| s3_option(k, v))
        .flatten()
        .collect();
        let want: Vec<(String, String)> = [
            ("aws_endpoint", "http://127.0.0.1:9000"),
            ("aws_allow_http", "true"),
            ("aws_access_key_id", "ak"),
            ("aws_secret_access_key", "sk"),
            ("aws_virtual_hosted_style_request", "false"),
            ("aws_region", "eu-west-3"),
            ("aws_skip_signature", "false"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn oss_is_s3_on_virtual_hosts_of_its_endpoint() {
        let options: BTreeMap<String, String> = [
            ("fs.oss.endpoint", "oss-cn-hangzhou.aliyuncs.com"),
            ("fs.oss.accessKeyId", "id"),
            ("fs.oss.accessKeySecret", "secret"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let got = oss_options("bkt", &options).unwrap();
        assert!(got.contains(&("aws_endpoint".into(), "https://bkt.oss-cn-hangzhou.aliyuncs.com".into())));
        assert!(got.contains(&("aws_region".into(), "oss-cn-hangzhou".into())));
        let err = oss_options("bkt", &BTreeMap::new()).unwrap_err();
        assert!(err.to_string().contains("fs.oss.endpoint"), "{err}");
    }
}

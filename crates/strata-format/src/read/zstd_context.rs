//! zstd with one compression and one decompression context per thread.
//!
//! Creating a zstd context probes the CPU for BMI2 with CPUID, which a hypervisor traps (about 7 us per
//! CPUID on the benchmark host, two per context): a context made per page or per lookup-file group costs
//! more than the bytes it handles. Each thread here makes its two contexts once.

use std::cell::RefCell;
use std::io::Cursor;

use bytes::Bytes;
use zstd::zstd_safe::{CCtx, CParameter, DCtx, InBuffer, OutBuffer, ResetDirective};

thread_local! {
    /// The thread's decompression context, made on first use.
    static DECOMPRESS: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
    /// The thread's compression context, made on first use.
    static COMPRESS: RefCell<Option<CCtx<'static>>> = const { RefCell::new(None) };
}

fn named(what: &str, code: usize) -> String {
    format!("{what}: {}", zstd::zstd_safe::get_error_name(code))
}

/// `prefix` followed by the zstd frames of `frames` decompressed; an error when they do not decompress or
/// hold more than `limit` bytes.
pub(crate) fn decompress(frames: &[u8], prefix: &[u8], limit: usize) -> Result<Bytes, String> {
    let mut out = Vec::new();
    // A parquet page with no non-null values may store nothing at all (parquet's own reader skips it).
    if frames.is_empty() {
        out.extend_from_slice(prefix);
        return Ok(Bytes::from(out));
    }
    DECOMPRESS.with(|cell| {
        let mut slot = cell.borrow_mut();
        let dctx = slot.get_or_insert_with(DCtx::create);
        // Most writers record the size in the frame header (parquet-rs, Arrow C++, Strata): one call then
        // decompresses into a buffer of exactly that size. A frame without it (a streaming writer), or
        // several frames, decompress as a stream into a growing buffer.
        let declared = zstd::zstd_safe::get_frame_content_size(frames).ok().flatten();
        match declared {
            Some(n) if n <= limit as u64 => {
                let n = n as usize;
                out.reserve_exact(prefix.len() + n);
                out.extend_from_slice(prefix);
                // Written after the prefix (a `Vec` itself would be written from its start).
                let mut after = Cursor::new(&mut out);
                after.set_position(prefix.len() as u64);
                match dctx.decompress(&mut after, frames) {
                    Ok(_) if out.len() == prefix.len() + n => return Ok(Bytes::from(out)),
                    _ => out.clear(),
                }
            }
            Some(n) => return Err(format!("a frame declares {n} bytes, more than {limit}")),
            None => {}
        }
        out.extend_from_slice(prefix);
        stream(dctx, frames, out, prefix.len().saturating_add(limit))
    })
}

/// Decompresses every frame of `frames` after what `out` holds, `out` growing up to `limit` bytes.
fn stream(dctx: &mut DCtx<'static>, frames: &[u8], mut out: Vec<u8>, limit: usize) -> Result<Bytes, String> {
    dctx.reset(ResetDirective::SessionOnly).map_err(|c| named("reset", c))?;
    let mut input = InBuffer::around(frames);
    loop {
        if out.len() == out.capacity() {
            if out.len() >= limit {
                return Err(format!("decompresses to more than {limit} bytes"));
            }
            let grow = out.capacity().max(frames.len().saturating_mul(4)).max(4096);
            out.reserve_exact(grow.min(limit - out.len()));
        }
        let (read, written) = (input.pos(), out.len());
        // The call sets `out`'s length to what it wrote.
        let mut output = OutBuffer::around_pos(&mut out, written);
        let hint = dctx.decompress_stream(&mut output, &mut input).map_err(|c| named("corrupt", c))?;
        // 0: a frame ended; with no input left, every frame did.
        if hint == 0 && input.pos() == frames.len() {
            return Ok(Bytes::from(out));
        }
        // With room to write, no progress means the input ends inside a frame.
        if input.pos() == read && out.len() == written {
            return Err("the input ends inside a frame".to_string());
        }
    }
}

/// Appends `raw` compressed at `level` (one frame, its size in the header) to `out`.
pub(crate) fn compress(raw: &[u8], level: i32, out: &mut Vec<u8>) -> Result<(), String> {
    COMPRESS.with(|cell| {
        let mut slot = cell.borrow_mut();
        let cctx = slot.get_or_insert_with(CCtx::create);
        cctx.set_parameter(CParameter::CompressionLevel(level)).map_err(|c| named("level", c))?;
        let start = out.len();
        out.reserve(zstd::zstd_safe::compress_bound(raw.len()));
        // Written after what `out` holds (a `Vec` itself would be written from its start).
        let mut after = Cursor::new(out);
        after.set_position(start as u64);
        cctx.compress2(&mut after, raw).map(|_| ()).map_err(|c| named("compress", c))
    })
}

#[cfg(test)]
mod tests;

use std::io::Write;

use super::{compress, decompress};

fn sample(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 251) as u8 ^ (i / 300) as u8).collect()
}

/// A frame made by a streaming writer in small writes: no content size in its header.
fn streamed_frame(raw: &[u8]) -> Vec<u8> {
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("encoder");
    for piece in raw.chunks(1000) {
        enc.write_all(piece).expect("write");
    }
    enc.finish().expect("finish")
}

#[test]
fn a_frame_with_its_size_decompresses_after_the_prefix() {
    let raw = sample(100_000);
    let mut frame = b"kept".to_vec();
    compress(&raw, 1, &mut frame).expect("compress");
    assert_eq!(&frame[..4], b"kept", "compress appends");
    let frame = &frame[4..];
    assert_eq!(zstd::zstd_safe::get_frame_content_size(frame).ok().flatten(), Some(100_000));
    let out = decompress(frame, b"levels", raw.len()).expect("decompress");
    assert_eq!(&out[..6], b"levels");
    assert_eq!(&out[6..], &raw[..]);
    // The same thread's context serves the next page too.
    let again = decompress(frame, &[], raw.len()).expect("again");
    assert_eq!(&again[..], &raw[..]);
}

#[test]
fn frames_without_a_size_and_several_frames_decompress_as_a_stream() {
    let raw = sample(70_000);
    let streamed = streamed_frame(&raw);
    assert_eq!(zstd::zstd_safe::get_frame_content_size(&streamed).ok().flatten(), None, "no size recorded");
    assert_eq!(&decompress(&streamed, b"p", raw.len()).expect("streamed")[..], &[b"p".as_slice(), &raw].concat()[..]);
    // Two frames back to back, the first with its size: the one-shot call into that size fails over to
    // the stream, which reads both.
    let mut two = zstd::bulk::compress(&raw[..30_000], 1).expect("first");
    two.extend(zstd::bulk::compress(&raw[30_000..], 1).expect("second"));
    assert_eq!(&decompress(&two, &[], raw.len()).expect("two frames")[..], &raw[..]);
    assert_eq!(&decompress(&[], b"only", 0).expect("empty")[..], b"only");
}

#[test]
fn oversized_truncated_and_damaged_frames_are_errors() {
    let raw = sample(50_000);
    let sized = zstd::bulk::compress(&raw, 1).expect("compress");
    let streamed = streamed_frame(&raw);
    // More than the limit: declared, or found while streaming.
    assert!(decompress(&sized, &[], raw.len() - 1).is_err());
    assert!(decompress(&streamed, &[], raw.len() - 1).is_err());
    // Cut short, with and without a declared size.
    for frame in [&sized, &streamed] {
        for cut in [1, frame.len() / 2, frame.len() - 1] {
            assert!(decompress(&frame[..cut], &[], raw.len()).is_err(), "cut at {cut} of {}", frame.len());
        }
    }
    // Every flipped byte: an error or the right bytes (zstd checks what its format lets it), never a panic,
    // and never more than the limit.
    for at in 0..sized.len() {
        let mut bad = sized.clone();
        bad[at] ^= 0x5a;
        if let Ok(out) = decompress(&bad, &[], raw.len()) {
            assert!(out.len() <= raw.len());
        }
    }
    assert!(decompress(b"not a zstd frame at all", &[], 1000).is_err());
    // A failed page leaves the thread's context usable.
    assert_eq!(&decompress(&sized, &[], raw.len()).expect("after errors")[..], &raw[..]);
}

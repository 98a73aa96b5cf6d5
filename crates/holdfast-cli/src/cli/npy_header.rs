//! The `.npy` header checks run before `npyz` parses a file (see [`check_header`]): one file,
//! with no dependency on the rest of the program, so the `npy_read` fuzz target compiles this
//! very code (`#[path]`) instead of a copy.
//!
//! Invariant: nothing here consumes input; a file that passes is read by `npyz` from its start.

use std::io::BufRead;

/// numpy's own default limit on a header's length (`max_header_size` of `numpy.load`).
const MAX_HEADER_LEN: u64 = 10_000;

/// The deepest bracket nesting accepted in a header. A plain array's header is a dict holding a
/// shape tuple (depth 2); structured dtypes, which are rejected later anyway, nest a little more.
const MAX_HEADER_DEPTH: usize = 4;

/// Room to buffer the preamble and the longest accepted header at once.
pub(crate) const READ_BUFFER: usize = 16 << 10;

/// Checks a `.npy` preamble and header before `npyz` parses them, without consuming anything.
/// Both rules guard against a tiny file that costs the program a great deal (found by the
/// `npy_read` fuzz target; `tests/cli_npy_fuzz_regressions.rs`):
///
/// - the announced header length must fit in the file and in numpy's own limit: `npyz`
///   allocates a buffer of that length before reading, so a 32-byte file could ask for 4 GB;
/// - brackets may nest at most [`MAX_HEADER_DEPTH`] deep: `npyz`'s header parser backtracks
///   exponentially on nested braces (a 14-brace header took 77 s to reject, each more brace
///   multiplies that by about three).
///
/// Anything else wrong with the preamble or the header is left to `npyz` to report.
pub(crate) fn check_header(reader: &mut impl BufRead, file_len: u64) -> Result<(), String> {
    let head = reader.fill_buf().map_err(|e| format!("cannot read: {e}"))?;
    if head.len() < 10 || !head.starts_with(b"\x93NUMPY") {
        return Ok(());
    }
    let (header_len, preamble): (u64, usize) = match (head[6], head.get(8..12)) {
        (1, _) => (u64::from(u16::from_le_bytes([head[8], head[9]])), 10),
        (_, Some(&[a, b, c, d])) => (u64::from(u32::from_le_bytes([a, b, c, d])), 12),
        _ => return Ok(()),
    };
    if header_len > file_len.saturating_sub(preamble as u64) {
        return Err(format!(
            "not a .npy file: its header claims {header_len} bytes, more than the file holds"
        ));
    }
    if header_len > MAX_HEADER_LEN {
        return Err(format!(
            "its header is {header_len} bytes long, more than numpy's default limit of \
             {MAX_HEADER_LEN}"
        ));
    }
    // At most MAX_HEADER_LEN bytes, so the cast is exact; a regular file fills the buffer.
    let header = head
        .get(preamble..preamble + header_len as usize)
        .ok_or("not a .npy file: its header could not be read at once")?;
    let depth = bracket_depth(header);
    if depth > MAX_HEADER_DEPTH {
        return Err(format!(
            "its header nests brackets {depth} deep; at most {MAX_HEADER_DEPTH} are accepted \
             (a plain array's header nests 2)"
        ));
    }
    Ok(())
}

/// The deepest nesting of `{`, `[` and `(` outside Python string literals (with their
/// backslash escapes), in a `.npy` header.
fn bracket_depth(header: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for &b in header {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if b == b'\\' => escaped = true,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'{' | b'[' | b'(' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                b'}' | b']' | b')' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
}

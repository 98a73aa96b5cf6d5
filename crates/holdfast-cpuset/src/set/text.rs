//! The text form of a [`CpuSet`]: the Linux CPU-list format (`0-3,8,10-11`), as in
//! `/sys/devices/system/cpu/online` and `taskset -c`. [`fmt::Display`] writes it (the empty set
//! is the empty string) and [`str::parse`] reads it.

use std::fmt;
use std::str::FromStr;

use super::{CpuSet, CpuSetError};

impl fmt::Display for CpuSet {
    /// The Linux CPU-list form, e.g. `0-3,8`; the empty set is written as an empty string.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut cpus = self.iter().peekable();
        let mut first = true;
        while let Some(start) = cpus.next() {
            let mut end = start;
            while cpus.peek() == Some(&(end + 1)) {
                end += 1;
                cpus.next();
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({self})")
    }
}

impl FromStr for CpuSet {
    type Err = CpuSetError;

    /// Parses the Linux CPU-list form: comma-separated indices and inclusive `a-b` ranges,
    /// surrounding whitespace ignored; an empty (or blank) string is the empty set.
    fn from_str(input: &str) -> Result<Self, CpuSetError> {
        let fail = |reason| CpuSetError::Parse { input: input.to_owned(), reason };
        let mut set = Self::new();
        let text = input.trim();
        if text.is_empty() {
            return Ok(set);
        }
        for item in text.split(',') {
            let item = item.trim();
            let (start, end) = match item.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (item, item),
            };
            let start: usize = start.parse().map_err(|_| fail("expected a CPU index"))?;
            let end: usize = end.parse().map_err(|_| fail("expected a CPU index"))?;
            if start > end {
                return Err(fail("range start is above its end"));
            }
            if end >= Self::MAX_CPUS {
                return Err(CpuSetError::OutOfRange { cpu: end });
            }
            for cpu in start..=end {
                set.insert(cpu)?;
            }
        }
        Ok(set)
    }
}

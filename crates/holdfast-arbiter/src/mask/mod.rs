//! `CpuMask`: the arbiter's own request value, a fixed-size bitmask of CPU indices.
//!
//! # Why a concrete mask and not a generic request
//!
//! The arbiter must not depend on `holdfast-affinity` (SPEC L1), so it needs its own request type.
//! It could have been generic over a request with a conflict relation, but the default arbiter is a
//! process-wide `static` (SPEC A2: two engines over overlapping CPUs must meet in one arbiter), and a
//! static cannot be generic: every engine of the process must speak the same request type anyway.
//! A concrete mask also keeps admission allocation-free: it is an inline array of
//! [`CpuMask::WORDS`] `u64` words (1024 CPUs, the same limit as glibc's `cpu_set_t`), copied into
//! the arbiter's pre-sized tables, and the conflict test is a word-wise `AND`.
//!
//! `holdfast-affinity`'s `CpuSet` uses the same word layout (`to_words`/`from_words`); the session
//! layer converts one into the other.
//!
//! Invariant: bits at or above [`CpuMask::MAX_CPUS`] do not exist; every constructor rejects them.

use std::fmt;

/// Errors building a [`CpuMask`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CpuMaskError {
    /// A CPU index at or above [`CpuMask::MAX_CPUS`] was given.
    #[error("CPU index {cpu} is out of range: a CpuMask holds CPUs 0..{max}", max = CpuMask::MAX_CPUS)]
    OutOfRange {
        /// The offending CPU index.
        cpu: usize,
    },
}

/// A set of CPU indices, the request value of the arbiter: two requests conflict when their masks
/// overlap.
///
/// A plain value (`Copy`, 128 bytes inline, no heap).
///
/// # Examples
///
/// ```
/// use holdfast_arbiter::CpuMask;
///
/// let a = CpuMask::from_cpus([0, 1, 2])?;
/// let b = CpuMask::from_cpus([2, 3])?;
/// let c = CpuMask::from_cpus([8])?;
/// assert!(a.overlaps(&b));
/// assert!(!a.overlaps(&c));
/// assert_eq!(a.len(), 3);
/// assert_eq!(a.to_string(), "0-2");
/// # Ok::<(), holdfast_arbiter::CpuMaskError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CpuMask {
    words: [u64; CpuMask::WORDS],
}

impl CpuMask {
    /// Number of `u64` words in a mask.
    pub const WORDS: usize = 16;
    /// Number of CPUs a mask can name: indices `0..MAX_CPUS`.
    pub const MAX_CPUS: usize = Self::WORDS * 64;
    /// The empty mask. An empty request conflicts with nothing.
    pub const EMPTY: Self = Self { words: [0; Self::WORDS] };

    /// The empty mask.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(holdfast_arbiter::CpuMask::new().is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self::EMPTY
    }

    /// Builds a mask from CPU indices.
    ///
    /// # Errors
    ///
    /// [`CpuMaskError::OutOfRange`] for an index at or above [`CpuMask::MAX_CPUS`].
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::CpuMask;
    /// assert!(CpuMask::from_cpus([0, 5]).is_ok());
    /// assert!(CpuMask::from_cpus([CpuMask::MAX_CPUS]).is_err());
    /// ```
    pub fn from_cpus(cpus: impl IntoIterator<Item = usize>) -> Result<Self, CpuMaskError> {
        let mut mask = Self::EMPTY;
        for cpu in cpus {
            mask.insert(cpu)?;
        }
        Ok(mask)
    }

    /// Builds a mask from little-endian `u64` words (bit `i` of word `w` is CPU `64 * w + i`).
    ///
    /// Fewer than [`CpuMask::WORDS`] words are zero-extended; extra words must be zero.
    ///
    /// # Errors
    ///
    /// [`CpuMaskError::OutOfRange`] naming the first set bit beyond [`CpuMask::MAX_CPUS`].
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::CpuMask;
    /// let mask = CpuMask::from_words(&[0b1010])?;
    /// assert!(mask.contains(1) && mask.contains(3) && !mask.contains(0));
    /// # Ok::<(), holdfast_arbiter::CpuMaskError>(())
    /// ```
    pub fn from_words(words: &[u64]) -> Result<Self, CpuMaskError> {
        let mut mask = Self::EMPTY;
        for (index, &word) in words.iter().enumerate() {
            if index < Self::WORDS {
                mask.words[index] = word;
            } else if word != 0 {
                let cpu = index * 64 + word.trailing_zeros() as usize;
                return Err(CpuMaskError::OutOfRange { cpu });
            }
        }
        Ok(mask)
    }

    /// The words of the mask, in the layout [`CpuMask::from_words`] accepts.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::CpuMask;
    /// let mask = CpuMask::from_cpus([64])?;
    /// assert_eq!(mask.words()[1], 1);
    /// # Ok::<(), holdfast_arbiter::CpuMaskError>(())
    /// ```
    #[must_use]
    pub const fn words(&self) -> &[u64; Self::WORDS] {
        &self.words
    }

    /// Adds `cpu`; returns whether it was newly added.
    ///
    /// # Errors
    ///
    /// [`CpuMaskError::OutOfRange`] for an index at or above [`CpuMask::MAX_CPUS`].
    ///
    /// # Examples
    ///
    /// ```
    /// let mut mask = holdfast_arbiter::CpuMask::new();
    /// assert_eq!(mask.insert(3), Ok(true));
    /// assert_eq!(mask.insert(3), Ok(false));
    /// ```
    pub fn insert(&mut self, cpu: usize) -> Result<bool, CpuMaskError> {
        if cpu >= Self::MAX_CPUS {
            return Err(CpuMaskError::OutOfRange { cpu });
        }
        let (word, bit) = (cpu / 64, 1u64 << (cpu % 64));
        let fresh = self.words[word] & bit == 0;
        self.words[word] |= bit;
        Ok(fresh)
    }

    /// Whether `cpu` is in the mask (an out-of-range index is not).
    ///
    /// # Examples
    ///
    /// ```
    /// let mask = holdfast_arbiter::CpuMask::from_cpus([7])?;
    /// assert!(mask.contains(7) && !mask.contains(6) && !mask.contains(100_000));
    /// # Ok::<(), holdfast_arbiter::CpuMaskError>(())
    /// ```
    #[must_use]
    pub const fn contains(&self, cpu: usize) -> bool {
        cpu < Self::MAX_CPUS && self.words[cpu / 64] & (1u64 << (cpu % 64)) != 0
    }

    /// Whether the two masks share a CPU: the arbiter's conflict relation.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::CpuMask;
    /// assert!(CpuMask::from_cpus([1, 2])?.overlaps(&CpuMask::from_cpus([2])?));
    /// assert!(!CpuMask::EMPTY.overlaps(&CpuMask::from_cpus([2])?));
    /// # Ok::<(), holdfast_arbiter::CpuMaskError>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn overlaps(&self, other: &Self) -> bool {
        // Accumulate instead of short-circuiting: 16 independent ANDs vectorise well.
        let mut any = 0u64;
        for (a, b) in self.words.iter().zip(other.words.iter()) {
            any |= a & b;
        }
        any != 0
    }

    /// Whether every CPU of `self` is in `other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_arbiter::CpuMask;
    /// assert!(CpuMask::from_cpus([1])?.is_subset(&CpuMask::from_cpus([1, 2])?));
    /// assert!(!CpuMask::from_cpus([3])?.is_subset(&CpuMask::from_cpus([1, 2])?));
    /// # Ok::<(), holdfast_arbiter::CpuMaskError>(())
    /// ```
    #[must_use]
    pub fn is_subset(&self, other: &Self) -> bool {
        let mut outside = 0u64;
        for (a, b) in self.words.iter().zip(other.words.iter()) {
            outside |= a & !b;
        }
        outside == 0
    }

    /// Whether the mask names no CPU.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(holdfast_arbiter::CpuMask::EMPTY.is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Number of CPUs in the mask.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(holdfast_arbiter::CpuMask::from_cpus([0, 9, 9])?.len(), 2);
    /// # Ok::<(), holdfast_arbiter::CpuMaskError>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The CPU indices of the mask, ascending.
    ///
    /// # Examples
    ///
    /// ```
    /// let mask = holdfast_arbiter::CpuMask::from_cpus([65, 2])?;
    /// assert_eq!(mask.iter().collect::<Vec<_>>(), vec![2, 65]);
    /// # Ok::<(), holdfast_arbiter::CpuMaskError>(())
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(index, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(index * 64 + bit)
            })
        })
    }
}

impl fmt::Display for CpuMask {
    /// Formats the mask as a Linux CPU list, e.g. `0-3,8`; the empty mask is `(empty)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut cpus = self.iter().peekable();
        if cpus.peek().is_none() {
            return f.write_str("(empty)");
        }
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

impl fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuMask({self})")
    }
}

#[cfg(test)]
mod tests;

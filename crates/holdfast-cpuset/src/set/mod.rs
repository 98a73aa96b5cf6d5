//! `CpuSet`: the CPU-set value of the workspace (engine domains, topology facts, thread bindings,
//! admission requests).
//!
//! A fixed inline bitset of [`CpuSet::MAX_CPUS`] bits (the size of glibc's `cpu_set_t`): `Copy`,
//! no heap, so guards, engines and the arbiter's pre-sized tables carry it without allocating, and
//! set operations are word-wise.
//!
//! Invariant: bits at or above [`CpuSet::MAX_CPUS`] do not exist; every constructor rejects them.
//!
//! The text form is the Linux CPU-list format (`0-3,8,10-11`), as in `/sys/devices/system/cpu/online`
//! and `taskset -c` (module `text`): `Display` writes it and [`str::parse`] reads it.

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, Sub, SubAssign};

/// Errors building a [`CpuSet`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CpuSetError {
    /// A CPU index at or above [`CpuSet::MAX_CPUS`].
    #[error("CPU index {cpu} is out of range: a CpuSet holds CPUs 0..{max}", max = CpuSet::MAX_CPUS)]
    OutOfRange {
        /// The offending index.
        cpu: usize,
    },
    /// A CPU list that does not parse.
    #[error("invalid CPU list {input:?}: {reason}")]
    Parse {
        /// The text that failed to parse.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// A set of CPU (processing unit) indices, as the operating system numbers them.
///
/// # Examples
///
/// ```
/// use holdfast_cpuset::CpuSet;
///
/// let domain: CpuSet = "0-3".parse()?;
/// let caller = CpuSet::from_cpus([2, 3, 4, 5])?;
/// let narrowed = domain & caller;
/// assert_eq!(narrowed.to_string(), "2-3");
/// assert!(narrowed.is_subset(&domain));
/// assert_eq!((caller - domain).to_string(), "4-5");
/// # Ok::<(), holdfast_cpuset::CpuSetError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CpuSet {
    words: [u64; CpuSet::WORDS],
}

impl CpuSet {
    /// Number of `u64` words in a set.
    pub const WORDS: usize = 16;
    /// Number of CPUs a set can name: indices `0..MAX_CPUS`.
    pub const MAX_CPUS: usize = Self::WORDS * 64;

    /// The empty set.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(holdfast_cpuset::CpuSet::new().is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self { words: [0; Self::WORDS] }
    }

    /// The set of the given CPU indices.
    ///
    /// # Errors
    ///
    /// [`CpuSetError::OutOfRange`] for an index at or above [`CpuSet::MAX_CPUS`].
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// assert_eq!(CpuSet::from_cpus([3, 1])?.to_string(), "1,3");
    /// assert!(CpuSet::from_cpus([CpuSet::MAX_CPUS]).is_err());
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    pub fn from_cpus(cpus: impl IntoIterator<Item = usize>) -> Result<Self, CpuSetError> {
        let mut set = Self::new();
        for cpu in cpus {
            set.insert(cpu)?;
        }
        Ok(set)
    }

    /// The set `start..end`.
    ///
    /// # Errors
    ///
    /// [`CpuSetError::OutOfRange`] when `end` exceeds [`CpuSet::MAX_CPUS`].
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(holdfast_cpuset::CpuSet::from_range(2..5)?.to_string(), "2-4");
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    pub fn from_range(range: std::ops::Range<usize>) -> Result<Self, CpuSetError> {
        if range.end > Self::MAX_CPUS {
            return Err(CpuSetError::OutOfRange { cpu: range.end - 1 });
        }
        Self::from_cpus(range)
    }

    /// Builds a set from little-endian `u64` words (bit `i` of word `w` is CPU `64 * w + i`);
    /// fewer words are zero-extended, extra words must be zero.
    ///
    /// # Errors
    ///
    /// [`CpuSetError::OutOfRange`] naming the first set bit beyond [`CpuSet::MAX_CPUS`].
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// let set = CpuSet::from_cpus([0, 70])?;
    /// assert_eq!(CpuSet::from_words(&set.to_words())?, set);
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    pub fn from_words(words: &[u64]) -> Result<Self, CpuSetError> {
        let mut set = Self::new();
        for (index, &word) in words.iter().enumerate() {
            if index < Self::WORDS {
                set.words[index] = word;
            } else if word != 0 {
                return Err(CpuSetError::OutOfRange {
                    cpu: index * 64 + word.trailing_zeros() as usize,
                });
            }
        }
        Ok(set)
    }

    /// The words of the set, in the layout [`CpuSet::from_words`] accepts (bit `i % 64` of word
    /// `i / 64` is CPU `i`).
    ///
    /// # Examples
    ///
    /// ```
    /// let words = holdfast_cpuset::CpuSet::from_cpus([1, 64])?.to_words();
    /// assert_eq!((words[0], words[1]), (0b10, 1));
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    pub const fn to_words(&self) -> [u64; Self::WORDS] {
        self.words
    }

    /// Adds `cpu`; returns whether it was newly added.
    ///
    /// # Errors
    ///
    /// [`CpuSetError::OutOfRange`] for an index at or above [`CpuSet::MAX_CPUS`].
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set = holdfast_cpuset::CpuSet::new();
    /// assert_eq!(set.insert(4), Ok(true));
    /// assert_eq!(set.insert(4), Ok(false));
    /// ```
    pub fn insert(&mut self, cpu: usize) -> Result<bool, CpuSetError> {
        if cpu >= Self::MAX_CPUS {
            return Err(CpuSetError::OutOfRange { cpu });
        }
        let (word, bit) = (cpu / 64, 1u64 << (cpu % 64));
        let fresh = self.words[word] & bit == 0;
        self.words[word] |= bit;
        Ok(fresh)
    }

    /// Removes `cpu`; returns whether it was present.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set = holdfast_cpuset::CpuSet::from_cpus([4])?;
    /// assert!(set.remove(4));
    /// assert!(!set.remove(4));
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    pub fn remove(&mut self, cpu: usize) -> bool {
        if !self.contains(cpu) {
            return false;
        }
        self.words[cpu / 64] &= !(1u64 << (cpu % 64));
        true
    }

    /// Whether `cpu` is in the set (an out-of-range index is not).
    ///
    /// # Examples
    ///
    /// ```
    /// let set = holdfast_cpuset::CpuSet::from_cpus([9])?;
    /// assert!(set.contains(9) && !set.contains(8));
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    pub const fn contains(&self, cpu: usize) -> bool {
        cpu < Self::MAX_CPUS && self.words[cpu / 64] & (1u64 << (cpu % 64)) != 0
    }

    /// Number of CPUs in the set.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!("0-3,7".parse::<holdfast_cpuset::CpuSet>()?.len(), 5);
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(holdfast_cpuset::CpuSet::default().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The lowest CPU of the set.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!("5-7".parse::<holdfast_cpuset::CpuSet>()?.first(), Some(5));
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// The CPUs of the set, ascending.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = holdfast_cpuset::CpuSet::from_cpus([130, 2])?;
    /// assert_eq!(set.iter().collect::<Vec<_>>(), [2, 130]);
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
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

    /// `self ∩ other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// let a: CpuSet = "0-3".parse()?;
    /// assert_eq!(a.intersection(&"2-9".parse()?).to_string(), "2-3");
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    pub fn intersection(&self, other: &Self) -> Self {
        self.zip_with(other, |a, b| a & b)
    }

    /// `self ∪ other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// let a: CpuSet = "0-1".parse()?;
    /// assert_eq!(a.union(&"3".parse()?).to_string(), "0-1,3");
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    pub fn union(&self, other: &Self) -> Self {
        self.zip_with(other, |a, b| a | b)
    }

    /// `self \ other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// let a: CpuSet = "0-3".parse()?;
    /// assert_eq!(a.difference(&"1-2".parse()?).to_string(), "0,3");
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    pub fn difference(&self, other: &Self) -> Self {
        self.zip_with(other, |a, b| a & !b)
    }

    /// Whether every CPU of `self` is in `other`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// assert!("1".parse::<CpuSet>()?.is_subset(&"0-3".parse()?));
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn is_subset(&self, other: &Self) -> bool {
        let mut outside = 0u64;
        for (a, b) in self.words.iter().zip(other.words.iter()) {
            outside |= a & !b;
        }
        outside == 0
    }

    /// Whether every CPU of `other` is in `self`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// assert!("0-3".parse::<CpuSet>()?.is_superset(&"1".parse()?));
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn is_superset(&self, other: &Self) -> bool {
        other.is_subset(self)
    }

    /// Whether `self ⊇ other`, for an `other` whose words from `words` on are all zero (the
    /// caller guarantees it, typically with `words = other.significant_words()` computed once):
    /// compares only the first `words` words.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// let small: CpuSet = "1-2".parse()?;
    /// let words = small.significant_words();
    /// assert!("0-3".parse::<CpuSet>()?.is_superset_of_prefix(&small, words));
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn is_superset_of_prefix(&self, other: &Self, words: usize) -> bool {
        debug_assert!(other.words.iter().skip(words).all(|&w| w == 0));
        let mut missing = 0u64;
        for (a, b) in self.words.iter().zip(other.words.iter()).take(words) {
            missing |= b & !a;
        }
        missing == 0
    }

    /// Number of words up to and including the last non-zero one (0 for the empty set).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// assert_eq!(CpuSet::new().significant_words(), 0);
    /// assert_eq!(CpuSet::from_cpus([0, 64])?.significant_words(), 2);
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    pub fn significant_words(&self) -> usize {
        self.words.iter().rposition(|&w| w != 0).map_or(0, |last| last + 1)
    }

    /// Whether the sets share a CPU: the arbiter's conflict relation between two requests (an
    /// empty set overlaps nothing).
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// assert!(CpuSet::from_cpus([1, 2])?.overlaps(&CpuSet::from_cpus([2])?));
    /// assert!(!CpuSet::new().overlaps(&CpuSet::from_cpus([2])?));
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
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

    /// Whether the sets share no CPU.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_cpuset::CpuSet;
    /// assert!("0-1".parse::<CpuSet>()?.is_disjoint(&"2".parse()?));
    /// # Ok::<(), holdfast_cpuset::CpuSetError>(())
    /// ```
    #[must_use]
    #[inline]
    pub fn is_disjoint(&self, other: &Self) -> bool {
        !self.overlaps(other)
    }

    fn zip_with(&self, other: &Self, op: impl Fn(u64, u64) -> u64) -> Self {
        let mut words = [0u64; Self::WORDS];
        for (out, (a, b)) in words.iter_mut().zip(self.words.iter().zip(other.words.iter())) {
            *out = op(*a, *b);
        }
        Self { words }
    }
}

impl BitAnd for CpuSet {
    type Output = Self;
    fn bitand(self, rhs: Self) -> Self {
        self.intersection(&rhs)
    }
}

impl BitOr for CpuSet {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        self.union(&rhs)
    }
}

impl Sub for CpuSet {
    type Output = Self;
    fn sub(self, rhs: Self) -> Self {
        self.difference(&rhs)
    }
}

impl BitAndAssign for CpuSet {
    fn bitand_assign(&mut self, rhs: Self) {
        *self = self.intersection(&rhs);
    }
}

impl BitOrAssign for CpuSet {
    fn bitor_assign(&mut self, rhs: Self) {
        *self = self.union(&rhs);
    }
}

impl SubAssign for CpuSet {
    fn sub_assign(&mut self, rhs: Self) {
        *self = self.difference(&rhs);
    }
}

#[cfg(test)]
mod tests;
mod text;

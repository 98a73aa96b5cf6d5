//! [`Lru`]: the bounded, content-keyed LRU store behind both plan caches.
//!
//! # Structure and invariants
//!
//! - Dense storage: `entries[i]` is a live `(key, value)` and `links[i]` its bookkeeping
//!   (recency neighbours, fingerprint-chain successor, fingerprint, bytes), for every
//!   `i < len`. Removing an entry moves the last one into its place and re-points the links that
//!   named it, so there are no free slots and no `Option`s to unwrap.
//! - A doubly linked recency list through `prev`/`next`, most recent at `head`, least recent at
//!   `tail`, over exactly the live entries.
//! - `index` maps a 64-bit fingerprint to the first entry with that fingerprint; entries that
//!   share a fingerprint (a collision) are chained through `chain`. A lookup compares full keys
//!   along the chain, so a collision is never a wrong hit.
//! - `len <= limits.max_entries` and `bytes <= limits.max_bytes` after every operation.
//!
//! A hit touches only the entry's links (no allocation, no atomic); an insertion may grow the
//! vectors or the index, and evicts from the tail until both bounds hold.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use holdfast_kernels::einsum::FingerprintHasher;

use super::{CacheLimits, PlanCacheStats};

/// The "no entry" link value.
const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
    chain: u32,
    fingerprint: u64,
    bytes: usize,
}

/// A bounded LRU map from content keys (with a precomputed fingerprint) to values.
#[derive(Debug)]
pub(crate) struct Lru<K, V> {
    links: Vec<Link>,
    entries: Vec<(K, V)>,
    index: HashMap<u64, u32, BuildHasherDefault<FingerprintHasher>>,
    head: u32,
    tail: u32,
    bytes: usize,
    limits: CacheLimits,
    hits: u64,
    misses: u64,
    insertions: u64,
    evictions: u64,
    rejected: u64,
    clears: u64,
}

impl<K, V> Lru<K, V> {
    pub(crate) fn new(limits: CacheLimits) -> Self {
        Lru {
            links: Vec::new(),
            entries: Vec::new(),
            index: HashMap::default(),
            head: NIL,
            tail: NIL,
            bytes: 0,
            limits: limits.clamped(),
            hits: 0,
            misses: 0,
            insertions: 0,
            evictions: 0,
            rejected: 0,
            clears: 0,
        }
    }

    pub(crate) fn limits(&self) -> CacheLimits {
        self.limits
    }

    pub(crate) fn set_limits(&mut self, limits: CacheLimits) {
        self.limits = limits.clamped();
        self.evict_to_fit(0, 0);
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn stats(&self) -> PlanCacheStats {
        PlanCacheStats {
            entries: self.entries.len(),
            bytes: self.bytes,
            hits: self.hits,
            misses: self.misses,
            insertions: self.insertions,
            evictions: self.evictions,
            rejected: self.rejected,
            clears: self.clears,
        }
    }

    /// The entry with `fingerprint` whose key satisfies `eq`, without counting or touching.
    #[inline]
    fn find(&self, fingerprint: u64, mut eq: impl FnMut(&K) -> bool) -> Option<u32> {
        let mut i = *self.index.get(&fingerprint)?;
        while i != NIL {
            if eq(&self.entries[i as usize].0) {
                return Some(i);
            }
            i = self.links[i as usize].chain;
        }
        None
    }

    /// Looks a key up, counting a hit or a miss; a hit becomes the most recent entry.
    #[inline]
    pub(crate) fn lookup(&mut self, fingerprint: u64, eq: impl FnMut(&K) -> bool) -> Option<u32> {
        let found = self.find(fingerprint, eq);
        match found {
            Some(i) => {
                self.hits += 1;
                self.touch(i);
            }
            None => self.misses += 1,
        }
        found
    }

    /// The most recently used entry, when `eq` accepts it: a hit that needs no key, no hash and
    /// no reordering (it is already at the front). Counts a hit only when it matches; a caller
    /// falls back to [`lookup`](Self::lookup) otherwise. Always inlined: the check runs on every
    /// held einsum, and a call would pass the caller's spec and operands through memory.
    #[inline(always)]
    pub(crate) fn lookup_front(&mut self, eq: impl FnOnce(&K, &V) -> bool) -> Option<u32> {
        let i = self.head;
        let (key, value) = self.entries.get(i as usize)?;
        if eq(key, value) {
            self.hits += 1;
            Some(i)
        } else {
            None
        }
    }

    /// The value of live entry `i` (from [`lookup`](Self::lookup) or
    /// [`insert`](Self::insert), with no removal in between).
    #[inline]
    pub(crate) fn value(&self, i: u32) -> &V {
        &self.entries[i as usize].1
    }

    /// Stores `value` under `key` (replacing an equal key's entry), evicting least recent
    /// entries until both bounds hold. Returns the entry, or gives `(key, value)` back when the
    /// entry alone exceeds a bound and is not stored.
    pub(crate) fn insert(
        &mut self,
        fingerprint: u64,
        key: K,
        value: V,
        bytes: usize,
        mut eq: impl FnMut(&K, &K) -> bool,
    ) -> Result<u32, (K, V)> {
        self.insertions += 1;
        if let Some(i) = self.find(fingerprint, |k| eq(k, &key)) {
            self.remove(i);
        }
        if self.limits.max_entries == 0 || bytes > self.limits.max_bytes {
            self.rejected += 1;
            return Err((key, value));
        }
        self.evict_to_fit(1, bytes);
        // `limits.clamped()` keeps the entry count below `NIL`.
        let i = u32::try_from(self.entries.len()).unwrap_or(NIL);
        // Chain it in front of any entry with the same fingerprint.
        let chain = self.index.insert(fingerprint, i).unwrap_or(NIL);
        self.links.push(Link { prev: NIL, next: NIL, chain, fingerprint, bytes });
        self.entries.push((key, value));
        self.push_front(i);
        self.bytes += bytes;
        Ok(i)
    }

    /// Drops every entry (the vectors and index keep their capacity).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.links.clear();
        self.index.clear();
        self.head = NIL;
        self.tail = NIL;
        self.bytes = 0;
        self.clears += 1;
    }

    /// Evicts from the tail until `extra` more entries of `incoming` bytes in all fit.
    fn evict_to_fit(&mut self, extra: usize, incoming: usize) {
        while self.tail != NIL
            && (self.entries.len() + extra > self.limits.max_entries
                || self.bytes + incoming > self.limits.max_bytes)
        {
            self.remove(self.tail);
            self.evictions += 1;
        }
    }

    /// Removes entry `i`, moving the last entry into its place.
    fn remove(&mut self, i: u32) {
        self.unlink_lru(i);
        self.unchain(i);
        self.bytes -= self.links[i as usize].bytes;
        let last = u32::try_from(self.entries.len() - 1).unwrap_or(NIL);
        self.links.swap_remove(i as usize);
        self.entries.swap_remove(i as usize);
        if i != last {
            self.relocated(last, i);
        }
    }

    /// Re-points every link that named entry `from` (now stored at `to`).
    fn relocated(&mut self, from: u32, to: u32) {
        let Link { prev, next, fingerprint, .. } = self.links[to as usize];
        if prev == NIL {
            self.head = to;
        } else {
            self.links[prev as usize].next = to;
        }
        if next == NIL {
            self.tail = to;
        } else {
            self.links[next as usize].prev = to;
        }
        self.rechain(fingerprint, from, to);
    }

    /// Takes entry `i` off its fingerprint chain.
    fn unchain(&mut self, i: u32) {
        let Link { fingerprint, chain, .. } = self.links[i as usize];
        if self.index.get(&fingerprint) == Some(&i) && chain == NIL {
            self.index.remove(&fingerprint);
        } else {
            self.rechain(fingerprint, i, chain);
        }
    }

    /// In the chain of `fingerprint`, replaces the reference to `old` by `new`.
    fn rechain(&mut self, fingerprint: u64, old: u32, new: u32) {
        let Some(first) = self.index.get_mut(&fingerprint) else { return };
        if *first == old {
            *first = new;
            return;
        }
        let mut p = *first;
        while p != NIL {
            let link = &mut self.links[p as usize];
            if link.chain == old {
                link.chain = new;
                return;
            }
            p = link.chain;
        }
    }

    #[inline]
    fn touch(&mut self, i: u32) {
        if self.head != i {
            self.unlink_lru(i);
            self.push_front(i);
        }
    }

    #[inline]
    fn unlink_lru(&mut self, i: u32) {
        let Link { prev, next, .. } = self.links[i as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.links[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.links[next as usize].prev = prev;
        }
    }

    #[inline]
    fn push_front(&mut self, i: u32) {
        let old = self.head;
        let link = &mut self.links[i as usize];
        link.prev = NIL;
        link.next = old;
        if old == NIL {
            self.tail = i;
        } else {
            self.links[old as usize].prev = i;
        }
        self.head = i;
    }

    /// Keys from most to least recent, checking the structural invariants on the way (tests).
    #[cfg(test)]
    pub(crate) fn keys_by_recency(&self) -> Vec<&K> {
        let mut out = Vec::new();
        let mut i = self.head;
        let mut prev = NIL;
        while i != NIL {
            assert_eq!(self.links[i as usize].prev, prev, "recency back link");
            out.push(&self.entries[i as usize].0);
            prev = i;
            i = self.links[i as usize].next;
        }
        assert_eq!(self.tail, prev, "tail");
        assert_eq!(out.len(), self.entries.len(), "every entry is on the recency list");
        let chained: usize = self
            .index
            .values()
            .map(|&first| {
                let mut n = 0;
                let mut c = first;
                while c != NIL {
                    n += 1;
                    c = self.links[c as usize].chain;
                }
                n
            })
            .sum();
        assert_eq!(chained, self.entries.len(), "every entry is on its fingerprint chain");
        assert_eq!(self.bytes, self.links.iter().map(|l| l.bytes).sum::<usize>(), "bytes");
        out
    }
}

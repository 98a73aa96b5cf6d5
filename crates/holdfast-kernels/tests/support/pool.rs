//! A pooling allocator standing in for the engine's buffer pool (resources crate): buffers are
//! kept per element type and handed out best-fit by capacity.

#![allow(dead_code, reason = "each user needs a different part")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support: a failed unwrap is a failed test"
)]

use std::any::Any;

use holdfast_kernels::KernelAlloc;
use holdfast_tensor::Element;

/// Free buffers of one element type.
#[derive(Default)]
struct Shelf<T> {
    free: Vec<Vec<T>>,
}

/// A best-fit pool of buffers, per element type.
#[derive(Default)]
pub(crate) struct PoolAlloc {
    shelves: Vec<Box<dyn Any>>,
    pub(crate) hits: usize,
    pub(crate) misses: usize,
}

impl PoolAlloc {
    fn shelf<T: Element>(&mut self) -> &mut Shelf<T> {
        let pos = self.shelves.iter().position(|s| s.is::<Shelf<T>>());
        let pos = pos.unwrap_or_else(|| {
            self.shelves.push(Box::new(Shelf::<T> { free: Vec::new() }));
            self.shelves.len() - 1
        });
        self.shelves[pos].downcast_mut::<Shelf<T>>().unwrap()
    }
}

impl KernelAlloc for PoolAlloc {
    fn take<T: Element>(&mut self, len: usize) -> Vec<T> {
        let shelf = self.shelf::<T>();
        let best = shelf
            .free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        match best {
            Some(i) => {
                let mut buf = shelf.free.swap_remove(i);
                buf.resize(len, T::ZERO);
                buf.truncate(len);
                self.hits += 1;
                buf
            }
            None => {
                self.misses += 1;
                holdfast_kernels::fresh_buffer(len)
            }
        }
    }

    fn give<T: Element>(&mut self, buf: Vec<T>) {
        self.shelf::<T>().free.push(buf);
    }
}

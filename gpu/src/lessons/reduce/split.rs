//! [`Split16`]: an array of any [`Element`] cut into a scalar head, a body of 16-byte vectors and a
//! scalar tail — [`Split4`](crate::vector::Split4) for `f32`, `f64`, `i32` and `u64` alike.
//!
//! A 16-byte load must be 16-byte aligned; an array's start need not be (a sub-slice), nor its
//! length a multiple of the lanes. The head runs up to the first 16-byte boundary, the body is
//! whole [`Element::Vec16`]s, the tail is what is left; head and tail are read one element at a
//! time.

use super::ops::Element;
use crate::mem::Ptr;
use core::marker::PhantomData;

/// The alignment, in bytes, of a 16-byte load.
pub const VEC16_ALIGN: usize = 16;

/// How `len` elements starting at some address split into head, body and tail.
#[derive(Debug)]
pub struct Split16<T> {
    /// Elements before the first 16-byte boundary.
    pub head: usize,
    /// Whole 16-byte vectors after the head.
    pub body: usize,
    /// All elements.
    pub len: usize,
    _element: PhantomData<T>,
}

impl<T> Clone for Split16<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Split16<T> {}

impl<T: Element> Split16<T> {
    /// The split of `len` elements starting at `p` (aligned to `size_of::<T>()`, as every `*T` is).
    #[inline(always)]
    pub fn of(p: *const T, len: usize) -> Split16<T> {
        let misaligned = (p as usize % VEC16_ALIGN) / size_of::<T>();
        let head = ((T::LANES - misaligned) % T::LANES).min(len);
        Split16 {
            head,
            body: (len - head) / T::LANES,
            len,
            _element: PhantomData,
        }
    }

    /// The index of the first tail element.
    #[inline(always)]
    pub fn tail_start(&self) -> usize {
        self.head + self.body * T::LANES
    }

    /// How many elements are read one at a time: head plus tail.
    #[inline(always)]
    pub fn scalars(&self) -> usize {
        self.head + (self.len - self.tail_start())
    }

    /// The array index of scalar number `k < self.scalars()`: the head first, then the tail.
    #[inline(always)]
    pub fn scalar_index(&self, k: usize) -> usize {
        if k < self.head {
            k
        } else {
            self.tail_start() + (k - self.head)
        }
    }

    /// The body's `v`-th vector of the array at `p` (the array this split was made for).
    ///
    /// # Safety
    /// `p` is the address the split was made for, valid for `self.len` elements; `v < self.body`.
    #[inline(always)]
    pub unsafe fn load(&self, p: *const T, v: usize) -> T::Vec16 {
        // SAFETY: `p + head` is 16-byte aligned (that is what `head` is), and body vector `v`
        // ends at or before `tail_start() <= len`.
        unsafe {
            Ptr::new(p.cast_mut())
                .add(self.head)
                .cast::<T::Vec16>()
                .add(v)
                .load()
        }
    }
}

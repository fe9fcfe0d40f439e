//! A value alone on its cache line(s).

/// A value alone on its cache line(s): written per message by one thread,
/// it must not share a line with what another thread touches per message.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct CacheLine<T>(pub(crate) T);

impl<T> std::ops::Deref for CacheLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

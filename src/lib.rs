//! The kgen command-line tool's library: shared by the binary and the integration tests.

pub mod asmcall;
pub mod bench;
pub mod d1;
pub mod gcm;
pub mod goldens;
pub mod gopatches;
pub mod jit_bench;
pub mod jit_run;
pub mod openssl;
pub mod oracle;
pub mod outputs;
pub mod plot;
pub mod rtl;

/// `f` of every item, on one worker per core, each taking the next item not yet taken;
/// the results in the items' order.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len().max(1));
    let mut done: Vec<(usize, R)> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                sc.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { return out };
                        out.push((i, f(item)));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("worker thread")).collect()
    });
    done.sort_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

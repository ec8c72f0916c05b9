//! kgen-harness: where kernels run outside a program. A kernel's benchmark driver on the
//! C906 cost model ([`bench`](mod@bench): the OpenSSL build, or the Go build as Go's assembler makes
//! it), its known answers from a JIT buffer in kgen-sim or natively ([`jit`]), the same
//! calls timed with a riscv64 host's cycle counter ([`jit_bench`]) or on the
//! cycle-accurate C906 RTL ([`rtl`]), any function of an assembly file ([`asmcall`]), and
//! the external tools the checks compare against ([`oracle`]). Everything a kernel brings
//! comes through its [`kgen_dsl::kernel::Kernel`] description; nothing here knows a kernel
//! by name.

pub mod asmcall;
pub mod bench;
pub mod jit;
pub mod jit_bench;
pub mod oracle;
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

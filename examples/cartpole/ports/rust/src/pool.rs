//! Persistent helper threads that share a batched step with the calling thread (std only).
//!
//! Why not a thread per call: on a shared machine a new thread can wait milliseconds for a
//! core, and the call would have to join it. Here the caller works through the chunks
//! itself; helpers take the chunks they reach in time, so a busy machine costs at most the
//! one chunk a helper has already started.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// Runs chunk `index` of the task at address `task` (which outlives every claimed chunk).
pub type ChunkFn = unsafe fn(task: usize, index: usize);

struct Job {
    next: AtomicUsize,
    finished: AtomicUsize,
    failed: AtomicBool,
    chunks: usize,
    task: usize,
    run: ChunkFn,
}

impl Job {
    /// Claims and runs chunks until none are left. A chunk is only touched once claimed,
    /// and the caller waits for every claimed chunk, so `task` is alive whenever it is used.
    fn work(&self) {
        loop {
            let index = self.next.fetch_add(1, Ordering::AcqRel);
            if index >= self.chunks {
                return;
            }
            let ran = catch_unwind(AssertUnwindSafe(|| unsafe { (self.run)(self.task, index) }));
            if ran.is_err() {
                self.failed.store(true, Ordering::Relaxed);
            }
            self.finished.fetch_add(1, Ordering::Release);
        }
    }
}

struct Pool {
    // (generation, job): a helper runs each generation's job at most once.
    current: Mutex<(u64, Option<Arc<Job>>)>,
    wake: Condvar,
}

fn helper(pool: &'static Pool) {
    let mut seen = 0;
    loop {
        let job = {
            let mut slot = pool.current.lock().unwrap_or_else(|e| e.into_inner());
            while slot.0 == seen {
                slot = pool.wake.wait(slot).unwrap_or_else(|e| e.into_inner());
            }
            seen = slot.0;
            slot.1.clone()
        };
        if let Some(job) = job {
            job.work();
        }
    }
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            current: Mutex::new((0, None)),
            wake: Condvar::new(),
        }));
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        for _ in 1..cores {
            std::thread::spawn(move || helper(pool));
        }
        pool
    })
}

/// Runs `chunks` chunks on the calling thread and any idle helpers; false if one panicked.
pub fn run_chunks(chunks: usize, task: usize, run: ChunkFn) -> bool {
    let job = Arc::new(Job {
        next: AtomicUsize::new(0),
        finished: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
        chunks,
        task,
        run,
    });
    let pool = pool();
    {
        let mut slot = pool.current.lock().unwrap_or_else(|e| e.into_inner());
        slot.0 += 1;
        slot.1 = Some(job.clone());
    }
    pool.wake.notify_all();
    job.work();
    let mut spins = 0u32;
    while job.finished.load(Ordering::Acquire) < chunks {
        // A helper is finishing a chunk it claimed; give it the core if it was preempted.
        spins += 1;
        if spins < 1000 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
    !job.failed.load(Ordering::Relaxed)
}

//! One case in this process: the target's run under `catch_unwind`, with a panic hook that
//! records the message and place instead of printing them.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use crate::checks::Failure;
use crate::target::Target;

thread_local! {
    static PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            let (file, line) = info
                .location()
                .map_or(("?".into(), 0), |l| (l.file().to_string(), l.line()));
            PANIC.with(|p| {
                *p.borrow_mut() = Some((file.clone(), format!("{message} at {file}:{line}")))
            });
        }));
    });
}

/// Runs `input` through `target`: a panic is a failure of kind `panic@FILE` (the source file
/// that panicked), with the message and line.
pub fn check(target: Target, input: &[u8]) -> Result<(), Failure> {
    install_hook();
    match catch_unwind(AssertUnwindSafe(|| target.run(input))) {
        Ok(result) => result,
        Err(_) => {
            let (file, detail) = PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| ("?".into(), "panic without hook".into()));
            // The crate folder and the path inside it: `pp/src/log/text.rs`.
            let file = match file.rfind("/src/") {
                Some(i) => format!(
                    "{}{}",
                    file[..i].rsplit('/').next().unwrap_or(""),
                    &file[i..]
                ),
                None => file,
            };
            Err(Failure::new(format!("panic@{file}"), detail))
        }
    }
}

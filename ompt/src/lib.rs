//! skeleton
#[unsafe(no_mangle)]
pub extern "C" fn ompt_start_tool(_v: u32, _r: *const std::ffi::c_char) -> *mut std::ffi::c_void {
    std::ptr::null_mut()
}

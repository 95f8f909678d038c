//! The C math library, loaded the first time a math function is called.
//!
//! Linking libm.so.6 makes the dynamic loader open, map and relocate it at
//! every start: ~0.1 ms, which is what `safesh -c true` cost beyond
//! `bash -c true` (bash does not link libm). Most runs never compute a sine.
//!
//! So the binary defines the libm functions its code calls (awk, jq, code
//! mode). The linker resolves the calls to these definitions and, with
//! `--as-needed`, leaves libm.so.6 out of the executable. The first call of
//! each function looks up glibc's own implementation with `dlopen`/`dlsym`,
//! so results are bit-for-bit those of glibc's libm (the oracle the
//! differential tests compare with: GNU awk/mawk and jq link it too).
//!
//! A math function the code starts to use and this list lacks is linked from
//! libm.so.6 again; the test `start_does_not_load_libm` then fails. `frexp`,
//! `modf` and `scalbn` are exported by both libraries; the linker would take
//! them from libm, so they are defined here too and looked up in libc.

use std::ffi::{CStr, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The handle `dlopen` gave for libm.so.6, once opened.
static LIBM: AtomicPtr<c_void> = AtomicPtr::new(null_mut());

/// The handle for libc.so.6, which is always loaded.
static LIBC: AtomicPtr<c_void> = AtomicPtr::new(null_mut());

/// Where a function's implementation is looked up.
#[derive(Clone, Copy)]
enum Library {
    /// libm.so.6, opened on first use.
    Math,
    /// libc.so.6, already mapped: glibc exports a few exact functions
    /// (`frexp`, `modf`, `scalbn`) from both libraries.
    C,
}

/// glibc's implementation of `name`, from `library` (opened on first use).
///
/// Aborts with a message if the library cannot be loaded: every glibc system
/// has it, and a math function has no way to report an error.
fn resolve(library: Library, name: &CStr) -> *mut c_void {
    let (slot, file, flags) = match library {
        Library::Math => (&LIBM, c"libm.so.6", libc::RTLD_NOW | libc::RTLD_LOCAL),
        Library::C => (&LIBC, c"libc.so.6", libc::RTLD_NOW | libc::RTLD_NOLOAD),
    };
    let mut lib = slot.load(Ordering::Acquire);
    if lib.is_null() {
        // SAFETY: dlopen with a NUL-terminated name. Two threads racing here
        // both get the same handle (dlopen counts references).
        lib = unsafe { libc::dlopen(file.as_ptr(), flags) };
        if lib.is_null() {
            fail(&file.to_string_lossy());
        }
        slot.store(lib, Ordering::Release);
    }
    // SAFETY: dlsym on a live handle with a NUL-terminated name.
    let f = unsafe { libc::dlsym(lib, name.as_ptr()) };
    if f.is_null() {
        fail(&name.to_string_lossy());
    }
    f
}

/// Reports a failed load with dlerror's reason and aborts.
fn fail(what: &str) -> ! {
    // SAFETY: dlerror returns null or a NUL-terminated string owned by libc.
    let why = unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            String::new()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    };
    eprintln!("safesh: cannot load the math library ({what}): {why}");
    std::process::abort();
}

/// Defines each listed function as a forwarder to glibc's, resolved once.
macro_rules! lazy_math {
    ($( $lib:ident: $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty; )*) => {$(
        #[doc = concat!("`", stringify!($name), "` from libm.so.6, loaded on first call.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name($($arg: $ty),*) -> $ret {
            static SLOT: AtomicPtr<c_void> = AtomicPtr::new(null_mut());
            let mut f = SLOT.load(Ordering::Acquire);
            if f.is_null() {
                let name = concat!(stringify!($name), "\0");
                f = match CStr::from_bytes_with_nul(name.as_bytes()) {
                    Ok(name) => resolve(Library::$lib, name),
                    Err(_) => fail(name),
                };
                SLOT.store(f, Ordering::Release);
            }
            // SAFETY: `f` is libm's function of this name, whose C signature
            // is the one declared here.
            let f = unsafe {
                std::mem::transmute::<*mut c_void, extern "C" fn($($ty),*) -> $ret>(f)
            };
            f($($arg),*)
        }
    )*};
}

lazy_math! {
    Math: acos(x: f64) -> f64;
    Math: acosh(x: f64) -> f64;
    Math: asin(x: f64) -> f64;
    Math: asinh(x: f64) -> f64;
    Math: atan(x: f64) -> f64;
    Math: atan2(y: f64, x: f64) -> f64;
    Math: atanh(x: f64) -> f64;
    Math: cbrt(x: f64) -> f64;
    Math: cos(x: f64) -> f64;
    Math: cosh(x: f64) -> f64;
    Math: exp(x: f64) -> f64;
    Math: exp2(x: f64) -> f64;
    Math: expm1(x: f64) -> f64;
    C: frexp(x: f64, exp: *mut libc::c_int) -> f64;
    Math: fmod(x: f64, y: f64) -> f64;
    Math: hypot(x: f64, y: f64) -> f64;
    Math: log(x: f64) -> f64;
    Math: log10(x: f64) -> f64;
    Math: log1p(x: f64) -> f64;
    Math: log2(x: f64) -> f64;
    Math: lrint(x: f64) -> libc::c_long;
    C: modf(x: f64, whole: *mut f64) -> f64;
    Math: pow(x: f64, y: f64) -> f64;
    C: scalbn(x: f64, n: libc::c_int) -> f64;
    Math: sin(x: f64) -> f64;
    Math: sinh(x: f64) -> f64;
    Math: tan(x: f64) -> f64;
    Math: tanh(x: f64) -> f64;
    // jq 1.6's math builtins (tools-jq `math.rs`), glibc's as jq links them.
    Math: cbrtf64(x: f64) -> f64;
    Math: drem(x: f64, y: f64) -> f64;
    Math: erf(x: f64) -> f64;
    Math: erfc(x: f64) -> f64;
    Math: exp10(x: f64) -> f64;
    Math: gamma(x: f64) -> f64;
    Math: j0(x: f64) -> f64;
    Math: j1(x: f64) -> f64;
    Math: jn(n: libc::c_int, x: f64) -> f64;
    C: ldexp(x: f64, exp: libc::c_int) -> f64;
    Math: lgamma(x: f64) -> f64;
    Math: lgamma_r(x: f64, sign: *mut libc::c_int) -> f64;
    Math: logb(x: f64) -> f64;
    Math: nearbyint(x: f64) -> f64;
    Math: nextafter(x: f64, y: f64) -> f64;
    Math: remainder(x: f64, y: f64) -> f64;
    Math: scalb(x: f64, y: f64) -> f64;
    Math: scalbln(x: f64, n: libc::c_long) -> f64;
    Math: significand(x: f64) -> f64;
    Math: tgamma(x: f64) -> f64;
    Math: y0(x: f64) -> f64;
    Math: y1(x: f64) -> f64;
    Math: yn(n: libc::c_int, x: f64) -> f64;
}

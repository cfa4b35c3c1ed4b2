//! `fft2d`: runs the 2D FFT workload once, recorded by default, and prints its timing and
//! checksum (see [`fft2d::cli`]).

use std::process::ExitCode;

fn main() -> ExitCode {
    fft2d::cli::main(std::env::args_os())
}

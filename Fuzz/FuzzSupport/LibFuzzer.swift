import CLibFuzzer

#if canImport(Glibc)
import Glibc
#endif

/// Hands the process to libFuzzer, which reads its command line and calls `test` with each
/// input (0 to go on), then exits with libFuzzer's status. A target's `main.swift` calls it
/// last, after its globals are set: SwiftPM makes that file's top-level code the program's
/// entry point, in place of the main of libFuzzer's runtime. That main, linked all the same,
/// calls `LLVMFuzzerTestOneInput`, which each target therefore also exports.
public func runLibFuzzer(_ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, test))
}

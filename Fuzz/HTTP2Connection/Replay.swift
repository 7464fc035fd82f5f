// Built for libFuzzer (`Scripts/fuzz.sh`, which defines FUZZING), the program's main is
// libFuzzer's and calls `LLVMFuzzerTestOneInput`. Built as any other target of the package,
// the program replays the inputs named on its command line (files, or folders of them) through
// that function: `swift run FuzzHTTP2Connection Fuzz/corpus/HTTP2Connection`.
#if !FUZZING
import FuzzReplay

@main
enum Replay {
    static func main() {
        replayFuzzInputs(CommandLine.arguments.dropFirst(), through: fuzz)
    }
}
#endif

// libFuzzer's entry for a program with a main of its own
// (https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library): it parses the
// command line as libFuzzer's own main would and calls `UserCb` with every input.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));

/* SPDX-License-Identifier: MIT */
/* fuzz/fuzz-replay.h - replay a committed corpus through a fuzz target, as TAP. */
#ifndef FUZZ_REPLAY_H
#define FUZZ_REPLAY_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/**
 * fuzz_replay_main - feed every file of fuzz/corpus/@corpus (under argv[1],
 * else $NX_SRCDIR, else .) to LLVMFuzzerTestOneInput, in name order, one TAP
 * line each.  A crash or sanitizer report ends the program, failing the test.
 * Return: the exit status (0 when all replayed and the corpus has >= 10 files).
 */
int fuzz_replay_main(const char *corpus, int argc, char **argv);

/* A target's replay program: main() over fuzz/corpus/@corpus. */
#define FUZZ_REPLAY(corpus) \
	int main(int argc, char **argv) { return fuzz_replay_main(corpus, argc, argv); }

#endif

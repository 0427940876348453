# bench/: `make bench` writes docs/benchmarks.md sections.
.PHONY: bench
bench: all
	@echo "bench: nothing yet"

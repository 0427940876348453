# bench/: `make bench` runs each benchmark; each writes docs/benchmarks-*.md,
# summarised in docs/benchmarks.md.  Not part of `make check`.
# (deps/ and web/ list their own benchmark files)
EXTRA_DIST += bench/ingest-bench.sh bench/make-big-kineto.py bench/server-bench.sh bench/capture-bench.sh bench/perfetto-bench.sh
.PHONY: bench
bench: all
	@for b in $(top_srcdir)/bench/*-bench.sh; do \
	  echo "== $$b"; \
	  NX_BIN=$(abs_top_builddir)/neuron-explorer NX_BUILDDIR=$(abs_top_builddir) \
	    $(SHELL) $$b $(abs_top_builddir) || exit 1; \
	done

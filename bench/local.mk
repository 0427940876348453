# bench/: `make bench` runs each benchmark; each writes docs/benchmarks-*.md,
# summarised in docs/benchmarks.md.  Not part of `make check`.
EXTRA_DIST += bench/ingest-bench.sh bench/make-big-kineto.py
.PHONY: bench
bench: all
	NX_BIN=$(abs_top_builddir)/neuron-explorer $(SHELL) $(top_srcdir)/bench/ingest-bench.sh
	@for b in $(top_srcdir)/bench/*-bench.sh; do \
	  case $$b in */ingest-bench.sh) continue;; esac; \
	  echo "== $$b"; NX_BIN=$(abs_top_builddir)/neuron-explorer NX_BUILDDIR=$(abs_top_builddir) $(SHELL) $$b || exit 1; \
	done

# OpenBench builds engines with `make EXE=<path>`; the default target does just that.
# `--bin basalt` is needed because the crate also has a library target, and extra rustc
# arguments can only go to one target.
#
# EVALFILE=<path>  embeds that net instead of nets/basalt.nnue (OpenBench passes the
#                  network of a test this way; a relative path is taken from this directory).
#                  build.rs checks the file and fails the build when it cannot be a net.
# SPSA=1           builds with the `spsa` feature: the search parameters become UCI options,
#                  for an SPSA tune (docs/openbench.md). A tuning branch sets `SPSA ?= 1`.

EXE ?= basalt
EVALFILE ?=
SPSA ?= 0

ifeq ($(SPSA),1)
    FEATURES := --features spsa
else ifeq ($(SPSA),0)
    FEATURES :=
else
    $(error SPSA=$(SPSA): give SPSA=1 (search parameters as UCI options) or SPSA=0)
endif

.PHONY: all clean

all:
	BASALT_EVALFILE="$(EVALFILE)" cargo rustc --release --bin basalt $(FEATURES) -- -C target-cpu=native --emit link=$(EXE)

clean:
	cargo clean

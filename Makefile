# OpenBench builds engines with `make EXE=<path>`; the default target does just that.
# `--bin basalt` is needed because the crate also has a library target, and extra rustc
# arguments can only go to one target.
#
# EVALFILE=<path>  embeds that net instead of nets/basalt.nnue (OpenBench passes the
#                  network of a test this way; a relative path is taken from this directory).
#                  build.rs checks the file and fails the build when it cannot be a net.

EXE ?= basalt
EVALFILE ?=

.PHONY: all clean

all:
	BASALT_EVALFILE="$(EVALFILE)" cargo rustc --release --bin basalt -- -C target-cpu=native --emit link=$(EXE)

clean:
	cargo clean

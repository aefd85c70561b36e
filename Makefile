# OpenBench builds engines with `make EXE=<path>`; the default target does just that.
# `--bin basalt` is needed because the crate also has a library target, and extra rustc
# arguments can only go to one target.

EXE ?= basalt

.PHONY: all clean

all:
	cargo rustc --release --bin basalt -- -C target-cpu=native --emit link=$(EXE)

clean:
	cargo clean

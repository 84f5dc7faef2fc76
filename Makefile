# The two commands of the README: `make run` and `make test`. Both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DSIMUMAX_WERROR=ON
PREFIX ?= /usr/local

.PHONY: deps build run test bench fuzz install clean

deps:
	@tools/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/tools/simumax-sim run scenarios/default.json

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300
	tools/sanitize-subset.sh build-asan $(JOBS)

bench: build
	$(BUILD)/tools/simumax-sim bench

# Coverage-guided fuzzing of the input readers (clang's libFuzzer, ASan + UBSan), FUZZ_SECONDS per target;
# new inputs that reach new code are merged into fuzz/corpus/, which `make test` replays.
FUZZ_SECONDS ?= 60
fuzz:
	@tools/install-deps.sh fuzz
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DSIMUMAX_FUZZ=ON
	cmake --build build-fuzz -j $(JOBS) --target fuzzers
	tools/run-fuzz.sh build-fuzz $(FUZZ_SECONDS)

# A relocatable tree under $(PREFIX): bin/simumax-sim, lib/, the Python package, share/simumax-sim (README).
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-fuzz out

# Thin wrapper over CMake: the README's two commands.
#   make demo   build, then run `kproof demo` (cuda where a GPU answers, else host)
#   make test   build, then run every test (units + integration on the host backend)
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Tests side by side: three times the cores, as most of them spend their
# time waiting (on workers, timeouts, the device lock) and the CPU-bound
# compile checks run at a lower priority.
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 3 )))
CMAKE_FLAGS ?=
ifneq ($(CI),)
CMAKE_FLAGS += -DKP_WERROR=ON
endif
GEN := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all build test demo clean

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(GEN) $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS)

demo: build
	$(BUILD)/kproof demo

clean:
	rm -rf $(BUILD)

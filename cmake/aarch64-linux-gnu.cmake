# Cross-build for 64-bit Arm Linux (phones under Termux/adb, Arm boards) with Debian's
# g++-aarch64-linux-gnu and the :arm64 multiarch dev packages (scripts/build-aarch64).
# Tests run through qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR): ctest in the build folder
# works as on the host; TRILEMMA_QEMU_CPU picks the emulated CPU (default max: dotprod, i8mm,
# SVE, BF16; cortex-a53 is NEON only).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
if(NOT DEFINED TRILEMMA_QEMU_CPU)
  set(TRILEMMA_QEMU_CPU max)
endif()
# The :arm64 multiarch libc (installed with the dev packages) is the one to run with: mixing
# it with the cross toolchain's ld.so (qemu -L /usr/aarch64-linux-gnu) hangs in pthread_create.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-cpu;${TRILEMMA_QEMU_CPU})

// Gives trilemma_test_main one source that uses its precompiled header, so CMake emits the
// rule that builds the .gch (test_main.cpp itself must not see the PCH: see tests/CMakeLists.txt).

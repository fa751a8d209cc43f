// Empty on purpose: gives trilemma_test_main one source that uses its precompiled header, so
// CMake emits the rule that builds cmake_pch.hxx.gch (test_main.cpp skips the PCH, and with no
// other source a fresh build directory has no rule for the .gch that every test reuses).

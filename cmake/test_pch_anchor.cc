// Compiled only to build the tests' shared precompiled header (cmake/test_pch.h).

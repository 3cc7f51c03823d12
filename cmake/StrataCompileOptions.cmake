# Warnings, sanitizers and clang's thread-safety analysis, applied to every
# strata target through strata_target_defaults().
add_library(strata_compile_options INTERFACE)
target_compile_options(strata_compile_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers>)
if(STRATA_WERROR)
  target_compile_options(strata_compile_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(STRATA_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_compile_options(strata_compile_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_san}>)
  target_link_options(strata_compile_options INTERFACE ${_san})
endif()
if(STRATA_THREAD_SAFETY)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "STRATA_THREAD_SAFETY needs clang (CXX=clang++-14)")
  endif()
  target_compile_options(strata_compile_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wthread-safety -Werror=thread-safety>)
endif()

# strata_target_defaults(target): warnings, -Werror, sanitizer and thread-safety flags.
function(strata_target_defaults target)
  target_link_libraries(${target} PRIVATE strata_compile_options)
endfunction()

# porta_register_backend(NAME): tells core/runtime/registry.cpp and tuning.cpp, and only those files,
# that a backend is built in, so adding or removing a backend does not recompile the rest of porta.
function(porta_register_backend name)
  string(TOUPPER "${name}" upper)
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/core/runtime/registry.cpp ${PROJECT_SOURCE_DIR}/core/runtime/tuning.cpp
    TARGET_DIRECTORY porta
    APPEND PROPERTY COMPILE_DEFINITIONS PORTA_HAVE_${upper})
endfunction()

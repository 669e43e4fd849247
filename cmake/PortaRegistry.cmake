# How a backend joins the build: compiled into porta (the default), or, with PORTA_BACKEND_MODULES,
# as a run-time module lib/porta/libporta-<name>.so beside a shared libporta that needs no vendor
# library (core/runtime/module_loader.hpp).
include(GNUInstallDirs)

# porta_backend_target(NAME OUT [ENTRY]): sets OUT to the target that backend NAME's sources and
# libraries go into. ENTRY, the module's entry point (its PORTA_BACKEND_MODULE), is compiled into
# the module; a backend whose entry needs its own compile settings adds it itself.
function(porta_backend_target name out)
  if(PORTA_BACKEND_MODULES)
    porta_module_library(${name} ${ARGN})
    set(${out} porta-${name} PARENT_SCOPE)
    return()
  endif()
  # Only core/runtime/registry.cpp learns which backends are built in, so adding or removing one
  # does not recompile the rest of porta.
  string(TOUPPER "${name}" upper)
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/core/runtime/registry.cpp TARGET_DIRECTORY porta
               APPEND PROPERTY COMPILE_DEFINITIONS PORTA_HAVE_${upper})
  set(${out} porta PARENT_SCOPE)
endfunction()

# porta_gpu_module_entry(OBJECTS): in a module build, backends/gpu's entry point joins the object
# library OBJECTS (porta_cuda, porta_hip), compiled with the neutral GPU API of that backend.
function(porta_gpu_module_entry objects)
  if(NOT PORTA_BACKEND_MODULES)
    return()
  endif()
  target_sources(${objects} PRIVATE ${PROJECT_SOURCE_DIR}/backends/gpu/module.cpp)
  target_include_directories(${objects} PRIVATE ${PORTA_GENERATED_DIR})
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/backends/gpu/backend.cpp TARGET_DIRECTORY ${objects} APPEND PROPERTY
               COMPILE_DEFINITIONS PORTA_BACKEND_MODULES)  # the only user: it loads the vendor module
  add_dependencies(${objects} porta_build_id)
endfunction()

# porta_vendor_target(BACKEND_TARGET NAME OUT ENTRY): sets OUT to the target that a vendor
# library's glue goes into: the backend's own (static build), or the module libporta-NAME.so on top
# of it, with ENTRY its PORTA_VENDOR_MODULE, so that the backend loads without the library.
function(porta_vendor_target backend_target name out entry)
  if(PORTA_BACKEND_MODULES)
    porta_module_library(${name} ${entry})
    target_link_libraries(porta-${name} PRIVATE ${backend_target})
    set(${out} porta-${name} PARENT_SCOPE)
  else()
    set(${out} ${backend_target} PARENT_SCOPE)
  endif()
endfunction()

# porta_module_library(NAME SOURCES...): lib/porta/libporta-NAME.so on top of libporta, exported
# and installed as porta::NAME.
function(porta_module_library name)
  set(target porta-${name})
  add_library(${target} SHARED ${ARGN})
  add_library(porta::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name}
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib/porta
    # Installed: libporta.so one folder up, vendor libraries where they were linked from.
    INSTALL_RPATH "$ORIGIN:$ORIGIN/.." INSTALL_RPATH_USE_LINK_PATH ON)
  target_link_libraries(${target} PRIVATE porta)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR} ${PORTA_GENERATED_DIR})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  # The modules' own code and their use of it tell the build that this is a module build.
  target_compile_definitions(${target} PRIVATE PORTA_BACKEND_MODULES)
  install(TARGETS ${target} EXPORT portaTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/porta)
  set_property(GLOBAL APPEND PROPERTY PORTA_MODULE_TARGETS ${target})
endfunction()

# porta_build_id.hpp: porta's version and a hash of the backend contract's headers, which a module
# and libporta must share (core/runtime/module_abi.hpp). Regenerated when a header changes.
set(PORTA_GENERATED_DIR ${PROJECT_BINARY_DIR}/generated)
file(GLOB porta_contract_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/porta/*.hpp)
list(APPEND porta_contract_headers ${PROJECT_SOURCE_DIR}/core/runtime/backend.hpp
  ${PROJECT_SOURCE_DIR}/core/runtime/tuning.hpp ${PROJECT_SOURCE_DIR}/core/runtime/module_abi.hpp)
add_custom_command(OUTPUT ${PORTA_GENERATED_DIR}/porta_build_id.hpp
  COMMAND ${CMAKE_COMMAND} -DOUT=${PORTA_GENERATED_DIR}/porta_build_id.hpp -DVERSION=${PROJECT_VERSION}
          "-DHEADERS=${porta_contract_headers}" -P ${PROJECT_SOURCE_DIR}/cmake/PortaBuildId.cmake
  DEPENDS ${porta_contract_headers} ${PROJECT_SOURCE_DIR}/cmake/PortaBuildId.cmake
  COMMENT "porta build id" VERBATIM)
add_custom_target(porta_build_id DEPENDS ${PORTA_GENERATED_DIR}/porta_build_id.hpp)

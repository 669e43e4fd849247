# Writes OUTPUT, a header defining PORTA_GIT_REVISION as `git describe` of SOURCE_DIR says now, or
# "unknown" outside a git checkout. Run at every build, not only at configure time, so that a
# result file names the revision that was built; the header is rewritten only when the revision
# changes, so that env.cpp is recompiled only then.
execute_process(COMMAND git describe --always --dirty
  WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE revision RESULT_VARIABLE result
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT result EQUAL 0 OR revision STREQUAL "")
  set(revision "unknown")
endif()
set(text "#define PORTA_GIT_REVISION \"${revision}\"\n")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()

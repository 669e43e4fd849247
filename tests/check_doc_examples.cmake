# The example a doc shows is the file it names, which CI builds and runs: cmake -DROOT=<checkout>
# -DDOC=docs/x.md -DLANG=c -DEXAMPLE=examples/... -P check_doc_examples.cmake
file(READ ${ROOT}/${DOC} doc)
file(READ ${ROOT}/${EXAMPLE} example)
string(FIND "${doc}" "```${LANG}\n${example}```" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${DOC}: no ```${LANG} block holds ${EXAMPLE} as it is; copy the file into the doc")
endif()

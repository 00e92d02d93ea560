# Runs PROGRAM and fails unless its exit status is 0 and its standard output equals EXPECTED exactly.
execute_process(COMMAND ${PROGRAM} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
file(READ ${EXPECTED} expected)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} exited with ${rc}\n${err}")
endif()
if(NOT out STREQUAL expected)
    message(FATAL_ERROR "output of ${PROGRAM} differs from ${EXPECTED}\n--- got ---\n${out}--- expected ---\n${expected}")
endif()
